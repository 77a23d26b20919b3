/*
 * lcbe.h: latency-critical jobs first on a shared GPU, in the hook (issue
 * 43; the page's layout is common/lcbe_page.h, nvqd's side nvqd/gpu/lcbe.c).
 *
 * The link (link.c) attaches the page nvqd handed over at hello.  Then
 * every launch and copy calls lcbe_enter() once through the gate (so a
 * held lc job raises nothing) and before the driver: in a process
 * of no class, one load; in a be process, a load per GPU of its job and,
 * while an lc job there is busy, a wait of at most the bound nvqd gave; in
 * an lc process, its bit raised on its GPUs if it is not up already (a
 * load, and an atomic or once per busy period).  A thread of the lc
 * process lowers the bits once its GPU work has drained with no launch in
 * between (a synchronize on that thread, never on the application's).
 */
#ifndef NVQ_HOOK_LCBE_H
#define NVQ_HOOK_LCBE_H

#include <stdint.h>

enum lcbe_role { LCBE_NONE = 0, LCBE_BE, LCBE_LC };

extern int lcbe_role;

#define LCBE_MAX_PAGES	16	/* GPUs of a job whose pages a process takes */

/*
 * The pages (fds, one per GPU, the caller's: closed here), as nvqd gave
 * them: lc, its slot (lc only), the bound of a be launch's wait in ms, and
 * the indexes of the job's GPUs (n of them, fds[k] GPU gpus[k]'s page);
 * live, nvqd's live page (-1: none, an older nvqd; closed here too).  sync drains this process's GPU work.
 * Again after a reconnection: the new nvqd's page takes the old one's place.
 * 0, or -1 (the process goes on as of no class).
 */
int	lcbe_attach(const int *fds, int lc, int slot, int64_t max_wait_ms, const int *gpus, int n,
	    int live, void (*sync)(void));
/* The link's tick: an lc process says it lives. */
void	lcbe_tick(void);
/* Nanoseconds this process's launches spent yielding, in all. */
uint64_t lcbe_yielded_ns(void);
/* Launch latencies seen (lc): fills at most max (bucket, count) pairs since the last call. */
int	lcbe_take_hist(int *bucket, uint64_t *count, int max);
/*
 * A stream capture begins (1) on stream s or ended (0): while any is
 * counted the lc watcher does not synchronize (its bits stay up).  1 if a
 * begin counted s anew (to be undone should the begin fail), else 0.
 */
int	lcbe_capture(void *s, int began);
/* In a forked child: no page until its own link attaches one. */
void	lcbe_child(void);

void	lcbe_slow(int role);
/* An lc launch's host time from the call into the hook to its return. */
void	lcbe_record(uint64_t ns);
uint64_t lcbe_now(void);

static inline void
lcbe_enter(void)
{
	int r = __atomic_load_n(&lcbe_role, __ATOMIC_RELAXED);

	if (__builtin_expect(r != LCBE_NONE, 0))
		lcbe_slow(r);
}

#endif
