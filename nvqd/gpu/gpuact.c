/*
 * gpuact.c: GPU control's side that acts (see gpuctl.h).  For each event
 * and pass it gathers what gpuctl.c decides from (struct gc_job: a job's
 * fields and what its hooks answered; struct gc_env: nvqd's settings),
 * calls gpuctl.c, and carries the actions it returns out, in order,
 * through hooks.c (tell, signal, cut, move), suspend.c (nvq-ckpt) and
 * store.c (the records); what the engine is to do after (re-arm a time
 * limit, a scheduling pass) it queues on gca.fx for engine_gpu().  A fact
 * an action gives back is answered: nvq-ckpt's pid (gpuctl_spawned), or
 * its failure to start, reported as NOSPAWN like any fact; a record a
 * request waits on (GPUCTL_RECORD) is decided again with its outcome.
 *
 * It also keeps the small reads and writes of a job's control that the
 * engine, ctl.c and web.c make outside a dispatch (gpuctl_init, _loaded,
 * _turn...).  In builds without NDEBUG, gpuctl_check runs after each
 * decision on each job it touched.  A broken rule is fatal where
 * NVQD_STRICT is set in nvqd's environment (the tests set it); elsewhere
 * it is logged, the first GPUACT_WARNS times: a daemon that jobs depend on
 * does not stop over a rule its own tests did not see broken.
 */
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "engine.h"
#include "gpuctl.h"
#include "hooks.h"
#include "jobtab.h"
#include "log.h"
#include "suspend.h"
#include "preempt.h"

#define GPUACT_WARNS	20	/* broken rules logged, outside strict runs */

#define GPUCTL_TURN_MIN	5.0	/* the shortest automatic turn */
/*
 * Before a switch is measured on a GPU, a suspend plus a resume of m bytes
 * is guessed from those measured on an H100 (docs/gpu-results.md): the
 * driver's checkpoint alone about 2 GB/s each way; with the hook's offload
 * about 8 GB/s for the round trip, plus 2 s of the driver's for the rest.
 */
#define SUSPEND_RATE	2e9
#define OFFLOAD_RATE	8e9
#define OFFLOAD_FIXED	2.0

const char *
gpuctl_lock_state(const struct job *j)
{
	switch (j->gc.lock) {
	case GC_STOPPED:
		return "stopped";
	case GC_GRANTED:
		return "granted";
	case GC_REVOKING:
		return "holding";	/* asked back, not acknowledged yet */
	default:
		return j->gc.held ? "held" : "waiting";
	}
}

void
gpuctl_init(struct job *j)
{
	free(j->gc.ckpt_pids);
	memset(&j->gc, 0, sizeof(j->gc));
	j->gc.lock = GC_GRANTED;
	j->gc.ckpt_bytes = -1;
	j->gc.move_bytes = -1;
}

void
gpuctl_started(struct job *j, double now)
{
	j->gc.slice_start = now;
}

void
gpuctl_loaded(struct job *j, int running, int held, double suspended_at, int hold,
    const char *ckpt_pids, double suspended_total, double now)
{
	j->gc.slice_start = now;	/* a restart: a full turn */
	j->gc.suspended_at = suspended_at;
	j->gc.hold = hold;
	j->gc.susp_total = suspended_total;
	if (ckpt_pids != NULL)
		j->gc.ckpt_pids = strdup(ckpt_pids);
	if (held) {
		j->gc.held = 1;	/* its processes get the lock back on release */
		j->gc.lock = GC_RELEASED;
	}
	if (!running)
		j->gc.lock = GC_RELEASED;	/* its hooks, linking again, wait for its resume */
}

void
gpuctl_pin(struct job *j, double until)
{
	j->gc.pinned_until = until;
}

void
gpuctl_free(struct job *j)
{
	free(j->gc.ckpt_pids);
	j->gc.ckpt_pids = NULL;
}

int
gpuctl_pinned(const struct job *j, double now)
{
	return j->gc.pinned_until > now || (j->nsess == 0 && j->gc.relink_until > now);
}

void
gpuctl_suspend_failed(struct job *j, const char *why, double now)
{
	gpuctl_unsusp(&j->gc, why, now);
}

int
gpuctl_unsuspendable(const struct job *j, double now, char *why, size_t len)
{
	if (j->hook_shared > 0) {
		if (why != NULL)
			snprintf(why, len, "it shares GPU memory");
		return 1;
	}
	if (j->gc.unsusp_until > now) {
		if (why != NULL)
			snprintf(why, len, "its suspend failed: %s", j->gc.error);
		return 1;
	}
	return 0;
}

double
gpuctl_turn(struct engine *e, int g)
{
	double cost = e->switch_cost[g], m = 0;
	const struct job *j;

	if (e->cfg.turn > 0)
		return e->cfg.turn;
	if (cost <= 0) {
		/* nothing measured yet: guess from the largest job there */
		for (j = e->held; j != NULL; j = j->lnext)
			if ((j->gpumask & (1ULL << g)) && (double)j->mem > m)
				m = (double)j->mem;
		cost = e->cfg.offload ? OFFLOAD_FIXED + m / OFFLOAD_RATE : 2 * m / SUSPEND_RATE;
	}
	return preempt_quantum(cost, e->cfg.switch_overhead, GPUCTL_TURN_MIN, 0);
}

int64_t
gpuctl_holder(const struct engine *e, int g)
{
	return g >= 0 && g < GPUCTL_MAX_GPUS ? e->gca.ts_holder[g] : 0;
}

/* ---- the facts ---- */

static void
gpuact_env(struct engine *e, struct gc_env *env)
{
	int g;

	memset(env, 0, sizeof(*env));
	env->ngpus = e->gpus.n;
	for (g = 0; g < e->gpus.n && g < GPUCTL_MAX_GPUS; g++) {
		if (config_compute(&e->cfg, g) == COMPUTE_TIMESLICE)
			env->compute_ts |= 1ULL << g;
		if (config_mode(&e->cfg, g) == SCHED_TIMESLICE)
			env->mode_ts |= 1ULL << g;
	}
	env->offload = e->cfg.offload != 0;
	env->ckpt = e->ckpt[0] != '\0';
	env->revoke_timeout = (double)e->cfg.revoke_timeout;
	env->switch_timeout = (double)e->cfg.switch_timeout;
	env->quantum = (double)e->cfg.quantum;
	env->read_from = e->read_from;
	env->switch_cost = e->switch_cost;
	env->sched = &e->cfg.sched;
	env->all = &e->gca;
}

static int
gpuact_state(const struct job *j)
{
	return j->state == JOB_RUNNING ? GC_JOB_RUNNING :
	    j->state == JOB_SUSPENDED ? GC_JOB_SUSPENDED : GC_JOB_OTHER;
}

/* What gpuctl.c sees of j; its hooks' answers where it may read them. */
static void
gpuact_view(struct engine *e, struct job *j, struct gc_job *v, double now)
{
	memset(v, 0, sizeof(*v));
	v->id = j->id;
	v->state = gpuact_state(j);
	v->gpumask = j->gpumask;
	v->mem = j->mem;
	v->requeue = j->requeue;
	v->nsess = j->nsess;
	v->exited = j->exited;
	v->ending = j->ending[0] != '\0';
	v->hook_shared = j->hook_shared;
	v->hook_staged = j->hook_staged;
	v->gc = &j->gc;
	if (j->gc.phase == GC_MOVE_OUT || j->gc.phase == GC_MOVE_IN)
		v->moving = hooks_moving(e, j);
	if (j->gc.lock != GC_REVOKING)
		return;
	v->acked = hooks_acked(e, j, j->gc.seq);
	v->cut_ready = hooks_cut_ready(e, j, j->gc.seq);
	v->cut_old = hooks_cut_old(e, j, j->gc.seq);
	v->cut_ranks = hooks_cut_ranks(e, j, j->gc.seq);
	/* read only once its revoke_timeout has passed */
	if (now >= j->gc.revoke_at + (double)e->cfg.revoke_timeout)
		hooks_cut_why(e, j, j->gc.seq, v->cut_why, sizeof(v->cut_why));
}

/* What a suspend of j needs from the host (gc_probe). */
static void
gpuact_probe(struct engine *e, struct job *j, struct gc_probe *p)
{
	hooks_pids(e, j, 1, p->pids, sizeof(p->pids));
	suspend_pids(j, p->pids, sizeof(p->pids));
	p->bytes = suspend_bytes(e, j);
	p->avail = suspend_host_available();
}

/* After a decision: j's state as gpuctl.c left it, and, in debug builds, its rules. */
static void
gpuact_after(struct job *j, const struct gc_job *v, int check)
{
#ifndef NDEBUG
	static int strict = -1, warned;
	char why[128];
#endif

	if (v->state != gpuact_state(j))
		j->state = v->state == GC_JOB_SUSPENDED ? JOB_SUSPENDED : JOB_RUNNING;
#ifndef NDEBUG
	if (!check || v->exited || gpuctl_check(v, why, sizeof(why)) == 0)
		return;
	if (strict == -1)
		strict = getenv("NVQD_STRICT") != NULL;
	if (strict)
		log_fatalx("job %lld: GPU control broke a rule: %s (lock %d, phase %d)",
		    (long long)j->id, why, j->gc.lock, j->gc.phase);
	if (warned < GPUACT_WARNS && ++warned)
		log_warnx("job %lld: GPU control broke a rule: %s (lock %d, phase %d)%s",
		    (long long)j->id, why, j->gc.lock, j->gc.phase,
		    warned == GPUACT_WARNS ? "; no more of these are logged" : "");
#else
	(void)check;
#endif
}

/* ---- the actions ---- */

/* A switch's record, as store.c takes it, into w (uuids: its room). */
static void
gpuact_switch(struct engine *e, struct job *j, const struct gc_switch *s,
    struct store_switch *w, char *uuids, size_t ulen)
{
	gpu_uuids(&e->gpus, j->gpumask, uuids, ulen);
	memset(w, 0, sizeof(*w));
	w->kind = s->kind;
	w->why = s->why;
	w->by_job = s->by_job;
	w->uuids = uuids;
	w->started_at = s->started_at;
	w->ended_at = s->ended_at;
	w->driver_seconds = s->driver_seconds;
	w->bytes = s->bytes;
	w->pids = s->pids;
	w->ok = s->ok;
	w->error = s->error;
	w->hook_bytes = s->hook_bytes;
	w->hook_seconds = s->hook_seconds;
}

/* Reports a fact an action gave back (queued: we are inside a dispatch). */
static void
gpuact_report(struct engine *e, int type, struct job *j, int64_t n, const char *error)
{
	struct gc_event ev = { .type = type, .job = j->id, .n = n };

	if (error != NULL)
		snprintf(ev.error, sizeof(ev.error), "%s", error);
	e->report(e, &ev);
}

/*
 * Carries out one action on j.  Returns 0, or -1 for a record that failed
 * (the store's why into err).
 */
static int
gpuact_one(struct engine *e, struct job *j, const struct gc_action *a, char *err,
    size_t errlen)
{
	char uuids[SCHED_MAX_GPUS * 97], why[256];
	struct store_switch w;
	int pid, r = 0;

	switch (a->kind) {
	case GC_ACT_LOG:
		if (a->text == NULL)
			break;
		if (a->n == GC_LOG_WARN)
			log_warnx("%s", a->text);
		else if (a->n == GC_LOG_INFO)
			log_info("%s", a->text);
		else
			log_debug("%s", a->text);
		break;
	case GC_ACT_LOCK:
		hooks_send_lock(e, j, (int)a->n, a->m);
		break;
	case GC_ACT_SIGNAL:
		hooks_signal(e, j, (int)a->n);
		break;
	case GC_ACT_CUT:
		hooks_cut_send(e, j, a->n);
		break;
	case GC_ACT_MOVE:
		/* nobody asked after all (a send failed): the switch goes on, as on the answers */
		if (hooks_move(e, j, a->n, (int)a->m) == 0 && a->x != 0)
			gpuact_report(e, GC_EV_MOVED, j, a->n, NULL);
		break;
	case GC_ACT_READY:
		suspend_ready(e, j);
		break;
	case GC_ACT_SPAWN:
		snprintf(why, sizeof(why), "out of memory");
		pid = a->text != NULL ? suspend_spawn(e, j, (int)a->m, a->text, why, sizeof(why)) : -1;
		if (pid == -1)
			gpuact_report(e, GC_EV_NOSPAWN, j, a->m, why);
		else
			gpuctl_spawned(&j->gc, pid);
		break;
	case GC_ACT_KILL:
		suspend_kill((int)a->n);
		break;
	case GC_ACT_PIDS:
		if (a->n && a->text == NULL) {
			snprintf(err, errlen, "out of memory");
			return -1;
		}
		r = store_job_ckpt_pids(e->store, j->id, a->n ? a->text : NULL);
		break;
	case GC_ACT_SUSPENDED:
		gpuact_switch(e, j, &a->sw, &w, uuids, sizeof(uuids));
		if (store_job_suspended(e->store, j->id, (int)a->n, a->text != NULL ? a->text : "",
		    &w) == -1)
			log_warnx("job %lld: cannot record its suspend; it is suspended all the same",
			    (long long)j->id);
		break;
	case GC_ACT_RESUMED:
		gpuact_switch(e, j, &a->sw, &w, uuids, sizeof(uuids));
		if (store_job_resumed(e->store, j->id, &w) == -1)
			log_warnx("job %lld: cannot record its resume; it runs all the same",
			    (long long)j->id);
		break;
	case GC_ACT_SWITCH:
		gpuact_switch(e, j, &a->sw, &w, uuids, sizeof(uuids));
		if (store_switch_record(e->store, j->id, (int)a->n, &w) == -1 && !a->sw.ok)
			log_warnx("job %lld: cannot record the failed %s", (long long)j->id,
			    a->sw.kind);
		break;
	case GC_ACT_UNHOLD:
		r = store_job_unhold(e->store, j->id, a->x, a->text != NULL ? a->text : "");
		break;
	case GC_ACT_UNHELD:
		if (store_job_held(e->store, j->id, 0, a->x, a->text != NULL ? a->text : "") == -1)
			log_warnx("job %lld: cannot record that its hold failed", (long long)j->id);
		break;
	case GC_ACT_COST:
		if (a->gpu >= 0 && a->gpu < SCHED_MAX_GPUS)
			e->switch_cost[a->gpu] = a->x;
		break;
	case GC_ACT_FX:
		if (j->gc.fx == 0) {
			j->gc.fx_next = e->gca.fx;
			e->gca.fx = j;
		}
		j->gc.fx |= (int)a->n;
		break;
	}
	if (r == -1)
		snprintf(err, errlen, "%s", store_errmsg(e->store));
	return r;
}

/*
 * Carries out acts, in order, each on its job (j, or found by id: the
 * pass's), then empties the list.  Returns the outcome of its records (a
 * suspend's pids, nvq resume's unhold: 0, or -1 with why in err, from the
 * last that failed); what other actions return does not hide it.  Actions
 * lost for want of memory make it -1 too: a request must not go on as if
 * its record were written.
 */
static int
gpuact_do(struct engine *e, struct job *j, struct gc_acts *acts, char *err, size_t errlen)
{
	struct job *t;
	int k, r = 0;

	if (acts->lost > 0) {
		log_warnx("gpu: out of memory: %d of GPU control's actions lost", acts->lost);
		snprintf(err, errlen, "nvqd is out of memory");
		r = -1;
	}
	for (k = 0; k < acts->n; k++) {
		t = j != NULL && acts->a[k].job == j->id ? j : jobtab_find(&e->jobtab, acts->a[k].job);
		if (t == NULL)
			continue;
		if (gpuact_one(e, t, &acts->a[k], err, errlen) == -1 &&
		    (acts->a[k].kind == GC_ACT_PIDS || acts->a[k].kind == GC_ACT_UNHOLD))
			r = -1;
	}
	gcacts_reset(acts);
	return r;
}

/* ---- the dispatch ---- */

int
gpuctl_event(struct engine *e, struct job *j, const struct gc_event *ev, double now, char *err,
    size_t errlen)
{
	struct gc_acts acts = { .quiet = !log_debugging() };
	struct gc_probe *probe = NULL;
	struct gc_event x = *ev;
	struct gc_env env;
	struct gc_job v;
	int r;

	if (j == NULL)
		return 0;	/* TIMER, CHANGED: the pass decides */
	gpuact_env(e, &env);
	gpuact_view(e, j, &v, now);
	for (;;) {
		r = gpuctl_decide(&v, &env, &x, now, &acts, err, errlen);
		gpuact_after(j, &v, ev->type != GC_EV_GONE && r != GPUCTL_PROBE);
		if (r == GPUCTL_PROBE) {
			if (probe == NULL && (probe = calloc(1, sizeof(*probe))) == NULL) {
				snprintf(err, errlen, "out of memory");
				r = -1;
				break;
			}
			gpuact_probe(e, j, probe);
			v.probe = probe;
			continue;
		}
		if (gpuact_do(e, j, &acts, x.error, sizeof(x.error)) == -1 && r == GPUCTL_RECORD)
			x.ok = -1;
		else if (r == GPUCTL_RECORD)
			x.ok = 1;
		if (r != GPUCTL_RECORD)
			break;
	}
	gcacts_free(&acts);
	free(probe);
	return r;
}

double
gpuctl_pass(struct engine *e, double now)
{
	struct gc_acts acts = { .quiet = !log_debugging() };
	struct gc_job *v = NULL;
	struct gc_env env;
	struct job *j, **map = NULL;
	double next;
	int n = 0, k;
	char err[8];

	for (j = e->held; j != NULL; j = j->lnext)
		n++;
	if (n > 0 && ((v = calloc((size_t)n, sizeof(*v))) == NULL ||
	    (map = calloc((size_t)n, sizeof(*map))) == NULL)) {
		log_warnx("gpu: out of memory: no pass over the locks now");
		free(v);
		return now + 1;
	}
	gpuact_env(e, &env);
	for (k = 0, j = e->held; j != NULL; j = j->lnext, k++) {
		map[k] = j;
		gpuact_view(e, j, &v[k], now);
	}
	next = gpuctl_decide_pass(v, n, &env, now, &acts);
	for (k = 0; k < n; k++)
		gpuact_after(map[k], &v[k], 1);
	gpuact_do(e, NULL, &acts, err, sizeof(err));
	gcacts_free(&acts);
	free(v);
	free(map);
	return next;
}
