/*
 * runner.c: starting a job's supervisor (nvq-shim, see shim.c) with
 * posix_spawn, signalling it, and reading the status it records.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "runner.h"

pid_t
runner_spawn(const struct runner_spec *s, char *err, size_t errlen)
{
	posix_spawnattr_t attr;
	sigset_t none, all;
	char uid[24], gid[24], mask[16], id[24], *groups, **argv;
	size_t off = 0;
	pid_t pid = -1;
	int i, n, r, a = 0;

	for (n = 0; s->argv[n] != NULL; n++)
		;
	if ((argv = calloc((size_t)n + 32, sizeof(*argv))) == NULL ||
	    (groups = malloc(2 + (size_t)s->ngroups * 12)) == NULL) {
		free(argv);
		snprintf(err, errlen, "out of memory");
		return -1;
	}
	groups[0] = '\0';
	for (i = 0; i < s->ngroups; i++)
		off += (size_t)sprintf(groups + off, "%s%u", i ? "," : "", (unsigned)s->groups[i]);
	snprintf(uid, sizeof(uid), "%u", (unsigned)s->uid);
	snprintf(gid, sizeof(gid), "%u", (unsigned)s->gid);
	snprintf(mask, sizeof(mask), "%o", (unsigned)s->umask);
	snprintf(id, sizeof(id), "%lld", (long long)s->id);
	argv[a++] = "nvq-shim";
	argv[a++] = "-s"; argv[a++] = (char *)s->status_path;
	argv[a++] = "-t"; argv[a++] = (char *)s->ticket;
	argv[a++] = "-o"; argv[a++] = (char *)s->out;
	argv[a++] = "-e"; argv[a++] = (char *)s->err;
	argv[a++] = "-d"; argv[a++] = (char *)s->cwd;
	argv[a++] = "-u"; argv[a++] = (char *)s->user;
	argv[a++] = "-U"; argv[a++] = uid;
	argv[a++] = "-G"; argv[a++] = gid;
	argv[a++] = "-m"; argv[a++] = mask;
	if (s->ngroups > 0) {
		argv[a++] = "-g";
		argv[a++] = groups;
	}
	if (s->drop)
		argv[a++] = "-D";
	if (s->preload != NULL) {
		argv[a++] = "-P";
		argv[a++] = (char *)s->preload;
	}
	if (s->rlimits != NULL && *s->rlimits != '\0') {
		argv[a++] = "-r";
		argv[a++] = (char *)s->rlimits;
	}
	if (s->cgroup_base != NULL) {
		argv[a++] = "-c";
		argv[a++] = (char *)s->cgroup_base;
		argv[a++] = "-i";
		argv[a++] = id;
	}
	argv[a++] = "--";
	for (i = 0; i < n; i++)
		argv[a++] = s->argv[i];

	unlink(s->status_path);

	/* a new session, no blocked signals, every signal back to its default */
	sigemptyset(&none);
	sigfillset(&all);
	posix_spawnattr_init(&attr);
	posix_spawnattr_setflags(&attr, POSIX_SPAWN_SETSID | POSIX_SPAWN_SETSIGMASK |
	    POSIX_SPAWN_SETSIGDEF);
	posix_spawnattr_setsigmask(&attr, &none);
	posix_spawnattr_setsigdefault(&attr, &all);
	r = posix_spawn(&pid, s->shim, NULL, &attr, argv, s->envp);
	posix_spawnattr_destroy(&attr);
	if (r != 0) {
		snprintf(err, errlen, "cannot start its supervisor %s: %s", s->shim, strerror(r));
		runner_void_start(s->status_path);
		pid = -1;
	}
	free(argv);
	free(groups);
	return pid;
}

int
runner_status_read(const char *path, struct runner_status *rs)
{
	char line[512];
	long long rss;
	FILE *fp;
	size_t n;

	memset(rs, 0, sizeof(*rs));
	rs->exit_code = -1;
	rs->cpu_time = -1;
	rs->max_rss = -1;
	if ((fp = fopen(path, "r")) == NULL)
		return -1;
	while (fgets(line, sizeof(line), fp) != NULL) {
		if (sscanf(line, "exit %d", &rs->exit_code) == 1 ||
		    sscanf(line, "signal %d", &rs->signal) == 1 ||
		    sscanf(line, "cpu %lf", &rs->cpu_time) == 1 ||
		    sscanf(line, "ended %lf", &rs->ended_at) == 1)
			continue;
		if (sscanf(line, "rss %lld", &rss) == 1)
			rs->max_rss = rss;
		else if (strncmp(line, "reason ", 7) == 0) {
			snprintf(rs->reason, sizeof(rs->reason), "%s", line + 7);
			n = strlen(rs->reason);
			if (n > 0 && rs->reason[n - 1] == '\n')
				rs->reason[n - 1] = '\0';
		}
	}
	fclose(fp);
	return rs->ended_at > 0 ? 0 : -1;
}

/* Reads field n (1-based, n >= 3) of /proc/pid/stat as a number. */
static long long
runner_stat_field(pid_t pid, int n)
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
runner_start_time(pid_t pid)
{
	return pid > 0 ? runner_stat_field(pid, 22) : -1;
}

int
runner_ticket(const char *status_path, const char *token)
{
	char ticket[PATH_MAX + 80];
	int fd;

	unlink(status_path);
	snprintf(ticket, sizeof(ticket), "%s.%s.ticket", status_path, token);
	if ((fd = open(ticket, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600)) == -1)
		return -1;
	return close(fd);
}

int
runner_void_start(const char *status_path)
{
	char dir[PATH_MAX], *slash;
	const char *base;
	struct dirent *d;
	size_t blen, n;
	int voided = 0;
	DIR *dp;

	snprintf(dir, sizeof(dir), "%s", status_path);
	if ((slash = strrchr(dir, '/')) == NULL)
		return 0;
	*slash = '\0';
	base = slash + 1;
	blen = strlen(base);
	if ((dp = opendir(dir)) == NULL)
		return 0;
	/* BASE.TOKEN.ticket, whatever the token */
	while ((d = readdir(dp)) != NULL) {
		n = strlen(d->d_name);
		if (n > blen + 8 && strncmp(d->d_name, base, blen) == 0 && d->d_name[blen] == '.' &&
		    strcmp(d->d_name + n - 7, ".ticket") == 0 &&
		    unlinkat(dirfd(dp), d->d_name, 0) == 0)
			voided = 1;
	}
	closedir(dp);
	return voided;
}

pid_t
runner_find_shim(const char *status_path)
{
	char path[64], buf[8192], *p, *end;
	struct dirent *d;
	pid_t pid, found = -1;
	int64_t t, youngest = -1;
	ssize_t n;
	DIR *dir;
	int fd;

	if ((dir = opendir("/proc")) == NULL)
		return -1;
	while ((d = readdir(dir)) != NULL) {
		if ((pid = (pid_t)atoi(d->d_name)) <= 0)
			continue;
		snprintf(path, sizeof(path), "/proc/%d/cmdline", (int)pid);
		if ((fd = open(path, O_RDONLY | O_CLOEXEC)) == -1)
			continue;
		n = read(fd, buf, sizeof(buf) - 1);
		close(fd);
		if (n <= 0)
			continue;
		buf[n] = '\0';
		p = strrchr(buf, '/');
		if (strcmp(p ? p + 1 : buf, "nvq-shim") != 0)
			continue;
		/* its "-s STATUS" */
		for (p = buf, end = buf + n; p < end; p += strlen(p) + 1)
			if (strcmp(p, "-s") == 0 && p + 3 < end &&
			    strcmp(p + 3, status_path) == 0) {
				/*
				 * The shim leads its session; a child it forked for the
				 * job has its command line until exec, not its session.
				 */
				if (runner_session(pid) == pid &&
				    (t = runner_start_time(pid)) > youngest) {
					youngest = t;
					found = pid;
				}
				break;
			} else if (strcmp(p, "--") == 0)
				break;
	}
	closedir(dir);
	return found;
}

pid_t
runner_session(pid_t pid)
{
	return (pid_t)runner_stat_field(pid, 6);
}

/* Whether pid has libcuda mapped. */
static int
runner_maps_cuda(pid_t pid)
{
	char path[64], line[512];
	FILE *fp;
	int r = 0;

	snprintf(path, sizeof(path), "/proc/%d/maps", (int)pid);
	if ((fp = fopen(path, "r")) == NULL)
		return 0;
	while (!r && fgets(line, sizeof(line), fp) != NULL)
		r = strstr(line, "/libcuda.so") != NULL;
	fclose(fp);
	return r;
}

int
runner_cuda_procs(pid_t shim, const char *cgroup, pid_t *out, int max)
{
	char path[PATH_MAX];
	struct dirent *de;
	FILE *fp;
	DIR *dir;
	long v;
	int n = 0;

	if (cgroup != NULL) {
		snprintf(path, sizeof(path), "%s/cgroup.procs", cgroup);
		if ((fp = fopen(path, "r")) != NULL) {
			while (n < max && fscanf(fp, "%ld", &v) == 1)
				if ((pid_t)v != shim && runner_maps_cuda((pid_t)v))
					out[n++] = (pid_t)v;
			fclose(fp);
			return n;
		}
	}
	if ((dir = opendir("/proc")) == NULL)
		return 0;
	while (n < max && (de = readdir(dir)) != NULL) {
		if ((v = strtol(de->d_name, NULL, 10)) <= 0 || (pid_t)v == shim)
			continue;
		if (runner_session((pid_t)v) == shim && runner_maps_cuda((pid_t)v))
			out[n++] = (pid_t)v;
	}
	closedir(dir);
	return n;
}

int
runner_stop(pid_t shim, int pidfd, int hard)
{
	int sig = hard ? SIGUSR2 : SIGTERM;

	if (pidfd >= 0)
		return (int)syscall(SYS_pidfd_send_signal, pidfd, sig, NULL, 0);
	return kill(shim, sig);
}
