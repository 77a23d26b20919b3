/*
 * submitq.c: the submits of one loop turn, checked (submit.c) and queued
 * here, stored together at the end of the turn (one transaction, or one
 * each where that fails), then handed to the engine and answered.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "log.h"
#include "parse.h"
#include "proto.h"
#include "slurm.h"
#include "submit.h"

struct submit_item {
	struct server_conn	*conn;		/* NULL once it closed */
	struct store_job_new	j;		/* its strings point into buf */
	char			*buf;
	int64_t			after[PARSE_MAX_IDS];
	int			nafter;
	/* an array: its tasks' indexes and, with --stdin, their commands */
	int			ntasks;		/* 0: one job, not an array */
	int			limit;
	int64_t			*index;
	char			**targv, **tcmd;
	int			*targv_len;
	char			note[160];	/* said in the reply: -m auto's choice */
	uint64_t		row;		/* bytes each of its jobs keeps of its own, */
	uint64_t		shared;		/* its tasks' shared ones (submit_bytes) */
	uint64_t		bytes;		/* and all of them */
};

static struct {
	struct engine		*e;
	uv_check_t		check;
	int			open;
	struct submit_item	*items;
	int			n, cap;
} Q;

static void submit_flush(uv_check_t *);

void
submit_init(uv_loop_t *loop, struct engine *e)
{
	Q.e = e;
	uv_check_init(loop, &Q.check);
	Q.open = 1;
}

/* Appends len bytes of s (len + 1 with its NUL if len < 0) at *off in buf: the copy. */
static const char *
submit_copy(char *buf, size_t *off, const char *s, int len)
{
	size_t n;
	char *p;

	if (s == NULL)
		return NULL;
	n = len < 0 ? strlen(s) + 1 : (size_t)len;
	p = buf + *off;
	memcpy(p, s, n);
	*off += n;
	return p;
}

static size_t
submit_len(const char *s)
{
	return s != NULL ? strlen(s) + 1 : 0;
}

/* What a job of j keeps of its own but for its command and environment. */
static uint64_t
submit_row(const struct store_job_new *j)
{
	return STORE_ROW_BYTES + submit_len(j->user) + submit_len(j->name) + submit_len(j->cwd) +
	    submit_len(j->after) + submit_len(j->groups) + submit_len(j->stdout_path) +
	    submit_len(j->stderr_path) + submit_len(j->gpus_allow) + submit_len(j->gpus_deny) +
	    submit_len(j->notify) + submit_len(j->mail_user);
}

/* Task t's own bytes (t < 0: a job of no array), of row bytes and its command's. */
static uint64_t
submit_own(const struct store_job_new *j, uint64_t row, const int *argv_len,
    const char *const *cmd, int t)
{
	if (t < 0)
		return row + submit_len(j->command) + (uint64_t)j->argv_len + (uint64_t)j->env_len;
	if (argv_len == NULL)
		return row;
	return row + (uint64_t)argv_len[t] + submit_len(cmd[t]);
}

uint64_t
submit_bytes(const struct store_job_new *j, const struct submit_array *arr, uint64_t *shared)
{
	uint64_t row = submit_row(j), own = 0;
	int k;

	*shared = 0;
	if (arr == NULL)
		return submit_own(j, row, NULL, NULL, -1);
	*shared = (uint64_t)j->env_len + (arr->argv == NULL ?
	    submit_len(j->command) + (uint64_t)j->argv_len : 0);
	for (k = 0; k < arr->n; k++)
		own += submit_own(j, row, arr->argv_len, arr->cmd, k);
	return own;
}

uint64_t
submit_queued_bytes(uint32_t uid)
{
	uint64_t n = 0;
	int i;

	for (i = 0; i < Q.n; i++)
		if (Q.items[i].j.uid == uid)
			n += Q.items[i].bytes;
	return n;
}

/* The tasks' own parts of an array into it; 0 or -1. */
static int
submit_tasks(struct submit_item *it, const struct submit_array *arr)
{
	int k;

	it->ntasks = arr->n;
	it->limit = arr->limit;
	if ((it->index = malloc(sizeof(*it->index) * (size_t)arr->n)) == NULL)
		return -1;
	memcpy(it->index, arr->index, sizeof(*it->index) * (size_t)arr->n);
	if (arr->argv == NULL)
		return 0;
	if ((it->targv = calloc((size_t)arr->n, sizeof(*it->targv))) == NULL ||
	    (it->tcmd = calloc((size_t)arr->n, sizeof(*it->tcmd))) == NULL ||
	    (it->targv_len = malloc(sizeof(int) * (size_t)arr->n)) == NULL)
		return -1;
	for (k = 0; k < arr->n; k++) {
		it->targv_len[k] = arr->argv_len[k];
		if ((it->targv[k] = malloc((size_t)arr->argv_len[k])) == NULL ||
		    (it->tcmd[k] = strdup(arr->cmd[k])) == NULL)
			return -1;
		memcpy(it->targv[k], arr->argv[k], (size_t)arr->argv_len[k]);
	}
	return 0;
}

static void
submit_item_free(struct submit_item *it)
{
	int k;

	for (k = 0; it->targv != NULL && k < it->ntasks; k++) {
		free(it->targv[k]);
		if (it->tcmd != NULL)
			free(it->tcmd[k]);
	}
	free(it->targv);
	free(it->tcmd);
	free(it->targv_len);
	free(it->index);
	free(it->buf);
}

int
submit_queue(struct server_conn *conn, const struct store_job_new *j, const int64_t *after,
    int nafter, const struct submit_array *arr, const char *note)
{
	struct submit_item *it;
	size_t len, off = 0;
	void *p;

	if (Q.n == Q.cap) {
		if ((p = realloc(Q.items, sizeof(*Q.items) * (size_t)(Q.cap ? Q.cap * 2 : 16))) ==
		    NULL)
			return -1;
		Q.items = p;
		Q.cap = Q.cap ? Q.cap * 2 : 16;
	}
	len = submit_len(j->user) + submit_len(j->name) + submit_len(j->command) +
	    submit_len(j->cwd) + (size_t)j->argv_len + (size_t)j->env_len +
	    submit_len(j->groups) + submit_len(j->after) + submit_len(j->stdout_path) +
	    submit_len(j->stderr_path) + submit_len(j->gpus_allow) + submit_len(j->gpus_deny) +
	    submit_len(j->notify) + submit_len(j->mail_user) + submit_len(j->qos) +
	    submit_len(j->partition) + submit_len(j->account);
	it = &Q.items[Q.n];
	memset(it, 0, sizeof(*it));
	if ((it->buf = malloc(len + 1)) == NULL)
		return -1;
	it->conn = conn;
	it->j = *j;
	if (note != NULL)
		snprintf(it->note, sizeof(it->note), "%s", note);
	it->j.user = submit_copy(it->buf, &off, j->user, -1);
	it->j.name = submit_copy(it->buf, &off, j->name, -1);
	it->j.command = submit_copy(it->buf, &off, j->command, -1);
	it->j.cwd = submit_copy(it->buf, &off, j->cwd, -1);
	it->j.argv = submit_copy(it->buf, &off, j->argv, j->argv_len);
	it->j.env = submit_copy(it->buf, &off, j->env, j->env_len);
	it->j.groups = submit_copy(it->buf, &off, j->groups, -1);
	it->j.after = submit_copy(it->buf, &off, j->after, -1);
	it->j.stdout_path = submit_copy(it->buf, &off, j->stdout_path, -1);
	it->j.stderr_path = submit_copy(it->buf, &off, j->stderr_path, -1);
	it->j.gpus_allow = submit_copy(it->buf, &off, j->gpus_allow, -1);
	it->j.gpus_deny = submit_copy(it->buf, &off, j->gpus_deny, -1);
	it->j.notify = submit_copy(it->buf, &off, j->notify, -1);
	it->j.mail_user = submit_copy(it->buf, &off, j->mail_user, -1);
	it->j.qos = submit_copy(it->buf, &off, j->qos, -1);
	it->j.partition = submit_copy(it->buf, &off, j->partition, -1);
	it->j.account = submit_copy(it->buf, &off, j->account, -1);
	if (nafter > PARSE_MAX_IDS)
		nafter = PARSE_MAX_IDS;
	memcpy(it->after, after, sizeof(*after) * (size_t)nafter);
	it->nafter = nafter;
	if (arr != NULL && submit_tasks(it, arr) == -1) {
		submit_item_free(it);
		return -1;
	}
	it->row = submit_row(&it->j);
	it->bytes = submit_bytes(&it->j, arr, &it->shared) + it->shared;
	if (Q.n++ == 0 && Q.open)
		uv_check_start(&Q.check, submit_flush);
	return 0;
}

int
submit_queued_lc(uint32_t uid)
{
	int i, n = 0;

	for (i = 0; i < Q.n; i++)
		if (Q.items[i].j.uid == uid && Q.items[i].j.lc)
			n += Q.items[i].ntasks > 0 ? Q.items[i].ntasks : 1;
	return n;
}

int
submit_queued_named(uint32_t uid, const char *name)
{
	int i;

	for (i = 0; i < Q.n; i++)
		if (Q.items[i].j.uid == uid && Q.items[i].j.name != NULL &&
		    strcmp(Q.items[i].j.name, name) == 0)
			return 1;
	return 0;
}

void
submit_flush_now(void)
{
	if (Q.open)
		submit_flush(&Q.check);
}

int
submit_queued(uint32_t uid)
{
	int i, n = 0;

	for (i = 0; i < Q.n; i++)
		if (Q.items[i].j.uid == uid)
			n += Q.items[i].ntasks > 0 ? Q.items[i].ntasks : 1;
	return n;
}

void
submit_forget(struct server_conn *conn)
{
	int i;

	for (i = 0; i < Q.n; i++)
		if (Q.items[i].conn == conn)
			Q.items[i].conn = NULL;
}

/* Sends conn its reply: the id (and for an array, its count), or the error. */
static void
submit_reply(struct server_conn *conn, int64_t id, int ntasks, const char *err,
    const char *note)
{
	struct proto_buf b = { 0 };

	if (conn == NULL)
		return;
	proto_begin(&b, err == NULL ? MSG_OK : MSG_ERROR);
	if (err == NULL) {
		proto_put_int(&b, "id", id);
		if (ntasks > 0)
			proto_put_int(&b, "tasks", ntasks);
		if (note != NULL && *note != '\0')
			proto_put_str(&b, "note", note);
	} else
		proto_put_str(&b, "error", err);
	if (proto_end(&b) == -1) {
		proto_buf_free(&b);
		server_end(conn);
		return;
	}
	server_push(conn, &b);
}

/* Item it's jobs, from *k on in jobs (its tasks made from its job). */
static void
submit_expand(struct submit_item *it, struct store_job_new *copies,
    const struct store_job_new **jobs, int *k)
{
	int t;

	if (it->ntasks == 0) {
		jobs[(*k)++] = &it->j;
		return;
	}
	for (t = 0; t < it->ntasks; t++) {
		copies[*k] = it->j;
		copies[*k].array_task = 1;
		copies[*k].array_index = it->index[t];
		copies[*k].array_back = t;
		copies[*k].array_limit = it->limit;
		copies[*k].cmd_shared = it->targv == NULL;
		if (it->targv != NULL) {
			copies[*k].argv = it->targv[t];
			copies[*k].argv_len = it->targv_len[t];
			copies[*k].command = it->tcmd[t];
		}
		jobs[*k] = &copies[*k];
		(*k)++;
	}
}

/* Hands item it's stored jobs, from ids[k] on, to the engine, and answers. */
static void
submit_engine(struct engine *e, struct submit_item *it, const int64_t *ids, int k)
{
	struct engine_array arr = { ids[k], 0, it->limit };
	int t, n = it->ntasks > 0 ? it->ntasks : 1, lost = 0;

	for (t = 0; t < n && e->slurm != NULL; t++)
		if (slurm_add(e->slurm, ids[k + t], it->j.uid, it->j.gid, it->j.gpus, it->j.mem,
		    "PENDING", -1, 0) == -1) {
			log_warnx("job %lld: out of memory: it waits for nvqd's restart",
			    (long long)ids[k + t]);
			lost++;
		}
	for (t = 0; t < n && e->slurm == NULL; t++) {
		arr.index = it->ntasks > 0 ? it->index[t] : 0;
		if (engine_add(e, ids[k + t], it->j.uid, it->j.gid, it->j.user, it->j.gpus,
		    it->j.mem, it->j.priority, it->j.now, it->j.time_limit, it->after,
		    it->nafter, it->ntasks > 0 ? &arr : NULL) == -1) {
			/* stored: the next start of nvqd finds it (recover.c) */
			log_warnx("job %lld: out of memory: it waits for nvqd's restart",
			    (long long)ids[k + t]);
			lost++;
			continue;
		}
		engine_charge(e, e->jobs, submit_own(&it->j, it->row, it->targv_len,
		    (const char *const *)it->tcmd, it->ntasks > 0 ? t : -1),
		    it->ntasks > 0 ? ids[k] : 0, it->shared);
		e->jobs->requeue = it->j.requeue;
		e->jobs->preempt_signal = it->j.preempt_signal;
		e->jobs->warn_sig = it->j.warn_sig;
		e->jobs->warn_time = it->j.warn_time;
		e->jobs->warn_batch = it->j.warn_batch;
		e->jobs->notify = it->j.notify != NULL || it->j.mail_user != NULL;
		e->jobs->cpus = it->j.cpus;
		e->jobs->host_mem = it->j.host_mem;
		e->jobs->mem_per_cpu = it->j.mem_per_cpu;
		engine_qos(e, e->jobs, it->j.qos);
		engine_lc(e, e->jobs, it->j.lc);
		if (it->j.held || it->j.gpus_allow != NULL || it->j.gpus_deny != NULL) {
			struct engine_extra x = { it->j.held, 0, 0, it->j.gpus_allow,
			    it->j.gpus_deny };

			engine_extras(e, e->jobs, &x);
		}
	}
	if (lost == n) {
		submit_reply(it->conn, 0, 0, "out of memory", NULL);
		return;
	}
	if (it->ntasks > 0)
		log_debug("array %lld of %d tasks submitted by %s", (long long)ids[k], n,
		    it->j.user);
	else
		log_debug("job %lld submitted by %s", (long long)ids[k], it->j.user);
	submit_reply(it->conn, ids[k], it->ntasks, NULL, it->note);
}

/*
 * Stores the turn's submits in one commit; where that fails (one submit
 * over the disk's headroom, say) each is tried on its own, so that one
 * submit's refusal is not everyone's in its turn.  Answers each.
 */
static void
submit_flush(uv_check_t *h)
{
	const struct store_job_new **jobs = NULL;
	struct store_job_new *copies = NULL;
	struct engine *e = Q.e;
	int64_t *ids = NULL;
	char err[512], own[512];
	int i, k, n = Q.n, total = 0, one = 0, failed = 0, cnt;

	(void)h;
	uv_check_stop(&Q.check);
	if (n == 0)
		return;
	err[0] = '\0';
	for (i = 0; i < n; i++)
		total += Q.items[i].ntasks > 0 ? Q.items[i].ntasks : 1;
	if ((jobs = malloc(sizeof(*jobs) * (size_t)total)) == NULL ||
	    (copies = malloc(sizeof(*copies) * (size_t)total)) == NULL ||
	    (ids = malloc(sizeof(*ids) * (size_t)total)) == NULL)
		snprintf(err, sizeof(err), "out of memory; nothing was queued");
	else {
		for (i = 0, k = 0; i < n; i++)
			submit_expand(&Q.items[i], copies, jobs, &k);
		if (store_jobs_insert(e->store, jobs, total, ids) == -1) {
			snprintf(err, sizeof(err), "cannot store the job: %s; nothing was queued",
			    store_errmsg(e->store));
			one = n > 1;
		}
	}
	for (i = 0, k = 0; i < n; i++) {
		cnt = Q.items[i].ntasks > 0 ? Q.items[i].ntasks : 1;
		own[0] = '\0';
		if (one && store_jobs_insert(e->store, jobs + k, cnt, ids + k) == -1)
			snprintf(own, sizeof(own), "cannot store the job: %s; nothing was queued",
			    store_errmsg(e->store));
		if (one ? own[0] == '\0' : err[0] == '\0')
			submit_engine(e, &Q.items[i], ids, k);
		else {
			if (one)
				memcpy(err, own, sizeof(err));	/* the one logged */
			submit_reply(Q.items[i].conn, 0, 0, err, NULL);
			failed++;
		}
		k += cnt;
		submit_item_free(&Q.items[i]);
	}
	if (failed > 0)
		log_warnx("%d of %d submits not stored: %s", failed, n, err);
	else if (n > 1 || total > 1)
		log_debug("%d submits stored in %s (%d jobs)", n, one ? "commits of their own" :
		    "one commit", total);
	Q.n = 0;
	free(jobs);
	free(copies);
	free(ids);
	engine_kick(e);
}

static void
submit_noop_close_cb(uv_handle_t *h)
{
	(void)h;
}

void
submit_stop(void)
{
	if (!Q.open)
		return;
	submit_flush(&Q.check);
	Q.open = 0;
	uv_close((uv_handle_t *)&Q.check, submit_noop_close_cb);
	free(Q.items);
	Q.items = NULL;
	Q.cap = 0;
}
