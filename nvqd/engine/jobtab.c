/*
 * jobtab.c: the active jobs by id (see jobtab.h).
 */
#include <stdlib.h>

#include "job.h"
#include "jobtab.h"

static size_t
jobtab_slot(const struct jobtab *t, int64_t id)
{
	uint64_t h = (uint64_t)id * 0x9e3779b97f4a7c15ULL;	/* Fibonacci hashing */

	return (size_t)(h >> 32) & (t->nb - 1);
}

static int
jobtab_grow(struct jobtab *t)
{
	size_t nb = t->nb ? t->nb * 2 : 256, i, k;
	struct job **b = calloc(nb, sizeof(*b)), *j, *next;
	struct jobtab nt;

	if (b == NULL)
		return -1;
	nt.b = b;
	nt.nb = nb;
	for (i = 0; i < t->nb; i++)
		for (j = t->b[i]; j != NULL; j = next) {
			next = j->hnext;
			k = jobtab_slot(&nt, j->id);
			j->hnext = b[k];
			b[k] = j;
		}
	free(t->b);
	t->b = b;
	t->nb = nb;
	return 0;
}

int
jobtab_put(struct jobtab *t, struct job *j)
{
	size_t k;

	if ((t->nb == 0 || t->n >= t->nb) && jobtab_grow(t) == -1)
		return -1;
	k = jobtab_slot(t, j->id);
	j->hnext = t->b[k];
	t->b[k] = j;
	t->n++;
	return 0;
}

void
jobtab_del(struct jobtab *t, struct job *j)
{
	struct job **p;

	if (t->nb == 0)
		return;
	for (p = &t->b[jobtab_slot(t, j->id)]; *p != NULL; p = &(*p)->hnext)
		if (*p == j) {
			*p = j->hnext;
			j->hnext = NULL;
			t->n--;
			return;
		}
}

struct job *
jobtab_find(const struct jobtab *t, int64_t id)
{
	struct job *j;

	if (t->nb == 0)
		return NULL;
	for (j = t->b[jobtab_slot(t, id)]; j != NULL; j = j->hnext)
		if (j->id == id)
			return j;
	return NULL;
}

void
jobtab_free(struct jobtab *t)
{
	free(t->b);
	t->b = NULL;
	t->nb = t->n = 0;
}
