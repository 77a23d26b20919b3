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
proc_session(pid_t pid)
{
	return (pid_t)proc_stat_field(pid, 6);
}
