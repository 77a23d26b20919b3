/*
 * ctl.c: the table of requests and their dispatcher.  A row says what a
 * request is (its handler), who may send it (ctl_check.h), what it takes
 * (a job id, an array, Slurm's jobs too) and whether it must wait for
 * room on disk; ctl_dispatch checks all of that in one place, from the
 * row, finding the job a request names and expanding an array into its
 * tasks, before any handler runs.  The handlers live in rooms by group:
 * ctl_jobs.c (a job's life: submit, cancel, hold, ...), ctl_control.c (the
 * GPUs, suspend, Slurm's steps) and ctl_info.c (what nvqd shows); what
 * they share is ctl_req.c.  None of them calls back into this file.  Each
 * handler returns 0 or -1 with req->err set.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ctl.h"
#include "ctl_check.h"
#include "ctl_control.h"
#include "ctl_info.h"
#include "ctl_jobs.h"
#include "ctl_req.h"
#include "hooks.h"
#include "log.h"
#include "parse.h"
#include "slurm.h"
#include "statq.h"
#include "submit.h"

/* What a request takes and how it is let in: a row's flags. */
#define CTL_JOB		0x01	/* an active job's "id": found, and its owner checked */
#define CTL_SLURM	0x02	/* a job Slurm runs too ([cluster] engine = slurm) */
#define CTL_ARRAY	0x04	/* or an "array": each active task checked, then done */
#define CTL_ARRAY_TX	0x08	/* an array's tasks in one commit */
/*
 * nvq cancel's first round ("pending_only"): a job it may not act on is
 * answered "skipped", not refused; the second round says why
 */
#define CTL_ROUND	0x10
/*
 * A change a user asks for that must not spend the reserve kept for ends
 * and cancels (store_room): refused while it is in use, as submits are.
 */
#define CTL_ROOM	0x20
/*
 * Or a "filter" (nvq cancel --all, -u, --state, --name): the active jobs
 * it matches, each checked, then done as an array's tasks are
 */
#define CTL_FILTER	0x40

struct ctl_row {
	int		type;
	int		(*fn)(struct ctl_req *, struct proto_buf *);
	struct ctl_rule	rule;		/* who may send it */
	int		flags;		/* CTL_* */
	/* CTL_ARRAY: what a task's refusal says; all its tasks at once (NULL: fn each) */
	const char	*tasks_verb;
	int		(*tasks)(struct ctl_req *, struct job **, int, struct proto_buf *,
			    int *skipped);
};

#define CTL_ANY		{ CTL_ANYONE, NULL, NULL }

/*
 * The requests: type, handler, who may send it { kind, what a refusal says
 * the caller may not do, why }, what it takes and how it is let in, and
 * for an array what a task's refusal says and its all-at-once handler.
 */
static const struct ctl_row ctl_table[] = {
	/* a job's life (ctl_jobs.c) */
	{ MSG_SUBMIT, ctl_jobs_submit, CTL_ANY, 0, NULL, NULL },
	{ MSG_CANCEL, ctl_jobs_cancel, { CTL_OWNER, "cancel", NULL },
	    CTL_JOB | CTL_SLURM | CTL_ARRAY | CTL_ROUND | CTL_FILTER, "cancel",
	    ctl_jobs_cancel_tasks },
	{ MSG_HOLD, ctl_jobs_hold, { CTL_OWNER, "hold", NULL },
	    CTL_JOB | CTL_SLURM | CTL_ARRAY | CTL_ARRAY_TX | CTL_ROOM, "act on", NULL },
	{ MSG_RELEASE, ctl_jobs_hold, { CTL_OWNER, "release", NULL },
	    CTL_JOB | CTL_SLURM | CTL_ARRAY | CTL_ARRAY_TX | CTL_ROOM, "act on", NULL },
	{ MSG_TOP, ctl_jobs_top, { CTL_OWNER, "top", NULL },
	    CTL_JOB | CTL_ARRAY | CTL_ARRAY_TX | CTL_ROOM, "act on", NULL },
	{ MSG_MODIFY, ctl_jobs_modify, { CTL_OWNER, "modify", NULL },
	    CTL_JOB | CTL_ARRAY | CTL_ARRAY_TX | CTL_ROOM, "act on", NULL },
	{ MSG_REQUEUE, ctl_jobs_requeue, { CTL_OWNER, "requeue", NULL },
	    CTL_JOB | CTL_ARRAY | CTL_ROOM, "act on", NULL },
	/* finished jobs, many: the handler reads each and checks it against this row */
	{ MSG_RESTART, ctl_jobs_restart, { CTL_SELF, "restart", "it runs again with the "
	    "environment of who restarts it" }, 0, NULL, NULL },
	{ MSG_ATTACH, ctl_jobs_attach, { CTL_SELF, "attach to", NULL }, CTL_JOB, NULL, NULL },
	/* the GPUs and what runs on them (ctl_control.c) */
	{ MSG_SUSPEND, ctl_control_suspend, { CTL_OWNER, "suspend", NULL },
	    CTL_JOB | CTL_SLURM | CTL_ARRAY, "act on", NULL },
	{ MSG_RESUME, ctl_control_suspend, { CTL_OWNER, "resume", NULL },
	    CTL_JOB | CTL_SLURM | CTL_ARRAY, "act on", NULL },
	{ MSG_DRAIN, ctl_control_drain, { CTL_ADMIN, "drain a GPU", NULL }, 0, NULL, NULL },
	{ MSG_UNDRAIN, ctl_control_drain, { CTL_ADMIN, "undrain a GPU", NULL }, 0, NULL, NULL },
	{ MSG_ADOPT, ctl_control_adopt, { CTL_ROOT, "hand nvqd a Slurm step",
	    "slurmstepd's SPANK plugin" }, 0, NULL, NULL },
	/* what nvqd shows (ctl_info.c) */
	{ MSG_LIST, ctl_info_list, CTL_ANY, 0, NULL, NULL },
	{ MSG_HISTORY, ctl_info_history, CTL_ANY, 0, NULL, NULL },
	{ MSG_SHOW, ctl_info_show, CTL_ANY, 0, NULL, NULL },
	{ MSG_GPUS, ctl_info_gpus, CTL_ANY, 0, NULL, NULL },
	{ MSG_SHARES, ctl_info_shares, CTL_ANY, 0, NULL, NULL },
	{ MSG_STATS, ctl_info_stats, CTL_ANY, 0, NULL, NULL },
	{ MSG_WATCH, ctl_info_watch, CTL_ANY, 0, NULL, NULL },
	{ MSG_WEB_TOKEN, ctl_info_web_token, CTL_ANY, 0, NULL, NULL },
	{ MSG_PING, ctl_info_ping, CTL_ANY, 0, NULL, NULL },
};

void
ctl_forget_names(void)
{
	ctl_req_forget_names();
}

/*
 * The job the request names (ctl_req_id), found and checked against row
 * c's rule with verb: 0 with req->job (or req->slurm) set, or -1 with the
 * error set (no such job, ended, Slurm's, or not the caller's to act on).
 */
static int
ctl_job(struct ctl_req *r, const struct ctl_row *c, const char *verb)
{
	struct ctl_rule rule = c->rule;
	struct ctl_owner o = { ctl_req_id(r), 0, NULL };
	uint32_t uid;
	char state[16];
	int rc;

	r->job = NULL;
	r->slurm = 0;
	if ((c->flags & CTL_SLURM) && r->e->slurm != NULL && slurm_has(r->e->slurm, o.id, &uid)) {
		r->slurm = 1;
		o.uid = uid;
	} else if ((r->job = engine_find(r->e, o.id)) != NULL) {
		o.uid = r->job->uid;
		o.user = r->job->user;
	} else if (r->e->slurm != NULL && slurm_has(r->e->slurm, o.id, NULL))
		return ctl_req_error(r, "job %lld is Slurm's: nvq %s does not work on it with "
		    "[cluster] engine = slurm", (long long)o.id, verb);
	else if (store_job_state(r->e->store, o.id, state, sizeof(state)) == -1)
		return ctl_req_error(r, "no such job %lld", (long long)o.id);
	else
		return ctl_req_error(r, "job %lld has already ended (%s)", (long long)o.id, state);
	rule.verb = verb;
	r->rule = &rule;
	rc = ctl_req_may(r, &o);
	r->rule = &c->rule;
	return rc;
}

/*
 * A request about many active jobs, ids[0..n) (an array's tasks, or the
 * jobs a filter matched; what says "no task of %s was done"): a cancel,
 * their pending ones' ends in one commit (the row's tasks handler); hold
 * and release in one transaction; suspend and resume one by one.  Those
 * it does not apply to (suspend of a pending one, release of one not
 * held) are skipped.  The reply: a row ("id", "state") per job done,
 * "skipped" and the first skip's "error"; an error if none was done.  A
 * job of another user's: the whole request is refused, as for a job of
 * theirs.
 */
static int
ctl_many(struct ctl_req *r, const struct ctl_row *c, const int64_t *ids, int n,
    const char *what, struct proto_buf *out)
{
	static const char *const names[] = { "PENDING", "RUNNING", "SUSPENDED" };
	struct proto_buf scratch = { 0 };
	struct job **js = NULL, *j;
	char first[768] = "";
	int i, k = 0, done = 0, skipped = 0, rc = -1;
	int tx = (c->flags & CTL_ARRAY_TX) != 0;

	if ((js = calloc((size_t)n + 1, sizeof(*js))) == NULL) {
		snprintf(r->err, sizeof(r->err), "out of memory");
		goto out;
	}
	for (i = 0; i < n; i++) {
		struct ctl_rule rule = c->rule;
		struct ctl_owner o;

		if ((j = engine_find(r->e, ids[i])) == NULL)
			continue;
		o.id = j->id;
		o.uid = j->uid;
		o.user = j->user;
		rule.verb = c->tasks_verb;
		r->rule = &rule;
		if (ctl_req_may(r, &o) == -1)
			goto out;
		r->rule = &c->rule;
		js[k++] = j;
	}
	if (c->tasks != NULL) {
		if ((done = c->tasks(r, js, k, out, &skipped)) == -1)
			goto out;
		if (skipped > 0)
			snprintf(first, sizeof(first), "%s", r->err);
	} else {
		/* hold and release: a commit for them all (engine_park's nest in it) */
		if (tx && store_tx_begin(r->e->store) == -1) {
			ctl_req_error(r, "cannot record it (see nvqd's log)");
			goto out;
		}
		for (i = 0; i < k; i++) {
			r->id = js[i]->id;
			r->err[0] = '\0';
			proto_begin(&scratch, MSG_OK);
			if (ctl_job(r, c, c->rule.verb) == -1 || c->fn(r, &scratch) == -1) {
				if (first[0] == '\0')
					snprintf(first, sizeof(first), "%s", r->err);
				skipped++;
				continue;
			}
			proto_put_int(out, "id", r->id);
			if ((j = engine_find(r->e, r->id)) != NULL && j->state <= JOB_SUSPENDED)
				proto_put_str(out, "state", names[j->state]);
			done++;
		}
		r->id = 0;
		if (tx && store_tx_commit(r->e->store) == -1)
			log_warnx("%s: the commit of its tasks' holds failed; they are "
			    "held until nvqd restarts", what);
	}
	if (done == 0) {
		ctl_req_error(r, "no task of %s was done: %s", what, first);
		goto out;
	}
	proto_put_int(out, "skipped", skipped);
	if (skipped > 0)
		proto_put_str(out, "error", first);
	rc = 0;
out:
	r->rule = &c->rule;
	proto_buf_free(&scratch);
	free(js);
	return rc;
}

/* A request about every active task of an array ("array": its id, nvq's A_): ctl_many. */
static int
ctl_array(struct ctl_req *r, const struct ctl_row *c, struct proto_buf *out)
{
	int64_t array = proto_int(r->msg, "array", 0), *ids = NULL;
	char state[16], what[40];
	int n, rc;

	if (array <= 0)
		return ctl_req_error(r, "an array is named by its first task's id");
	if (store_array_active(r->e->store, array, &ids, &n) == -1)
		return ctl_req_error(r, "the database could not be read (see nvqd's log)");
	if (n == 0) {
		free(ids);
		if (store_job_state(r->e->store, array, state, sizeof(state)) == -1)
			return ctl_req_error(r, "no such array %lld", (long long)array);
		return ctl_req_error(r, "array %lld has no pending or running task",
		    (long long)array);
	}
	snprintf(what, sizeof(what), "array %lld", (long long)array);
	rc = ctl_many(r, c, ids, n, what, out);
	free(ids);
	return rc;
}

/*
 * The request's "only" ids, sorted, into *only (*n; the caller frees;
 * NULL and 0 where none were given): looked up by bsearch, so that many
 * ids against many jobs cost (n + m) log m on the loop, not n * m.  0, or -1.
 */
static int
ctl_filter_only(const struct ctl_req *r, int64_t **only, int *n)
{
	int i, k = 0;

	*only = NULL;
	*n = 0;
	for (i = 0; i < r->msg->nfields; i++)
		k += strcmp(r->msg->fields[i].key, "only") == 0;
	if (k == 0)
		return 0;
	if ((*only = malloc(sizeof(**only) * (size_t)k)) == NULL)
		return -1;
	for (i = 0; i < r->msg->nfields; i++)
		if (strcmp(r->msg->fields[i].key, "only") == 0)
			(*only)[(*n)++] = r->msg->fields[i].i;
	qsort(*only, (size_t)*n, sizeof(**only), parse_cmp_i64);
	return 0;
}

/*
 * nvq cancel --all, -u USER, --state STATES, --name NAME, and the ids
 * they narrow ("only"): the active jobs that match, by the jobs_active
 * index (as an array's tasks, bounded by the active jobs), then ctl_many.
 * Without "user", a user's own jobs; root and admins: everyone's, but
 * not --all alone.
 */
static int
ctl_filter(struct ctl_req *r, const struct ctl_row *c, struct proto_buf *out)
{
	const char *user = proto_str(r->msg, "user"), *name = proto_str(r->msg, "name");
	int64_t states = proto_int(r->msg, "states", 0), *ids = NULL, *only;
	char me[64];
	struct job *j;
	int i, k, n, nonly, rc;

	if (user == NULL && name == NULL && states == 0 && !proto_get(r->msg, "only") &&
	    r->admin)
		return ctl_req_error(r, "nvq cancel --all as %s would cancel every user's jobs: "
		    "add -u USER, --state or --name (or give ids)", r->uid == 0 ? "root" :
		    "an admin");
	if (user == NULL && !r->admin) {
		ctl_req_user(r->uid, me, sizeof(me));
		user = me;
	}
	if (ctl_filter_only(r, &only, &nonly) == -1)
		return ctl_req_error(r, "out of memory");
	if (store_active_match(r->e->store, user, name, &ids, &n) == -1) {
		free(only);
		return ctl_req_error(r, "the database could not be read (see nvqd's log)");
	}
	for (i = k = 0; i < n; i++) {
		if ((j = engine_find(r->e, ids[i])) == NULL || j->state > JOB_SUSPENDED ||
		    (states != 0 && !(states & (1 << j->state))) || (only != NULL &&
		    bsearch(&j->id, only, (size_t)nonly, sizeof(*only), parse_cmp_i64) == NULL))
			continue;
		ids[k++] = ids[i];
	}
	free(only);
	if (k == 0) {
		free(ids);
		proto_put_int(out, "skipped", 0);
		return 0;	/* none matched: nothing to do, as scancel */
	}
	rc = ctl_many(r, c, ids, k, "the jobs matched", out);
	free(ids);
	return rc;
}

/* A request of row c, let in: its job or its array's tasks, then its handler. */
static int
ctl_run(struct ctl_req *r, const struct ctl_row *c, struct proto_buf *out)
{
	if ((c->flags & CTL_ARRAY) && proto_int(r->msg, "array", 0) != 0)
		return ctl_array(r, c, out);
	if ((c->flags & CTL_FILTER) && proto_int(r->msg, "filter", 0) != 0)
		return ctl_filter(r, c, out);
	if (!(c->flags & CTL_JOB)) {
		/* a job's owner's rows that name no one job: the handler checks those it reads */
		if (c->rule.who != CTL_OWNER && c->rule.who != CTL_SELF &&
		    ctl_req_may(r, NULL) == -1)
			return -1;
		return c->fn(r, out);
	}
	if (ctl_job(r, c, c->rule.verb) == 0)
		return c->fn(r, out);
	if ((c->flags & CTL_ROUND) && proto_int(r->msg, "pending_only", 0) != 0) {
		r->err[0] = '\0';
		proto_put_int(out, "skipped", 1);
		return 0;
	}
	return -1;
}

/* server.h's frame function for a new connection: a request, or a hook's hello. */
static int
ctl_frame(void *arg, struct server_conn *conn, const struct server_peer *p,
    const struct proto_msg *m, struct proto_buf *out, char *err, size_t errlen)
{
	struct engine *e = arg;
	struct ctl_req req;

	if (proto_is_hook(m->type))
		return hooks_accept(e, conn, p, m, err, errlen);
	memset(&req, 0, sizeof(req));
	req.e = e;
	req.msg = m;
	req.uid = p->uid;
	req.gid = p->gid;
	req.pid = p->pid;
	req.groups = p->groups;
	req.ngroups = p->ngroups;
	req.conn = conn;
	if (ctl_dispatch(&req, out) == -1) {
		snprintf(err, errlen, "%s", req.err);
		return SERVER_ERROR;
	}
	return SERVER_REPLY;
}

/* A client that hangs up before its submit is stored: its job is stored all the same. */
static void
ctl_closed(void *arg, struct server_conn *conn)
{
	(void)arg;
	submit_forget(conn);
	statq_forget(conn);
}

const struct server_handler ctl_handler = { .frame = ctl_frame, .closed = ctl_closed };

int
ctl_dispatch(struct ctl_req *r, struct proto_buf *out)
{
	const struct ctl_row *c;
	size_t i;

	r->err[0] = '\0';
	for (i = 0; i < sizeof(ctl_table) / sizeof(ctl_table[0]); i++)
		if (ctl_table[i].type == r->msg->type)
			break;
	if (i == sizeof(ctl_table) / sizeof(ctl_table[0]))
		return ctl_req_error(r, "message type \"%s\" is not a request",
		    proto_type_name(r->msg->type));
	c = &ctl_table[i];
	if ((c->flags & CTL_ROOM) && !store_room(r->e->store))
		return ctl_req_error(r, "the database's disk is full (its reserve for ends and "
		    "cancels is in use): nvq %s waits for room; nvq cancel works",
		    proto_type_name(r->msg->type));
	r->admin = ctl_check_admin(r->uid, r->gid, r->groups, r->ngroups,
	    r->e->cfg.has_admin_gid, r->e->cfg.admin_gid);
	r->rule = &c->rule;
	proto_begin(out, MSG_OK);
	if (ctl_run(r, c, out) == -1)
		return -1;
	if (r->deferred) {
		proto_buf_free(out);
		return 0;
	}
	if (proto_end(out) == -1)
		return ctl_req_error(r, "the reply is too large");
	return 0;
}
