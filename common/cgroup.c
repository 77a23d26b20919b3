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
#include <sys/syscall.h>
#include <unistd.h>

#include "cgplace.h"
#include "cgroup.h"

int
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

/* 1 if no process is a member of dir itself (its cgroup.procs is empty or unreadable as such). */
static int
cgroup_empty_of_procs(const char *dir)
{
	char path[PATH_MAX], c;
	FILE *fp;
	int empty;

	snprintf(path, sizeof(path), "%s/cgroup.procs", dir);
	if ((fp = fopen(path, "r")) == NULL)
		return 0;
	empty = fread(&c, 1, 1, fp) == 0;
	fclose(fp);
	return empty;
}

/* Turns pids, memory and cpu for dir's children on ("+") or off ("-"). */
static void
cgroup_switch(const char *dir, const char *how)
{
	static const char *const ctl[] = { "pids", "memory", "cpu" };
	char w[16];
	size_t i;

	for (i = 0; i < sizeof(ctl) / sizeof(ctl[0]); i++) {
		snprintf(w, sizeof(w), "%s%s", how, ctl[i]);
		cgroup_write(dir, "cgroup.subtree_control", w);
	}
}

static void
cgroup_enable(const char *dir)
{
	cgroup_switch(dir, "+");
}

int
cgroup_base(char *out, size_t len)
{
	char line[4096], mnt[PATH_MAX] = "", own[PATH_MAX] = "", *p, *f;
	enum cgplace_act act;
	struct cgplace pl;
	FILE *fp;
	int i, mixable;

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
	if (*mnt == '\0' || cgplace_plan(own, getenv("INVOCATION_ID") != NULL, &pl) == -1) {
		errno = ENOENT;
		return -1;
	}
	if (snprintf(own, sizeof(own), "%s%s", mnt, pl.delegated) >= (int)sizeof(own) ||
	    snprintf(out, len, "%s/nvq", own) >= (int)len) {
		errno = ENAMETOOLONG;
		return -1;
	}
	if (mkdir(out, 0755) == -1 && errno != EEXIST)
		return -1;
	/*
	 * pids for the jobs' folders, so that pids.max caps a job, and memory
	 * and cpu for a job's --mem and -c (cglimit.h): given to the base by
	 * the cgroup nvqd manages (delegated to it under systemd), then to the
	 * jobs by the base.  Only while that cgroup holds no process
	 * (cgplace_act): nvqd steps into its leaf first where it may.  Where
	 * they cannot be had, shims fall back on RLIMIT_NPROC and cgroup v1.
	 */
	snprintf(line, sizeof(line), "%s/cgroup.type", own);
	mixable = access(line, F_OK) == -1;
	act = cgplace_act(&pl, !cgroup_empty_of_procs(own), mixable);
	if (act == CGPLACE_MOVE) {
		snprintf(line, sizeof(line), "%s/%s", own, CGPLACE_LEAF);
		if ((mkdir(line, 0755) == 0 || errno == EEXIST) && cgroup_enter(line) == 0)
			pl.may_move = 0;
		act = cgplace_act(&pl, !cgroup_empty_of_procs(own), mixable);
	}
	if (act == CGPLACE_ENABLE) {
		cgroup_enable(own);
		cgroup_enable(out);
	} else {
		/* a thread root an older nvqd made (pids given while it held processes): undone */
		cgroup_switch(out, "-");
		cgroup_switch(own, "-");
	}
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
cgroup_signal(const char *dir, int sig, pid_t pgid_done)
{
	char path[PATH_MAX];
	FILE *fp;
	long pid;
	int n = 0, pidfd;

	snprintf(path, sizeof(path), "%s/cgroup.procs", dir);
	if ((fp = fopen(path, "r")) == NULL)
		return -1;
	while (fscanf(fp, "%ld", &pid) == 1) {
		/*
		 * Through a pidfd, and only if the process it names is in dir once
		 * it is held: the pid read may have ended and gone to another
		 * process since (the shim runs as root).
		 */
		if (pid <= 0 || (pgid_done > 0 && getpgid((pid_t)pid) == pgid_done))
			continue;
		if ((pidfd = (int)syscall(SYS_pidfd_open, (pid_t)pid, 0)) == -1) {
			/* before Linux 5.3 the bare pid, as cgroup.procs just named it */
			if (errno == ENOSYS && kill((pid_t)pid, sig) == 0)
				n++;
			continue;
		}
		if (cgroup_holds(dir, (pid_t)pid) &&
		    syscall(SYS_pidfd_send_signal, pidfd, sig, NULL, 0) == 0)
			n++;
		close(pidfd);
	}
	fclose(fp);
	return n;
}

int
cgroup_holds(const char *dir, pid_t pid)
{
	char path[64], line[PATH_MAX + 8];
	size_t n, dl = strlen(dir);
	FILE *fp;
	int r = 0;

	snprintf(path, sizeof(path), "/proc/%d/cgroup", (int)pid);
	if ((fp = fopen(path, "r")) == NULL)
		return 0;
	/* the line "0::/PATH", PATH relative to the mount, names the end of dir */
	while (!r && fgets(line, sizeof(line), fp) != NULL) {
		line[strcspn(line, "\n")] = '\0';
		if (strncmp(line, "0::/", 4) != 0)
			continue;
		n = strlen(line + 3);
		r = n > 1 && dl > n && strcmp(dir + dl - n, line + 3) == 0;
	}
	fclose(fp);
	return r;
}

int
cgroup_kill(const char *dir)
{
	if (cgroup_write(dir, "cgroup.kill", "1") == 0)
		return 0;
	return cgroup_signal(dir, SIGKILL, 0) == -1 ? -1 : 0;
}

int
cgroup_pids_max(const char *dir, long long max)
{
	char n[24];

	snprintf(n, sizeof(n), "%lld", max);
	return cgroup_write(dir, "pids.max", n);
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
