/*
 * server.h: nvqd's Unix socket.  It moves frames and knows nothing of what
 * they mean: every connection has a handler, which gets each decoded frame
 * with the caller's identity from the socket (SO_PEERCRED), never from the
 * frame.  A new connection gets the handler given to server_start (ctl.c's
 * requests); the handler may hand the connection to another (hooks.c takes
 * a hook's connection at its hello) for the rest of its life.
 */
#ifndef NVQ_SERVER_H
#define NVQ_SERVER_H

#include <stddef.h>
#include <sys/types.h>
#include <uv.h>

#include "proto.h"

struct server;
struct server_conn;		/* opaque: a connection, valid until its handler's closed */

/* Who is at the other end, from the socket. */
struct server_peer {
	uid_t		uid;
	gid_t		gid;
	pid_t		pid;
	const gid_t	*groups;	/* SO_PEERGROUPS; NULL if unknown */
	int		ngroups;
};

/* What a handler's frame function returns. */
enum {
	SERVER_REPLY = 0,		/* out is sent, unless it is empty */
	SERVER_ERROR = -1,		/* err is sent as a MSG_ERROR */
	SERVER_ERROR_CLOSE = -2		/* err is sent, then the connection closes */
};

struct server_handler {
	int	(*frame)(void *arg, struct server_conn *, const struct server_peer *,
		    const struct proto_msg *, struct proto_buf *out, char *err, size_t errlen);
	/* The connection closed (either end); NULL: nothing to do. */
	void	(*closed)(void *arg, struct server_conn *);
	int	lasting;		/* no idle timeout: a job's link to nvqd */
};

/*
 * Listens on path (made 0666 as root, 0600 otherwise); new connections go
 * to h with arg.  Fatal on failure.
 */
struct server	*server_start(uv_loop_t *, const char *path, const struct server_handler *h,
		    void *arg);
/* Stops listening and closes every connection; frees itself when closed. */
void		 server_stop(struct server *);
/* From the next frame on, and for its close, conn is h's with arg. */
void		 server_handoff(struct server_conn *, const struct server_handler *h, void *arg);
/* A frame to conn, unasked (b's bytes are taken). */
void		 server_push(struct server_conn *, struct proto_buf *b);
/* An error reply to conn, later than its request (a deferred reply); conn stays open. */
void		 server_push_error(struct server_conn *, const char *msg);
/*
 * A small frame with n descriptors (1 to SERVER_MAX_PUSH_FDS, the caller's
 * still), sent now if nothing is queued: 0, or -1 (not sent; b freed either way).
 */
#define SERVER_MAX_PUSH_FDS	17	/* a job's 16 GPUs' lc/be pages, and the live page */
int		 server_push_fd(struct server_conn *, struct proto_buf *b, const int *fds, int n);
/*
 * A pidfd of the process that connected (the caller's to close), or -1
 * with errno.  Before Linux 6.5, one of the process with the peer's pid,
 * if it is the one that was there at accept.
 */
int		 server_peer_pidfd(struct server_conn *);
/* Closes conn; its handler's closed follows. */
void		 server_end(struct server_conn *);
/*
 * Gets file descriptors from conn (nvq run's terminal): conn reads no more
 * frames, and waits up to ms for one byte carrying 1 to max descriptors
 * (SCM_RIGHTS; close-on-exec), sent once the reply to the frame being
 * handled was read.  cb gets them (n, the callee's to close) or NULL and -1
 * (none in time, more than max, anything else with them, a frame before);
 * it must end conn: server_reply_close or server_end.  0, or -1 if conn
 * cannot (max over 8, taking already).
 */
typedef void	(*server_fds_cb)(void *arg, struct server_conn *, int *fds, int n);
int		 server_take_fds(struct server_conn *, int max, uint64_t ms, server_fds_cb,
		    void *arg);
/* A last frame to conn (b's bytes are taken), then it closes. */
void		 server_reply_close(struct server_conn *, struct proto_buf *b);

#endif
