/*
 * stageplan.c: the parts of the job's allocations that each piece of a
 * move out's staging receives (see stageplan.h).  A piece's parts are
 * found by a binary search for the first allocation that reaches into it,
 * then a walk: a piece of 1 GiB may hold hundreds of small allocations,
 * and one allocation may span tens of pieces.
 */
#include "stageplan.h"

size_t
stageplan_layout(const size_t *size, size_t n, size_t *off)
{
	size_t i, at = 0;

	for (i = 0; i < n; i++) {
		off[i] = at;
		at += size[i];
	}
	off[n] = at;
	return at;
}

size_t
stageplan_pieces(size_t total, size_t chunk)
{
	return chunk == 0 ? 0 : total / chunk + (total % chunk != 0);
}

/* The first item that ends after pos (n if none). */
static size_t
stageplan_first(const size_t *off, size_t n, size_t pos)
{
	size_t lo = 0, hi = n, mid;

	while (lo < hi) {
		mid = lo + (hi - lo) / 2;
		if (off[mid + 1] <= pos)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

int
stageplan_next(const size_t *off, size_t n, size_t chunk, size_t c, size_t *cursor,
    struct stageplan_part *p)
{
	size_t lo = c * chunk, hi = lo + chunk, i, from, to;

	/* *cursor: 0 before the first part, else the next item + 1 */
	i = *cursor == 0 ? stageplan_first(off, n, lo) : *cursor - 1;
	for (; i < n && off[i] < hi; i++) {
		from = off[i] > lo ? 0 : lo - off[i];
		to = (off[i + 1] < hi ? off[i + 1] : hi) - off[i];
		if (to <= from)
			continue;	/* empty */
		p->item = i;
		p->from = from;
		p->len = to - from;
		p->at = off[i] + from - lo;
		*cursor = i + 2;
		return 1;
	}
	*cursor = i + 1;
	return 0;
}
