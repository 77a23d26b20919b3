/*
 * suspend.c: the steps of a switch that run nvq-ckpt (see suspend.h).
 */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "log.h"
#include "member.h"
#include "proc.h"
#include "runner.h"
#include "suspend.h"

#define CKPT_ARGS	(10 + 256)	/* nvq-ckpt's options, verb and pids */
#define SUSPEND_MAX_PROCS 128	/* processes of a job found without the hook */

/*
 * One nvq-ckpt run.  Its lines go to a file (out); it closes its fd 3 (the
 * pipe done) once the last is written.  Its switch goes on at the first of
 * that pipe's end with a last line written (ok or error) and the process's
 * end: a process that has checkpointed another takes 0.05 to 0.11 s more
 * to end (the driver's teardown), which the switch need not wait for.  One
 * started ahead (suspend_ready, nvq-ckpt wait) is on e->ckpt_ready until
 * it gets its order on its stdin (the pipe in), or is called off; until
 * then nothing it does is reported.
 */
struct susp_op {
	uv_process_t	proc;
	uv_pipe_t	done;		/* its fd 3 */
	uv_pipe_t	in;		/* a ready one's stdin: its order, then closed */
	struct engine	*e;
	int64_t		id;
	int		resume;
	int		standby;	/* ready ahead, waiting for its order */
	int		has;		/* SUSP_DONE | SUSP_IN | SUSP_PROC: handles open */
	int		closing;	/* those closed whose close callback has not run */
	int		reported;	/* GC_EV_HELPER sent */
	uint64_t	reported_at;	/* uv_hrtime() */
	struct susp_op	*next;		/* in e->ckpt_ready while standby */
	char		out[PATH_MAX];
};

#define SUSP_DONE	0x1
#define SUSP_IN		0x2
#define SUSP_PROC	0x4

static void
susp_close_cb(uv_handle_t *h)
{
	struct susp_op *op = h->data;
	int which = h == (uv_handle_t *)&op->done ? SUSP_DONE :
	    h == (uv_handle_t *)&op->in ? SUSP_IN : SUSP_PROC;

	op->closing &= ~which;
	if (op->has == 0 && op->closing == 0)
		free(op);
}

/* Closes those of its handles in which that are open; op is freed after the last. */
static void
susp_close(struct susp_op *op, int which)
{
	static const int bits[] = { SUSP_DONE, SUSP_IN, SUSP_PROC };
	uv_handle_t *h[] = { (uv_handle_t *)&op->done, (uv_handle_t *)&op->in,
	    (uv_handle_t *)&op->proc };
	size_t i;

	for (i = 0; i < 3; i++)
		if (which & op->has & bits[i]) {
			op->has &= ~bits[i];
			op->closing |= bits[i];
			uv_close(h[i], susp_close_cb);
		}
}

int64_t
suspend_host_available(void)
{
	char line[256];
	long long kb;
	FILE *fp = fopen("/proc/meminfo", "r");
	int64_t r = -1;

	if (fp == NULL)
		return -1;
	while (fgets(line, sizeof(line), fp) != NULL)
		if (sscanf(line, "MemAvailable: %lld kB", &kb) == 1) {
			r = (int64_t)kb * 1024;
			break;
		}
	fclose(fp);
	return r;
}

int64_t
suspend_bytes(struct engine *e, const struct job *j)
{
	int nvml = !e->gpus.is_virtual && e->gpus.lib != NULL && j->gpu_used != NULL;
	uint64_t used = 0;
	int g;

	for (g = 0; g < e->gpus.n; g++) {
		if (!(j->gpumask & (1ULL << g)))
			continue;
		if (nvml && j->gpu_used[g] > 0)
			used += j->gpu_used[g];
		else if (j->hook_used != NULL)
			used += j->hook_used[g];
	}
	return j->nsess > 0 || used > 0 ? (int64_t)used : -1;
}

/*
 * Whether pid is a process of the job now, and its start time then: read
 * before and after the check, the same both times, so that the check was
 * of the process that start time names.  0, or -1 if it is not the job's.
 */
static int
susp_verify(const struct job *j, pid_t pid, int64_t *start)
{
	*start = proc_start_time(pid);
	if (*start < 0 || !member_of(j, pid) || proc_start_time(pid) != *start)
		return -1;
	return 0;
}

/*
 * Reads what nvq-ckpt wrote: 0 if it said ok, 1 if it said why not (into
 * err), -1 if neither; the driver's seconds.  Its lines are logged (debug:
 * a switch's timeline).
 */
static int
susp_read(const char *path, double *driver, char *err, size_t errlen)
{
	char line[512], step[32];
	double secs;
	int pid, code, ok = -1;
	FILE *fp = fopen(path, "r");

	*driver = 0;
	snprintf(err, errlen, "nvq-ckpt reported nothing");
	if (fp == NULL)
		return -1;
	while (fgets(line, sizeof(line), fp) != NULL) {
		line[strcspn(line, "\n")] = '\0';
		log_debug("nvq-ckpt: %s", line);	/* its steps' times */
		if (strncmp(line, "skip ", 5) == 0) {
			if (sscanf(line, "skip %d %d", &pid, &code) == 2 && code == 0)
				log_warnx("nvq-ckpt: %s: left out", line);	/* not the job's now */
			else
				log_info("nvq-ckpt: %s (not a CUDA process: left running)", line);
		} else if (strncmp(line, "error ", 6) == 0) {
			snprintf(err, errlen, "%s", line + 6);
			ok = 1;
		} else if (sscanf(line, "ok %lf", &secs) == 1)
			ok = 0;
		else if (sscanf(line, "%31s %d %lf", step, &pid, &secs) == 3)
			*driver += secs;
	}
	fclose(fp);
	return ok;
}

static void susp_exit_cb(uv_process_t *, int64_t, int);
static void susp_done_cb(uv_stream_t *, ssize_t, const uv_buf_t *);

static void
susp_alloc_cb(uv_handle_t *h, size_t size, uv_buf_t *buf)
{
	static char sink[64];	/* nvq-ckpt writes nothing there: only its end counts */

	(void)h;
	(void)size;
	*buf = uv_buf_init(sink, sizeof(sink));
}


/*
 * The pids for nvq-ckpt, each [?]PID@START.  A PID without its start
 * time (recorded by an nvqd before start times were) is given the one of
 * the process that has it now if that is the job's, and left out if not.
 * Returns a string to free, or NULL.
 */
static char *
susp_ckpt_list(const struct job *j, const char *list)
{
	size_t len = strlen(list), n = 0;
	char *in = strdup(list), *out = malloc(2 * len + 64), *tok, *save, *end;
	int64_t start;
	long v;
	int opt;

	if (in == NULL || out == NULL) {
		free(in);
		free(out);
		return NULL;
	}
	out[0] = '\0';
	for (tok = strtok_r(in, ",", &save); tok != NULL; tok = strtok_r(NULL, ",", &save)) {
		if (strchr(tok, '@') != NULL) {
			n += (size_t)snprintf(out + n, 2 * len + 64 - n, "%s%s", n ? "," : "", tok);
			continue;
		}
		opt = tok[0] == '?';
		v = strtol(tok + opt, &end, 10);
		if (*end != '\0' || v <= 0 || v > 0x3fffffff || susp_verify(j, (pid_t)v, &start) == -1) {
			log_warnx("job %lld: process %s of its last switch is no longer the job's: "
			    "left out", (long long)j->id, tok);
			continue;
		}
		n += (size_t)snprintf(out + n, 2 * len + 64 - n, "%s%s%ld@%lld", n ? "," : "",
		    opt ? "?" : "", v, (long long)start);
	}
	free(in);
	return out;
}

enum { SUSP_SUSPEND, SUSP_RESUME, SUSP_WAIT };

/*
 * Starts nvq-ckpt: suspend or resume on pids (a [?]PID@START,... list,
 * taken apart), or wait (its order later, on its stdin, the pipe in).
 * Returns its op, or NULL with a sentence in err (nothing runs).
 */
static struct susp_op *
susp_start(struct engine *e, const struct job *j, int verb, char *pids, char *err,
    size_t errlen)
{
	static const char *const verbs[] = { "suspend", "resume", "wait" };
	char *args[CKPT_ARGS], timeout[32], parent[24], *tok, *save;
	uv_process_options_t o;
	uv_stdio_container_t io[4];
	struct susp_op *op;
	int n = 0, fd, r;

	if ((op = calloc(1, sizeof(*op))) == NULL) {
		snprintf(err, errlen, "out of memory");
		return NULL;
	}
	op->e = e;
	op->id = j->id;
	op->resume = verb != SUSP_SUSPEND;
	op->standby = verb == SUSP_WAIT;
	snprintf(op->out, sizeof(op->out), "%s/.status/%lld%s.ckpt", e->cfg.spool,
	    (long long)j->id, op->standby ? ".ready" : "");
	snprintf(timeout, sizeof(timeout), "%lld", (long long)e->cfg.revoke_timeout * 1000);
	args[n++] = e->ckpt;
	args[n++] = "-l";
	args[n++] = e->cfg.cuda_library;
	args[n++] = "-t";
	args[n++] = timeout;
	snprintf(parent, sizeof(parent), "%d", (int)getpid());
	args[n++] = "-d";
	args[n++] = parent;
	args[n++] = "-c";	/* its fd 3, the pipe done: closed after its last line */
	args[n++] = "3";
	if (verb == SUSP_SUSPEND && !e->gpus.is_virtual && e->gpus.lib != NULL) {
		/* it checks with NVML that the GPUs are free of them before it answers */
		args[n++] = "-n";
		args[n++] = e->cfg.nvml_library;
	}
	args[n++] = (char *)verbs[verb];
	for (tok = pids ? strtok_r(pids, ",", &save) : NULL; tok && n < CKPT_ARGS - 1;
	    tok = strtok_r(NULL, ",", &save))
		args[n++] = tok;
	args[n] = NULL;
	if ((fd = open(op->out, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600)) == -1) {
		snprintf(err, errlen, "%s: %s", op->out, strerror(errno));
		free(op);
		return NULL;
	}
	memset(&o, 0, sizeof(o));
	memset(io, 0, sizeof(io));
	io[0].flags = op->standby ? UV_CREATE_PIPE | UV_READABLE_PIPE : UV_IGNORE;
	io[0].data.stream = (uv_stream_t *)&op->in;
	io[1].flags = UV_INHERIT_FD;
	io[1].data.fd = fd;
	io[2].flags = UV_INHERIT_FD;
	io[2].data.fd = 2;
	io[3].flags = UV_CREATE_PIPE | UV_WRITABLE_PIPE;
	io[3].data.stream = (uv_stream_t *)&op->done;
	o.file = e->ckpt;
	o.args = args;
	o.exit_cb = susp_exit_cb;
	o.stdio = io;
	o.stdio_count = 4;
	op->proc.data = op->done.data = op->in.data = op;
	if ((r = uv_pipe_init(e->loop, &op->done, 0)) == 0)
		op->has |= SUSP_DONE;
	if (r == 0 && op->standby && (r = uv_pipe_init(e->loop, &op->in, 0)) == 0)
		op->has |= SUSP_IN;
	if (r == 0) {
		op->has |= SUSP_PROC;	/* closed whatever uv_spawn says */
		r = uv_spawn(e->loop, &op->proc, &o);
	}
	close(fd);
	if (r == 0 && uv_read_start((uv_stream_t *)&op->done, susp_alloc_cb, susp_done_cb) != 0)
		susp_close(op, SUSP_DONE);	/* its end alone tells then */
	if (r != 0) {
		snprintf(err, errlen, "cannot run %s: %s", e->ckpt, uv_strerror(r));
		unlink(op->out);
		if (op->has == 0)
			free(op);
		else
			susp_close(op, SUSP_DONE | SUSP_IN | SUSP_PROC);
		return NULL;
	}
	return op;
}

/* Takes the job's nvq-ckpt ready ahead (suspend_ready) off the list, or NULL. */
static struct susp_op *
susp_take(struct engine *e, int64_t id)
{
	struct susp_op **pp, *op;

	for (pp = &e->ckpt_ready; (op = *pp) != NULL; pp = &op->next)
		if (op->id == id) {
			*pp = op->next;
			op->next = NULL;
			return op;
		}
	return NULL;
}

/*
 * A ready nvq-ckpt no longer wanted: it ends, killed (it has only loaded
 * the driver, and may still be in cuInit: a stop of nvqd must not wait
 * for it).  Its exit is not reported yet (e->ckpt_ready held it): its pid
 * is still its own.
 */
static void
susp_call_off(struct susp_op *op)
{
	/* its file first: a later one for the job may take the name at once */
	unlink(op->out);
	op->out[0] = '\0';
	susp_close(op, SUSP_IN);
	uv_process_kill(&op->proc, SIGKILL);
}

/* Gives a ready nvq-ckpt its order, resume pids; 0, or -1 if it cannot take it. */
static int
susp_order(struct susp_op *op, const char *pids)
{
	size_t len = strlen(pids) + 16;
	char *line = malloc(len), *c;
	uv_buf_t buf;
	int r, words = 1;

	if (line == NULL || !(op->has & SUSP_IN))
		return free(line), -1;
	snprintf(line, len, "resume %s\n", pids);
	for (c = line; *c != '\0'; c++)
		if (*c == ',') {
			*c = ' ';
			words++;
		}
	if (words > CKPT_ARGS - 10)
		return free(line), -1;	/* more pids than its line takes */
	buf = uv_buf_init(line, (unsigned)strlen(line));
	/* the pipe is empty, and one line fits it whole: written at once or not at all */
	r = uv_try_write((uv_stream_t *)&op->in, &buf, 1);
	free(line);
	if (r != (int)buf.len)
		return -1;
	op->standby = 0;	/* its end is reported from now on */
	susp_close(op, SUSP_IN);	/* one order: then end of file */
	return 0;
}

int
suspend_spawn(struct engine *e, const struct job *j, int resume, const char *list, char *err,
    size_t errlen)
{
	struct susp_op *op;
	char *pids = susp_ckpt_list(j, list);
	int verb = resume ? SUSP_RESUME : SUSP_SUSPEND;

	if (pids == NULL) {
		snprintf(err, errlen, "out of memory");
		return -1;
	}
	/* the one ready ahead is for the resume: a suspend's driver is warm anyway */
	if (resume && (op = susp_take(e, j->id)) != NULL) {
		if (susp_order(op, pids) == 0) {
			log_debug("job %lld: nvq-ckpt resume %s (pid %d, ready ahead)",
			    (long long)j->id, list, op->proc.pid);
			free(pids);
			return op->proc.pid;
		}
		log_debug("job %lld: its nvq-ckpt ready ahead cannot take the order: called off",
		    (long long)j->id);
		susp_call_off(op);
	}
	op = susp_start(e, j, verb, pids, err, errlen);
	free(pids);
	if (op == NULL)
		return -1;
	log_debug("job %lld: nvq-ckpt %s %s (pid %d)", (long long)j->id,
	    resume ? "resume" : "suspend", list, op->proc.pid);
	return op->proc.pid;
}

void
suspend_ready(struct engine *e, const struct job *j)
{
	struct susp_op *op;
	char err[PATH_MAX + 64];

	if (e->ckpt[0] == '\0')
		return;
	for (op = e->ckpt_ready; op != NULL; op = op->next)
		if (op->id == j->id)
			return;
	if ((op = susp_start(e, j, SUSP_WAIT, NULL, err, sizeof(err))) == NULL) {
		log_debug("job %lld: no nvq-ckpt ready ahead: %s", (long long)j->id, err);
		return;
	}
	op->next = e->ckpt_ready;
	e->ckpt_ready = op;
	log_debug("job %lld: nvq-ckpt ready ahead (pid %d)", (long long)j->id, op->proc.pid);
}

void
suspend_unready(struct engine *e, int64_t id)
{
	struct susp_op *op = susp_take(e, id);

	if (op != NULL)
		susp_call_off(op);
}

void
suspend_kill(int helper)
{
	/*
	 * nvqd's own child: libuv reaps it and reports its end in one go, so
	 * until GC_EV_HELPER the pid cannot have gone to another process.
	 */
	if (helper > 0)
		uv_kill(helper, SIGKILL);
}

/*
 * What nvq-ckpt said, reported to GPU control once (GC_EV_HELPER): at the
 * end of its pipe done if its last line is written (ok, or why not), else
 * at its end, with how it ended (exited, status, sig).
 */
static void
susp_report(struct susp_op *op, int exited, int64_t status, int sig)
{
	struct gc_event ev = { .type = GC_EV_HELPER, .job = op->id, .n = op->resume };
	int r;

	if (op->reported || op->standby)
		return;	/* told already, or never given an order: nothing to tell */
	r = susp_read(op->out, &ev.secs, ev.error, sizeof(ev.error));
	if (r == -1 && !exited)
		return;	/* no last line: its end tells (killed, or it crashed) */
	if (r == 0 && exited && (status != 0 || sig != 0)) {
		r = -1;
		snprintf(ev.error, sizeof(ev.error), "nvq-ckpt ended with status %lld, signal %d",
		    (long long)status, sig);
	}
	op->reported = 1;
	op->reported_at = uv_hrtime();
	unlink(op->out);
	ev.ok = r == 0;
	op->e->report(op->e, &ev);
}

/* Its pipe done ended: its last line is written, or it ended. */
static void
susp_done_cb(uv_stream_t *s, ssize_t n, const uv_buf_t *buf)
{
	struct susp_op *op = s->data;

	(void)buf;
	if (n >= 0)
		return;	/* nothing is written there; n == 0: try again */
	uv_read_stop(s);
	susp_close(op, SUSP_DONE);
	susp_report(op, 0, 0, 0);
}

/* nvq-ckpt ended. */
static void
susp_exit_cb(uv_process_t *p, int64_t status, int sig)
{
	struct susp_op *op = p->data, **pp;

	if (op->reported)
		log_debug("job %lld: nvq-ckpt %s ended %.3fs after its last line", (long long)op->id,
		    op->resume ? "resume" : "suspend", (double)(uv_hrtime() - op->reported_at) / 1e9);
	if (op->standby) {
		/* ready ahead, never given an order: off the list if still there */
		for (pp = &op->e->ckpt_ready; *pp != NULL; pp = &(*pp)->next)
			if (*pp == op) {
				*pp = op->next;
				break;
			}
		log_debug("job %lld: its nvq-ckpt ready ahead ended (status %lld, signal %d)",
		    (long long)op->id, (long long)status, sig);
		if (op->out[0] != '\0')
			unlink(op->out);
	}
	susp_report(op, 1, status, sig);
	susp_close(op, SUSP_DONE | SUSP_IN | SUSP_PROC);
}

/* Whether pid is in a list of [?]PID@START. */
static int
susp_listed(const char *list, pid_t pid)
{
	const char *p = list;
	char *end;
	long v;

	while (*p != '\0') {
		if (*p == '?')
			p++;
		v = strtol(p, &end, 10);
		if (v == (long)pid && end != p)
			return 1;
		p = strchr(end, ',');
		if (p == NULL)
			break;
		p++;
	}
	return 0;
}

void
suspend_pids(const struct job *j, char *buf, size_t len)
{
	pid_t procs[SUSPEND_MAX_PROCS];
	int k, count = runner_cuda_procs(j->pid, j->cgroup, procs, SUSPEND_MAX_PROCS);
	int64_t start;
	size_t n;

	for (k = 0; k < count; k++) {
		n = strlen(buf);
		/* not hooked: maybe not CUDA at all */
		if (!susp_listed(buf, procs[k]) && n + 40 < len &&
		    susp_verify(j, procs[k], &start) == 0)
			snprintf(buf + n, len - n, "%s?%d@%lld", n ? "," : "", (int)procs[k],
			    (long long)start);
	}
}
