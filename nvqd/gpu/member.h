/*
 * member.h: whether a process is one of a job's, whatever session or
 * process group it made for itself (torchrun starts each worker in a
 * session of its own): a descendant of the job's supervisor (nvq-shim is a
 * child subreaper, so a process whose parent ended is reparented to it and
 * stays below it), in its session, or in its cgroup; never the supervisor
 * itself.  No process can make itself a descendant of another, so a
 * process of the same user outside the job cannot pass; the uid is
 * checked apart (hooks.c).  It reads /proc: the caller makes sure the pid
 * still names the process it means (a pidfd, a start time read before and
 * after).
 */
#ifndef NVQ_MEMBER_H
#define NVQ_MEMBER_H

#include <sys/types.h>

#define MEMBER_DEPTH	64	/* ancestors walked, at most */

struct job;

int	member_of(const struct job *, pid_t);
/*
 * For counting many processes (NVML's) at once: the first of pid's
 * ancestors, or its session, found in roots (n supervisor pids, sorted
 * ascending); 0 if none.
 */
pid_t	member_root(pid_t, const pid_t *roots, int n);

#endif
