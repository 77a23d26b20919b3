/*
 * engine.c: the engine's hub (see engine.h): start-up (engine_init,
 * engine_run), reload, shutdown, the scheduling pass and the one
 * dispatcher of GPU-control events (engine_gpu).  A job's life runs
 * through the rooms that engine_rooms.h lists, one stage each; this file
 * calls them, and they never call it: what they ask of it (a pass, a GPU
 * event for a job that is going) goes through engine_kick and e->gpu_job,
 * which engine_init sets, as e->report for hooks.c and suspend.c.
 *
 * Order of work for every transition: commit it to the store, then act on
 * it (fork, signal), so that a crash in between leaves something that
 * start-up reconciliation can repair.  Job structs own two optional libuv
 * handles; a finished job is unlinked at once and freed in the last close
 * callback.
 */
#include <errno.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "cglimit.h"
#include "cgroup.h"
#include "engine_rooms.h"
#include "gpuctl.h"
#include "hostres.h"
#include "log.h"
#include "reap.h"
#include "runner.h"
#include "preempt.h"

#define ENGINE_MAX_ENV	(1 << 20)

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

	preempt_choose(gpus, e->gpus.n, e->sj, n, &e->cfg.sched, now, plan, &pr);
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

static void
engine_wake_cb(uv_timer_t *h)
{
	engine_kick(h->loop->data);
}

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
				fairshare_use(&e->fs, j->uid, engine_gpu_share(e, j, j->gpumask));
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

static void
engine_poll_gpus_cb(uv_timer_t *h)
{
	struct engine *e = h->loop->data;
	struct job *j, *next;

	if (engine_refresh(e))
		engine_kick(e);
	else if (e->on_change != NULL)
		e->on_change(NULL);	/* the memory used may have moved */
	engine_energy_poll(e);
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

/* Says once where jobs' --mem and -c are enforced (cglimit.h), or that they are not. */
static void
engine_limits_where(const char *base)
{
	const char *m = cglimit_where(base, 0), *c = cglimit_where(base, 1);

	if (m != NULL && c != NULL)
		log_info("host memory limits (--mem) in %s, CPU quotas (-c) in %s", m, c);
	if (m == NULL)
		log_warnx("no memory controller for jobs' cgroups: --mem is counted for "
		    "admission but not enforced");
	if (c == NULL)
		log_warnx("no cpu controller for jobs' cgroups: -c is counted for admission "
		    "but not enforced");
	if (m == NULL || c == NULL)
		log_warnx("(the cgroup above %s must hold no process but nvqd's leaf: "
		    "DelegateSubgroup=nvqd under systemd 254+, or start nvqd in a cgroup of its "
		    "own; nvqd(8) CGROUPS)", base);
}

/* [resources] cpus and memory of 0: the machine's (hostres.h), said in the log. */
static void
engine_host(struct config *c)
{
	char a[16];

	hostres_detect(&c->sched.cpus, &c->sched.host_mem);
	fmt_size(c->sched.host_mem, a, sizeof(a));
	log_info("jobs share %d CPUs and %s of host memory ([resources])", c->sched.cpus, a);
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
	engine_host(&e->cfg);
	engine_boot_id(e->boot_id, sizeof(e->boot_id));
	e->ticket_base = (unsigned long long)(engine_now() * 1e9);
	e->standby.pid = -1;	/* started after the first job's start */
	e->ahead.fd = -1;
	e->standby.fd = -1;
	e->standby.taken_fd = -1;
	if (e->is_root && e->cfg.cgroups) {
		if (cgroup_base(e->cgroup_base, sizeof(e->cgroup_base)) == 0) {
			log_info("jobs run in cgroups under %s", e->cgroup_base);
			engine_limits_where(e->cgroup_base);
		}
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
	/* srun for jobs: first on their PATH, where Slurm does not start them */
	if (e->cfg.slurm || engine_find_helper("bin/srun", e->srun, sizeof(e->srun)) == -1)
		e->srun[0] = '\0';
	else
		*strrchr(e->srun, '/') = '\0';
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
	e->gpu_job = engine_gpu_job;
	e->kick_cb = engine_kick_cb;
	return 0;
}

/* A row of the drained table: its GPU, if it is still there, drained again. */
static int
engine_drained_cb(void *arg, const struct store_col *c, int n)
{
	struct engine *e = arg;
	int g;

	for (g = 0; n > 0 && c[0].s != NULL && g < e->gpus.n; g++)
		if (strcmp(e->gpus.gpus[g].uuid, c[0].s) == 0) {
			e->drained |= 1ULL << g;
			engine_drain_why(e, g, n > 2 ? c[2].s : NULL, n > 3 ? c[3].s : NULL);
		}
	return 0;
}

/* A run from the database, counted in its user's recent use. */
static int
engine_usage_cb(void *arg, uint32_t uid, double gpu_share, double start, double end,
    double suspended)
{
	struct engine *e = arg;

	/* its time suspended is taken off its start: use further back counts less */
	return fairshare_add(&e->fs, uid, gpu_share, start + (suspended > 0 ? suspended : 0), end,
	    (double)e->cfg.fs_halflife) == -1;
}

void
engine_run(struct engine *e)
{
	double now = engine_now();

	if (store_drained(e->store, engine_drained_cb, e) == -1)
		log_warnx("cannot read which GPUs are drained");
	/* use older than 30 half-lives counts less than a billionth */
	fairshare_init(&e->fs, now);
	if (store_usage(e->store, now - 30.0 * (double)e->cfg.fs_halflife, now,
	    engine_usage_cb, e) == -1)
		log_warnx("cannot read the users' GPU use: fair share starts from none");
	/* outside use was read before the jobs were known: read it again */
	engine_refresh(e);
	engine_energy_recovered(e);
	uv_timer_start(&e->poll, engine_poll_gpus_cb, (uint64_t)e->cfg.gpu_poll * 1000,
	    (uint64_t)e->cfg.gpu_poll * 1000);
	engine_kick(e);
}

/*
 * The order's keys depend on [scheduler] aging and the classes' priority
 * points ([qos NAME]): files every ready job again.
 */
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
	struct job *j;
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
	engine_host(&c);
	e->cfg = c;
	/* the classes may have moved or gone: each job's found again by its name */
	for (j = e->jobs; j != NULL; j = j->next)
		if ((j->qos_i = qos_find(&c.qos, j->qos)) == -1)
			j->qos_i = c.qos.dflt;
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
	deptab_free(&e->arrtab);
	gates_free(&e->gates);
	stored_free(&e->shared);
	fairshare_free(&e->fs);
	free(e->dep_ids);
	free(e->ends);
}
