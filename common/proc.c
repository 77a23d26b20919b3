/*
 * proc.c: what nvqd and its helpers read of a process in /proc (see proc.h).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "proc.h"

/* Reads field n (1-based, n >= 3) of /proc/pid/stat as a number. */
static long long
proc_stat_field(pid_t pid, int n)
{
	char path[64], buf[1024], *p, *tok, *save;
	long long v = -1;
	FILE *fp;
	int i;

	snprintf(path, sizeof(path), "/proc/%d/stat", (int)pid);
	if ((fp = fopen(path, "r")) == NULL)
		return -1;
	p = fgets(buf, sizeof(buf), fp);
	fclose(fp);
	if (p == NULL || (p = strrchr(buf, ')')) == NULL)
		return -1;
	/* after ") " comes field 3 */
	for (i = 3, tok = strtok_r(p + 2, " ", &save); tok; tok = strtok_r(NULL, " ", &save), i++)
		if (i == n) {
			v = atoll(tok);
			break;
		}
	return v;
}

int64_t
proc_start_time(pid_t pid)
{
	return pid > 0 ? proc_stat_field(pid, 22) : -1;
}

pid_t
proc_parent(pid_t pid)
{
	return (pid_t)proc_stat_field(pid, 4);
}

pid_t
proc_session(pid_t pid)
{
	return (pid_t)proc_stat_field(pid, 6);
}

pid_t
proc_pidfd_pid(int pidfd)
{
	char path[64], line[128];
	FILE *fp;
	int pid = -1;

	snprintf(path, sizeof(path), "/proc/self/fdinfo/%d", pidfd);
	if ((fp = fopen(path, "r")) == NULL)
		return -1;
	while (fgets(line, sizeof(line), fp) != NULL)
		if (sscanf(line, "Pid: %d", &pid) == 1)
			break;
	fclose(fp);
	return pid > 0 ? (pid_t)pid : -1;
}

int
proc_uids(pid_t pid, uid_t *ruid, uid_t *euid)
{
	char path[64], line[256];
	unsigned r, u;
	FILE *fp;
	int rc = -1;

	snprintf(path, sizeof(path), "/proc/%d/status", (int)pid);
	if ((fp = fopen(path, "r")) == NULL)
		return -1;
	while (fgets(line, sizeof(line), fp) != NULL)
		if (sscanf(line, "Uid: %u %u", &r, &u) == 2) {
			*ruid = r;
			*euid = u;
			rc = 0;
			break;
		}
	fclose(fp);
	return rc;
}
