/*
 * cgroup.h: a cgroup v2 per job, so that a job is all of its processes.
 *
 * nvqd finds where it may make them (cgroup_base: "nvq" under the cgroup
 * it manages, on the cgroup2 mount: cgplace.h) and names each job's; the job's shim makes
 * it, puts the job in it before the job drops its privileges, signals
 * everything in it, and ends with cgroup.kill and rmdir.  nvqd uses
 * cgroup_kill for what is left of a job whose shim is gone.  One controller
 * is enabled where nvqd may: pids, for [limits] max_procs; cgroup.procs,
 * cgroup.kill and cgroup.events need none; memory and cpu for cglimit.h.
 * Functions return 0 or -1 with errno.  No libuv.
 */
#ifndef NVQ_CGROUP_H
#define NVQ_CGROUP_H

#include <stddef.h>
#include <sys/types.h>

/* Writes s into dir/file; 0 or -1. */
int	cgroup_write(const char *dir, const char *file, const char *s);
/* Makes and returns (in out) the folder job cgroups go in. */
int	cgroup_base(char *out, size_t len);
/* The cgroup of job id under shim pid: BASE/job-ID-PID. */
void	cgroup_name(const char *base, long long id, pid_t shim, char *out, size_t len);
/* Moves the calling process into dir. */
int	cgroup_enter(const char *dir);
/*
 * Sends sig to every process in dir but those in process group pgid_done
 * (signalled already; 0: none), so that each gets it once; returns how
 * many, or -1.
 */
int	cgroup_signal(const char *dir, int sig, pid_t pgid_done);
/* SIGKILLs everything in dir at once (cgroup.kill; one by one before Linux 5.14). */
int	cgroup_kill(const char *dir);
/*
 * Whether pid is in the cgroup dir now (its /proc/PID/cgroup); reads /proc:
 * the caller holds a pidfd or otherwise knows pid names the process it means.
 */
int	cgroup_holds(const char *dir, pid_t pid);
/* 1 if no process is left in dir (or dir is gone), 0 if some are. */
int	cgroup_empty(const char *dir);
/* Caps the processes and threads in dir (pids.max); -1 where pids is not enabled. */
int	cgroup_pids_max(const char *dir, long long max);

#endif
