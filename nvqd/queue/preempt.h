/*
 * preempt.h: who gives way (preempt.c): after sched_plan, whether running
 * jobs should give way to a waiting one, how each does, and a timeslice
 * turn's length.  Pure, over sched.h's plain structs.
 */
#ifndef NVQ_PREEMPT_H
#define NVQ_PREEMPT_H

#include "sched.h"

/*
 * After sched_plan: whether running jobs should give way to a waiting one,
 * by priority (settings' preempt) or by turns on SCHED_TIMESLICE GPUs.  At
 * most one waiting job is served per call, and jobs being suspended or
 * resumed (busy) stay: what they free is already promised.
 */
void		preempt_choose(const struct sched_gpu *, int, const struct sched_job *, int,
		    const struct sched_settings *, double now, const struct sched_plan *,
		    struct sched_preemption *);

/*
 * Whether pending job j may take running job v's place (turns aside): j's
 * class preempts v's class; or v is below j's priority and is j's own
 * user's job, or j is root's.  Another user's -p never passes v.
 */
int		preempt_may(const struct sched_job *v, const struct sched_job *j);

/*
 * How running job v gives way to a pending job of higher priority under
 * settings s (enum sched_give), whatever the times: suspended if it can
 * be; if it cannot (unsuspendable), stopped and requeued with --requeue,
 * else cancelled; under preempt = requeue, only --requeue jobs, requeued.
 */
int		preempt_give(const struct sched_job *v, const struct sched_settings *s);

/*
 * How running job v gives way at the end of its turn on a SCHED_TIMESLICE
 * GPU (enum sched_give), whatever preempt says: suspended if it can be,
 * else SCHED_GIVE_NEVER (it takes no turns; preempt.c says why).
 */
int		preempt_give_turn(const struct sched_job *v);

/*
 * A timeslice quantum: fixed if fixed > 0, else long enough that switches
 * costing switch_cost seconds (a suspend plus a resume) take at most
 * overhead (0..1) of the time, and at least min seconds.
 */
double		preempt_quantum(double switch_cost, double overhead, double min, double fixed);

#endif
