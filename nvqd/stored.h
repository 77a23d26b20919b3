/*
 * stored.h: the bytes each user's active jobs keep in nvqd's files (their
 * environments, commands, paths), for [limits] max_stored.
 *
 * Counted as jobs come and go, never by a scan of the queue: a submit
 * costs a lookup however many jobs wait.  What an array's tasks share (one
 * environment, one command) is counted once, while any of its tasks is
 * active: arrays are kept in a hash table by id, with their active tasks'
 * count.  Pure bookkeeping: no I/O, no clock; the engine calls it.
 */
#ifndef NVQ_STORED_H
#define NVQ_STORED_H

#include <stddef.h>
#include <stdint.h>

struct stored_array;

struct stored {
	struct {
		uint32_t	uid;
		uint64_t	bytes;
	}		*users;		/* few users: a short array */
	int		nusers;
	struct stored_array **b;	/* arrays by id; NULL until the first */
	size_t		nb, n;
};

/*
 * A job of uid becomes active, keeping own bytes of its own and, if array
 * is not 0, a share of the shared bytes stored under that key (an array's
 * environment and command, or one restart's environment), counted for the
 * first of its jobs only.  0, or -1 out of memory (then it goes uncounted).
 */
int		stored_add(struct stored *, uint32_t uid, uint64_t own, int64_t array,
		    uint64_t shared);
/* That job is no longer active: what stored_add counted, given back. */
void		stored_drop(struct stored *, uint32_t uid, uint64_t own, int64_t array);
/* What uid's active jobs keep now. */
uint64_t	stored_bytes(const struct stored *, uint32_t uid);
void		stored_free(struct stored *);

#endif
