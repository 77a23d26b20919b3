/*
 * server.c: accepts connections, reads frames, answers them.
 *
 * A connection reads into a buffer until a whole frame is there, checks
 * its header (version, type, size) before waiting for the body, and hands
 * the decoded message to the connection's handler (server.h).  A bad frame gets a MSG_ERROR
 * reply and the connection closes after it is written; other clients are
 * not affected.  A connection idle for SERVER_IDLE_MS with a partial frame,
 * or for long with none, is closed; a uid holds at most SERVER_MAX_PER_UID
 * connections, so that one user who opens thousands and goes silent cannot
 * take the file descriptors everyone else needs.  Connections are freed in
 * their close callback.
 *
 * Memory: the bytes held for a connection are its read buffer's capacity
 * and the replies queued to it, not yet written.  A read buffer past
 * SERVER_BUF_SMALL may grow only while its uid holds under
 * SERVER_MAX_UID_BYTES and everyone under SERVER_MAX_BYTES, and a request
 * is answered only while its uid holds under SERVER_MAX_UID_BYTES (replies
 * nobody reads); else the connection gets an error frame and closes.  So
 * partial 4 MB frames on hundreds of connections, or pipelined requests
 * whose replies are never read, cost at most that much.
 */
#include <errno.h>
#include <signal.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/un.h>
#include <unistd.h>

#include "fdpass.h"
#include "log.h"
#include "proc.h"
#include "proto.h"
#include "server.h"

#define SERVER_IDLE_MS	30000
/* Connections one uid may hold open at once (its nvq calls and its jobs' hooks). */
#define SERVER_MAX_PER_UID	256
/* A read buffer this small is always granted: nvq's own requests fit. */
#define SERVER_BUF_SMALL	65536
/* Bytes held for one uid's connections, and for all (read buffers and unread replies). */
#define SERVER_MAX_UID_BYTES	((size_t)64 << 20)
#define SERVER_MAX_BYTES	((size_t)512 << 20)
/* Unwritten pushed frames a connection may have before it is closed */
#define SERVER_MAX_PUSHED	((size_t)1 << 20)
/* server_take_fds: the most descriptors taken at once, and how often it looks */
#define SERVER_MAX_FDS		FDPASS_MAX
#define SERVER_FDS_POLL_MS	2

struct server_conn {
	uv_pipe_t	pipe;
	uv_timer_t	idle;
	struct server	*srv;
	uid_t		uid;
	gid_t		gid;
	pid_t		pid;
	gid_t		*groups;	/* SO_PEERGROUPS */
	int		ngroups;
	uint8_t		*buf;
	size_t		len, cap;
	size_t		queued;		/* replies handed to uv_write, not yet written: bytes */
	int		refused;	/* server_alloc_cb: why the buffer may not grow */
	int		closing;
	int		nclosed;
	const struct server_handler *h;	/* who answers it, */
	void		*harg;		/* with this */
	int64_t		pid_start;	/* pid's start time at accept (no SO_PEERPIDFD) */
	/* server_take_fds: frames no more; descriptors awaited until deadline */
	server_fds_cb	fds_cb;
	void		*fds_arg;
	int		fds_max;
	uint64_t	fds_deadline;	/* uv_now() */
	struct server_conn	*next, *prev;
};

struct server {
	uv_pipe_t	listen;
	const struct server_handler *h;	/* for new connections, */
	void		*harg;		/* with this */
	struct server_conn	*conns;
	char		path[PATH_MAX];
	uint64_t	warned_at;	/* last "too many connections", uv_now() */
	size_t		bytes;		/* every open connection's cap + queued */
	uint64_t	mem_warned_at;	/* last "holds too many bytes", uv_now() */
};

struct server_write {
	uv_write_t	req;
	struct server_conn	*c;
	uint8_t		*data;
	size_t		held;		/* what it costs: the buffer's capacity and this */
	int		close_after;
};

static void
server_conn_closed_cb(uv_handle_t *h)
{
	struct server_conn *c = h->data;

	if (++c->nclosed < 2)
		return;
	free(c->buf);
	free(c->groups);
	free(c);
}

static void
server_close(struct server_conn *c)
{
	server_fds_cb cb = c->fds_cb;

	if (c->closing)
		return;
	c->closing = 1;
	/* descriptors still awaited: none will come; its caller hears so once */
	if (cb != NULL) {
		c->fds_cb = NULL;
		cb(c->fds_arg, c, NULL, -1);
	}
	/* what it holds is freed in the close callback, but no longer counted */
	c->srv->bytes -= c->cap + c->queued;
	if (c->prev != NULL)
		c->prev->next = c->next;
	else
		c->srv->conns = c->next;
	if (c->next != NULL)
		c->next->prev = c->prev;
	if (c->h->closed != NULL)
		c->h->closed(c->harg, c);
	uv_close((uv_handle_t *)&c->pipe, server_conn_closed_cb);
	uv_close((uv_handle_t *)&c->idle, server_conn_closed_cb);
}

static void
server_written_cb(uv_write_t *req, int status)
{
	struct server_write *w = (struct server_write *)req;

	if (!w->c->closing) {
		w->c->queued -= w->held;
		w->c->srv->bytes -= w->held;
	}
	if (status < 0 || w->close_after)
		server_close(w->c);
	free(w->data);
	free(w);
}

/* Sends a frame; the buffer's data now belongs to the write. */
static void
server_send(struct server_conn *c, struct proto_buf *b, int close_after)
{
	struct server_write *w;
	uv_buf_t ub;

	if (c->closing || (w = calloc(1, sizeof(*w))) == NULL) {
		proto_buf_free(b);
		return;
	}
	w->c = c;
	w->data = b->data;
	w->held = b->cap + sizeof(*w);
	w->close_after = close_after;
	ub = uv_buf_init((char *)b->data, (unsigned)b->len);
	b->data = NULL;
	b->len = b->cap = 0;
	if (uv_write(&w->req, (uv_stream_t *)&c->pipe, &ub, 1, server_written_cb) != 0) {
		free(w->data);
		free(w);
		server_close(c);
		return;
	}
	c->queued += w->held;
	c->srv->bytes += w->held;
}

void
server_push(struct server_conn *c, struct proto_buf *b)
{
	/* a peer that does not read what it is pushed is let go */
	if (c->queued > SERVER_MAX_PUSHED) {
		proto_buf_free(b);
		server_close(c);
		return;
	}
	server_send(c, b, 0);
}

/*
 * A frame with n descriptors (SCM_RIGHTS on its bytes), written at once: only
 * when nothing is queued before it, so that it keeps its place.  The frame
 * is small (a socket's buffer takes it whole when empty).  0, or -1 (the
 * frame and fd not sent; the caller's fd stays the caller's).
 */
int
server_push_fd(struct server_conn *c, struct proto_buf *b, const int *sendfds, int n)
{
	union {
		struct cmsghdr	h;
		char		b[CMSG_SPACE(sizeof(int) * SERVER_MAX_PUSH_FDS)];
	} u;
	struct iovec iov;
	struct msghdr mh;
	struct cmsghdr *cm;
	uv_os_fd_t fd;
	ssize_t sent;
	int rc = -1;

	if (n < 1 || n > SERVER_MAX_PUSH_FDS || proto_end(b) == -1 || c->closing || c->queued > 0 ||
	    uv_stream_get_write_queue_size((uv_stream_t *)&c->pipe) > 0 ||
	    uv_fileno((uv_handle_t *)&c->pipe, &fd) != 0)
		goto out;
	memset(&mh, 0, sizeof(mh));
	memset(&u, 0, sizeof(u));
	iov.iov_base = b->data;
	iov.iov_len = b->len;
	mh.msg_iov = &iov;
	mh.msg_iovlen = 1;
	mh.msg_control = u.b;
	mh.msg_controllen = CMSG_SPACE(sizeof(int) * (size_t)n);
	cm = CMSG_FIRSTHDR(&mh);
	cm->cmsg_level = SOL_SOCKET;
	cm->cmsg_type = SCM_RIGHTS;
	cm->cmsg_len = CMSG_LEN(sizeof(int) * (size_t)n);
	memcpy(CMSG_DATA(cm), sendfds, sizeof(int) * (size_t)n);
	do
		sent = sendmsg(fd, &mh, MSG_NOSIGNAL | MSG_DONTWAIT);
	while (sent < 0 && errno == EINTR);
	if (sent == (ssize_t)b->len)
		rc = 0;
	else if (sent > 0)
		server_close(c);	/* a frame cut in two: the peer would read nonsense */
out:
	proto_buf_free(b);
	return rc;
}

static void
server_error(struct server_conn *c, const char *msg, int close_after)
{
	struct proto_buf b = { 0 };

	proto_begin(&b, MSG_ERROR);
	proto_put_str(&b, "error", msg);
	if (close_after)
		uv_read_stop((uv_stream_t *)&c->pipe);
	if (proto_end(&b) == -1) {
		proto_buf_free(&b);
		server_close(c);
		return;
	}
	server_send(c, &b, close_after);
}

void
server_push_error(struct server_conn *c, const char *msg)
{
	server_error(c, msg, 0);
}

static void
server_request(struct server_conn *c, int type, const uint8_t *body, uint32_t len)
{
	struct server_peer peer = { c->uid, c->gid, c->pid, c->groups, c->ngroups };
	struct proto_buf out = { 0 };
	struct proto_msg m;
	char err[1024];	/* ctl.h's r->err fits */
	int r;

	if (proto_decode(type, body, len, &m, err, sizeof(err)) == -1) {
		log_warnx("client pid %d uid %u: bad frame: %s", (int)c->pid, (unsigned)c->uid, err);
		server_error(c, err, 1);
		return;
	}
	err[0] = '\0';
	r = c->h->frame(c->harg, c, &peer, &m, &out, err, sizeof(err));
	if (r == SERVER_REPLY && out.len > 0)
		server_send(c, &out, 0);
	else {
		proto_buf_free(&out);
		if (r != SERVER_REPLY)
			server_error(c, err, r == SERVER_ERROR_CLOSE);
	}
	proto_msg_free(&m);
}

void
server_handoff(struct server_conn *c, const struct server_handler *h, void *arg)
{
	c->h = h;
	c->harg = arg;
	if (h->lasting)
		uv_timer_stop(&c->idle);
}

/* What uid's open connections hold: read buffers and unwritten replies. */
static size_t
server_uid_bytes(struct server *srv, uid_t uid)
{
	struct server_conn *c;
	size_t n = 0;

	for (c = srv->conns; c != NULL; c = c->next)
		if (c->uid == uid)
			n += c->cap + c->queued;
	return n;
}

enum { SERVER_FITS, SERVER_OVER_UID, SERVER_OVER_ALL, SERVER_OVER_FRAME };

/*
 * Whether c may hold more bytes: SERVER_FITS, or why not.  The sum over
 * the uid is taken only when everyone's total could put it over.
 */
static int
server_over(struct server_conn *c, size_t more)
{
	struct server *srv = c->srv;

	if (srv->bytes + more > SERVER_MAX_BYTES)
		return SERVER_OVER_ALL;
	if (srv->bytes + more > SERVER_MAX_UID_BYTES &&
	    server_uid_bytes(srv, c->uid) + more > SERVER_MAX_UID_BYTES)
		return SERVER_OVER_UID;
	return SERVER_FITS;
}

/* The error frame for a connection that may not hold more; it closes after it. */
static void
server_refuse(struct server_conn *c, int why)
{
	char msg[256];
	uint64_t now = uv_now(c->pipe.loop);

	if (why == SERVER_OVER_FRAME) {
		server_error(c, "frame too large", 1);
		return;
	}
	/* at most every 10 s, not once per connection of a flood */
	if (c->srv->mem_warned_at == 0 || now - c->srv->mem_warned_at >= 10000) {
		c->srv->mem_warned_at = now;
		log_warnx("uid %u: its connections hold %zu bytes, all clients %zu; closing those "
		    "that want more", (unsigned)c->uid, server_uid_bytes(c->srv, c->uid),
		    c->srv->bytes);
	}
	/* an error behind replies it does not read would never leave: close now */
	if (c->queued > 0) {
		server_close(c);
		return;
	}
	if (why == SERVER_OVER_UID)
		snprintf(msg, sizeof(msg), "your user's connections hold %zu MiB in nvqd (frames "
		    "not yet whole, replies not yet read), the most it keeps for one user; "
		    "close some and try again", SERVER_MAX_UID_BYTES >> 20);
	else
		snprintf(msg, sizeof(msg), "nvqd holds %zu MiB for its clients' connections, the "
		    "most it keeps; try again later", SERVER_MAX_BYTES >> 20);
	server_error(c, msg, 1);
}

/* Handles every whole frame in the buffer. */
static void
server_frames(struct server_conn *c)
{
	char err[256];
	uint32_t len;
	size_t used = 0;
	int type;

	while (!c->closing && c->fds_cb == NULL && c->len - used >= PROTO_HEADER) {
		if (proto_header(c->buf + used, &type, &len, err, sizeof(err)) == -1) {
			log_warnx("client pid %d uid %u: %s", (int)c->pid, (unsigned)c->uid, err);
			server_error(c, err, 1);
			c->len = 0;
			return;
		}
		if (c->len - used - PROTO_HEADER < len)
			break;
		/* no more replies for a uid that does not read those it has */
		if (c->srv->bytes > SERVER_MAX_UID_BYTES &&
		    server_uid_bytes(c->srv, c->uid) > SERVER_MAX_UID_BYTES) {
			server_refuse(c, SERVER_OVER_UID);
			c->len = 0;
			return;
		}
		server_request(c, type, c->buf + used + PROTO_HEADER, len);
		used += PROTO_HEADER + len;
	}
	memmove(c->buf, c->buf + used, c->len - used);
	c->len -= used;
	/* a large frame's buffer goes once it is handled */
	if (c->len == 0 && c->cap > SERVER_BUF_SMALL && !c->closing) {
		free(c->buf);
		c->buf = NULL;
		c->srv->bytes -= c->cap;
		c->cap = 0;
	}
}

static void
server_alloc_cb(uv_handle_t *h, size_t hint, uv_buf_t *b)
{
	struct server_conn *c = h->data;
	size_t want = c->len + (hint < 65536 ? hint : 65536);
	uint8_t *n;

	if (want > c->cap) {
		size_t cap = c->cap ? c->cap : 4096, most = PROTO_HEADER + PROTO_MAX_BODY + 65536;
		while (cap < want)
			cap *= 2;
		if (cap > most && want <= most)
			cap = most;	/* a whole frame of the largest size fits */
		if (cap > most)
			c->refused = SERVER_OVER_FRAME;
		else if (cap > SERVER_BUF_SMALL)
			c->refused = server_over(c, cap - c->cap);
		if (c->refused != SERVER_FITS || (n = realloc(c->buf, cap)) == NULL) {
			*b = uv_buf_init(NULL, 0);
			return;
		}
		c->srv->bytes += cap - c->cap;
		c->buf = n;
		c->cap = cap;
	}
	*b = uv_buf_init((char *)c->buf + c->len, (unsigned)(c->cap - c->len));
}

static void
server_idle_cb(uv_timer_t *t)
{
	struct server_conn *c = t->data;

	if (c->len > 0)
		server_error(c, "truncated frame: the rest never came", 1);
	else
		server_close(c);
}

static void
server_read_cb(uv_stream_t *s, ssize_t n, const uv_buf_t *b)
{
	struct server_conn *c = s->data;

	(void)b;
	if (n == UV_ENOBUFS && !c->closing) {
		uv_read_stop(s);
		server_refuse(c, c->refused != SERVER_FITS ? c->refused : SERVER_OVER_FRAME);
		return;
	}
	if (n < 0) {
		if (n == UV_EOF && c->len > 0 && !c->closing) {
			uv_read_stop(s);
			server_error(c, "truncated frame", 1);
			return;
		}
		server_close(c);
		return;
	}
	if (n == 0)
		return;
	c->len += (size_t)n;
	if (!c->h->lasting)
		uv_timer_start(&c->idle, server_idle_cb, SERVER_IDLE_MS, 0);
	server_frames(c);
}

/* How many open connections uid has (this one included). */
static int
server_count_uid(struct server *srv, uid_t uid)
{
	struct server_conn *c;
	int n = 0;

	for (c = srv->conns; c != NULL; c = c->next)
		n += c->uid == uid;
	return n;
}

#ifndef SO_PEERPIDFD
#define SO_PEERPIDFD	77	/* Linux 6.5 */
#endif

/*
 * Whether the kernel gives a peer's pidfd (SO_PEERPIDFD, Linux 6.5): asked
 * of the first connection whose peer is still there, then remembered.
 */
static int
server_pidfds(int fd)
{
	static int known = -1;
	socklen_t len = sizeof(int);
	int pidfd = -1;

	if (known != -1)
		return known;
	if (getsockopt(fd, SOL_SOCKET, SO_PEERPIDFD, &pidfd, &len) == 0 && pidfd >= 0) {
		close(pidfd);
		known = 1;
	} else if (errno == ENOPROTOOPT || errno == EINVAL)
		known = 0;
	return known == 1;
}

int
server_peer_pidfd(struct server_conn *c)
{
	socklen_t len = sizeof(int);
	uv_os_fd_t fd;
	int pidfd = -1;

	if (uv_fileno((uv_handle_t *)&c->pipe, &fd) != 0) {
		errno = EBADF;
		return -1;
	}
	if (getsockopt(fd, SOL_SOCKET, SO_PEERPIDFD, &pidfd, &len) == 0 && pidfd >= 0)
		return pidfd;
	if (errno != ENOPROTOOPT && errno != EINVAL)
		return -1;
	if ((pidfd = (int)syscall(SYS_pidfd_open, c->pid, 0)) == -1)
		return -1;
	if (c->pid_start < 0 || proc_start_time(c->pid) != c->pid_start) {
		close(pidfd);
		errno = ESRCH;
		return -1;
	}
	return pidfd;
}

/* The byte that carries the descriptors: n, 0 not yet, -1 bad (fdpass.h). */
static int
server_recv_fds(struct server_conn *c, int *fds)
{
	int fd, n, i;

	if (uv_fileno((uv_handle_t *)&c->pipe, &fd) != 0)
		return -1;
	n = fdpass_recv(fd, fds, c->fds_max);
	/* a frame sent before them: not what was agreed */
	if (n > 0 && c->len > 0) {
		for (i = 0; i < n; i++)
			close(fds[i]);
		return -1;
	}
	return n;
}

static void
server_fds_timer_cb(uv_timer_t *t)
{
	struct server_conn *c = t->data;
	int fds[SERVER_MAX_FDS], n = server_recv_fds(c, fds);
	server_fds_cb cb = c->fds_cb;

	if (cb == NULL)
		return;
	if (n == 0 && uv_now(t->loop) < c->fds_deadline) {
		uv_timer_start(&c->idle, server_fds_timer_cb, SERVER_FDS_POLL_MS, 0);
		return;
	}
	c->fds_cb = NULL;	/* once */
	cb(c->fds_arg, c, n == 0 ? NULL : fds, n == 0 ? -1 : n);
}

int
server_take_fds(struct server_conn *c, int max, uint64_t ms, server_fds_cb cb, void *arg)
{
	if (max < 1 || max > SERVER_MAX_FDS || c->fds_cb != NULL || c->closing)
		return -1;
	uv_read_stop((uv_stream_t *)&c->pipe);
	c->fds_cb = cb;
	c->fds_arg = arg;
	c->fds_max = max;
	c->fds_deadline = uv_now(c->pipe.loop) + ms;
	uv_timer_start(&c->idle, server_fds_timer_cb, SERVER_FDS_POLL_MS, 0);
	return 0;
}

void
server_reply_close(struct server_conn *c, struct proto_buf *b)
{
	if (proto_end(b) == -1) {
		proto_buf_free(b);
		server_close(c);
		return;
	}
	server_send(c, b, 1);
}

void
server_end(struct server_conn *c)
{
	server_close(c);
}

static void
server_accept_cb(uv_stream_t *l, int status)
{
	struct server *srv = l->data;
	struct ucred cred;
	socklen_t len = sizeof(cred);
	struct server_conn *c;
	uv_os_fd_t fd;
	int n;

	if (status < 0) {
		log_warnx("accept: %s", uv_strerror(status));
		return;
	}
	if ((c = calloc(1, sizeof(*c))) == NULL)
		return;
	c->srv = srv;
	c->h = srv->h;
	c->harg = srv->harg;
	uv_pipe_init(l->loop, &c->pipe, 0);
	uv_timer_init(l->loop, &c->idle);
	c->pipe.data = c;
	c->idle.data = c;
	c->next = srv->conns;
	if (srv->conns != NULL)
		srv->conns->prev = c;
	srv->conns = c;
	if (uv_accept(l, (uv_stream_t *)&c->pipe) != 0 ||
	    uv_fileno((uv_handle_t *)&c->pipe, &fd) != 0 ||
	    getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &cred, &len) == -1) {
		log_warn("accept: cannot identify the client");
		server_close(c);
		return;
	}
	c->uid = cred.uid;
	c->gid = cred.gid;
	c->pid = cred.pid;
	/* for server_peer_pidfd's fallback only: a read of /proc per connection */
	c->pid_start = server_pidfds(fd) ? -1 : proc_start_time(cred.pid);
	if ((n = server_count_uid(srv, cred.uid)) > SERVER_MAX_PER_UID) {
		char msg[128];

		/* at most every 10 s, not once per connection of a flood */
		if (srv->warned_at == 0 || uv_now(l->loop) - srv->warned_at >= 10000) {
			srv->warned_at = uv_now(l->loop);
			log_warnx("uid %u has %d connections open; refusing more",
			    (unsigned)cred.uid, SERVER_MAX_PER_UID);
		}
		snprintf(msg, sizeof(msg), "too many connections from your user (at most %d); "
		    "close some and try again", SERVER_MAX_PER_UID);
		server_error(c, msg, 1);
		return;
	}
	/* the caller's supplementary groups, which its jobs will run with */
	len = 0;
	if (getsockopt(fd, SOL_SOCKET, SO_PEERGROUPS, NULL, &len) == 0)
		c->groups = calloc(1, sizeof(gid_t));	/* it has none */
	else if (errno == ERANGE && len > 0 && (c->groups = malloc(len)) != NULL) {
		if (getsockopt(fd, SOL_SOCKET, SO_PEERGROUPS, c->groups, &len) == 0)
			c->ngroups = (int)(len / sizeof(gid_t));
		else {
			free(c->groups);	/* unknown: the user database decides */
			c->groups = NULL;
		}
	}
	uv_timer_start(&c->idle, server_idle_cb, SERVER_IDLE_MS, 0);
	uv_read_start((uv_stream_t *)&c->pipe, server_alloc_cb, server_read_cb);
}

/*
 * Removes a socket file left by an nvqd that died; refuses a live one.
 * A connect that succeeds may also reach the listening socket of an nvqd
 * killed a moment ago, still open in a child it was spawning (between
 * posix_spawn's clone and exec, where close-on-exec has not acted yet):
 * the connection's peer credentials are those of the process that called
 * listen(), so one whose listener is gone is stale at once; else only one
 * that still takes connects for a second is another nvqd.  Non-blocking:
 * a full backlog (EAGAIN) is something listening, not a wait.
 */
static void
server_stale(const char *path)
{
	struct sockaddr_un sa;
	struct ucred cred;
	socklen_t len;
	int fd, tries, up;

	if (access(path, F_OK) == -1)
		return;
	memset(&sa, 0, sizeof(sa));
	sa.sun_family = AF_UNIX;
	snprintf(sa.sun_path, sizeof(sa.sun_path), "%s", path);
	for (tries = 0; tries < 20; tries++) {
		if ((fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0)) == -1)
			log_fatal("socket");
		up = connect(fd, (struct sockaddr *)&sa, sizeof(sa)) == 0 || errno == EAGAIN;
		len = sizeof(cred);
		if (up && getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &cred, &len) == 0 &&
		    cred.pid > 0 && kill(cred.pid, 0) == -1 && errno == ESRCH)
			up = 0;		/* its listener is gone: a child holds it a moment */
		close(fd);
		if (!up)
			break;
		if (tries == 19)
			log_fatalx("%s: another nvqd is listening there", path);
		usleep(50000);
	}
	if (unlink(path) == -1)
		log_fatal("%s: cannot remove the stale socket", path);
}

struct server *
server_start(uv_loop_t *loop, const char *path, const struct server_handler *h, void *arg)
{
	struct server *srv;
	char dir[PATH_MAX], *slash;
	int r, root = geteuid() == 0;

	if (strlen(path) >= sizeof(((struct sockaddr_un *)0)->sun_path))
		log_fatalx("%s: socket path too long", path);
	snprintf(dir, sizeof(dir), "%s", path);
	if ((slash = strrchr(dir, '/')) != NULL && slash != dir) {
		*slash = '\0';
		if (mkdir(dir, root ? 0755 : 0700) == -1 && errno != EEXIST)
			log_fatal("%s", dir);
	}
	server_stale(path);
	if ((srv = calloc(1, sizeof(*srv))) == NULL)
		log_fatal("calloc");
	srv->h = h;
	srv->harg = arg;
	snprintf(srv->path, sizeof(srv->path), "%s", path);
	uv_pipe_init(loop, &srv->listen, 0);
	srv->listen.data = srv;
	if ((r = uv_pipe_bind(&srv->listen, path)) != 0)
		log_fatalx("%s: %s", path, uv_strerror(r));
	if (chmod(path, root ? 0666 : 0600) == -1)
		log_fatal("%s", path);
	if ((r = uv_listen((uv_stream_t *)&srv->listen, 1024, server_accept_cb)) != 0)
		log_fatalx("%s: listen: %s", path, uv_strerror(r));
	log_info("listening on %s", path);
	return srv;
}

static void
server_listen_closed_cb(uv_handle_t *h)
{
	free(h->data);
}

void
server_stop(struct server *srv)
{
	unlink(srv->path);
	while (srv->conns != NULL)
		server_close(srv->conns);
	uv_close((uv_handle_t *)&srv->listen, server_listen_closed_cb);
}
