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
#include "jobtab.h"
#include "lcbe.h"
#include "log.h"
#include "proc.h"
#include "member.h"
#include "server.h"

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
	uint64_t	shared;		/* shared bytes it cannot move, as it reported */
	uint64_t	staging;	/* host staging it may keep ([scheduler] staging) */
	uint64_t	staged;		/* what it holds, as it reported (at most staging) */
	int		can_cut;	/* its hello said it stops at a cut */
	int64_t		cut_seq;	/* the revoke its counts are of; 0: none */
	int64_t		target_seq;	/* the revoke whose targets it was sent; 0: none */
	int		ncut, ntarget;
	int64_t		cut_count[HOOKMSG_MAX_COMMS];	/* claims, as it reported */
	int64_t		cut_target[HOOKMSG_MAX_COMMS];	/* what it was sent */
	int		lcbe_slot;	/* its lc slot (gpu/lcbe.c); -1: none */
	uint64_t	yield_us;	/* its time yielding, as it last reported */
	struct hook_sess *next, *prev;
};


static int
hooks_in(const struct job *j, int g)
{
	return (j->gpumask & (1ULL << g)) != 0;
}

/* Reports a fact about j to GPU control (engine_gpu, through e->report). */
static void
hooks_report_ev(struct engine *e, int type, struct job *j, int64_t n)
{
	struct gc_event ev = { .type = type, .job = j->id, .n = n };

	e->report(e, &ev);
}

/* Tells s its job's lock: granted or not, as seq. */
static void
hooks_send_state(struct engine *e, struct hook_sess *s, int granted, int64_t seq)
{
	struct proto_buf b = { 0 };
	struct job *j = s->job;

	proto_begin(&b, MSG_HOOK_STATE);
	proto_put_int(&b, "granted", granted);
	proto_put_int(&b, "seq", seq);
	proto_put_int(&b, "timeslice", config_timesliced(&e->cfg, j->gpumask, e->gpus.n));
	proto_put_int(&b, "staging", (int64_t)s->staging);
	if (!granted)
		proto_put_int(&b, "cut", 1);	/* report NCCL counts first (cut.h) */
	if (proto_end(&b) == -1) {
		proto_buf_free(&b);
		return;
	}
	server_push(s->conn, &b);
}

void
hooks_send_lock(struct engine *e, struct job *j, int granted, int64_t seq)
{
	struct hook_sess *s, *next;

	/* a send that fails at once closes that session (server_close): go on from the next */
	for (s = e->sessions; s != NULL; s = next) {
		next = s->next;
		if (s->job == j)
			hooks_send_state(e, s, granted, seq);
	}
}

void
hooks_signal(struct engine *e, struct job *j, int sig)
{
	struct hook_sess *s;

	for (s = e->sessions; s != NULL; s = s->next)
		if (s->job == j && s->watch != NULL &&
		    syscall(SYS_pidfd_send_signal, s->watch->pidfd, sig, NULL, 0) == -1)
			log_debug("job %lld: process %d: signal %d: %s", (long long)j->id,
			    (int)s->pid, sig, strerror(errno));
}

int
hooks_acked(struct engine *e, const struct job *j, int64_t seq)
{
	struct hook_sess *s;

	for (s = e->sessions; s != NULL; s = s->next)
		if (s->job == j && s->acked < seq)
			return 0;
	return 1;
}

/* Whether s has answered revoke seq: acknowledged, or reported its counts. */
static int
hooks_cut_answered(const struct hook_sess *s, int64_t seq)
{
	return s->acked >= seq || (s->can_cut && s->cut_seq == seq);
}

/* Whether s reported NCCL counts for revoke seq and waits for their targets. */
static int
hooks_cut_waits(const struct hook_sess *s, int64_t seq)
{
	return s->can_cut && s->cut_seq == seq && s->acked < seq && s->ncut > 0 &&
	    s->target_seq != seq;
}

int
hooks_cut_ready(struct engine *e, const struct job *j, int64_t seq)
{
	struct hook_sess *s;
	int some = 0;

	for (s = e->sessions; s != NULL; s = s->next) {
		if (s->job != j || !s->can_cut)
			continue;	/* an older hook is revoked as before */
		if (!hooks_cut_answered(s, seq))
			return 0;
		if (hooks_cut_waits(s, seq))
			some = 1;
	}
	return some;
}

void
hooks_cut_send(struct engine *e, struct job *j, int64_t seq)
{
	int64_t target[HOOKMSG_MAX_COMMS];
	struct hook_sess *s, *next;
	struct proto_buf b;
	int c, n = 0, sent = 0;

	memset(target, 0, sizeof(target));
	for (s = e->sessions; s != NULL; s = s->next)
		if (s->job == j && s->can_cut && s->cut_seq == seq)
			for (c = 0; c < s->ncut; c++) {
				if (s->cut_count[c] > target[c])
					target[c] = s->cut_count[c];
				if (c + 1 > n)
					n = c + 1;
			}
	/* once per process and revoke: one that linked or reported late gets them too */
	for (s = e->sessions; s != NULL; s = next) {
		next = s->next;	/* a failed send closes s at once */
		if (s->job != j || !hooks_cut_waits(s, seq))
			continue;
		memcpy(s->cut_target, target, sizeof(target));
		s->ntarget = n;
		s->target_seq = seq;
		memset(&b, 0, sizeof(b));
		proto_begin(&b, MSG_HOOK_CUTAT);
		proto_put_int(&b, "seq", seq);
		for (c = 0; c < n; c++)
			proto_put_int(&b, "n", target[c]);
		if (proto_end(&b) == -1) {
			proto_buf_free(&b);
			continue;
		}
		server_push(s->conn, &b);
		sent++;
	}
	log_debug("job %lld: the cut of seq %lld sent (%d communicators) to %d processes",
	    (long long)j->id, (long long)seq, n, sent);
}

int
hooks_cut_old(struct engine *e, const struct job *j, int64_t seq)
{
	struct hook_sess *s;
	int n = 0;

	for (s = e->sessions; s != NULL; s = s->next)
		if (s->job == j && s->acked < seq && !s->can_cut)
			n++;
	return n;
}

int
hooks_cut_ranks(struct engine *e, const struct job *j, int64_t seq)
{
	struct hook_sess *s;
	int n = 0;

	for (s = e->sessions; s != NULL; s = s->next)
		if (s->job == j && s->can_cut && s->cut_seq == seq && s->ncut > 0)
			n++;
	return n;
}

void
hooks_cut_why(struct engine *e, const struct job *j, int64_t seq, char *buf, size_t len)
{
	struct hook_sess *s, *silent = NULL, *nonrank = NULL, *late = NULL;
	int c;

	snprintf(buf, len, "its processes did not drain their GPU work");
	for (s = e->sessions; s != NULL; s = s->next) {
		if (s->job != j || s->acked >= seq)
			continue;
		for (c = 0; s->target_seq == seq && c < s->ntarget; c++)
			if ((c < s->ncut ? s->cut_count[c] : 0) < s->cut_target[c]) {
				snprintf(buf, len, "process %d launched %lld of the %lld collectives "
				    "of its communicator %d that a peer had launched",
				    (int)s->pid, (long long)(c < s->ncut ? s->cut_count[c] : 0),
				    (long long)s->cut_target[c], c);
				return;
			}
		if (!hooks_cut_answered(s, seq)) {
			if (silent == NULL)
				silent = s;
		} else if (s->ncut == 0) {
			if (nonrank == NULL)
				nonrank = s;
		} else if (late == NULL)
			late = s;
	}
	if (silent != NULL)
		snprintf(buf, len, "process %d did not answer", (int)silent->pid);
	else if (nonrank != NULL)
		snprintf(buf, len, "process %d, which launched no collective, did not drain its "
		    "GPU work", (int)nonrank->pid);
	else if (late != NULL)
		snprintf(buf, len, "process %d reached the cut but its GPU work did not drain",
		    (int)late->pid);
}

/* A process's NCCL counts at a revoke (cut.h): claims, kept for the pass. */
static int
hooks_cut(struct engine *e, struct hook_sess *s, const struct proto_msg *m, char *err,
    size_t errlen)
{
	struct hookmsg_cut c;

	if (hookmsg_cut(m, &c, err, errlen) == -1)
		return -1;
	/* an older revoke's, or one this process cannot answer so */
	if (!s->can_cut || c.seq != s->job->gc.seq || s->job->gc.lock == GC_GRANTED)
		return 0;
	if (c.progress && s->cut_seq != c.seq)
		return 0;	/* on its way to a cut it never reported */
	if (s->cut_seq != c.seq)
		s->ntarget = 0;	/* targets of an older revoke */
	s->cut_seq = c.seq;
	s->ncut = c.n;
	memcpy(s->cut_count, c.count, sizeof(c.count[0]) * (size_t)c.n);
	if (!c.progress)
		hooks_report_ev(e, GC_EV_CUT, s->job, c.seq);
	return 0;
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
	j->hook_shared = 0;
	j->hook_staged = 0;
	for (s = e->sessions; s != NULL; s = s->next)
		if (s->job == j) {
			j->hook_shared = hookmsg_add(j->hook_shared, s->shared, UINT64_MAX);
			j->hook_staged = hookmsg_add(j->hook_staged, s->staged, UINT64_MAX);
			for (g = 0; g < e->gpus.n; g++) {
				j->hook_used[g] = hookmsg_add(j->hook_used[g], s->used[g],
				    hooks_bound(e, j, g));
				if (s->peak[g] > j->hook_peak[g])
					j->hook_peak[g] = s->peak[g];
			}
		}
	for (g = 0; g < e->gpus.n; g++)
		if (j->hook_used[g] > j->hook_peak[g])
			j->hook_peak[g] = j->hook_used[g];
}

/* Tells each process of j what the others leave it of the job's budget. */
static void
hooks_caps(struct engine *e, struct job *j)
{
	struct hook_sess *s, *next;
	struct proto_buf b;
	uint64_t others, cap;
	int g, rows;

	if (j->granted == 0 || j->hook_used == NULL)
		return;
	for (s = e->sessions; s != NULL; s = next) {
		next = s->next;	/* a failed send closes s at once */
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
hooks_move(struct engine *e, struct job *j, int64_t seq, int out)
{
	struct hook_sess *s, *next;
	struct proto_buf b;
	int n = 0;

	for (s = e->sessions; s != NULL; s = next) {
		next = s->next;	/* a failed send closes s at once */
		if (s->job != j)
			continue;
		memset(&b, 0, sizeof(b));
		proto_begin(&b, MSG_HOOK_MOVE);
		proto_put_int(&b, "seq", seq);
		proto_put_int(&b, "out", out);
		if (proto_end(&b) == -1) {
			proto_buf_free(&b);
			continue;
		}
		s->move_asked = seq;
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

/* A process's answer to the move it was asked last: reported (gpuctl adds them up). */
static void
hooks_moved(struct engine *e, struct hook_sess *s, const struct proto_msg *m)
{
	struct gc_event ev = { .type = GC_EV_MOVED, .job = s->job->id };
	int64_t seq = proto_int(m, "seq", 0);
	const char *err = proto_str(m, "error");

	if (seq != s->move_asked || seq <= s->move_done)
		return;	/* an old move's: that switch went on without it */
	s->move_done = seq;
	ev.n = seq;
	ev.bytes = proto_int(m, "bytes", 0);
	ev.left = proto_int(m, "left", 0);
	ev.secs = (double)proto_int(m, "us", 0) / 1e6;
	if (err != NULL)
		snprintf(ev.error, sizeof(ev.error), "process %d: %s", (int)s->pid, err);
	log_debug("job %lld: process %d moved %lld bytes %s in %.3fs%s%s", (long long)ev.job,
	    (int)s->pid, (long long)ev.bytes, proto_int(m, "out", 1) ? "out" : "back", ev.secs,
	    err ? ": " : "", err ? err : "");
	e->report(e, &ev);
}

/* A process's use per GPU: claims, each counted as at most the job may hold. */
static int
hooks_report(struct engine *e, struct hook_sess *s, const struct proto_msg *m, char *err,
    size_t errlen)
{
	struct hookmsg_row rows[HOOKMSG_MAX_ROWS];
	struct job *j = s->job;
	uint64_t bound;
	int64_t shared, staged;
	int n, k, g, over;

	if ((n = hookmsg_report(m, rows, HOOKMSG_MAX_ROWS, &shared, &staged, err, errlen)) == -1 ||
	    lcbe_report(j, m, &s->yield_us, err, errlen) == -1)
		return -1;
	s->shared = (uint64_t)shared;
	/* a claim: counted as at most its share */
	s->staged = (uint64_t)staged > s->staging ? s->staging : (uint64_t)staged;
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
	if (!member_of(j, *pid) ||
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

/*
 * A new process's share of [scheduler] staging: what is left of it, up to
 * what its job may hold on its GPUs (a suspend never stages more).
 */
static uint64_t
hooks_staging(struct engine *e, const struct job *j)
{
	const struct hook_sess *s;
	uint64_t left = e->cfg.staging, want = 0;
	int g;

	if (!e->cfg.offload)
		return 0;
	for (s = e->sessions; s != NULL; s = s->next)
		left = s->staging < left ? left - s->staging : 0;
	for (g = 0; g < e->gpus.n; g++)
		if (hooks_in(j, g))
			want = hookmsg_add(want, hooks_bound(e, j, g), UINT64_MAX);
	return want < left ? want : left;
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
	if ((j = jobtab_find(&e->jobtab, h.job)) == NULL || j->state == JOB_PENDING) {
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
	s->can_cut = h.cut;
	/* first, while nothing is queued to it: the page goes with these bytes */
	s->lcbe_slot = h.lcbe ? lcbe_hello(e, conn, j, h.live) : -1;
	/*
	 * Nothing of its own is in flight; but one that can cut and links while
	 * the lock is being taken back (again, after losing nvqd) may hold NCCL
	 * counts: it reports and acknowledges like the others.
	 */
	s->acked = j->gc.lock == GC_REVOKING && s->can_cut ? j->gc.seq - 1 : j->gc.seq;
	s->next = e->sessions;
	if (e->sessions != NULL)
		e->sessions->prev = s;
	e->sessions = s;
	j->nsess++;
	if (h.pid != 0 && h.pid != pid)
		log_debug("job %lld: process %d says it is %lld (another pid namespace?)",
		    (long long)j->id, (int)pid, (long long)h.pid);
	log_debug("job %lld: process %d linked", (long long)j->id, (int)pid);
	s->staging = hooks_staging(e, j);
	/* its cap first: the hook lets the process go on at the first state */
	hooks_caps(e, j);
	hooks_report_ev(e, GC_EV_LINKED, j, 0);
	hooks_send_state(e, s, j->gc.lock == GC_GRANTED, j->gc.seq);
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
		hooks_report_ev(e, GC_EV_ACK, s->job, s->acked);
		break;
	case MSG_HOOK_WANT:
		log_debug("job %lld: process %d waits for the lock", (long long)s->job->id,
		    (int)s->pid);
		hooks_report_ev(e, GC_EV_WANT, s->job, 0);
		break;
	case MSG_HOOK_IDLE:
		hooks_report_ev(e, GC_EV_IDLE, s->job, proto_int(m, "idle", 1) != 0);
		break;
	case MSG_HOOK_MOVED:
		hooks_moved(e, s, m);
		break;
	case MSG_HOOK_CUT:
		if (hooks_cut(e, s, m, err, errlen) == -1)
			goto fail;
		break;
	case MSG_HOOK_OOM:
		/* a claim, used for the words of the job's end only */
		if (proto_int(m, "asked", 0) <= 0 || proto_int(m, "used", -1) < 0 ||
		    proto_int(m, "limit", -1) < 0) {
			snprintf(err, errlen, "a refusal without its sizes");
			goto fail;
		}
		s->job->oom_asked = (uint64_t)proto_int(m, "asked", 0);
		s->job->oom_used = (uint64_t)proto_int(m, "used", 0);
		s->job->oom_limit = (uint64_t)proto_int(m, "limit", 0);
		log_info("job %lld: process %d was refused %lld bytes past its budget",
		    (long long)s->job->id, (int)s->pid, (long long)s->job->oom_asked);
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
	lcbe_release(e, s->lcbe_slot);
	if (j != NULL) {
		j->nsess--;
		hooks_sum(e, j);
		hooks_caps(e, j);
	}
	uv_close((uv_handle_t *)&s->watch->poll, hooks_watch_closed_cb);
	free(s->used);
	free(s->peak);
	free(s->cap);
	free(s);
	if (j != NULL)
		hooks_report_ev(e, GC_EV_UNLINKED, j, 0);
}

void
hooks_job_gone(struct engine *e, struct job *j)
{
	struct hook_sess *s;

	for (s = e->sessions; s != NULL; s = s->next)
		if (s->job == j) {
			s->job = NULL;
			/* its processes may linger a moment: none of them is lc from now */
			lcbe_release(e, s->lcbe_slot);
			s->lcbe_slot = -1;
		}
	j->nsess = 0;
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
