/*
 * hookmsg.h: what nvqd takes from a hook's hello and reports, checked.
 *
 * A hook runs inside the user's process, so every figure in its frames is
 * a claim: the parsers here check the fields' kinds and ranges, and
 * hookmsg_bound() caps a claim by what the job may hold, so that a process
 * that reports 2^62 bytes cannot make its job look unsuspendable or fill a
 * GPU in nvq gpus.  Pure: no libuv, no I/O (tests/fuzz/fuzz_hook.c runs it
 * on arbitrary frames).  Functions return 0 (or a count) or -1 with a
 * sentence in err.
 */
#ifndef NVQ_HOOKMSG_H
#define NVQ_HOOKMSG_H

#include <stddef.h>
#include <stdint.h>

#include "proto.h"

#define HOOKMSG_MAX_ROWS	64	/* GPUs one report may name */
#define HOOKMSG_MAX_COMMS	64	/* communicators one cut report may count (CUT_MAX_COMMS) */

struct hookmsg_hello {
	int64_t		job;
	int64_t		pid;		/* what the process says it is; 0: not said */
	int		cut;		/* it stops at a cut (MSG_HOOK_CUT): "cut" 1 */
	int		lcbe;		/* it takes the lc/be page: "version" 4 on */
	int		live;		/* and the live page: 5 on */
};

/* A MSG_HOOK_CUT: a process's NCCL launches per communicator at a revoke. */
struct hookmsg_cut {
	int64_t		seq;		/* the revoke's, > 0 */
	int		progress;	/* on its way to the targets, not the first report */
	int		n;		/* communicators */
	int64_t		count[HOOKMSG_MAX_COMMS];	/* each 0 or more */
};

struct hookmsg_row {
	const char	*uuid;		/* points into the message */
	int64_t		used, peak;	/* -1: not in the row */
};

/* A MSG_HOOK_HELLO's fields: "job" > 0, an optional "pid" > 0. */
int	hookmsg_hello(const struct proto_msg *, struct hookmsg_hello *, char *err,
	    size_t errlen);
/*
 * A MSG_HOOK_CUT's fields: "seq" > 0, an optional "progress", then "n"
 * per communicator, each 0 or more, at most HOOKMSG_MAX_COMMS of them.
 */
int	hookmsg_cut(const struct proto_msg *, struct hookmsg_cut *, char *err, size_t errlen);
/*
 * A MSG_HOOK_REPORT's rows, each starting at a "uuid" (an "id" before it
 * is the hook's device number, ignored): fills rows (max), returns how many.
 * A "shared" before the rows (bytes the process shares with others through
 * CUDA IPC) goes to *shared, a "staged" (host staging it holds ready for a
 * suspend) to *staged; each 0 when not said.
 * A byte count must be an integer, 0 or more; a row without a uuid, a
 * repeated uuid or more than max rows is an error.
 */
int	hookmsg_report(const struct proto_msg *, struct hookmsg_row *, int max,
	    int64_t *shared, int64_t *staged, char *err, size_t errlen);
/* claim, or bound if claim is beyond it (then *over is set to 1). */
uint64_t hookmsg_bound(uint64_t claim, uint64_t bound, int *over);
/* sum + claim, at most bound, without overflow. */
uint64_t hookmsg_add(uint64_t sum, uint64_t claim, uint64_t bound);

#endif
