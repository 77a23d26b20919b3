/*
 * websum.h: the dashboard's sums of the history, GPU-hours per user over 7
 * days and the queue waits of a day (store_stats), computed on libuv's
 * thread pool with a read-only connection of their own (storework.h), so
 * that the loop never waits for them: each costs the runs of its window,
 * hundreds of thousands of them on a busy server.  One computation at a time; web.c
 * asks for one at most every WEB_HISTORY_MS and serves the last result
 * meanwhile.  The worker touches nothing of nvqd's but its struct websum
 * (its result, its connection) while busy; the loop reads them only once
 * done_cb has been called.
 */
#ifndef NVQ_WEBSUM_H
#define NVQ_WEBSUM_H

#include <uv.h>

#include "storework.h"

#define WEBSUM_WAIT	8		/* columns of store_stats' STORE_STATS_WAIT, at most */

struct websum_user {
	char		user[64];
	double		gpu_hours;
};

struct websum_result {
	struct websum_user *users;	/* by GPU-hours, most first */
	int		nusers;
	char		wait_key[WEBSUM_WAIT][16];	/* "started", "p50", ... */
	double		wait[WEBSUM_WAIT];
	int		nwait;
};

struct websum;
/* On the loop: the result (the callee's to keep or free), or failed 1 with none. */
typedef void	(*websum_cb)(struct websum *, struct websum_result *, int failed);

struct websum {
	struct storework sw;		/* its read on the pool */
	double		now;		/* the time the sums end at */
	struct websum_result next;	/* being made */
	int		busy;		/* queued or running */
	websum_cb	cb;
};

void	websum_init(struct websum *, const char *path);
/* Starts a computation of the sums up to now: 0, or -1 (one is busy, or it cannot start). */
int	websum_run(uv_loop_t *, struct websum *, double now, websum_cb);
void	websum_result_free(struct websum_result *);
/* Closes the connection; only while not busy. */
void	websum_close(struct websum *);

#endif
