/*
 * runner.c: starting a job's supervisor (nvq-shim, see nvq-shim/shim.c) with
 * posix_spawn, signalling it, and finding it and its processes again.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <math.h>
#include <signal.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include "fdpass.h"
#include "proc.h"
#include "runner.h"
#include "status.h"

/*
 * The shim's own environment: it runs as root, so nothing of the
 * submitter's (LD_PRELOAD, LD_AUDIT, LD_LIBRARY_PATH...) may reach its loader.
 */
static char *const runner_shim_env[] = { "PATH=/usr/sbin:/usr/bin:/sbin:/bin", NULL };

/* Writes len bytes of buf to fd; 0, or -1. */
static int
runner_write_all(int fd, const char *buf, size_t len)
{
	ssize_t n;

	while (len > 0)
		if ((n = write(fd, buf, len)) > 0) {
			buf += n;
			len -= (size_t)n;
		} else if (n == 0 || errno != EINTR)
			return -1;
	return 0;
}

/* A memfd holding strings one after the other, each with its NUL, at offset 0; or -1. */
static int
runner_strings_fd(const char *name, char *const *v)
{
	char buf[16384];
	size_t used = 0, len;
	int fd, hi, i;

	if ((fd = memfd_create(name, MFD_CLOEXEC)) == -1)
		return -1;
	/* a few writes, not one each */
	for (i = 0; v != NULL && v[i] != NULL; i++) {
		len = strlen(v[i]) + 1;
		if (used + len > sizeof(buf)) {
			if (runner_write_all(fd, buf, used) == -1)
				goto fail;
			used = 0;
		}
		if (len > sizeof(buf)) {
			if (runner_write_all(fd, v[i], len) == -1)
				goto fail;
		} else {
			memcpy(buf + used, v[i], len);
			used += len;
		}
	}
	if (runner_write_all(fd, buf, used) == -1)
		goto fail;
	/* the spawn's dup2 onto 0 must not be a no-op that keeps close-on-exec */
	if (fd < 3) {
		if ((hi = fcntl(fd, F_DUPFD_CLOEXEC, 3)) == -1)
			goto fail;
		close(fd);
		fd = hi;
	}
	if (lseek(fd, 0, SEEK_SET) == 0)
		return fd;
fail:
	close(fd);
	return -1;
}

/* A shim's spawn: a new session, no blocked signals, every signal back to its default. */
static void
runner_spawn_attr(posix_spawnattr_t *attr)
{
	sigset_t none, all;

	sigemptyset(&none);
	sigfillset(&all);
	posix_spawnattr_init(attr);
	posix_spawnattr_setflags(attr, POSIX_SPAWN_SETSID | POSIX_SPAWN_SETSIGMASK |
	    POSIX_SPAWN_SETSIGDEF);
	posix_spawnattr_setsigmask(attr, &none);
	posix_spawnattr_setsigdefault(attr, &all);
}

int
runner_standby_start(struct runner_standby *sb, const char *shim)
{
	posix_spawn_file_actions_t fa;
	posix_spawnattr_t attr;
	char *argv[] = { "nvq-shim", "-W", NULL };
	int sv[2], r;
	pid_t pid;

	sb->pid = -1;
	sb->fd = -1;
	sb->taken_fd = -1;
	if (socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sv) == -1)
		return -1;
	runner_spawn_attr(&attr);
	posix_spawn_file_actions_init(&fa);
	r = posix_spawn_file_actions_adddup2(&fa, sv[1], 0);
	if (r == 0)
		r = posix_spawn(&pid, shim, &fa, &attr, argv, runner_shim_env);
	posix_spawn_file_actions_destroy(&fa);
	posix_spawnattr_destroy(&attr);
	close(sv[1]);
	if (r != 0) {
		close(sv[0]);
		errno = r;
		return -1;
	}
	sb->pid = pid;
	sb->fd = sv[0];
	sb->start = proc_start_time(pid);
	return 0;
}

void
runner_standby_stop(struct runner_standby *sb)
{
	int st;

	if (sb->pid <= 0)
		return;
	/* ours and not reaped: the pid is still this process's */
	kill(sb->pid, SIGKILL);
	close(sb->fd);
	while (waitpid(sb->pid, &st, 0) == -1 && errno == EINTR)
		;
	sb->pid = -1;
	sb->fd = -1;
}

/*
 * Hands a job to the standby shim (shim.c's shim_standby): its arguments
 * in a memfd, the environment's memfd, and the standard descriptors of
 * nvq run in hi (-1: none).  The standby's pid, or -1 with errno: it has
 * ended or cannot take the job, and is gone (so the caller spawns a shim).
 */
static pid_t
runner_handoff(struct runner_standby *sb, char *const *argv, int envfd, const int *hi)
{
	int fds[5], n = 0, i, argfd, st, r, saved;
	pid_t pid = sb->pid;

	/* ended already (killed by hand?): reaped here */
	if (waitpid(pid, &st, WNOHANG) == pid) {
		close(sb->fd);
		sb->fd = -1;
		sb->pid = -1;
		errno = ESRCH;
		return -1;
	}
	if ((argfd = runner_strings_fd("nvq-args", argv)) == -1) {
		saved = errno;
		runner_standby_stop(sb);
		errno = saved;
		return -1;
	}
	/* the arguments, the environment, then nvq run's descriptors in order (-a) */
	fds[n++] = argfd;
	fds[n++] = envfd;
	for (i = 0; i < 3; i++)
		if (hi[i] != -1)
			fds[n++] = hi[i];
	r = fdpass_send(sb->fd, fds, n);
	saved = errno;
	close(argfd);
	if (r == -1) {
		runner_standby_stop(sb);
		errno = saved;
		return -1;
	}
	/* it is the job's shim now, reaped as any other; the socket tells its job's end */
	sb->taken_fd = sb->fd;
	sb->fd = -1;
	sb->pid = -1;
	return pid;
}

pid_t
runner_spawn(const struct runner_spec *s, struct runner_standby *sb, char *err, size_t errlen)
{
	posix_spawn_file_actions_t fa;
	posix_spawnattr_t attr;
	char uid[24], gid[24], mask[16], id[24], procs[24], sig[16], fds[4] = "", *groups, **argv;
	char hmem[24], cpus[16];
	size_t off = 0;
	pid_t pid = -1;
	int i, n, r, a = 0, envfd, hi[3] = { -1, -1, -1 };

	for (n = 0; s->argv[n] != NULL; n++)
		;
	/* the shim's options and their values: 40 at most, and a NULL */
	if ((argv = calloc((size_t)n + 48, sizeof(*argv))) == NULL ||
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
	if (s->max_procs > 0) {
		snprintf(procs, sizeof(procs), "%lld", s->max_procs);
		argv[a++] = "-n";
		argv[a++] = procs;
	}
	if (s->host_mem > 0) {
		snprintf(hmem, sizeof(hmem), "%llu", (unsigned long long)s->host_mem);
		argv[a++] = "-M";
		argv[a++] = hmem;
	}
	if (s->cpus > 0) {
		snprintf(cpus, sizeof(cpus), "%d", s->cpus);
		argv[a++] = "-C";
		argv[a++] = cpus;
	}
	if (s->preempt_signal > 0) {
		snprintf(sig, sizeof(sig), "%d", s->preempt_signal);
		argv[a++] = "-S";
		argv[a++] = sig;
	}
	/* nvq run's terminal: the shim's 3, 4, 5 (from high numbers, so no dup2 undoes another) */
	for (i = 0; s->stdio != NULL && i < 3; i++)
		if (s->stdio[i] >= 0 && (hi[i] = fcntl(s->stdio[i], F_DUPFD_CLOEXEC, 16)) != -1)
			fds[strlen(fds)] = (char)('0' + i);
	if (fds[0] != '\0') {
		argv[a++] = "-a";
		argv[a++] = fds;
	}
	argv[a++] = "-E";	/* the job's environment is on its standard input */
	if (s->prepare)
		argv[a++] = "-w";	/* and its start waits for runner_go */
	argv[a++] = "--";
	for (i = 0; i < n; i++)
		argv[a++] = s->argv[i];

	unlink(s->status_path);
	/* the job's environment for the shim's standard input */
	if ((envfd = runner_strings_fd("nvq-env", s->envp)) == -1) {
		snprintf(err, errlen, "cannot pass its environment to its supervisor: %s",
		    strerror(errno));
		if (!s->prepare)
			runner_void_start(s->status_path);
		for (i = 0; i < 3; i++)
			if (hi[i] != -1)
				close(hi[i]);
		free(argv);
		free(groups);
		return -1;
	}

	if (sb != NULL && sb->pid > 0 && (pid = runner_handoff(sb, argv, envfd, hi)) > 0)
		goto done;
	pid = -1;
	if (s->prepare) {
		snprintf(err, errlen, "no standby supervisor to prepare");
		goto done;
	}
	runner_spawn_attr(&attr);
	posix_spawn_file_actions_init(&fa);
	r = posix_spawn_file_actions_adddup2(&fa, envfd, 0);
	for (i = 0; i < 3 && r == 0; i++)
		if (hi[i] != -1)
			r = posix_spawn_file_actions_adddup2(&fa, hi[i], 3 + i);
	if (r == 0)
		r = posix_spawn(&pid, s->shim, &fa, &attr, argv, runner_shim_env);
	posix_spawn_file_actions_destroy(&fa);
	posix_spawnattr_destroy(&attr);
	if (r != 0) {
		snprintf(err, errlen, "cannot start its supervisor %s: %s", s->shim, strerror(r));
		runner_void_start(s->status_path);
		pid = -1;
	}
done:
	close(envfd);
	for (i = 0; i < 3; i++)
		if (hi[i] != -1)
			close(hi[i]);
	free(argv);
	free(groups);
	return pid;
}


int
runner_go(int fd)
{
	ssize_t n;

	if (fd < 0)
		return -1;
	while ((n = send(fd, "g", 1, MSG_NOSIGNAL | MSG_DONTWAIT)) == -1 && errno == EINTR)
		;
	return n == 1 ? 0 : -1;
}

/* DIR/spare.K for the status file path's DIR; 0, or -1 if it does not fit. */
static int
runner_spare_path(const char *status_path, unsigned k, char *buf, size_t len)
{
	const char *slash = strrchr(status_path, '/');
	int n;

	if (slash == NULL)
		return -1;
	n = snprintf(buf, len, "%.*s/spare.%u", (int)(slash - status_path), status_path, k);
	return n < 0 || (size_t)n >= len ? -1 : 0;
}

int
runner_ticket(const char *status_path, const char *token, unsigned *spares)
{
	char ticket[PATH_MAX + 80], spare[PATH_MAX + 16];
	int fd;

	unlink(status_path);
	snprintf(ticket, sizeof(ticket), "%s.%s.ticket", status_path, token);
	while (*spares > 0) {
		(*spares)--;
		if (runner_spare_path(status_path, *spares, spare, sizeof(spare)) == 0 &&
		    rename(spare, ticket) == 0)
			return 0;
	}
	if ((fd = open(ticket, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600)) == -1)
		return -1;
	return close(fd);
}

void
runner_recycle(const char *status_path, unsigned *spares)
{
	static const char zeros[STATUS_SIZE * 2];
	char spare[PATH_MAX + 16];
	struct stat st;
	int fd, kept = 0;

	if (*spares < RUNNER_SPARES &&
	    runner_spare_path(status_path, *spares, spare, sizeof(spare)) == 0 &&
	    (fd = open(status_path, O_WRONLY | O_NOFOLLOW | O_CLOEXEC)) != -1) {
		/* no record left in it: zeros are none (status.h) */
		kept = fstat(fd, &st) == 0 && S_ISREG(st.st_mode) && st.st_nlink == 1 &&
		    st.st_size <= (off_t)sizeof(zeros) &&
		    pwrite(fd, zeros, (size_t)st.st_size, 0) == st.st_size;
		if (close(fd) == -1)
			kept = 0;
		if (kept && rename(status_path, spare) == 0) {
			(*spares)++;
			return;
		}
	}
	unlink(status_path);
}

void
runner_spares_clear(const char *dir)
{
	struct dirent *d;
	DIR *dp;

	if ((dp = opendir(dir)) == NULL)
		return;
	while ((d = readdir(dp)) != NULL)
		if (strncmp(d->d_name, "spare.", 6) == 0)
			unlinkat(dirfd(dp), d->d_name, 0);
	closedir(dp);
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
				if (proc_session(pid) == pid &&
				    (t = proc_start_time(pid)) > youngest) {
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
		if (proc_session((pid_t)v) == shim && runner_maps_cuda((pid_t)v))
			out[n++] = (pid_t)v;
	}
	closedir(dir);
	return n;
}

int
runner_warn(pid_t shim, int pidfd, int sig, int batch)
{
	union sigval v = { .sival_int = sig | (batch ? RUNNER_WARN_BATCH : 0) };
	siginfo_t si;

	if (pidfd < 0)
		return sigqueue(shim, SIGALRM, v);
	/* as sigqueue fills it: a queued signal may carry a value to another process */
	memset(&si, 0, sizeof(si));
	si.si_signo = SIGALRM;
	si.si_code = SI_QUEUE;
	si.si_pid = getpid();
	si.si_uid = getuid();
	si.si_value = v;
	return (int)syscall(SYS_pidfd_send_signal, pidfd, SIGALRM, &si, 0);
}

int
runner_stop(pid_t shim, int pidfd, int how)
{
	/* what the shim turns into SIGKILL, and into the job's --signal */
	int sig = how == RUNNER_KILL ? SIGUSR2 : how == RUNNER_PREEMPT ? SIGUSR1 : SIGTERM;

	if (pidfd >= 0)
		return (int)syscall(SYS_pidfd_send_signal, pidfd, sig, NULL, 0);
	return kill(shim, sig);
}
