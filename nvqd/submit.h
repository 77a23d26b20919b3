/*
 * submit.h: the submits of one loop turn, stored in one pair of commits.
 *
 * A submit's reply carries its id, which it has only once it is on disk.
 * Each commit costs a flush (two per batch: the environments, then the
 * jobs, store.h), so when many clients submit at once, the requests read in
 * one turn of the loop wait for the end of that turn (a uv_check handle)
 * and are stored together; then each goes to the engine and gets its reply,
 * and an error, if the store fails, goes to each.  A client that hangs up
 * meanwhile is forgotten, not its job.  ctl.c validates a request before it
 * comes here; nothing here calls back into ctl.c.
 */
#ifndef NVQ_SUBMIT_H
#define NVQ_SUBMIT_H

#include <stdint.h>
#include <uv.h>

#include "engine.h"
#include "server.h"
#include "store.h"

/* Once, at start. */
void	submit_init(uv_loop_t *, struct engine *);
/*
 * The tasks of an array (--array, --stdin), all like the job given beside
 * it but for their index and, with --stdin, their command (argv[k] of
 * argv_len[k] bytes, shown as cmd[k]; NULL: the job's own).
 */
struct submit_array {
	int		n;
	const int64_t	*index;
	int		limit;		/* tasks at once; 0: any */
	const char *const *argv;
	const int	*argv_len;
	const char *const *cmd;
};

/*
 * Queues j (copied), or the tasks of arr (NULL: one job) made from it, for
 * conn's one reply (the id; for an array, its first task's, which is the
 * array's, and the count, and note if not NULL: a sentence for the user),
 * with its --after ids; 0, or -1 if out of memory (nothing queued).
 */
int	submit_queue(struct server_conn *conn, const struct store_job_new *j,
	    const int64_t *after, int nafter, const struct submit_array *arr,
	    const char *note);
/* How many of uid's submits wait for the end of the turn ([limits] max_pending). */
int	submit_queued(uint32_t uid);
/*
 * The bytes j (or arr's tasks made from it) will keep in nvqd's files
 * ([limits] max_stored): of their own, returned, and shared by arr's tasks,
 * into *shared (0 for one job).
 */
uint64_t submit_bytes(const struct store_job_new *j, const struct submit_array *arr,
	    uint64_t *shared);
/* What uid's submits waiting for the end of the turn will keep, likewise. */
uint64_t submit_queued_bytes(uint32_t uid);
/* conn closed: its job is still stored, with no one to tell. */
void	submit_forget(struct server_conn *conn);
/* Stores what waits, then closes the handle (nvqd is stopping). */
void	submit_stop(void);

#endif
