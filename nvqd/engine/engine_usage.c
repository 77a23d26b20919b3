/*
 * engine_usage.c: GPU usage accounting, all through a job's running life:
 * room to follow its use of each GPU (engine_track, made at its start,
 * given back at its drop), NVML's figures read again and summed over each
 * running job's processes (engine_refresh, by member.h's rule), the hook's
 * beside them, and what is asked of and held on each GPU (budget,
 * demanded, a start's grant and share); the users' recent use for fair
 * share (engine_shares before each pass).  It calls only engine_base.c.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "engine_rooms.h"
#include "log.h"
#include "member.h"

/* Forgets a job's use of the GPUs (engine_track made room for it). */
void
engine_untrack(struct job *j)
{
	free(j->gpu_used);
	free(j->gpu_peak);
	free(j->gpu_acc);
	free(j->hook_used);
	free(j->hook_peak);
	free(j->energy);
	j->gpu_used = j->gpu_peak = j->gpu_acc = j->hook_used = j->hook_peak = NULL;
	j->energy = NULL;
}

/* What the job held of GPU g at most: NVML's figure or the hook's. */
uint64_t
engine_gpu_peak(const struct job *j, int g)
{
	uint64_t a = j->gpu_peak != NULL ? j->gpu_peak[g] : 0;
	uint64_t b = j->hook_peak != NULL ? j->hook_peak[g] : 0;

	return a > b ? a : b;
}

static uint64_t
engine_gpu_used(const struct job *j, int g)
{
	uint64_t a = j->gpu_used != NULL ? j->gpu_used[g] : 0;
	uint64_t b = j->hook_used != NULL ? j->hook_used[g] : 0;

	return a > b ? a : b;
}

uint64_t
engine_job_peak(const struct engine *e, const struct job *j)
{
	uint64_t m = 0;
	int g;

	for (g = 0; g < e->gpus.n; g++)
		if (engine_gpu_peak(j, g) > m)
			m = engine_gpu_peak(j, g);
	return m;
}

uint64_t
engine_job_used(const struct engine *e, const struct job *j)
{
	uint64_t sum = 0;
	int g;

	for (g = 0; g < e->gpus.n; g++)
		sum += engine_gpu_used(j, g);
	return sum;
}

void
engine_host_used(const struct engine *e, long long *cpus, uint64_t *mem)
{
	const struct job *j;

	*cpus = 0;
	*mem = 0;
	for (j = e->held; j != NULL; j = j->lnext)
		if (engine_holds(j)) {
			*cpus += j->cpus > 0 ? j->cpus : 1;
			*mem += j->host_mem;
		}
}

uint64_t
engine_queue_used(struct engine *e, int i)
{
	struct job *j;
	uint64_t sum = 0;

	for (j = e->held; j != NULL; j = j->lnext)
		sum += engine_gpu_used(j, i);
	return sum;
}

/* Room to follow a running job's use of each GPU. */
void
engine_track(struct engine *e, struct job *j)
{
	if (e->gpus.n == 0 || j->gpu_used != NULL)
		return;
	j->gpu_used = calloc((size_t)e->gpus.n, sizeof(uint64_t));
	j->gpu_peak = calloc((size_t)e->gpus.n, sizeof(uint64_t));
	j->gpu_acc = calloc((size_t)e->gpus.n, sizeof(uint64_t));
	j->hook_used = calloc((size_t)e->gpus.n, sizeof(uint64_t));
	j->hook_peak = calloc((size_t)e->gpus.n, sizeof(uint64_t));
	j->energy = calloc((size_t)e->gpus.n, sizeof(*j->energy));
	if (j->gpu_used == NULL || j->gpu_peak == NULL || j->gpu_acc == NULL ||
	    j->hook_used == NULL || j->hook_peak == NULL || j->energy == NULL)
		engine_untrack(j);
}

uint64_t
engine_budget(struct engine *e, int i)
{
	struct sched_gpu g;

	g.total = e->gpus.gpus[i].total;
	g.outside = e->gpus.gpus[i].outside;
	g.mode = config_mode(&e->cfg, i);
	return sched_budget(&g, &e->cfg.sched);
}

int
engine_holds(const struct job *j)
{
	return j->state == JOB_RUNNING || (j->state == JOB_SUSPENDED && j->gc.phase == GC_RESTORE);
}

uint64_t
engine_demanded(struct engine *e, int i, char *ids, size_t len)
{
	struct job *j;
	uint64_t sum = 0;
	size_t off = 0;

	if (len > 0)
		ids[0] = '\0';
	for (j = e->held; j != NULL; j = j->lnext) {
		if (!engine_holds(j) || !(j->gpumask & (1ULL << i)))
			continue;
		sum += j->granted;
		if (off < len)
			off += (size_t)snprintf(ids + off, len - off, "%s%lld", off ? "," : "",
			    (long long)j->id);
	}
	return sum;
}

/* The UUIDs of the GPUs in mask, and the memory each may give a job. */
uint64_t
engine_gpus_of(struct engine *e, const struct job *j, uint64_t mask, char *uuids, size_t len)
{
	uint64_t granted = 0, b;
	int g;

	gpu_uuids(&e->gpus, mask, uuids, len);
	for (g = 0; g < e->gpus.n; g++) {
		if (!(mask & (1ULL << g)))
			continue;
		b = j->mem ? j->mem : engine_budget(e, g);
		if (granted == 0 || b < granted)
			granted = b;
	}
	return granted;
}

/* The GPUs' worth j holds on mask (runs.gpu_share): memory over each GPU's. */
double
engine_gpu_share(const struct engine *e, const struct job *j, uint64_t mask)
{
	double share = 0;
	int g;

	for (g = 0; g < e->gpus.n; g++) {
		if (!(mask & (1ULL << g)))
			continue;
		if (j->mem == 0 || e->gpus.gpus[g].total == 0 || j->mem >= e->gpus.gpus[g].total)
			share += 1;
		else
			share += (double)j->mem / (double)e->gpus.gpus[g].total;
	}
	return share;
}

static double
engine_bonus_cb(void *arg, uint32_t uid)
{
	return fairshare_bonus(arg, uid);
}

/*
 * Fair share, before a pass: every user's use brought forward to now, at
 * the rates of the jobs running since the last pass; the active users (jobs
 * running, suspended or ready to start) ranked.  Counted also with
 * fairshare = off, so that turning it on finds the usage there.
 */
void
engine_shares(struct engine *e, double now)
{
	struct job *j;
	int i, bad = 0;

	fairshare_advance(&e->fs, now, (double)e->cfg.fs_halflife);
	fairshare_begin(&e->fs);
	for (j = e->held; j != NULL; j = j->lnext)
		bad |= fairshare_use(&e->fs, j->uid, j->state == JOB_RUNNING ?
		    engine_gpu_share(e, j, j->gpumask) : 0);
	for (i = 0; i < e->wq.nu; i++)
		bad |= fairshare_use(&e->fs, e->wq.u[i].uid, 0);
	if (bad)
		log_warnx("out of memory counting users' GPU use for fair share");
	fairshare_rank(&e->fs, e->cfg.fs_weight);
	waitq_bonus(&e->wq, e->cfg.fairshare ? engine_bonus_cb : NULL, &e->fs);
}

const struct fairshare *
engine_usage(struct engine *e)
{
	fairshare_advance(&e->fs, engine_now(), (double)e->cfg.fs_halflife);
	fairshare_rank(&e->fs, e->cfg.fs_weight);
	return &e->fs;
}

static int
engine_owner_cmp(const void *a, const void *b)
{
	const struct job *x = *(struct job *const *)a, *y = *(struct job *const *)b;

	return x->pid < y->pid ? -1 : x->pid > y->pid;
}

/* The running jobs' supervisors, sorted by pid, to find whose a process is. */
void
engine_owners_make(struct engine *e, struct engine_owners *o)
{
	struct job *j;
	int k, n = 0;

	o->e = e;
	o->n = 0;
	/* as many as run, not as many as the queue holds */
	for (j = e->held; j != NULL; j = j->lnext)
		n += j->state != JOB_PENDING && j->pid > 0;
	o->jobs = calloc((size_t)n + 1, sizeof(*o->jobs));
	o->pids = calloc((size_t)n + 1, sizeof(*o->pids));
	for (j = e->held; j != NULL && o->jobs != NULL && o->pids != NULL && o->n < n;
	    j = j->lnext)
		if (j->state != JOB_PENDING && j->pid > 0)
			o->jobs[o->n++] = j;
	if (o->n > 0)
		qsort(o->jobs, (size_t)o->n, sizeof(*o->jobs), engine_owner_cmp);
	for (k = 0; k < o->n; k++)
		o->pids[k] = o->jobs[k]->pid;
}

void
engine_owners_free(struct engine_owners *o)
{
	free(o->jobs);
	free(o->pids);
	o->jobs = NULL;
	o->pids = NULL;
	o->n = 0;
}

/*
 * The running job pid belongs to, by member.h's rule (its supervisor among
 * its ancestors, or its session): a job's processes are never outside use,
 * whatever session they made for themselves.  NULL: no job's.
 */
struct job *
engine_owner_job(const struct engine_owners *o, pid_t pid)
{
	pid_t root = member_root(pid, o->pids, o->n);
	int lo = 0, hi = o->n - 1, mid;

	if (root <= 0)
		return NULL;
	while (lo <= hi) {
		mid = (lo + hi) / 2;
		if (o->pids[mid] == root)
			return o->jobs[mid];
		if (o->pids[mid] < root)
			lo = mid + 1;
		else
			hi = mid - 1;
	}
	return NULL;
}

static int
engine_owner_cb(pid_t pid, int gpu, uint64_t bytes, void *arg)
{
	struct engine_owners *o = arg;
	struct job *j = engine_owner_job(o, pid);

	if (j == NULL)
		return 0;
	/* a job is all of its processes: add them up */
	if (j->gpu_acc != NULL && gpu >= 0 && gpu < o->e->gpus.n)
		j->gpu_acc[gpu] += bytes;
	return 1;
}

/* Reads NVML again, and each running job's use from its processes'. */
int
engine_refresh(struct engine *e)
{
	struct engine_owners o = { e, NULL, NULL, 0 };
	struct job *j;
	int g, changed;

	for (j = e->held; j != NULL; j = j->lnext)
		if (j->gpu_acc != NULL)
			memset(j->gpu_acc, 0, (size_t)e->gpus.n * sizeof(uint64_t));
	if (!e->gpus.is_virtual && e->gpus.lib != NULL)
		engine_owners_make(e, &o);
	changed = gpu_refresh(&e->gpus, engine_owner_cb, &o);
	engine_owners_free(&o);
	if (e->gpus.is_virtual || e->gpus.lib == NULL)
		return changed;
	for (j = e->held; j != NULL; j = j->lnext) {
		if (j->gpu_acc == NULL)
			continue;
		for (g = 0; g < e->gpus.n; g++) {
			j->gpu_used[g] = j->gpu_acc[g];
			if (j->gpu_used[g] > j->gpu_peak[g])
				j->gpu_peak[g] = j->gpu_used[g];
		}
	}
	return changed;
}
