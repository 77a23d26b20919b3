/*
 * web.h: the dashboard and /metrics, served by nvqd on [web] listen.
 *
 * HTTP is libmicrohttpd's, in its external-epoll mode: no thread of its
 * own; its epoll descriptor is watched by the loop (uv_poll) and its
 * timeouts by a timer, so that the handlers run on the loop, where the
 * engine may be read.  Read-only: GET and HEAD.  The page, its script and
 * its style are in the binary (web/, embedded at build time); nothing is
 * fetched from elsewhere.
 *
 *   /               the dashboard
 *   /api/state      GPUs, counts and jobs now (JSON)
 *   /api/history    what was sampled every 5 s for an hour, GPU-hours per
 *                   user over 7 days, queue waits over a day (JSON)
 *   /metrics        Prometheus text format
 *
 * What a request costs the loop, whatever the history: /metrics reads the
 * counters schema/018_metrics.sql's triggers keep; /api/state its counts
 * from there, the running and suspended jobs nvqd holds and the first
 * pending ones; /api/history the samples in memory and sums that
 * websum.c computes off the loop at most every 30 s.  Each client address
 * may ask for those [web] rate times a second (429 past it, webrate.c)
 * and hold [web] per_address connections; a connection idle, or whose
 * request's head has not come, for [web] timeout is closed.
 *
 * Who sees what: ?token=T, the token `nvq web-token` gives its caller
 * (store_web_token), makes the viewer that user: user names are shown,
 * and the names and commands of the viewer's own jobs (root's token: of
 * all).  Without one, neither.  /metrics says no names nor commands.
 */
#ifndef NVQ_WEB_H
#define NVQ_WEB_H

struct engine;

/* Serves on e->cfg.web_listen if set: 0, or -1 with err. */
int	web_start(struct engine *, char *err, size_t errlen);
void	web_stop(void);

#endif
