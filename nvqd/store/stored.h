/*
 * stored.h: what jobs share in nvqd's files (an array's one environment and
 * command, a restart's one environment), counted once for all of them, for
 * [limits] max_stored.
 *
 * The engine counts each user's bytes as jobs come and go (engine.h); a job
 * that shares adds its share here under the key it is stored under (its
 * array's id, or a restart's key below 0), and is told what its user now
 * keeps more, or, when the last job of a key goes, keeps less.  An open
 * addressing table by key, at most half full: an add or a drop is a probe
 * or two, however many arrays wait.  Pure bookkeeping: no I/O, no clock.
 */
#ifndef NVQ_STORED_H
#define NVQ_STORED_H

#include <stddef.h>
#include <stdint.h>

struct stored_share {
	int64_t		key;		/* 0: an empty slot */
	uint64_t	bytes;		/* counted once for all its jobs */
	int		jobs;		/* active */
};

struct stored {
	struct stored_share *slot;	/* NULL until the first add */
	size_t		cap;		/* a power of two */
	size_t		n;
};

/*
 * A job sharing bytes under key (not 0) becomes active: *more is what its
 * user keeps more (bytes for the first job of key; a job that brings more
 * than those before it, e.g. a task restarted alone, raises the count to
 * its bytes).  0, or -1 out of memory (*more 0, nothing counted).
 */
int		stored_add(struct stored *, int64_t key, uint64_t bytes, uint64_t *more);
/* A job of key is no longer active: what its user keeps less (0 but for the last). */
uint64_t	stored_drop(struct stored *, int64_t key);
void		stored_free(struct stored *);

#endif
