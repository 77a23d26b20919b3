/*
 * link.h: the hook's connection to nvqd, and what the two files of the
 * hook ask of each other.
 *
 * link.c owns the connection and a thread of its own: it registers the
 * process (job id, pid), reports its device memory off the allocation
 * path, applies the limits and lock grants nvqd sends, and on a revoke
 * shuts the gate, waits for the work in flight, and acknowledges.
 * hook.c owns the budget and the driver; link.c reaches them through the
 * link_ops hook.c gives it.
 */
#ifndef NVQ_LINK_H
#define NVQ_LINK_H

#include <stddef.h>
#include <stdint.h>

#include "gate.h"

/*
 * What link.c asks of the rest of the hook (hook.c owns the budget and the
 * driver), handed to link_start: link.c calls nothing of hook.c's by name.
 */
struct link_ops {
	void	(*log)(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
	/* Device memory per CUDA ordinal: fills used/peak, returns how many. */
	int	(*usage)(uint64_t *used, uint64_t *peak, int max);
	/* A device's UUID as NVML writes it ("GPU-..."); 0 or -1. */
	int	(*uuid)(int dev, char *buf, size_t len);
	/* Waits for the work submitted to the active primary contexts of devs. */
	void	(*sync)(int ndev);
	/* What this process may hold on dev, as nvqd sees the job (0: no cap). */
	void	(*set_cap)(int dev, uint64_t cap);
	/* Bytes of shared device memory a suspend cannot move (reported). */
	uint64_t (*unmovable)(void);
};

/*
 * Starts the link once per process (again in a forked child); never blocks
 * for more than about a second.  ops (kept, not copied) is the hook's; NULL
 * where link.c starts itself from the gate, with the ops given before.
 */
void	link_start(const struct link_ops *ops);
/*
 * An allocation of asked bytes on dev was refused: the job held used there
 * of its limit.  Told to nvqd by the link's thread (the last refusal, once),
 * never on the caller's path.
 */
void	link_refused(int dev, uint64_t asked, uint64_t used, uint64_t limit);
/* In a forked child: the parent's connection and thread are not its own. */
void	link_child(void);

/* Blocks until the gate opens (starting the link first, if need be). */
void	link_wait_gate(void);

static inline void
link_gate_enter(void)
{
	for (;;) {
		__atomic_fetch_add(&nvq_gate.inflight, 1, __ATOMIC_SEQ_CST);
		if (__builtin_expect(gate_passes(__atomic_load_n(&nvq_gate.state,
		    __ATOMIC_SEQ_CST)), 1)) {
			if (!__atomic_load_n(&nvq_gate.active, __ATOMIC_RELAXED))
				__atomic_store_n(&nvq_gate.active, 1, __ATOMIC_RELAXED);
			return;
		}
		__atomic_fetch_sub(&nvq_gate.inflight, 1, __ATOMIC_SEQ_CST);
		link_wait_gate();
	}
}

static inline void
link_gate_leave(void)
{
	__atomic_fetch_sub(&nvq_gate.inflight, 1, __ATOMIC_RELEASE);
}

#endif
