/*
 * cgroup.c: a cgroup v2 per job (see cgroup.h).
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cgroup.h"

/* Writes s into dir/file; 0 or -1. */
static int
cgroup_write(const char *dir, const char *file, const char *s)
{
	char path[PATH_MAX];
	ssize_t n;
	int fd;

	snprintf(path, sizeof(path), "%s/%s", dir, file);
	if ((fd = open(path, O_WRONLY | O_CLOEXEC)) == -1)
		return -1;
	n = write(fd, s, strlen(s));
	close(fd);
	return n == (ssize_t)strlen(s) ? 0 : -1;
}

int
cgroup_base(char *out, size_t len)
{
	char line[4096], mnt[PATH_MAX] = "", own[PATH_MAX] = "", *p, *f;
	FILE *fp;
	int i;

	/* where cgroup2 is mounted: field 5 of the line whose type, after " - ", is cgroup2 */
	if ((fp = fopen("/proc/self/mountinfo", "r")) == NULL)
		return -1;
	while (fgets(line, sizeof(line), fp) != NULL) {
		if ((p = strstr(line, " - cgroup2 ")) == NULL)
			continue;
		*p = '\0';
		for (i = 0, f = strtok(line, " "); f && i < 4; i++)
			f = strtok(NULL, " ");
		if (f != NULL && strchr(f, '\\') == NULL)
			snprintf(mnt, sizeof(mnt), "%s", f);
		break;
	}
	fclose(fp);
	/* and nvqd's own cgroup there: the "0::PATH" line */
	if ((fp = fopen("/proc/self/cgroup", "r")) == NULL)
		return -1;
	while (fgets(line, sizeof(line), fp) != NULL)
		if (strncmp(line, "0::", 3) == 0) {
			line[strcspn(line, "\n")] = '\0';
			snprintf(own, sizeof(own), "%s", line + 3);
		}
	fclose(fp);
	if (*mnt == '\0' || *own != '/') {
		errno = ENOENT;
		return -1;
	}
	if (snprintf(out, len, "%s%s/nvq", mnt, strcmp(own, "/") == 0 ? "" : own) >= (int)len) {
		errno = ENAMETOOLONG;
		return -1;
	}
	if (mkdir(out, 0755) == -1 && errno != EEXIST)
		return -1;
	snprintf(line, sizeof(line), "%s/cgroup.procs", out);
	return access(line, W_OK);
}

void
cgroup_name(const char *base, long long id, pid_t shim, char *out, size_t len)
{
	snprintf(out, len, "%s/job-%lld-%d", base, id, (int)shim);
}

int
cgroup_enter(const char *dir)
{
	return cgroup_write(dir, "cgroup.procs", "0");
}

int
cgroup_signal(const char *dir, int sig)
{
	char path[PATH_MAX];
	FILE *fp;
	long pid;
	int n = 0;

	snprintf(path, sizeof(path), "%s/cgroup.procs", dir);
	if ((fp = fopen(path, "r")) == NULL)
		return -1;
	while (fscanf(fp, "%ld", &pid) == 1)
		if (pid > 0 && kill((pid_t)pid, sig) == 0)
			n++;
	fclose(fp);
	return n;
}

int
cgroup_kill(const char *dir)
{
	if (cgroup_write(dir, "cgroup.kill", "1") == 0)
		return 0;
	return cgroup_signal(dir, SIGKILL) == -1 ? -1 : 0;
}

int
cgroup_empty(const char *dir)
{
	char path[PATH_MAX], line[64];
	FILE *fp;
	int populated = 0;

	snprintf(path, sizeof(path), "%s/cgroup.events", dir);
	if ((fp = fopen(path, "r")) == NULL)
		return 1;
	while (fgets(line, sizeof(line), fp) != NULL)
		if (sscanf(line, "populated %d", &populated) == 1)
			break;
	fclose(fp);
	return populated == 0;
}
