/*
 * dep.h: job dependencies in Slurm's syntax (--dependency, -d, --after),
 * parsed, packed for the engine and written back.  Shared by nvq and nvqd;
 * pure functions, no allocation; 0 or -1 with a sentence in why.
 *
 * "afterok:12:13,afterany:14_,afternotok:15_3,after:16,singleton": every
 * item must hold (Slurm's ','; its '?', any of them, is refused).  An id is
 * a job (12), every task of an array (14_, or the array's own id when
 * nvqd finds it is one), or one task of it (15_3: nvqd turns it into the
 * task's job id).  Kinds: afterok (ended COMPLETED), afterany (ended),
 * afternotok (ended otherwise), after (started, or ended).
 *
 * The engine keeps a job's dependencies as int64_t values (dep_pack): the
 * job or array id in the low bits, the kind and "whole array" above them;
 * the stored text (the jobs table's `after` column) is dep_format's,
 * whose bare ids (nvq before -d: "1,2,3") read as afterok.
 */
#ifndef NVQ_DEP_H
#define NVQ_DEP_H

#include <stddef.h>
#include <stdint.h>

#include "parse.h"

enum dep_kind {
	DEP_AFTEROK,
	DEP_AFTERANY,
	DEP_AFTERNOTOK,
	DEP_AFTER,
};

#define DEP_JOB		(-1)	/* dep_item.index: the id is a job's */
#define DEP_WHOLE	(-2)	/* dep_item.index: every task of the array id */
#define DEP_MAX_TEXT	(PARSE_MAX_IDS * 24 + 32)	/* dep_format's longest */

struct dep_item {
	int		kind;		/* enum dep_kind */
	int64_t		id;
	int64_t		index;		/* DEP_JOB, DEP_WHOLE or a task's index */
};

struct dep_list {
	struct dep_item	d[PARSE_MAX_IDS];
	int		n;
	int		singleton;	/* after every earlier job of its name and user */
};

/*
 * Parses s into *l (appending to what it holds); a bare id (no kind) is of
 * kind bare.  0, or -1 with why set.
 */
int		dep_parse(const char *s, int bare, struct dep_list *l, char *why, size_t len);
/* Whether a dependency holds: dep_holds, dep_array_holds. */
enum dep_verdict {
	DEP_WAIT,	/* not yet */
	DEP_MET,
	DEP_NEVER,	/* it never will: the job is cancelled (DependencyNeverSatisfied) */
};

/* A dependency of kind on a job in state ("PENDING", "COMPLETED", ...). */
int		dep_holds(int kind, const char *state);
/*
 * A dependency of kind on a whole array (never after:, which nvqd
 * refuses): active tasks of it, and of those ended, unfinished did not
 * complete.
 */
int		dep_array_holds(int kind, int64_t active, int64_t unfinished);
/* Slurm's name of a kind ("afterok"). */
const char	*dep_kind_name(int kind);
/* One dependency as the engine keeps it; id positive, below 2^48. */
int64_t		dep_pack(int kind, int whole, int64_t id);
int64_t		dep_id(int64_t packed);
int		dep_kind(int64_t packed);
int		dep_whole(int64_t packed);
/*
 * The packed dependencies v[0..n) and singleton as text, items of a kind
 * together in the order first seen ("afterok:1:2_,afterany:3,singleton");
 * "" for none.  The length written, or -1 if len is too small.
 */
int		dep_format(const int64_t *v, int n, int singleton, char *buf, size_t len);
/*
 * dep_format's text (or nvq's before -d: "1,2,3", afterok) packed back into
 * v (PARSE_MAX_IDS room), *singleton set if it says so: the count, 0 for
 * none or text that does not read.
 */
int		dep_unformat(const char *text, int64_t *v, int *singleton);

#endif
