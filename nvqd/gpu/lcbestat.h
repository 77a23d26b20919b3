/*
 * lcbestat.h: what a hook reports of lc/be (issue 43), read as claims, and
 * the percentiles of an lc job's launch latencies: pure functions over
 * plain data (tests/unit/test_lcbe.c), used by lcbe.c.
 */
#ifndef NVQ_LCBESTAT_H
#define NVQ_LCBESTAT_H

#include <stddef.h>
#include <stdint.h>

#include "lcbe_page.h"
#include "proto.h"

#define LCBESTAT_PAIRS	32	/* (bucket, count) pairs in one report */
#define LCBESTAT_MAX_COUNT	(1LL << 32)	/* launches of one pair */
/*
 * A job's sums stop here (lcbestat_add): reports are many, so each pair's
 * bound alone would not keep them from wrapping; the histogram's total,
 * LCBE_HIST of these, still fits in 64 bits, and so does yield as int64_t.
 */
#define LCBESTAT_MAX_SUM	(1ULL << 56)

struct lcbestat_claims {
	int		has_yield;
	uint64_t	yield_us;	/* the process's total time yielding */
	int		n;
	int		bucket[LCBESTAT_PAIRS];	/* below LCBE_HIST */
	uint64_t	count[LCBESTAT_PAIRS];	/* launches since its last report */
};

/*
 * A report's "yield_us", then pairs "lb" (bucket), "ln" (count): 0, or -1
 * with err set (a bucket out of range, a count before its bucket, more than
 * LCBESTAT_PAIRS, a negative figure, a count over LCBESTAT_MAX_COUNT).  Other fields are not looked at.
 */
int		lcbestat_parse(const struct proto_msg *, struct lcbestat_claims *, char *err,
		    size_t errlen);
/*
 * The latency (ns) below which a share q (0..1) of hist's launches lie,
 * as its bucket's upper edge (at most a quarter of a power of two over);
 * 0 for none.  hist has LCBE_HIST buckets, or is NULL.
 */
uint64_t	lcbestat_quantile(const uint64_t *hist, double q);
/* *sum + add, at most LCBESTAT_MAX_SUM. */
void		lcbestat_add(uint64_t *sum, uint64_t add);
/*
 * A process's claimed total time yielding (us), its last claim *last, into
 * the job's *total (what is new, lcbestat_add): 0, or -1 with err set where
 * the claim is below the last (a total never goes down).
 */
int		lcbestat_yield(uint64_t *total, uint64_t *last, uint64_t claimed, char *err,
		    size_t errlen);

#endif
