/*
 * engine.c: jobs from admission to their final state (see engine.h).
 *
 * Order of work for every transition: commit it to the store, then act on
 * it (fork, signal), so that a crash in between leaves something that
 * start-up reconciliation can repair.  Job structs own two optional libuv
 * handles; a finished job is unlinked at once and freed in the last close
 * callback.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "cgroup.h"
#include "engine.h"
#include "gpuctl.h"
#include "hooks.h"
#include "jobtab.h"
#include "log.h"
#include "member.h"
#include "parse.h"
#include "proc.h"
#include "reap.h"
#include "runner.h"
#include "start.h"
#include "status.h"
#include "suspend.h"

#define ENGINE_MAX_ENV	(1 << 20)
#define ENGINE_MAX_ARM_MS 3.2e12	/* about a century: no timer waits longer */
#define ENGINE_ENV_BATCH	128	/* finished jobs whose environments go in one commit, */
#define ENGINE_ENV_DELAY_MS	50	/* or this long after the first of them ended */

static int engine_gpu_job(struct engine *, struct job *, const struct gc_event *, char *,
    size_t);
static int engine_ends_close(struct engine *);
static void engine_end_unwatch(struct job *);

double
engine_now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_REALTIME, &ts);
	return (double)ts.tv_sec + ts.tv_nsec / 1e9;
}

void
engine_user_dir(struct engine *e, uint32_t uid, char *buf, size_t len)
{
	snprintf(buf, len, "%s/%u", e->cfg.spool, (unsigned)uid);
}

void
engine_status_path(struct engine *e, int64_t id, char *buf, size_t len)
{
	snprintf(buf, len, "%s/.status/%lld", e->cfg.spool, (long long)id);
}

struct job *
engine_find(struct engine *e, int64_t id)
{
	return jobtab_find(&e->jobtab, id);
}

/* uid's place in e->users, or -1; few users, a short array. */
static int
engine_user_find(const struct engine *e, uint32_t uid)
{
	int i;

	for (i = 0; i < e->nusers; i++)
		if (e->users[i].uid == uid)
			return i;
	return -1;
}

/* Likewise, made if it has none; -1 out of memory. */
static int
engine_user(struct engine *e, uint32_t uid)
{
	int i = engine_user_find(e, uid);
	void *n;

	if (i >= 0)
		return i;
	if ((n = realloc(e->users, (size_t)(e->nusers + 1) * sizeof(*e->users))) == NULL) {
		log_warnx("out of memory: uid %u's jobs go uncounted", (unsigned)uid);
		return -1;
	}
	e->users = n;
	memset(&e->users[e->nusers], 0, sizeof(e->users[0]));
	e->users[e->nusers].uid = uid;
	return e->nusers++;
}

int
engine_pending(const struct engine *e, uint32_t uid)
{
	int i = engine_user_find(e, uid);

	return i >= 0 ? e->users[i].pending : 0;
}

uint64_t
engine_stored(const struct engine *e, uint32_t uid)
{
	int i = engine_user_find(e, uid);

	return i >= 0 ? e->users[i].stored : 0;
}

/* Counts a job in (d = 1) or out (-1) of its user's pending jobs. */
static void
engine_count_pending(struct engine *e, const struct job *j, int d)
{
	int i;

	if (j->state != JOB_PENDING || (i = engine_user(e, j->uid)) < 0)
		return;
	if ((e->users[i].pending += d) < 0)
		e->users[i].pending = 0;
}

/* A job as the scheduler sees it. */
static void
engine_sj(const struct engine *e, const struct job *j, double now, struct sched_job *sj)
{
	memset(sj, 0, sizeof(*sj));
	sj->id = j->id;
	sj->uid = j->uid;
	sj->share = e->cfg.fairshare ? fs_bonus(&e->fs, j->uid) : 0;
	/* a job whose end is not recorded yet still holds its GPUs */
	sj->running = engine_holds(j);
	sj->ngpus = j->ngpus;
	sj->mem = j->mem;
	sj->priority = j->priority;
	sj->submitted_at = j->state == JOB_SUSPENDED ? j->gc.suspended_at : j->submitted_at;
	sj->dep_wait = j->dep_wait;
	sj->gpumask = j->gpumask;
	sj->suspended = j->state == JOB_SUSPENDED;
	sj->may_resume = !j->gc.hold;
	/* a job that is switching or ending stays, and so does its GPU */
	sj->busy = j->gc.phase != GC_NONE || j->ending[0] != '\0' || j->exited;
	/* a Slurm step (adopt.h) is Slurm's to stop, never the scheduler's */
	sj->pinned = gpuctl_pinned(j, now) || j->slurm_id != 0;
	sj->requeue = j->requeue;
	/* memory its processes share cannot be moved out (gpuctl refuses), or a suspend failed */
	sj->unsuspendable = gpuctl_unsuspendable(j, now, NULL, 0);
	sj->slice_start = j->gc.slice_start;
	sj->restrict_gpus = j->placed;
	sj->allowed = j->allowed;
}

/* Pushes j on the front of a list of e->deps or e->held. */
static void
engine_list_push(struct job **head, struct job *j)
{
	j->lprev = NULL;
	j->lnext = *head;
	if (*head != NULL)
		(*head)->lprev = j;
	*head = j;
}

static void
engine_list_del(struct job **head, struct job *j)
{
	if (j->lprev != NULL)
		j->lprev->lnext = j->lnext;
	else
		*head = j->lnext;
	if (j->lnext != NULL)
		j->lnext->lprev = j->lprev;
	j->lnext = j->lprev = NULL;
}

/* Files an active job where passes look for it, by its state and --after. */
static void
engine_queue_in(struct engine *e, struct job *j)
{
	/* what its place in the order depends on: pending, so its submit time */
	struct sched_job sj = { .priority = j->priority, .submitted_at = j->submitted_at };

	if (j->state == JOB_PENDING && j->parked) {
		j->queue = JOB_Q_PARKED;	/* held: in no list, no pass sees it, no array place */
	} else if (j->state != JOB_PENDING) {
		/* running already: it holds its place, over the limit if it must */
		if (j->array_limit > 0)
			gates_enter(&e->gates, j->array_id, j->array_limit, &j->gn, 1);
		j->queue = JOB_Q_HELD;
		engine_list_push(&e->held, j);
	} else if (j->dep_wait) {
		j->queue = JOB_Q_DEPS;
		engine_list_push(&e->deps, j);
		if (deptab_add(&e->deptab, j, j->after, j->nafter, &j->depn) == -1)
			e->deps_all = 1;	/* found by reading every waiting job */
	} else if (j->array_limit > 0 &&
	    !gates_enter(&e->gates, j->array_id, j->array_limit, &j->gn, 0)) {
		j->queue = JOB_Q_GATED;	/* its array's places are taken: no pass sees it */
	} else {
		j->queue = JOB_Q_READY;
		j->on.key = sched_key(&sj, &e->cfg.sched);
		j->on.at = sj.submitted_at;
		j->on.id = j->id;
		/* nvq top: up its owner's list as if submitted at top_at, its own key kept */
		j->on.up_at = j->top_at > 0 && j->top_at < j->submitted_at ?
		    j->submitted_at - j->top_at : 0;
		j->on.up_key = e->cfg.sched.aging * j->on.up_at / 3600.0;
		if (waitq_add(&e->wq, j->uid, j->ngpus == 0 ? WAITQ_CPU : WAITQ_GPU, j->mem,
		    &j->on) == -1) {
			/* filed again at the next reload or restart */
			log_warnx("job %lld: out of memory; it waits for nvqd's next reload",
			    (long long)j->id);
			j->queue = JOB_Q_NONE;
		}
	}
}

static void
engine_queue_out(struct engine *e, struct job *j)
{
	if (j->queue == JOB_Q_HELD)
		engine_list_del(&e->held, j);
	else if (j->queue == JOB_Q_DEPS) {
		engine_list_del(&e->deps, j);
		deptab_del(&e->deptab, j->depn, j->nafter);
		j->depn = NULL;
	}
	else if (j->queue == JOB_Q_READY)
		waitq_del(&e->wq, j->uid, j->ngpus == 0 ? WAITQ_CPU : WAITQ_GPU, j->mem,
		    &j->on);
	else if (j->queue == JOB_Q_GATED)
		gates_cancel(&e->gates, j->array_id, &j->gn);
	j->queue = JOB_Q_NONE;
}

/* Notes an id whose dependents (or itself, a job that came waiting) to look at. */
static void
engine_dep_note(struct engine *e, int64_t id)
{
	int64_t *n;

	if (e->ndep_ids == e->dep_cap) {
		if ((n = realloc(e->dep_ids, (e->dep_cap ? e->dep_cap * 2 : 64) *
		    sizeof(*n))) == NULL) {
			e->deps_all = 1;
			return;
		}
		e->dep_ids = n;
		e->dep_cap = e->dep_cap ? e->dep_cap * 2 : 64;
	}
	e->dep_ids[e->ndep_ids++] = id;
}

/* Every change of a linked job's state goes through here, for the counts above. */
void
engine_state(struct engine *e, struct job *j, int state)
{
	if (e->on_change != NULL)
		e->on_change(NULL);
	engine_count_pending(e, j, -1);
	if ((j->state == JOB_PENDING) != (state == JOB_PENDING)) {
		engine_queue_out(e, j);
		j->state = state;
		engine_queue_in(e, j);
	} else
		j->state = state;
	engine_count_pending(e, j, 1);
}

static int
engine_link(struct engine *e, struct job *j)
{
	if (jobtab_put(&e->jobtab, j) == -1)
		return -1;
	engine_count_pending(e, j, 1);
	engine_queue_in(e, j);
	j->next = e->jobs;
	if (e->jobs != NULL)
		e->jobs->prev = j;
	e->jobs = j;
	e->njobs++;
	return 0;
}

static void
engine_handle_closed_cb(uv_handle_t *h)
{
	struct job *j = h->data;

	free(h);
	if (--j->handles == 0 && j->gone)
		free(j);
}

/* Forgets a job's use of the GPUs (engine_track made room for it). */
static void
engine_untrack(struct job *j)
{
	free(j->gpu_used);
	free(j->gpu_peak);
	free(j->gpu_acc);
	free(j->hook_used);
	free(j->hook_peak);
	j->gpu_used = j->gpu_peak = j->gpu_acc = j->hook_used = j->hook_peak = NULL;
}

/* j gives its array's place back: the next task waiting for one is filed to run. */
static void
engine_gate_leave(struct engine *e, struct job *j)
{
	struct gate_node *n;
	struct job *next;

	if (j->array_limit == 0 || (n = gates_leave(&e->gates, j->array_id, &j->gn)) == NULL)
		return;
	next = (struct job *)(void *)((char *)n - offsetof(struct job, gn));
	next->queue = JOB_Q_NONE;	/* out of the gate's list already */
	engine_queue_in(e, next);
	engine_kick(e);
}

/* Unlinks a job that is no longer active; frees it once its handles close. */
/* nvq run's descriptors, once its start has them or it will never start */
static void
engine_close_stdio(struct job *j)
{
	int i;

	for (i = 0; i < 3; i++)
		if (j->stdio[i] >= 0) {
			close(j->stdio[i]);
			j->stdio[i] = -1;
		}
}

static void	engine_ahead_drop(struct engine *, const char *);

/* What engine_charge counted of j, given back: it is no longer active. */
static void
engine_uncharge(struct engine *e, struct job *j)
{
	uint64_t less = j->stored;
	int i;

	if (j->stored_key != 0)
		less += stored_drop(&e->shared, j->stored_key);
	if ((i = engine_user_find(e, j->uid)) >= 0)
		e->users[i].stored = e->users[i].stored > less ? e->users[i].stored - less : 0;
	j->stored = 0;
	j->stored_key = 0;
}

static void
engine_drop(struct engine *e, struct job *j)
{
	struct gc_event ev = { .type = GC_EV_GONE, .job = j->id };
	char err[8];

	engine_close_stdio(j);
	if (e->ahead.id == j->id)
		engine_ahead_drop(e, "it is no longer pending");
	if (e->ckpt_ready != NULL)
		suspend_unready(e, j->id);	/* an nvq-ckpt ready for its resume ends */
	jobtab_del(&e->jobtab, j);
	engine_queue_out(e, j);
	engine_gate_leave(e, j);
	if (j->prev != NULL)
		j->prev->next = j->next;
	else
		e->jobs = j->next;
	if (j->next != NULL)
		j->next->prev = j->prev;
	e->njobs--;
	engine_count_pending(e, j, -1);
	engine_uncharge(e, j);
	j->gone = 1;
	/* whoever runs --after it may be ready, or never */
	if (deptab_count(&e->deptab, j->id) > 0)
		engine_dep_note(e, j->id);
	if (j->poll != NULL)
		uv_close((uv_handle_t *)j->poll, engine_handle_closed_cb);
	if (j->timer != NULL)
		uv_close((uv_handle_t *)j->timer, engine_handle_closed_cb);
	j->poll = NULL;
	j->timer = NULL;
	engine_end_unwatch(j);
	/* a shim that told its job's end and is still cleaning up: reaped when it exits */
	if (j->reap && j->pidfd >= 0 && j->pid > 0)
		reap_later(e->loop, j->pid, j->pidfd);
	else if (j->pidfd >= 0)
		close(j->pidfd);
	j->pidfd = -1;
	free(j->cgroup);
	j->cgroup = NULL;
	/* its locks decide nothing now; others may take its timeslice GPUs */
	hooks_job_gone(e, j);
	if (!e->stopping)
		engine_gpu_job(e, j, &ev, err, sizeof(err));
	gpuctl_free(j);
	engine_untrack(j);
	free(j->end_peaks);
	free(j->end_uuids);
	j->end_peaks = NULL;
	j->end_uuids = NULL;
	if (j->handles == 0)
		free(j);
}

/* What the job held of GPU g at most: NVML's figure or the hook's. */
static uint64_t
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
	if (j->gpu_used == NULL || j->gpu_peak == NULL || j->gpu_acc == NULL ||
	    j->hook_used == NULL || j->hook_peak == NULL)
		engine_untrack(j);
}

int
engine_add(struct engine *e, int64_t id, uint32_t uid, uint32_t gid, const char *user,
    int ngpus, uint64_t mem, int priority, double now, int64_t limit, const int64_t *after,
    int nafter, const struct engine_array *arr)
{
	struct job *j;

	if ((j = calloc(1, sizeof(*j))) == NULL)
		return -1;
	j->id = id;
	j->uid = uid;
	j->gid = gid;
	j->stdio[0] = j->stdio[1] = j->stdio[2] = -1;
	snprintf(j->user, sizeof(j->user), "%s", user);
	j->state = JOB_PENDING;
	j->ngpus = ngpus;
	j->mem = mem;
	j->priority = priority;
	j->submitted_at = now;
	j->time_limit = limit;
	j->pidfd = -1;
	j->endfd = -1;
	j->go_fd = -1;
	gpuctl_init(j);
	if (nafter > PARSE_MAX_IDS)
		nafter = PARSE_MAX_IDS;
	if (nafter > 0)
		memcpy(j->after, after, sizeof(*after) * (size_t)nafter);
	j->nafter = nafter;
	j->dep_wait = nafter > 0;
	if (arr != NULL) {
		j->array_id = arr->id;
		j->array_index = arr->index;
		j->array_limit = arr->limit;
	}
	if (engine_link(e, j) == -1) {
		free(j);
		return -1;
	}
	if (nafter > 0)
		engine_dep_note(e, id);
	return 0;
}

static void
engine_kick_cb(uv_idle_t *h);

void
engine_kick(struct engine *e)
{
	if (e->on_change != NULL)
		e->on_change(NULL);
	if (e->stopping || e->kicked)
		return;
	e->kicked = 1;
	uv_idle_start(&e->kick, engine_kick_cb);
}

/* What gpuctl asked of the engine for the jobs of e->gca.fx. */
static void
engine_gpu_fx(struct engine *e)
{
	struct job *j;
	int fx;

	while ((j = e->gca.fx) != NULL) {
		e->gca.fx = j->gc.fx_next;
		fx = j->gc.fx;
		j->gc.fx = 0;
		j->gc.fx_next = NULL;
		if ((fx & GC_FX_LIMIT) && !j->gone)
			engine_limit(e, j);
		if (fx & GC_FX_KICK)
			engine_kick(e);
	}
}

/* A poll for I/O begins: what was sent before now will be read in it. */
static void
engine_io_prepare_cb(uv_prepare_t *h)
{
	struct engine *e = h->loop->data;

	e->polling = engine_now();
}

/*
 * The poll has handed on what it read.  (One a stop signal cut short read
 * nothing, but it began before the stop, earlier than any deadline that
 * passed meanwhile.)
 */
static void
engine_io_check_cb(uv_check_t *h)
{
	struct engine *e = h->loop->data;

	e->read_from = e->polling;
}

static void
engine_gpu_timer_cb(uv_timer_t *t)
{
	struct gc_event ev = { .type = GC_EV_TIMER };

	engine_gpu(t->loop->data, &ev, NULL, 0);
}

/* Handles one event; j is its job if the caller has it (GONE: no longer findable). */
static int
engine_gpu_one(struct engine *e, struct job *j, const struct gc_event *ev, char *err,
    size_t errlen)
{
	if (j == NULL && ev->job != 0 && (j = engine_find(e, ev->job)) == NULL) {
		log_debug("gpu: %s for job %lld, which has ended: nothing to do",
		    gpuctl_ev_name(ev->type), (long long)ev->job);
		if (err != NULL)
			snprintf(err, errlen, "job %lld has ended", (long long)ev->job);
		return ev->type >= GC_EV_SUSPEND && ev->type <= GC_EV_HOLD ? -1 : 0;
	}
	return gpuctl_event(e, j, ev, engine_now(), err != NULL ? err : (char[1]){ 0 },
	    err != NULL ? errlen : 1);
}

static int
engine_gpu_job(struct engine *e, struct job *j, const struct gc_event *ev, char *err,
    size_t errlen)
{
	struct gc_event *q;
	double next, now;
	int r, k;

	if (e->gc_busy) {
		/* from inside a dispatch (a fact hooks.c or suspend.c reported) */
		if (ev->type == GC_EV_GONE)
			return 0;	/* the pass frees what a job that is not found held */
		if (ev->type >= GC_EV_SUSPEND) {
			log_warnx("gpu: request %s for job %lld during a dispatch: refused",
			    gpuctl_ev_name(ev->type), (long long)ev->job);
			if (err != NULL)
				snprintf(err, errlen, "nvqd is busy; try again");
			return -1;
		}
		if (e->gcq_n == e->gcq_cap) {
			q = realloc(e->gcq, (size_t)(e->gcq_cap ? 2 * e->gcq_cap : 8) * sizeof(*q));
			if (q == NULL) {
				log_warnx("gpu: out of memory: %s for job %lld lost",
				    gpuctl_ev_name(ev->type), (long long)ev->job);
				return 0;
			}
			e->gcq = q;
			e->gcq_cap = e->gcq_cap ? 2 * e->gcq_cap : 8;
		}
		e->gcq[e->gcq_n++] = *ev;
		log_debug("gpu: %s for job %lld came during a dispatch: queued",
		    gpuctl_ev_name(ev->type), (long long)ev->job);
		return 0;
	}
	if (e->stopping)
		return 0;
	e->gc_busy = 1;
	r = engine_gpu_one(e, j, ev, err, errlen);
	do {
		/* handled in order; one handled may queue more, at the end */
		for (k = 0; k < e->gcq_n; k++) {
			struct gc_event x = e->gcq[k];

			engine_gpu_one(e, NULL, &x, NULL, 0);
		}
		e->gcq_n = 0;
		now = engine_now();
		next = gpuctl_pass(e, now);
		engine_gpu_fx(e);
	} while (e->gcq_n > 0);
	/* armed once, from the last pass: no deadline it found is overwritten */
	if (next > 0)
		uv_timer_start(&e->locks, engine_gpu_timer_cb,
		    (uint64_t)((next - now) * 1000 > 0 ? (next - now) * 1000 : 0) + 1, 0);
	else
		uv_timer_stop(&e->locks);
	log_debug("gpu: %s handled; lock timer %s%.3fs", gpuctl_ev_name(ev->type),
	    next > 0 ? "in " : "stopped ", next > 0 ? next - now : 0.0);
	e->gc_busy = 0;
	return r;
}

int
engine_gpu(struct engine *e, const struct gc_event *ev, char *err, size_t errlen)
{
	return engine_gpu_job(e, NULL, ev, err, errlen);
}

/* How hooks.c and suspend.c report their facts (e->report). */
static void
engine_report(struct engine *e, const struct gc_event *ev)
{
	engine_gpu(e, ev, NULL, 0);
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

void
engine_reason(struct engine *e, const struct job *j, char *buf, size_t len)
{
	struct sched_decision dec = j->dec;
	struct sched_job sj;
	char a[16], b[16];

	if (j->queue == JOB_Q_PARKED) {
		snprintf(buf, len, "held; nvq release %lld starts it", (long long)j->id);
		return;
	}
	/* outside the passes: waits for a place in its array */
	if (j->queue == JOB_Q_GATED) {
		snprintf(buf, len, "array limit (%d of array %lld at once)", j->array_limit,
		    (long long)j->array_id);
		return;
	}
	/* not reached by the last pass (it stopped where nothing more could start) */
	if (j->state == JOB_PENDING && j->dec_pass != e->npass && e->npass > 0) {
		engine_sj(e, j, engine_now(), &sj);
		sched_explain(&e->pass, &sj, &dec);
	}
	switch (dec.why) {
	case SCHED_WAIT_DEP:
		snprintf(buf, len, "dependency");
		break;
	case SCHED_WAIT_USER_JOBS:
		snprintf(buf, len, "user limit (%d running jobs)", e->cfg.sched.max_running_jobs);
		break;
	case SCHED_WAIT_USER_GPUS:
		snprintf(buf, len, "user limit (%d GPUs)", e->cfg.sched.max_gpus);
		break;
	case SCHED_WAIT_GPUS:
		snprintf(buf, len, "needs %d GPUs, %d present", j->ngpus, e->gpus.n);
		break;
	case SCHED_WAIT_MEM:
		fmt_size(dec.largest_free, b, sizeof(b));
		if (j->mem == 0)
			snprintf(buf, len, "needs %d whole GPU%s, none free", j->ngpus,
			    j->ngpus == 1 ? "" : "s");
		else if (j->state == JOB_SUSPENDED) {
			fmt_size(j->mem, a, sizeof(a));
			snprintf(buf, len, "resumes when %s is free on its GPU%s", a,
			    j->ngpus == 1 ? "" : "s");
		} else {
			fmt_size(j->mem, a, sizeof(a));
			snprintf(buf, len, "needs %s on %d GPU%s, largest free %s", a, j->ngpus,
			    j->ngpus == 1 ? "" : "s", b);
		}
		break;
	case SCHED_WAIT_PRIORITY:
		snprintf(buf, len, "priority (behind job %lld)", (long long)dec.behind);
		break;
	case SCHED_WAIT_PLACE:
		snprintf(buf, len, "needs %d GPU%s among those its -w and -x allow, not drained",
		    j->ngpus, j->ngpus == 1 ? "" : "s");
		break;
	case SCHED_SUSPENDED:
		snprintf(buf, len, "suspended by %s; nvq resume %lld", j->gc.by[0] ?
		    j->gc.by : "a user", (long long)j->id);
		break;
	default:
		snprintf(buf, len, "%s", j->state == JOB_PENDING ? "starting" : "");
	}
}

/* Resolves --after: 0 to wait on, 1 ready; -1 if it can never run (reason set). */
static int
engine_deps(struct engine *e, struct job *j, char *why, size_t len)
{
	char state[16];
	int i, ready = 1;

	for (i = 0; i < j->nafter; i++) {
		/* an active one (pending, running, suspended) is waited for: no query */
		if (engine_find(e, j->after[i]) != NULL) {
			ready = 0;
			continue;
		}
		if (store_job_state(e->store, j->after[i], state, sizeof(state)) == -1) {
			snprintf(why, len, "dependency %lld does not exist", (long long)j->after[i]);
			return -1;
		}
		if (strcmp(state, "COMPLETED") == 0)
			continue;
		if (strcmp(state, "PENDING") == 0 || strcmp(state, "RUNNING") == 0) {
			ready = 0;
			continue;
		}
		snprintf(why, len, "dependency %lld ended %s", (long long)j->after[i], state);
		return -1;
	}
	return ready;
}

static int
engine_grow(struct engine *e, int n)
{
	int cap = e->cap ? e->cap : 64;

	if (n <= e->cap)
		return 0;
	while (cap < n)
		cap *= 2;
	free(e->sj);
	free(e->dec);
	free(e->order);
	free(e->map);
	free(e->started);
	e->started = calloc((size_t)cap, sizeof(*e->started));
	e->sj = calloc((size_t)cap, sizeof(*e->sj));
	e->dec = calloc((size_t)cap, sizeof(*e->dec));
	e->order = calloc((size_t)cap, sizeof(*e->order));
	e->map = calloc((size_t)cap, sizeof(*e->map));
	e->cap = cap;
	if (!e->sj || !e->dec || !e->order || !e->map || !e->started) {
		e->cap = 0;
		return -1;
	}
	return 0;
}

/* Stops listening on the standby's socket for the job's end. */
static void
engine_end_unwatch(struct job *j)
{
	if (j->endpoll != NULL)
		uv_close((uv_handle_t *)j->endpoll, engine_handle_closed_cb);
	j->endpoll = NULL;
	if (j->endfd >= 0)
		close(j->endfd);
	j->endfd = -1;
}

/*
 * The shim says its job ended (a byte): its status file holds the record,
 * the job's processes are gone.  The pass records the end now; the shim,
 * still cleaning up, is reaped when it exits (reap.h).  Anything else (the
 * socket closed, an error) says nothing of the job: its pidfd still does.
 */
static void
engine_end_cb(uv_poll_t *h, int status, int events)
{
	struct job *j = h->data;
	struct engine *e = h->loop->data;
	char c = 0;
	ssize_t n;
	int st;

	(void)status;
	(void)events;
	while ((n = recv(j->endfd, &c, 1, MSG_DONTWAIT)) == -1 && errno == EINTR)
		;
	if (n == -1 && errno == EAGAIN)
		return;
	engine_end_unwatch(j);
	if (n != 1 || c != 'e' || j->exited)
		return;
	if (waitpid(j->pid, &st, WNOHANG) != j->pid)
		j->reap = 1;
	if (j->poll != NULL)
		uv_poll_stop(j->poll);
	j->exited = 1;
	engine_kick(e);
}

static void
engine_poll_cb(uv_poll_t *h, int status, int events)
{
	struct job *j = h->data;
	struct engine *e = h->loop->data;

	(void)status;
	(void)events;
	engine_job_ended(e, j);
}

/* Watches the shim through a pidfd (opened here unless it already is). */
void
engine_watch(struct engine *e, struct job *j)
{
	if (j->pidfd == -1)
		j->pidfd = (int)syscall(SYS_pidfd_open, j->pid, 0);
	if (j->pidfd == -1) {
		/* no pidfd (Linux < 5.3): the poll timer checks the pid instead */
		log_debug("job %lld: pidfd_open: %s", (long long)j->id, strerror(errno));
		return;
	}
	if ((j->poll = calloc(1, sizeof(*j->poll))) == NULL ||
	    uv_poll_init(e->loop, j->poll, j->pidfd) != 0) {
		free(j->poll);
		j->poll = NULL;
		return;
	}
	j->poll->data = j;
	j->handles++;
	uv_poll_start(j->poll, UV_READABLE, engine_poll_cb);
	/* the standby's socket too, where there is one: its end is told before its exit */
	if (j->endfd < 0)
		return;
	if ((j->endpoll = calloc(1, sizeof(*j->endpoll))) == NULL ||
	    uv_poll_init(e->loop, j->endpoll, j->endfd) != 0) {
		free(j->endpoll);
		j->endpoll = NULL;
		engine_end_unwatch(j);
		return;
	}
	j->endpoll->data = j;
	j->handles++;
	uv_poll_start(j->endpoll, UV_READABLE, engine_end_cb);
}

static void engine_timer_cb(uv_timer_t *);

/* Fires the job's timer in secs; a century or more saturates (no double-to-int overflow). */
void
engine_arm(struct engine *e, struct job *j, double secs)
{
	double ms = secs * 1000;

	if (j->timer == NULL) {
		if ((j->timer = calloc(1, sizeof(*j->timer))) == NULL)
			return;
		uv_timer_init(e->loop, j->timer);
		j->timer->data = j;
		j->handles++;
	}
	uv_timer_start(j->timer, engine_timer_cb, !(ms > 0) ? 0 :
	    ms < ENGINE_MAX_ARM_MS ? (uint64_t)ms : (uint64_t)ENGINE_MAX_ARM_MS, 0);
}

void
engine_limit(struct engine *e, struct job *j)
{
	double left;

	if (j->time_limit <= 0 || j->ending[0] != '\0' || j->exited)
		return;
	if (j->state == JOB_SUSPENDED) {
		if (j->timer != NULL)
			uv_timer_stop(j->timer);
		return;
	}
	left = j->started_at + (double)j->time_limit + j->gc.susp_total - engine_now();
	engine_arm(e, j, left > 0 ? left : 0);
}

/*
 * Commits that a running job is to end in state, then signals it: preempt
 * set, with its --signal (SIGUSR1), to save what it can within kill_grace;
 * else SIGTERM.
 */
static int
engine_stop_as(struct engine *e, struct job *j, const char *state, const char *reason,
    int preempt)
{
	int sig;

	if (j->ending[0] != '\0' || j->slurm_id != 0)	/* slurmstepd is Slurm's */
		return 0;
	if (store_job_ending(e->store, j->id, state, reason, engine_now()) == -1)
		return -1;
	snprintf(j->ending, sizeof(j->ending), "%s", state);
	snprintf(j->end_reason, sizeof(j->end_reason), "%s", reason);
	sig = preempt ? (j->preempt_signal ? j->preempt_signal : SIGUSR1) : SIGTERM;
	log_info("job %lld: %s, sending SIG%s", (long long)j->id, reason,
	    parse_signame(sig) ? parse_signame(sig) : "RTMIN+?");
	if (j->pid > 0 && !j->exited)
		runner_stop(j->pid, j->pidfd, preempt ? RUNNER_PREEMPT : RUNNER_TERM);
	engine_arm(e, j, (double)e->cfg.kill_grace);
	return 0;
}

/* Commits that a running job is to stop, then signals it (PREEMPTED: its --signal). */
static int
engine_stop(struct engine *e, struct job *j, const char *state, const char *reason)
{
	return engine_stop_as(e, j, state, reason, strcmp(state, "PREEMPTED") == 0);
}

static void
engine_timer_cb(uv_timer_t *h)
{
	struct job *j = h->data;
	struct engine *e = h->loop->data;
	char why[64], t[24];

	if (j->exited)
		return;
	if (j->ending[0] == '\0') {
		fmt_elapsed(j->time_limit, t, sizeof(t));
		snprintf(why, sizeof(why), "time limit %s reached", t);
		engine_stop(e, j, "TIMEOUT", why);
		return;
	}
	if (!j->killed_hard && j->pid > 0 && !j->exited) {
		log_info("job %lld: still running after %llds, sending SIGKILL",
		    (long long)j->id, (long long)e->cfg.kill_grace);
		runner_stop(j->pid, j->pidfd, RUNNER_KILL);
		j->killed_hard = 1;
	}
}

/*
 * A job that can no longer start: its environment goes at once (it may hold
 * secrets, and megabytes of a user's disk share), in a commit of its own
 * that is not synced (a crash leaves it to start-up's sweep), which on a
 * full disk takes the reserve: it gives room back.
 */
static void
engine_forget_env(struct engine *e, const struct job *j)
{
	store_envs_delete(e->store, &j->id, 1);
}

/* A job's end is committed: its notifiers, if it or [daemon] on_finish has any. */
static void
engine_notice(struct engine *e, const struct job *j)
{
	if (j->notify || e->cfg.on_finish[0] != '\0')
		notify_job(&e->notify, j->id);
}

static void
engine_fail(struct engine *e, struct job *j, const char *why)
{
	struct store_end end = { "FAILED", engine_now(), -1, 0, -1, -1, why, -1, 0, NULL, NULL };

	log_warnx("job %lld: %s", (long long)j->id, why);
	if (store_job_end(e->store, j->id, &end) == -1)
		log_warnx("job %lld: cannot record its failure", (long long)j->id);
	else {
		engine_forget_env(e, j);
		engine_notice(e, j);
	}
	engine_drop(e, j);
}

/* The UUIDs of the GPUs in mask, and the memory each may give a job. */
static uint64_t
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
static double
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

/* The running jobs that give way to a waiting one, by priority or by turns. */
static void
engine_preempt(struct engine *e, const struct sched_gpu *gpus, int n, double now,
    struct sched_plan *plan)
{
	struct sched_preemption pr;
	struct gc_event ev = { .type = GC_EV_SUSPEND };
	struct job *b, *v;
	char err[640], why[512], by[96], cannot[320];
	int k;

	sched_preempt(gpus, e->gpus.n, e->sj, n, &e->cfg.sched, now, plan, &pr);
	if (pr.next_wake > 0 && (plan->next_wake == 0 || pr.next_wake < plan->next_wake))
		plan->next_wake = pr.next_wake;
	if (pr.beneficiary < 0)
		return;
	engine_ends_close(e);	/* the preemption's records are its own */
	b = e->map[pr.beneficiary];
	if (pr.rotation)
		snprintf(by, sizeof(by), "its turn on a timeslice GPU ended and job %lld "
		    "(priority %d) waits", (long long)b->id, b->priority);
	else
		snprintf(by, sizeof(by), "preempted by job %lld (priority %d)", (long long)b->id,
		    b->priority);
	for (k = 0; k < pr.nvictims; k++) {
		v = e->map[pr.victims[k]];
		if (!gpuctl_unsuspendable(v, now, cannot, sizeof(cannot)))
			cannot[0] = '\0';
		/* stopped and queued again (--requeue): by setting, or as it cannot be suspended */
		if (pr.give[k] == SCHED_GIVE_REQUEUE) {
			snprintf(why, sizeof(why), "%s; requeued%s%s%s", by, cannot[0] != '\0' ?
			    ": it cannot be suspended (" : "", cannot, cannot[0] != '\0' ? ")" : "");
			if (engine_stop(e, v, "PREEMPTED", why) == -1)
				gpuctl_pin(v, now + 60);
			continue;
		}
		/* it cannot be suspended and has no --requeue: stopped the same way, cancelled */
		if (pr.give[k] == SCHED_GIVE_CANCEL) {
			snprintf(why, sizeof(why), "%s; cancelled: it cannot be suspended (%s) and "
			    "has no --requeue", by, cannot);
			if (engine_stop_as(e, v, "CANCELLED", why, 1) == -1)
				gpuctl_pin(v, now + 60);
			continue;
		}
		ev.job = v->id;
		ev.n = pr.rotation ? GC_TURN : GC_PREEMPT;
		ev.for_job = b->id;
		if (engine_gpu(e, &ev, err, sizeof(err)) == -1) {
			log_warnx("job %lld cannot give way to job %lld: %s", (long long)v->id,
			    (long long)b->id, err);
			/* the next pass stops it instead: a refusal is no place kept */
			gpuctl_suspend_failed(v, err, now);
		}
	}
}

/* A new token for j's start's ticket (runner.h). */
static void
engine_new_ticket(struct engine *e, struct job *j)
{
	snprintf(j->ticket, sizeof(j->ticket), "%llx-%x", e->ticket_base, e->tickets++);
}

/*
 * Hands job j, to start on mask, to the standby with runner_spec.prepare:
 * it sets up and waits for runner_go.  Its pid, and in *fd its socket (the
 * caller's now), or -1 and *fd -1 if there was no standby to take it.
 */
static pid_t
engine_hand(struct engine *e, struct job *j, uint64_t mask, int *fd)
{
	char uuids[SCHED_MAX_GPUS * 97], status[PATH_MAX], err[256];
	uint64_t granted = engine_gpus_of(e, j, mask, uuids, sizeof(uuids));
	pid_t pid;

	engine_status_path(e, j->id, status, sizeof(status));
	*fd = -1;
	if ((pid = start_shim(e, j, uuids, granted, status, &e->standby, 1, err,
	    sizeof(err))) <= 0) {
		log_debug("job %lld: not prepared: %s", (long long)j->id, err);
		return -1;
	}
	*fd = e->standby.taken_fd;
	e->standby.taken_fd = -1;
	return pid;
}

/*
 * Calls off the standby prepared ahead of its job's turn (engine_ahead):
 * end of file on its socket, and it undoes its setup and exits.
 */
static void
engine_ahead_drop(struct engine *e, const char *why)
{
	if (e->ahead.id == 0)
		return;
	log_debug("job %lld: its supervisor %d prepared ahead is called off: %s",
	    (long long)e->ahead.id, (int)e->ahead.pid, why);
	close(e->ahead.fd);
	if (!e->stopping)
		reap_pid(e->loop, e->ahead.pid);
	else {
		/* nvqd stops: wait for its cleanup (its cgroup, the job's account), a second at most */
		int st, i;

		for (i = 0; i < 100 && waitpid(e->ahead.pid, &st, WNOHANG) == 0; i++)
			usleep(10000);
		if (i == 100) {
			kill(e->ahead.pid, SIGKILL);
			waitpid(e->ahead.pid, &st, 0);
		}
	}
	e->ahead.id = 0;
	e->ahead.pid = 0;
	e->ahead.fd = -1;
}

/* Records PENDING -> RUNNING (inside the pass's transaction); acts later. */
static int
engine_commit_start(struct engine *e, struct job *j, uint64_t mask, double now)
{
	char uuids[SCHED_MAX_GPUS * 97], status[PATH_MAX];
	uint64_t granted = engine_gpus_of(e, j, mask, uuids, sizeof(uuids));
	int ahead = e->ahead.id == j->id;

	/* prepared ahead for other GPUs, or another budget: called off */
	if (ahead && (e->ahead.mask != mask || e->ahead.granted != granted)) {
		engine_ahead_drop(e, "it starts on other terms");
		ahead = 0;
	}
	/* the ticket first: a crash after the commit then voids or runs it, once */
	engine_status_path(e, j->id, status, sizeof(status));
	if (!ahead)	/* else the token its standby has */
		engine_new_ticket(e, j);
	if (runner_ticket(status, j->ticket, &e->spares) == -1) {
		log_warn("%s.%s.ticket", status, j->ticket);
		return -1;
	}
	j->promised = 0;
	if (store_job_start(e->store, j->id, now, uuids, j->ngpus, granted,
	    engine_gpu_share(e, j, mask)) == -1)
		return -1;
	if (ahead) {
		/* its standby has it: the pid goes with the start, and runner_go after */
		char cg[PATH_MAX] = "";

		if (e->cgroup_base[0] != '\0')
			cgroup_name(e->cgroup_base, (long long)j->id, e->ahead.pid, cg, sizeof(cg));
		if (store_job_set_pid(e->store, j->id, e->ahead.pid, e->ahead.start,
		    e->boot_id, *cg ? cg : NULL) == -1) {
			engine_ahead_drop(e, "its supervisor's pid cannot be recorded");
			return 0;
		}
		j->promised = e->ahead.pid;
		j->pid_start = e->ahead.start;
		j->prepared = 1;
		j->go_fd = e->ahead.fd;
		e->ahead.id = 0;
		e->ahead.pid = 0;
		e->ahead.fd = -1;
		return 0;
	}
	/*
	 * Its supervisor is the standby shim, if there is one left in this
	 * pass: its pid goes with the start, no commit of its own after it.  A
	 * crash before the standby got the job leaves the ticket, and
	 * recover.c puts the job back.
	 */
	if (e->standby.pid > 0 && !e->standby_taken) {
		char cg[PATH_MAX] = "";

		if (e->cgroup_base[0] != '\0')
			cgroup_name(e->cgroup_base, (long long)j->id, e->standby.pid, cg, sizeof(cg));
		if (store_job_set_pid(e->store, j->id, e->standby.pid, e->standby.start,
		    e->boot_id, *cg ? cg : NULL) == 0) {
			j->promised = e->standby.pid;
			j->pid_start = e->standby.start;
			e->standby_taken = 1;
		}
	}
	return 0;
}

/*
 * Hands job j, whose start is recorded in the pass's open transaction, to
 * the standby promised to it, before the commit: the shim sets up (cgroup,
 * memory account, environment) while nvqd commits, and takes its ticket
 * only on runner_go (engine_spawn).  If the standby is gone, nothing: the
 * job's shim is spawned after the commit, as without one.
 */
static void
engine_prepare(struct engine *e, struct job *j, uint64_t mask)
{
	int fd;

	/* the standby is the one promised to j: its pid is j->promised, or none took it */
	if (engine_hand(e, j, mask, &fd) <= 0)
		return;
	j->prepared = 1;
	j->go_fd = fd;
}

/* Calls off the prepared standby of a start that could not be committed. */
static void
engine_unprepare(struct engine *e, struct job *j)
{
	if (!j->prepared)
		return;
	j->prepared = 0;
	log_info("job %lld: its start is not committed: its prepared supervisor %d is "
	    "called off", (long long)j->id, (int)j->promised);
	if (j->go_fd >= 0)
		close(j->go_fd);	/* end of file: it undoes its setup and exits */
	j->go_fd = -1;
	reap_pid(e->loop, j->promised);
}

/*
 * Starts a job whose RUNNING state is committed: forks its supervisor.
 * Returns 0, or -1 when it failed to start, was recorded FAILED and freed.
 */
static int
engine_spawn(struct engine *e, struct job *j, uint64_t mask, double now)
{
	char uuids[SCHED_MAX_GPUS * 97], status[PATH_MAX], err[256];
	uint64_t granted = engine_gpus_of(e, j, mask, uuids, sizeof(uuids));

	engine_state(e, j, JOB_RUNNING);
	j->gpumask = mask;
	j->granted = granted;
	j->started_at = now;
	gpuctl_started(j, now);
	engine_track(e, j);
	engine_status_path(e, j->id, status, sizeof(status));
	j->pid = -1;
	if (j->prepared) {
		/* the standby set up while the start was committed: it goes now */
		j->prepared = 0;
		if (runner_go(j->go_fd) == 0) {
			j->pid = j->promised;
			e->standby.taken_fd = j->go_fd;
		} else {
			log_warnx("job %lld: its prepared supervisor %d is gone; starting "
			    "another", (long long)j->id, (int)j->promised);
			close(j->go_fd);
			reap_pid(e->loop, j->promised);
		}
		j->go_fd = -1;
	}
	if (j->pid == -1)
		j->pid = start_shim(e, j, uuids, granted, status, j->promised > 0 &&
		    j->promised == e->standby.pid ? &e->standby : NULL, 0, err, sizeof(err));
	engine_close_stdio(j);
	/* handed to the standby: its socket tells the job's end */
	if (e->standby.taken_fd >= 0 && j->pid > 0 && j->pid == j->promised)
		j->endfd = e->standby.taken_fd;
	else if (e->standby.taken_fd >= 0)
		close(e->standby.taken_fd);
	e->standby.taken_fd = -1;
	if (j->pid == -1) {
		j->pid = 0;
		engine_fail(e, j, err);
		return -1;
	}
	/* the standby's was read when it started, and recorded with the start */
	if (j->pid != j->promised)
		j->pid_start = proc_start_time(j->pid);
	if (e->cgroup_base[0] != '\0') {
		char cg[PATH_MAX];

		cgroup_name(e->cgroup_base, (long long)j->id, j->pid, cg, sizeof(cg));
		j->cgroup = strdup(cg);
	}
	log_info("job %lld started (pid %d) on %s", (long long)j->id, (int)j->pid,
	    *uuids ? uuids : "no GPU");
	engine_watch(e, j);
	engine_limit(e, j);
	return 0;
}

/* The shim is gone: reap it; the next pass records how the job ended. */
void
engine_job_ended(struct engine *e, struct job *j)
{
	int st;

	if (j->pid > 0)
		waitpid(j->pid, &st, WNOHANG);
	if (j->poll != NULL)
		uv_poll_stop(j->poll);
	engine_end_unwatch(j);
	j->exited = 1;
	engine_kick(e);
}

/*
 * The reason of a job that failed after an allocation past its budget was
 * refused: the sizes, how it ended, and the -m that would have held it (the
 * most it asked for, rounded up to a GiB, and [scheduler] auto_margin).
 */
static void
engine_oom_reason(struct engine *e, struct job *j)
{
	char asked[16], used[16], lim[16], want[16], was[128];
	uint64_t need = j->oom_used + j->oom_asked, g = 1ULL << 30;

	snprintf(was, sizeof(was), "%s", j->final_reason);
	need += (uint64_t)((double)need * e->cfg.auto_margin);
	need = (need + g - 1) / g * g;
	fmt_size(j->oom_asked, asked, sizeof(asked));
	fmt_size(j->oom_used, used, sizeof(used));
	fmt_size(j->oom_limit, lim, sizeof(lim));
	fmt_size(need, want, sizeof(want));
	snprintf(j->final_reason, sizeof(j->final_reason), "out of GPU memory: asked %s more "
	    "with %s of its -m %s in use (%s); try -m %s", asked, used, lim, was, want);
}

/* How an exited job ended, from what its shim recorded, into j->final_*. */
static void
engine_final(struct engine *e, struct job *j, struct store_end *end)
{
	struct status_record rs;
	char status[PATH_MAX];
	int has_status;

	engine_status_path(e, j->id, status, sizeof(status));
	memset(end, 0, sizeof(*end));
	end->now = engine_now();
	j->final_reason[0] = '\0';
	has_status = status_read(status, &rs) == 0;
	if (!has_status && j->recovered && !j->node_fail && j->ending[0] == '\0' &&
	    runner_void_start(status) == 1) {
		/*
		 * Its shim, recorded by an earlier nvqd, ended without taking the
		 * start's ticket: it never ran the job (a standby shim that lost
		 * nvqd before it got the job, and was still there, or a zombie,
		 * when this nvqd started), which goes back to PENDING.  Not for a
		 * start of this nvqd's: a shim that cannot take its job would
		 * then be tried again and again.
		 */
		snprintf(j->final_state, sizeof(j->final_state), "UNSTARTED");
		snprintf(j->final_reason, sizeof(j->final_reason), "its supervisor ended "
		    "before it took the job; pending again");
		end->exit_code = -1;
		end->cpu_time = -1;
		end->max_rss = -1;
	} else if (!has_status) {
		snprintf(j->final_state, sizeof(j->final_state), "%s",
		    j->node_fail ? "NODE_FAIL" : j->ending[0] ? j->ending : "FAILED");
		end->exit_code = -1;
		end->cpu_time = -1;
		end->max_rss = -1;
		snprintf(j->final_reason, sizeof(j->final_reason), "%s", j->node_fail ?
		    (j->requeue ? "the machine restarted while it ran; requeued (--requeue)" :
		    "the machine restarted while it ran") :
		    "its supervisor ended without recording an exit status");
	} else {
		end->now = rs.ended_at;
		end->exit_code = rs.exit_code;
		end->signal = rs.signal;
		end->cpu_time = rs.cpu_time;
		end->max_rss = rs.max_rss;
		if (rs.reason[0] != '\0') {
			snprintf(j->final_state, sizeof(j->final_state), "FAILED");
			snprintf(j->final_reason, sizeof(j->final_reason), "%s", rs.reason);
		} else if (j->ending[0] != '\0') {
			snprintf(j->final_state, sizeof(j->final_state), "%s", j->ending);
			snprintf(j->final_reason, sizeof(j->final_reason), "%s", j->end_reason);
		} else if (rs.exit_code == 0) {
			snprintf(j->final_state, sizeof(j->final_state), "COMPLETED");
		} else if (rs.signal > 0) {
			snprintf(j->final_state, sizeof(j->final_state), "FAILED");
			snprintf(j->final_reason, sizeof(j->final_reason),
			    "killed by signal %d (%s)", rs.signal, strsignal(rs.signal));
		} else {
			snprintf(j->final_state, sizeof(j->final_state), "FAILED");
			snprintf(j->final_reason, sizeof(j->final_reason), "exit code %d",
			    rs.exit_code);
		}
	}
	/* it failed after the hook refused it memory: most likely why */
	if (strcmp(j->final_state, "FAILED") == 0 && j->oom_asked > 0 && j->ending[0] == '\0')
		engine_oom_reason(e, j);
	end->state = j->final_state;
	end->reason = j->final_reason[0] ? j->final_reason : NULL;
	/* known from NVML, or from the hook where it reported */
	end->peak_gpu_mem = -1;
	if ((j->gpu_peak != NULL && !e->gpus.is_virtual && e->gpus.lib != NULL) ||
	    engine_job_peak(e, j) > 0)
		end->peak_gpu_mem = (int64_t)engine_job_peak(e, j);
	if (end->peak_gpu_mem >= 0 && j->gpumask != 0) {
		int g;

		if (j->end_peaks == NULL) {
			j->end_peaks = calloc(SCHED_MAX_GPUS, sizeof(*j->end_peaks));
			j->end_uuids = calloc(SCHED_MAX_GPUS, sizeof(*j->end_uuids));
		}
		for (g = 0; j->end_peaks != NULL && j->end_uuids != NULL && g < e->gpus.n; g++)
			if (j->gpumask & (1ULL << g)) {
				j->end_uuids[end->npeaks] = e->gpus.gpus[g].uuid;
				j->end_peaks[end->npeaks++] = (int64_t)engine_gpu_peak(j, g);
			}
		end->peak_uuids = j->end_uuids;
		end->peaks = j->end_peaks;
	}
}

static void engine_wake_cb(uv_timer_t *);

/*
 * The environments of finished jobs, which are no longer needed and may
 * hold secrets, deleted in one commit (if nvqd stops before, store_open
 * deletes them).  Not those of jobs active again since (nvq restart gave
 * them a new one).
 */
static void
engine_env_flush(struct engine *e)
{
	int i;

	uv_timer_stop(&e->envgone_timer);
	if (e->nenvgone == 0)
		return;
	store_lazy_begin(e->store);
	for (i = 0; i < e->nenvgone; i++)
		if (engine_find(e, e->envgone[i]) == NULL)
			store_env_delete(e->store, e->envgone[i]);
	if (store_lazy_commit(e->store) == -1)
		log_warnx("cannot delete the environments of %d finished jobs; they go when "
		    "nvqd restarts", e->nenvgone);
	e->nenvgone = 0;
}

static void
engine_env_flush_cb(uv_timer_t *t)
{
	engine_env_flush(t->loop->data);
}

/*
 * What a finished job leaves, once the pass's starts are handed over (not
 * between a job's end and the next one's start): its status file, made a
 * spare (runner.h), and its environment, deleted with those of the jobs
 * that end in the next ENGINE_ENV_DELAY_MS (one commit, not one per job:
 * one at a time, that commit cost nvqd as much as a job's start).
 */
static void
engine_recycle(struct engine *e)
{
	char status[PATH_MAX];
	int i;

	/* below ENGINE_ENV_BATCH after each call, so a pass's ends always fit */
	_Static_assert(sizeof(e->envgone) / sizeof(e->envgone[0]) >= ENGINE_ENV_BATCH - 1 +
	    sizeof(e->recycle) / sizeof(e->recycle[0]), "envgone holds a batch and a pass");
	for (i = 0; i < e->nrecycle; i++) {
		engine_status_path(e, e->recycle[i], status, sizeof(status));
		runner_recycle(status, &e->spares);
		e->envgone[e->nenvgone++] = e->recycle[i];
	}
	e->nrecycle = 0;
	if (e->nenvgone == 0)
		return;
	if (e->nenvgone >= ENGINE_ENV_BATCH || e->stopping)
		engine_env_flush(e);
	else if (!uv_is_active((uv_handle_t *)&e->envgone_timer))
		uv_timer_start(&e->envgone_timer, engine_env_flush_cb, ENGINE_ENV_DELAY_MS, 0);
}

/* engine_recycle's work for job id, later in the pass. */
static void
engine_recycle_later(struct engine *e, int64_t id)
{
	if (e->nrecycle == (int)(sizeof(e->recycle) / sizeof(e->recycle[0]))) {
		engine_ends_close(e);	/* no status file of an end not committed goes */
		engine_recycle(e);
	}
	e->recycle[e->nrecycle++] = id;
}

/* Logs, forgets and drops a job whose end is committed. */
static void
engine_ended(struct engine *e, struct job *j)
{
	log_info("job %lld %s%s%s", (long long)j->id, j->final_state,
	    j->final_reason[0] ? ": " : "", j->final_reason);
	engine_recycle_later(e, j->id);
	engine_notice(e, j);
	engine_drop(e, j);
}

/*
 * nvq requeue, NODE_FAIL or preemption of a job submitted with --requeue,
 * or a start its shim never took (UNSTARTED): it goes back to PENDING.
 */
static int
engine_requeued(const struct job *j)
{
	return strcmp(j->final_state, "REQUEUED") == 0 ||
	    strcmp(j->final_state, "UNSTARTED") == 0 || (j->requeue &&
	    (strcmp(j->final_state, "NODE_FAIL") == 0 ||
	    strcmp(j->final_state, "PREEMPTED") == 0));
}

void
engine_charge(struct engine *e, struct job *j, uint64_t own, int64_t key, uint64_t shared)
{
	uint64_t more = 0;
	int i;

	if ((i = engine_user(e, j->uid)) < 0 ||
	    (key != 0 && stored_add(&e->shared, key, shared, &more) == -1)) {
		log_warnx("out of memory: job %lld's stored bytes go uncounted", (long long)j->id);
		return;
	}
	e->users[i].stored += own + more;
	j->stored = own;
	j->stored_key = key;
}

/* Replaces a job that went back to PENDING with a fresh one, as submitted. */
static void
engine_requeue(struct engine *e, struct job *j)
{
	struct engine_array arr = { j->array_id, j->array_index, j->array_limit };
	char status[PATH_MAX];

	log_info("job %lld %s: %s", (long long)j->id, j->final_state, j->final_reason);
	/* now: the job may start again in this pass, with a status file of that name */
	engine_status_path(e, j->id, status, sizeof(status));
	runner_recycle(status, &e->spares);
	if (engine_add(e, j->id, j->uid, j->gid, j->user, j->ngpus, j->mem, j->priority,
	    j->submitted_at, j->time_limit, j->after, j->nafter, j->array_id ? &arr : NULL) == -1)
		log_warnx("job %lld: out of memory; it runs after a restart of nvqd",
		    (long long)j->id);
	else {
		/* before j gives its count back: an array's share stays counted */
		if (j->stored > 0 || j->stored_key != 0)
			engine_charge(e, e->jobs, j->stored, j->stored_key, 0);
		e->jobs->requeue = j->requeue;
		e->jobs->preempt_signal = j->preempt_signal;
		e->jobs->placed = j->placed;
		e->jobs->allowed = j->allowed;
		e->jobs->notify = j->notify;
	}
	engine_drop(e, j);
}

/* A job's end as engine_finish recorded it, kept until it is committed. */
struct engine_end {
	int64_t		id;
	int		kind;		/* ENGINE_END_* */
	char		state[16], reason[256];
	struct store_end end;		/* its strings and peaks point into this */
	const char	*uuids[SCHED_MAX_GPUS];
	int64_t		peaks[SCHED_MAX_GPUS];
};
enum { ENGINE_END_END, ENGINE_END_REQUEUE, ENGINE_END_UNSTART };

static int
engine_end_kind(const struct job *j)
{
	if (strcmp(j->final_state, "UNSTARTED") == 0)
		return ENGINE_END_UNSTART;
	return engine_requeued(j) ? ENGINE_END_REQUEUE : ENGINE_END_END;
}

static int
engine_record_end(struct engine *e, int kind, int64_t id, const struct store_end *end)
{
	if (kind == ENGINE_END_UNSTART)
		return store_job_unstart(e->store, id, end->now);
	if (kind == ENGINE_END_REQUEUE)
		return store_job_requeue(e->store, id, end);
	return store_job_end(e->store, id, end);
}

/* Keeps a copy of j's end (e->ends, grown by engine_finish). */
static void
engine_end_keep(struct engine *e, const struct job *j, const struct store_end *end)
{
	struct engine_end *c = &e->ends[e->nends++];
	int i;

	c->id = j->id;
	c->kind = engine_end_kind(j);
	c->end = *end;
	snprintf(c->state, sizeof(c->state), "%s", end->state);
	c->end.state = c->state;
	if (end->reason != NULL) {
		snprintf(c->reason, sizeof(c->reason), "%s", end->reason);
		c->end.reason = c->reason;
	}
	for (i = 0; i < end->npeaks && i < SCHED_MAX_GPUS; i++) {
		c->uuids[i] = end->peak_uuids[i];	/* e->gpus' own: they stay */
		c->peaks[i] = end->peaks[i];
	}
	c->end.npeaks = i;
	c->end.peak_uuids = c->uuids;
	c->end.peaks = c->peaks;
}

/* Takes id off the status files the pass makes spares: a restart reads its record. */
static void
engine_recycle_forget(struct engine *e, int64_t id)
{
	int i;

	for (i = 0; i < e->nrecycle; i++)
		if (e->recycle[i] == id) {
			e->recycle[i] = e->recycle[--e->nrecycle];
			return;
		}
}

/*
 * Commits the ends engine_finish left in an open transaction (with the
 * starts recorded after them, if any).  If that fails, everything in it
 * is rolled back, and each end is recorded again on its own; an end that
 * cannot be recorded at all keeps its status file, which a restart of
 * nvqd reads.  0, or -1 if the transaction failed.
 */
static int
engine_ends_close(struct engine *e)
{
	int i, ok;

	if (!e->ends_open)
		return 0;
	e->ends_open = 0;
	ok = store_tx_commit(e->store) == 0;
	if (ok)
		e->unsynced = 0;
	else
		log_warnx("the ends of %d jobs cannot be committed (%s); recording them one by one",
		    e->nends, store_errmsg(e->store));
	for (i = 0; i < e->nends && !ok; i++) {
		if (engine_record_end(e, e->ends[i].kind, e->ends[i].id, &e->ends[i].end) == 0)
			continue;
		log_warnx("job %lld: cannot record its end (%s); it is read from its status "
		    "file when nvqd restarts", (long long)e->ends[i].id, e->ends[i].state);
		engine_recycle_forget(e, e->ends[i].id);
	}
	e->nends = 0;
	return ok ? 0 : -1;
}

/* Room in e->ends for n more.  0, or -1. */
static int
engine_ends_grow(struct engine *e, int n)
{
	struct engine_end *ne;
	int cap = e->cap_ends;

	while (cap < e->nends + n)
		cap = cap ? cap * 2 : 16;
	if (cap == e->cap_ends)
		return 0;
	if ((ne = realloc(e->ends, (size_t)cap * sizeof(*ne))) == NULL)
		return -1;
	e->ends = ne;
	e->cap_ends = cap;
	return 0;
}

/*
 * Records the end of every job that exited since the last pass, in one
 * transaction, and drops the jobs.  The transaction stays open
 * (e->ends_open) for the starts the pass decides next: one commit for a
 * job's end and the next one's start (engine_ends_close commits it before
 * anything else the pass writes).  If a row cannot be recorded, or no
 * copy of the ends can be kept, the ends are committed at once, each on
 * its own if the group fails, so that one bad row cannot hold the others
 * back; a job whose end cannot be recorded at all then keeps its GPUs and
 * is tried again in a second (a restart reconciles it too).
 */
static void
engine_finish(struct engine *e)
{
	struct store_end end;
	struct job *j, *next;
	int n = 0, ok, left = 0, hold;

	for (j = e->held; j != NULL; j = j->lnext)
		n += j->exited;
	if (n == 0)
		return;
	hold = engine_ends_grow(e, n) == 0;
	ok = store_tx_begin(e->store) == 0;
	for (j = e->held; j != NULL && ok; j = j->lnext) {
		if (!j->exited)
			continue;
		engine_final(e, j, &end);
		ok = engine_record_end(e, engine_end_kind(j), j->id, &end) == 0;
		if (ok && hold)
			engine_end_keep(e, j, &end);
	}
	if (ok && hold) {
		e->ends_open = 1;
		e->ends_mark = store_begins(e->store);
	} else {
		e->nends = 0;
		/* a failed row doomed the transaction: this rolls it back */
		ok = store_tx_commit(e->store) == 0 && ok;
	}
	/* each on its own, in its own transaction, if the batch failed */
	for (j = e->held; j != NULL; j = j->lnext) {
		if (!j->exited)
			continue;
		j->recorded = ok;
		if (!ok) {
			engine_final(e, j, &end);
			if (engine_record_end(e, engine_end_kind(j), j->id, &end) == -1) {
				log_warnx("job %lld: cannot record its end; trying again",
				    (long long)j->id);
				left++;
				continue;
			}
			j->recorded = 1;
		}
	}
	for (j = e->held; j != NULL; j = next) {
		next = j->lnext;
		if (!j->recorded)
			continue;
		if (engine_requeued(j))
			engine_requeue(e, j);
		else
			engine_ended(e, j);
	}
	/*
	 * Something the drops set off wrote (GPU control recording another
	 * job's switch): committed now, so that a failure of the starts'
	 * commit cannot take it back.
	 */
	if (e->ends_open && store_begins(e->store) != e->ends_mark)
		engine_ends_close(e);
	if (left > 0)
		e->retry = 1;
}

/* The GPUs whose UUIDs list names (comma-separated), by index. */
static uint64_t
engine_uuid_mask(const struct engine *e, const char *list)
{
	uint64_t mask = 0;
	const char *p = list, *end;
	size_t n;
	int g;

	while (p != NULL && *p != '\0') {
		end = strchr(p, ',');
		n = end ? (size_t)(end - p) : strlen(p);
		for (g = 0; g < e->gpus.n; g++)
			if (strlen(e->gpus.gpus[g].uuid) == n &&
			    strncmp(e->gpus.gpus[g].uuid, p, n) == 0)
				mask |= 1ULL << g;
		p = end ? end + 1 : NULL;
	}
	return mask;
}

void
engine_extras(struct engine *e, struct job *j, const struct engine_extra *x)
{
	engine_queue_out(e, j);
	j->parked = x->parked && j->state == JOB_PENDING;
	if (x->rank_at > 0)
		j->submitted_at = x->rank_at;	/* only the order reads it */
	j->top_at = x->top_at;
	if (x->allow != NULL || x->deny != NULL) {
		j->placed = 1;
		j->allowed = (x->allow != NULL ? engine_uuid_mask(e, x->allow) :
		    (e->gpus.n >= 64 ? ~0ULL : (1ULL << e->gpus.n) - 1)) &
		    ~engine_uuid_mask(e, x->deny);
	}
	engine_queue_in(e, j);
}

int
engine_park(struct engine *e, struct job *j, int parked, const char *why)
{
	if (store_job_held(e->store, j->id, parked, engine_now(), why) == -1)
		return -1;
	engine_queue_out(e, j);
	j->parked = parked;
	engine_queue_in(e, j);
	if (!parked && j->dep_wait)
		engine_dep_note(e, j->id);	/* its --after, looked at again */
	log_info("job %lld %s", (long long)j->id, why);
	engine_kick(e);
	return 0;
}

int
engine_modify(struct engine *e, struct job *j, const struct store_change *c, const char *why)
{
	if (store_job_modify(e->store, j->id, c, engine_now(), why) == -1)
		return -1;
	/* out of the order under its old keys, in again under the new */
	engine_queue_out(e, j);
	if (c->has_priority)
		j->priority = c->priority;
	if (c->has_mem)
		j->mem = c->mem;
	if (c->has_time)
		j->time_limit = c->time_limit;
	if (c->top_at > 0)
		j->top_at = c->top_at;
	engine_queue_in(e, j);
	log_info("job %lld %s", (long long)j->id, why);
	engine_kick(e);
	return 0;
}

double
engine_top_at(struct engine *e, const struct job *j)
{
	const struct order_node *n;
	const struct job *k;

	n = waitq_front(&e->wq, j->uid, j->ngpus == 0 ? WAITQ_CPU : WAITQ_GPU);
	for (; n != NULL; n = order_next(n)) {
		k = (const struct job *)(const void *)n;	/* on is its job's first field */
		if (k == j)
			return 0;
		if (k->priority == j->priority)
			return n->at - n->up_at - 0.001;
	}
	return 0;
}

int
engine_requeue_job(struct engine *e, struct job *j, const char *by)
{
	char why[128];

	snprintf(why, sizeof(why), "requeued by %s", by);
	return engine_stop(e, j, "REQUEUED", why);
}

int
engine_drain(struct engine *e, int i, int drained, const char *by, const char *reason)
{
	if (store_drain(e->store, e->gpus.gpus[i].uuid, drained, by, reason, engine_now()) == -1)
		return -1;
	if (drained)
		e->drained |= 1ULL << i;
	else
		e->drained &= ~(1ULL << i);
	log_info("GPU %d (%s) %s by %s%s%s", i, e->gpus.gpus[i].uuid, drained ? "drained" :
	    "undrained", by, reason && *reason ? ": " : "", reason ? reason : "");
	engine_kick(e);
	return 0;
}

int
engine_cancel(struct engine *e, struct job *j, const char *by)
{
	struct store_end end = { "CANCELLED", engine_now(), -1, 0, -1, -1, NULL, -1, 0, NULL, NULL };
	char why[128];

	snprintf(why, sizeof(why), "cancelled by %s", by);
	/* a cancel while it stops to be requeued: it ends CANCELLED instead */
	if (j->state != JOB_PENDING && strcmp(j->ending, "REQUEUED") == 0) {
		if (store_job_ending(e->store, j->id, "CANCELLED", why, engine_now()) == -1)
			return -1;
		snprintf(j->ending, sizeof(j->ending), "CANCELLED");
		snprintf(j->end_reason, sizeof(j->end_reason), "%s", why);
		return 0;
	}
	if (j->state != JOB_PENDING)
		return engine_stop(e, j, "CANCELLED", why);
	end.reason = why;
	if (store_job_end(e->store, j->id, &end) == -1)
		return -1;
	log_info("job %lld %s", (long long)j->id, why);
	engine_forget_env(e, j);
	engine_notice(e, j);
	engine_drop(e, j);
	engine_kick(e);
	return 0;
}

int
engine_attach(struct engine *e, struct job *j, const int fds[3])
{
	int i;

	engine_close_stdio(j);
	for (i = 0; i < 3; i++)
		j->stdio[i] = fds[i];
	if (j->parked && engine_park(e, j, 0, "released: nvq run attached") == -1) {
		engine_close_stdio(j);
		return -1;
	}
	return 0;
}

int
engine_cancel_many(struct engine *e, struct job *const *js, int n, const char *by,
    int64_t *failed)
{
	struct store_end end = { "CANCELLED", engine_now(), -1, 0, -1, -1, NULL, -1, 0, NULL, NULL };
	char why[128];
	int i, k = 0, grouped = 0, npending = 0;
	int64_t *ids;

	snprintf(why, sizeof(why), "cancelled by %s", by);
	end.reason = why;
	/*
	 * the pending ones' ends in one commit, which on a full disk takes the
	 * reserve (it frees room: their environments go); each on its own if
	 * it fails
	 */
	for (i = 0; i < n; i++)
		npending += js[i]->state == JOB_PENDING;
	if (npending > 1 && (ids = malloc(sizeof(*ids) * (size_t)npending)) != NULL) {
		for (i = 0, k = 0; i < n; i++)
			if (js[i]->state == JOB_PENDING)
				ids[k++] = js[i]->id;
		/* and their environments in one more, which may take the reserve too */
		if ((grouped = store_jobs_end(e->store, ids, k, &end) == 0) &&
		    store_envs_delete(e->store, ids, k) == -1)
			log_warnx("cannot delete the environments of %d cancelled jobs; they go "
			    "when nvqd restarts", k);
		free(ids);
		k = 0;
	}
	for (i = 0; i < n; i++) {
		struct job *j = js[i];

		if (!grouped || j->state != JOB_PENDING) {
			if (engine_cancel(e, j, by) == -1)
				failed[k++] = j->id;
			continue;
		}
		log_info("job %lld %s", (long long)j->id, why);
		engine_notice(e, j);
		engine_drop(e, j);
	}
	engine_kick(e);
	return k;
}

static void
engine_wake_cb(uv_timer_t *h)
{
	engine_kick(h->loop->data);
}

/* A pending job whose --after can never be met, and why: cancelled in a group. */
struct engine_doomed {
	struct job	*job;
	char		why[160];
};

/* Records the end of a job cancelled for its --after; 0 or -1. */
static int
engine_dep_end(struct engine *e, const struct engine_doomed *d, double now)
{
	struct store_end end;

	memset(&end, 0, sizeof(end));
	end.state = "CANCELLED";
	end.now = now;
	end.exit_code = -1;
	end.cpu_time = -1;
	end.max_rss = -1;
	end.peak_gpu_mem = -1;
	end.reason = d->why;
	return store_job_end(e->store, d->job->id, &end);
}

/*
 * Resolves every pending job's --after: marks whom it still waits for, and
 * cancels those that can never run.  Their ends go in one commit (each on
 * its own if the group fails), their environments in another: a job that
 * 100,000 others wait for ends in seconds, not one commit per dependent.
 */
/* The jobs to look at: a growing array of distinct jobs. */
struct engine_cands {
	struct engine	*e;
	struct job	**j;
	size_t		n, cap;
	int		failed;
};

static void
engine_cand_cb(void *owner, void *arg)
{
	struct engine_cands *c = arg;
	struct job *j = owner, **nj;

	if (j->dep_seen == c->e->dep_round || j->queue != JOB_Q_DEPS)
		return;
	if (c->n == c->cap) {
		if ((nj = realloc(c->j, (c->cap ? c->cap * 2 : 64) * sizeof(*nj))) == NULL) {
			c->failed = 1;
			return;
		}
		c->j = nj;
		c->cap = c->cap ? c->cap * 2 : 64;
	}
	j->dep_seen = c->e->dep_round;
	c->j[c->n++] = j;
}

/*
 * The waiting jobs that may have changed: those that came since the last
 * pass and the dependents of those that ended (deptab), or all of them if
 * memory ran out on the way.  0, or -1 if even that cannot be gathered.
 */
static int
engine_dep_cands(struct engine *e, struct engine_cands *c)
{
	struct job *j;
	size_t i;

	memset(c, 0, sizeof(*c));
	c->e = e;
	e->dep_round++;
	if (!e->deps_all)
		for (i = 0; i < e->ndep_ids; i++) {
			if ((j = engine_find(e, e->dep_ids[i])) != NULL)
				engine_cand_cb(j, c);
			deptab_each(&e->deptab, e->dep_ids[i], engine_cand_cb, c);
		}
	if (e->deps_all || c->failed) {
		c->n = 0;
		c->failed = 0;
		e->dep_round++;
		for (j = e->deps; j != NULL; j = j->lnext)
			engine_cand_cb(j, c);
	}
	if (c->failed) {
		free(c->j);
		return -1;	/* e->deps_all stays: tried again at the next pass */
	}
	e->ndep_ids = 0;
	e->deps_all = 0;
	return 0;
}

static void
engine_resolve(struct engine *e, double now)
{
	struct engine_doomed *d = NULL, *nd;
	struct engine_cands c;
	struct job *j;
	size_t n = 0, cap = 0, i, k;
	char why[160];
	int r, grouped;

	if (engine_dep_cands(e, &c) == -1) {
		e->deps_all = 1;
		log_warnx("out of memory resolving --after; trying again");
		return;
	}
	for (k = 0; k < c.n; k++) {
		j = c.j[k];
		if ((r = engine_deps(e, j, why, sizeof(why))) != -1) {
			if (r == 1) {
				/* ready: from the jobs waiting for --after to the order */
				engine_queue_out(e, j);
				j->dep_wait = 0;
				engine_queue_in(e, j);
			}
			continue;
		}
		if (n == cap) {
			cap = cap ? cap * 2 : 64;
			if ((nd = realloc(d, cap * sizeof(*d))) == NULL) {
				e->deps_all = 1;	/* the rest at the next pass */
				break;
			}
			d = nd;
		}
		d[n].job = j;
		snprintf(d[n].why, sizeof(d[n].why), "%s", why);
		n++;
	}
	free(c.j);
	if (n == 0) {
		free(d);
		return;
	}
	/* a crash before the commit: the next nvqd resolves them again */
	grouped = store_lazy_begin(e->store) == 0;
	for (i = 0; i < n && grouped; i++)
		grouped = engine_dep_end(e, &d[i], now) == 0;
	if (store_lazy_commit(e->store) == -1)
		grouped = 0;
	store_lazy_begin(e->store);
	for (i = 0; i < n; i++) {
		j = d[i].job;
		if (!grouped && engine_dep_end(e, &d[i], now) == -1) {
			engine_dep_note(e, j->id);	/* it stays pending; tried again */
			continue;
		}
		log_info("job %lld CANCELLED: %s", (long long)j->id, d[i].why);
		store_env_delete(e->store, j->id);
		engine_notice(e, j);
		engine_drop(e, j);
	}
	store_lazy_commit(e->store);
	free(d);
	engine_kick(e);	/* for jobs that ran --after these */
}

/* e->wq holds a job's on: the job is found from it */
_Static_assert(offsetof(struct job, on) == 0, "struct job's on must be its first field");

/* The waiting jobs for sched_walk: e->wq's two kinds, merged across users. */
struct engine_src {
	struct engine	*e;
	double		now;
};

static int
engine_src_next_cb(void *arg, int kind, struct sched_job *sj)
{
	struct engine_src *src = arg;
	struct order_node *n;

	n = waitq_next(&src->e->wq, kind == SCHED_SRC_CPU ? WAITQ_CPU : WAITQ_GPU);
	if (n == NULL)
		return 0;
	/* on is its job's first field */
	engine_sj(src->e, (struct job *)(void *)n, src->now, sj);
	return 1;
}

static void
engine_src_drop_cb(void *arg, uint32_t uid, int kind)
{
	struct engine_src *src = arg;

	waitq_drop(&src->e->wq, uid, WAITQ_GPU);
	if (kind == SCHED_SRC_ANY)
		waitq_drop(&src->e->wq, uid, WAITQ_CPU);
}

static double
engine_bonus_cb(void *arg, uint32_t uid)
{
	return fs_bonus(arg, uid);
}

/*
 * Fair share, before a pass: every user's use brought forward to now, at
 * the rates of the jobs running since the last pass; the active users (jobs
 * running, suspended or ready to start) ranked.  Counted also with
 * fairshare = off, so that turning it on finds the usage there.
 */
static void
engine_shares(struct engine *e, double now)
{
	struct job *j;
	int i, bad = 0;

	fs_advance(&e->fs, now, (double)e->cfg.fs_halflife);
	fs_begin(&e->fs);
	for (j = e->held; j != NULL; j = j->lnext)
		bad |= fs_use(&e->fs, j->uid, j->state == JOB_RUNNING ?
		    engine_gpu_share(e, j, j->gpumask) : 0);
	for (i = 0; i < e->wq.nu; i++)
		bad |= fs_use(&e->fs, e->wq.u[i].uid, 0);
	if (bad)
		log_warnx("out of memory counting users' GPU use for fair share");
	fs_rank(&e->fs, e->cfg.fs_weight);
	waitq_bonus(&e->wq, e->cfg.fairshare ? engine_bonus_cb : NULL, &e->fs);
}

const struct fairshare *
engine_usage(struct engine *e)
{
	fs_advance(&e->fs, engine_now(), (double)e->cfg.fs_halflife);
	fs_rank(&e->fs, e->cfg.fs_weight);
	return &e->fs;
}

/* Ends recorded without a synced commit after them: on disk before anyone hears. */
static void
engine_sync(struct engine *e)
{
	if (!e->unsynced)
		return;
	if (store_sync(e->store) == 0)
		e->unsynced = 0;
	else
		e->retry = 1;
}

static void	engine_ahead(struct engine *);

/* On the thread pool: the spawn, which waits for the shim's exec, off the loop. */
static void
engine_standby_work_cb(uv_work_t *w)
{
	struct engine *e = w->data;

	e->standby_err = runner_standby_start(&e->standby_next, e->shim) == -1 ? errno : 0;
}

/* Back on the loop: the new standby is the one the next start takes. */
static void
engine_standby_done_cb(uv_work_t *w, int status)
{
	struct engine *e = w->data;

	e->standby_busy = 0;
	if (status != 0)
		return;		/* cancelled before it ran: nothing started */
	if (e->standby_err != 0) {
		errno = e->standby_err;
		log_warn("cannot start a standby shim %s", e->shim);
		return;
	}
	if (e->stopping || e->standby.pid > 0)
		runner_standby_stop(&e->standby_next);
	else {
		e->standby = e->standby_next;
		engine_ahead(e);
	}
}

/*
 * A standby for the next start, if there is none: spawned on libuv's thread
 * pool, so that the loop goes on (recording the job that just started, the
 * next submit, the end) while the kernel makes the process.  A start before
 * it is ready spawns its own shim, as without one.
 */
static void
engine_standby_kick(struct engine *e)
{
	if (e->standby.pid > 0 || e->standby_busy || e->stopping)
		return;
	e->standby_work.data = e;
	e->standby_next.pid = -1;
	e->standby_next.fd = -1;
	e->standby_next.taken_fd = -1;
	if (uv_queue_work(e->loop, &e->standby_work, engine_standby_work_cb,
	    engine_standby_done_cb) == 0)
		e->standby_busy = 1;
	else if (runner_standby_start(&e->standby, e->shim) == -1)
		log_warn("cannot start a standby shim %s", e->shim);
}

/*
 * The next job's start, prepared before its turn: the job the last pass
 * put first among those waiting for room (e->next_id), handed to the
 * standby now, while the running jobs run.  Its supervisor sets up (cgroup,
 * memory account, environment) and waits for runner_go; the start then only
 * commits (engine_commit_start) and says go.  Only where what the job gets
 * is known before its turn: no GPU, or all of them with a fixed -m (its
 * budget then does not move with what NVML sees).  A prediction that turns
 * out wrong costs the standby (called off) and a spawned supervisor.
 */
static void
engine_ahead(struct engine *e)
{
	char uuids[SCHED_MAX_GPUS * 97];
	struct job *j = e->next_id != 0 ? engine_find(e, e->next_id) : NULL;
	uint64_t granted = 0;
	int64_t start;
	pid_t pid;
	int fd;

	if (j != NULL && (j->state != JOB_PENDING || j->prepared))
		j = NULL;
	if (j != NULL)
		granted = engine_gpus_of(e, j, e->next_mask, uuids, sizeof(uuids));
	if (e->ahead.id != 0 && (j == NULL || e->ahead.id != j->id ||
	    e->ahead.mask != e->next_mask || e->ahead.granted != granted))
		engine_ahead_drop(e, "another job is next");
	if (e->ahead.id != 0 || j == NULL || e->standby.pid <= 0 || e->stopping)
		return;
	engine_new_ticket(e, j);
	start = e->standby.start;
	if ((pid = engine_hand(e, j, e->next_mask, &fd)) > 0) {
		log_debug("job %lld: prepared ahead by supervisor %d", (long long)j->id, (int)pid);
		e->ahead.id = j->id;
		e->ahead.pid = pid;
		e->ahead.start = start;
		e->ahead.fd = fd;
		e->ahead.mask = e->next_mask;
		e->ahead.granted = granted;
	}
	engine_standby_kick(e);	/* a standby for any other start */
}

/*
 * The job a slot or GPU freed would go to: the first in the order of the
 * wait queue's two fronts (jobs of a GPU, jobs of none), if what it would
 * get can be told now (engine_ahead).  O(users), as a pass's start.  Jobs
 * the plan passed over for a user's limit are there too: when the user's
 * running job ends, the next is theirs.
 */
static void
engine_ahead_plan(struct engine *e, double now)
{
	struct order_node *n;
	struct sched_job sj, best;
	struct job *j = NULL, *c;
	int kind;

	e->next_id = 0;
	waitq_begin(&e->wq);
	for (kind = WAITQ_GPU; kind <= WAITQ_CPU; kind++) {
		if ((n = waitq_next(&e->wq, kind)) == NULL)
			continue;
		c = (struct job *)(void *)n;	/* on is its job's first field */
		engine_sj(e, c, now, &sj);
		if (j == NULL || sched_before(&sj, &best, &e->cfg.sched)) {
			j = c;
			best = sj;
		}
	}
	/* nvq run's (its terminal is handed over at its start), or GPUs not known yet */
	if (j == NULL || j->state != JOB_PENDING || j->stdio[0] >= 0 || j->stdio[1] >= 0 ||
	    j->stdio[2] >= 0)
		return;
	if (j->ngpus == 0)
		e->next_mask = 0;
	else if (j->ngpus == e->gpus.n && j->mem != 0 && e->gpus.n < 64 && !j->placed)
		e->next_mask = (1ULL << e->gpus.n) - 1;
	else
		return;
	e->next_id = j->id;
}

/*
 * One scheduling pass: dependencies, the plan, then the starts.  It looks
 * at the running and suspended jobs and at the front of the order only
 * (sched_walk): its cost does not grow with the queue behind.
 */
static void
engine_pass(struct engine *e)
{
	struct sched_gpu gpus[SCHED_MAX_GPUS];
	struct sched_plan plan;
	struct engine_src src = { 0 };
	struct sched_source source = { engine_src_next_cb, engine_src_drop_cb, &src, 0, 0 };
	struct job *j;
	double now = engine_now();
	int i, k, n = 0, ok, spawned = 0, unprepared = 0;
	uint64_t wake_ms;

	engine_finish(e);
	/* --after can only change when a job ended or came: no queries otherwise */
	if (e->ndep_ids > 0 || e->deps_all) {
		engine_ends_close(e);
		engine_resolve(e, now);
	}
	if (engine_grow(e, e->njobs) == -1) {
		log_warnx("out of memory planning %d jobs", e->njobs);
		engine_ends_close(e);
		engine_sync(e);
		engine_recycle(e);
		return;
	}
	for (i = 0; i < e->gpus.n; i++) {
		gpus[i].total = e->gpus.gpus[i].total;
		gpus[i].outside = e->gpus.gpus[i].outside;
		gpus[i].mode = config_mode(&e->cfg, i);
		gpus[i].quantum = gpus[i].mode == SCHED_TIMESLICE ? gpuctl_turn(e, i) : 0;
		gpus[i].drained = (e->drained >> i) & 1;
	}
	engine_shares(e, now);
	for (j = e->held; j != NULL; j = j->lnext) {
		engine_sj(e, j, now, &e->sj[n]);
		e->map[n++] = j;
	}
	src.e = e;
	src.now = now;
	waitq_begin(&e->wq);
	source.min_mem = waitq_min_mem(&e->wq);
	source.whole = waitq_whole(&e->wq);
	plan.dec = e->dec;
	plan.order = e->order;
	e->npass++;
	k = n;
	n = sched_walk(&e->pass, gpus, e->gpus.n, &e->cfg.sched, now, e->sj, n, e->cap,
	    &source, &plan);
	for (i = k; i < n; i++)
		e->map[i] = engine_find(e, e->sj[i].id);
	for (i = 0; i < n; i++) {
		e->map[i]->dec = plan.dec[i];
		e->map[i]->dec_pass = e->npass;
	}
	for (i = 0; i < n; i++)
		if (plan.dec[i].why == SCHED_RESUME) {
			struct gc_event ev = { .type = GC_EV_RESUME, .job = e->map[i]->id };

			engine_ends_close(e);	/* the resume's records are its own */
			engine_gpu(e, &ev, NULL, 0);
		}
	engine_preempt(e, gpus, n, now, &plan);
	if (plan.nstart > 0) {
		/*
		 * Commit every start of this pass at once, with the ends before
		 * them (engine_finish's open transaction), then act on them.  If
		 * the group fails, the ends are recorded again one by one
		 * (engine_ends_close), and the starts each on its own: a job
		 * whose start cannot be recorded stays pending and is tried again
		 * in a second.
		 */
		/* only the ends in it: nothing else is taken back if the starts fail */
		if (e->ends_open && store_begins(e->store) != e->ends_mark)
			engine_ends_close(e);
		ok = store_tx_begin(e->store) == 0;
		for (i = 0; i < n && ok; i++)
			if (plan.dec[i].why == SCHED_START)
				engine_commit_start(e, e->map[i], plan.dec[i].gpumask, now);
		/* the standby's job, handed over now: its setup overlaps the commit */
		for (i = 0; i < n && ok; i++)
			if (plan.dec[i].why == SCHED_START && e->map[i]->promised > 0 &&
			    e->map[i]->promised == e->standby.pid)
				engine_prepare(e, e->map[i], plan.dec[i].gpumask);
		ok = store_tx_commit(e->store) == 0 && ok;	/* inside the ends' */
		if (e->ends_open && engine_ends_close(e) == -1)
			ok = 0;
		if (ok)
			e->unsynced = 0;	/* the ends before went with it */
		else {
			/* rolled back, the standby's promise with it */
			e->standby_taken = 0;
			for (i = 0; i < n; i++) {
				if (e->map[i]->prepared)
					unprepared = 1;
				engine_unprepare(e, e->map[i]);
				e->map[i]->promised = 0;
			}
			for (i = 0; i < n; i++) {
				if (plan.dec[i].why != SCHED_START ||
				    engine_commit_start(e, e->map[i], plan.dec[i].gpumask, now) == 0)
					continue;
				log_warnx("job %lld: cannot record its start; it stays pending",
				    (long long)e->map[i]->id);
				plan.dec[i].why = SCHED_WAIT_MEM;
				e->map[i]->dec = plan.dec[i];
				e->retry = 1;
			}
		}
		/* a job that fails to start is freed: note the pids as we go */
		for (i = 0, k = 0; i < n; i++) {
			if (plan.dec[i].why != SCHED_START)
				continue;
			j = e->map[i];
			if (engine_spawn(e, j, plan.dec[i].gpumask, now) == 0) {
				/* its use counts from now on */
				fs_use(&e->fs, j->uid, engine_gpu_share(e, j, j->gpumask));
				spawned = 1;
				if (j->pid == j->promised)
					continue;	/* recorded with its start */
				e->started[k].id = j->id;
				e->started[k].pid = j->pid;
				e->started[k].pid_start = j->pid_start;
				e->started[k].cgroup = j->cgroup;
				k++;
			}
		}
		if (k > 0) {
			store_lazy_begin(e->store);
			for (i = 0; i < k; i++)
				store_job_set_pid(e->store, e->started[i].id, e->started[i].pid,
				    e->started[i].pid_start, e->boot_id, e->started[i].cgroup);
			store_lazy_commit(e->store);
		}
		/* the next job's shim, started while this one's runs */
		e->standby_taken = 0;
		if (spawned || unprepared)
			engine_standby_kick(e);
	}
	engine_ends_close(e);	/* no start followed the ends */
	engine_sync(e);
	engine_recycle(e);
	engine_ahead_plan(e, now);
	engine_ahead(e);
	wake_ms = plan.next_wake > 0 ? (uint64_t)((plan.next_wake - now) * 1000) + 1 : 0;
	/* something could not be recorded (disk full?): try again in a second */
	if (e->retry && (wake_ms == 0 || wake_ms > 1000))
		wake_ms = 1000;
	e->retry = 0;
	if (wake_ms > 0)
		uv_timer_start(&e->wake, engine_wake_cb, wake_ms, 0);
}

static void
engine_kick_cb(uv_idle_t *h)
{
	struct engine *e = h->loop->data;

	uv_idle_stop(&e->kick);
	e->kicked = 0;
	if (!e->stopping)
		engine_pass(e);
}

/* The running jobs' supervisors, by pid, while NVML's processes are counted. */
struct engine_owners {
	struct engine	*e;
	pid_t		*pids;		/* sorted */
	struct job	**jobs;		/* in the same order */
	int		n;
};

static int
engine_owner_cmp(const void *a, const void *b)
{
	const struct job *x = *(struct job *const *)a, *y = *(struct job *const *)b;

	return x->pid < y->pid ? -1 : x->pid > y->pid;
}

/*
 * Whether pid belongs to a running job, by member.h's rule (its supervisor
 * among its ancestors, or its session): a job's processes are never
 * outside use, whatever session they made for themselves.
 */
static int
engine_owner_cb(pid_t pid, int gpu, uint64_t bytes, void *arg)
{
	struct engine_owners *o = arg;
	struct job *j;
	pid_t root = member_root(pid, o->pids, o->n);
	int lo = 0, hi = o->n - 1, mid;

	if (root <= 0)
		return 0;
	while (lo <= hi) {
		mid = (lo + hi) / 2;
		if (o->pids[mid] == root) {
			j = o->jobs[mid];
			/* a job is all of its processes: add them up */
			if (j->gpu_acc != NULL && gpu >= 0 && gpu < o->e->gpus.n)
				j->gpu_acc[gpu] += bytes;
			return 1;
		}
		if (o->pids[mid] < root)
			lo = mid + 1;
		else
			hi = mid - 1;
	}
	return 0;
}

/* Reads NVML again, and each running job's use from its processes'. */
static int
engine_refresh(struct engine *e)
{
	struct engine_owners o = { e, NULL, NULL, 0 };
	struct job *j;
	int g, k, changed;

	for (j = e->held; j != NULL; j = j->lnext)
		if (j->gpu_acc != NULL)
			memset(j->gpu_acc, 0, (size_t)e->gpus.n * sizeof(uint64_t));
	if (!e->gpus.is_virtual && e->gpus.lib != NULL) {
		o.jobs = calloc((size_t)e->njobs + 1, sizeof(*o.jobs));
		o.pids = calloc((size_t)e->njobs + 1, sizeof(*o.pids));
		for (j = e->held; j != NULL && o.jobs != NULL && o.pids != NULL; j = j->lnext)
			if (j->state != JOB_PENDING && j->pid > 0)
				o.jobs[o.n++] = j;
		if (o.n > 0)
			qsort(o.jobs, (size_t)o.n, sizeof(*o.jobs), engine_owner_cmp);
		for (k = 0; k < o.n; k++)
			o.pids[k] = o.jobs[k]->pid;
	}
	changed = gpu_refresh(&e->gpus, engine_owner_cb, &o);
	free(o.jobs);
	free(o.pids);
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

static void
engine_poll_gpus_cb(uv_timer_t *h)
{
	struct engine *e = h->loop->data;
	struct job *j, *next;

	if (engine_refresh(e))
		engine_kick(e);
	else if (e->on_change != NULL)
		e->on_change(NULL);	/* the memory used may have moved */
	/* without pidfd, notice ended supervisors here */
	for (j = e->held; j != NULL; j = next) {
		next = j->lnext;
		if (j->state != JOB_PENDING && j->pidfd == -1 && j->pid > 0 &&
		    waitpid(j->pid, NULL, WNOHANG) != 0 && kill(j->pid, 0) == -1)
			engine_job_ended(e, j);
	}
}

/* The kernel's id of this boot: a job that started under another one is gone. */
static void
engine_boot_id(char *buf, size_t len)
{
	FILE *fp = fopen("/proc/sys/kernel/random/boot_id", "r");

	buf[0] = '\0';
	if (fp != NULL) {
		if (fgets(buf, (int)len, fp) == NULL)
			buf[0] = '\0';
		fclose(fp);
	}
	buf[strcspn(buf, "\n")] = '\0';
	if (buf[0] == '\0')
		log_warnx("cannot read the boot id: a reboot is noticed through pids alone");
}

static int
engine_mkdir(const char *path, mode_t mode)
{
	if (mkdir(path, mode) == -1 && errno != EEXIST)
		return -1;
	return 0;
}

/*
 * A helper of nvqd's (nvq-shim, libnvq-hook.so): beside nvqd's own
 * executable (a build tree), else in ../libexec/nvq from it (an installed
 * tree, whatever its PREFIX), else in the LIBEXECDIR it was built for.
 * Returns 0, or -1 if it is nowhere.
 */
static int
engine_find_helper(const char *name, char *out, size_t len)
{
	static const char *const rel[] = { "", "../libexec/nvq/" };
	char self[PATH_MAX], *slash;
	ssize_t n = readlink("/proc/self/exe", self, sizeof(self) - 1);
	size_t i;

	if (n > 0) {
		self[n] = '\0';
		if ((slash = strrchr(self, '/')) != NULL) {
			*slash = '\0';
			for (i = 0; i < sizeof(rel) / sizeof(rel[0]); i++) {
				snprintf(out, len, "%s/%s%s", self, rel[i], name);
				if (access(out, R_OK) == 0)
					return 0;
			}
		}
	}
	snprintf(out, len, "%s/%s", NVQ_LIBEXECDIR, name);
	return access(out, R_OK);
}

int
engine_init(struct engine *e, uv_loop_t *loop)
{
	char err[512], path[PATH_MAX];
	int i;

	e->loop = loop;
	loop->data = e;
	waitq_init(&e->wq);
	e->is_root = geteuid() == 0;
	engine_boot_id(e->boot_id, sizeof(e->boot_id));
	e->ticket_base = (unsigned long long)(engine_now() * 1e9);
	e->standby.pid = -1;	/* started after the first job's start */
	e->ahead.fd = -1;
	e->standby.fd = -1;
	e->standby.taken_fd = -1;
	if (e->is_root && e->cfg.cgroups) {
		if (cgroup_base(e->cgroup_base, sizeof(e->cgroup_base)) == 0)
			log_info("jobs run in cgroups under %s", e->cgroup_base);
		else {
			log_warn("no cgroup v2 for jobs (%s); they run in process groups",
			    *e->cgroup_base ? e->cgroup_base : "no cgroup2 mount");
			e->cgroup_base[0] = '\0';
		}
	}
	if ((e->store = store_open(e->cfg.database, e->cfg.sync_full, err, sizeof(err))) == NULL)
		log_fatalx("database: %s", err);
	notify_init(&e->notify, loop, e->store, &e->cfg, e->is_root);
	snprintf(path, sizeof(path), "%s/x", e->cfg.spool);
	/* the spool and its status folder: only nvqd writes them */
	if (engine_mkdir(e->cfg.spool, 0755) == -1) {
		/* parent folders, as for the database */
		char *p;
		for (p = path + 1; *p; p++)
			if (*p == '/') {
				*p = '\0';
				engine_mkdir(path, 0755);
				*p = '/';
			}
	}
	snprintf(path, sizeof(path), "%s/.status", e->cfg.spool);
	if (engine_mkdir(path, 0700) == -1)
		log_fatal("spool %s", path);
	runner_spares_clear(path);
	if (engine_find_helper("nvq-shim", e->shim, sizeof(e->shim)) == -1)
		log_fatalx("cannot find nvq-shim beside nvqd or in %s", NVQ_LIBEXECDIR);
	if (engine_find_helper("libnvq-hook.so", e->hook, sizeof(e->hook)) == -1) {
		log_warnx("cannot find libnvq-hook.so beside nvqd or in %s: jobs run without it, "
		    "and their memory budgets are not enforced", NVQ_LIBEXECDIR);
		e->hook[0] = '\0';
	} else
		log_info("jobs get %s", e->hook);
	if (engine_find_helper("nvq-ckpt", e->ckpt, sizeof(e->ckpt)) == -1) {
		log_warnx("cannot find nvq-ckpt beside nvqd or in %s: jobs cannot be suspended",
		    NVQ_LIBEXECDIR);
		e->ckpt[0] = '\0';
	}
	gpu_open(&e->gpus, &e->cfg);
	gpu_refresh(&e->gpus, NULL, NULL);
	log_info("%d GPUs from %s", e->gpus.n, e->gpus.source);
	for (i = 0; i < e->gpus.n; i++) {
		char t[16], o[16];
		fmt_size(e->gpus.gpus[i].total, t, sizeof(t));
		fmt_size(e->gpus.gpus[i].outside, o, sizeof(o));
		log_info("GPU %d: %s %s, %s, %s used outside the queue", i,
		    e->gpus.gpus[i].uuid, e->gpus.gpus[i].name, t, o);
	}
	uv_idle_init(loop, &e->kick);
	uv_timer_init(loop, &e->wake);
	uv_timer_init(loop, &e->poll);
	uv_timer_init(loop, &e->envgone_timer);
	uv_timer_init(loop, &e->locks);
	uv_prepare_init(loop, &e->io_prepare);
	uv_check_init(loop, &e->io_check);
	e->polling = e->read_from = engine_now();
	uv_prepare_start(&e->io_prepare, engine_io_prepare_cb);
	uv_check_start(&e->io_check, engine_io_check_cb);
	e->report = engine_report;
	return 0;
}

/* A row of the drained table: its GPU, if it is still there, drained again. */
static int
engine_drained_cb(void *arg, const struct store_col *c, int n)
{
	struct engine *e = arg;
	int g;

	for (g = 0; n > 0 && c[0].s != NULL && g < e->gpus.n; g++)
		if (strcmp(e->gpus.gpus[g].uuid, c[0].s) == 0)
			e->drained |= 1ULL << g;
	return 0;
}

/* A run from the database, counted in its user's recent use. */
static int
engine_usage_cb(void *arg, uint32_t uid, double gpu_share, double start, double end,
    double suspended)
{
	struct engine *e = arg;

	/* its time suspended is taken off its start: use further back counts less */
	return fs_add(&e->fs, uid, gpu_share, start + (suspended > 0 ? suspended : 0), end,
	    (double)e->cfg.fs_halflife) == -1;
}

void
engine_run(struct engine *e)
{
	double now = engine_now();

	if (store_drained(e->store, engine_drained_cb, e) == -1)
		log_warnx("cannot read which GPUs are drained");
	/* use older than 30 half-lives counts less than a billionth */
	fs_init(&e->fs, now);
	if (store_usage(e->store, now - 30.0 * (double)e->cfg.fs_halflife, now,
	    engine_usage_cb, e) == -1)
		log_warnx("cannot read the users' GPU use: fair share starts from none");
	/* outside use was read before the jobs were known: read it again */
	engine_refresh(e);
	uv_timer_start(&e->poll, engine_poll_gpus_cb, (uint64_t)e->cfg.gpu_poll * 1000,
	    (uint64_t)e->cfg.gpu_poll * 1000);
	engine_kick(e);
}

/* The order's keys depend on [scheduler] aging: files every ready job again. */
static void
engine_rekey(struct engine *e)
{
	struct job *j;

	for (j = e->jobs; j != NULL; j = j->next)
		if (j->queue == JOB_Q_READY)
			engine_queue_out(e, j);
	for (j = e->jobs; j != NULL; j = j->next)
		if (j->state == JOB_PENDING && j->queue == JOB_Q_NONE)
			engine_queue_in(e, j);
}

void
engine_reload(struct engine *e)
{
	struct gc_event changed = { .type = GC_EV_CHANGED };
	struct config c;
	char err[512];

	if (config_load(&c, e->config_path, err, sizeof(err)) == -1) {
		log_warnx("reload: %s; keeping the running configuration", err);
		return;
	}
	if (strcmp(c.socket, e->cfg.socket) != 0 || strcmp(c.database, e->cfg.database) != 0 ||
	    strcmp(c.spool, e->cfg.spool) != 0 || c.nvirtual != e->cfg.nvirtual ||
	    memcmp(c.virtual_mem, e->cfg.virtual_mem, sizeof(c.virtual_mem)) != 0 ||
	    c.sync_full != e->cfg.sync_full || c.cgroups != e->cfg.cgroups ||
	    c.slurm != e->cfg.slurm)
		log_warnx("reload: socket, database, spool, sync, cgroups, [gpus] virtual and "
		    "[cluster] engine change only on restart");
	/* everything reloads but what only a restart changes */
	memcpy(c.socket, e->cfg.socket, sizeof(c.socket));
	memcpy(c.database, e->cfg.database, sizeof(c.database));
	memcpy(c.spool, e->cfg.spool, sizeof(c.spool));
	memcpy(c.nvml_library, e->cfg.nvml_library, sizeof(c.nvml_library));
	memcpy(c.virtual_mem, e->cfg.virtual_mem, sizeof(c.virtual_mem));
	c.nvirtual = e->cfg.nvirtual;
	c.sync_full = e->cfg.sync_full;
	c.cgroups = e->cfg.cgroups;
	c.slurm = e->cfg.slurm;
	e->cfg = c;
	/* prepared with the configuration before (umask, limits, offload...) */
	engine_ahead_drop(e, "the configuration was reloaded");
	engine_rekey(e);
	log_init(c.log_level);
	uv_timer_start(&e->poll, engine_poll_gpus_cb, (uint64_t)e->cfg.gpu_poll * 1000,
	    (uint64_t)e->cfg.gpu_poll * 1000);
	log_info("configuration reloaded");
	engine_kick(e);
	engine_gpu(e, &changed, NULL, 0);
}

static void
engine_noop_close_cb(uv_handle_t *h)
{
	(void)h;
}

/* Leaves running jobs running: their supervisors outlive nvqd. */
void
engine_shutdown(struct engine *e)
{
	e->stopping = 1;
	engine_recycle(e);
	engine_ahead_drop(e, "nvqd stops");
	runner_standby_stop(&e->standby);
	reap_stop();
	notify_stop(&e->notify);
	while (e->jobs != NULL)
		engine_drop(e, e->jobs);
	uv_close((uv_handle_t *)&e->kick, engine_noop_close_cb);
	uv_close((uv_handle_t *)&e->wake, engine_noop_close_cb);
	uv_close((uv_handle_t *)&e->poll, engine_noop_close_cb);
	uv_close((uv_handle_t *)&e->envgone_timer, engine_noop_close_cb);
	uv_timer_stop(&e->locks);
	uv_close((uv_handle_t *)&e->locks, engine_noop_close_cb);
	uv_close((uv_handle_t *)&e->io_prepare, engine_noop_close_cb);
	uv_close((uv_handle_t *)&e->io_check, engine_noop_close_cb);
}

void
engine_free(struct engine *e)
{
	store_close(e->store);
	gpu_close(&e->gpus);
	free(e->sj);
	free(e->dec);
	free(e->order);
	free(e->map);
	free(e->started);
	free(e->users);
	free(e->gcq);
	jobtab_free(&e->jobtab);
	waitq_free(&e->wq);
	deptab_free(&e->deptab);
	gates_free(&e->gates);
	stored_free(&e->shared);
	fs_free(&e->fs);
	free(e->dep_ids);
	free(e->ends);
}
