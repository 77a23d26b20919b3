/*
 * suspend.h: suspending and resuming jobs (nvq suspend and resume,
 * preemption, timeslice turns) through nvq-ckpt.
 *
 * A suspend takes the job's GPU locks back (its launches wait in the hook),
 * then runs nvq-ckpt, which locks and checkpoints every hooked process of
 * the job: the driver moves their GPU memory to host memory.  Only then is
 * the job SUSPENDED and its memory free for others.  A resume, once the
 * scheduler finds its memory free again on its own GPUs, runs nvq-ckpt to
 * restore and unlock them, then gives the locks back.  A step that fails
 * leaves the job as it was, running or suspended: it is never killed.
 */
#ifndef NVQ_SUSPEND_H
#define NVQ_SUSPEND_H

#include <stddef.h>
#include <stdint.h>

#include "engine.h"

enum susp_phase {
	SUSP_NONE = 0,
	SUSP_DRAINING,		/* its locks are being taken back */
	SUSP_CHECKPOINT,	/* nvq-ckpt suspend runs */
	SUSP_RESTORE		/* nvq-ckpt resume runs */
};

enum susp_why { SUSP_USER, SUSP_PREEMPT, SUSP_TURN, SUSP_RESTART };

/*
 * Begins suspending a running job; for_job is the job it gives way to (0:
 * none).  Returns 0, or -1 with a sentence in err (nothing changed).
 */
int	suspend_job(struct engine *, struct job *, int why, int64_t for_job, char *err,
	    size_t errlen);
/* After the locks moved (hooks_update): checkpoints the jobs whose locks are back. */
void	suspend_drained(struct engine *);
/* Resumes a suspended job the scheduler found room for. */
void	suspend_resume(struct engine *, struct job *);
/* nvq resume: a job suspended by a user may resume once it fits. 0 or -1 with err. */
int	suspend_release(struct engine *, struct job *, const char *by, char *err,
	    size_t errlen);
/* After a restart: a running job nvqd had begun to suspend or resume runs on. */
void	suspend_recover(struct engine *, struct job *);
/* The turn on timeslice GPU g, in seconds. */
double	suspend_turn(struct engine *, int g);
/* Whether the job may be asked to give way now (no switch of it failed lately). */
int	suspend_pinned(const struct job *, double now);

#endif
