/*
 * gcacts.c: the list of actions a GPU control decision returns (see
 * gcacts.h): appended to by gpuctl.c, carried out by gpuact.c, emptied
 * after.  No I/O.
 */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gcacts.h"

static void
gcacts_clear(struct gc_action *a)
{
	free(a->text);
	free(a->sw.pids);
	free(a->sw.error);
	memset(a, 0, sizeof(*a));
}

void
gcacts_reset(struct gc_acts *l)
{
	int k;

	for (k = 0; k < l->n; k++)
		gcacts_clear(&l->a[k]);
	gcacts_clear(&l->spare);
	l->n = 0;
	l->lost = 0;
}

void
gcacts_free(struct gc_acts *l)
{
	gcacts_reset(l);
	free(l->a);
	l->a = NULL;
	l->cap = 0;
}

struct gc_action *
gcacts_add(struct gc_acts *l, int64_t job, int kind)
{
	struct gc_action *a;
	int cap;

	if (l->n == l->cap) {
		cap = l->cap ? 2 * l->cap : 16;
		if ((a = realloc(l->a, (size_t)cap * sizeof(*a))) == NULL) {
			l->lost++;
			gcacts_clear(&l->spare);
			a = &l->spare;
			goto fill;
		}
		l->a = a;
		l->cap = cap;
	}
	a = &l->a[l->n++];
	memset(a, 0, sizeof(*a));
fill:
	a->kind = kind;
	a->job = job;
	a->gpu = -1;
	return a;
}

void
gcacts_log(struct gc_acts *l, int64_t job, int level, const char *fmt, ...)
{
	struct gc_action *a;
	va_list ap;

	if (level == GC_LOG_DEBUG && l->quiet)
		return;
	a = gcacts_add(l, job, GC_ACT_LOG);
	a->n = level;
	va_start(ap, fmt);
	if (vasprintf(&a->text, fmt, ap) == -1)
		a->text = NULL;
	va_end(ap);
}
