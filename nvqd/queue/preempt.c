/*
 * preempt.c: who gives way to a waiting job (see sched.h).
 *
 * After a pass of sched_plan, the waiting jobs are looked at in the order
 * they go in.  The first one that running jobs could make room for is the
 * beneficiary; the running jobs that give way are its victims.
 *
 * A running job may give way to a job J on GPU g when it is not being
 * suspended or resumed, and either
 *   - priority: J may pass it (preempt_may: J's class preempts its class,
 *     whatever their -p, as Slurm's preempt/qos; or it is J's own user's
 *     job, or J is root's, and its priority is below J's: a user's -p
 *     orders only that user's jobs), it has run preempt_min_runtime
 *     since it started or resumed, J is a pending job (resumes never
 *     preempt), and preempt_give's table says how: under preempt = suspend
 *     it is suspended, or, if it cannot be (unsuspendable: its processes
 *     share memory nvq cannot move, or say so), stopped with its --signal
 *     and kill_grace, then requeued with --requeue or else cancelled, as
 *     Slurm's PreemptMode REQUEUE and CANCEL; under preempt = requeue only
 *     --requeue jobs give way, requeued (between --class lc and be jobs,
 *     class alone decides: an lc job never gives way to a be job, a be
 *     job gives way to an lc job); or
 *   - turns: g is a SCHED_TIMESLICE GPU, its quantum there is over, its
 *     priority is not above J's, it is not lc for a be J, and it can be
 *     suspended (preempt_give_turn).
 *     One that cannot is not stopped at the end of a turn, whatever it
 *     asked: as Slurm's gang scheduling, turns are taken only by suspending,
 *     and a job stopped (requeued, cancelled) at each turn's end would lose
 *     its work at every turn.  It keeps the GPU as on a serial GPU, until
 *     it ends or a higher job preempts it (above).  A claim of shared memory
 *     thus keeps a job out of turns among its equals, and buys nothing more.
 * On each GPU the set that gives way is the one that makes J fit with the
 * fewest jobs, then the lowest priorities, then the most recently started,
 * however each gives way: a job's claim changes how it goes, never whether
 * it is chosen (a job that said it cannot be suspended would otherwise
 * push a suspend onto another user's job).
 * A job needing N GPUs takes the N GPUs where that set is smallest.
 *
 * No thrashing: GPUs where a job is being suspended or resumed are left
 * alone until that ends (what it frees is already promised); a later job
 * never takes a GPU that an earlier waiting job could use; a job given a
 * GPU runs its quantum, or preempt_min_runtime, before it may be asked to
 * give way; and equal priorities never preempt each other.
 */
#include <string.h>

#include "sched.h"
#include "preempt.h"

struct preempt_cost {
	int		n;		/* jobs that give way */
	int64_t		prio;		/* the sum of their priorities */
	double		recent;		/* the sum of their slice starts: more is better */
	uint64_t	set;		/* bit k: cand[k] gives way */
};

struct preempt_gpu {
	int		cand[SCHED_MAX_SUBSET];	/* indexes into jobs that may give way */
	int		ncand;
	uint64_t	cand_demand[SCHED_MAX_SUBSET];
	int		cand_give[SCHED_MAX_SUBSET];	/* enum sched_give */
	int		usable;
	struct preempt_cost best;
};

/* Whether cost a is better than b. */
static int
preempt_better(const struct preempt_cost *a, const struct preempt_cost *b)
{
	if (a->n != b->n)
		return a->n < b->n;
	if (a->prio != b->prio)
		return a->prio < b->prio;
	return a->recent > b->recent;
}

/* The row of preempt_give_table for the end of a turn on a timeslice GPU. */
#define PREEMPT_TURN	3

/*
 * How a running job gives way: [preempt, or PREEMPT_TURN][unsuspendable][requeue].
 * One that cannot be suspended is stopped instead, never passed over: a
 * claim of shared memory (hooks.c), or a suspend that fails, buys no
 * protection from a higher job.  At the end of a turn it is not stopped
 * (see the top of this file).
 */
static const unsigned char preempt_give_table[4][2][2] = {
	[SCHED_PREEMPT_OFF] = {
		{ SCHED_GIVE_NEVER, SCHED_GIVE_NEVER },
		{ SCHED_GIVE_NEVER, SCHED_GIVE_NEVER } },
	[SCHED_PREEMPT_SUSPEND] = {
		{ SCHED_GIVE_SUSPEND, SCHED_GIVE_SUSPEND },
		{ SCHED_GIVE_CANCEL, SCHED_GIVE_REQUEUE } },
	[SCHED_PREEMPT_REQUEUE] = {
		{ SCHED_GIVE_NEVER, SCHED_GIVE_REQUEUE },
		{ SCHED_GIVE_NEVER, SCHED_GIVE_REQUEUE } },
	[PREEMPT_TURN] = {
		{ SCHED_GIVE_SUSPEND, SCHED_GIVE_SUSPEND },
		{ SCHED_GIVE_NEVER, SCHED_GIVE_NEVER } },
};

int
preempt_give(const struct sched_job *v, const struct sched_settings *s)
{
	if (s->preempt < SCHED_PREEMPT_OFF || s->preempt > SCHED_PREEMPT_REQUEUE)
		return SCHED_GIVE_NEVER;
	return preempt_give_table[s->preempt][v->unsuspendable != 0][v->requeue != 0];
}

int
preempt_give_turn(const struct sched_job *v)
{
	return preempt_give_table[PREEMPT_TURN][v->unsuspendable != 0][v->requeue != 0];
}

int
preempt_may(const struct sched_job *v, const struct sched_job *j)
{
	/*
	 * lc/be (issue 43): an lc job never gives way to a be job, and a be job
	 * gives way to an lc job that does not fit, whoever's: who may submit
	 * lc is the admin's choice ([class lc]).  Between equals, as before.
	 */
	if (v->lc != j->lc)
		return j->lc;
	if (v->qos >= 0 && v->qos < 32 && (j->qos_preempts & (1U << v->qos)))
		return 1;
	return v->priority < j->priority && (v->uid == j->uid || j->uid == 0);
}

/*
 * The time from which running job v may give way to j on g, and in *give
 * how (enum sched_give); -1 if never.
 */
static double
preempt_when(const struct sched_gpu *gpu, const struct sched_job *v, const struct sched_job *j,
    const struct sched_settings *s, int *give)
{
	double t = -1, r;
	int how;

	*give = SCHED_GIVE_NEVER;
	if (v->busy || v->pinned)
		return -1;
	if (!j->suspended && preempt_may(v, j) &&
	    (how = preempt_give(v, s)) != SCHED_GIVE_NEVER) {
		t = v->slice_start + s->preempt_min_runtime;
		*give = how;
	}
	if (gpu->mode == SCHED_TIMESLICE && v->priority <= j->priority && !(v->lc && !j->lc) &&
	    (how = preempt_give_turn(v)) != SCHED_GIVE_NEVER) {
		r = v->slice_start + gpu->quantum;
		if (t < 0 || r < t) {
			t = r;
			*give = how;
		}
	}
	return t;
}

/*
 * The best set of g's jobs that gives way so that j fits on g, into pg;
 * sets pg->usable.  Notes in *wake when a job will be able to give way.
 */
static void
preempt_on(const struct sched_gpu *gpus, int g, const struct sched_job *jobs, int njobs,
    const struct sched_decision *dec, const struct sched_job *j,
    const struct sched_settings *s, double now, double *wake, struct preempt_gpu *pg)
{
	const struct sched_gpu *gpu = &gpus[g];
	uint64_t budget = sched_budget(gpu, s), held = 0, need, d, freed;
	struct preempt_cost c;
	int i, k, nheld = 0, whole, give;
	unsigned m;
	double t;

	memset(pg, 0, sizeof(*pg));
	if (budget == 0)
		return;
	need = j->mem == 0 ? budget : j->mem;
	whole = j->mem == 0 || gpu->mode == SCHED_SERIAL;
	if (need > budget)
		return;
	/* a switch under way here: nothing gives way, whatever order jobs come in */
	for (i = 0; i < njobs; i++)
		if (jobs[i].running && jobs[i].busy && (jobs[i].gpumask & (1ULL << g)) &&
		    dec[i].why != SCHED_START && dec[i].why != SCHED_RESUME)
			return;
	for (i = 0; i < njobs; i++) {
		const struct sched_job *v = &jobs[i];

		if (dec[i].why == SCHED_START || dec[i].why == SCHED_RESUME) {
			/* it starts now: it holds its memory, and has its full turn */
			struct sched_job started = *v;

			if (!(dec[i].gpumask & (1ULL << g)))
				continue;
			held += v->mem == 0 ? budget : v->mem;
			nheld++;
			started.slice_start = now;
			started.busy = 0;
			if ((t = preempt_when(gpu, &started, j, s, &give)) >= 0 &&
			    (*wake == 0 || t < *wake))
				*wake = t;
			continue;
		}
		if (!v->running || !(v->gpumask & (1ULL << g)))
			continue;
		d = v->mem == 0 ? budget : v->mem;
		held += d;
		nheld++;
		t = preempt_when(gpu, v, j, s, &give);
		if (t < 0)
			continue;
		if (t > now) {
			if (*wake == 0 || t < *wake)
				*wake = t;
			continue;
		}
		if (pg->ncand == SCHED_MAX_SUBSET)
			return;		/* beyond what is searched exactly: leave it */
		pg->cand[pg->ncand] = i;
		pg->cand_give[pg->ncand] = give;
		pg->cand_demand[pg->ncand++] = d;
	}
	if (whole && pg->ncand < nheld)
		return;
	if (whole ? nheld == 0 : held <= budget && budget - held >= need) {
		pg->usable = 1;		/* it fits as it is */
		return;
	}
	for (m = 1; m < (1U << pg->ncand); m++) {
		memset(&c, 0, sizeof(c));
		freed = 0;
		for (k = 0; k < pg->ncand; k++)
			if (m & (1U << k)) {
				c.n++;
				c.prio += jobs[pg->cand[k]].priority;
				c.recent += jobs[pg->cand[k]].slice_start;
				freed += pg->cand_demand[k];
			}
		if (whole && c.n < nheld)
			continue;
		if (held - freed > budget || budget - (held - freed) < need)
			continue;
		c.set = m;
		if (!pg->usable || preempt_better(&c, &pg->best)) {
			pg->best = c;
			pg->usable = 1;
		}
	}
}

/* Adds jobs[i], which gives way as give says, to the victims once; -1 if there are too many. */
static int
preempt_add(struct sched_preemption *out, int i, int give)
{
	int k;

	for (k = 0; k < out->nvictims; k++)
		if (out->victims[k] == i)
			return 0;
	if (out->nvictims == SCHED_MAX_VICTIMS)
		return -1;
	out->give[out->nvictims] = give;
	out->victims[out->nvictims++] = i;
	return 0;
}

/* Tries to make room for jobs[idx] on the GPUs of allowed; 1 if it can. */
static int
preempt_for(const struct sched_gpu *gpus, int ngpus, const struct sched_job *jobs, int njobs,
    const struct sched_decision *dec, int idx, uint64_t allowed,
    const struct sched_settings *s, double now, double *wake, struct sched_preemption *out)
{
	struct preempt_gpu pg[SCHED_MAX_GPUS];
	const struct sched_job *j = &jobs[idx];
	uint64_t chosen = 0;
	int g, k, n, best, timeslice = 1;

	for (g = 0; g < ngpus; g++) {
		pg[g].usable = 0;
		if (allowed & (1ULL << g))
			preempt_on(gpus, g, jobs, njobs, dec, j, s, now, wake, &pg[g]);
	}
	if (j->suspended) {
		/* its own GPUs, every one of them */
		for (g = 0; g < ngpus; g++)
			if ((j->gpumask & (1ULL << g)) && !pg[g].usable)
				return 0;
		chosen = j->gpumask;
	} else {
		for (n = 0; n < j->ngpus; n++) {
			best = -1;
			for (g = 0; g < ngpus; g++)
				if (pg[g].usable && !(chosen & (1ULL << g)) &&
				    (best == -1 || preempt_better(&pg[g].best, &pg[best].best)))
					best = g;
			if (best == -1)
				return 0;
			chosen |= 1ULL << best;
		}
	}
	out->nvictims = 0;
	for (g = 0; g < ngpus; g++) {
		if (!(chosen & (1ULL << g)))
			continue;
		if (gpus[g].mode != SCHED_TIMESLICE)
			timeslice = 0;
		for (k = 0; k < pg[g].ncand; k++)
			if ((pg[g].best.set & (1ULL << k)) &&
			    preempt_add(out, pg[g].cand[k], pg[g].cand_give[k]) == -1)
				return 0;
	}
	if (out->nvictims == 0)
		return 0;	/* it fits already: sched_plan starts it */
	out->beneficiary = idx;
	out->rotation = timeslice;
	return 1;
}

void
preempt_choose(const struct sched_gpu *gpus, int ngpus, const struct sched_job *jobs, int njobs,
    const struct sched_settings *s, double now, const struct sched_plan *p,
    struct sched_preemption *out)
{
	const struct sched_job *j;
	uint64_t taken = 0, could, timesliced = 0, budgeted = 0, all = 0;
	double wake = 0;
	int i, g, idx;

	memset(out, 0, sizeof(*out));
	out->beneficiary = -1;
	if (ngpus > SCHED_MAX_GPUS)
		ngpus = SCHED_MAX_GPUS;
	for (g = 0; g < ngpus; g++) {
		if (gpus[g].mode == SCHED_TIMESLICE)
			timesliced |= 1ULL << g;
		if (sched_budget(&gpus[g], s) > 0)
			budgeted |= 1ULL << g;
	}
	if (s->preempt == SCHED_PREEMPT_OFF && timesliced == 0)
		return;
	/* the GPUs where a job could give way: they hold one (its decision says where) */
	for (i = 0; i < njobs; i++)
		if (p->dec[i].why == SCHED_RUNNING || p->dec[i].why == SCHED_START ||
		    p->dec[i].why == SCHED_RESUME)
			all |= p->dec[i].gpumask;
	all &= budgeted;
	/* once every such GPU is taken by a job before, no later job can be served */
	for (i = 0; i < p->nwaiting && (taken & all) != all; i++) {
		idx = p->order[i];
		j = &jobs[idx];
		if (p->dec[idx].why != SCHED_WAIT_MEM || j->ngpus == 0)
			continue;
		/* the GPUs that could ever hold it */
		could = sched_could(gpus, ngpus, s, j);
		/* a resume waits its turn on timeslice GPUs, and never preempts */
		if (j->suspended && (j->gpumask & ~timesliced) != 0) {
			taken |= could;
			continue;
		}
		if (j->suspended && (could & taken) != 0) {
			taken |= could;
			continue;
		}
		if (preempt_for(gpus, ngpus, jobs, njobs, p->dec, idx, could & ~taken, s, now,
		    &wake, out))
			return;
		taken |= could;
	}
	out->next_wake = wake;
}

double
preempt_quantum(double switch_cost, double overhead, double min, double fixed)
{
	double q;

	if (fixed > 0)
		return fixed;
	if (overhead <= 0 || overhead >= 1)
		overhead = 0.05;
	q = switch_cost * (1 - overhead) / overhead;
	return q > min ? q : min;
}
