/*
 * member.h: whether a process is one of a job's: in its supervisor's
 * session or its cgroup (not the supervisor itself).  It reads /proc: the
 * caller makes sure the pid still names the process it means (a pidfd, a
 * start time read before and after).
 */
#ifndef NVQ_MEMBER_H
#define NVQ_MEMBER_H

#include <sys/types.h>

struct job;

int	member_of(const struct job *, pid_t);

#endif
