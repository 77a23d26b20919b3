/*
 * runner.c: starting a job's supervisor (nvq-shim, see shim.c) with
 * posix_spawn, signalling it, and the status record it writes: its format
 * and its parser live here together, and shim.c links this file for them.
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
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "runner.h"

/*
 * The shim's own environment: it runs as root, so nothing of the
 * submitter's (LD_PRELOAD, LD_AUDIT, LD_LIBRARY_PATH...) may reach its loader.
 */
static char *const runner_shim_env[] = { "PATH=/usr/sbin:/usr/bin:/sbin:/bin", NULL };

/*
 * The job's environment, NUL-terminated strings one after the other, in a
 * memfd at offset 0 for the shim's standard input: a descriptor >= 3,
 * close-on-exec, or -1.
 */
static int
runner_env_fd(char *const *envp)
{
	const char *p;
	size_t left;
	ssize_t n;
	int fd, hi, i;

	if ((fd = memfd_create("nvq-env", MFD_CLOEXEC)) == -1)
		return -1;
	/* each string with its NUL, which separates it from the next */
	for (i = 0; envp != NULL && envp[i] != NULL; i++)
		for (p = envp[i], left = strlen(p) + 1; left > 0; p += n, left -= (size_t)n)
			if ((n = write(fd, p, left)) == -1 && errno == EINTR)
				n = 0;
			else if (n <= 0)
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

pid_t
runner_spawn(const struct runner_spec *s, char *err, size_t errlen)
{
	posix_spawn_file_actions_t fa;
	posix_spawnattr_t attr;
	sigset_t none, all;
	char uid[24], gid[24], mask[16], id[24], procs[24], *groups, **argv;
	size_t off = 0;
	pid_t pid = -1;
	int i, n, r, a = 0, envfd;

	for (n = 0; s->argv[n] != NULL; n++)
		;
	/* the shim's options and their values: 36 at most, and a NULL */
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
	argv[a++] = "-E";	/* the job's environment is on its standard input */
	argv[a++] = "--";
	for (i = 0; i < n; i++)
		argv[a++] = s->argv[i];

	unlink(s->status_path);
	if ((envfd = runner_env_fd(s->envp)) == -1) {
		snprintf(err, errlen, "cannot pass its environment to its supervisor: %s",
		    strerror(errno));
		runner_void_start(s->status_path);
		free(argv);
		free(groups);
		return -1;
	}

	/* a new session, no blocked signals, every signal back to its default */
	sigemptyset(&none);
	sigfillset(&all);
	posix_spawnattr_init(&attr);
	posix_spawnattr_setflags(&attr, POSIX_SPAWN_SETSID | POSIX_SPAWN_SETSIGMASK |
	    POSIX_SPAWN_SETSIGDEF);
	posix_spawnattr_setsigmask(&attr, &none);
	posix_spawnattr_setsigdefault(&attr, &all);
	posix_spawn_file_actions_init(&fa);
	if ((r = posix_spawn_file_actions_adddup2(&fa, envfd, 0)) == 0)
		r = posix_spawn(&pid, s->shim, &fa, &attr, argv, runner_shim_env);
	posix_spawn_file_actions_destroy(&fa);
	posix_spawnattr_destroy(&attr);
	close(envfd);
	if (r != 0) {
		snprintf(err, errlen, "cannot start its supervisor %s: %s", s->shim, strerror(r));
		runner_void_start(s->status_path);
		pid = -1;
	}
	free(argv);
	free(groups);
	return pid;
}

/* The fields of a record, in the order they must come. */
enum {
	RUNNER_F_EXIT, RUNNER_F_SIGNAL, RUNNER_F_CPU, RUNNER_F_RSS, RUNNER_F_ENDED,
	RUNNER_F_REASON, RUNNER_F_END, RUNNER_NFIELDS
};
static const char *const runner_fields[RUNNER_NFIELDS] = {
	"exit", "signal", "cpu", "rss", "ended", "reason", "end"
};

/* Whether c may stand in a reason as it is: no control character. */
static int
runner_printable(unsigned char c)
{
	return c >= 0x20 && c != 0x7f;
}

/*
 * A number of a record: -?DIGITS, with .DIGITS where frac, nothing else
 * (no blanks, signs, exponents, hex, inf or nan that strtod would take).
 */
static int
runner_number(const char *v, size_t len, int frac, double *d, long long *ll)
{
	char buf[40], *end;
	size_t i = 0, digits = 0;

	if (len == 0 || len >= sizeof(buf))
		return -1;
	if (v[0] == '-')
		i++;
	for (; i < len && v[i] >= '0' && v[i] <= '9'; i++)
		digits++;
	if (digits == 0)
		return -1;
	if (frac && i < len && v[i] == '.') {
		for (digits = 0, i++; i < len && v[i] >= '0' && v[i] <= '9'; i++)
			digits++;
		if (digits == 0)
			return -1;
	}
	if (i != len)
		return -1;
	memcpy(buf, v, len);
	buf[len] = '\0';
	errno = 0;
	if (frac) {
		*d = strtod(buf, &end);
		return errno != 0 || !isfinite(*d) ? -1 : 0;
	}
	*ll = strtoll(buf, &end, 10);
	return errno != 0 ? -1 : 0;
}

/* One field's value (v, len bytes, no newline) into rs; 0 or -1 if out of range. */
static int
runner_field(int f, const char *v, size_t len, struct runner_status *rs)
{
	long long ll = 0;
	double d = 0;
	size_t i;

	switch (f) {
	case RUNNER_F_EXIT:
		if (runner_number(v, len, 0, &d, &ll) == -1 || ll < -1 || ll > 255)
			return -1;
		rs->exit_code = (int)ll;
		return 0;
	case RUNNER_F_SIGNAL:
		if (runner_number(v, len, 0, &d, &ll) == -1 || ll < 0 || ll > 127)
			return -1;
		rs->signal = (int)ll;
		return 0;
	case RUNNER_F_CPU:
		/* -1: not known (it never started) */
		if (runner_number(v, len, 1, &d, &ll) == -1 || (d < 0 && d != -1) || d > 1e12)
			return -1;
		rs->cpu_time = d;
		return 0;
	case RUNNER_F_RSS:
		if (runner_number(v, len, 0, &d, &ll) == -1 || ll < -1)
			return -1;
		rs->max_rss = (int64_t)ll;
		return 0;
	case RUNNER_F_ENDED:
		if (runner_number(v, len, 1, &d, &ll) == -1 || d <= 0 || d > 1e11)
			return -1;
		rs->ended_at = d;
		return 0;
	case RUNNER_F_REASON:
		if (len >= sizeof(rs->reason))
			return -1;
		for (i = 0; i < len; i++)
			if (!runner_printable((unsigned char)v[i]))
				return -1;
		memcpy(rs->reason, v, len);
		rs->reason[len] = '\0';
		return 0;
	default:	/* "end" has no value */
		return len == 0 ? 0 : -1;
	}
}

/* An rs that says nothing is known; returns -1, for the callers' returns. */
static int
runner_status_none(struct runner_status *rs)
{
	memset(rs, 0, sizeof(*rs));
	rs->exit_code = -1;
	rs->cpu_time = -1;
	rs->max_rss = -1;
	return -1;
}

int
runner_status_parse(const char *buf, size_t len, struct runner_status *rs)
{
	const char *p = buf, *end = buf + len, *nl, *v;
	size_t klen;
	int f;

	memset(rs, 0, sizeof(*rs));
	if (buf == NULL || len == 0)
		goto bad;
	for (f = 0; f < RUNNER_NFIELDS; f++) {
		klen = strlen(runner_fields[f]);
		if ((nl = memchr(p, '\n', (size_t)(end - p))) == NULL ||
		    (size_t)(nl - p) < klen || memcmp(p, runner_fields[f], klen) != 0)
			goto bad;
		/* "KEY VALUE", or "end" alone */
		v = p + klen;
		if (f == RUNNER_F_END ? v != nl : *v != ' ')
			goto bad;
		if (v < nl)
			v++;
		if (runner_field(f, v, (size_t)(nl - v), rs) == -1)
			goto bad;
		p = nl + 1;
	}
	/* the rest of the reserved space is as fallocate left it */
	for (; p < end; p++)
		if (*p != '\0')
			goto bad;
	/* an exit status or a signal, never both */
	if ((rs->exit_code == -1) != (rs->signal > 0))
		goto bad;
	return 0;
bad:
	return runner_status_none(rs);
}

int
runner_status_format(const struct runner_status *rs, char *buf, size_t len)
{
	char reason[sizeof(rs->reason)], esc[8];
	const unsigned char *c;
	size_t r = 0, k;
	int n;

	/*
	 * Control characters as \n, \t, \r or \xHH, so that the reason stays
	 * on its line; cut where the next would not fit, as the parser takes
	 * no longer reason than struct runner_status holds.  It is shown to
	 * people, never read back into bytes: a backslash stays as it is.
	 */
	for (c = (const unsigned char *)rs->reason; c < (const unsigned char *)rs->reason +
	    sizeof(rs->reason) && *c != '\0'; c++) {
		if (runner_printable(*c)) {
			esc[0] = (char)*c;
			esc[1] = '\0';
		} else if (*c == '\n' || *c == '\t' || *c == '\r')
			snprintf(esc, sizeof(esc), "\\%c", *c == '\n' ? 'n' : *c == '\t' ? 't' : 'r');
		else
			snprintf(esc, sizeof(esc), "\\x%02x", *c);
		if (r + (k = strlen(esc)) >= sizeof(reason))
			break;
		memcpy(reason + r, esc, k);
		r += k;
	}
	reason[r] = '\0';
	n = snprintf(buf, len, "exit %d\nsignal %d\ncpu %.3f\nrss %lld\nended %.3f\nreason %s\nend\n",
	    rs->exit_code, rs->signal, rs->cpu_time, (long long)rs->max_rss, rs->ended_at, reason);
	return n < 0 || (size_t)n >= len ? -1 : n;
}

int
runner_status_read(const char *path, struct runner_status *rs)
{
	char buf[RUNNER_STATUS_SIZE * 2];
	size_t len = 0;
	ssize_t n;
	int fd;

	if ((fd = open(path, O_RDONLY | O_NOFOLLOW | O_CLOEXEC)) == -1)
		return runner_status_none(rs);
	while (len < sizeof(buf) && ((n = read(fd, buf + len, sizeof(buf) - len)) > 0 ||
	    (n == -1 && errno == EINTR)))
		len += n > 0 ? (size_t)n : 0;
	close(fd);
	/* a file that fills the buffer is no record of ours */
	if (len == sizeof(buf))
		return runner_status_none(rs);
	return runner_status_parse(buf, len, rs);
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
