/*
 * member.c: whether a process is one of a job's (see member.h).
 */
#include "cgroup.h"
#include "engine.h"
#include "member.h"
#include "proc.h"

int
member_of(const struct job *j, pid_t pid)
{
	if (j->pid <= 0 || pid <= 0 || pid == j->pid)
		return 0;
	if (proc_session(pid) == j->pid)
		return 1;
	return j->cgroup != NULL && cgroup_holds(j->cgroup, pid);
}
