/*
 * engine_energy.c: each running job's energy on each of its GPUs, from
 * NVML's counter of the GPU's energy.  A GPU's counter is read on the poll
 * timer ([gpus] poll: one read per GPU, not per job), and at a job's start
 * and end on that job's GPUs, so that each interval between two reads
 * belongs to the jobs that held the GPU in it: energy.c splits it (all to
 * a job alone; by the processes' SM utilisation, from NVML's per-process
 * samples, where several shared it).  The sums live in each job
 * (job->energy, made by engine_track) and are written to run_energy at
 * every poll (a crash of nvqd loses at most one interval) and at the end;
 * a restarted nvqd reads them back (engine_energy_load) and gives the time
 * it was away to the jobs that held each GPU (engine_energy_recovered).
 * Suspends and resumes are seen at the next poll.  It calls only
 * engine_usage.c (whose processes are whose) and the store.
 */
#include <stdlib.h>
#include <string.h>

#include "energy.h"
#include "engine_rooms.h"
#include "log.h"

/* One poll's per-process samples of a GPU, each given to its job. */
struct engine_energy_util {
	const struct engine_owners *o;
	int		g;
	double		outside;	/* processes of no job holding the GPU */
};

static int
engine_energy_holds(const struct job *j, int g)
{
	return j->energy != NULL && j->state == JOB_RUNNING && (j->gpumask & (1ULL << g));
}

static void
engine_energy_util_cb(pid_t pid, unsigned int sm, void *arg)
{
	struct engine_energy_util *u = arg;
	struct job *j = engine_owner_job(u->o, pid);

	if (j != NULL && engine_energy_holds(j, u->g))
		j->energy[u->g].util += sm;
	else
		u->outside += sm;
}

/*
 * Closes GPU g's interval: reads its counter and splits the energy since
 * the last read among the running jobs that hold it, but except (a job
 * that starts now).  With o, NVML's per-process samples since the last
 * poll weigh the jobs; without (a start's or an end's read) the last
 * poll's weights do.
 */
static void
engine_energy_tick(struct engine *e, int g, const struct engine_owners *o,
    const struct job *except)
{
	struct gpu *gp = &e->gpus.gpus[g];
	struct energy_part *p;
	struct job *j;
	uint64_t now_mj;
	double delta = -1;
	int n = 0, k;

	if (e->gpus.is_virtual || e->gpus.lib == NULL)
		return;
	if (o != NULL) {
		struct engine_energy_util u = { o, g, 0 };

		for (j = e->held; j != NULL; j = j->lnext)
			if (j->energy != NULL)
				j->energy[g].util = 0;
		gp->util_ok = gpu_util(&e->gpus, g, engine_energy_util_cb, &u) >= 0;
		gp->util_outside = u.outside;
	}
	if (gp->has_energy) {
		if (gpu_energy(&e->gpus, g, &now_mj) == -1) {
			gp->energy_lost = 1;	/* the next read only starts again */
		} else {
			if (!gp->energy_lost)
				delta = energy_delta(gp->energy_mj, now_mj);
			gp->energy_lost = 0;
			gp->energy_mj = now_mj;
		}
	}
	for (j = e->held; j != NULL; j = j->lnext)
		if (j != except && engine_energy_holds(j, g))
			n++;
	if (n == 0 || (p = calloc((size_t)n, sizeof(*p))) == NULL)
		return;
	k = 0;
	for (j = e->held; j != NULL && k < n; j = j->lnext)
		if (j != except && engine_energy_holds(j, g))
			p[k++].util = j->energy[g].util;
	energy_split(delta, gp->util_ok, gp->util_outside, p, n);
	k = 0;
	for (j = e->held; j != NULL && k < n; j = j->lnext)
		if (j != except && engine_energy_holds(j, g)) {
			j->energy[g].joules += p[k].joules;
			j->energy[g].how = energy_how_merge(j->energy[g].how, p[k].how);
			k++;
		}
	free(p);
}

int
engine_job_energy(const struct engine *e, const struct job *j, double *joules, int *how)
{
	int g, any = 0;

	*joules = 0;
	*how = ENERGY_ALONE;
	if (j->energy == NULL || j->state == JOB_PENDING)
		return -1;
	for (g = 0; g < e->gpus.n; g++)
		if (j->gpumask & (1ULL << g)) {
			any = 1;
			*joules += j->energy[g].joules;
			*how = energy_how_merge(*how, j->energy[g].how);
		}
	return any ? 0 : -1;
}

/* Writes job j's energy so far, per GPU, and its run's total (in a transaction). */
static int
engine_energy_save(struct engine *e, const struct job *j)
{
	const struct gpu *gp;
	int g;

	for (g = 0; g < e->gpus.n; g++) {
		if (!(j->gpumask & (1ULL << g)))
			continue;
		gp = &e->gpus.gpus[g];
		if (store_energy_put(e->store, j->id, gp->uuid,
		    j->energy[g].how == ENERGY_UNKNOWN ? -1 : j->energy[g].joules,
		    energy_how_name(j->energy[g].how),
		    gp->has_energy && !gp->energy_lost ? (int64_t)gp->energy_mj : -1) == -1)
			return -1;
	}
	return store_energy_total(e->store, j->id);
}

/* Job j starts on its GPUs: their intervals so far are the other jobs'. */
void
engine_energy_start(struct engine *e, struct job *j)
{
	int g;

	if (j->energy == NULL)
		return;
	for (g = 0; g < e->gpus.n; g++) {
		memset(&j->energy[g], 0, sizeof(j->energy[g]));
		if (!(j->gpumask & (1ULL << g)))
			continue;
		engine_energy_tick(e, g, NULL, j);
		j->energy[g].how = e->gpus.gpus[g].has_energy ? ENERGY_ALONE : ENERGY_UNKNOWN;
	}
}

/* Job j ended: its GPUs' last intervals, and its energy written with its run. */
void
engine_energy_end(struct engine *e, struct job *j)
{
	int g;

	if (j->energy == NULL || j->gpumask == 0)
		return;
	for (g = 0; g < e->gpus.n; g++)
		if (j->gpumask & (1ULL << g))
			engine_energy_tick(e, g, NULL, NULL);
	if (store_lazy_begin(e->store) == -1 || engine_energy_save(e, j) == -1)
		log_warnx("job %lld: its energy could not be recorded", (long long)j->id);
	store_lazy_commit(e->store);
}

/*
 * The poll: every GPU's interval closed, and every running job's energy
 * written, in one commit that is not synced on its own (a crash of nvqd
 * loses none of it; a power cut, which ends the jobs too, may lose one).
 */
void
engine_energy_poll(struct engine *e)
{
	struct engine_owners o = { e, NULL, NULL, 0 };
	struct job *j;
	int g, any = 0;

	if (e->gpus.is_virtual || e->gpus.lib == NULL)
		return;
	for (j = e->held; j != NULL && !any; j = j->lnext)
		any = j->energy != NULL && j->gpumask != 0 && j->state != JOB_PENDING;
	/* with no job on a GPU, every sample is outside use: read, to move past them */
	if (any)
		engine_owners_make(e, &o);
	for (g = 0; g < e->gpus.n; g++)
		engine_energy_tick(e, g, &o, NULL);
	engine_owners_free(&o);
	if (!any)
		return;
	if (store_lazy_begin(e->store) == 0)
		for (j = e->held; j != NULL; j = j->lnext)
			if (j->energy != NULL && j->gpumask != 0 &&
			    (j->state == JOB_RUNNING || j->state == JOB_SUSPENDED) &&
			    engine_energy_save(e, j) == -1) {
				log_warnx("job %lld: its energy could not be recorded",
				    (long long)j->id);
				break;
			}
	store_lazy_commit(e->store);
}

struct engine_energy_load {
	struct engine	*e;
	struct job	*j;
	uint64_t	found;		/* GPUs with a row */
};

static void
engine_energy_load_cb(void *arg, const char *uuid, double joules, const char *how,
    int64_t counter)
{
	struct engine_energy_load *l = arg;
	int g, h = energy_how_parse(how);

	for (g = 0; g < l->e->gpus.n; g++)
		if (strcmp(l->e->gpus.gpus[g].uuid, uuid) == 0 && (l->j->gpumask & (1ULL << g)))
			break;
	if (g == l->e->gpus.n)
		return;
	l->j->energy[g].joules = joules >= 0 ? joules : 0;
	l->j->energy[g].how = h < 0 || joules < 0 ? ENERGY_UNKNOWN : h;
	l->j->energy[g].mark = counter >= 0 ? (uint64_t)counter : 0;
	l->j->energy[g].has_mark = counter >= 0;
	l->found |= 1ULL << g;
}

void
engine_energy_load(struct engine *e, struct job *j)
{
	struct engine_energy_load l = { e, j, 0 };
	int g;

	if (j->energy == NULL)
		return;
	if (store_energy_get(e->store, j->id, engine_energy_load_cb, &l) == -1)
		log_warnx("job %lld: its energy so far could not be read", (long long)j->id);
	/* a GPU with no row: its energy before this nvqd is not known */
	for (g = 0; g < e->gpus.n; g++)
		if ((j->gpumask & (1ULL << g)) && !(l.found & (1ULL << g)))
			j->energy[g].how = ENERGY_UNKNOWN;
}

void
engine_energy_recovered(struct engine *e)
{
	struct gpu *gp;
	struct job *j;
	double delta;
	int g, n;

	for (g = 0; g < e->gpus.n; g++) {
		gp = &e->gpus.gpus[g];
		n = 0;
		/* a job suspended then gets nothing, as while nvqd runs (engine_energy_holds) */
		for (j = e->held; j != NULL; j = j->lnext)
			if (j->energy != NULL && j->state == JOB_RUNNING && (j->gpumask & (1ULL << g)))
				n++;
		for (j = e->held; j != NULL; j = j->lnext) {
			if (j->energy == NULL || j->state == JOB_PENDING ||
			    !(j->gpumask & (1ULL << g)) || !j->energy[g].has_mark)
				continue;
			j->energy[g].has_mark = 0;
			if (j->state != JOB_RUNNING)
				continue;
			delta = gp->has_energy ? energy_delta(j->energy[g].mark, gp->energy_mj) : -1;
			if (delta < 0) {
				j->energy[g].how = ENERGY_UNKNOWN;
				continue;
			}
			/* nothing says how the jobs shared it while nvqd was away: evenly */
			j->energy[g].joules += delta / n;
			if (n > 1)
				j->energy[g].how = energy_how_merge(j->energy[g].how, ENERGY_SHARED);
		}
	}
}
