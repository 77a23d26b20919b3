/*
 * submit.c: the submits of one loop turn, stored together (see submit.h).
 */
#include <stdlib.h>
#include <string.h>

#include "log.h"
#include "parse.h"
#include "proto.h"
#include "submit.h"

struct submit_item {
	struct server_conn	*conn;		/* NULL once it closed */
	struct store_job_new	j;		/* its strings point into buf */
	char			*buf;
	int64_t			after[PARSE_MAX_IDS];
	int			nafter;
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

int
submit_queue(struct server_conn *conn, const struct store_job_new *j, const int64_t *after,
    int nafter)
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
	    submit_len(j->stderr_path);
	it = &Q.items[Q.n];
	memset(it, 0, sizeof(*it));
	if ((it->buf = malloc(len + 1)) == NULL)
		return -1;
	it->conn = conn;
	it->j = *j;
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
	if (nafter > PARSE_MAX_IDS)
		nafter = PARSE_MAX_IDS;
	memcpy(it->after, after, sizeof(*after) * (size_t)nafter);
	it->nafter = nafter;
	if (Q.n++ == 0 && Q.open)
		uv_check_start(&Q.check, submit_flush);
	return 0;
}

int
submit_queued(uint32_t uid)
{
	int i, n = 0;

	for (i = 0; i < Q.n; i++)
		n += Q.items[i].j.uid == uid;
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

/* Sends conn its reply: the id, or the error. */
static void
submit_reply(struct server_conn *conn, int64_t id, const char *err)
{
	struct proto_buf b = { 0 };

	if (conn == NULL)
		return;
	proto_begin(&b, err == NULL ? MSG_OK : MSG_ERROR);
	if (err == NULL)
		proto_put_int(&b, "id", id);
	else
		proto_put_str(&b, "error", err);
	if (proto_end(&b) == -1) {
		proto_buf_free(&b);
		server_end(conn);
		return;
	}
	server_push(conn, &b);
}

static void
submit_flush(uv_check_t *h)
{
	const struct store_job_new **jobs = NULL;
	struct engine *e = Q.e;
	struct submit_item *it;
	int64_t *ids = NULL;
	char err[512];
	int i, n = Q.n;

	(void)h;
	uv_check_stop(&Q.check);
	if (n == 0)
		return;
	err[0] = '\0';
	if ((jobs = malloc(sizeof(*jobs) * (size_t)n)) == NULL ||
	    (ids = malloc(sizeof(*ids) * (size_t)n)) == NULL)
		snprintf(err, sizeof(err), "out of memory; nothing was queued");
	else {
		for (i = 0; i < n; i++)
			jobs[i] = &Q.items[i].j;
		if (store_jobs_insert(e->store, jobs, n, ids) == -1)
			snprintf(err, sizeof(err), "cannot store the job: %s; nothing was queued",
			    store_errmsg(e->store));
	}
	for (i = 0; i < n; i++) {
		it = &Q.items[i];
		if (err[0] == '\0' && engine_add(e, ids[i], it->j.uid, it->j.gid, it->j.user,
		    it->j.gpus, it->j.mem, it->j.priority, it->j.now, it->j.time_limit,
		    it->after, it->nafter) == -1) {
			/* stored: the next start of nvqd finds it (recover.c) */
			log_warnx("job %lld: out of memory: it waits for nvqd's restart",
			    (long long)ids[i]);
			submit_reply(it->conn, 0, "out of memory");
		} else if (err[0] == '\0') {
			e->jobs->requeue = it->j.requeue;
			e->jobs->preempt_signal = it->j.preempt_signal;
			log_debug("job %lld submitted by %s", (long long)ids[i], it->j.user);
			submit_reply(it->conn, ids[i], NULL);
		} else
			submit_reply(it->conn, 0, err);
		free(it->buf);
	}
	if (err[0] != '\0')
		log_warnx("%d submits not stored: %s", n, err);
	else if (n > 1)
		log_debug("%d submits stored in one commit", n);
	Q.n = 0;
	free(jobs);
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
