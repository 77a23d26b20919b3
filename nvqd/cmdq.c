/*
 * cmdq.c: outside commands off the loop (cmdq.h).  A command is done when
 * its process has exited and both its output pipes are at their end; its
 * handles are closed, then its callback runs, then it is freed.
 */
#include <errno.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cmdq.h"
#include "log.h"

struct cmd_out {
	char		*buf;
	size_t		len, cap;
};

struct cmd {
	struct cmdq	*q;
	struct cmd	*next;
	cmdq_cb		cb;
	void		*arg;
	char		**argv, **env;	/* copies, in mem */
	char		*in;
	size_t		inlen;
	char		*mem;
	int		as_user;
	uint32_t	uid, gid;
	double		timeout;
	uv_process_t	proc;
	uv_pipe_t	pin, pout, perr;
	uv_write_t	w;
	uv_timer_t	timer;
	struct cmd_out	out, err;
	int		open;		/* handles not yet closed */
	int		status;
	int		started;
};

struct cmdq {
	uv_loop_t	*loop;
	int		parallel, running, queued, stopping;
	struct cmd	*head, *tail;	/* queued */
	struct cmd	*live;		/* running: a list through next */
};

struct cmdq *
cmdq_new(uv_loop_t *loop, int parallel)
{
	struct cmdq *q = calloc(1, sizeof(*q));

	if (q == NULL)
		return NULL;
	q->loop = loop;
	q->parallel = parallel > 0 ? parallel : 1;
	return q;
}

int
cmdq_busy(const struct cmdq *q)
{
	return q->running + q->queued;
}

/* Copies a NULL-ended vector into mem at *off (first pass: counts only). */
static char **
cmdq_vec(char *const *v, char *mem, size_t *off, char **slots)
{
	size_t i, n;

	for (i = 0; v[i] != NULL; i++) {
		n = strlen(v[i]) + 1;
		if (mem != NULL) {
			memcpy(mem + *off, v[i], n);
			slots[i] = mem + *off;
		}
		*off += n;
	}
	if (slots != NULL)
		slots[i] = NULL;
	return slots;
}

static size_t
cmdq_count(char *const *v)
{
	size_t i = 0;

	while (v != NULL && v[i] != NULL)
		i++;
	return i;
}

static void cmdq_next(struct cmdq *);

static void
cmdq_free(struct cmd *c)
{
	free(c->out.buf);
	free(c->err.buf);
	free(c->mem);
	free(c);
}

/* All of c's handles are closed: its callback, then the next command. */
static void
cmdq_closed_cb(uv_handle_t *h)
{
	struct cmd *c = h->data;
	struct cmdq *q = c->q;
	struct cmd **p;

	if (--c->open > 0)
		return;
	for (p = &q->live; *p != NULL; p = &(*p)->next)
		if (*p == c) {
			*p = c->next;
			break;
		}
	q->running--;
	c->cb(c->arg, q->stopping ? CMDQ_STOPPED : c->status, c->out.buf ? c->out.buf : "",
	    c->err.buf ? c->err.buf : "");
	cmdq_free(c);
	if (q->stopping && q->running == 0)
		free(q);
	else if (!q->stopping)
		cmdq_next(q);
}

static void
cmdq_close(uv_handle_t *h)
{
	if (!uv_is_closing(h))
		uv_close(h, cmdq_closed_cb);
}

static void
cmdq_alloc_cb(uv_handle_t *h, size_t hint, uv_buf_t *b)
{
	struct cmd *c = h->data;
	struct cmd_out *o = h == (uv_handle_t *)&c->pout ? &c->out : &c->err;
	size_t want = o->len + 65536 + 1;
	char *p;

	(void)hint;
	if (want > o->cap) {
		if ((p = realloc(o->buf, want)) == NULL) {
			*b = uv_buf_init(NULL, 0);
			return;
		}
		o->buf = p;
		o->cap = want;
	}
	*b = uv_buf_init(o->buf + o->len, (unsigned)(o->cap - o->len - 1));
}

static void
cmdq_read_cb(uv_stream_t *s, ssize_t n, const uv_buf_t *b)
{
	struct cmd *c = s->data;
	struct cmd_out *o = s == (uv_stream_t *)&c->pout ? &c->out : &c->err;

	(void)b;
	if (n > 0 && o->len + (size_t)n <= CMDQ_MAX_OUT) {
		o->len += (size_t)n;
		o->buf[o->len] = '\0';
	}
	if (n < 0)
		cmdq_close((uv_handle_t *)s);
}

static void
cmdq_exit_cb(uv_process_t *p, int64_t status, int sig)
{
	struct cmd *c = p->data;

	c->status = sig > 0 ? 128 + sig : (int)status;
	cmdq_close((uv_handle_t *)&c->timer);
	cmdq_close((uv_handle_t *)p);
}

static void
cmdq_timer_cb(uv_timer_t *t)
{
	struct cmd *c = t->data;

	log_warnx("%s: still running after %.0f s; killed", c->argv[0], c->timeout);
	/* not reaped yet, so the pid is still this child's */
	uv_process_kill(&c->proc, SIGKILL);
}

static void
cmdq_write_cb(uv_write_t *w, int status)
{
	struct cmd *c = w->data;

	(void)status;	/* a command that stops reading early is its own business */
	cmdq_close((uv_handle_t *)&c->pin);
}

/* Starts c; on failure its callback still runs, from the close. */
static void
cmdq_start(struct cmdq *q, struct cmd *c)
{
	uv_process_options_t o;
	uv_stdio_container_t io[3];
	uv_buf_t b;
	int r;

	c->next = q->live;
	q->live = c;
	q->running++;
	memset(&o, 0, sizeof(o));
	uv_pipe_init(q->loop, &c->pin, 0);
	uv_pipe_init(q->loop, &c->pout, 0);
	uv_pipe_init(q->loop, &c->perr, 0);
	uv_timer_init(q->loop, &c->timer);
	c->pin.data = c->pout.data = c->perr.data = c->timer.data = c->proc.data = c;
	c->open = 5;
	io[0].flags = c->in != NULL ? UV_CREATE_PIPE | UV_READABLE_PIPE : UV_IGNORE;
	io[0].data.stream = (uv_stream_t *)&c->pin;
	io[1].flags = UV_CREATE_PIPE | UV_WRITABLE_PIPE;
	io[1].data.stream = (uv_stream_t *)&c->pout;
	io[2].flags = UV_CREATE_PIPE | UV_WRITABLE_PIPE;
	io[2].data.stream = (uv_stream_t *)&c->perr;
	o.stdio = io;
	o.stdio_count = 3;
	o.file = c->argv[0];
	o.args = c->argv;
	o.env = c->env;
	o.cwd = "/";
	o.exit_cb = cmdq_exit_cb;
	if (c->as_user && geteuid() == 0) {
		/* libuv calls setgroups(0, NULL) before setgid and setuid */
		o.flags |= UV_PROCESS_SETUID | UV_PROCESS_SETGID;
		o.uid = c->uid;
		o.gid = c->gid;
	}
	if ((r = uv_spawn(q->loop, &c->proc, &o)) != 0) {
		c->status = -1;
		c->err.buf = malloc(256);
		if (c->err.buf != NULL)
			snprintf(c->err.buf, 256, "cannot run %s: %s", c->argv[0], uv_strerror(r));
		c->proc.data = c;
		cmdq_close((uv_handle_t *)&c->proc);
		cmdq_close((uv_handle_t *)&c->pin);
		cmdq_close((uv_handle_t *)&c->pout);
		cmdq_close((uv_handle_t *)&c->perr);
		cmdq_close((uv_handle_t *)&c->timer);
		return;
	}
	c->started = 1;
	uv_read_start((uv_stream_t *)&c->pout, cmdq_alloc_cb, cmdq_read_cb);
	uv_read_start((uv_stream_t *)&c->perr, cmdq_alloc_cb, cmdq_read_cb);
	if (c->in != NULL) {
		b = uv_buf_init(c->in, (unsigned)c->inlen);
		c->w.data = c;
		if (uv_write(&c->w, (uv_stream_t *)&c->pin, &b, 1, cmdq_write_cb) != 0)
			cmdq_close((uv_handle_t *)&c->pin);
	} else
		cmdq_close((uv_handle_t *)&c->pin);
	uv_timer_start(&c->timer, cmdq_timer_cb, (uint64_t)(c->timeout * 1000), 0);
}

static void
cmdq_next(struct cmdq *q)
{
	struct cmd *c;

	while (q->running < q->parallel && (c = q->head) != NULL) {
		q->head = c->next;
		if (q->head == NULL)
			q->tail = NULL;
		q->queued--;
		c->next = NULL;
		cmdq_start(q, c);
	}
}

int
cmdq_run(struct cmdq *q, const struct cmd_spec *s, cmdq_cb cb, void *arg)
{
	size_t na = cmdq_count(s->argv), ne = cmdq_count(s->env), bytes = 0, off;
	struct cmd *c;

	if (q->stopping || na == 0)
		return -1;
	cmdq_vec(s->argv, NULL, &bytes, NULL);
	if (s->env != NULL)
		cmdq_vec(s->env, NULL, &bytes, NULL);
	if ((c = calloc(1, sizeof(*c))) == NULL)
		return -1;
	off = (na + 1 + (s->env ? ne + 1 : 0)) * sizeof(char *);
	if ((c->mem = malloc(off + bytes + s->inlen + 1)) == NULL) {
		free(c);
		return -1;
	}
	c->argv = (char **)(void *)c->mem;
	cmdq_vec(s->argv, c->mem, &off, c->argv);
	if (s->env != NULL) {
		c->env = c->argv + na + 1;
		cmdq_vec(s->env, c->mem, &off, c->env);
	}
	if (s->in != NULL) {
		c->in = c->mem + off;
		memcpy(c->in, s->in, s->inlen);
		c->inlen = s->inlen;
	}
	c->q = q;
	c->cb = cb;
	c->arg = arg;
	c->as_user = s->as_user;
	c->uid = s->uid;
	c->gid = s->gid;
	c->timeout = s->timeout > 0 ? s->timeout : 60;
	if (q->tail != NULL)
		q->tail->next = c;
	else
		q->head = c;
	q->tail = c;
	q->queued++;
	cmdq_next(q);
	return 0;
}

void
cmdq_stop(struct cmdq *q)
{
	struct cmd *c, *next;

	q->stopping = 1;
	for (c = q->head; c != NULL; c = next) {
		next = c->next;
		c->cb(c->arg, CMDQ_STOPPED, "", "");
		cmdq_free(c);
	}
	q->head = q->tail = NULL;
	q->queued = 0;
	for (c = q->live; c != NULL; c = c->next)
		if (c->started && !uv_is_closing((uv_handle_t *)&c->proc))
			uv_process_kill(&c->proc, SIGKILL);
	if (q->running == 0)
		free(q);
}
