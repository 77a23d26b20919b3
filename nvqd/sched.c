/*
 * sched.c: the admission policy (see sched.h).
 *
 * One pass orders the pending jobs by effective priority (priority plus
 * aging times hours waited; then first submitted; then id) and places each
 * in turn on GPUs where its demand fits the GPU's budget less what running
 * and newly started jobs demand.  A job of N GPUs gets N or nothing.
 *
 * The backfill rule: a job that cannot start for want of memory leaves a
 * claim of its demand on every GPU that could ever hold it.  A later job may
 * start on a claimed GPU only if it cannot delay any claim there whatever
 * order the running jobs end in: for each claim of M bytes, whatever subset
 * of the GPU's jobs is still running when enough memory for M would be free,
 * the later job's memory must fit as well.  That is, mem <= (budget - M) - S,
 * where S is the largest sum of running demands not above budget - M.  S is
 * found exactly for up to SCHED_MAX_SUBSET jobs on a GPU; beyond that, and
 * on serial GPUs or GPUs claimed by whole-GPU jobs, claimed GPUs take no
 * later job at all.  GPUs no blocked job could use are free for anyone.
 */
#include <stdio.h>
#include <string.h>

#include "parse.h"
#include "sched.h"

#define SCHED_USERS	512	/* users tracked for limits; beyond, a scan */

struct sched_user {
	uint32_t	uid;
	int		used;
	int		nrun;		/* running jobs, and those started this pass */
	int		ngpu;		/* GPUs they hold */
};

struct sched_state {
	struct sched_user users[SCHED_USERS];
	int		users_full;
	uint64_t	budget[SCHED_MAX_GPUS];
	uint64_t	demand[SCHED_MAX_GPUS];
	int		njobs[SCHED_MAX_GPUS];
	/* demands of the jobs holding each GPU, for the subset search */
	uint64_t	held[SCHED_MAX_GPUS][SCHED_MAX_SUBSET];
	/* claims left by blocked jobs: their demand and how much may go beside */
	uint64_t	claim[SCHED_MAX_GPUS][SCHED_MAX_CLAIMS];
	uint64_t	slack[SCHED_MAX_GPUS][SCHED_MAX_CLAIMS];
	int64_t		claimer[SCHED_MAX_GPUS];
	int		nclaims[SCHED_MAX_GPUS];
	int		closed[SCHED_MAX_GPUS];	/* claimed beyond what we can reason about */
};

uint64_t
sched_budget(const struct sched_gpu *g, const struct sched_settings *s)
{
	uint64_t reserve, used;

	reserve = s->reserve_pct ? g->total / 100 * s->reserve_pct : s->reserve_bytes;
	used = reserve + g->outside;
	return used >= g->total ? 0 : g->total - used;
}

int
sched_could_fit(const struct sched_gpu *gpus, int ngpus, const struct sched_settings *s,
    int want, uint64_t mem, char *why, int whylen)
{
	struct sched_gpu g;
	uint64_t best = 0, b;
	char a[16], c[16];
	int i, n = 0;

	if (want > ngpus) {
		snprintf(why, (size_t)whylen, "needs %d GPU%s, this server has %d",
		    want, want == 1 ? "" : "s", ngpus);
		return -1;
	}
	for (i = 0; i < ngpus; i++) {
		g = gpus[i];
		g.outside = 0;
		b = sched_budget(&g, s);
		if (b > best)
			best = b;
		if (b > 0 && b >= mem)
			n++;
	}
	if (n >= want)
		return 0;
	fmt_size(mem, a, sizeof(a));
	fmt_size(best, c, sizeof(c));
	snprintf(why, (size_t)whylen, "needs %s on %d GPU%s, the largest budget is %s", a,
	    want, want == 1 ? "" : "s", c);
	return -1;
}

/* What a job demands of a GPU: its mem, or all of the budget for a whole GPU. */
static uint64_t
sched_demand(const struct sched_state *st, int g, uint64_t mem)
{
	return mem == 0 ? st->budget[g] : mem;
}

static uint64_t
sched_free(const struct sched_state *st, int g)
{
	return st->demand[g] >= st->budget[g] ? 0 : st->budget[g] - st->demand[g];
}

/* Whether the job fits on GPU g now, claims aside. */
static int
sched_fits(const struct sched_state *st, const struct sched_gpu *gpu, int g, uint64_t mem)
{
	if (st->budget[g] == 0)
		return 0;
	if (mem == 0 || gpu->mode == SCHED_SERIAL)
		return st->njobs[g] == 0 && sched_demand(st, g, mem) <= sched_free(st, g);
	return mem <= sched_free(st, g);
}

/* The largest sum of the demands held on g that is at most cap. */
static uint64_t
sched_subset(const struct sched_state *st, int g, uint64_t cap)
{
	uint64_t best = 0, sum;
	unsigned m, n = (unsigned)st->njobs[g], i;

	for (m = 0; m < (1U << n); m++) {
		sum = 0;
		for (i = 0; i < n; i++)
			if (m & (1U << i))
				sum += st->held[g][i];
		if (sum <= cap && sum > best)
			best = sum;
	}
	return best;
}

static void
sched_slack(struct sched_state *st, int g, int c)
{
	uint64_t cap;

	if (st->claim[g][c] >= st->budget[g]) {
		st->slack[g][c] = 0;
		return;
	}
	cap = st->budget[g] - st->claim[g][c];
	st->slack[g][c] = cap - sched_subset(st, g, cap);
}

/* Whether a job of mem bytes may go on g without delaying g's claims. */
static int
sched_backfill_ok(const struct sched_state *st, int g, uint64_t mem)
{
	int c;

	if (st->nclaims[g] == 0)
		return 1;
	if (st->closed[g] || mem == 0)
		return 0;
	for (c = 0; c < st->nclaims[g]; c++)
		if (mem > st->slack[g][c])
			return 0;
	return 1;
}

static void
sched_hold(struct sched_state *st, const struct sched_gpu *gpus, int g, uint64_t mem)
{
	int c;

	st->demand[g] += sched_demand(st, g, mem);
	if (st->njobs[g] < SCHED_MAX_SUBSET)
		st->held[g][st->njobs[g]] = sched_demand(st, g, mem);
	st->njobs[g]++;
	if (st->njobs[g] > SCHED_MAX_SUBSET || gpus[g].mode == SCHED_SERIAL) {
		if (st->nclaims[g] > 0)
			st->closed[g] = 1;
		return;
	}
	for (c = 0; c < st->nclaims[g]; c++)
		sched_slack(st, g, c);
}

static void
sched_claim(struct sched_state *st, const struct sched_gpu *gpus, int g, uint64_t mem,
    int64_t id)
{
	int c;

	if (st->nclaims[g] == 0)
		st->claimer[g] = id;
	if (mem == 0 || gpus[g].mode == SCHED_SERIAL || st->nclaims[g] == SCHED_MAX_CLAIMS ||
	    st->njobs[g] > SCHED_MAX_SUBSET) {
		st->closed[g] = 1;
		st->nclaims[g] += st->nclaims[g] < SCHED_MAX_CLAIMS;
		return;
	}
	c = st->nclaims[g]++;
	st->claim[g][c] = mem;
	sched_slack(st, g, c);
}

static double
sched_eff(const struct sched_job *j, const struct sched_settings *s, double now)
{
	double waited = now > j->submitted_at ? now - j->submitted_at : 0;

	return j->priority + s->aging * waited / 3600.0;
}

/* Whether job a goes before job b. */
static int
sched_before(const struct sched_job *a, const struct sched_job *b,
    const struct sched_settings *s, double now)
{
	double ea = sched_eff(a, s, now), eb = sched_eff(b, s, now);

	if (ea != eb)
		return ea > eb;
	if (a->submitted_at != b->submitted_at)
		return a->submitted_at < b->submitted_at;
	return a->id < b->id;
}

/*
 * Heapsort of the pending jobs' indexes into the order they go in: the heap's
 * root is the job that goes last, so it is moved to the end each round.  No
 * allocation, unlike glibc's qsort.
 */
static void
sched_sift(int *o, int start, int end, const struct sched_job *jobs,
    const struct sched_settings *s, double now)
{
	int root = start, child, t;

	while ((child = 2 * root + 1) <= end) {
		if (child + 1 <= end && sched_before(&jobs[o[child]], &jobs[o[child + 1]], s, now))
			child++;
		if (!sched_before(&jobs[o[root]], &jobs[o[child]], s, now))
			return;
		t = o[root];
		o[root] = o[child];
		o[child] = t;
		root = child;
	}
}

static void
sched_sort(int *o, int n, const struct sched_job *jobs, const struct sched_settings *s,
    double now)
{
	int start, end, t;

	for (start = n / 2 - 1; start >= 0; start--)
		sched_sift(o, start, n - 1, jobs, s, now);
	for (end = n - 1; end > 0; end--) {
		t = o[0];
		o[0] = o[end];
		o[end] = t;
		sched_sift(o, 0, end - 1, jobs, s, now);
	}
}

/* The user's slot in the table, made if need be; NULL when the table is full. */
static struct sched_user *
sched_user_slot(struct sched_state *st, uint32_t uid)
{
	unsigned h = (uid * 2654435761U) % SCHED_USERS, k;

	for (k = 0; k < SCHED_USERS; k++, h = (h + 1) % SCHED_USERS) {
		if (!st->users[h].used) {
			st->users[h].used = 1;
			st->users[h].uid = uid;
			return &st->users[h];
		}
		if (st->users[h].uid == uid)
			return &st->users[h];
	}
	st->users_full = 1;
	return NULL;
}

/* Running jobs and GPUs held by a user, counting jobs started in this pass. */
static void
sched_user(struct sched_state *st, const struct sched_job *jobs, int njobs,
    const struct sched_plan *p, uint32_t uid, int *nrun, int *ngpu)
{
	struct sched_user *u;
	int i;

	if (!st->users_full && (u = sched_user_slot(st, uid)) != NULL) {
		*nrun = u->nrun;
		*ngpu = u->ngpu;
		return;
	}
	/* more users than the table holds: count them the slow way */
	*nrun = *ngpu = 0;
	for (i = 0; i < njobs; i++) {
		if (jobs[i].uid != uid)
			continue;
		if (jobs[i].running || p->dec[i].why == SCHED_START) {
			(*nrun)++;
			*ngpu += jobs[i].ngpus;
		}
	}
}

static void
sched_user_add(struct sched_state *st, const struct sched_job *j)
{
	struct sched_user *u;

	if (st->users_full || (u = sched_user_slot(st, j->uid)) == NULL)
		return;
	u->nrun++;
	u->ngpu += j->ngpus;
}

/* Picks the n GPUs with the least room that fit: packs, keeping big holes. */
static uint64_t
sched_pick(const struct sched_state *st, const uint64_t ok, int n, int ngpus)
{
	uint64_t mask = 0;
	int k, g, best;

	for (k = 0; k < n; k++) {
		best = -1;
		for (g = 0; g < ngpus; g++) {
			if (!(ok & (1ULL << g)) || (mask & (1ULL << g)))
				continue;
			if (best == -1 || sched_free(st, g) < sched_free(st, best))
				best = g;
		}
		mask |= 1ULL << best;
	}
	return mask;
}

static void
sched_place(struct sched_state *st, const struct sched_gpu *gpus, int ngpus,
    const struct sched_job *j, struct sched_decision *d)
{
	uint64_t ok = 0, fit = 0, largest = 0, f;
	int g, nok = 0, nfit = 0;

	for (g = 0; g < ngpus; g++) {
		f = sched_free(st, g);
		if ((j->mem == 0 || gpus[g].mode == SCHED_SERIAL) && st->njobs[g] > 0)
			f = 0;
		if (f > largest)
			largest = f;
		if (!sched_fits(st, &gpus[g], g, j->mem))
			continue;
		fit |= 1ULL << g;
		nfit++;
		if (sched_backfill_ok(st, g, j->mem)) {
			ok |= 1ULL << g;
			nok++;
		}
	}
	if (nok >= j->ngpus) {
		d->why = SCHED_START;
		d->gpumask = sched_pick(st, ok, j->ngpus, ngpus);
		for (g = 0; g < ngpus; g++)
			if (d->gpumask & (1ULL << g))
				sched_hold(st, gpus, g, j->mem);
		return;
	}
	if (nfit >= j->ngpus) {
		d->why = SCHED_WAIT_PRIORITY;
		for (g = 0; g < ngpus; g++)
			if ((fit & (1ULL << g)) && !sched_backfill_ok(st, g, j->mem)) {
				d->behind = st->claimer[g];
				break;
			}
	} else {
		d->why = SCHED_WAIT_MEM;
		d->largest_free = largest;
	}
	/* Blocked: claim every GPU that could ever hold it. */
	for (g = 0; g < ngpus; g++)
		if (st->budget[g] > 0 && sched_demand(st, g, j->mem) <= st->budget[g])
			sched_claim(st, gpus, g, j->mem, j->id);
}

/* A suspended job resumes on its own GPUs, or waits for them. */
static void
sched_place_own(struct sched_state *st, const struct sched_gpu *gpus, int ngpus,
    const struct sched_job *j, struct sched_decision *d)
{
	int g, fit = 1, ok = 1;

	for (g = 0; g < ngpus; g++) {
		if (!(j->gpumask & (1ULL << g)))
			continue;
		if (!sched_fits(st, &gpus[g], g, j->mem))
			fit = 0;
		else if (!sched_backfill_ok(st, g, j->mem)) {
			ok = 0;
			d->behind = st->claimer[g];
		}
	}
	if (fit && ok) {
		d->why = SCHED_RESUME;
		d->gpumask = j->gpumask;
		for (g = 0; g < ngpus; g++)
			if (j->gpumask & (1ULL << g))
				sched_hold(st, gpus, g, j->mem);
		return;
	}
	d->why = fit ? SCHED_WAIT_PRIORITY : SCHED_WAIT_MEM;
	for (g = 0; g < ngpus; g++)
		if ((j->gpumask & (1ULL << g)) && st->budget[g] > 0 &&
		    sched_demand(st, g, j->mem) <= st->budget[g])
			sched_claim(st, gpus, g, j->mem, j->id);
}

int
sched_plan(const struct sched_gpu *gpus, int ngpus, const struct sched_job *jobs, int njobs,
    const struct sched_settings *s, double now, struct sched_plan *p)
{
	static const struct sched_decision zero;
	struct sched_state st;
	const struct sched_job *j;
	struct sched_decision *d;
	int i, g, npending = 0, nrun, ngpu, blocked = 0;

	if (ngpus > SCHED_MAX_GPUS)
		ngpus = SCHED_MAX_GPUS;
	memset(&st, 0, sizeof(st));
	for (g = 0; g < ngpus; g++)
		st.budget[g] = sched_budget(&gpus[g], s);
	p->nstart = 0;
	p->next_wake = 0;

	for (i = 0; i < njobs; i++) {
		p->dec[i] = zero;
		j = &jobs[i];
		if (j->suspended && !j->running) {
			p->dec[i].gpumask = j->gpumask;
			if (j->may_resume)
				p->order[npending++] = i;
			else
				p->dec[i].why = SCHED_SUSPENDED;
			continue;
		}
		if (!j->running) {
			p->order[npending++] = i;
			continue;
		}
		p->dec[i].why = SCHED_RUNNING;
		p->dec[i].gpumask = j->gpumask;
		sched_user_add(&st, j);
		for (g = 0; g < ngpus; g++)
			if (j->gpumask & (1ULL << g))
				sched_hold(&st, gpus, g, j->mem);
	}
	sched_sort(p->order, npending, jobs, s, now);
	p->nwaiting = npending;

	for (i = 0; i < npending; i++) {
		j = &jobs[p->order[i]];
		d = &p->dec[p->order[i]];
		if (j->suspended) {
			/* admitted once: limits and --after do not hold it back */
			sched_place_own(&st, gpus, ngpus, j, d);
			if (d->why == SCHED_RESUME)
				p->nstart++;
			else
				blocked++;
			continue;
		}
		if (j->dep_wait) {
			d->why = SCHED_WAIT_DEP;
			continue;
		}
		if (s->max_running_jobs > 0 || s->max_gpus > 0) {
			sched_user(&st, jobs, njobs, p, j->uid, &nrun, &ngpu);
			if (s->max_running_jobs > 0 && nrun >= s->max_running_jobs) {
				d->why = SCHED_WAIT_USER_JOBS;
				continue;
			}
			if (s->max_gpus > 0 && ngpu + j->ngpus > s->max_gpus) {
				d->why = SCHED_WAIT_USER_GPUS;
				continue;
			}
		}
		if (j->ngpus > ngpus) {
			d->why = SCHED_WAIT_GPUS;
			continue;
		}
		if (j->ngpus == 0)
			d->why = SCHED_START;
		else
			sched_place(&st, gpus, ngpus, j, d);
		if (d->why == SCHED_START) {
			p->nstart++;
			sched_user_add(&st, j);
		} else
			blocked++;
	}
	/* Aging may reorder the blocked jobs' claims: look again in a minute. */
	if (blocked > 0 && s->aging > 0)
		p->next_wake = now + 60;
	return p->nstart;
}
