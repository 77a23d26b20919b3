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
 *
 * Aging as an order that holds: priority + aging * (now - submitted) / 3600
 * orders jobs as priority - aging * submitted / 3600 does, whatever now is,
 * so the caller may keep its waiting jobs sorted by that key between passes
 * (a clock set back would once have given jobs "submitted later" no aging;
 * now they simply go after).  Fair share adds a term per user
 * (sched_job.share), the same for all of a user's jobs: each user's jobs
 * keep their order, and only the merge across users reads it.
 *
 * Incremental passes (sched_walk): holds and claims only grow as a pass goes
 * down the order, so once no GPU has room a job could take (each is full,
 * serial and in use, closed by claims, or has less room than the least any
 * waiting job asks), no later job of a GPU starts or resumes, and none of
 * them changes what the pass decides for anyone else.
 * The walk stops there; jobs of no GPU are still walked, as they start
 * whatever the GPUs hold.  What the rest would have been told comes from
 * sched_explain, over the state the pass ended in.
 *
 * The host's CPUs and memory ([resources] cpus, memory) are one more pool,
 * asked of after the GPUs: a job that would start on its GPUs starts only
 * if its CPUs (-c; 0 counts as 1) and host memory (--mem; 0 asks none) fit
 * beside what the running jobs and those started before it hold.  Jobs
 * have no time limit to reason with, so there is no backfill on the host:
 * the first job whose CPUs or memory do not fit closes the host, and no
 * later job starts in the pass (a -c 8 job is not passed for ever by -c 1
 * ones).  Once the host is closed, or its CPUs all held, nothing more is
 * held or claimed, so that the walk stops there and sched_explain tells the
 * rest what the full pass would.  Preemption looks at GPU memory only.
 */
#include <stdio.h>
#include <string.h>

#include "parse.h"
#include "sched.h"

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


double
sched_key(const struct sched_job *j, const struct sched_settings *s)
{
	return (double)j->priority + j->qos_prio - s->aging * j->submitted_at / 3600.0;
}

int
sched_goes_before(double ka, double ta, int64_t ia, double kb, double tb, int64_t ib)
{
	if (ka != kb)
		return ka > kb;
	if (ta != tb)
		return ta < tb;
	return ia < ib;
}

int
sched_before(const struct sched_job *a, const struct sched_job *b,
    const struct sched_settings *s)
{
	/* a user's jobs share one fair-share term: it orders across users only */
	return sched_goes_before(sched_key(a, s) + a->share, a->submitted_at, a->id,
	    sched_key(b, s) + b->share, b->submitted_at, b->id);
}

/*
 * Heapsort of jobs' indexes into the order they go in: the heap's root is
 * the job that goes last, so it is moved to the end each round.  No
 * allocation, unlike glibc's qsort.
 */
static void
sched_sift(int *o, int start, int end, const struct sched_job *jobs,
    const struct sched_settings *s)
{
	int root = start, child, t;

	while ((child = 2 * root + 1) <= end) {
		if (child + 1 <= end && sched_before(&jobs[o[child]], &jobs[o[child + 1]], s))
			child++;
		if (!sched_before(&jobs[o[root]], &jobs[o[child]], s))
			return;
		t = o[root];
		o[root] = o[child];
		o[child] = t;
		root = child;
	}
}

static void
sched_sort(int *o, int n, const struct sched_job *jobs, const struct sched_settings *s)
{
	int start, end, t;

	for (start = n / 2 - 1; start >= 0; start--)
		sched_sift(o, start, n - 1, jobs, s);
	for (end = n - 1; end > 0; end--) {
		t = o[0];
		o[0] = o[end];
		o[end] = t;
		sched_sift(o, 0, end - 1, jobs, s);
	}
}

/* What a job demands of a GPU: its mem, or all of the budget for a whole GPU. */
static uint64_t
sched_demand(const struct sched_pass *p, int g, uint64_t mem)
{
	return mem == 0 ? p->budget[g] : mem;
}

static uint64_t
sched_free(const struct sched_pass *p, int g)
{
	return p->demand[g] >= p->budget[g] ? 0 : p->budget[g] - p->demand[g];
}

/* Whether the job fits on GPU g now, claims aside. */
static int
sched_fits(const struct sched_pass *p, int g, uint64_t mem)
{
	if (p->budget[g] == 0)
		return 0;
	if (mem == 0 || p->gpus[g].mode == SCHED_SERIAL)
		return p->njobs[g] == 0 && sched_demand(p, g, mem) <= sched_free(p, g);
	return mem <= sched_free(p, g);
}

/* The largest sum of the demands held on g that is at most cap. */
static uint64_t
sched_subset(const struct sched_pass *p, int g, uint64_t cap)
{
	uint64_t best = 0, sum;
	unsigned m, n = (unsigned)p->njobs[g], i;

	for (m = 0; m < (1U << n); m++) {
		sum = 0;
		for (i = 0; i < n; i++)
			if (m & (1U << i))
				sum += p->held[g][i];
		if (sum <= cap && sum > best)
			best = sum;
	}
	return best;
}

static void
sched_slack(struct sched_pass *p, int g, int c)
{
	uint64_t cap;

	if (p->claim[g][c] >= p->budget[g]) {
		p->slack[g][c] = 0;
		return;
	}
	cap = p->budget[g] - p->claim[g][c];
	p->slack[g][c] = cap - sched_subset(p, g, cap);
}

/* Whether a job of mem bytes may go on g without delaying g's claims. */
static int
sched_backfill_ok(const struct sched_pass *p, int g, uint64_t mem)
{
	int c;

	if (p->nclaims[g] == 0)
		return 1;
	if (p->closed[g] || mem == 0)
		return 0;
	for (c = 0; c < p->nclaims[g]; c++)
		if (mem > p->slack[g][c])
			return 0;
	return 1;
}

static void
sched_hold(struct sched_pass *p, int g, uint64_t mem)
{
	int c;

	p->demand[g] += sched_demand(p, g, mem);
	if (p->njobs[g] < SCHED_MAX_SUBSET)
		p->held[g][p->njobs[g]] = sched_demand(p, g, mem);
	p->njobs[g]++;
	if (p->njobs[g] > SCHED_MAX_SUBSET || p->gpus[g].mode == SCHED_SERIAL) {
		if (p->nclaims[g] > 0)
			p->closed[g] = 1;
		return;
	}
	for (c = 0; c < p->nclaims[g]; c++)
		sched_slack(p, g, c);
}

static void
sched_claim(struct sched_pass *p, int g, uint64_t mem, int64_t id)
{
	int c;

	if (p->nclaims[g] == 0)
		p->claimer[g] = id;
	if (mem == 0 || p->gpus[g].mode == SCHED_SERIAL || p->nclaims[g] == SCHED_MAX_CLAIMS ||
	    p->njobs[g] > SCHED_MAX_SUBSET) {
		p->closed[g] = 1;
		p->nclaims[g] += p->nclaims[g] < SCHED_MAX_CLAIMS;
		return;
	}
	c = p->nclaims[g]++;
	p->claim[g][c] = mem;
	sched_slack(p, g, c);
}

/*
 * The user's slot in the table, or NULL if it has none; with make, one is
 * made where there is room.  The table is open addressing, kept at most
 * three quarters full.
 */
static int
sched_user_slot(const struct sched_pass *p, uint32_t uid, int *empty)
{
	unsigned h = (uid * 2654435761U) % SCHED_USERS, k;

	for (k = 0; k < SCHED_USERS; k++, h = (h + 1) % SCHED_USERS) {
		if (!p->users[h].used) {
			*empty = 1;
			return (int)h;
		}
		if (p->users[h].uid == uid) {
			*empty = 0;
			return (int)h;
		}
	}
	return -1;
}

/*
 * Running jobs and GPUs held by a user, counting jobs started in this pass;
 * -1 if the table had no room for the user (more than SCHED_USERS * 3 / 4
 * users running at once): then the job waits, as if at its limit.
 */
static int
sched_user(const struct sched_pass *p, uint32_t uid, int *nrun, int *ngpu)
{
	int h, empty;

	*nrun = *ngpu = 0;
	if ((h = sched_user_slot(p, uid, &empty)) == -1)
		return -1;
	if (empty)
		return p->nusers >= SCHED_USERS * 3 / 4 ? -1 : 0;
	*nrun = p->users[h].nrun;
	*ngpu = p->users[h].ngpu;
	return 0;
}

static void
sched_user_add(struct sched_pass *p, const struct sched_job *j)
{
	int h, empty;

	if (!p->limits || (h = sched_user_slot(p, j->uid, &empty)) == -1)
		return;
	if (empty) {
		if (p->nusers >= SCHED_USERS * 3 / 4)
			return;
		p->nusers++;
		p->users[h].used = 1;
		p->users[h].uid = j->uid;
	}
	p->users[h].nrun++;
	p->users[h].ngpu += j->ngpus;
}

/*
 * The slot of uid's jobs of class qos in qusers (open addressing, as
 * users), or -1 if the table is full enough: then the job waits, as if at
 * its class's limit.  *empty says whether it is unused.
 */
static int
sched_qos_slot(const struct sched_pass *p, uint32_t uid, int qos, int *empty)
{
	unsigned h = ((uid ^ ((unsigned)qos << 24)) * 2654435761U) % SCHED_USERS, k;

	for (k = 0; k < SCHED_USERS; k++, h = (h + 1) % SCHED_USERS) {
		if (!p->qusers[h].used) {
			*empty = 1;
			return p->nqusers >= SCHED_USERS * 3 / 4 ? -1 : (int)h;
		}
		if (p->qusers[h].uid == uid && p->qusers[h].qos == qos) {
			*empty = 0;
			return (int)h;
		}
	}
	return -1;
}

/* Counts j, running or started now, against its class's limits. */
static void
sched_qos_add(struct sched_pass *p, const struct sched_job *j)
{
	int h, empty;

	if (!p->qlimits || j->qos < 0 || j->qos >= SCHED_MAX_QOS ||
	    (h = sched_qos_slot(p, j->uid, j->qos, &empty)) == -1)
		return;
	if (empty) {
		p->nqusers++;
		p->qusers[h].uid = j->uid;
		p->qusers[h].qos = j->qos;
		p->qusers[h].used = 1;
	}
	p->qusers[h].nrun++;
	p->qusers[h].ngpu += j->ngpus;
}

/* Why j waits for its class's limits (enum sched_why), or 0 if it need not. */
static int
sched_qos_wait(const struct sched_pass *p, const struct sched_job *j)
{
	int h, empty, mj, mg;

	if (!p->qlimits || j->qos < 0 || j->qos >= SCHED_MAX_QOS)
		return 0;
	mj = p->s.qos_max_jobs[j->qos];
	mg = p->s.qos_max_gpus[j->qos];
	if (mj == 0 && mg == 0)
		return 0;
	if ((h = sched_qos_slot(p, j->uid, j->qos, &empty)) == -1)
		return SCHED_WAIT_QOS_JOBS;
	if (empty)
		return mg > 0 && j->ngpus > mg ? SCHED_WAIT_QOS_GPUS : 0;
	if (mj > 0 && p->qusers[h].nrun >= mj)
		return SCHED_WAIT_QOS_JOBS;
	if (mg > 0 && p->qusers[h].ngpu + j->ngpus > mg)
		return SCHED_WAIT_QOS_GPUS;
	return 0;
}

/* Whether g goes before best: spread, the least demanded (then fewest jobs). */
static int
sched_spreads(const struct sched_pass *p, int g, int best)
{
	if (p->demand[g] != p->demand[best])
		return p->demand[g] < p->demand[best];
	return p->njobs[g] < p->njobs[best];
}

/*
 * Picks the n GPUs that fit: with pack (the default), those with the least
 * room, keeping big holes; with spread, the least loaded.
 */
static uint64_t
sched_pick(const struct sched_pass *p, const uint64_t ok, int n)
{
	uint64_t mask = 0;
	int k, g, best;

	for (k = 0; k < n; k++) {
		best = -1;
		for (g = 0; g < p->ngpus; g++) {
			if (!(ok & (1ULL << g)) || (mask & (1ULL << g)))
				continue;
			if (best == -1 || (p->s.spread ? sched_spreads(p, g, best) :
			    sched_free(p, g) < sched_free(p, best)))
				best = g;
		}
		mask |= 1ULL << best;
	}
	return mask;
}

/* Whether a pending job may start on g: allowed by its -w and -x, not drained. */
static int
sched_may_use(const struct sched_pass *p, const struct sched_job *j, int g)
{
	return !p->gpus[g].drained && (!j->restrict_gpus || (j->allowed & (1ULL << g)));
}

/* Places a pending job of one GPU or more; with apply, holds or claims. */
static void
sched_place(struct sched_pass *p, const struct sched_job *j, struct sched_decision *d,
    int apply)
{
	uint64_t ok = 0, fit = 0, largest = 0, f;
	int g, nok = 0, nfit = 0, nmay = 0;

	for (g = 0; g < p->ngpus; g++) {
		if (!sched_may_use(p, j, g))
			continue;
		nmay++;
		f = sched_free(p, g);
		if ((j->mem == 0 || p->gpus[g].mode == SCHED_SERIAL) && p->njobs[g] > 0)
			f = 0;
		if (f > largest)
			largest = f;
		if (!sched_fits(p, g, j->mem))
			continue;
		fit |= 1ULL << g;
		nfit++;
		if (sched_backfill_ok(p, g, j->mem)) {
			ok |= 1ULL << g;
			nok++;
		}
	}
	if (nmay < j->ngpus) {
		d->why = SCHED_WAIT_PLACE;	/* claims nothing: it may not go anywhere */
		return;
	}
	if (nok >= j->ngpus) {
		d->why = SCHED_START;
		d->gpumask = sched_pick(p, ok, j->ngpus);
		for (g = 0; g < p->ngpus && apply; g++)
			if (d->gpumask & (1ULL << g))
				sched_hold(p, g, j->mem);
		return;
	}
	if (nfit >= j->ngpus) {
		d->why = SCHED_WAIT_PRIORITY;
		for (g = 0; g < p->ngpus; g++)
			if ((fit & (1ULL << g)) && !sched_backfill_ok(p, g, j->mem)) {
				d->behind = p->claimer[g];
				break;
			}
	} else {
		d->why = SCHED_WAIT_MEM;
		d->largest_free = largest;
	}
	/* Blocked: claim every GPU that could ever hold it. */
	for (g = 0; g < p->ngpus && apply; g++)
		if (sched_may_use(p, j, g) && p->budget[g] > 0 &&
		    sched_demand(p, g, j->mem) <= p->budget[g])
			sched_claim(p, g, j->mem, j->id);
}

/* A suspended job resumes on its own GPUs, or waits for them. */
static void
sched_place_own(struct sched_pass *p, const struct sched_job *j, struct sched_decision *d,
    int apply)
{
	int g, fit = 1, ok = 1;

	for (g = 0; g < p->ngpus; g++) {
		if (!(j->gpumask & (1ULL << g)))
			continue;
		if (!sched_fits(p, g, j->mem))
			fit = 0;
		else if (!sched_backfill_ok(p, g, j->mem)) {
			ok = 0;
			d->behind = p->claimer[g];
		}
	}
	if (fit && ok) {
		d->why = SCHED_RESUME;
		d->gpumask = j->gpumask;
		for (g = 0; g < p->ngpus && apply; g++)
			if (j->gpumask & (1ULL << g))
				sched_hold(p, g, j->mem);
		return;
	}
	d->why = fit ? SCHED_WAIT_PRIORITY : SCHED_WAIT_MEM;
	for (g = 0; g < p->ngpus && apply; g++)
		if ((j->gpumask & (1ULL << g)) && p->budget[g] > 0 &&
		    sched_demand(p, g, j->mem) <= p->budget[g])
			sched_claim(p, g, j->mem, j->id);
}

/* A job's CPUs: -c, at least 1. */
static int64_t
sched_ncpus(const struct sched_job *j)
{
	return j->cpus > 0 ? j->cpus : 1;
}

/* Whether no more job may start in this pass for the host's sake (see the top). */
static int
sched_host_closed(const struct sched_pass *p)
{
	return p->hblock || (p->s.cpus > 0 && p->cpu_used >= p->s.cpus);
}

/* Whether j's CPUs and host memory fit now; else d says why it waits. */
static int
sched_host_fits(const struct sched_pass *p, const struct sched_job *j, struct sched_decision *d)
{
	if (p->s.cpus > 0 && p->cpu_used + sched_ncpus(j) > p->s.cpus) {
		d->why = SCHED_WAIT_CPUS;
		d->host_used = (uint64_t)p->cpu_used;
		return 0;
	}
	if (p->s.host_mem > 0 && j->host_mem > 0 && (j->host_mem > p->s.host_mem ||
	    p->hmem_used > p->s.host_mem - j->host_mem)) {
		d->why = SCHED_WAIT_HOST_MEM;
		d->host_used = p->hmem_used;
		return 0;
	}
	if (p->hblock) {
		d->why = SCHED_WAIT_PRIORITY;
		d->behind = p->hblocker;
		return 0;
	}
	return 1;
}

static void
sched_host_hold(struct sched_pass *p, const struct sched_job *j)
{
	p->cpu_used += sched_ncpus(j);
	p->hmem_used += j->host_mem;
}

/*
 * Places a waiting job on its GPUs (or its own, suspended), then on the
 * host; with apply, what it holds or claims is counted, unless the host is
 * closed.  One that would start but for the host claims no GPU: it closes
 * the host, and nothing after it starts anyway.
 */
static void
sched_place_all(struct sched_pass *p, const struct sched_job *j, struct sched_decision *d,
    int apply)
{
	int own = j->suspended, go = own ? SCHED_RESUME : SCHED_START;

	if (sched_host_closed(p))
		apply = 0;
	if (j->ngpus == 0 && !own)
		d->why = SCHED_START;
	else if (own)
		sched_place_own(p, j, d, 0);
	else
		sched_place(p, j, d, 0);
	if (d->why == go && !sched_host_fits(p, j, d)) {
		d->gpumask = own ? j->gpumask : 0;
		if (apply && !p->hblock) {
			p->hblock = 1;
			p->hblocker = j->id;
		}
		return;
	}
	if (!apply)
		return;
	/* the same decision again, now counted */
	if (own)
		sched_place_own(p, j, d, 1);
	else if (j->ngpus > 0)
		sched_place(p, j, d, 1);
	if (d->why == go)
		sched_host_hold(p, j);
}

/*
 * The decision for one waiting job (pending, or suspended), in its turn;
 * with apply, what it holds or claims is counted for the jobs after it.
 * Without, p is only read.  Returns 1 if it starts or resumes.
 */
static int
sched_decide(struct sched_pass *p, const struct sched_job *j, struct sched_decision *d,
    int apply)
{
	static const struct sched_decision zero;
	int nrun, ngpu;

	*d = zero;
	if (j->suspended) {
		d->gpumask = j->gpumask;
		if (!j->may_resume) {
			d->why = SCHED_SUSPENDED;
			return 0;
		}
		/* admitted once: limits and --after do not hold it back */
		sched_place_all(p, j, d, apply);
		return d->why == SCHED_RESUME;
	}
	if (j->dep_wait) {
		d->why = SCHED_WAIT_DEP;
		return 0;
	}
	if (p->limits) {
		if (sched_user(p, j->uid, &nrun, &ngpu) == -1 ||
		    (p->s.max_running_jobs > 0 && nrun >= p->s.max_running_jobs)) {
			d->why = SCHED_WAIT_USER_JOBS;
			return 0;
		}
		if (p->s.max_gpus > 0 && ngpu + j->ngpus > p->s.max_gpus) {
			d->why = SCHED_WAIT_USER_GPUS;
			return 0;
		}
	}
	if ((d->why = sched_qos_wait(p, j)) != 0)
		return 0;
	if (j->ngpus > p->ngpus) {
		d->why = SCHED_WAIT_GPUS;
		return 0;
	}
	sched_place_all(p, j, d, apply);
	if (d->why != SCHED_START)
		return 0;
	if (apply) {
		sched_user_add(p, j);
		sched_qos_add(p, j);
	}
	return 1;
}

static void
sched_begin(struct sched_pass *p, const struct sched_gpu *gpus, int ngpus,
    const struct sched_settings *s, double now)
{
	int g;

	if (ngpus > SCHED_MAX_GPUS)
		ngpus = SCHED_MAX_GPUS;
	memset(p, 0, sizeof(*p));
	memcpy(p->gpus, gpus, sizeof(*gpus) * (size_t)ngpus);
	p->ngpus = ngpus;
	p->s = *s;
	p->now = now;
	p->limits = s->max_running_jobs > 0 || s->max_gpus > 0;
	for (g = 0; g < SCHED_MAX_QOS; g++)
		if (s->qos_max_jobs[g] > 0 || s->qos_max_gpus[g] > 0)
			p->qlimits = 1;
	for (g = 0; g < ngpus; g++)
		p->budget[g] = sched_budget(&gpus[g], s);
}

/* A running job (or one being resumed): it holds its GPUs. */
static void
sched_running(struct sched_pass *p, const struct sched_job *j, struct sched_decision *d)
{
	static const struct sched_decision zero;
	int g;

	*d = zero;
	d->why = SCHED_RUNNING;
	d->gpumask = j->gpumask;
	sched_user_add(p, j);
	sched_host_hold(p, j);
	sched_qos_add(p, j);
	for (g = 0; g < p->ngpus; g++)
		if (j->gpumask & (1ULL << g))
			sched_hold(p, g, j->mem);
}

/*
 * Whether no waiting job of a GPU can start or resume anywhere: each GPU is
 * full, closed by claims, serial and in use, or has less room than any of
 * them asks (p->min_mem, p->whole).
 */
static int
sched_saturated(const struct sched_pass *p)
{
	uint64_t f;
	int g;

	for (g = 0; g < p->ngpus; g++) {
		/* a drained GPU counts: a suspended job may still resume there */
		if (p->budget[g] == 0 || (f = sched_free(p, g)) == 0)
			continue;
		if (p->closed[g] && p->nclaims[g] > 0)
			continue;
		if (p->gpus[g].mode == SCHED_SERIAL && p->njobs[g] > 0)
			continue;
		if (p->min_mem <= f || (p->whole && p->njobs[g] == 0))
			return 0;
	}
	return 1;
}

int
sched_plan(const struct sched_gpu *gpus, int ngpus, const struct sched_job *jobs, int njobs,
    const struct sched_settings *s, double now, struct sched_plan *plan)
{
	static struct sched_pass pass;	/* too large for a thread's stack */
	struct sched_pass *p = &pass;
	const struct sched_job *j;
	int i, n = 0;

	sched_begin(p, gpus, ngpus, s, now);
	plan->nstart = 0;
	plan->next_wake = 0;
	for (i = 0; i < njobs; i++) {
		j = &jobs[i];
		if (j->running)
			sched_running(p, j, &plan->dec[i]);
		else if (j->suspended && !j->may_resume)
			sched_decide(p, j, &plan->dec[i], 1);	/* SCHED_SUSPENDED */
		else
			plan->order[n++] = i;
	}
	sched_sort(plan->order, n, jobs, s);
	plan->nwaiting = n;
	for (i = 0; i < n; i++)
		plan->nstart += sched_decide(p, &jobs[plan->order[i]],
		    &plan->dec[plan->order[i]], 1);
	return plan->nstart;
}

uint64_t
sched_could(const struct sched_gpu *gpus, int ngpus, const struct sched_settings *s,
    const struct sched_job *j)
{
	uint64_t could = 0, b;
	int g;

	for (g = 0; g < ngpus && g < SCHED_MAX_GPUS; g++) {
		b = sched_budget(&gpus[g], s);
		if (b > 0 && (j->mem == 0 ? 1 : j->mem <= b) &&
		    (j->suspended ? (j->gpumask & (1ULL << g)) != 0 : !gpus[g].drained &&
		    (!j->restrict_gpus || (j->allowed & (1ULL << g)))))
			could |= 1ULL << g;
	}
	return could;
}

/* The source's next job of kind into *la, unless one is there already; 0 at its end. */
static int
sched_peek(const struct sched_source *src, int kind, struct sched_job *la, int *have,
    int *more)
{
	if (!*have && *more)
		*more = *have = src->next(src->arg, kind, la);
	return *have;
}

void
sched_explain(const struct sched_pass *p, const struct sched_job *j, struct sched_decision *d)
{
	/* without apply, sched_decide only reads the pass */
	sched_decide((struct sched_pass *)(uintptr_t)p, j, d, 0);
}

/*
 * Tells the source when a user can start nothing more in this pass (counts
 * only grow down the order): at max_running_jobs, no job at all; at
 * max_gpus, no job of a GPU.
 */
static void
sched_drop(const struct sched_pass *p, const struct sched_source *src, uint32_t uid)
{
	int nrun, ngpu;

	if (!p->limits || src->drop == NULL || sched_user(p, uid, &nrun, &ngpu) == -1)
		return;
	if (p->s.max_running_jobs > 0 && nrun >= p->s.max_running_jobs)
		src->drop(src->arg, uid, SCHED_SRC_ANY);
	else if (p->s.max_gpus > 0 && ngpu >= p->s.max_gpus)
		src->drop(src->arg, uid, SCHED_SRC_GPU);
}

int
sched_walk(struct sched_pass *p, const struct sched_gpu *gpus, int ngpus,
    const struct sched_settings *s, double now, struct sched_job *jobs, int nheld, int cap,
    const struct sched_source *src, struct sched_plan *plan)
{
	static const struct sched_decision zero;
	struct sched_job lg, lc;
	uint64_t all = 0, taken = 0;
	int i, g, n = nheld, nw = 0, susp, top = cap, idx, preempting = 0, saturated = 0;
	int have_g = 0, more_g = 1, have_c = 0, more_c = 1, pick;

	sched_begin(p, gpus, ngpus, s, now);
	plan->nstart = 0;
	plan->next_wake = 0;
	/* running jobs hold; suspended ones that may resume go at the top of order */
	for (i = 0; i < nheld; i++) {
		if (jobs[i].running) {
			sched_running(p, &jobs[i], &plan->dec[i]);
			continue;
		}
		plan->dec[i] = zero;
		plan->dec[i].gpumask = jobs[i].gpumask;
		if (jobs[i].suspended && jobs[i].may_resume)
			plan->order[--top] = i;
		else
			plan->dec[i].why = SCHED_SUSPENDED;
	}
	sched_sort(&plan->order[top], cap - top, jobs, s);
	susp = top;
	/* the least the waiting jobs ask: the source's, and the suspended ones' */
	p->min_mem = src->min_mem;
	p->whole = src->whole || src->min_mem == 0;
	for (i = top; i < cap; i++) {
		idx = plan->order[i];
		if (jobs[idx].mem == 0)
			p->whole = 1;
		else if (jobs[idx].mem < p->min_mem)
			p->min_mem = jobs[idx].mem;
	}
	for (i = 0; i < SCHED_USERS && p->limits; i++)
		if (p->users[i].used)
			sched_drop(p, src, p->users[i].uid);
	for (g = 0; g < p->ngpus; g++) {
		if (gpus[g].mode == SCHED_TIMESLICE)
			preempting = 1;
		if (p->budget[g] > 0)
			all |= 1ULL << g;
	}
	if (s->preempt == SCHED_PREEMPT_OFF && !preempting)
		all = 0;
	/*
	 * In order, from the source's two streams and the suspended jobs, until
	 * no job of a GPU can start.  Then jobs of no GPU, which start whatever
	 * the GPUs hold; and, where jobs may give way, the waiting jobs
	 * preempt_choose looks at in order until every GPU is taken by one that
	 * could use it, each in its turn so that the users' counts are those it
	 * would have met.
	 */
	for (;;) {
		struct sched_job *best = NULL;

		if (!saturated && (sched_saturated(p) || sched_host_closed(p))) {
			saturated = 1;
			/* nothing gives way on a GPU that holds no job: no need to take it */
			for (g = 0; g < p->ngpus; g++)
				if (p->njobs[g] == 0)
					all &= ~(1ULL << g);
			for (i = 0; i < nw; i++) {
				idx = plan->order[i];
				if (plan->dec[idx].why == SCHED_WAIT_MEM && jobs[idx].ngpus > 0)
					taken |= sched_could(gpus, p->ngpus, s, &jobs[idx]);
			}
		}
		/* 0: the source's job of a GPU, 1: its job of no GPU, 2: a suspended one */
		pick = -1;
		if (!saturated || (taken & all) != all) {
			if (sched_peek(src, SCHED_SRC_GPU, &lg, &have_g, &more_g)) {
				pick = 0;
				best = &lg;
			}
			if (susp < cap && (best == NULL || sched_before(&jobs[plan->order[susp]],
			    best, s))) {
				pick = 2;
				best = &jobs[plan->order[susp]];
			}
		}
		/* the host closed: no job of no GPU starts, none is looked at */
		if (!sched_host_closed(p) && sched_peek(src, SCHED_SRC_CPU, &lc, &have_c, &more_c) &&
		    (best == NULL || sched_before(&lc, best, s)))
			pick = 1;
		if (pick == -1 || (pick != 2 && n == cap))
			break;
		if (pick == 2)
			idx = plan->order[susp++];
		else {
			idx = n++;
			jobs[idx] = pick == 0 ? lg : lc;
			*(pick == 0 ? &have_g : &have_c) = 0;
		}
		plan->order[nw++] = idx;
		if (!saturated || pick == 1) {
			if (sched_decide(p, &jobs[idx], &plan->dec[idx], 1) == 1) {
				plan->nstart++;
				sched_drop(p, src, jobs[idx].uid);
			}
			continue;
		}
		sched_explain(p, &jobs[idx], &plan->dec[idx]);
		if (plan->dec[idx].why == SCHED_WAIT_MEM && jobs[idx].ngpus > 0)
			taken |= sched_could(gpus, p->ngpus, s, &jobs[idx]);
	}
	/* suspended jobs not reached: what they wait for */
	while (susp < cap) {
		idx = plan->order[susp++];
		plan->order[nw++] = idx;
		sched_explain(p, &jobs[idx], &plan->dec[idx]);
	}
	plan->nwaiting = nw;
	return n;
}
