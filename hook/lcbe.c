/*
 * lcbe.c: the hook's side of latency-critical (lc) and best-effort (be)
 * jobs on a shared GPU (lcbe.h; the page is common/lcbe_page.h).
 *
 * lc: a launch or copy raises this process's bit on each of its job's
 * GPUs unless it is up (so the first host-to-device copy of a request
 * raises it too: the hint before the kernels come); the watcher thread,
 * woken at the first raise, synchronizes the process's contexts, and if
 * no launch came in between, lowers the bits.  Launch and watcher order
 * their steps as a Dekker pair (sequentially consistent): the launch counts
 * itself, then reads the bits; the watcher clears them, then reads the
 * count and raises them again if it moved: a launch never runs with its
 * bits down while the watcher thinks it idle.
 * While a stream capture (CUDA graph) is under way in the process, the
 * watcher does not synchronize (that would invalidate a capture of the
 * global mode): the bits stay up until it ends.
 * be: a launch waits while lcbe_busy() says a GPU of its job has an lc
 * process at work, sleeping 20 us doubling to 1 ms, at most max_wait ms
 * per launch, and no longer once its gate is no longer open: the wait is
 * inside the gate (counted in flight), so a hold, a timeslice turn or a
 * suspend taking the lock back would otherwise wait for it to drain, up
 * to max_wait, past revoke_timeout; the time is counted (lcbe_yielded_ns)
 * and reported.
 * Nothing here blocks an lc process, prints, or exits.
 */
#include <errno.h>
#include <linux/futex.h>
#include <pthread.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "gate.h"
#include "lcbe.h"
#include "lcbe_page.h"

#define LCBE_CAPTURES	64	/* streams capturing at once that are followed */

int lcbe_role;

/*
 * A page as nvqd gave it, never changed once published: a reconnection to
 * a restarted nvqd brings another page (and slot), published in its place;
 * the old one stays mapped (launches may be reading it), 4 KiB a restart.
 */
struct lcbe_map {
	struct lcbe_page *page[LCBE_MAX_PAGES];	/* of gpus[k]: its word is up[gpus[k]] */
	int		lc;
	int		slot;
	uint64_t	bit;
	int		gpus[LCBE_MAX_PAGES];
	int		n;
	uint64_t	max_wait_ns;
	const struct lcbe_live *live;	/* nvqd's word of who is lc; NULL: none came */
};

static struct {
	struct lcbe_map	*cur;		/* the page in force; NULL: none */
	int		watching;	/* lc: the watcher thread runs */
	void		(*sync)(void);
	uint64_t	count;		/* lc: launches since attach */
	int		raised;		/* lc: the watcher has bits to lower (futex word) */
	uint64_t	yielded;	/* be: ns waited, by waits that ended */
	uint64_t	waiting;	/* be: launches waiting now, */
	uint64_t	wait_sum;	/* and the sum of their starts (ns) */
	uint64_t	said;		/* be: the total last returned (the link's thread alone asks) */
	uint64_t	hist[LCBE_HIST];	/* lc: launch latencies */
	pthread_mutex_t	cap_mu;
	void		*cap[LCBE_CAPTURES];	/* streams capturing now */
	int		ncap;		/* how many (read without the mutex by the watcher) */
} LB = { .cap_mu = PTHREAD_MUTEX_INITIALIZER };

uint64_t
lcbe_now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ULL + (uint64_t)ts.tv_nsec;
}

static struct lcbe_map *
lcbe_map(void)
{
	return __atomic_load_n(&LB.cur, __ATOMIC_ACQUIRE);
}

static void
lcbe_raise(const struct lcbe_map *m)
{
	int k, g, was = 0;

	for (k = 0; k < m->n; k++) {
		g = m->gpus[k];
		if (!(__atomic_load_n(&m->page[k]->up[g], __ATOMIC_SEQ_CST) & m->bit)) {
			__atomic_fetch_or(&m->page[k]->up[g], m->bit, __ATOMIC_SEQ_CST);
			was = 1;
		}
	}
	if (was && !__atomic_exchange_n(&LB.raised, 1, __ATOMIC_SEQ_CST))
		syscall(SYS_futex, &LB.raised, FUTEX_WAKE_PRIVATE, 1, NULL, NULL, 0);
}

static void
lcbe_lower(const struct lcbe_map *m)
{
	int k;

	for (k = 0; k < m->n; k++)
		__atomic_fetch_and(&m->page[k]->up[m->gpus[k]], ~m->bit, __ATOMIC_SEQ_CST);
}

/* An lc process says it lives, on each of its pages. */
static void
lcbe_beat(const struct lcbe_map *m)
{
	uint64_t now = lcbe_now();
	int k;

	for (k = 0; k < m->n; k++)
		__atomic_store_n(&m->page[k]->beat[m->slot], now, __ATOMIC_RELAXED);
}

static int
lcbe_busy_any(const struct lcbe_map *m, uint64_t now)
{
	int k;

	for (k = 0; k < m->n; k++)
		if (lcbe_busy(m->page[k], m->live, m->gpus[k], now))
			return 1;
	return 0;
}

void
lcbe_slow(int role)
{
	struct lcbe_map *m = lcbe_map();
	struct timespec ts;
	uint64_t start, now, step = 20000;
	int k;

	if (m == NULL)
		return;
	if (role == LCBE_LC) {
		__atomic_fetch_add(&LB.count, 1, __ATOMIC_SEQ_CST);
		lcbe_raise(m);
		return;
	}
	/* nothing up on its GPUs: a load per GPU, no clock */
	for (k = 0; k < m->n; k++)
		if (__atomic_load_n(&m->page[k]->up[m->gpus[k]], __ATOMIC_RELAXED) != 0)
			break;
	if (k == m->n || !lcbe_busy_any(m, start = lcbe_now()))
		return;
	now = start;
	/* counted while it waits: a launch may wait seconds, reports go on meanwhile */
	__atomic_fetch_add(&LB.wait_sum, start, __ATOMIC_SEQ_CST);
	__atomic_fetch_add(&LB.waiting, 1, __ATOMIC_SEQ_CST);
	while (now - start < m->max_wait_ns && lcbe_busy_any(m, now) &&
	    __atomic_load_n(&nvq_gate.state, __ATOMIC_SEQ_CST) == GATE_OPEN) {
		ts.tv_sec = 0;
		ts.tv_nsec = (long)step;
		nanosleep(&ts, NULL);
		if (step < 1000000)
			step *= 2;
		now = lcbe_now();
	}
	__atomic_fetch_add(&LB.yielded, now - start, __ATOMIC_SEQ_CST);
	__atomic_fetch_sub(&LB.waiting, 1, __ATOMIC_SEQ_CST);
	__atomic_fetch_sub(&LB.wait_sum, start, __ATOMIC_SEQ_CST);
}

/* lc: lowers the bits once the process's GPU work drained with no launch since. */
static void *
lcbe_watch(void *arg)
{
	struct timespec tick = { 0, 100000000 }, nap = { 0, 20000 }, capnap = { 0, 1000000 };
	struct lcbe_map *m;
	uint64_t c0;

	(void)arg;
	for (;;) {
		m = lcbe_map();
		lcbe_beat(m);
		if (!__atomic_load_n(&LB.raised, __ATOMIC_SEQ_CST)) {
			syscall(SYS_futex, &LB.raised, FUTEX_WAIT_PRIVATE, 0, &tick, NULL, 0);
			continue;
		}
		/* a synchronize would invalidate a capture under way: later */
		if (__atomic_load_n(&LB.ncap, __ATOMIC_SEQ_CST) > 0) {
			nanosleep(&capnap, NULL);
			continue;
		}
		c0 = __atomic_load_n(&LB.count, __ATOMIC_SEQ_CST);
		LB.sync();
		if (__atomic_load_n(&LB.count, __ATOMIC_SEQ_CST) != c0) {
			nanosleep(&nap, NULL);
			continue;
		}
		__atomic_store_n(&LB.raised, 0, __ATOMIC_SEQ_CST);
		lcbe_lower(m);
		if (__atomic_load_n(&LB.count, __ATOMIC_SEQ_CST) != c0)
			lcbe_raise(m);	/* a launch came while lowering: its work is queued */
	}
	return NULL;
}

/* A map never published, its pages unmapped: 0, to say it is gone. */
static int
lcbe_map_drop(struct lcbe_map *m)
{
	while (m->n > 0)
		munmap(m->page[--m->n], LCBE_SIZE);
	free(m);
	return 0;
}

int
lcbe_attach(const int *fds, int lc, int slot, int64_t max_wait_ms, const int *gpus, int n,
    int live, void (*sync)(void))
{
	struct lcbe_map *m, *old = lcbe_map();
	sigset_t all, sigs;
	pthread_t t;
	void *p;
	int k, ok = 1;

	/* a process is of one class for its life: a page for another is refused */
	if (n <= 0 || n > LCBE_MAX_PAGES || (lc && (slot < 0 || slot >= LCBE_SLOTS)) ||
	    (old != NULL && old->lc != (lc != 0)) || (m = calloc(1, sizeof(*m))) == NULL)
		ok = 0;
	/* a be process's descriptors are read-only: so are its mappings, for good */
	for (k = 0; k < n; k++) {
		if (ok && gpus[k] >= 0 && gpus[k] < LCBE_GPUS && (p = mmap(NULL, LCBE_SIZE,
		    lc ? PROT_READ | PROT_WRITE : PROT_READ, MAP_SHARED, fds[k], 0)) != MAP_FAILED) {
			m->page[m->n] = p;
			m->gpus[m->n++] = gpus[k];
		} else if (ok)
			ok = lcbe_map_drop(m);
		close(fds[k]);
	}
	if (ok && live >= 0 && (p = mmap(NULL, LCBE_SIZE, PROT_READ, MAP_SHARED, live, 0)) !=
	    MAP_FAILED)
		m->live = p;
	else if (ok && live >= 0)	/* unmapped: be would wait for bits nvqd took back */
		ok = lcbe_map_drop(m);
	if (live >= 0)
		close(live);
	if (!ok)
		return -1;
	m->lc = lc != 0;
	m->max_wait_ns = (uint64_t)(max_wait_ms > 0 ? max_wait_ms : 1000) * 1000000ULL;
	if (lc) {
		m->slot = slot;
		m->bit = 1ULL << slot;
		lcbe_beat(m);
	}
	LB.sync = sync;
	__atomic_store_n(&LB.cur, m, __ATOMIC_RELEASE);
	if (lc && __atomic_load_n(&LB.raised, __ATOMIC_SEQ_CST))
		lcbe_raise(m);	/* work of before the reconnection is still queued */
	if (lc && !LB.watching) {
		sigfillset(&all);
		pthread_sigmask(SIG_SETMASK, &all, &sigs);
		k = pthread_create(&t, NULL, lcbe_watch, NULL);
		pthread_sigmask(SIG_SETMASK, &sigs, NULL);
		if (k != 0) {
			__atomic_store_n(&LB.cur, old, __ATOMIC_RELEASE);
			return -1;	/* m stays mapped: a launch may have seen it */
		}
		pthread_detach(t);
		LB.watching = 1;
	}
	__atomic_store_n(&lcbe_role, lc ? LCBE_LC : LCBE_BE, __ATOMIC_SEQ_CST);
	return 0;
}

void
lcbe_tick(void)
{
	struct lcbe_map *m = lcbe_map();

	if (m != NULL && m->lc)
		lcbe_beat(m);
}

uint64_t
lcbe_yielded_ns(void)
{
	uint64_t y = __atomic_load_n(&LB.yielded, __ATOMIC_SEQ_CST);
	uint64_t n = __atomic_load_n(&LB.waiting, __ATOMIC_SEQ_CST);
	uint64_t sum = __atomic_load_n(&LB.wait_sum, __ATOMIC_SEQ_CST), now = lcbe_now();

	/* with the waits under way; a total that never goes back (nvqd counts what is new) */
	if (n > 0 && n * now > sum)
		y += n * now - sum;
	if (y < LB.said)
		y = LB.said;
	return LB.said = y;
}

void
lcbe_record(uint64_t ns)
{
	__atomic_fetch_add(&LB.hist[lcbe_bucket(ns)], 1, __ATOMIC_RELAXED);
}

int
lcbe_take_hist(int *bucket, uint64_t *count, int max)
{
	uint64_t c;
	int b, n = 0;

	for (b = 0; b < LCBE_HIST && n < max; b++)
		if (__atomic_load_n(&LB.hist[b], __ATOMIC_RELAXED) != 0 &&
		    (c = __atomic_exchange_n(&LB.hist[b], 0, __ATOMIC_RELAXED)) != 0) {
			bucket[n] = b;
			count[n++] = c;
		}
	return n;
}

int
lcbe_capture(void *s, int began)
{
	int k, added = 0;

	pthread_mutex_lock(&LB.cap_mu);
	for (k = 0; k < LB.ncap && LB.cap[k] != s; k++)
		;
	if (began && k == LB.ncap && LB.ncap < LCBE_CAPTURES) {
		LB.cap[k] = s;
		__atomic_store_n(&LB.ncap, LB.ncap + 1, __ATOMIC_SEQ_CST);
		added = 1;
	} else if (!began && k < LB.ncap) {
		LB.cap[k] = LB.cap[LB.ncap - 1];
		__atomic_store_n(&LB.ncap, LB.ncap - 1, __ATOMIC_SEQ_CST);
	}
	pthread_mutex_unlock(&LB.cap_mu);
	return added;
}

void
lcbe_child(void)
{
	/* the parent's slot and watcher are not the child's: it links anew */
	__atomic_store_n(&lcbe_role, LCBE_NONE, __ATOMIC_SEQ_CST);
	/* the parent's maps stay mapped here (a fork copies them): not this child's to use */
	memset(&LB, 0, sizeof(LB));
	pthread_mutex_init(&LB.cap_mu, NULL);
}
