/*
 * member.c: whether a process is one of a job's (see member.h).
 */
#include <stdlib.h>

#include "cgroup.h"
#include "job.h"
#include "member.h"
#include "proc.h"

/* Whether a is pid or one of its ancestors (pid not a itself: checked by the caller). */
static int
member_below(pid_t pid, pid_t a)
{
	int k;

	for (k = 0; k < MEMBER_DEPTH && pid > 1; k++) {
		if ((pid = proc_parent(pid)) == a)
			return 1;
	}
	return 0;
}

int
member_of(const struct job *j, pid_t pid)
{
	if (j->pid <= 0 || pid <= 0 || pid == j->pid)
		return 0;
	if (proc_session(pid) == j->pid || member_below(pid, j->pid))
		return 1;
	return j->cgroup != NULL && cgroup_holds(j->cgroup, pid);
}

static int
member_cmp(const void *a, const void *b)
{
	pid_t x = *(const pid_t *)a, y = *(const pid_t *)b;

	return x < y ? -1 : x > y;
}

pid_t
member_root(pid_t pid, const pid_t *roots, int n)
{
	pid_t p = pid, sid;
	int k;

	if (n == 0 || pid <= 1)
		return 0;
	for (k = 0; k < MEMBER_DEPTH && p > 1; k++) {
		if ((p = proc_parent(p)) <= 1)
			break;
		if (bsearch(&p, roots, (size_t)n, sizeof(*roots), member_cmp) != NULL)
			return p;
	}
	sid = proc_session(pid);
	if (sid > 1 && bsearch(&sid, roots, (size_t)n, sizeof(*roots), member_cmp) != NULL)
		return sid;
	return 0;
}
