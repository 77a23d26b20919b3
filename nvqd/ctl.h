/*
 * ctl.h: what nvqd does for each request, and who may ask for it.
 * The server decodes a frame into a ctl_req and calls ctl_dispatch(); the
 * handler writes its reply fields into the reply buffer, or an error.
 */
#ifndef NVQ_CTL_H
#define NVQ_CTL_H

#include <sys/types.h>

#include "engine.h"
#include "proto.h"

struct ctl_req {
	struct engine		*e;
	const struct proto_msg	*msg;
	uid_t			uid;	/* from SO_PEERCRED, never from the message */
	gid_t			gid;
	pid_t			pid;
	const gid_t		*groups;	/* SO_PEERGROUPS; NULL if unknown */
	int			ngroups;
	char			err[512];
};

/* Handles req; returns 0 with a MSG_OK reply in out, or -1 with req->err set. */
int	ctl_dispatch(struct ctl_req *, struct proto_buf *out);
/* Forgets the user names it remembers (on SIGHUP). */
void	ctl_forget_names(void);

#endif
