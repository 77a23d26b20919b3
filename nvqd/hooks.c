/*
 * hooks.c: the hook sessions and the GPU locks (see hooks.h).
 *
 * A session is tied to the process that connected, not to its pid: nvqd
 * takes a pidfd of the peer at hello (SO_PEERPIDFD), checks through it that
 * the process is the job's, watches it, and closes the connection when the
 * process ends, whoever holds the socket by then (a child may hand it to
 * its parent and exit, and its pid go to another user's process).  Signals
 * go through the pidfd only.
 */
#include <errno.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "cgroup.h"
#include "hookmsg.h"
#include "hooks.h"
#include "log.h"
#include "proc.h"
#include "server.h"
#include "suspend.h"

#define HOOKS_MAX_PIDS	64

/* The pidfd a session watches; freed in its close callback. */
struct hook_watch {
	uv_poll_t	poll;
	int		pidfd;
};

struct hook_sess {
	struct engine	*e;
	struct server_conn *conn;
	struct job	*job;		/* NULL once the job ended */
	pid_t		pid;
	int64_t		start;		/* its start time (/proc), for nvq-ckpt */
	struct hook_watch *watch;
	int		warned;		/* a report claimed more than the job may hold */
	int64_t		acked;		/* the last revoke seq it acknowledged */
	int64_t		move_asked;	/* the last move it was asked, */
	int64_t		move_done;	/* and the last it answered */
	uint64_t	*used, *peak;	/* per GPU index, as it reported */
	uint64_t	*cap;		/* the cap it was sent; 0: none */
	struct hook_sess *next, *prev;
};


static int
hooks_in(const struct job *j, int g)
{
	return (j->gpumask & (1ULL << g)) != 0;
}

static int
hooks_timesliced(struct engine *e, const struct job *j)
{
	int g;

	for (g = 0; g < e->gpus.n; g++)
		if (hooks_in(j, g) && config_compute(&e->cfg, g) == COMPUTE_TIMESLICE)
			return 1;
	return 0;
}

static void
hooks_send_state(struct engine *e, struct hook_sess *s)
{
	struct proto_buf b = { 0 };
	struct job *j = s->job;

	proto_begin(&b, MSG_HOOK_STATE);
	proto_put_int(&b, "granted", j->lock_granted);
	proto_put_int(&b, "seq", j->lock_seq);
	proto_put_int(&b, "timeslice", hooks_timesliced(e, j));
	if (proto_end(&b) == -1) {
		proto_buf_free(&b);
		return;
	}
	server_push(s->conn, &b);
}

static void
hooks_broadcast(struct engine *e, struct job *j)
{
	struct hook_sess *s;

	for (s = e->sessions; s != NULL; s = s->next)
		if (s->job == j)
			hooks_send_state(e, s);
}

/* Signals the job's hooked processes (SIGSTOP, SIGCONT), through their pidfds. */
static void
hooks_signal(struct engine *e, struct job *j, int sig)
{
	struct hook_sess *s;

	for (s = e->sessions; s != NULL; s = s->next)
		if (s->job == j && s->watch != NULL &&
		    syscall(SYS_pidfd_send_signal, s->watch->pidfd, sig, NULL, 0) == -1)
			log_debug("job %lld: process %d: signal %d: %s", (long long)j->id,
			    (int)s->pid, sig, strerror(errno));
}

/* Whether every process of j acknowledged its last revoke. */
static int
hooks_drained(struct engine *e, const struct job *j)
{
	struct hook_sess *s;

	for (s = e->sessions; s != NULL; s = s->next)
		if (s->job == j && s->acked < j->lock_seq)
			return 0;
	return 1;
}

/* Frees the timeslice GPUs j holds. */
static void
hooks_release_slices(struct engine *e, struct job *j)
{
	int g;

	for (g = 0; g < e->gpus.n; g++)
		if (e->ts_holder[g] == j->id)
			e->ts_holder[g] = 0;
	j->yielding = 0;
	j->wants = 0;
	j->idle = 0;
}

/* Whether j should hold its locks now. */
static int
hooks_desired(struct engine *e, const struct job *j)
{
	int g;

	if (j->held || j->yielding || j->susp != 0 || j->state != JOB_RUNNING)
		return 0;
	for (g = 0; g < e->gpus.n; g++)
		if (hooks_in(j, g) && config_compute(&e->cfg, g) == COMPUTE_TIMESLICE &&
		    e->ts_holder[g] != j->id)
			return 0;
	return 1;
}

/* Whether a job other than h waits for timeslice GPU g. */
static int
hooks_waiter(struct engine *e, int g, int64_t h)
{
	struct job *j;

	for (j = e->jobs; j != NULL; j = j->next)
		if (j->id != h && j->state == JOB_RUNNING && j->wants && !j->held &&
		    j->nsess > 0 && hooks_in(j, g))
			return 1;
	return 0;
}

/* Gives free timeslice GPUs to waiting jobs, longest waiting first. */
static void
hooks_assign(struct engine *e, double now)
{
	struct job *j, *best;
	int g, ok;

	for (;;) {
		best = NULL;
		for (j = e->jobs; j != NULL; j = j->next) {
			if (j->state != JOB_RUNNING || j->held || j->yielding || j->nsess == 0 ||
			    !j->wants || !hooks_timesliced(e, j))
				continue;
			ok = 1;
			for (g = 0; g < e->gpus.n && ok; g++)
				if (hooks_in(j, g) && config_compute(&e->cfg, g) == COMPUTE_TIMESLICE &&
				    e->ts_holder[g] != 0 && e->ts_holder[g] != j->id)
					ok = 0;
			if (!ok || hooks_desired(e, j))
				continue;	/* it has them all already, or cannot have them */
			if (best == NULL || j->want_since < best->want_since)
				best = j;
		}
		if (best == NULL)
			return;
		for (g = 0; g < e->gpus.n; g++)
			if (hooks_in(best, g) && config_compute(&e->cfg, g) == COMPUTE_TIMESLICE) {
				e->ts_holder[g] = best->id;
				e->ts_since[g] = now;
			}
		best->idle = 0;
	}
}

static void hooks_timer_cb(uv_timer_t *);

/*
 * One pass over the locks (hooks_update's body); returns the next deadline
 * it found (0: none).  It may re-enter hooks_update through suspend_drained
 * (a switch that fails or ends at once): that call only asks for another
 * pass.
 */
static double
hooks_pass(struct engine *e)
{
	double now = engine_now(), next = 0, t;
	struct job *j;
	int g, round, changed;
	int64_t h;

	for (g = 0; g < e->gpus.n; g++) {
		if ((h = e->ts_holder[g]) == 0)
			continue;
		j = engine_find(e, h);
		if (j == NULL || j->state != JOB_RUNNING || !hooks_in(j, g) || j->nsess == 0 ||
		    config_compute(&e->cfg, g) != COMPUTE_TIMESLICE)
			e->ts_holder[g] = 0;
	}
	for (round = 0; round < 4; round++) {
		changed = 0;
		hooks_assign(e, now);
		/* a holder yields at the end of its quantum, or when idle, if others wait */
		for (g = 0; g < e->gpus.n; g++) {
			if ((h = e->ts_holder[g]) == 0 || !hooks_waiter(e, g, h))
				continue;
			j = engine_find(e, h);
			if (j->yielding || !j->lock_granted)
				continue;
			if (j->idle || now - e->ts_since[g] >= (double)e->cfg.quantum) {
				log_debug("job %lld yields GPU %d (%s)", (long long)h, g,
				    j->idle ? "idle" : "quantum over");
				j->yielding = 1;
			} else if (next == 0 || e->ts_since[g] + (double)e->cfg.quantum < next)
				next = e->ts_since[g] + (double)e->cfg.quantum;
		}
		for (j = e->jobs; j != NULL; j = j->next) {
			if (j->state != JOB_RUNNING)
				continue;
			if (hooks_desired(e, j) && !j->lock_granted) {
				j->lock_granted = 1;
				j->lock_seq++;
				j->revoke_at = 0;
				if (j->lock_stopped) {
					hooks_signal(e, j, SIGCONT);
					j->lock_stopped = 0;
				}
				hooks_broadcast(e, j);
				log_debug("job %lld: lock granted (seq %lld)", (long long)j->id,
				    (long long)j->lock_seq);
				changed = 1;
			} else if (!hooks_desired(e, j) && j->lock_granted) {
				j->lock_granted = 0;
				j->lock_seq++;
				j->revoke_at = now;
				hooks_broadcast(e, j);
				log_debug("job %lld: lock asked back (seq %lld)", (long long)j->id,
				    (long long)j->lock_seq);
				changed = 1;
			}
			if (j->lock_granted || j->revoke_at == 0)
				continue;
			if (hooks_drained(e, j)) {
				j->revoke_at = 0;
				hooks_release_slices(e, j);
				changed = 1;
			} else if (now - j->revoke_at >= (double)e->cfg.revoke_timeout) {
				log_warnx("job %lld: no acknowledgement of the lock in %llds: "
				    "stopping its processes (SIGSTOP)", (long long)j->id,
				    (long long)e->cfg.revoke_timeout);
				hooks_signal(e, j, SIGSTOP);
				j->lock_stopped = 1;
				j->revoke_at = 0;
				hooks_release_slices(e, j);
				changed = 1;
			} else {
				t = j->revoke_at + (double)e->cfg.revoke_timeout;
				if (next == 0 || t < next)
					next = t;
			}
		}
		if (!changed)
			break;
	}
	t = suspend_drained(e);
	if (t > 0 && (next == 0 || t < next))
		next = t;
	return next;
}

/*
 * Never re-entered: a call made while a pass runs (from inside it) asks for
 * another pass, and the timer is armed once, from the last pass, so that a
 * deadline an inner call found is not overwritten by the outer call's
 * older one.
 */
void
hooks_update(struct engine *e)
{
	double next, now;

	if (e->locks_busy) {
		e->locks_again = 1;
		log_debug("locks: asked again during a pass; another pass follows");
		return;
	}
	e->locks_busy = 1;
	do {
		e->locks_again = 0;
		next = hooks_pass(e);
	} while (e->locks_again);
	e->locks_busy = 0;
	now = engine_now();
	if (next > 0)
		uv_timer_start(&e->locks, hooks_timer_cb,
		    (uint64_t)((next - now) * 1000 > 0 ? (next - now) * 1000 : 0) + 1, 0);
	else
		uv_timer_stop(&e->locks);
}

static void
hooks_timer_cb(uv_timer_t *t)
{
	hooks_update(t->loop->data);
}

/*
 * The most a report of j may count for on GPU g: what its hooks were told
 * they may hold there (NVQ_GPU_MEM), or for a whole-GPU job the GPU.
 */
static uint64_t
hooks_bound(struct engine *e, const struct job *j, int g)
{
	uint64_t total = e->gpus.gpus[g].total;

	if (j->mem != 0 && j->granted != 0)
		return j->granted;
	return j->granted > total ? j->granted : total;
}

/* The job's use per GPU: the sum of its processes', and its peak. */
static void
hooks_sum(struct engine *e, struct job *j)
{
	struct hook_sess *s;
	int g;

	if (j->hook_used == NULL)
		return;
	memset(j->hook_used, 0, (size_t)e->gpus.n * sizeof(uint64_t));
	for (s = e->sessions; s != NULL; s = s->next)
		if (s->job == j)
			for (g = 0; g < e->gpus.n; g++) {
				j->hook_used[g] = hookmsg_add(j->hook_used[g], s->used[g],
				    hooks_bound(e, j, g));
				if (s->peak[g] > j->hook_peak[g])
					j->hook_peak[g] = s->peak[g];
			}
	for (g = 0; g < e->gpus.n; g++)
		if (j->hook_used[g] > j->hook_peak[g])
			j->hook_peak[g] = j->hook_used[g];
}

/* Tells each process of j what the others leave it of the job's budget. */
static void
hooks_caps(struct engine *e, struct job *j)
{
	struct hook_sess *s;
	struct proto_buf b;
	uint64_t others, cap;
	int g, rows;

	if (j->granted == 0 || j->hook_used == NULL)
		return;
	for (s = e->sessions; s != NULL; s = s->next) {
		if (s->job != j)
			continue;
		memset(&b, 0, sizeof(b));
		proto_begin(&b, MSG_HOOK_LIMIT);
		rows = 0;
		for (g = 0; g < e->gpus.n; g++) {
			if (!hooks_in(j, g))
				continue;
			others = j->hook_used[g] - s->used[g];
			cap = others >= j->granted ? 1 : j->granted - others;
			if (cap == s->cap[g] || (s->cap[g] == 0 && cap == j->granted))
				continue;
			s->cap[g] = cap;
			proto_put_str(&b, "uuid", e->gpus.gpus[g].uuid);
			proto_put_int(&b, "cap", (int64_t)cap);
			rows++;
		}
		if (rows == 0 || proto_end(&b) == -1) {
			proto_buf_free(&b);
			continue;
		}
		server_push(s->conn, &b);
	}
}

static int
hooks_gpu(struct engine *e, const char *uuid)
{
	int g;

	for (g = 0; uuid != NULL && g < e->gpus.n; g++)
		if (strcmp(e->gpus.gpus[g].uuid, uuid) == 0)
			return g;
	return -1;
}

int
hooks_move(struct engine *e, struct job *j, int out)
{
	struct hook_sess *s;
	struct proto_buf b;
	int n = 0;

	j->move_seq++;
	j->move_bytes = j->move_left = 0;
	j->move_secs = 0;
	j->move_error[0] = '\0';
	for (s = e->sessions; s != NULL; s = s->next) {
		if (s->job != j)
			continue;
		memset(&b, 0, sizeof(b));
		proto_begin(&b, MSG_HOOK_MOVE);
		proto_put_int(&b, "seq", j->move_seq);
		proto_put_int(&b, "out", out);
		if (proto_end(&b) == -1) {
			proto_buf_free(&b);
			continue;
		}
		s->move_asked = j->move_seq;
		server_push(s->conn, &b);
		n++;
	}
	return n;
}

int
hooks_moving(struct engine *e, const struct job *j)
{
	struct hook_sess *s;

	for (s = e->sessions; s != NULL; s = s->next)
		if (s->job == j && s->move_done < s->move_asked)
			return 1;
	return 0;
}

/* A process's answer to a move: added up; the last one lets the switch go on. */
static void
hooks_moved(struct engine *e, struct hook_sess *s, const struct proto_msg *m)
{
	struct job *j = s->job;
	int64_t seq = proto_int(m, "seq", 0);
	double secs = (double)proto_int(m, "us", 0) / 1e6;
	const char *err = proto_str(m, "error");

	if (seq != s->move_asked || seq <= s->move_done)
		return;	/* an old move's: that switch went on without it */
	s->move_done = seq;
	j->move_bytes += proto_int(m, "bytes", 0);
	j->move_left += proto_int(m, "left", 0);
	if (secs > j->move_secs)
		j->move_secs = secs;
	if (err != NULL && j->move_error[0] == '\0')
		snprintf(j->move_error, sizeof(j->move_error), "process %d: %s", (int)s->pid, err);
	log_debug("job %lld: process %d moved %lld bytes %s in %.3fs%s%s", (long long)j->id,
	    (int)s->pid, (long long)proto_int(m, "bytes", 0), proto_int(m, "out", 1) ? "out" :
	    "back", secs, err ? ": " : "", err ? err : "");
	if ((j->susp == SUSP_MOVE_OUT || j->susp == SUSP_MOVE_IN) && !hooks_moving(e, j))
		suspend_moved(e, j);
}

/* A process's use per GPU: claims, each counted as at most the job may hold. */
static int
hooks_report(struct engine *e, struct hook_sess *s, const struct proto_msg *m, char *err,
    size_t errlen)
{
	struct hookmsg_row rows[HOOKMSG_MAX_ROWS];
	struct job *j = s->job;
	uint64_t bound;
	int n, k, g, over;

	if ((n = hookmsg_report(m, rows, HOOKMSG_MAX_ROWS, err, errlen)) == -1)
		return -1;
	for (k = 0; k < n; k++) {
		if ((g = hooks_gpu(e, rows[k].uuid)) < 0 || !hooks_in(j, g))
			continue;
		bound = hooks_bound(e, j, g);
		over = 0;
		if (rows[k].used >= 0)
			s->used[g] = hookmsg_bound((uint64_t)rows[k].used, bound, &over);
		if (rows[k].peak >= 0)
			s->peak[g] = hookmsg_bound((uint64_t)rows[k].peak, bound, &over);
		if (over && !s->warned) {
			s->warned = 1;
			log_warnx("job %lld: process %d reports %lld bytes used (peak %lld) on GPU "
			    "%d, more than the job may hold there (%llu): counted as %llu",
			    (long long)j->id, (int)s->pid, (long long)rows[k].used,
			    (long long)rows[k].peak, g, (unsigned long long)bound,
			    (unsigned long long)bound);
		}
	}
	hooks_sum(e, j);
	hooks_caps(e, j);
	return 0;
}

/* Whether the process a pidfd refers to has not ended. */
static int
hooks_alive(int pidfd)
{
	struct pollfd p = { .fd = pidfd, .events = POLLIN };

	return poll(&p, 1, 0) == 0;
}

int
hooks_member(const struct job *j, pid_t pid)
{
	if (j->pid <= 0 || pid <= 0 || pid == j->pid)
		return 0;
	if (proc_session(pid) == j->pid)
		return 1;
	return j->cgroup != NULL && cgroup_holds(j->cgroup, pid);
}

static void
hooks_watch_closed_cb(uv_handle_t *h)
{
	struct hook_watch *w = (struct hook_watch *)h;

	close(w->pidfd);
	free(w);
}

/* The process of a session ended: the session ends with it, whoever holds its socket. */
static void
hooks_exited_cb(uv_poll_t *p, int status, int events)
{
	struct hook_sess *s = p->data;

	(void)status;
	(void)events;
	log_debug("job %lld: process %d ended: its link closes",
	    s->job != NULL ? (long long)s->job->id : 0LL, (int)s->pid);
	uv_poll_stop(p);
	server_end(s->conn);	/* hooks_closed() follows */
}

/*
 * The process behind a hello: its pidfd (the peer of the connection, even
 * if its pid was since given to another process), checked to be the job's
 * while it is known to be alive.  Returns the pidfd, or -1 with err.
 */
static int
hooks_peer(struct engine *e, struct server_conn *conn, const struct job *j, uid_t uid, pid_t *pid,
    int64_t *start, char *err, size_t errlen)
{
	int pidfd = server_peer_pidfd(conn);
	uid_t ruid = (uid_t)-1, euid = (uid_t)-1;

	if (pidfd == -1) {
		snprintf(err, errlen, "cannot identify the process (pidfd: %s)", strerror(errno));
		return -1;
	}
	if ((*pid = proc_pidfd_pid(pidfd)) <= 0) {
		snprintf(err, errlen, "the process that connected has ended");
		goto fail;
	}
	*start = proc_start_time(*pid);
	/* a job's process: its user, in its session or cgroup */
	if (!hooks_member(j, *pid) ||
	    (e->is_root && (uid != j->uid || proc_uids(*pid, &ruid, &euid) == -1 ||
	    ruid != j->uid || euid != j->uid))) {
		snprintf(err, errlen, "process %d is not part of job %lld", (int)*pid,
		    (long long)j->id);
		goto fail;
	}
	/* alive after the checks: /proc spoke of it, not of a later holder of its pid */
	if (*start < 0 || !hooks_alive(pidfd)) {
		snprintf(err, errlen, "process %d has ended", (int)*pid);
		goto fail;
	}
	return pidfd;
fail:
	close(pidfd);
	return -1;
}

static struct hook_sess *
hooks_hello(struct engine *e, struct server_conn *conn, const struct proto_msg *m, pid_t pid, uid_t uid,
    char *err, size_t errlen)
{
	struct hookmsg_hello h;
	struct job *j;
	struct hook_sess *s;
	int64_t start;
	int pidfd;

	if (hookmsg_hello(m, &h, err, errlen) == -1)
		return NULL;
	if ((j = engine_find(e, h.job)) == NULL || j->state == JOB_PENDING) {
		snprintf(err, errlen, "job %lld is not running", (long long)h.job);
		return NULL;
	}
	if ((pidfd = hooks_peer(e, conn, j, uid, &pid, &start, err, errlen)) == -1)
		return NULL;
	if ((s = calloc(1, sizeof(*s))) == NULL ||
	    (s->watch = calloc(1, sizeof(*s->watch))) == NULL ||
	    (s->used = calloc((size_t)e->gpus.n + 1, sizeof(uint64_t))) == NULL ||
	    (s->peak = calloc((size_t)e->gpus.n + 1, sizeof(uint64_t))) == NULL ||
	    (s->cap = calloc((size_t)e->gpus.n + 1, sizeof(uint64_t))) == NULL) {
		if (s != NULL) {
			free(s->watch);
			free(s->used);
			free(s->peak);
		}
		free(s);
		close(pidfd);
		snprintf(err, errlen, "out of memory");
		return NULL;
	}
	s->watch->pidfd = pidfd;
	if (uv_poll_init(e->loop, &s->watch->poll, pidfd) != 0) {
		free(s->watch);
		free(s->used);
		free(s->peak);
		free(s->cap);
		free(s);
		close(pidfd);
		snprintf(err, errlen, "cannot watch process %d", (int)pid);
		return NULL;
	}
	s->watch->poll.data = s;
	uv_poll_start(&s->watch->poll, UV_READABLE, hooks_exited_cb);
	s->e = e;
	s->conn = conn;
	s->job = j;
	s->pid = pid;
	s->start = start;
	s->acked = j->lock_seq;	/* nothing of its own is in flight */
	s->next = e->sessions;
	if (e->sessions != NULL)
		e->sessions->prev = s;
	e->sessions = s;
	j->nsess++;
	if (hooks_timesliced(e, j) && !j->wants) {
		j->wants = 1;	/* a CUDA process: it will launch */
		j->want_since = engine_now();
	}
	if (h.pid != 0 && h.pid != pid)
		log_debug("job %lld: process %d says it is %lld (another pid namespace?)",
		    (long long)j->id, (int)pid, (long long)h.pid);
	log_debug("job %lld: process %d linked", (long long)j->id, (int)pid);
	if (j->relink_until > 0) {
		j->relink_until = 0;	/* may give way again: schedule */
		engine_kick(e);
	}
	/* its cap first: the hook lets the process go on at the first state */
	hooks_caps(e, j);
	hooks_update(e);
	hooks_send_state(e, s);
	return s;
}

static void	hooks_closed(struct engine *, struct hook_sess *);

/* A frame on a linked hook's connection (server.h's handler, arg its session). */
static int
hooks_conn_frame(void *arg, struct server_conn *conn, const struct server_peer *p,
    const struct proto_msg *m, struct proto_buf *out, char *err, size_t errlen)
{
	struct hook_sess *s = arg;
	struct engine *e = s->e;

	(void)conn;
	(void)out;	/* the hook's link has no replies, only errors */
	if (m->type == MSG_HOOK_HELLO) {
		snprintf(err, errlen, "this connection said hello already");
		goto fail;
	}
	if (s->job == NULL)
		return SERVER_REPLY;	/* the job ended; its last words do not matter */
	switch (m->type) {
	case MSG_HOOK_REPORT:
		if (hooks_report(e, s, m, err, errlen) == -1)
			goto fail;
		break;
	case MSG_HOOK_ACK:
		log_debug("job %lld: process %d acknowledged seq %lld", (long long)s->job->id,
		    (int)s->pid, (long long)proto_int(m, "seq", 0));
		if (proto_int(m, "seq", 0) > s->acked)
			s->acked = proto_int(m, "seq", 0);
		hooks_update(e);
		break;
	case MSG_HOOK_WANT:
		log_debug("job %lld: process %d waits for the lock", (long long)s->job->id,
		    (int)s->pid);
		if (!s->job->wants) {
			s->job->wants = 1;
			s->job->want_since = engine_now();
		}
		hooks_update(e);
		break;
	case MSG_HOOK_IDLE:
		s->job->idle = (int)proto_int(m, "idle", 1);
		hooks_update(e);
		break;
	case MSG_HOOK_MOVED:
		hooks_moved(e, s, m);
		break;
	default:
		snprintf(err, errlen, "%s is not a hook's message", proto_type_name(m->type));
		goto fail;
	}
	return SERVER_REPLY;
fail:
	log_warnx("hook pid %d uid %u: %s", (int)p->pid, (unsigned)p->uid, err);
	return SERVER_ERROR_CLOSE;
}

static void
hooks_conn_closed(void *arg, struct server_conn *conn)
{
	struct hook_sess *s = arg;

	(void)conn;
	hooks_closed(s->e, s);
}

static const struct server_handler hooks_handler = {
	.frame = hooks_conn_frame, .closed = hooks_conn_closed, .lasting = 1,
};

int
hooks_accept(struct engine *e, struct server_conn *conn, const struct server_peer *p,
    const struct proto_msg *m, char *err, size_t errlen)
{
	struct hook_sess *s;

	if (m->type != MSG_HOOK_HELLO)
		snprintf(err, errlen, "%s before hello", proto_type_name(m->type));
	else if ((s = hooks_hello(e, conn, m, p->pid, p->uid, err, errlen)) != NULL) {
		server_handoff(conn, &hooks_handler, s);
		return SERVER_REPLY;
	}
	log_warnx("hook pid %d uid %u: %s", (int)p->pid, (unsigned)p->uid, err);
	return SERVER_ERROR_CLOSE;
}

/* The connection of s closed: the session ends. */
static void
hooks_closed(struct engine *e, struct hook_sess *s)
{
	struct job *j = s->job;

	if (s->prev != NULL)
		s->prev->next = s->next;
	else
		e->sessions = s->next;
	if (s->next != NULL)
		s->next->prev = s->prev;
	if (j != NULL) {
		j->nsess--;
		if (j->nsess == 0)
			j->wants = j->idle = 0;
		hooks_sum(e, j);
		hooks_caps(e, j);
	}
	uv_close((uv_handle_t *)&s->watch->poll, hooks_watch_closed_cb);
	free(s->used);
	free(s->peak);
	free(s->cap);
	free(s);
	/* a process that ends in the middle of a move has nothing left to move */
	if (j != NULL && (j->susp == SUSP_MOVE_OUT || j->susp == SUSP_MOVE_IN) &&
	    !hooks_moving(e, j))
		suspend_moved(e, j);
	if (j != NULL)
		hooks_update(e);
}

int
hooks_job_gone(struct engine *e, struct job *j)
{
	struct hook_sess *s;
	int g, changed = j->nsess > 0;

	for (s = e->sessions; s != NULL; s = s->next)
		if (s->job == j)
			s->job = NULL;
	j->nsess = 0;
	for (g = 0; g < e->gpus.n; g++)
		if (e->ts_holder[g] == j->id) {
			e->ts_holder[g] = 0;
			changed = 1;
		}
	return changed;
}

void
hooks_continue(struct engine *e, struct job *j)
{
	hooks_signal(e, j, SIGCONT);
	j->lock_stopped = 0;
}

void
hooks_hold(struct engine *e, struct job *j, int held)
{
	j->held = held;
	if (!held)
		j->wants = j->nsess > 0;
	hooks_update(e);
}

const char *
hooks_lock_state(const struct job *j)
{
	if (j->lock_stopped)
		return "stopped";
	if (j->lock_granted)
		return "granted";
	if (j->revoke_at > 0)
		return "holding";	/* asked back, not acknowledged yet */
	return j->held ? "held" : "waiting";
}

int
hooks_linked(struct engine *e, const struct job *j, pid_t pid)
{
	struct hook_sess *s;

	for (s = e->sessions; s != NULL; s = s->next)
		if (s->job == j && s->pid == pid)
			return 1;
	return 0;
}

void
hooks_pids(struct engine *e, const struct job *j, int starts, char *buf, size_t len)
{
	struct hook_sess *s;
	size_t n = 0;
	int k = 0;

	buf[0] = '\0';
	for (s = e->sessions; s != NULL && k < HOOKS_MAX_PIDS && n < len; s = s->next) {
		if (s->job != j)
			continue;
		if (!starts)
			n += (size_t)snprintf(buf + n, len - n, "%s%d", k ? "," : "", (int)s->pid);
		else if (hooks_alive(s->watch->pidfd))
			n += (size_t)snprintf(buf + n, len - n, "%s%d@%lld", k ? "," : "",
			    (int)s->pid, (long long)s->start);
		else
			continue;
		k++;
	}
}

void
hooks_init(struct engine *e)
{
	uv_timer_init(e->loop, &e->locks);
}

void
hooks_shutdown(struct engine *e)
{
	uv_timer_stop(&e->locks);
}
