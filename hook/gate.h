/*
 * gate.h: the per-process gate that launches and copies pass while the job
 * holds its GPU locks.  The fast path is two atomic increments on memory
 * of this process and one load: no system call, no lock.
 *
 * A launcher counts itself in (inflight), then looks at the state; the link
 * thread, taking the lock back, shuts the gate, then waits for inflight to
 * fall to zero.  Both sides use sequentially consistent operations, so
 * either the launcher sees the gate shut and backs out, or the link thread
 * sees the launcher in flight and waits for it.
 *
 * The fast path itself, link_gate_enter() and link_gate_leave(), is in
 * link.h: its slow path waits on the link, which owns the gate.
 *
 * GATE_CUT is the way to a consistent cut across a job's ranks (cut.h):
 * launches and copies pass as when open, but an NCCL launch passes only
 * while its communicator's count is below the cut's target (decided in
 * cut.c, under its mutex).  The fast path tests one comparison for both.
 */
#ifndef NVQ_HOOK_GATE_H
#define NVQ_HOOK_GATE_H

#include <stdint.h>

enum gate_state {
	GATE_INIT = 0,		/* the link has not started: start it */
	GATE_SHUT,		/* taken back (hold, timeslice) or waiting for nvqd */
	GATE_OPEN,		/* the job holds its locks */
	GATE_CUT		/* taken back, running on to the cut's targets (cut.h) */
};

/* Whether a launch or copy passes (open, or on its way to the cut). */
#define gate_passes(st)	((st) >= GATE_OPEN)

struct gate {
	int		state;
	int		active;		/* set by launches, cleared by the link (idle) */
	uint64_t	inflight;	/* launches and copies inside the driver now */
};

extern struct gate nvq_gate;

#endif
