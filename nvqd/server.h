/*
 * server.h: nvqd's Unix socket.  Moves frames between clients and
 * ctl_dispatch(); identifies every caller with SO_PEERCRED.
 */
#ifndef NVQ_SERVER_H
#define NVQ_SERVER_H

#include <uv.h>

#include "engine.h"
#include "proto.h"

struct server;

/* Listens on path (made 0666 as root, 0600 otherwise); fatal on failure. */
struct server	*server_start(struct engine *, const char *path);
/* Stops listening and closes every connection; frees itself when closed. */
void		 server_stop(struct server *);

/*
 * For the module that answers a connection (conn is the server's, as
 * handed to ctl_dispatch or hooks_frame): a frame to it, unasked (b's
 * bytes are taken); a pidfd of the process that connected (the caller's to
 * close; before Linux 6.5 one of the process with the peer's pid, if it is
 * the one that was there at accept), or -1 with errno; and closing it.
 */
void		 server_push(void *conn, struct proto_buf *b);
int		 server_peer_pidfd(void *conn);
void		 server_end(void *conn);

#endif
