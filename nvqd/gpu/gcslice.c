/*
 * gcslice.c: who holds each timeslice GPU (see gcslice.h), for gpuctl.c's
 * lock pass.  No I/O.
 */
#include "gcslice.h"

static int
gcslice_in(const struct gc_job *j, int g)
{
	return (j->gpumask & (1ULL << g)) != 0;
}

static int
gcslice_ts(const struct gc_env *env, int g)
{
	return (env->compute_ts & (1ULL << g)) != 0;
}

int
gcslice_desired(const struct gc_env *env, const struct gc_job *j)
{
	const struct gpuctl *gc = j->gc;
	int g;

	if (gc->held || gc->yielding || gc->phase != GC_NONE || j->state != GC_JOB_RUNNING)
		return 0;
	for (g = 0; g < env->ngpus; g++)
		if (gcslice_in(j, g) && gcslice_ts(env, g) && env->all->ts_holder[g] != j->id)
			return 0;
	return 1;
}

struct gc_job *
gcslice_find(struct gc_job *jobs, int n, int64_t id)
{
	int k;

	for (k = 0; k < n; k++)
		if (jobs[k].id == id)
			return &jobs[k];
	return NULL;
}

void
gcslice_tidy(struct gc_job *jobs, int n, const struct gc_env *env)
{
	struct gc_job *j;
	int64_t h;
	int g;

	for (g = 0; g < env->ngpus; g++) {
		if ((h = env->all->ts_holder[g]) == 0)
			continue;
		j = gcslice_find(jobs, n, h);
		if (j == NULL || j->state != GC_JOB_RUNNING || !gcslice_in(j, g) || j->nsess == 0 ||
		    !gcslice_ts(env, g))
			env->all->ts_holder[g] = 0;
	}
}

/* Whether a job other than h waits for timeslice GPU g. */
static int
gcslice_waiter(struct gc_job *jobs, int n, int g, int64_t h)
{
	const struct gc_job *j;
	int k;

	for (k = 0; k < n; k++) {
		j = &jobs[k];
		if (j->id != h && j->state == GC_JOB_RUNNING && j->gc->wants && !j->gc->held &&
		    j->nsess > 0 && gcslice_in(j, g))
			return 1;
	}
	return 0;
}

void
gcslice_assign(struct gc_job *jobs, int n, const struct gc_env *env, double now)
{
	struct gpuctl_all *all = env->all;
	struct gc_job *j, *best;
	int g, k, ok;

	for (;;) {
		best = NULL;
		for (k = 0; k < n; k++) {
			j = &jobs[k];
			if (j->state != GC_JOB_RUNNING || j->gc->held || j->gc->yielding ||
			    j->nsess == 0 || !j->gc->wants || (j->gpumask & env->compute_ts) == 0)
				continue;
			ok = 1;
			for (g = 0; g < env->ngpus && ok; g++)
				if (gcslice_in(j, g) && gcslice_ts(env, g) && all->ts_holder[g] != 0 &&
				    all->ts_holder[g] != j->id)
					ok = 0;
			if (!ok || gcslice_desired(env, j))
				continue;	/* it has them all already, or cannot have them */
			if (best == NULL || j->gc->want_since < best->gc->want_since)
				best = j;
		}
		if (best == NULL)
			return;
		for (g = 0; g < env->ngpus; g++)
			if (gcslice_in(best, g) && gcslice_ts(env, g)) {
				all->ts_holder[g] = best->id;
				all->ts_since[g] = now;
			}
		best->gc->idle = 0;
	}
}

void
gcslice_yield(struct gc_job *jobs, int n, const struct gc_env *env, double now,
    struct gc_acts *out, double *next)
{
	struct gpuctl_all *all = env->all;
	struct gc_job *j;
	double t;
	int64_t h;
	int g;

	for (g = 0; g < env->ngpus; g++) {
		if ((h = all->ts_holder[g]) == 0 || !gcslice_waiter(jobs, n, g, h))
			continue;
		j = gcslice_find(jobs, n, h);
		if (j->gc->yielding || j->gc->lock != GC_GRANTED)
			continue;
		if (j->gc->idle || now - all->ts_since[g] >= env->quantum) {
			gcacts_log(out, h, GC_LOG_DEBUG, "job %lld yields GPU %d (%s)", (long long)h,
			    g, j->gc->idle ? "idle" : "quantum over");
			j->gc->yielding = 1;
		} else if ((t = all->ts_since[g] + env->quantum) > 0 && (*next == 0 || t < *next))
			*next = t;
	}
}

void
gcslice_release(const struct gc_env *env, struct gc_job *j, double now)
{
	gcslice_drop(env, j->id);
	j->gc->yielding = 0;
	/*
	 * A process that waited for the lock while it was being taken back
	 * (a rank at the cut while its peer ran on to it) says so once: that
	 * wait goes on, at the back of the line.  Dropped, the job would wait
	 * for a turn that never comes.
	 */
	j->gc->wants = j->gc->want_held;
	j->gc->want_since = now;
	j->gc->want_held = 0;
	j->gc->idle = 0;
}

void
gcslice_drop(const struct gc_env *env, int64_t id)
{
	int g;

	for (g = 0; g < env->ngpus; g++)
		if (env->all->ts_holder[g] == id)
			env->all->ts_holder[g] = 0;
}
