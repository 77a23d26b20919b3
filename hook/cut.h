/*
 * cut.h: a consistent cut across a job's ranks (NCCL collectives).
 *
 * A rank stopped before launching a collective that a peer has launched
 * leaves the peer's kernel spinning: its GPU work never drains.  So the
 * hook counts, per process, the launches of NCCL's device kernels (their
 * names begin with "nccl", C++ mangling aside, asked of the driver once per
 * function with cuFuncGetName) per communicator: the communicator is the pointer the
 * kernel's argument block begins with (struct ncclDevComm *), numbered 0,
 * 1, ... in the order this process first launched on it.  When nvqd takes
 * the lock back, every process reports its counts (cut_shut); nvqd sends
 * back the largest count of each communicator over the job's processes
 * (cut_aim), and a process below a target runs on (GATE_CUT) until it has
 * launched as many, then stops at its next launch.  Every collective
 * launched is then launched on every rank, and every stream drains.
 *
 * cut.c is a leaf: hook.c calls cut_enter for launches, link.c the rest;
 * it calls neither (it pokes the link's thread through a descriptor).
 * Gate state changes go through cut_set_state, under cut.c's mutex, so
 * that an NCCL launch decides against the counts and the state at once.
 */
#ifndef NVQ_CUT_H
#define NVQ_CUT_H

#include <stdint.h>

#define CUT_MAX_COMMS	64	/* communicators counted; more pass uncounted */

/*
 * The driver's cuFuncGetName (CUDA >= 12.3), or NULL: then no launch is
 * recognised as NCCL's and revokes behave as before.  wake: a descriptor
 * the link's thread polls, written when a launch reaches the cut.
 */
void	cut_init(int (*get_name)(const char **, void *), int wake);
/*
 * The communicator of a launch of function f with the driver's kernelParams
 * p and extra x: its number, or -1 if f is not an NCCL kernel (or its
 * arguments name no communicator, or CUT_MAX_COMMS are counted already).
 */
int	cut_comm(void *f, void **p, void **x);
/*
 * An NCCL launch on communicator c at the gate: 0 if it passes (counted in
 * flight as link_gate_enter() counts, and counted on c; the caller calls
 * link_gate_leave() after the driver returns), -1 if it may not now: the caller
 * waits for the gate to open (link_gate_enter(), link_gate_leave()) and asks again.
 * On the way to a cut, a launch at its target waits here for the state to
 * change.
 */
int	cut_pass(int c);
/* Sets the gate's state (gate.h); GATE_OPEN and GATE_SHUT end any cut. */
void	cut_set_state(int state);
/*
 * Shuts the gate and fills counts (max entries) with this process's NCCL
 * launches per communicator; returns how many communicators.
 */
int	cut_shut(uint64_t *counts, int max);
/* The counts now, as cut_shut gives them, without touching the gate. */
int	cut_counts(uint64_t *counts, int max);
/*
 * The cut's targets (n of them; a communicator not named keeps its count;
 * one named that this process has not launched on yet takes the target at
 * its number when it first launches on it, and counts 0 launches until then).
 * Returns 1 if the process is at the cut already (the gate stays shut),
 * 0 if it runs on to it (GATE_CUT), -1 if the gate is not shut (a grant
 * came first: nothing to do).
 */
int	cut_aim(const uint64_t *targets, int n);
/* 1 once after a launch reached the cut (the gate is shut again), else 0. */
int	cut_take_reached(void);
/* In a forked child: its parent's counts and communicators are not its own. */
void	cut_child(int wake);

#endif
