/*
 * lcbestat.c: a hook's lc/be figures as claims, and percentiles
 * (lcbestat.h).  No I/O, no allocation.
 */
#include <stdio.h>
#include <string.h>

#include "lcbestat.h"

int
lcbestat_parse(const struct proto_msg *m, struct lcbestat_claims *c, char *err, size_t errlen)
{
	int i, b = -1;

	memset(c, 0, sizeof(*c));
	for (i = 0; i < m->nfields; i++) {
		const struct proto_field *f = &m->fields[i];

		if (strcmp(f->key, "yield_us") == 0) {
			if (f->kind != 'i' || f->i < 0) {
				snprintf(err, errlen, "a report's yield_us must be 0 or more");
				return -1;
			}
			c->has_yield = 1;
			c->yield_us = (uint64_t)f->i;
		} else if (strcmp(f->key, "lb") == 0) {
			if (f->kind != 'i' || f->i < 0 || f->i >= LCBE_HIST || b >= 0 ||
			    c->n == LCBESTAT_PAIRS) {
				snprintf(err, errlen, "a report's lb must be a bucket from 0 to %d, "
				    "each followed by its ln, at most %d of them", LCBE_HIST - 1,
				    LCBESTAT_PAIRS);
				return -1;
			}
			b = (int)f->i;
		} else if (strcmp(f->key, "ln") == 0) {
			if (b < 0 || f->kind != 'i' || f->i < 0 || f->i > LCBESTAT_MAX_COUNT) {
				snprintf(err, errlen, "a report's ln must follow its lb, from 0 to %lld",
				    (long long)LCBESTAT_MAX_COUNT);
				return -1;
			}
			c->bucket[c->n] = b;
			c->count[c->n++] = (uint64_t)f->i;
			b = -1;
		}
	}
	if (b >= 0) {
		snprintf(err, errlen, "a report's last lb has no ln");
		return -1;
	}
	return 0;
}

void
lcbestat_add(uint64_t *sum, uint64_t add)
{
	*sum = *sum >= LCBESTAT_MAX_SUM || add >= LCBESTAT_MAX_SUM - *sum ? LCBESTAT_MAX_SUM :
	    *sum + add;
}

int
lcbestat_yield(uint64_t *total, uint64_t *last, uint64_t claimed, char *err, size_t errlen)
{
	if (claimed < *last) {
		snprintf(err, errlen, "a report's yield_us is the process's total: it never goes "
		    "down (%llu after %llu)", (unsigned long long)claimed,
		    (unsigned long long)*last);
		return -1;
	}
	lcbestat_add(total, claimed - *last);
	*last = claimed;
	return 0;
}

uint64_t
lcbestat_quantile(const uint64_t *hist, double q)
{
	uint64_t total = 0, need, run = 0;
	int b;

	if (hist == NULL)
		return 0;
	for (b = 0; b < LCBE_HIST; b++)
		total += hist[b];
	if (total == 0)
		return 0;
	need = (uint64_t)(q * (double)total);
	if (need >= total)
		need = total - 1;
	for (b = 0; b < LCBE_HIST - 1; b++) {
		run += hist[b];
		if (run > need)
			break;
	}
	return lcbe_upper(b);
}
