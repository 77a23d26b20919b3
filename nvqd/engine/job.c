/*
 * job.c: which row of its life (job.h) a job is in, told from its fields
 * alone.  Pure: no I/O, no engine.
 */
#include "job.h"

int
job_life(const struct job *j)
{
	if (j->gone)
		return JOB_LIFE_GONE;
	if (j->exited)
		return j->recorded ? JOB_LIFE_RECORDED : JOB_LIFE_EXITED;
	if (j->ending[0] != '\0')
		return JOB_LIFE_STOPPING;
	if (j->state == JOB_SUSPENDED)
		return JOB_LIFE_SUSPENDED;
	if (j->state == JOB_RUNNING)
		return JOB_LIFE_RUNNING;
	if (j->promised > 0 || j->prepared)
		return JOB_LIFE_STARTING;
	switch (j->queue) {
	case JOB_Q_PARKED:
		return JOB_LIFE_PARKED;
	case JOB_Q_DEPS:
		return JOB_LIFE_DEPS;
	case JOB_Q_GATED:
		return JOB_LIFE_GATED;
	default:
		return JOB_LIFE_READY;
	}
}
