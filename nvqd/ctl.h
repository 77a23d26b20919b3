/*
 * ctl.h: what nvqd does for each request, and who may ask for it.
 * ctl_handler answers every new connection (server.h): a request becomes a
 * ctl_req for ctl_dispatch(), whose handler writes its reply fields into
 * the reply buffer, or an error; a hook's hello goes to hooks.c, which
 * takes the connection.
 */
#ifndef NVQ_CTL_H
#define NVQ_CTL_H

#include <sys/types.h>

#include "engine.h"
#include "proto.h"
#include "server.h"

struct ctl_req {
	struct engine		*e;
	const struct proto_msg	*msg;
	uid_t			uid;	/* from SO_PEERCRED, never from the message */
	gid_t			gid;
	pid_t			pid;
	const gid_t		*groups;	/* SO_PEERGROUPS; NULL if unknown */
	int			ngroups;
	struct server_conn	*conn;	/* the request's connection */
	int			deferred; /* the handler replies later (submit.h) */
	int64_t			id;	/* not 0: the job, instead of the message's "id" */
	char			err[1024];
};

/*
 * Handles req; returns 0 with a MSG_OK reply in out (empty if the handler
 * set deferred: the reply comes later), or -1 with req->err set.
 */
int	ctl_dispatch(struct ctl_req *, struct proto_buf *out);
/* The handler of new connections; its arg is the engine. */
extern const struct server_handler ctl_handler;
/* Forgets the user names it remembers (on SIGHUP). */
void	ctl_forget_names(void);

#endif
