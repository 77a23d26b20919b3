/*
 * checkpoint.h: WAL checkpoints of nvqd's databases on a thread of their
 * own, so that the loop never waits for one.
 *
 * SQLite copies its write-ahead log back into the database file every
 * thousand pages or so, and syncs both files while it does: done by the
 * committing connection (its auto-checkpoint), that stalled nvqd's loop,
 * and added to its flushes, every few dozen jobs.  Here the loop's
 * connection has no auto-checkpoint; store.c's WAL hook tells this module
 * when a database's log has grown past CHECKPOINT_PAGES, and a thread with
 * a connection of its own (to the database and the private one attached,
 * as the loop's) checkpoints it PASSIVE: as far as readers allow, never
 * waiting for them or for the loop's writes.  The thread touches nothing
 * of nvqd's but what is here, under the module's mutex; no libuv.
 * Functions return 0 or -1.
 */
#ifndef NVQ_CHECKPOINT_H
#define NVQ_CHECKPOINT_H

#include <stddef.h>

#define CHECKPOINT_PAGES	1000	/* SQLite's own auto-checkpoint's default */

/*
 * What to checkpoint.  PRIVATE_TRUNCATE: the private database once its
 * emptied pages were given back (store.c's incremental vacuum), whole and
 * its log cut to nothing, so that the files shrink at once; it waits for
 * readers and writers (a second at most), the loop's next write to the
 * private database waits for it.
 */
enum { CHECKPOINT_MAIN = 1, CHECKPOINT_PRIVATE = 2, CHECKPOINT_PRIVATE_TRUNCATE = 4 };

struct checkpoint;

/*
 * Opens path (attaching private_path as "private") on a new thread's
 * connection and starts the thread; NULL with a sentence in err.
 */
struct checkpoint *checkpoint_start(const char *path, const char *private_path, char *err,
		    size_t errlen);
/* Asks for a checkpoint of CHECKPOINT_MAIN and/or CHECKPOINT_PRIVATE; never blocks on one. */
void		checkpoint_kick(struct checkpoint *, int which);
/* Stops and joins the thread and closes its connection; NULL is nothing. */
void		checkpoint_stop(struct checkpoint *);

#endif
