/*
 * storework.h: a read of the database on libuv's thread pool, with a
 * read-only connection of its own (store_open_reader, opened on first use),
 * so that the loop never waits for a query that costs what the history
 * holds.  One read at a time per struct storework: its owner queues what
 * comes meanwhile (websum.c for the dashboard's sums, statq.c for nvq
 * stats).  While busy, the worker touches nothing of nvqd's but what its fn
 * is given; the loop reads the result only once cb has been called.
 */
#ifndef NVQ_STOREWORK_H
#define NVQ_STOREWORK_H

#include <limits.h>
#include <uv.h>

#include "store.h"

struct storework;
/* On a thread of the pool, with the reader: 0, or -1 (failed). */
typedef int	(*storework_fn)(struct store *rd, void *arg);
/* On the loop, once fn is done: failed 1 if it or the connection failed. */
typedef void	(*storework_cb)(struct storework *, void *arg, int failed);

struct storework {
	uv_work_t	work;
	char		path[PATH_MAX];	/* the database */
	struct store	*rd;		/* the worker's, opened on first use */
	storework_fn	fn;
	storework_cb	cb;
	void		*arg;
	int		failed;
	int		busy;		/* queued or running */
};

void	storework_init(struct storework *, const char *path);
/* Runs fn(reader, arg) on the pool, then cb on the loop: 0, or -1 (busy, or cannot start). */
int	storework_run(uv_loop_t *, struct storework *, storework_fn, storework_cb, void *arg);
/* Closes the connection; only while not busy. */
void	storework_close(struct storework *);

#endif
