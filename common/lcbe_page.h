/*
 * lcbe_page.h: the page nvqd shares, one per GPU, with the hooks of the
 * jobs there for latency-critical (lc) and best-effort (be) jobs (issue
 * 43): its layout, and the one rule both sides read it by.
 *
 * nvqd makes GPU g's (a memfd, root's, mode 0644) and hands it over the
 * hook's socket at hello (SCM_RIGHTS) to the processes of jobs on g alone:
 * writable to an lc job's, opened read-only for a be job's (a read-only
 * mapping of it cannot be made writable, and the file cannot be opened
 * again for writing by another user).  In GPU g's page, up[g] has bit s set
 * while the lc process in slot s has work queued or running on GPU g (its
 * index in nvqd; the other words stay 0); beat[s] is the last time
 * (CLOCK_MONOTONIC, ns) that process's hook said it lives, owner[s] its
 * job.  nvqd gives each lc process a slot at hello and clears the slot's
 * bits when its connection closes (the process ended, or was killed).
 * A be launch waits while a bit of one of its GPUs is up and its slot's
 * beat is fresh, for at most a bound, then goes on.
 *
 * An lc process holds its pages writable and could hand one on (a
 * descriptor sent to a process of its user's that outlives the job): so
 * the bits count only where nvqd's live page, which no job can write,
 * names the slot live on that GPU (hook version 5 on; handed read-only to
 * be processes).  live[g] has bit s from the lc process's hello until its
 * slot is released.
 */
#ifndef NVQ_LCBE_PAGE_H
#define NVQ_LCBE_PAGE_H

#include <stdint.h>

#define LCBE_GPUS	64	/* as SCHED_MAX_GPUS */
#define LCBE_SLOTS	64	/* lc processes on the host at once */
#define LCBE_STALE_NS	500000000ULL	/* a beat older than this: the slot is gone */
#define LCBE_BEAT_NS	100000000ULL	/* how often a living lc hook beats */
#define LCBE_SIZE	4096

struct lcbe_page {
	uint64_t	up[LCBE_GPUS];		/* bit s: slot s busy on GPU g */
	uint64_t	beat[LCBE_SLOTS];	/* ns, CLOCK_MONOTONIC */
	int64_t		owner[LCBE_SLOTS];	/* the slot's job; 0: free */
};

/* nvqd's alone, one per host: bit s of live[g] while slot s is an lc process on GPU g */
struct lcbe_live {
	uint64_t	live[LCBE_GPUS];
};

/*
 * Whether a be launch on GPU g must wait now: a slot busy there, live
 * there by nvqd's word (live NULL: an nvqd before it, every slot), whose
 * beat is fresh at now (ns).  Pure: the hook's wait loop and the unit
 * test use it.
 */
static inline int
lcbe_busy(const struct lcbe_page *p, const struct lcbe_live *live, int g, uint64_t now)
{
	uint64_t m = __atomic_load_n(&p->up[g], __ATOMIC_ACQUIRE), b;
	int s;

	if (live != NULL)
		m &= __atomic_load_n(&live->live[g], __ATOMIC_ACQUIRE);
	while (m != 0) {
		s = __builtin_ctzll(m);
		m &= m - 1;
		b = __atomic_load_n(&p->beat[s], __ATOMIC_RELAXED);
		if (b + LCBE_STALE_NS > now)
			return 1;
	}
	return 0;
}

/*
 * Launch latencies are counted in LCBE_HIST buckets, four per power of two
 * of nanoseconds: bucket b holds [2^m (1 + k/4), 2^m (1 + (k+1)/4)) for
 * b = 4m + k (m >= 2; below 4 ns, one bucket per power).  The hook counts
 * (lcbe_bucket), nvqd sums and reads percentiles (lcbe_upper).
 */
#define LCBE_HIST	192	/* up to 2^48 ns */

static inline int
lcbe_bucket(uint64_t ns)
{
	int m, b;

	if (ns == 0)
		ns = 1;
	m = 63 - __builtin_clzll(ns);
	b = m * 4 + (m >= 2 ? (int)((ns >> (m - 2)) & 3) : 0);
	return b < LCBE_HIST ? b : LCBE_HIST - 1;
}

/* The upper edge of bucket b (ns): what a percentile in it is reported as. */
static inline uint64_t
lcbe_upper(int b)
{
	int m = b / 4, k = b % 4;

	if (m < 2)
		return (uint64_t)1 << (m + 1);
	return ((uint64_t)1 << m) + ((uint64_t)(k + 1) << (m - 2));
}

#endif
