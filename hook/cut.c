/*
 * cut.c: counting NCCL launches per communicator, and the gate on the way
 * to a cut (see cut.h).
 *
 * Which functions are NCCL's is asked of the driver once per CUfunction
 * and kept in an open-addressing table of the function's address with the
 * answer in its two low bits (a driver function handle is a pointer to an
 * aligned struct), filled with compare-and-swap: a launch costs a lookup,
 * no lock.  Only NCCL's launches take the mutex: it makes the decision to
 * let one pass and its count one step with the gate's state, so that the
 * counts cut_shut reports are exactly the launches that passed.
 * Functions return 0 or -1 (or a count) as cut.h says.
 */
#include <pthread.h>
#include <string.h>
#include <unistd.h>

#include "cut.h"
#include "gate.h"

#define CUT_FN_SLOTS	4096	/* a power of two */
#define CUT_FN_PROBE	32
#define CUT_IS_NCCL	1
#define CUT_NOT_NCCL	2
/* cuLaunchKernel's extra: CU_LAUNCH_PARAM_END, _BUFFER_POINTER, _BUFFER_SIZE */
#define CUT_PARAM_END	((void *)(uintptr_t)0)
#define CUT_PARAM_BUF	((void *)(uintptr_t)1)
#define CUT_PARAM_SIZE	((void *)(uintptr_t)2)
#define CUT_EXTRA_MAX	16	/* pairs read of an extra array */

static struct {
	pthread_mutex_t	mu;
	pthread_cond_t	cv;		/* the state or the targets changed */
	int		(*get_name)(const char **, void *);
	int		wake;		/* the link's thread; -1: none */
	int		n;		/* communicators seen */
	uint64_t	key[CUT_MAX_COMMS];	/* their struct ncclDevComm pointers */
	uint64_t	count[CUT_MAX_COMMS];	/* launches passed */
	uint64_t	target[CUT_MAX_COMMS];	/* while GATE_CUT, of ntarget communicators */
	int		ntarget;	/* nvqd's targets, some maybe for communicators
					   this process has not launched on yet */
	int		reached;	/* a launch reached the cut: the link drains */
	uintptr_t	fn[CUT_FN_SLOTS];
} C = { .mu = PTHREAD_MUTEX_INITIALIZER, .cv = PTHREAD_COND_INITIALIZER, .wake = -1 };

void
cut_init(int (*get_name)(const char **, void *), int wake)
{
	pthread_mutex_lock(&C.mu);
	if (get_name != NULL)
		C.get_name = get_name;
	if (wake >= 0)
		C.wake = wake;
	pthread_mutex_unlock(&C.mu);
}

/*
 * Whether a kernel's name, as the driver gives it, is NCCL's: it begins
 * with "nccl", after the "_Z" and length of a C++ mangled name (NCCL's
 * kernels are C++ functions: _Z21ncclDevKernel_Generic24ncclDevKernelArgs...).
 */
static int
cut_nccl_name(const char *name)
{
	if (name[0] == '_' && name[1] == 'Z')
		for (name += 2; *name >= '0' && *name <= '9'; name++)
			;
	return strncmp(name, "nccl", 4) == 0;
}

/* Whether f is an NCCL kernel: asked of the driver once, then looked up. */
static int
cut_nccl(void *f)
{
	uintptr_t k = (uintptr_t)f, v, want;
	size_t h, i;
	const char *name = NULL;
	int nccl;

	if (f == NULL || C.get_name == NULL)
		return 0;
	h = (size_t)((k >> 4) * 0x9e3779b97f4a7c15ULL >> 40);
	if ((k & 3) == 0)
		for (i = 0; i < CUT_FN_PROBE; i++) {
			v = __atomic_load_n(&C.fn[(h + i) & (CUT_FN_SLOTS - 1)], __ATOMIC_ACQUIRE);
			if (v == 0)
				break;
			if ((v & ~(uintptr_t)3) == k)
				return (v & 3) == CUT_IS_NCCL;
		}
	nccl = C.get_name(&name, f) == 0 && name != NULL && cut_nccl_name(name);
	if ((k & 3) != 0)
		return nccl;	/* not a handle the table can hold: asked each time */
	for (i = 0; i < CUT_FN_PROBE; i++) {
		want = 0;
		if (__atomic_compare_exchange_n(&C.fn[(h + i) & (CUT_FN_SLOTS - 1)], &want,
		    k | (nccl ? CUT_IS_NCCL : CUT_NOT_NCCL), 0, __ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE) ||
		    (want & ~(uintptr_t)3) == k)
			break;
	}
	return nccl;
}

/* The first 8 bytes of the launch's argument block: NCCL's communicator. */
static int
cut_arg0(void **p, void **x, uint64_t *comm)
{
	void *buf = NULL;
	size_t size = 0;
	int i;

	if (x != NULL) {
		for (i = 0; i < 2 * CUT_EXTRA_MAX && x[i] != CUT_PARAM_END; i += 2) {
			if (x[i] == CUT_PARAM_BUF)
				buf = x[i + 1];
			else if (x[i] == CUT_PARAM_SIZE && x[i + 1] != NULL)
				memcpy(&size, x[i + 1], sizeof(size));
			else
				return -1;
		}
		if (buf == NULL || size < sizeof(*comm))
			return -1;
	} else if (p != NULL && p[0] != NULL)
		buf = p[0];	/* older NCCL: kernelParams[0] points to the comm pointer */
	else
		return -1;
	memcpy(comm, buf, sizeof(*comm));
	return 0;
}

int
cut_comm(void *f, void **p, void **x)
{
	uint64_t comm;
	int c;

	if (!cut_nccl(f) || cut_arg0(p, x, &comm) == -1 || comm == 0)
		return -1;
	pthread_mutex_lock(&C.mu);
	for (c = 0; c < C.n && C.key[c] != comm; c++)
		;
	if (c == C.n && C.n < CUT_MAX_COMMS) {
		C.key[C.n] = comm;
		C.count[C.n] = 0;
		/*
		 * first launched on the way to a cut: it takes the target at its
		 * number (a peer launched on it first); past nvqd's targets, it
		 * waits for the next grant
		 */
		if (C.n >= C.ntarget)
			C.target[C.n] = 0;
		C.n++;
	} else if (c == C.n)
		c = -1;
	pthread_mutex_unlock(&C.mu);
	return c;
}

/*
 * Whether every communicator has reached its target (C.mu held); one not
 * launched on yet counts 0 launches against the target at its number.
 */
static int
cut_at_locked(void)
{
	int c;

	for (c = 0; c < C.n || c < C.ntarget; c++)
		if ((c < C.n ? C.count[c] : 0) < C.target[c])
			return 0;
	return 1;
}

int
cut_pass(int c)
{
	char b = 1;
	int st;

	__atomic_fetch_add(&nvq_gate.inflight, 1, __ATOMIC_SEQ_CST);
	pthread_mutex_lock(&C.mu);
	st = __atomic_load_n(&nvq_gate.state, __ATOMIC_SEQ_CST);
	if (st == GATE_OPEN || (st == GATE_CUT && C.count[c] < C.target[c])) {
		C.count[c]++;
		if (st == GATE_CUT && cut_at_locked()) {
			/* this launch is the last before the cut: the next one stops */
			__atomic_store_n(&nvq_gate.state, GATE_SHUT, __ATOMIC_SEQ_CST);
			C.reached = 1;
			pthread_cond_broadcast(&C.cv);
			if (C.wake >= 0)
				(void)!write(C.wake, &b, 1);
		}
		pthread_mutex_unlock(&C.mu);
		if (!__atomic_load_n(&nvq_gate.active, __ATOMIC_RELAXED))
			__atomic_store_n(&nvq_gate.active, 1, __ATOMIC_RELAXED);
		return 0;
	}
	__atomic_fetch_sub(&nvq_gate.inflight, 1, __ATOMIC_SEQ_CST);
	/* at its target while others run on: wait here until that changes */
	while (__atomic_load_n(&nvq_gate.state, __ATOMIC_SEQ_CST) == GATE_CUT &&
	    C.count[c] >= C.target[c])
		pthread_cond_wait(&C.cv, &C.mu);
	pthread_mutex_unlock(&C.mu);
	return -1;
}

void
cut_set_state(int state)
{
	pthread_mutex_lock(&C.mu);
	__atomic_store_n(&nvq_gate.state, state, __ATOMIC_SEQ_CST);
	if (state != GATE_CUT) {
		C.reached = 0;
		C.ntarget = 0;
	}
	pthread_cond_broadcast(&C.cv);
	pthread_mutex_unlock(&C.mu);
}

static int
cut_counts_locked(uint64_t *counts, int max)
{
	int c;

	for (c = 0; c < C.n && c < max; c++)
		counts[c] = C.count[c];
	return c;
}

int
cut_shut(uint64_t *counts, int max)
{
	int n;

	pthread_mutex_lock(&C.mu);
	__atomic_store_n(&nvq_gate.state, GATE_SHUT, __ATOMIC_SEQ_CST);
	C.reached = 0;
	C.ntarget = 0;
	n = cut_counts_locked(counts, max);
	pthread_cond_broadcast(&C.cv);
	pthread_mutex_unlock(&C.mu);
	return n;
}

int
cut_counts(uint64_t *counts, int max)
{
	int n;

	pthread_mutex_lock(&C.mu);
	n = cut_counts_locked(counts, max);
	pthread_mutex_unlock(&C.mu);
	return n;
}

int
cut_aim(const uint64_t *targets, int n)
{
	int c, at;

	pthread_mutex_lock(&C.mu);
	if (__atomic_load_n(&nvq_gate.state, __ATOMIC_SEQ_CST) != GATE_SHUT) {
		pthread_mutex_unlock(&C.mu);
		return -1;
	}
	/* all n: a communicator this process has not launched on takes its own at first use */
	if (n > CUT_MAX_COMMS)
		n = CUT_MAX_COMMS;
	for (c = 0; c < C.n || c < n; c++)
		C.target[c] = c < n ? targets[c] : C.count[c];
	C.ntarget = n;
	at = cut_at_locked();
	if (!at)
		__atomic_store_n(&nvq_gate.state, GATE_CUT, __ATOMIC_SEQ_CST);
	C.reached = 0;
	pthread_cond_broadcast(&C.cv);
	pthread_mutex_unlock(&C.mu);
	return at;
}

int
cut_take_reached(void)
{
	int r;

	pthread_mutex_lock(&C.mu);
	r = C.reached;
	C.reached = 0;
	pthread_mutex_unlock(&C.mu);
	return r;
}

void
cut_child(int wake)
{
	pthread_mutex_init(&C.mu, NULL);
	pthread_cond_init(&C.cv, NULL);
	C.n = 0;
	C.ntarget = 0;
	C.reached = 0;
	C.wake = wake;
}
