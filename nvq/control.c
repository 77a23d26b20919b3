/*
 * control.c: `nvq cancel`, `hold`, `release`, `top`, `modify`, `requeue`,
 * `suspend`, `resume`, `drain`, `undrain` and `wait`.
 *
 * wait exits 0 when every job COMPLETED; otherwise with the status of the
 * first job (in the order given) that did not: its exit code, 128 + the
 * signal that killed it, 124 for TIMEOUT, 125 for CANCELLED.
 */
#include <poll.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "json.h"

#include "nvq.h"

/*
 * "A_" or "A_*": a request of type about every active task of array A, in
 * one request; nvqd's reply in *m, one row per task done ("id", "state"),
 * the tasks skipped and why said.  0 if name is not of that form, 1 if it
 * is and some task was done, -1 if none was (said).
 */
static int
control_array(struct nvq_args *a, const char *name, int type, struct proto_msg *m)
{
	struct proto_buf b = { 0 };
	int64_t array, skipped;
	char buf[32];
	size_t len = strlen(name);
	int r;

	if (len < 2 || len >= sizeof(buf) || (name[len - 1] != '_' &&
	    (len < 3 || strcmp(name + len - 2, "_*") != 0)))
		return 0;
	memcpy(buf, name, len);
	buf[name[len - 1] == '_' ? len - 1 : len - 2] = '\0';
	if (parse_id(buf, &array) == -1)
		return 0;
	proto_begin(&b, type);
	proto_put_int(&b, "array", array);
	r = client_call(a->socket, &b, m);
	proto_buf_free(&b);
	if (r == -1)
		return -1;
	if ((skipped = proto_int(m, "skipped", 0)) > 0)
		nvq_err("array %lld: %lld task%s skipped: %s", (long long)array,
		    (long long)skipped, skipped == 1 ? "" : "s",
		    fmt_safe(proto_str(m, "error") ? proto_str(m, "error") : "?"));
	return 1;
}

/*
 * Cancels job id (only if it is pending, with pending_only): 0, 1 (said
 * why), or 2 (pending_only: not pending, or not to be cancelled so; nothing
 * said).
 */
static int
control_cancel(struct nvq_args *a, struct proto_buf *b, int64_t id, int pending_only)
{
	struct proto_msg m;
	int r = 0;

	proto_begin(b, MSG_CANCEL);
	proto_put_int(b, "id", id);
	if (pending_only)
		proto_put_int(b, "pending_only", 1);
	if (client_call(a->socket, b, &m) == -1)
		return 1;
	if (pending_only && proto_int(&m, "skipped", 0) != 0)
		r = 2;
	proto_msg_free(&m);
	return r;
}

/*
 * nvq cancel --all, -u USER, -t STATES, -n NAME [ID...]: one request; nvqd
 * cancels the active jobs that match (and are among the ids, if given),
 * as it does an array's tasks.  0, 1 or 2.
 */
static int
control_cancel_filter(struct nvq_args *a, const char *states)
{
	struct proto_buf b = { 0 };
	struct proto_msg m;
	struct nvq_row *rows = NULL;
	const char *st;
	char buf[128], *p, *tok, *save = NULL;
	int64_t mask = 0, id;
	int i, n, rc = 0;

	if (states != NULL) {
		snprintf(buf, sizeof(buf), "%s", states);
		for (p = buf; (tok = strtok_r(p, ",", &save)) != NULL; p = NULL) {
			if ((st = fmt_state(tok)) == NULL || !fmt_state_active(st)) {
				nvq_err("cancel: --state %s: %s", tok, st == NULL ? "not a state "
				    "(PENDING, RUNNING, SUSPENDED or PD, R, S)" : "not a state a "
				    "job can be cancelled in (PENDING, RUNNING, SUSPENDED)");
				return 2;
			}
			mask |= strcmp(st, "PENDING") == 0 ? 1 : strcmp(st, "RUNNING") == 0 ? 2 : 4;
		}
		if (mask == 0 || strlen(states) >= sizeof(buf)) {
			nvq_err("cancel: --state %s: not a list of states", states);
			return 2;
		}
	}
	proto_begin(&b, MSG_CANCEL);
	proto_put_int(&b, "filter", 1);
	if (a->user != NULL)
		proto_put_str(&b, "user", a->user);
	if (a->name != NULL)
		proto_put_str(&b, "name", a->name);
	if (mask != 0)
		proto_put_int(&b, "states", mask);
	for (i = 0; i < a->argc; i++) {
		if ((n = task_id(a->socket, a->argv[i], &id)) != TASK_JOB) {
			if (n == TASK_ARRAY)
				nvq_err("cancel: %s with a filter: give jobs or tasks (A_I), or the "
				    "array alone", a->argv[i]);
			proto_buf_free(&b);
			return n == TASK_FAILED ? 1 : 2;
		}
		proto_put_int(&b, "only", id);
	}
	if (client_call(a->socket, &b, &m) == -1) {
		proto_buf_free(&b);
		return 1;
	}
	proto_buf_free(&b);
	n = client_rows(&m, "id", 0, &rows);
	printf("%d job%s cancelled\n", n, n == 1 ? "" : "s");
	if (proto_int(&m, "skipped", 0) > 0) {
		nvq_err("%lld not cancelled: %s", (long long)proto_int(&m, "skipped", 0),
		    fmt_safe(proto_str(&m, "error") ? proto_str(&m, "error") : "?"));
		rc = 1;
	}
	free(rows);
	proto_msg_free(&m);
	return rc;
}

/*
 * nvq cancel ID...: the pending ones first, then the rest, so that none of
 * them starts in between (a running one cancelled first could free its GPU
 * for a pending one named after it).  With a filter: control_cancel_filter.
 */
int
cmd_cancel(struct nvq_args *a)
{
	struct proto_buf b = { 0 };
	struct proto_msg m;
	int64_t *ids;
	char *done;
	int i, r, rc = 0, *kind;

	/* -t is --state here, as scancel's (nvq.c files it under -t TIME) */
	if (a->all || a->user != NULL || a->state != NULL || a->time != NULL || a->name != NULL)
		return control_cancel_filter(a, a->state != NULL ? a->state : a->time);
	if (a->argc == 0) {
		nvq_err("cancel: give job ids or a filter (--all, -u USER, -t STATES, -n NAME)");
		return 2;
	}
	done = calloc((size_t)a->argc + 1, 1);
	ids = calloc((size_t)a->argc + 1, sizeof(*ids));
	kind = calloc((size_t)a->argc + 1, sizeof(*kind));
	if (done == NULL || ids == NULL || kind == NULL) {
		nvq_err("out of memory");
		rc = 1;
		goto out;
	}
	for (i = 0; i < a->argc; i++) {
		if ((kind[i] = task_id(a->socket, a->argv[i], &ids[i])) < 0) {
			rc = rc == 1 || kind[i] == TASK_FAILED ? 1 : 2;
			done[i] = 1;
		}
	}
	for (i = 0; i < a->argc; i++) {
		if (done[i] || kind[i] != TASK_JOB)
			continue;
		if ((r = control_cancel(a, &b, ids[i], 1)) != 2)
			done[i] = 1;
		if (r == 1)
			rc = 1;
	}
	for (i = 0; i < a->argc; i++) {
		if (done[i])
			continue;
		if (kind[i] == TASK_ARRAY) {
			if ((r = control_array(a, a->argv[i], MSG_CANCEL, &m)) == -1 ||
			    (r == 1 && proto_int(&m, "skipped", 0) > 0))
				rc = 1;
			if (r == 1)
				proto_msg_free(&m);
			continue;
		}
		if (control_cancel(a, &b, ids[i], 0) != 0)
			rc = 1;
	}
out:
	free(done);
	free(ids);
	free(kind);
	proto_buf_free(&b);
	return rc;
}

/*
 * Sends a request of type about the job id names: 0, or the exit status
 * (2: bad id).  *pending (if not NULL): whether nvqd said the job is pending.
 */
static int
control_ask(struct nvq_args *a, const char *name, int type, struct proto_buf *b, int64_t *id,
    int *pending)
{
	struct proto_msg m;
	const char *st;

	switch (task_id(a->socket, name, id)) {
	case TASK_JOB:
		break;
	case TASK_ARRAY:
		nvq_err("%s: %s is every task of an array: nvq %s takes a job or a task (%lld_I)",
		    a->cmd, name, a->cmd, (long long)*id);
		return 2;
	case TASK_FAILED:
		return 1;
	default:
		return 2;
	}
	proto_begin(b, type);
	proto_put_int(b, "id", *id);
	if (client_call(a->socket, b, &m) == -1)
		return 1;
	if (pending != NULL)
		*pending = (st = proto_str(&m, "state")) != NULL && strcmp(st, "PENDING") == 0;
	proto_msg_free(&m);
	return 0;
}

/*
 * Sends a request of type for each job named (A_: one for every task of
 * the array); says done (a format of the id) for each job done.
 */
static int
control_each(struct nvq_args *a, int type, const char *done)
{
	struct proto_buf b = { 0 };
	struct proto_msg m;
	struct nvq_row *rows;
	int64_t id;
	int i, k, n, rc = 0;

	for (i = 0; i < a->argc; i++) {
		if ((k = control_array(a, a->argv[i], type, &m)) != 0) {
			if (k == -1 || proto_int(&m, "skipped", 0) > 0)
				rc = 1;
			if (k == -1)
				continue;
			n = client_rows(&m, "id", 0, &rows);
			for (k = 0; k < n; k++)
				printf(done, (long long)row_int(&m, &rows[k], "id", 0));
			free(rows);
			proto_msg_free(&m);
			continue;
		}
		if ((k = control_ask(a, a->argv[i], type, &b, &id, NULL)) != 0) {
			rc = rc ? rc : k;
			continue;
		}
		printf(done, (long long)id);
	}
	proto_buf_free(&b);
	return rc;
}

/* nvq top ID...: each pending job first among its owner's jobs of its priority. */
int
cmd_top(struct nvq_args *a)
{
	if (a->argc == 0)
		return top_view(a);
	return control_each(a, MSG_TOP, "job %lld is first of its owner's jobs of its priority\n");
}

/* nvq requeue ID...: each running job stopped (as by cancel), then queued again. */
int
cmd_requeue(struct nvq_args *a)
{
	return control_each(a, MSG_REQUEUE,
	    "job %lld is stopping; it then waits in the queue again\n");
}

extern char **environ;

/*
 * nvq restart ID... or --failed [--since WHEN]: finished jobs queued again,
 * all or none, with this environment (a job's own is deleted at its end).
 */
int
cmd_restart(struct nvq_args *a)
{
	struct proto_buf b = { 0 };
	struct proto_msg m;
	struct nvq_row *rows = NULL;
	int64_t id, since;
	int i, n;

	if (a->failed == (a->argc > 0)) {
		nvq_err("restart: give job ids or --failed, not both");
		return 2;
	}
	if (a->since != NULL && !a->failed) {
		nvq_err("restart: --since goes with --failed");
		return 2;
	}
	proto_begin(&b, MSG_RESTART);
	if (a->failed)
		proto_put_int(&b, "failed", 1);
	if (a->since != NULL) {
		if (nvq_since(a->since, &since) == -1) {
			proto_buf_free(&b);
			return 2;
		}
		proto_put_int(&b, "since", since);
	}
	for (i = 0; i < a->argc; i++) {
		if ((n = task_id(a->socket, a->argv[i], &id)) != TASK_JOB) {
			if (n == TASK_ARRAY)
				nvq_err("restart: %s is every task of an array: name its tasks "
				    "(%lld_I)", a->argv[i], (long long)id);
			proto_buf_free(&b);
			return n == TASK_FAILED ? 1 : 2;
		}
		proto_put_int(&b, "id", id);
	}
	for (i = 0; environ[i] != NULL; i++)
		proto_put_str(&b, "env", environ[i]);
	if (client_call(a->socket, &b, &m) == -1) {
		proto_buf_free(&b);
		return 1;
	}
	proto_buf_free(&b);
	n = client_rows(&m, "id", 0, &rows);
	if (a->json) {
		struct json *arr = json_array();

		for (i = 0; i < n; i++)
			json_add(arr, NULL, json_number((double)row_int(&m, &rows[i],
			    "id", 0)));
		fmt_json_print(stdout, arr);
		printf("\n");
	}
	for (i = 0; i < n && !a->json; i++)
		printf("job %lld is pending again\n", (long long)row_int(&m, &rows[i], "id", 0));
	free(rows);
	proto_msg_free(&m);
	return 0;
}

/* nvq modify [-p PRIORITY] [-m GPU_MEM] [-c CPUS] [--mem SIZE] [-t TIME] ID: a pending job's demands. */
int
cmd_modify(struct nvq_args *a)
{
	struct proto_buf b = { 0 };
	struct proto_msg m;
	long long prio;
	uint64_t mem;
	int64_t id, secs;

	int kind, i, n;

	if ((kind = task_id(a->socket, a->argv[0], &id)) < 0)
		return kind == TASK_FAILED ? 1 : 2;
	if (a->prio == NULL && a->mem == NULL && a->time == NULL && a->cpus == NULL &&
	    a->host_mem == NULL) {
		nvq_err("modify: nothing to change: give -p, -m, -c, --mem or -t");
		return 2;
	}
	proto_begin(&b, MSG_MODIFY);
	/* A_: every pending task, in one request (a running one is skipped, said) */
	proto_put_int(&b, kind == TASK_ARRAY ? "array" : "id", id);
	if (a->prio != NULL) {
		if (parse_int(a->prio, -1000000, 1000000, &prio) == -1) {
			nvq_err("-p %s: not a priority (a whole number, higher runs first)",
			    a->prio);
			goto usage;
		}
		proto_put_int(&b, "priority", prio);
	}
	if (a->mem != NULL) {
		if (strcmp(a->mem, "whole") == 0)
			mem = 0;
		else if (parse_size(a->mem, &mem) == -1 || mem == 0) {
			nvq_err("-m %s: not a memory size (e.g. 512M, 20G; whole: a whole GPU)",
			    a->mem);
			goto usage;
		}
		proto_put_int(&b, "mem", (int64_t)mem);
	}
	if (a->cpus != NULL || a->host_mem != NULL) {
		struct submit_values v;

		memset(&v, 0, sizeof(v));
		if (submit_parse_host(a, &v) != 0)
			goto usage;
		if (v.cpus > 0)
			proto_put_int(&b, "cpus", v.cpus);
		if (v.host_mem > 0)
			proto_put_int(&b, "host_mem", (int64_t)v.host_mem);
	}
	if (a->time != NULL) {
		if (strcmp(a->time, "none") == 0)
			secs = 0;
		else if (parse_duration(a->time, &secs) == -1 || secs == 0) {
			nvq_err("-t %s: not a time limit (e.g. 30m, 2h, 1-00:00:00; none: no "
			    "limit)", a->time);
			goto usage;
		}
		proto_put_int(&b, "time", secs);
	}
	if (client_call(a->socket, &b, &m) == -1) {
		proto_buf_free(&b);
		return 1;
	}
	proto_buf_free(&b);
	if (kind == TASK_ARRAY) {
		struct nvq_row *rows;

		n = client_rows(&m, "id", 0, &rows);
		for (i = 0; i < n; i++)
			printf("job %lld modified\n", (long long)row_int(&m, &rows[i], "id", 0));
		free(rows);
		if (proto_int(&m, "skipped", 0) > 0)
			nvq_err("array %lld: %lld task%s skipped: %s", (long long)id,
			    (long long)proto_int(&m, "skipped", 0),
			    proto_int(&m, "skipped", 0) == 1 ? "" : "s",
			    fmt_safe(proto_str(&m, "error") ? proto_str(&m, "error") : "?"));
		n = proto_int(&m, "skipped", 0) > 0;
		proto_msg_free(&m);
		return n;
	}
	proto_msg_free(&m);
	printf("job %lld modified\n", (long long)id);
	return 0;
usage:
	proto_buf_free(&b);
	return 2;
}

/* nvq drain GPU [REASON...] / nvq undrain GPU. */
int
cmd_drain(struct nvq_args *a)
{
	int drain = strcmp(a->cmd, "drain") == 0, i;
	struct proto_buf b = { 0 };
	struct proto_msg m;
	char reason[256];
	size_t off = 0;

	proto_begin(&b, drain ? MSG_DRAIN : MSG_UNDRAIN);
	proto_put_str(&b, "gpu", a->argv[0]);
	reason[0] = '\0';
	for (i = 1; i < a->argc; i++)
		off += (size_t)snprintf(reason + off, off < sizeof(reason) ? sizeof(reason) - off :
		    0, "%s%s", i > 1 ? " " : "", a->argv[i]);
	if (reason[0] != '\0')
		proto_put_str(&b, "reason", reason);
	if (client_call(a->socket, &b, &m) == -1) {
		proto_buf_free(&b);
		return 1;
	}
	printf(drain ? "GPU %lld (%s) drained: no new jobs start there; its jobs finish\n" :
	    "GPU %lld (%s) undrained: new jobs start there again\n",
	    (long long)proto_int(&m, "index", -1), fmt_safe(proto_str(&m, "uuid")));
	proto_msg_free(&m);
	proto_buf_free(&b);
	return 0;
}

/*
 * Asks nvqd about job id every 10 ms, at most tries times, until settled()
 * says it has settled (and printed so): its answer, 0 or the exit status.
 * settled() returns -1 while the job is still on its way.
 */
static int
control_until(struct nvq_args *a, int64_t id, int tries,
    int (*settled)(int64_t, const struct proto_msg *, const struct nvq_row *))
{
	struct proto_msg m;
	struct nvq_row job;
	int k, r;

	for (k = 0; k < tries; k++) {
		if (jobs_fetch(a->socket, id, &m, &job) == -1)
			return 1;
		r = settled(id, &m, &job);
		proto_msg_free(&m);
		if (r >= 0)
			return r;
		usleep(10000);
	}
	return 0;
}

/* nvq hold: its GPU work has drained, or it was stopped, or it ended. */
static int
control_held(int64_t id, const struct proto_msg *m, const struct nvq_row *job)
{
	const char *lock = row_str(m, job, "lock"), *err = row_str(m, job, "lock_error");

	if (lock != NULL && strcmp(lock, "holding") == 0)
		return -1;
	if (lock != NULL && strcmp(lock, "granted") == 0 && err != NULL) {
		/* its ranks could not stop at the same collective: not held, it runs on */
		nvq_err("job %lld not held: %s", (long long)id, fmt_safe(err));
		return 1;
	}
	printf("job %lld held: %s\n", (long long)id, lock == NULL ? "it has ended" :
	    strcmp(lock, "stopped") == 0 ?
	    "it did not answer in time and was stopped (SIGSTOP)" : "its GPU work has drained");
	return 0;
}

/* nvq suspend: SUSPENDED, or the suspend failed and it runs on. */
static int
control_suspended(int64_t id, const struct proto_msg *m, const struct nvq_row *job)
{
	const char *state = row_str(m, job, "state"), *err = row_str(m, job, "switch_error");

	if (row_str(m, job, "switch") != NULL)
		return -1;
	if (state != NULL && strcmp(state, "SUSPENDED") == 0) {
		printf("job %lld suspended\n", (long long)id);
		return 0;
	}
	if (state != NULL && strcmp(state, "RUNNING") == 0 && err != NULL)
		nvq_err("job %lld: the suspend failed: %s; it runs on", (long long)id,
		    fmt_safe(err));
	else
		nvq_err("job %lld: not suspended (%s)", (long long)id,
		    state ? fmt_safe(state) : "gone");
	return 1;
}

/*
 * nvq hold ID...: takes each job's GPU locks back and waits (up to a
 * minute) until its processes have drained their GPU work, or nvqd
 * stopped them for not answering.  nvq release ID... gives them back.
 */
/* What nvq hold/release says of job id, and for a running job's hold, waits for: 0 or 1. */
static int
control_held_one(struct nvq_args *a, int hold, int64_t id, int pending)
{
	if (pending) {
		printf(hold ? "job %lld held: it does not start until nvq release\n" :
		    "job %lld released: it starts in its turn\n", (long long)id);
		return 0;
	}
	if (!hold) {
		printf("job %lld released\n", (long long)id);
		return 0;
	}
	return control_until(a, id, 6000, control_held);
}

int
cmd_hold(struct nvq_args *a)
{
	int hold = strcmp(a->cmd, "hold") == 0;
	struct proto_buf b = { 0 };
	struct proto_msg m;
	struct nvq_row *rows;
	const char *st;
	int64_t id;
	int i, k, n, rc = 0, pending;

	for (i = 0; i < a->argc; i++) {
		if ((k = control_array(a, a->argv[i], hold ? MSG_HOLD : MSG_RELEASE, &m)) != 0) {
			rc = k == -1 || proto_int(&m, "skipped", 0) > 0 ? 1 : rc;
			if (k == -1)
				continue;
			n = client_rows(&m, "id", 0, &rows);
			for (k = 0; k < n; k++) {
				st = row_str(&m, &rows[k], "state");
				if (control_held_one(a, hold, row_int(&m, &rows[k], "id", 0),
				    st != NULL && strcmp(st, "PENDING") == 0) != 0)
					rc = 1;
			}
			free(rows);
			proto_msg_free(&m);
			continue;
		}
		if ((k = control_ask(a, a->argv[i], hold ? MSG_HOLD : MSG_RELEASE, &b, &id,
		    &pending)) != 0) {
			rc = rc ? rc : k;
			continue;
		}
		if ((k = control_held_one(a, hold, id, pending)) != 0)
			rc = k;
	}
	proto_buf_free(&b);
	return rc;
}

/* What nvq suspend/resume says of job id, and for a suspend, waits for: 0 or 1. */
static int
control_suspend_one(struct nvq_args *a, int suspend, int64_t id)
{
	if (!suspend) {
		printf("job %lld resumes once its memory is free on its GPUs\n", (long long)id);
		return 0;
	}
	return control_until(a, id, 60000, control_suspended);
}

/*
 * nvq suspend ID...: asks nvqd to suspend each job and waits (up to ten
 * minutes: a checkpoint moves GiBs) until it is SUSPENDED, or the suspend
 * failed and it runs on (exit 1, with the reason).  nvq resume ID... lets
 * jobs suspended by nvq suspend resume once their memory fits.  A_: every
 * task of array A that it applies to.
 */
int
cmd_suspend(struct nvq_args *a)
{
	int suspend = strcmp(a->cmd, "suspend") == 0;
	struct proto_buf b = { 0 };
	struct proto_msg m;
	struct nvq_row *rows;
	int64_t id;
	int i, k, n, rc = 0;

	for (i = 0; i < a->argc; i++) {
		if ((k = control_array(a, a->argv[i], suspend ? MSG_SUSPEND : MSG_RESUME,
		    &m)) != 0) {
			rc = k == -1 || proto_int(&m, "skipped", 0) > 0 ? 1 : rc;
			if (k == -1)
				continue;
			n = client_rows(&m, "id", 0, &rows);
			for (k = 0; k < n; k++)
				if (control_suspend_one(a, suspend,
				    row_int(&m, &rows[k], "id", 0)) != 0)
					rc = 1;
			free(rows);
			proto_msg_free(&m);
			continue;
		}
		if ((k = control_ask(a, a->argv[i], suspend ? MSG_SUSPEND : MSG_RESUME, &b,
		    &id, NULL)) != 0) {
			rc = rc ? rc : k;
			continue;
		}
		if ((k = control_suspend_one(a, suspend, id)) != 0)
			rc = k;
	}
	proto_buf_free(&b);
	return rc;
}

int
wait_status(const char *state, int64_t code, int64_t sig)
{
	if (strcmp(state, "COMPLETED") == 0)
		return 0;
	if (strcmp(state, "TIMEOUT") == 0)
		return 124;
	if (strcmp(state, "CANCELLED") == 0)
		return 125;
	if (sig > 0)
		return 128 + (int)sig;
	return code > 0 && code < 256 ? (int)code : 1;
}

/*
 * Until something changes: a frame on the watch connection *fd (nvqd pushes
 * one at a job's end, at once after a quiet moment), or WAIT_RECHECK_MS
 * without one; without a watch (refused, or nvqd restarted), *delay,
 * doubled up to WAIT_POLL_MAX_US for the next time.  The watch is opened
 * here, the first time: the caller looks once more after that, so that no
 * end between its look and the watch is missed.
 */
#define WAIT_RECHECK_MS	5000
#define WAIT_POLL_MAX_US	500000

static void
wait_change(const char *socket, int *fd, int *tried, useconds_t *delay)
{
	struct pollfd pf;
	struct proto_msg m;

	if (*fd == -1 && !*tried) {
		*tried = 1;
		nvq_quiet++;	/* refused (nvq top's room): polled, as before, quietly */
		*fd = client_watch(socket, 1);
		nvq_quiet--;
		if (*fd != -1)
			return;
	}
	if (*fd == -1) {
		usleep(*delay);
		*delay = *delay < WAIT_POLL_MAX_US / 2 ? *delay * 2 : WAIT_POLL_MAX_US;
		return;
	}
	pf.fd = *fd;
	pf.events = POLLIN;
	if (poll(&pf, 1, WAIT_RECHECK_MS) > 0) {
		if (client_next(*fd, &m) == 0)
			proto_msg_free(&m);
		else {
			close(*fd);
			*fd = -1;
		}
	}
}

int
cmd_wait(struct nvq_args *a)
{
	struct proto_msg m;
	struct nvq_row job;
	int64_t id, *ids, active, code = -1, sig = 0;
	char failed[16];
	useconds_t delay = 20000;
	const char *st;
	int i, rc = 0, r, fd = -1, tried = 0, *kind;

	ids = calloc((size_t)a->argc + 1, sizeof(*ids));
	kind = calloc((size_t)a->argc + 1, sizeof(*kind));
	if (ids == NULL || kind == NULL) {
		free(ids);
		free(kind);
		nvq_err("out of memory");
		return 1;
	}
	/* every name checked (A_I found) before the first wait */
	for (i = 0; i < a->argc; i++)
		if ((kind[i] = task_id(a->socket, a->argv[i], &ids[i])) < 0) {
			r = kind[i] == TASK_FAILED ? 1 : 2;
			free(ids);
			free(kind);
			return r;
		}
	for (i = 0; i < a->argc; i++) {
		id = ids[i];
		/* A_: until none of its tasks is active; the first that failed says */
		while (kind[i] == TASK_ARRAY) {
			if (task_array_look(a->socket, id, &active, failed, sizeof(failed), &code,
			    &sig) == -1) {
				rc = 1;
				goto out;
			}
			if (active == 0) {
				if (rc == 0)
					rc = wait_status(failed, code, sig);
				break;
			}
			wait_change(a->socket, &fd, &tried, &delay);
		}
		if (kind[i] == TASK_ARRAY)
			continue;
		for (;;) {
			if (jobs_fetch(a->socket, id, &m, &job) == -1) {
				rc = 1;
				goto out;
			}
			st = row_str(&m, &job, "state");
			if (st && !fmt_state_active(st))
				break;
			proto_msg_free(&m);
			wait_change(a->socket, &fd, &tried, &delay);
		}
		r = wait_status(st, row_int(&m, &job, "exit_code", -1), row_int(&m, &job, "signal", 0));
		proto_msg_free(&m);
		if (rc == 0)
			rc = r;
	}
out:
	if (fd != -1)
		close(fd);
	free(ids);
	free(kind);
	return rc;
}
