/*
 * lcclass.h: who may submit latency-critical jobs (nvq submit --class lc),
 * as nvq.ini's [class lc] section says, and how long a best-effort job's
 * launch waits for them (issue 43; the GPU side is nvqd/gpu/lcbe.c, the
 * hook's hook/lcbe.c).
 *
 * The class of a job is a different axis from its qos (qos.h): qos orders
 * the queue and decides preemption; lc/be decides who yields on a GPU that
 * jobs share.  users and groups are read as text by the key table
 * (config.c) and resolved here once the file is read (names through NSS).
 * Functions return 0 or -1 with a message.
 */
#ifndef NVQ_LCCLASS_H
#define NVQ_LCCLASS_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "qos.h"

struct lcclass {
	char		users[256];	/* [class lc] users: names, or "*" for everyone */
	char		groups[256];	/* [class lc] groups */
	int64_t		be_max_wait;	/* ms a best-effort launch waits at most */
	int64_t		max_jobs_per_user;	/* active lc jobs per user; 0: no limit */
	int		default_lc;	/* [scheduler] default_class = lc */
	int		everyone;	/* users = * */
	struct qos_class who;		/* users and groups resolved (lcclass_finish) */
};

/* Who submits: uid, gid and groups (n), and the lc jobs they have now. */
struct lcclass_who {
	uint32_t	uid, gid;
	const gid_t	*groups;
	int		ngroups;
	int		active;		/* pending, running, suspended, and in the batch */
};

/* Resolves users and groups after the file is read: 0, or -1 with msg set. */
int	lcclass_finish(struct lcclass *, char *msg, size_t len);
/*
 * Whether uid, of gid and groups (n of them), may submit an lc job: root,
 * everyone with users = *, else those named; nobody else when none are.
 */
int	lcclass_may_use(const struct lcclass *, uint32_t uid, uint32_t gid, const gid_t *groups,
	    int n);

/*
 * A submit's class: asked ("lc", "be", or NULL for [scheduler]
 * default_class) by w, for ntasks jobs.  0 with *lc set (1: lc), or -1
 * with the refusal in err (one line): a class that is not one, lc for one
 * who may not, or past max_jobs_per_user (root exempt).  A default of lc
 * never refuses: it is be for one who may not, or who is at the limit.
 */
int	lcclass_decide(const struct lcclass *, const char *asked, const struct lcclass_who *w,
	    int ntasks, int *lc, char *err, size_t len);

#endif
