/*
 * ctl_jobs.c: the requests about a job's life, from its submit to its end:
 * submit (handed to submit.c, which checks and stores it), cancel (and an
 * array's cancel, all its tasks at once), hold and release, top and
 * modify of a pending job, requeue, restart of finished jobs, and nvq
 * run's attach.  ctl.c's dispatcher has found the job a request names
 * (req->job, or req->slurm) and checked that the caller may act on it;
 * the handlers here do the work through the engine and the store.  Each
 * returns 0 or -1 with req->err set.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "ctl_jobs.h"
#include "ctl_req.h"
#include "dep.h"
#include "gpuctl.h"
#include "log.h"
#include "parse.h"
#include "qos.h"
#include "recover.h"
#include "submit.h"

/* A Slurm step this node follows (adopt.h) is Slurm's to stop: -1 with the error set. */
static int
ctl_jobs_slurm_step(struct ctl_req *r, const struct job *j, const char *verb)
{
	if (j->slurm_id == 0)
		return 0;
	return ctl_req_error(r, "job %lld is a step of Slurm job %lld on this node: nvqd does not "
	    "%s Slurm's steps (scancel %lld does)", (long long)j->id, (long long)j->slurm_id, verb,
	    (long long)j->slurm_id);
}

int
ctl_jobs_submit(struct ctl_req *r, struct proto_buf *out)
{
	struct submit_from from = { r->uid, r->gid, r->groups, r->ngroups, r->admin,
	    ctl_req_user };

	(void)out;	/* answered once stored (submit.c) */
	if (submit_request(r->e, r->conn, &from, r->msg, r->err, sizeof(r->err)) == -1)
		return -1;
	r->deferred = 1;
	return 0;
}

int
ctl_jobs_cancel(struct ctl_req *r, struct proto_buf *out)
{
	char by[64];
	struct job *j = r->job;
	int64_t id = ctl_req_id(r);

	/*
	 * pending_only: nvq cancel's first round over the jobs it names.  A job
	 * still pending is cancelled; anything else is answered "skipped", not
	 * refused, and comes again in the second round, which says what is
	 * wrong.  So none of the named jobs starts in between: a running one
	 * cancelled first could free its GPU for a pending one named after it.
	 * (One the caller may not act on, or not active, the dispatcher skips.)
	 */
	if (proto_int(r->msg, "pending_only", 0) != 0 &&
	    (r->slurm || j->state != JOB_PENDING || j->slurm_id != 0)) {
		proto_put_int(out, "skipped", 1);
		return 0;
	}
	if (r->slurm)
		return ctl_req_slurm(r, out, "cancel");
	if (ctl_jobs_slurm_step(r, j, "cancel") == -1)
		return -1;
	ctl_req_user(r->uid, by, sizeof(by));
	if (engine_cancel(r->e, j, by) == -1)
		return ctl_req_error(r, "cannot record the cancel of job %lld (see nvqd's log)",
		    (long long)id);
	return 0;
}

int
ctl_jobs_cancel_tasks(struct ctl_req *r, struct job **js, int k, struct proto_buf *out,
    int *skipped)
{
	int64_t *ids, *failed;
	char by[64];
	int i, n, nf;

	if ((ids = calloc((size_t)k + 1, sizeof(*ids))) == NULL ||
	    (failed = calloc((size_t)k + 1, sizeof(*failed))) == NULL) {
		free(ids);
		snprintf(r->err, sizeof(r->err), "out of memory");
		return -1;
	}
	/* ids[] first: a cancelled pending job is freed */
	for (i = 0; i < k; i++)
		ids[i] = js[i]->id;
	ctl_req_user(r->uid, by, sizeof(by));
	nf = engine_cancel_many(r->e, js, k, by, failed);
	for (i = 0; i < k; i++) {
		for (n = 0; n < nf && failed[n] != ids[i]; n++)
			;
		if (n == nf)
			proto_put_int(out, "id", ids[i]);
	}
	*skipped = nf;
	if (nf > 0)
		ctl_req_error(r, "cannot record the cancel of job %lld (see nvqd's log)",
		    (long long)failed[0]);
	free(ids);
	free(failed);
	return k - nf;
}

/* nvq hold / nvq release: the job's GPU locks, taken back or given again. */
int
ctl_jobs_hold(struct ctl_req *r, struct proto_buf *out)
{
	int held = r->msg->type == MSG_HOLD;
	struct gc_event ev = { .type = GC_EV_HOLD };
	const char *verb = held ? "hold" : "release";
	char by[64], why[128];
	struct job *j = r->job;
	int64_t id = ctl_req_id(r);

	if (r->slurm)
		return ctl_req_slurm(r, out, verb);
	if (j->state == JOB_PENDING) {
		/* held while pending: it does not start until released */
		if (j->parked == held)
			return ctl_req_error(r, "job %lld is %s", (long long)id,
			    held ? "held already" : "not held");
		ctl_req_user(r->uid, by, sizeof(by));
		snprintf(why, sizeof(why), "%s by %s", held ? "held" : "released", by);
		if (engine_park(r->e, j, held, why) == -1)
			return ctl_req_error(r, "cannot record the %s of job %lld (see nvqd's log)",
			    verb, (long long)id);
		proto_put_int(out, "id", id);
		proto_put_str(out, "state", "PENDING");
		return 0;
	}
	if (j->state != JOB_RUNNING)
		return ctl_req_error(r, "job %lld is suspended; nvq resume %lld first",
		    (long long)id, (long long)id);
	if (j->gc.held == held)
		return ctl_req_error(r, "job %lld is %s", (long long)id,
		    held ? "held already" : "not held");
	ctl_req_user(r->uid, by, sizeof(by));
	snprintf(why, sizeof(why), "%s by %s", held ? "held" : "released", by);
	if (store_job_held(r->e->store, id, held, engine_now(), why) == -1)
		return ctl_req_error(r, "cannot record the %s of job %lld (see nvqd's log)", verb,
		    (long long)id);
	ev.job = id;
	ev.n = held;
	engine_gpu(r->e, &ev, NULL, 0);
	log_info("job %lld %s", (long long)id, why);
	proto_put_int(out, "id", id);
	proto_put_str(out, "lock", gpuctl_lock_state(j));
	return 0;
}

/* The pending job a request names (req->job), for verb; NULL with the error set. */
static struct job *
ctl_jobs_pending(struct ctl_req *r, const char *verb)
{
	struct job *j = r->job;

	if (j->state != JOB_PENDING) {
		ctl_req_error(r, "job %lld is %s; only a pending job can be %s", (long long)j->id,
		    j->state == JOB_RUNNING ? "running" : "suspended",
		    strcmp(verb, "top") == 0 ? "moved to the top" : "modified");
		return NULL;
	}
	return j;
}

/* nvq top and nvq modify: the change committed and done, or the error. */
static int
ctl_jobs_change(struct ctl_req *r, struct proto_buf *out, struct job *j,
    const struct store_change *c, const char *why)
{
	if (engine_modify(r->e, j, c, why) == -1)
		return ctl_req_error(r, "cannot record the change of job %lld (see nvqd's log)",
		    (long long)j->id);
	proto_put_int(out, "id", j->id);
	return 0;
}

/*
 * nvq top: the job goes first among its owner's waiting jobs of its
 * priority.  Other users' jobs see it where they saw it: its aging counts
 * from its own submission, never from another job's (engine_top_at).
 */
int
ctl_jobs_top(struct ctl_req *r, struct proto_buf *out)
{
	struct store_change c = { 0 };
	struct job *j;
	char by[64], why[128];

	if ((j = ctl_jobs_pending(r, "top")) == NULL)
		return -1;
	if ((c.top_at = engine_top_at(r->e, j)) == 0) {
		proto_put_int(out, "id", j->id);	/* first among them already */
		return 0;
	}
	ctl_req_user(r->uid, by, sizeof(by));
	snprintf(why, sizeof(why), "moved to the top of priority %d by %s", j->priority, by);
	return ctl_jobs_change(r, out, j, &c, why);
}

/*
 * nvq modify -c and --mem: a --mem-per-cpu job's memory follows its CPUs;
 * what could never run here is refused.  0, or -1 with the error set.
 */
static int
ctl_jobs_modify_host(struct ctl_req *r, const struct job *j, struct store_change *c)
{
	const struct sched_settings *s = &r->e->cfg.sched;
	char a[16], b[16];

	if (c->has_cpus && !c->has_host_mem && j->mem_per_cpu > 0) {
		c->has_host_mem = 1;
		c->host_mem = j->mem_per_cpu * (uint64_t)c->cpus;
		c->mem_per_cpu = j->mem_per_cpu;
	}
	if (c->has_cpus && s->cpus > 0 && c->cpus > s->cpus)
		return ctl_req_error(r, "job %lld could never run so: %d CPUs, this server gives "
		    "jobs %d ([resources] cpus); it is unchanged", (long long)j->id, c->cpus,
		    s->cpus);
	if (c->has_host_mem && s->host_mem > 0 && c->host_mem > s->host_mem) {
		fmt_size(c->host_mem, a, sizeof(a));
		fmt_size(s->host_mem, b, sizeof(b));
		return ctl_req_error(r, "job %lld could never run so: %s of host memory, this "
		    "server gives jobs %s ([resources] memory); it is unchanged",
		    (long long)j->id, a, b);
	}
	return 0;
}

/* nvq modify ID [-p PRIORITY] [-m GPU_MEM] [-c CPUS] [--mem SIZE] [-t TIME]: a pending job's demands. */
int
ctl_jobs_modify(struct ctl_req *r, struct proto_buf *out)
{
	const struct proto_msg *m = r->msg;
	struct store_change c = { 0 };
	struct job *j;
	char by[64], why[256], a[24], over[512];
	size_t off;
	int i;

	if ((j = ctl_jobs_pending(r, "modify")) == NULL)
		return -1;
	for (i = 0; i < m->nfields; i++) {
		if (m->fields[i].kind != 'i')
			continue;
		if (strcmp(m->fields[i].key, "priority") == 0) {
			c.has_priority = 1;
			if (m->fields[i].i < -SUBMIT_MAX_PRIO || m->fields[i].i > SUBMIT_MAX_PRIO)
				return ctl_req_error(r, "priority must be from -%d to %d",
				    SUBMIT_MAX_PRIO, SUBMIT_MAX_PRIO);
			c.priority = (int)m->fields[i].i;
		} else if (strcmp(m->fields[i].key, "mem") == 0) {
			c.has_mem = 1;
			if (m->fields[i].i < 0)
				return ctl_req_error(r, "memory must not be negative");
			c.mem = (uint64_t)m->fields[i].i;
		} else if (strcmp(m->fields[i].key, "time") == 0) {
			c.has_time = 1;
			if (m->fields[i].i < 0 || m->fields[i].i > PARSE_MAX_LIMIT)
				return ctl_req_error(r, "the time limit must be from 0 to %lld "
				    "days", PARSE_MAX_LIMIT / 86400);
			c.time_limit = m->fields[i].i;
		} else if (strcmp(m->fields[i].key, "cpus") == 0) {
			c.has_cpus = 1;
			if (m->fields[i].i < 1 || m->fields[i].i > 65536)
				return ctl_req_error(r, "-c: CPUs must be from 1 to 65536");
			c.cpus = (int)m->fields[i].i;
		} else if (strcmp(m->fields[i].key, "host_mem") == 0) {
			c.has_host_mem = 1;
			if (m->fields[i].i <= 0)
				return ctl_req_error(r, "--mem: host memory must be above 0");
			c.host_mem = (uint64_t)m->fields[i].i;
		}
	}
	if (!c.has_priority && !c.has_mem && !c.has_time && !c.has_cpus && !c.has_host_mem)
		return ctl_req_error(r, "nothing to change: give -p, -m, -c, --mem or -t");
	if (ctl_jobs_modify_host(r, j, &c) == -1)
		return -1;
	if (c.has_priority && c.priority > j->priority && !r->admin &&
	    submit_prio_over(r->e, c.priority, over, sizeof(over)) == -1)
		return ctl_req_error(r, "%s", over);
	if (c.has_mem && j->ngpus == 0)
		return ctl_req_error(r, "job %lld uses no GPU: -m is memory per GPU",
		    (long long)j->id);
	if (c.has_mem) {
		char fit[256];

		if (submit_could_fit(r->e, j->ngpus, c.mem, fit, sizeof(fit)) == -1)
			return ctl_req_error(r, "job %lld could never run so: %s; it is unchanged",
			    (long long)j->id, fit);
	}
	ctl_req_user(r->uid, by, sizeof(by));
	off = (size_t)snprintf(why, sizeof(why), "modified by %s:", by);
	if (c.has_priority)
		off += (size_t)snprintf(why + off, sizeof(why) - off, " priority %d -> %d",
		    j->priority, c.priority);
	if (c.has_mem) {
		fmt_size(c.mem, a, sizeof(a));
		off += (size_t)snprintf(why + off, sizeof(why) - off, " mem %s",
		    c.mem ? a : "whole GPU");
	}
	if (c.has_cpus)
		off += (size_t)snprintf(why + off, sizeof(why) - off, " cpus %d", c.cpus);
	if (c.has_host_mem) {
		fmt_size(c.host_mem, a, sizeof(a));
		off += (size_t)snprintf(why + off, sizeof(why) - off, " host mem %s", a);
	}
	if (c.has_time) {
		fmt_elapsed(c.time_limit, a, sizeof(a));
		snprintf(why + off, sizeof(why) - off, " time %s", c.time_limit ? a : "none");
	}
	return ctl_jobs_change(r, out, j, &c, why);
}

/* nvq requeue: a running (or suspended) job is stopped and queued again. */
int
ctl_jobs_requeue(struct ctl_req *r, struct proto_buf *out)
{
	struct job *j = r->job;
	char by[64];

	if (ctl_jobs_slurm_step(r, j, "requeue") == -1)
		return -1;
	if (j->state == JOB_PENDING)
		return ctl_req_error(r, "job %lld is pending already", (long long)j->id);
	if (j->ending[0] != '\0')
		return ctl_req_error(r, "job %lld is ending already (%s)", (long long)j->id,
		    j->ending);
	ctl_req_user(r->uid, by, sizeof(by));
	if (engine_requeue_job(r->e, j, by) == -1)
		return ctl_req_error(r, "cannot record the requeue of job %lld (see nvqd's log)",
		    (long long)j->id);
	proto_put_int(out, "id", j->id);
	return 0;
}

static int
ctl_jobs_restart_add_cb(void *arg, const struct store_active_job *a)
{
	return recover_add(arg, a) == -1 ? 1 : 0;
}

/* What nvq restart checks of a job before it restarts it. */
struct ctl_jobs_restart_row {
	uint32_t	uid;
	int		gpus;
	uint64_t	mem;
	char		state[16];
	int		found;
	int		slurm;		/* it ran under Slurm */
	uint64_t	row;		/* store_active_job's stored_row */
	int		priority;
	char		qos[QOS_NAME_MAX + 1];	/* its class; "": the default */
	int		lc;		/* --class lc */
};

static int
ctl_jobs_restart_row_cb(void *arg, const struct store_active_job *a)
{
	struct ctl_jobs_restart_row *x = arg;

	x->uid = a->uid;
	x->gpus = a->gpus;
	x->mem = a->mem_per_gpu;
	snprintf(x->state, sizeof(x->state), "%s", a->state ? a->state : "?");
	x->found = 1;
	x->slurm = a->slurm_id >= 0;
	x->row = a->stored_row;
	x->priority = a->priority;
	snprintf(x->qos, sizeof(x->qos), "%s", a->qos ? a->qos : "");
	x->lc = a->lc;
	return 0;
}

/*
 * Whether finished job id may be restarted by the caller: 0, with the
 * bytes its row keeps added to *bytes, or -1 with the error set.  Whose
 * it is comes with its row, read here, so the row's rule (only its owner)
 * is checked here, in the order nvq restart has always said what is wrong.
 */
static int
ctl_jobs_restart_check(struct ctl_req *r, int64_t id, uint64_t *bytes, int *nlc)
{
	struct ctl_jobs_restart_row x = { 0 };
	struct ctl_owner o = { id, 0, NULL };
	char why[256];
	int k;

	if (store_active_one(r->e->store, id, ctl_jobs_restart_row_cb, &x) == -1)
		return ctl_req_error(r, "the database could not be read (see nvqd's log)");
	if (!x.found)
		return ctl_req_error(r, "no such job %lld", (long long)id);
	o.uid = x.uid;
	if (ctl_req_may(r, &o) == -1)	/* its row's rule: only its owner */
		return -1;
	if (strcmp(x.state, "PENDING") == 0 || strcmp(x.state, "RUNNING") == 0 ||
	    strcmp(x.state, "SUSPENDED") == 0)
		return ctl_req_error(r, "job %lld is %s: only a finished job can be restarted%s",
		    (long long)id, x.state, strcmp(x.state, "PENDING") == 0 ? "" :
		    " (nvq requeue stops a running one and queues it again)");
	if (x.slurm)
		return ctl_req_error(r, "job %lld ran under Slurm: submit it again", (long long)id);
	if (x.gpus > 0 && submit_could_fit(r->e, x.gpus, x.mem, why, sizeof(why)) == -1)
		return ctl_req_error(r, "job %lld could never run now: %s", (long long)id, why);
	/* its priority and class as a submit now would be: the settings may have changed */
	if (!r->admin && submit_prio_over(r->e, x.priority, why, sizeof(why)) == -1)
		return ctl_req_error(r, "job %lld: %s", (long long)id, why);
	if (!r->admin && x.qos[0] != '\0' && (k = qos_find(&r->e->cfg.qos, x.qos)) >= 0 &&
	    !qos_may_use(&r->e->cfg.qos.c[k], r->uid, r->gid, r->groups, r->ngroups))
		return ctl_req_error(r, "job %lld is of class %s, which you may not use now: submit "
		    "it again", (long long)id, x.qos);
	if (x.lc && !lcclass_may_use(&r->e->cfg.lcbe, r->uid, r->gid, r->groups, r->ngroups))
		return ctl_req_error(r, "job %lld is latency-critical (--class lc), which you may "
		    "not submit now: submit it again", (long long)id);
	*nlc += x.lc != 0;
	*bytes += x.row;
	return 0;
}

/*
 * Restarted job ids[i], if it is a singleton, waits again as at its submit
 * for its user's active jobs of its name: not for the restart's own jobs
 * after it in ids (sorted), which wait for it in turn.
 */
static void
ctl_jobs_restart_single(struct ctl_req *r, const int64_t *ids, int n, int i)
{
	char name[SUBMIT_MAX_NAME + 1], after[DEP_MAX_TEXT], text[DEP_MAX_TEXT];
	uint32_t uid;

	if (store_job_named(r->e->store, ids[i], &uid, name, sizeof(name), after,
	    sizeof(after)) != 0 || strstr(after, "singleton") == NULL)
		return;
	if (submit_singleton_again(r->e, uid, name, ids + i, n - i, after, text,
	    sizeof(text)) == -1 || store_job_set_after(r->e->store, ids[i], text) == -1)
		log_warnx("job %lld: restarted, but its --dependency singleton could not be worked "
		    "out again: it waits only for what it waited for before", (long long)ids[i]);
}

/*
 * nvq restart ID... / --failed [--since]: finished jobs PENDING again, the
 * same jobs with a new run to come, with the caller's environment (a job's
 * own is deleted when it ends).  All or none.
 */
int
ctl_jobs_restart(struct ctl_req *r, struct proto_buf *out)
{
	const struct proto_msg *m = r->msg;
	int64_t *ids = NULL, *p;
	char by[64], why[128], *env = NULL;
	uint64_t rows = 0;
	int i, n = 0, cap = 0, envn, npending, nlc = 0, rc = -1;
	int64_t lcmax = r->e->cfg.lcbe.max_jobs_per_user;

	if (r->e->slurm != NULL)
		return ctl_req_error(r, "nvq restart does not work with [cluster] engine = slurm "
		    "yet: submit the job again");
	if (submit_env_check(r->e, m, r->err, sizeof(r->err)) == -1)
		return -1;
	if (proto_int(m, "failed", 0)) {
		if (store_restartable(r->e->store, r->uid, (double)proto_int(m, "since", 0),
		    &ids, &n) == -1)
			return ctl_req_error(r, "the database could not be read (see nvqd's log)");
		if (n == 0)
			return ctl_req_error(r, "no job of yours ended FAILED, TIMEOUT or "
			    "NODE_FAIL%s", proto_int(m, "since", 0) ? " since then" : "");
	} else {
		for (i = 0; i < m->nfields; i++) {
			if (strcmp(m->fields[i].key, "id") != 0 || m->fields[i].kind != 'i')
				continue;
			if (n == cap) {
				cap = cap ? cap * 2 : 16;
				if ((p = realloc(ids, sizeof(*p) * (size_t)cap)) == NULL) {
					snprintf(r->err, sizeof(r->err), "out of memory");
					goto out;
				}
				ids = p;
			}
			ids[n++] = m->fields[i].i;
		}
		if (n == 0)
			return ctl_req_error(r, "no job id given");
	}
	/* an id given twice is one restart */
	qsort(ids, (size_t)n, sizeof(*ids), parse_cmp_i64);
	for (i = 1, cap = 1; i < n; i++)
		if (ids[i] != ids[cap - 1])
			ids[cap++] = ids[i];
	n = cap;
	/* first, before a lookup per job: a request past the limit does no work of n */
	if (r->uid != 0 && r->e->cfg.max_pending > 0 && (npending = engine_pending(r->e, r->uid) +
	    submit_queued(r->uid)) + n > r->e->cfg.max_pending) {
		ctl_req_error(r, "%d pending jobs and %d more would be over [limits] max_pending "
		    "(%lld); nothing was restarted", npending, n, r->e->cfg.max_pending);
		goto out;
	}
	for (i = 0; i < n; i++)
		if (ctl_jobs_restart_check(r, ids[i], &rows, &nlc) == -1)
			goto out;
	/* lc jobs again count against [class lc] max_jobs_per_user, as a submit's do */
	if (nlc > 0 && r->uid != 0 && lcmax > 0 && (npending = engine_lc_active(r->e, r->uid) +
	    submit_queued_lc(r->uid)) + nlc > lcmax) {
		ctl_req_error(r, "%d latency-critical jobs and %d more would be over [class lc] "
		    "max_jobs_per_user (%lld); nothing was restarted", npending, nlc,
		    (long long)lcmax);
		goto out;
	}
	if ((env = submit_env(m, &envn)) == NULL) {
		snprintf(r->err, sizeof(r->err), "out of memory");
		goto out;
	}
	ctl_req_user(r->uid, by, sizeof(by));
	/* the environment is stored once for all n, beside their rows */
	if (submit_stored_over(r->e, r->uid, by, (uint64_t)envn + rows, "restart", r->err,
	    sizeof(r->err)) == -1)
		goto out;
	snprintf(why, sizeof(why), "restarted by %s", by);
	if (store_jobs_restart(r->e->store, ids, n, env, envn, engine_now(), why) == -1) {
		ctl_req_error(r, "cannot record the restart (see nvqd's log); nothing was "
		    "restarted");
		goto out;
	}
	for (i = 0; i < n; i++)
		ctl_jobs_restart_single(r, ids, n, i);
	for (i = 0; i < n; i++) {
		/* what the restart committed, as a restarted nvqd would load it */
		if (store_active_one(r->e->store, ids[i], ctl_jobs_restart_add_cb, r->e) == -1)
			log_warnx("job %lld: restarted, but not read back; it starts once "
			    "nvqd restarts", (long long)ids[i]);
		log_info("job %lld PENDING: %s", (long long)ids[i], why);
		proto_put_int(out, "id", ids[i]);
	}
	engine_kick(r->e);
	rc = 0;
out:
	free(ids);
	free(env);
	return rc;
}

/*
 * nvq run's descriptors in flight: at most this many attaches wait for
 * theirs, and a user's at most a 32nd of them, so that it takes 32
 * accounts, not two, to keep nvq run from everyone
 */
#define CTL_MAX_ATTACHED	512
#define CTL_MAX_ATTACHED_UID	(CTL_MAX_ATTACHED / 32)
/* and this long to get them after saying it takes them */
#define CTL_ATTACH_MS		5000

struct ctl_jobs_attach {
	struct engine	*e;
	int64_t		id;
	uid_t		uid;
	char		mask[4];	/* which of the job's 0, 1, 2 they are, in order */
};

/* whose they are: one uid per attach in flight, in no order */
static uid_t ctl_jobs_attached[CTL_MAX_ATTACHED];
static int ctl_jobs_nattached;

static int
ctl_jobs_attached_by(uid_t uid)
{
	int i, n = 0;

	for (i = 0; i < ctl_jobs_nattached; i++)
		n += ctl_jobs_attached[i] == uid;
	return n;
}

static void
ctl_jobs_attached_drop(uid_t uid)
{
	int i;

	for (i = 0; i < ctl_jobs_nattached; i++)
		if (ctl_jobs_attached[i] == uid) {
			ctl_jobs_attached[i] = ctl_jobs_attached[--ctl_jobs_nattached];
			return;
		}
}

/* The end of an attach: a reply, or an error, then the connection closes. */
static void
ctl_jobs_attach_end(struct server_conn *conn, const char *error)
{
	struct proto_buf b = { 0 };

	proto_begin(&b, error ? MSG_ERROR : MSG_OK);
	if (error != NULL)
		proto_put_str(&b, "error", error);
	else
		proto_put_int(&b, "attached", 1);
	server_reply_close(conn, &b);
}

static void
ctl_jobs_attach_fds_cb(void *arg, struct server_conn *conn, int *fds, int n)
{
	struct ctl_jobs_attach *a = arg;
	struct job *j = engine_find(a->e, a->id);
	int slots[3] = { -1, -1, -1 }, i;

	ctl_jobs_attached_drop(a->uid);
	if (n != (int)strlen(a->mask)) {
		for (i = 0; i < n; i++)
			close(fds[i]);
		ctl_jobs_attach_end(conn, n < 0 ? "no descriptors came in time, or not those "
		    "announced" : "not the descriptors announced");
	} else if (j == NULL || j->uid != a->uid || j->state != JOB_PENDING || !j->parked) {
		for (i = 0; i < n; i++)
			close(fds[i]);
		ctl_jobs_attach_end(conn, "the job is no longer waiting for nvq run");
	} else {
		for (i = 0; i < n; i++)
			slots[a->mask[i] - '0'] = fds[i];
		if (engine_attach(a->e, j, slots) == -1)
			ctl_jobs_attach_end(conn, "cannot record the job's release (see nvqd's "
			    "log)");
		else
			ctl_jobs_attach_end(conn, NULL);
	}
	free(a);
}

/*
 * nvq run: its standard input (and its output where a terminal) become
 * the job's.  The job, submitted held for it ("attach"), is released once
 * the descriptors came, on this connection, after this reply.  Only the
 * job's owner passes them: they are the owner's own, given to the owner's
 * job, and nvqd never reads, writes or opens them.
 */
int
ctl_jobs_attach(struct ctl_req *r, struct proto_buf *out)
{
	const char *mask = proto_str(r->msg, "fds");
	char by[64];
	struct ctl_jobs_attach *a;
	struct job *j = r->job;
	size_t i, n;

	if (j->state != JOB_PENDING || !j->parked || j->stdio[0] >= 0 || j->stdio[1] >= 0 ||
	    j->stdio[2] >= 0)
		return ctl_req_error(r, "job %lld is not waiting for nvq run", (long long)j->id);
	n = mask != NULL ? strlen(mask) : 0;
	if (n < 1 || n > 3)
		return ctl_req_error(r, "\"fds\" says which of 0, 1, 2 come");
	for (i = 0; i < n; i++)
		if (mask[i] < '0' || mask[i] > '2' || memchr(mask, mask[i], i) != NULL)
			return ctl_req_error(r, "\"fds\" says which of 0, 1, 2 come, each once");
	/* those on their way count too: their descriptors come within CTL_ATTACH_MS */
	if (engine_attached(r->e, r->uid) + ctl_jobs_attached_by(r->uid) >=
	    ENGINE_MAX_ATTACHED_UID) {
		ctl_req_user(r->uid, by, sizeof(by));
		return ctl_req_error(r, "%s has %d jobs of nvq run waiting to start, the most a "
		    "user may; end one, or submit with nvq submit", by, ENGINE_MAX_ATTACHED_UID);
	}
	if (ctl_jobs_attached_by(r->uid) >= CTL_MAX_ATTACHED_UID) {
		ctl_req_user(r->uid, by, sizeof(by));
		return ctl_req_error(r, "%s is passing %d terminals to nvqd already, the most a "
		    "user may; try again", by, CTL_MAX_ATTACHED_UID);
	}
	if (ctl_jobs_nattached >= CTL_MAX_ATTACHED)
		return ctl_req_error(r, "nvqd takes %d terminals at once; try again",
		    CTL_MAX_ATTACHED);
	if ((a = calloc(1, sizeof(*a))) == NULL)
		return ctl_req_error(r, "out of memory");
	a->e = r->e;
	a->id = j->id;
	a->uid = r->uid;
	memcpy(a->mask, mask, n);
	if (server_take_fds(r->conn, (int)n, CTL_ATTACH_MS, ctl_jobs_attach_fds_cb, a) == -1) {
		free(a);
		return ctl_req_error(r, "this connection cannot take descriptors");
	}
	ctl_jobs_attached[ctl_jobs_nattached++] = r->uid;
	proto_put_int(out, "ready", 1);
	return 0;
}
