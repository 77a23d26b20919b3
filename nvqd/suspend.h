/*
 * suspend.h: suspending and resuming jobs (nvq suspend and resume,
 * preemption, timeslice turns) through nvq-ckpt.
 *
 * A suspend takes the job's GPU locks back (its launches wait in the hook);
 * with [scheduler] offload = on, asks each hooked process to move its own
 * large allocations to host memory (hook/offload.c, MSG_HOOK_MOVE); then
 * runs nvq-ckpt, which locks and checkpoints every hooked process of the
 * job: the driver moves the rest of their GPU memory to host memory.  Each
 * process goes to nvq-ckpt as PID@START, checked to be the job's when the
 * list is made, so that nvq-ckpt (root) leaves alone a pid reused since;
 * the list is kept in jobs.ckpt_pids (bare PIDs of an older nvqd are
 * checked again before use).  The host memory a suspend needs is NVML's
 * figure where NVML sees the job, else its hooks' reports, bounded.  Only
 * then is the job SUSPENDED and its memory free for others.  A resume, once
 * the scheduler finds its memory free again on its own GPUs, runs nvq-ckpt
 * to restore and unlock them, asks the hooks to bring their allocations
 * back, then gives the locks back.  A step that fails leaves the job as it
 * was, running or suspended: it is never killed.
 */
#ifndef NVQ_SUSPEND_H
#define NVQ_SUSPEND_H

#include <stddef.h>
#include <stdint.h>

#include "engine.h"

enum susp_phase {
	SUSP_NONE = 0,
	SUSP_DRAINING,		/* its locks are being taken back */
	SUSP_MOVE_OUT,		/* its hooks move their allocations out */
	SUSP_CHECKPOINT,	/* nvq-ckpt suspend runs */
	SUSP_RESTORE,		/* nvq-ckpt resume runs */
	SUSP_MOVE_IN		/* its hooks bring their allocations back */
};

enum susp_why { SUSP_USER, SUSP_PREEMPT, SUSP_TURN, SUSP_RESTART };

/* Seconds a restarted nvqd gives a job's hooks to link again (they retry
 * every half second) before it may be suspended: until then nvqd does not
 * know which of its processes hold GPU memory. */
#define SUSPEND_RELINK	3.0

/*
 * Begins suspending a running job; for_job is the job it gives way to (0:
 * none).  Returns 0, or -1 with a sentence in err (nothing changed).
 */
int	suspend_job(struct engine *, struct job *, int why, int64_t for_job, char *err,
	    size_t errlen);
/*
 * After the locks moved (hooks_update): goes on with the jobs whose locks
 * are back, and with moves whose answers are overdue.  Returns the next
 * deadline of a move (0: none), for hooks_update's timer.
 */
double	suspend_drained(struct engine *);
/* Every process of the job answered its move (hooks.c), or went away. */
void	suspend_moved(struct engine *, struct job *);
/* Resumes a suspended job the scheduler found room for. */
void	suspend_resume(struct engine *, struct job *);
/* nvq resume: a job suspended by a user may resume once it fits. 0 or -1 with err. */
int	suspend_release(struct engine *, struct job *, const char *by, char *err,
	    size_t errlen);
/* After a restart: a running job nvqd had begun to suspend or resume runs on. */
void	suspend_recover(struct engine *, struct job *);
/* The turn on timeslice GPU g, in seconds. */
double	suspend_turn(struct engine *, int g);
/* Whether the job may not be asked to give way now: a switch of it failed
 * lately, or nvqd restarted and its hooks have not linked again yet. */
int	suspend_pinned(const struct job *, double now);

#endif
