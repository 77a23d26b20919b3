/*
 * link.c: the hook's connection to nvqd (see link.h).
 *
 * nvqd puts NVQ_HOOK_SOCKET and NVQ_JOB_ID into every job's environment.
 * On the first CUDA call the process connects, says hello (job id; nvqd
 * takes the pid from SO_PEERCRED and checks it belongs to the job), and
 * waits up to a second for nvqd's first word on the lock.  Then a thread
 * of the hook's own, with every signal blocked, does the rest:
 *   - reports device memory per GPU when it changed, at most every 100 ms;
 *   - MSG_HOOK_STATE granted=1 opens the gate; granted=0 shuts it, waits
 *     for the launches and copies in flight and for the GPU work already
 *     submitted (cuCtxSynchronize), then acknowledges with the same seq;
 *   - with "cut" 1 in that revoke (nvqd knows cuts, cut.h) and this hook's
 *     NCCL counts not empty, it first reports the counts (MSG_HOOK_CUT) at
 *     once and waits for nvqd's targets (MSG_HOOK_CUTAT) without blocking
 *     this thread: a process below them runs on (GATE_CUT) and, once a
 *     launch reaches them, drains and acknowledges as above; while it runs
 *     on, its counts go to nvqd again when they change (at most every
 *     100 ms), so that nvqd can say where it stopped if it never gets there;
 *   - MSG_HOOK_LIMIT caps what this process may allocate, because the
 *     job's other processes hold the rest of its budget;
 *   - a launch waiting at a shut gate sends MSG_HOOK_WANT once;
 *   - under timeslice, no launch for LINK_IDLE_S sends MSG_HOOK_IDLE once;
 *   - MSG_HOOK_MOVE out=1 (the gate shut) moves the job's large allocations
 *     to host memory, out=0 brings them back (offload.c); MSG_HOOK_MOVED
 *     answers with what moved.  The gate never opens while memory is out:
 *     opening it brings the memory back first.
 * When nvqd cannot be reached, NVQ_HOOK_ON_DISCONNECT decides: "run"
 * (default) opens the gate, "wait" keeps it shut; the budget stays in
 * force either way, and the thread reconnects every half second.
 * Nothing here writes to stdout, exits or raises a signal in the process.
 */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

#include "budget.h"
#include "cut.h"
#include "gate.h"
#include "lcbe.h"
#include "link.h"
#include "offload.h"
#include "proto.h"

#define LINK_TICK_MS	100
#define LINK_RETRY_MS	500
#define LINK_IDLE_S	0.5
#define LINK_HELLO_MS	1000

struct gate nvq_gate;

/* the link thread and the process's exit both send */
static pthread_mutex_t link_send_mu = PTHREAD_MUTEX_INITIALIZER;
static pthread_mutex_t link_report_mu = PTHREAD_MUTEX_INITIALIZER;

static struct {
	const struct link_ops *ops;	/* the hook's, from link_start */
	pthread_mutex_t	mu;
	pthread_cond_t	cv;		/* gate opened, or the first word came */
	int		started;
	int		fd;		/* -1 while not connected */
	int		wake[2];	/* a waiting launch pokes the thread */
	char		path[108];
	int64_t		job;
	int		wait_policy;	/* NVQ_HOOK_ON_DISCONNECT=wait */
	int		first_done;	/* nvqd answered, or could not be reached */
	int		timeslice;
	int		waiting;	/* launches waiting at the gate */
	int		want_sent;
	int		idle_sent;
	int		refused_said;	/* the refusal was written to stderr */
	int		can_cut;	/* NVQ_HOOK_CUT is not 0 */
	int64_t		cut_seq;	/* the revoke whose cut is under way; 0: none */
	uint64_t	cut_sent[CUT_MAX_COMMS];	/* the counts last reported */
	int		cut_sent_n;
	double		idle_since;	/* the last launch seen, or the last grant */
	uint8_t		*buf;		/* what was read and not yet handled */
	size_t		len, cap;
	uint64_t	sent_used[BUDGET_MAX_DEV], sent_peak[BUDGET_MAX_DEV];
	uint64_t	sent_shared;	/* ops->unmovable() as last reported */
	uint64_t	sent_staged;	/* offload_staged() as last reported */
	uint64_t	sent_yield_us;	/* lcbe_yielded_ns() / 1000 as last reported */
	int		lcbe_fd[LCBE_MAX_PAGES + 1];	/* the pages' descriptors, come with */
	int		lcbe_nfd;			/* nvqd's bytes (MSG_HOOK_LCBE) */
	int		sent_n;
	char		uuid[BUDGET_MAX_DEV][64];
	struct {			/* the last refusal, until sent (link_refused) */
		int		set, dev;
		uint64_t	asked, used, limit;
	}		oom;
} L = { .mu = PTHREAD_MUTEX_INITIALIZER, .cv = PTHREAD_COND_INITIALIZER, .fd = -1,
	.wake = { -1, -1 } };

static double
link_now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static void
link_gate(int state)
{
	pthread_mutex_lock(&L.mu);
	cut_set_state(state);
	if (state != GATE_SHUT)
		L.cut_seq = 0;
	if (state == GATE_OPEN)
		L.want_sent = 0;
	pthread_cond_broadcast(&L.cv);
	pthread_mutex_unlock(&L.mu);
}

/*
 * Opens the gate, once the job's memory is on its devices: if a suspend
 * moved it out and the memory could not come back yet, the gate stays
 * shut (the next grant, or reconnection, tries again).
 */
static void
link_open(void)
{
	struct offload_stats st;

	if (!offload_resident() && offload_in(&st) == -1) {
		L.ops->log("the gate stays shut: %s", st.error);
		link_gate(GATE_SHUT);
		return;
	}
	link_gate(GATE_OPEN);
	offload_drop_staging();
}

static int
link_send(struct proto_buf *b)
{
	size_t off = 0;
	ssize_t n;

	if (proto_end(b) == -1 || L.fd < 0) {
		proto_buf_free(b);
		return -1;
	}
	pthread_mutex_lock(&link_send_mu);
	while (off < b->len) {
		n = send(L.fd, b->data + off, b->len - off, MSG_NOSIGNAL);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			break;
		off += (size_t)n;
	}
	pthread_mutex_unlock(&link_send_mu);
	n = off == b->len ? 0 : -1;
	proto_buf_free(b);
	return (int)n;
}

static void
link_close(void)
{
	if (L.fd >= 0)
		close(L.fd);
	L.fd = -1;
	L.len = 0;
	L.sent_n = -1;
}

/* nvqd is gone or never came: the policy decides the gate. */
static void
link_lost(void)
{
	link_close();
	pthread_mutex_lock(&L.mu);
	L.first_done = 1;
	/* that revoke's cut was the lost nvqd's: a reconnection starts over */
	L.cut_seq = 0;
	pthread_mutex_unlock(&L.mu);
	/* memory a suspend moved out stays out until nvqd asks for it back: the
	 * process may be checkpointed by the driver, where CUDA calls wait */
	if (L.wait_policy || !offload_resident())
		link_gate(GATE_SHUT);
	else
		link_open();
}

static int
link_connect(void)
{
	struct sockaddr_un sa;
	struct proto_buf b = { 0 };

	memset(&sa, 0, sizeof(sa));
	sa.sun_family = AF_UNIX;
	memcpy(sa.sun_path, L.path, sizeof(L.path) < sizeof(sa.sun_path) ?
	    sizeof(L.path) : sizeof(sa.sun_path));
	sa.sun_path[sizeof(sa.sun_path) - 1] = '\0';
	if ((L.fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0)) == -1)
		return -1;
	if (connect(L.fd, (struct sockaddr *)&sa, sizeof(sa)) == -1) {
		link_close();
		return -1;
	}
	L.sent_n = -1;
	L.want_sent = 0;
	proto_begin(&b, MSG_HOOK_HELLO);
	proto_put_int(&b, "job", L.job);
	proto_put_int(&b, "pid", (int64_t)getpid());
	proto_put_int(&b, "version", PROTO_HOOK_VERSION);
	proto_put_int(&b, "cut", L.can_cut);
	if (link_send(&b) == -1) {
		link_close();
		return -1;
	}
	return 0;
}

/* The gate shut: drain, synchronize, acknowledge seq. */
static void
link_drain(int64_t seq)
{
	struct proto_buf b = { 0 };
	uint64_t used[BUDGET_MAX_DEV], peak[BUDGET_MAX_DEV];
	struct timespec ts = { 0, 100000 };
	int n;

	while (__atomic_load_n(&nvq_gate.inflight, __ATOMIC_SEQ_CST) != 0)
		nanosleep(&ts, NULL);
	n = L.ops->usage(used, peak, BUDGET_MAX_DEV);
	L.ops->sync(n);
	proto_begin(&b, MSG_HOOK_ACK);
	proto_put_int(&b, "seq", seq);
	link_send(&b);
	L.ops->log("lock taken back (seq %lld): drained and acknowledged", (long long)seq);
}

/* Tells nvqd this process's NCCL launches per communicator (MSG_HOOK_CUT). */
static void
link_send_cut(int64_t seq, const uint64_t *counts, int n, int progress)
{
	struct proto_buf b = { 0 };
	int c;

	proto_begin(&b, MSG_HOOK_CUT);
	proto_put_int(&b, "seq", seq);
	if (progress)
		proto_put_int(&b, "progress", 1);
	for (c = 0; c < n; c++)
		proto_put_int(&b, "n", (int64_t)(counts[c] < INT64_MAX ? counts[c] : INT64_MAX));
	if (link_send(&b) == 0) {
		memcpy(L.cut_sent, counts, sizeof(counts[0]) * (size_t)n);
		L.cut_sent_n = n;
	}
}

/*
 * Takes the lock back.  Where nvqd knows cuts and this process launched
 * NCCL kernels, it reports its counts and waits for the targets (link_cutat);
 * otherwise shut, drain, synchronize, acknowledge.
 */
static void
link_revoke(int64_t seq, int cut)
{
	uint64_t counts[CUT_MAX_COMMS];
	int n;

	link_gate(GATE_SHUT);
	/* seq 0: a restarted nvqd's word for a job held before; no revoke to cut */
	if (cut && L.can_cut && seq > 0) {
		/* at once: a synchronous copy in flight may wait for a peer's collective */
		n = cut_shut(counts, CUT_MAX_COMMS);
		link_send_cut(seq, counts, n, 0);
		if (n > 0) {
			pthread_mutex_lock(&L.mu);
			L.cut_seq = seq;
			pthread_mutex_unlock(&L.mu);
			L.ops->log("lock asked back (seq %lld): %d communicators' counts reported",
			    (long long)seq, n);
			return;
		}
	}
	link_drain(seq);
}

/* nvqd's targets for the cut of revoke seq: run on to them, or drain now. */
static void
link_cutat(const struct proto_msg *m)
{
	uint64_t targets[CUT_MAX_COMMS];
	int64_t seq = proto_int(m, "seq", 0);
	int i, n = 0, at;

	if (seq == 0 || seq != L.cut_seq)
		return;	/* an older revoke's, or a grant came since */
	for (i = 0; i < m->nfields && n < CUT_MAX_COMMS; i++)
		if (strcmp(m->fields[i].key, "n") == 0 && m->fields[i].kind == 'i')
			targets[n++] = m->fields[i].i > 0 ? (uint64_t)m->fields[i].i : 0;
	if ((at = cut_aim(targets, n)) == 1) {
		L.cut_seq = 0;
		link_drain(seq);
	} else if (at == 0) {
		/* launches and copies waiting at the shut gate may pass now */
		pthread_mutex_lock(&L.mu);
		pthread_cond_broadcast(&L.cv);
		pthread_mutex_unlock(&L.mu);
		L.ops->log("running on to the cut of seq %lld", (long long)seq);
	}
}

/* On the way to a cut: reached it (drain), or counts to tell nvqd. */
static void
link_cut_tick(void)
{
	uint64_t counts[CUT_MAX_COMMS];
	int64_t seq = L.cut_seq;
	int n;

	if (seq == 0)
		return;
	if (cut_take_reached()) {
		L.cut_seq = 0;
		link_drain(seq);
		return;
	}
	n = cut_counts(counts, CUT_MAX_COMMS);
	if (n != L.cut_sent_n || memcmp(counts, L.cut_sent, sizeof(counts[0]) * (size_t)n) != 0)
		link_send_cut(seq, counts, n, 1);
}

/* Moves the job's memory out (the gate shut) or back, and says what moved. */
static void
link_move(int64_t seq, int out)
{
	struct proto_buf b = { 0 };
	struct offload_stats st;

	memset(&st, 0, sizeof(st));
	if (out && gate_passes(__atomic_load_n(&nvq_gate.state, __ATOMIC_SEQ_CST)))
		snprintf(st.error, sizeof(st.error), "the job holds its GPU lock");
	else if (out)
		offload_out(&st);
	else
		offload_in(&st);
	proto_begin(&b, MSG_HOOK_MOVED);
	proto_put_int(&b, "seq", seq);
	proto_put_int(&b, "out", out);
	proto_put_int(&b, "bytes", (int64_t)st.bytes);
	proto_put_int(&b, "left", (int64_t)st.left);
	proto_put_int(&b, "us", (int64_t)(st.seconds * 1e6));
	if (st.error[0] != '\0')
		proto_put_str(&b, "error", st.error);
	link_send(&b);
	/* the staging memory goes once the gate opens: the job need not wait for it */
}

static void
link_limit(const struct proto_msg *m)
{
	const char *uuid = NULL;
	int i, d;

	for (i = 0; i < m->nfields; i++) {
		const struct proto_field *f = &m->fields[i];

		if (strcmp(f->key, "uuid") == 0 && f->kind == 's')
			uuid = f->s;
		else if (strcmp(f->key, "cap") == 0 && f->kind == 'i' && uuid != NULL) {
			/* the UUIDs of the devices not seen yet */
			for (d = 0; d < BUDGET_MAX_DEV; d++)
				if (L.uuid[d][0] == '\0' &&
				    L.ops->uuid(d, L.uuid[d], sizeof(L.uuid[d])) == -1)
					break;
			for (d = 0; d < BUDGET_MAX_DEV; d++)
				if (strcmp(L.uuid[d], uuid) == 0)
					L.ops->set_cap(d, f->i > 0 ? (uint64_t)f->i : 1);
			uuid = NULL;
		}
	}
}

static void	link_lcbe(const struct proto_msg *);

static void
link_message(const struct proto_msg *m)
{
	int64_t staging;

	switch (m->type) {
	case MSG_HOOK_STATE:
		L.timeslice = (int)proto_int(m, "timeslice", 0);
		/* the staging it may keep between switches (nvqd's share of [scheduler] staging) */
		staging = proto_int(m, "staging", 0);
		offload_keep(staging > 0 ? (size_t)staging : 0);
		L.idle_sent = 0;
		L.idle_since = link_now();	/* a waiting job is not an idle one */
		if (proto_int(m, "granted", 1))
			link_open();
		else
			link_revoke(proto_int(m, "seq", 0), proto_int(m, "cut", 0) != 0);
		pthread_mutex_lock(&L.mu);
		L.first_done = 1;
		pthread_cond_broadcast(&L.cv);
		pthread_mutex_unlock(&L.mu);
		break;
	case MSG_HOOK_LIMIT:
		link_limit(m);
		break;
	case MSG_HOOK_CUTAT:
		link_cutat(m);
		break;
	case MSG_HOOK_LCBE:
		link_lcbe(m);
		break;
	case MSG_HOOK_MOVE:
		link_move(proto_int(m, "seq", 0), (int)proto_int(m, "out", 1));
		break;
	case MSG_ERROR:
		/* once, whatever the debug setting: the job's owner must know */
		if (!L.refused_said) {
			L.refused_said = 1;
			fprintf(stderr, "nvq-hook: nvqd refused this process's link (pid %d): %s; "
			    "its GPU use is not counted as the job's, and nvq hold and suspend "
			    "do not reach it\n", (int)getpid(), proto_str(m, "error") ?
			    proto_str(m, "error") : "?");
		}
		break;
	default:
		break;
	}
}

/* The pages' descriptors not taken yet, closed. */
static void
link_lcbe_drop(void)
{
	while (L.lcbe_nfd > 0)
		close(L.lcbe_fd[--L.lcbe_nfd]);
}

/*
 * Reads bytes from nvqd, and the descriptors that may come with them (the
 * lc/be pages, MSG_HOOK_LCBE): kept until that message is handled.
 */
static ssize_t
link_recv(void *buf, size_t len)
{
	union {
		struct cmsghdr	h;
		char		b[CMSG_SPACE(sizeof(int) * (LCBE_MAX_PAGES + 1))];
	} u;
	struct iovec iov = { buf, len };
	struct msghdr mh;
	struct cmsghdr *c;
	ssize_t n;
	size_t k, nfd;
	int fd;

	memset(&mh, 0, sizeof(mh));
	mh.msg_iov = &iov;
	mh.msg_iovlen = 1;
	mh.msg_control = u.b;
	mh.msg_controllen = sizeof(u.b);
	if ((n = recvmsg(L.fd, &mh, MSG_CMSG_CLOEXEC)) <= 0)
		return n;
	for (c = CMSG_FIRSTHDR(&mh); c != NULL; c = CMSG_NXTHDR(&mh, c)) {
		if (c->cmsg_level != SOL_SOCKET || c->cmsg_type != SCM_RIGHTS)
			continue;
		link_lcbe_drop();	/* what came before and was never used */
		nfd = (c->cmsg_len - CMSG_LEN(0)) / sizeof(int);
		for (k = 0; k < nfd; k++) {
			memcpy(&fd, CMSG_DATA(c) + k * sizeof(int), sizeof(fd));
			if (L.lcbe_nfd < LCBE_MAX_PAGES + 1)
				L.lcbe_fd[L.lcbe_nfd++] = fd;
			else
				close(fd);
		}
	}
	return n;
}

static void
link_lcbe_sync(void)
{
	L.ops->sync(BUDGET_MAX_DEV);
}

/*
 * nvqd's lc/be pages: "lc" 1 or 0, "slot", "wait" (ms), then "gpu" per GPU
 * of the job, in the order of the descriptors that came with the bytes;
 * "live" 1: one more descriptor after them, nvqd's live page.
 */
static void
link_lcbe(const struct proto_msg *m)
{
	int gpus[LCBE_MAX_PAGES], n = 0, i, lc = proto_int(m, "lc", 0) == 1;
	int live = proto_int(m, "live", 0) == 1;

	for (i = 0; i < m->nfields && n < LCBE_MAX_PAGES; i++)
		if (strcmp(m->fields[i].key, "gpu") == 0 && m->fields[i].kind == 'i')
			gpus[n++] = (int)m->fields[i].i;
	if (n == 0 || n + live != L.lcbe_nfd) {
		link_lcbe_drop();
		return;
	}
	L.lcbe_nfd = 0;	/* lcbe_attach closes them */
	if (lcbe_attach(L.lcbe_fd, lc, (int)proto_int(m, "slot", -1), proto_int(m, "wait", 1000),
	    gpus, n, live ? L.lcbe_fd[n] : -1, link_lcbe_sync) == -1)
		L.ops->log("the lc/be pages could not be attached: this process neither yields "
		    "nor is yielded to");
	else
		L.ops->log("attached as %s on %d GPUs", lc ? "lc" : "be", n);
}

/* Reads what came; -1 when the connection is gone or spoke nonsense. */
static int
link_read(void)
{
	struct proto_msg m;
	char err[128];
	uint32_t blen;
	size_t used = 0;
	ssize_t n;
	uint8_t *nb;
	int type;

	if (L.cap - L.len < 4096) {
		if (L.cap > PROTO_HEADER + PROTO_MAX_BODY ||
		    (nb = realloc(L.buf, L.cap ? L.cap * 2 : 8192)) == NULL)
			return -1;
		L.buf = nb;
		L.cap = L.cap ? L.cap * 2 : 8192;
	}
	n = link_recv(L.buf + L.len, L.cap - L.len);
	if (n < 0 && (errno == EINTR || errno == EAGAIN))
		return 0;
	if (n <= 0)
		return -1;
	L.len += (size_t)n;
	while (L.len - used >= PROTO_HEADER) {
		if (proto_header(L.buf + used, &type, &blen, err, sizeof(err)) == -1)
			return -1;
		if (L.len - used - PROTO_HEADER < blen)
			break;
		if (proto_decode(type, L.buf + used + PROTO_HEADER, blen, &m, err,
		    sizeof(err)) == -1)
			return -1;
		link_message(&m);
		proto_msg_free(&m);
		used += PROTO_HEADER + blen;
	}
	memmove(L.buf, L.buf + used, L.len - used);
	L.len -= used;
	return 0;
}

/* Reports device memory when it changed since the last report. */
static void
link_report_locked(void)
{
	uint64_t used[BUDGET_MAX_DEV], peak[BUDGET_MAX_DEV];
	struct proto_buf b = { 0 };
	int n = L.ops->usage(used, peak, BUDGET_MAX_DEV), d, rows = 0;
	uint64_t shared = L.ops->unmovable(), staged = offload_staged();
	uint64_t yield_us = lcbe_yielded_ns() / 1000, hc[32];
	int hb[32], nh = lcbe_take_hist(hb, hc, 32), h;

	if (nh == 0 && yield_us == L.sent_yield_us && n == L.sent_n && memcmp(used, L.sent_used, sizeof(used[0]) * (size_t)n) == 0 &&
	    memcmp(peak, L.sent_peak, sizeof(peak[0]) * (size_t)n) == 0 &&
	    shared == L.sent_shared && staged == L.sent_staged)
		return;
	proto_begin(&b, MSG_HOOK_REPORT);
	/* lc/be: a be process's time yielding, an lc one's launch latencies since the last */
	if (yield_us != L.sent_yield_us)
		proto_put_int(&b, "yield_us", (int64_t)yield_us);
	for (h = 0; h < nh; h++) {
		proto_put_int(&b, "lb", hb[h]);
		proto_put_int(&b, "ln", (int64_t)hc[h]);
	}
	/* shared memory a suspend cannot move: nvqd does not suspend the job while there is any */
	if (shared > 0 || L.sent_shared > 0)
		proto_put_int(&b, "shared", (int64_t)shared);
	/* host memory it holds ready for a suspend: nvqd need not find it free */
	if (staged > 0 || L.sent_staged > 0)
		proto_put_int(&b, "staged", (int64_t)staged);
	for (d = 0; d < n; d++) {
		if (used[d] == 0 && peak[d] == 0)
			continue;
		if (L.uuid[d][0] == '\0' && L.ops->uuid(d, L.uuid[d], sizeof(L.uuid[d])) == -1)
			continue;
		proto_put_int(&b, "id", d);
		proto_put_str(&b, "uuid", L.uuid[d]);
		proto_put_int(&b, "used", (int64_t)used[d]);
		proto_put_int(&b, "peak", (int64_t)peak[d]);
		rows++;
	}
	if (rows == 0 && L.sent_n == -1 && n == 0 && shared == 0 && staged == 0 && nh == 0 &&
	    yield_us == L.sent_yield_us) {
		proto_buf_free(&b);
		return;
	}
	if (link_send(&b) == 0) {
		memcpy(L.sent_used, used, sizeof(used[0]) * (size_t)n);
		memcpy(L.sent_peak, peak, sizeof(peak[0]) * (size_t)n);
		L.sent_n = n;
		L.sent_shared = shared;
		L.sent_staged = staged;
		L.sent_yield_us = yield_us;
	}
}

static void
link_report(void)
{
	pthread_mutex_lock(&link_report_mu);
	link_report_locked();
	pthread_mutex_unlock(&link_report_mu);
}

static void
link_simple(int type, const char *key, int64_t v)
{
	struct proto_buf b = { 0 };

	proto_begin(&b, type);
	if (key != NULL)
		proto_put_int(&b, key, v);
	link_send(&b);
}

void
link_refused(int dev, uint64_t asked, uint64_t used, uint64_t limit)
{
	char c = 1;

	pthread_mutex_lock(&L.mu);
	L.oom.set = 1;
	L.oom.dev = dev;
	L.oom.asked = asked;
	L.oom.used = used;
	L.oom.limit = limit;
	if (L.wake[1] >= 0)
		(void)!write(L.wake[1], &c, 1);
	pthread_mutex_unlock(&L.mu);
}

/* The last refusal, if one is not sent yet. */
static void
link_send_oom(void)
{
	struct proto_buf b = { 0 };
	int dev;
	uint64_t asked, used, limit;

	pthread_mutex_lock(&L.mu);
	if (!L.oom.set) {
		pthread_mutex_unlock(&L.mu);
		return;
	}
	L.oom.set = 0;
	dev = L.oom.dev;
	asked = L.oom.asked;
	used = L.oom.used;
	limit = L.oom.limit;
	pthread_mutex_unlock(&L.mu);
	if (dev < 0 || dev >= BUDGET_MAX_DEV ||
	    (L.uuid[dev][0] == '\0' && L.ops->uuid(dev, L.uuid[dev], sizeof(L.uuid[dev])) == -1))
		return;
	proto_begin(&b, MSG_HOOK_OOM);
	proto_put_str(&b, "uuid", L.uuid[dev]);
	proto_put_int(&b, "asked", (int64_t)asked);
	proto_put_int(&b, "used", (int64_t)used);
	proto_put_int(&b, "limit", (int64_t)limit);
	link_send(&b);
}

static void *
link_main(void *arg)
{
	struct pollfd p[2];
	char junk[64];
	int want;

	(void)arg;
	L.idle_since = link_now();
	for (;;) {
		if (L.fd < 0 && link_connect() == -1) {
			link_lost();
			p[0].fd = L.wake[0];
			p[0].events = POLLIN;
			if (poll(p, 1, LINK_RETRY_MS) > 0)
				(void)!read(L.wake[0], junk, sizeof(junk));
			continue;
		}
		p[0].fd = L.fd;
		p[0].events = POLLIN;
		p[1].fd = L.wake[0];
		p[1].events = POLLIN;
		p[0].revents = p[1].revents = 0;
		if (poll(p, 2, LINK_TICK_MS) < 0 && errno != EINTR)
			continue;
		if ((p[0].revents & (POLLIN | POLLHUP | POLLERR)) && link_read() == -1) {
			L.ops->log("lost nvqd; reconnecting");
			link_lost();
			continue;
		}
		if (p[1].revents & POLLIN)
			(void)!read(L.wake[0], junk, sizeof(junk));
		lcbe_tick();
		link_cut_tick();	/* an acknowledgement goes before a want */
		pthread_mutex_lock(&L.mu);
		want = L.waiting > 0 && !L.want_sent &&
		    !gate_passes(__atomic_load_n(&nvq_gate.state, __ATOMIC_SEQ_CST));
		if (want)
			L.want_sent = 1;
		pthread_mutex_unlock(&L.mu);
		if (want)
			link_simple(MSG_HOOK_WANT, NULL, 0);
		link_report();
		link_send_oom();
		/* timeslice: give the lock back early when the job is idle */
		if (__atomic_exchange_n(&nvq_gate.active, 0, __ATOMIC_RELAXED)) {
			L.idle_since = link_now();
			if (L.idle_sent)
				link_simple(MSG_HOOK_IDLE, "idle", 0);
			L.idle_sent = 0;
		} else if (L.timeslice && !L.idle_sent && __atomic_load_n(&nvq_gate.state,
		    __ATOMIC_SEQ_CST) == GATE_OPEN && link_now() - L.idle_since >= LINK_IDLE_S) {
			link_simple(MSG_HOOK_IDLE, "idle", 1);
			L.idle_sent = 1;
		}
	}
	return NULL;
}

void
link_start(const struct link_ops *ops)
{
	const char *path = getenv("NVQ_HOOK_SOCKET"), *job = getenv("NVQ_JOB_ID");
	const char *pol = getenv("NVQ_HOOK_ON_DISCONNECT"), *cut = getenv("NVQ_HOOK_CUT");
	sigset_t all, old;
	pthread_t t;
	struct timespec until;
	char *end;

	pthread_mutex_lock(&L.mu);
	if (ops != NULL)
		L.ops = ops;
	if (L.ops == NULL) {
		/*
		 * A gated call before the hook's init gave the ops: the gate
		 * opens (link_gate_enter would spin on it), the link starts at init.
		 */
		if (__atomic_load_n(&nvq_gate.state, __ATOMIC_SEQ_CST) == GATE_INIT)
			__atomic_store_n(&nvq_gate.state, GATE_OPEN, __ATOMIC_SEQ_CST);
		pthread_mutex_unlock(&L.mu);
		return;
	}
	if (L.started) {
		pthread_mutex_unlock(&L.mu);
		return;
	}
	L.started = 1;
	if (path == NULL || *path == '\0' || strlen(path) >= sizeof(L.path) || job == NULL ||
	    (L.job = strtoll(job, &end, 10)) <= 0 || *end != '\0') {
		/* not run by nvqd: nobody to ask, the gate stays open */
		__atomic_store_n(&nvq_gate.state, GATE_OPEN, __ATOMIC_SEQ_CST);
		pthread_mutex_unlock(&L.mu);
		return;
	}
	snprintf(L.path, sizeof(L.path), "%s", path);
	L.wait_policy = pol != NULL && strcmp(pol, "wait") == 0;
	L.can_cut = cut == NULL || strcmp(cut, "0") != 0;
	L.sent_n = -1;
	if (pipe2(L.wake, O_CLOEXEC | O_NONBLOCK) == -1) {
		__atomic_store_n(&nvq_gate.state, GATE_OPEN, __ATOMIC_SEQ_CST);
		pthread_mutex_unlock(&L.mu);
		return;
	}
	cut_init(NULL, L.wake[1]);
	sigfillset(&all);
	pthread_sigmask(SIG_SETMASK, &all, &old);
	if (pthread_create(&t, NULL, link_main, NULL) != 0) {
		pthread_sigmask(SIG_SETMASK, &old, NULL);
		__atomic_store_n(&nvq_gate.state, GATE_OPEN, __ATOMIC_SEQ_CST);
		pthread_mutex_unlock(&L.mu);
		return;
	}
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	pthread_detach(t);
	/* wait for nvqd's first word, a second at most */
	clock_gettime(CLOCK_REALTIME, &until);
	until.tv_sec += LINK_HELLO_MS / 1000;
	while (!L.first_done)
		if (pthread_cond_timedwait(&L.cv, &L.mu, &until) == ETIMEDOUT)
			break;
	if (__atomic_load_n(&nvq_gate.state, __ATOMIC_SEQ_CST) == GATE_INIT)
		__atomic_store_n(&nvq_gate.state, L.wait_policy ? GATE_SHUT : GATE_OPEN,
		    __ATOMIC_SEQ_CST);
	pthread_mutex_unlock(&L.mu);
}

void
link_wait_gate(void)
{
	char c = 1;

	if (__atomic_load_n(&nvq_gate.state, __ATOMIC_SEQ_CST) == GATE_INIT) {
		link_start(NULL);
		return;
	}
	pthread_mutex_lock(&L.mu);
	L.waiting++;
	if (!L.want_sent && L.wake[1] >= 0)
		(void)!write(L.wake[1], &c, 1);
	while (!gate_passes(__atomic_load_n(&nvq_gate.state, __ATOMIC_SEQ_CST)))
		pthread_cond_wait(&L.cv, &L.mu);
	L.waiting--;
	pthread_mutex_unlock(&L.mu);
}

/* At exit: the last report, so that a short process's use is counted. */
__attribute__((destructor)) static void
link_exit_cb(void)
{
	if (L.started && L.fd >= 0) {
		link_report();
		link_send_oom();	/* a refusal just before the end: why it ended */
	}
}

void
link_child(void)
{
	/* the parent's thread is not here, its socket is the parent's */
	pthread_mutex_init(&L.mu, NULL);
	pthread_mutex_init(&link_send_mu, NULL);
	pthread_mutex_init(&link_report_mu, NULL);
	pthread_cond_init(&L.cv, NULL);
	if (L.fd >= 0)
		close(L.fd);
	if (L.wake[0] >= 0)
		close(L.wake[0]);
	if (L.wake[1] >= 0)
		close(L.wake[1]);
	L.fd = L.wake[0] = L.wake[1] = -1;
	cut_child(-1);
	lcbe_child();
	link_lcbe_drop();
	L.cut_seq = 0;
	L.cut_sent_n = 0;
	L.started = L.first_done = L.waiting = L.want_sent = L.idle_sent = 0;
	L.len = 0;
	L.sent_n = -1;
	memset(L.uuid, 0, sizeof(L.uuid));
	nvq_gate.inflight = 0;
	__atomic_store_n(&nvq_gate.state, GATE_INIT, __ATOMIC_SEQ_CST);
}
