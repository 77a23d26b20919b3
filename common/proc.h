/*
 * proc.h: what nvqd reads of a process in /proc: its start time, session
 * and uids, and the pid behind a pidfd.  A pid names a process only while
 * it runs; its start time tells a process from a later one with the same
 * pid.  Reads /proc; no libuv.
 */
#ifndef NVQ_PROC_H
#define NVQ_PROC_H

#include <stdint.h>
#include <sys/types.h>

/* The start time of pid in clock ticks since boot, or -1 if it is gone. */
int64_t	proc_start_time(pid_t);
/* The parent of pid, or -1. */
pid_t	proc_parent(pid_t);
/* The session of pid, or -1. */
pid_t	proc_session(pid_t);
/* The pid of a pidfd's process, from /proc/self/fdinfo; -1 once it ended. */
pid_t	proc_pidfd_pid(int pidfd);
/* The real and effective uids of pid, from /proc/PID/status; 0, or -1 if it is gone. */
int	proc_uids(pid_t, uid_t *ruid, uid_t *euid);

#endif
