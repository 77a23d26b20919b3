/*
 * cglimit.h: a job's host memory limit (--mem) and CPU quota (-c) through
 * its cgroup: in its cgroup v2 (memory.max with memory.swap.max 0, cpu.max)
 * where v2 has those controllers (pure v2, as on Ubuntu 24.04), else in
 * folders of the same name made in the v1 hierarchies of memory and cpu
 * (memory.limit_in_bytes, cpu.cfs_quota_us: the hybrid layout, v1
 * controllers beside an empty unified v2), which the job's process joins
 * before it runs the job.  A quota of N CPUs, no pinning.  And whether the
 * kernel's OOM killer ended a process of the job (its cgroup's oom_kill
 * count).  Functions return 0 or -1 with errno.  No libuv.
 */
#ifndef NVQ_CGLIMIT_H
#define NVQ_CGLIMIT_H

#include <limits.h>
#include <stdint.h>
#include <sys/types.h>

struct cglimit {
	char	mem1[PATH_MAX];	/* the v1 memory folder made, or "" */
	char	cpu1[PATH_MAX];	/* the v1 cpu folder made, or "" */
};

/*
 * Limits the job whose v2 cgroup is dir (made; its name's last part is the
 * v1 folders'): bytes of memory (0: none), cpus CPUs (0: none).  0, or -1 if
 * a limit asked could be set nowhere: the job runs without it.
 */
int		cglimit_set(struct cglimit *, const char *dir, uint64_t bytes, int cpus);
/* Moves the calling process into the v1 folders cglimit_set made. */
int		cglimit_enter(const struct cglimit *);
/* How many processes the OOM killer ended in the job's memory cgroup (0: none, unknown). */
long long	cglimit_oom_kills(const struct cglimit *, const char *dir);
/* Removes the v1 folders (empty by then). */
void		cglimit_remove(const struct cglimit *);
/*
 * Where a job's limits can go, for nvqd's log: "cgroup v2", "cgroup v1" or
 * NULL (none: jobs run without them), for memory (cpu 0) or cpu (cpu 1),
 * under base (cgroup_base's).
 */
const char	*cglimit_where(const char *base, int cpu);

#endif
