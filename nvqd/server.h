/*
 * server.h: nvqd's Unix socket.  Moves frames between clients and
 * ctl_dispatch(); identifies every caller with SO_PEERCRED.
 */
#ifndef NVQ_SERVER_H
#define NVQ_SERVER_H

#include <uv.h>

#include "engine.h"

struct server;

/* Listens on path (made 0666 as root, 0600 otherwise); fatal on failure. */
struct server	*server_start(struct engine *, const char *path);
/* Stops listening and closes every connection; frees itself when closed. */
void		 server_stop(struct server *);

#endif
