/*
 * ctl_check.h: who may send a request, as a pure function of its table
 * row (ctl.c), the caller and the job it is about.  No engine, no I/O:
 * ctl.c's dispatcher calls it once per request (and once per task of an
 * array) before any handler runs, and tests/unit/test_ctl_check.c checks
 * each kind of row and each refusal's exact words.
 */
#ifndef NVQ_CTL_CHECK_H
#define NVQ_CTL_CHECK_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

/* Who may send a request: a column of ctl.c's table. */
enum ctl_who {
	CTL_ANYONE,	/* any local user */
	CTL_OWNER,	/* the job's owner, root and [security] admin_group */
	CTL_SELF,	/* the job's owner only: what comes with it is the caller's own */
	CTL_ADMIN,	/* root and [security] admin_group */
	CTL_ROOT,	/* root only */
};

struct ctl_rule {
	enum ctl_who	who;
	/* what a refusal says the caller may not do: "cancel" (it), "drain a GPU" */
	const char	*verb;
	/*
	 * CTL_SELF: why only the owner, said to anyone else (NULL: an admin
	 * is told the job is not theirs, others as for CTL_OWNER); CTL_ROOT:
	 * who root is there, in brackets after "root"
	 */
	const char	*why;
};

/* Who sends the request (from the connection's credentials) and the config's admins. */
struct ctl_caller {
	uint32_t	uid;
	int		admin;		/* root, or of [security] admin_group (ctl_check_admin) */
	int		has_group;	/* [security] admin_group names a group */
	const char	*group;		/* its name as configured ("": none) */
};

/* The job a request is about (CTL_OWNER, CTL_SELF). */
struct ctl_owner {
	int64_t		id;
	uint32_t	uid;
	const char	*user;	/* NULL: Slurm's job, whose owner nvqd knows by uid only */
};

/*
 * Whether caller c may send a request of rule to job j (NULL for the rows
 * that name no job): 0, or -1 with the refusal's sentence in err (len bytes).
 */
int	ctl_check(const struct ctl_rule *rule, const struct ctl_caller *c,
	    const struct ctl_owner *j, char *err, size_t len);
/*
 * Whether uid (primary group gid, supplementary groups[n]; groups NULL if
 * unknown) is an admin: root, or a member of admin_gid if has_gid.
 */
int	ctl_check_admin(uint32_t uid, uint32_t gid, const gid_t *groups, int n, int has_gid,
	    uint32_t admin_gid);

#endif
