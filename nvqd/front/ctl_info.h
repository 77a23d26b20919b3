/*
 * ctl_info.h: the handlers of the requests that show what nvqd knows
 * (ctl_info.c), for ctl.c's table; anyone may send them.  Each returns 0
 * or -1 with req->err set.
 */
#ifndef NVQ_CTL_INFO_H
#define NVQ_CTL_INFO_H

#include "ctl.h"

/* nvq list: a page of the active jobs (or all, with "all"), filtered. */
int	ctl_info_list(struct ctl_req *, struct proto_buf *);
/* nvq history: a page of the finished jobs, filtered. */
int	ctl_info_history(struct ctl_req *, struct proto_buf *);
/* nvq show: one job, its runs, events and switches. */
int	ctl_info_show(struct ctl_req *, struct proto_buf *);
/* nvq gpus: each GPU, its mode, budget, use and jobs. */
int	ctl_info_gpus(struct ctl_req *, struct proto_buf *);
/* nvq shares: every user's recent GPU use and the priority it earns. */
int	ctl_info_shares(struct ctl_req *, struct proto_buf *);
/* nvq stats: answered later, off the loop (statq.h). */
int	ctl_info_stats(struct ctl_req *, struct proto_buf *);
/* nvq top's watch: a frame on this connection after each change (watch.h). */
int	ctl_info_watch(struct ctl_req *, struct proto_buf *);
/* nvq web-token: the caller's link to the dashboard. */
int	ctl_info_web_token(struct ctl_req *, struct proto_buf *);
/* nvq ping: nvqd's protocol version, the caller's uid, the database. */
int	ctl_info_ping(struct ctl_req *, struct proto_buf *);

#endif
