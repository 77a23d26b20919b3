/*
 * ctl.h: what nvqd does for each request, and who may ask for it.
 * ctl_handler answers every new connection (server.h): a request becomes a
 * ctl_req for ctl_dispatch(), which finds its row in ctl.c's table, checks
 * who sends it and the job it names (ctl_check.h), expands an array into
 * its tasks, and calls the row's handler (ctl_jobs.c, ctl_control.c,
 * ctl_info.c), which writes its reply fields into the reply buffer, or an
 * error; a hook's hello goes to hooks.c, which takes the connection.
 */
#ifndef NVQ_CTL_H
#define NVQ_CTL_H

#include <sys/types.h>

#include "engine.h"
#include "proto.h"
#include "server.h"

struct ctl_rule;

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
	/* set by ctl_dispatch before the handler runs */
	int			admin;	/* root, or of [security] admin_group */
	const struct ctl_rule	*rule;	/* who may send it (ctl_check.h) */
	struct job		*job;	/* the active job it names (CTL_JOB rows), */
	int			slurm;	/* or 1: a job Slurm runs (CTL_SLURM rows) */
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
