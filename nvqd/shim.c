/*
 * shim.c: nvq-shim, the supervisor of one job.
 *
 * nvqd starts it with posix_spawn (no copy of nvqd's memory), as
 *   nvq-shim STATUS OUT ERR CWD USER UID GID GROUPS DROP PRELOAD -- COMMAND [ARG...]
 * with the job's environment as its own.  GROUPS is a comma-separated list
 * (or "-"), DROP is 1 to become UID, GID and GROUPS before the job runs,
 * PRELOAD a library put first in the job's LD_PRELOAD (or "-"): the job's,
 * not the shim's own.
 * It starts a session, becomes a child subreaper, and forks the job into a
 * process group of its own, after dropping privileges.  It forwards
 * SIGTERM (and SIGINT, SIGHUP) to the job's group and turns SIGUSR2 into
 * SIGKILL for it, waits for the job, kills what the job left behind, and
 * writes the exit status, CPU time and peak RSS to STATUS (format in
 * runner.h), so that they survive a restart of nvqd.  Failures before
 * exec reach the shim through a close-on-exec pipe and become the reason.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <limits.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/time.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "runner.h"

#define SHIM_MAX_GROUPS	1024

struct shim_spec {
	char		**argv;
	const char	*cwd, *out, *err, *status_path, *user;
	uid_t		uid;
	gid_t		gid;
	int		drop;
	const char	*preload;
	gid_t		groups[SHIM_MAX_GROUPS];
	int		ngroups;
};

extern char **environ;

static void
shim_fail(int fd, int code, const char *fmt, ...)
{
	char buf[256];
	va_list ap;
	int n;

	va_start(ap, fmt);
	n = vsnprintf(buf, sizeof(buf), fmt, ap);
	va_end(ap);
	if (n > 0 && write(fd, buf, (size_t)n < sizeof(buf) ? (size_t)n : sizeof(buf) - 1) < 0)
		_exit(code);
	_exit(code);
}

static int
shim_open_out(const char *path)
{
	return open(path, O_WRONLY | O_CREAT | O_TRUNC | O_NOFOLLOW | O_CLOEXEC, 0644);
}

/* In the job's process, after the shim's fork: never returns. */
static void
shim_job(const struct shim_spec *s, int efd)
{
	int in, out, err;

	setpgid(0, 0);
	if (s->drop) {
		if (setgroups((size_t)s->ngroups, s->groups) == -1)
			shim_fail(efd, 126, "cannot set the groups of %s: %s", s->user,
			    strerror(errno));
		if (setgid(s->gid) == -1)
			shim_fail(efd, 126, "cannot set gid %u: %s", (unsigned)s->gid,
			    strerror(errno));
		if (setuid(s->uid) == -1)
			shim_fail(efd, 126, "cannot set uid %u: %s", (unsigned)s->uid,
			    strerror(errno));
		if (s->uid != 0 && (setuid(0) != -1 || geteuid() == 0))
			shim_fail(efd, 126, "privileges could be regained after dropping them");
	}
	umask(022);
	if ((in = open("/dev/null", O_RDONLY | O_CLOEXEC)) == -1)
		shim_fail(efd, 126, "cannot open /dev/null: %s", strerror(errno));
	if ((out = shim_open_out(s->out)) == -1)
		shim_fail(efd, 126, "cannot open %s: %s", s->out, strerror(errno));
	if (strcmp(s->out, s->err) == 0)
		err = out;
	else if ((err = shim_open_out(s->err)) == -1)
		shim_fail(efd, 126, "cannot open %s: %s", s->err, strerror(errno));
	if (chdir(s->cwd) == -1)
		shim_fail(efd, 126, "cannot enter %s: %s", s->cwd, strerror(errno));
	if (dup2(in, 0) == -1 || dup2(out, 1) == -1 || dup2(err, 2) == -1)
		shim_fail(efd, 126, "dup2: %s", strerror(errno));
	if (s->preload != NULL) {
		/* the hook first, then whatever the job preloads itself */
		const char *old = getenv("LD_PRELOAD");
		size_t len = strlen(s->preload) + (old ? strlen(old) : 0) + 2;
		char *v = malloc(len);

		if (v == NULL)
			shim_fail(efd, 126, "out of memory");
		snprintf(v, len, "%s%s%s", s->preload, old && *old ? " " : "", old ? old : "");
		if (setenv("LD_PRELOAD", v, 1) == -1)
			shim_fail(efd, 126, "cannot set LD_PRELOAD: %s", strerror(errno));
	}
	execvp(s->argv[0], s->argv);
	shim_fail(efd, errno == ENOENT ? 127 : 126, "cannot execute %s: %s", s->argv[0],
	    strerror(errno));
}

/* SIGKILLs every process whose parent is this one (what the subreaper got). */
static void
shim_kill_children(void)
{
	char path[64], buf[512], *p;
	struct dirent *d;
	DIR *dir;
	FILE *fp;
	pid_t self = getpid(), pid;
	int ppid;

	if ((dir = opendir("/proc")) == NULL)
		return;
	while ((d = readdir(dir)) != NULL) {
		if ((pid = (pid_t)atoi(d->d_name)) <= 0)
			continue;
		snprintf(path, sizeof(path), "/proc/%d/stat", (int)pid);
		if ((fp = fopen(path, "r")) == NULL)
			continue;
		p = fgets(buf, sizeof(buf), fp);
		fclose(fp);
		if (p == NULL || (p = strrchr(buf, ')')) == NULL)
			continue;
		if (sscanf(p + 2, "%*c %d", &ppid) == 1 && ppid == self)
			kill(pid, SIGKILL);
	}
	closedir(dir);
}

static double
shim_now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_REALTIME, &ts);
	return (double)ts.tv_sec + ts.tv_nsec / 1e9;
}

static void
shim_write_status(const char *path, const struct runner_status *rs)
{
	char tmp[4200];
	FILE *fp;
	int fd;

	snprintf(tmp, sizeof(tmp), "%s.tmp", path);
	if ((fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600)) == -1)
		return;
	if ((fp = fdopen(fd, "w")) == NULL) {
		close(fd);
		return;
	}
	fprintf(fp, "exit %d\nsignal %d\ncpu %.3f\nrss %lld\nended %.3f\nreason %s\n",
	    rs->exit_code, rs->signal, rs->cpu_time, (long long)rs->max_rss, rs->ended_at,
	    rs->reason);
	/* no fsync: this must outlive nvqd, not a power cut (which ends the job too) */
	fclose(fp);
	rename(tmp, path);
}

/* The shim's life: start the job, forward signals, record how it ended. */
static void __attribute__((noreturn))
shim_shim(const struct shim_spec *s)
{
	struct runner_status rs;
	struct rusage ru;
	sigset_t set;
	siginfo_t si;
	pid_t job, p;
	int efd[2], st, fd, i, done = 0;
	ssize_t n;

	setsid();	/* nvqd asked posix_spawn for it too; harmless twice */
	prctl(PR_SET_CHILD_SUBREAPER, 1);
	/* posix_spawn reset every signal to its default and unblocked them all */
	sigemptyset(&set);
	sigaddset(&set, SIGCHLD);
	sigaddset(&set, SIGTERM);
	sigaddset(&set, SIGINT);
	sigaddset(&set, SIGHUP);
	sigaddset(&set, SIGUSR2);
	sigprocmask(SIG_SETMASK, &set, NULL);
	if ((fd = open("/dev/null", O_RDWR)) != -1) {
		dup2(fd, 0);
		dup2(fd, 1);
		dup2(fd, 2);
	}
	closefrom(3);

	memset(&rs, 0, sizeof(rs));
	rs.exit_code = -1;
	rs.max_rss = -1;
	rs.cpu_time = -1;
	if (pipe2(efd, O_CLOEXEC) == -1 || (job = fork()) == -1) {
		rs.exit_code = 126;
		snprintf(rs.reason, sizeof(rs.reason), "cannot start: %s", strerror(errno));
		rs.ended_at = shim_now();
		shim_write_status(s->status_path, &rs);
		_exit(0);
	}
	if (job == 0) {
		sigset_t none;

		sigemptyset(&none);
		sigprocmask(SIG_SETMASK, &none, NULL);
		close(efd[0]);
		shim_job(s, efd[1]);
	}
	setpgid(job, job);	/* also here, so that kill(-job) works at once */
	close(efd[1]);
	while ((n = read(efd[0], rs.reason, sizeof(rs.reason) - 1)) == -1 && errno == EINTR)
		;
	rs.reason[n > 0 ? n : 0] = '\0';
	close(efd[0]);

	while (!done) {
		if (sigwaitinfo(&set, &si) == -1)
			continue;
		if (si.si_signo == SIGTERM || si.si_signo == SIGINT || si.si_signo == SIGHUP)
			kill(-job, SIGTERM);
		else if (si.si_signo == SIGUSR2)
			kill(-job, SIGKILL);
		while ((p = wait4(-1, &st, WNOHANG, &ru)) > 0) {
			if (p != job)
				continue;
			done = 1;
			if (WIFEXITED(st))
				rs.exit_code = WEXITSTATUS(st);
			else if (WIFSIGNALED(st))
				rs.signal = WTERMSIG(st);
			rs.cpu_time = ru.ru_utime.tv_sec + ru.ru_utime.tv_usec / 1e6 +
			    ru.ru_stime.tv_sec + ru.ru_stime.tv_usec / 1e6;
			rs.max_rss = (int64_t)ru.ru_maxrss * 1024;
		}
	}
	rs.ended_at = shim_now();
	/*
	 * The job is over: what it left behind goes too, so that its GPUs are
	 * free.  Its group first; then, if any orphan reparented to us is
	 * left (it escaped the group), a scan of /proc for our children.
	 */
	kill(-job, SIGKILL);
	for (i = 0; i < 200; i++) {
		while ((p = waitpid(-1, &st, WNOHANG)) > 0)
			;
		if (p == -1 && errno == ECHILD)
			break;
		kill(-job, SIGKILL);
		shim_kill_children();
		usleep(5000);
	}
	shim_write_status(s->status_path, &rs);
	_exit(0);
}


static int
shim_number(const char *s, unsigned long *v)
{
	char *end;

	errno = 0;
	*v = strtoul(s, &end, 10);
	return *s == '\0' || *end != '\0' || errno != 0 ? -1 : 0;
}

int
main(int argc, char **argv)
{
	struct shim_spec s;
	unsigned long v;
	char *tok, *save;

	memset(&s, 0, sizeof(s));
	if (argc < 13 || strcmp(argv[11], "--") != 0) {
		fprintf(stderr, "nvq-shim: run by nvqd, not by hand\n");
		return 2;
	}
	s.status_path = argv[1];
	s.out = argv[2];
	s.err = argv[3];
	s.cwd = argv[4];
	s.user = argv[5];
	if (shim_number(argv[6], &v) == -1)
		return 2;
	s.uid = (uid_t)v;
	if (shim_number(argv[7], &v) == -1)
		return 2;
	s.gid = (gid_t)v;
	if (strcmp(argv[8], "-") != 0)
		for (tok = strtok_r(argv[8], ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
			if (s.ngroups == SHIM_MAX_GROUPS || shim_number(tok, &v) == -1)
				return 2;
			s.groups[s.ngroups++] = (gid_t)v;
		}
	s.drop = strcmp(argv[9], "1") == 0;
	s.preload = strcmp(argv[10], "-") != 0 ? argv[10] : NULL;
	s.argv = argv + 12;
	shim_shim(&s);
	return 0;
}
