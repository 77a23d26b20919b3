/*
 * statq.h: nvq stats off the loop.  Its sums cost the runs of their window
 * (the whole history, with --since long ago: a million rows take seconds),
 * so ctl.c hands each request here and replies later: they are read one at
 * a time on libuv's thread pool with a read-only connection of their own
 * (storework.h) and answered in the order they came.  At most STATQ_MAX
 * wait, STATQ_MAX_UID of them one user's; more are refused at once, so a
 * user looping on nvq stats from many clients waits for their own answers
 * and costs nvqd one thread of the pool, never its loop.  A client that
 * hangs up meanwhile is forgotten.
 */
#ifndef NVQ_STATQ_H
#define NVQ_STATQ_H

#include <stdint.h>
#include <uv.h>

#include "server.h"

#define STATQ_MAX	64	/* requests waiting or being read, all users' */
#define STATQ_MAX_UID	8	/* of them, one user's */

/* Once, at start: the loop and the database's path. */
void	statq_init(uv_loop_t *, const char *database);
/*
 * Queues conn's nvq stats of the history ended at or after since (user:
 * one user's, NULL: everyone's; borrowed), its reply's clock now.  0, or
 * -1 with a sentence in err (too many wait, a bad user name).
 */
int	statq_add(struct server_conn *, uint32_t uid, double since, const char *user,
	    double now, char *err, size_t errlen);
/* conn closed: its requests get no reply. */
void	statq_forget(struct server_conn *);
/* nvqd stops: nothing more is read; the connection closes once the read in flight is done. */
void	statq_stop(void);

#endif
