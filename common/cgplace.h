/*
 * cgplace.h: which cgroup nvqd manages, and whether it may step into a leaf
 * of it, from its own cgroup's path: pure, no I/O (cgroup.c does the moves).
 *
 * Jobs' cgroups go in DELEGATED/nvq.  The kernel lets a cgroup hand memory
 * and cpu to its children only while it holds no process itself ("no
 * internal processes"), so nvqd runs in the leaf DELEGATED/nvqd:
 *  - under systemd 254+ the unit's DelegateSubgroup=nvqd starts it there;
 *  - started by hand (a shell, a container), nvqd moves itself there when
 *    its cgroup holds processes (itself, at least);
 *  - under an older systemd (INVOCATION_ID set, no subgroup) it stays: a
 *    restart would then find the unit's cgroup closed to processes.
 * Once in the leaf, its parent is the delegated cgroup, so a restarted
 * nvqd, wherever it starts, finds the same DELEGATED/nvq and its jobs there.
 */
#ifndef NVQ_CGPLACE_H
#define NVQ_CGPLACE_H

#include <stddef.h>

#define CGPLACE_LEAF	"nvqd"

struct cgplace {
	char	delegated[4096];	/* "/..." on the cgroup2 mount; "" for its root */
	int	may_move;		/* nvqd may move itself into delegated/nvqd */
	int	in_leaf;		/* it runs there already */
};

/*
 * What nvqd does before it asks the delegated cgroup for controllers:
 * ENABLE, or first MOVE itself into the leaf, or NONE at all.  holds: the
 * cgroup has processes of its own now; mixable: it is the hierarchy's real
 * root (no cgroup.type file), which may have both.  Never ask a cgroup with
 * processes for any controller: a threaded one (pids, cpu) would be given,
 * making it a thread root, and every job cgroup below it invalid (the kernel
 * refuses to put a process there with EOPNOTSUPP).
 */
enum cgplace_act { CGPLACE_ENABLE, CGPLACE_MOVE, CGPLACE_NONE };
enum cgplace_act cgplace_act(const struct cgplace *, int holds, int mixable);

/*
 * own: nvqd's cgroup ("0::" line of /proc/self/cgroup, "/..."); systemd:
 * started by systemd (INVOCATION_ID).  0, or -1 where own is not a path.
 */
int	cgplace_plan(const char *own, int systemd, struct cgplace *out);

#endif
