/*
 * shim.c: nvq-shim, the supervisor of one job.
 *
 * nvqd starts it with posix_spawn (no copy of nvqd's memory), as
 *   nvq-shim -s STATUS -o OUT -e ERR -d CWD -u USER -U UID -G GID [-g GROUPS]
 *            [-D] [-P PRELOAD] [-m UMASK] [-r RLIMITS] [-c CGBASE -i ID]
 *            [-n MAXPROCS] [-M MEM] [-C CPUS] [-S SIG] [-E] [-w] [-a FDS] -- COMMAND [ARG...]
 * with an environment of nvqd's own, or started ahead of its job as
 *   nvq-shim -W
 * and given those arguments by nvqd later (shim_standby, at the end), so that
 * a job's start does not wait for an exec.  -w (a standby only): nvqd hands
 * the job over before its start is committed; the shim sets up and waits
 * for nvqd's word on its socket (the byte 'g') before it takes its ticket,
 * and undoes its setup and exits on end of file.  Its job's process starts
 * meanwhile too (credentials, output files, folder) and waits for the word
 * before it truncates its output and execs; called off, it removes the
 * output files it made, so a job that never ran leaves none.  -E says the job's environment is on its standard
 * input (a memfd, NUL-terminated strings), read at once and applied only in
 * the job's process once it dropped privileges (runner.h says why); without
 * -E (run by hand) the job gets the shim's.  GROUPS is a comma-separated list,
 * -D says to become UID, GID and GROUPS before the job runs, PRELOAD is a
 * library put first in the job's LD_PRELOAD (the job's, not the shim's),
 * UMASK (octal), RLIMITS (rlimits.h) and MAXPROCS are the administrator's
 * policy for the job, and CGBASE the folder where the job's cgroup v2 is made
 * (cgroup.h), named after ID and the shim's pid.  FDS (-a 012) says which
 * of the job's standard input, output and error are the shim's descriptors
 * 3, 4 and 5 (nvq run's own, passed to nvqd) instead of /dev/null and files.  MAXPROCS becomes the
 * cgroup's pids.max, or without one the job's RLIMIT_NPROC.  MEM (-M, bytes)
 * and CPUS (-C) are the job's host memory limit and CPU quota, set through
 * its cgroup (cglimit.h); a job the OOM killer ended there is recorded with
 * the reason STATUS_OOM.
 * It starts a session, becomes a child subreaper, and starts the job in a
 * process group (and cgroup) of its own, a session with -a 0 (nvq run's
 * pseudo-terminal, made the job's controlling terminal once the job's
 * process is the user's), then drops privileges.  It
 * forwards SIGTERM (and SIGINT, SIGHUP) to everything in the job, turns
 * SIGUSR2 into SIGKILL for it and SIGUSR1 into SIG (-S, the job's --signal
 * when it is preempted; SIGUSR1 by default), turns a SIGALRM nvqd queues
 * with a value into the job's warning before its time limit (--signal
 * [B:]SIG@TIME: to the job's process alone, or to all of it), waits for the job, kills what the job left
 * behind, and writes the exit status, CPU time and peak RSS to STATUS
 * (format in runner.h), so that they survive a restart of nvqd.  Failures
 * before exec reach the shim through a close-on-exec pipe and become the
 * reason: a job that cannot drop its privileges never runs.  The shim blocks
 * nowhere but in its wait for signals, so that a job is cancelled whatever
 * stage it is in: it reads that pipe once the job's process has ended, and
 * the job opens its output without blocking (a FIFO is refused).
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <limits.h>
#include <poll.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sched.h>
#include <linux/futex.h>
#include <linux/sched.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/sysmacros.h>
#include <sys/time.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "cglimit.h"
#include "cgroup.h"
#include "fdpass.h"
#include "portable.h"
#include "rlimits.h"
#include "share.h"
#include "status.h"

#define SHIM_MAX_GROUPS	1024
#define SHIM_WARN_BATCH		0x100	/* in a warning's value: the batch shell alone (runner.h) */
#define SHIM_LEFTOVER_GRACE_MS	1000	/* between SIGTERM and SIGKILL for what a job left */
#define SHIM_CHILD_STACK	(256 * 1024)	/* the job's process's, until it runs the job */
#define SHIM_END_FD	6	/* a standby's socket to nvqd, while the shim runs */

struct shim_spec {
	char		**argv;
	const char	*cwd, *out, *err, *status_path, *user;
	const char	*ticket;	/* the token of its start's ticket */
	uid_t		uid;
	gid_t		gid;
	int		drop;
	const char	*preload;
	gid_t		groups[SHIM_MAX_GROUPS];
	int		ngroups;
	int		umask;
	struct rlimits_entry rlimits[RLIMITS_MAX];
	int		nrlimits;
	char		cgroup[PATH_MAX];	/* "": none */
	int		env_on_stdin;	/* -E */
	int		attached[3];	/* -a: fd 3 + i is the job's fd i (nvq run's terminal) */
	int		preempt_sig;	/* -S: what SIGUSR1 from nvqd becomes (SIGUSR1) */
	char		**env;		/* the job's environment, or NULL: the shim's */
	long long	max_procs;	/* 0: no limit */
	int		procs_by_cgroup;	/* max_procs is the cgroup's pids.max */
	char		share[PATH_MAX];	/* the job's memory account (share.h); "": none */
	int		endfd;		/* a standby's socket to nvqd: the job's end is told on it */
	int		wait_go;	/* -w: a byte from nvqd on endfd before the ticket */
	uint64_t	host_mem;	/* -M: the job's memory limit, bytes; 0: none */
	int		cpus;		/* -C: its CPU quota; 0: none */
	struct cglimit	lim;		/* where they are set (v1 folders) */
};

extern char **environ;

static void __attribute__((noreturn))
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

/*
 * An output file of the job, in the job's process: a regular file or the
 * null device, nothing whose open or writes could block the job before it
 * runs (a FIFO nobody reads, a device).  Fails the job if it is anything else.
 */
static int
shim_open_out(const char *path, int efd, int *made)
{
	int flags = O_WRONLY | O_CREAT | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC;
	struct stat st;
	int fd, fl;

	/*
	 * made (a job's process started before nvqd's word): not truncated yet,
	 * and whether it made the file, to remove it should the start be called off
	 */
	if (made != NULL) {
		fd = open(path, flags | O_EXCL, 0644);
		*made = fd != -1;
		if (fd == -1 && errno == EEXIST)
			fd = open(path, flags, 0644);
	} else
		fd = open(path, flags | O_TRUNC, 0644);
	if (fd == -1) {
		/* a FIFO without a reader, a socket, a device that is not there */
		if (errno == ENXIO)
			shim_fail(efd, 126, "cannot open %s: not a regular file", path);
		shim_fail(efd, 126, "cannot open %s: %s", path, shim_strerror(errno));
	}
	if (fstat(fd, &st) == -1)
		shim_fail(efd, 126, "cannot open %s: %s", path, shim_strerror(errno));
	if (!S_ISREG(st.st_mode) && !(S_ISCHR(st.st_mode) && st.st_rdev == makedev(1, 3)))
		shim_fail(efd, 126, "cannot open %s: not a regular file", path);
	if ((fl = fcntl(fd, F_GETFL)) == -1 || fcntl(fd, F_SETFL, fl & ~O_NONBLOCK) == -1)
		shim_fail(efd, 126, "cannot open %s: %s", path, shim_strerror(errno));
	return fd;
}

/*
 * The job's environment, made in the shim before the job's process starts
 * (that process shares the shim's memory until it runs the job, and
 * allocates nothing): its own (when nvqd passed it), with the hook first in
 * its LD_PRELOAD, the job's memory account and its supervisor.  Applied in
 * the job's process only once it dropped privileges.  0, or -1 with errno.
 */
static int
shim_job_env(struct shim_spec *s)
{
	char **src = s->env != NULL ? s->env : environ, **env, *v;
	const char *old = NULL;
	size_t count, len, i = 0;

	if (s->preload == NULL) {
		s->env = src;
		return 0;
	}
	for (count = 0; src[count] != NULL; count++)
		;
	if ((env = calloc(count + 4, sizeof(*env))) == NULL)
		return -1;
	/* the job's own, but for what the shim sets */
	for (; *src != NULL; src++)
		if (strncmp(*src, "LD_PRELOAD=", 11) == 0)
			old = old != NULL ? old : *src + 11;
		else if (strncmp(*src, "NVQ_SHARE=", 10) != 0 &&
		    strncmp(*src, "NVQ_SUPERVISOR=", 15) != 0)
			env[i++] = *src;
	/* the hook first, then whatever the job preloads itself */
	len = strlen(s->preload) + (old ? strlen(old) : 0) + 16;
	if ((v = malloc(len)) == NULL)
		goto fail;
	snprintf(v, len, "LD_PRELOAD=%s%s%s", s->preload, old && *old ? " " : "", old ? old : "");
	env[i++] = v;
	/* the hook's account shared by every process of the job; without it each counts alone */
	if (*s->share != '\0') {
		len = strlen(s->share) + 16;
		if ((v = malloc(len)) == NULL)
			goto fail;
		snprintf(v, len, "NVQ_SHARE=%s", s->share);
		env[i++] = v;
	}
	/* the job's processes are the shim's descendants: for the hook's CUDA IPC */
	if ((v = malloc(48)) == NULL)
		goto fail;
	snprintf(v, 48, "NVQ_SUPERVISOR=%d", (int)getpid());
	env[i++] = v;
	env[i] = NULL;
	s->env = env;
	return 0;
fail:
	free(env);
	errno = ENOMEM;
	return -1;
}

/*
 * The job's process, started with CLONE_VM (shim_start_job), born in the
 * job's cgroup or moved into it here.  Until it runs the job it runs
 * on the shim's memory (no copy of its page tables, no copy-on-write
 * faults), beside the shim, which goes on waiting for signals (so that a
 * job is cancelled even while its exec blocks, which CLONE_VFORK would not
 * allow).  So it only makes system calls, allocates nothing and writes only
 * its own stack and errno, and reads only what the shim no longer changes
 * (and its gate, atomically): never returns.  errno is the shim's too:
 * should a signal for the job come, or the shim wait for nvqd's word (-w),
 * in the instant a step fails, the reason might name the wrong error.
 */
struct shim_child {
	const struct shim_spec *s;
	int		efd;	/* the write end of the failure pipe */
	int		born_in;	/* started in the job's cgroup (clone3): no move */
	/*
	 * Started before nvqd's word (-w): it sets up, then waits on gate (a
	 * futex: 0 wait, SHIM_GATE_GO run the job, SHIM_GATE_OFF remove the
	 * output files it made and exit) before it truncates them and execs.
	 */
	int		early;
	int		gate;
	pid_t		shim;	/* the shim's pid: a child whose shim died does not wait */
};

enum { SHIM_GATE_WAIT, SHIM_GATE_GO, SHIM_GATE_OFF };

/* The early child's wait for the gate; its value. */
static int
shim_gate_wait(int *gate)
{
	int g;

	while ((g = __atomic_load_n(gate, __ATOMIC_ACQUIRE)) == SHIM_GATE_WAIT)
		syscall(SYS_futex, gate, FUTEX_WAIT_PRIVATE, SHIM_GATE_WAIT, NULL, NULL, 0);
	return g;
}

/* Opens the gate of an early child (shim_child.early) with g. */
static void
shim_gate_open(int *gate, int g)
{
	__atomic_store_n(gate, g, __ATOMIC_RELEASE);
	syscall(SYS_futex, gate, FUTEX_WAKE_PRIVATE, 1, NULL, NULL, 0);
}

static int
shim_job(void *arg)
{
	struct shim_child *c = arg;
	const struct shim_spec *s = c->s;
	int in, out, err, dir, efd = c->efd, made_out = 0, made_err = 0;
	struct stat st;
	sigset_t none;

	sigemptyset(&none);	/* the job gets every signal the shim waits for */
	sigprocmask(SIG_SETMASK, &none, NULL);
	/*
	 * On nvq run's pseudo-terminal (its stdin passed): a session of its
	 * own, whose controlling terminal the pty becomes once this process is
	 * the user's (below); else a process group.  Either way its group is
	 * its pid, as the shim's signals expect.
	 */
	if (s->attached[0])
		setsid();
	else
		setpgid(0, 0);
	/* joined while still root: the cgroup's files are root's */
	if (*s->cgroup != '\0' && !c->born_in && cgroup_enter(s->cgroup) == -1)
		shim_fail(efd, 126, "cannot enter the cgroup %s: %s", s->cgroup,
		    shim_strerror(errno));
	if (cglimit_enter(&s->lim) == -1)
		shim_fail(efd, 126, "cannot enter its memory and CPU cgroups: %s",
		    shim_strerror(errno));
	if (rlimits_apply(s->rlimits, s->nrlimits) == -1)
		shim_fail(efd, 126, "cannot set the resource limits: %s", shim_strerror(errno));
	/* per user, not per job, where no cgroup counts the job's processes */
	if (s->max_procs > 0 && !s->procs_by_cgroup &&
	    rlimits_lower(RLIMIT_NPROC, (rlim_t)s->max_procs) == -1)
		shim_fail(efd, 126, "cannot limit its processes to %lld: %s", s->max_procs,
		    shim_strerror(errno));
	/*
	 * The system calls themselves, for this process alone: glibc's wrappers
	 * would set the credentials of every thread they know of.
	 */
	if (s->drop) {
		if (syscall(SYS_setgroups, (size_t)s->ngroups, s->groups) == -1)
			shim_fail(efd, 126, "cannot set the groups of %s: %s", s->user,
			    shim_strerror(errno));
		if (syscall(SYS_setresgid, s->gid, s->gid, s->gid) == -1)
			shim_fail(efd, 126, "cannot set gid %u: %s", (unsigned)s->gid,
			    shim_strerror(errno));
		/*
		 * The uid in two steps.  A change of the effective uid makes
		 * this memory, the shim's too, as dumpable as fs.suid_dumpable
		 * says: with 1, traceable by the user, who could then write
		 * root's shim.  With root's saved uid left it is not the user's
		 * to trace; made undumpable meanwhile, it stays so once the
		 * saved uid goes too (no effective id changes), until the
		 * exec gives the job a memory of its own, dumpable as any.
		 */
		if (syscall(SYS_setresuid, s->uid, s->uid, 0) == -1 ||
		    prctl(PR_SET_DUMPABLE, 0) == -1 ||
		    syscall(SYS_setresuid, s->uid, s->uid, s->uid) == -1)
			shim_fail(efd, 126, "cannot set uid %u: %s", (unsigned)s->uid,
			    shim_strerror(errno));
		if (s->uid != 0 && (syscall(SYS_setresuid, 0, 0, 0) != -1 || geteuid() == 0))
			shim_fail(efd, 126, "privileges could be regained after dropping them");
	}
	umask((mode_t)s->umask);
	/* nvq run's: given by the user, used as they are, opened by no one here */
	if (s->attached[0])
		in = 3;
	else if ((in = open("/dev/null", O_RDONLY | O_CLOEXEC)) == -1)
		shim_fail(efd, 126, "cannot open /dev/null: %s", shim_strerror(errno));
	out = s->attached[1] ? 4 : shim_open_out(s->out, efd, c->early ? &made_out : NULL);
	if (s->attached[2])
		err = 5;
	else if (strcmp(s->out, s->err) == 0 && !s->attached[1])
		err = out;
	else
		err = shim_open_out(s->err, efd, c->early ? &made_err : NULL);
	/* nvq sends getcwd's path, which has no link in it: one planted since is not followed */
	if ((dir = open(s->cwd, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC)) == -1 ||
	    fchdir(dir) == -1)
		shim_fail(efd, 126, "cannot enter %s: %s", s->cwd, shim_strerror(errno));
	close(dir);
	if (c->early) {
		/* killed with its shim while it waits (its credentials are the user's now) */
		prctl(PR_SET_PDEATHSIG, SIGKILL);
		if (getppid() != c->shim || shim_gate_wait(&c->gate) != SHIM_GATE_GO) {
			/* called off: the job never ran, so no output of it is left */
			if (made_out)
				unlink(s->out);
			if (made_err && err != out)
				unlink(s->err);
			_exit(0);
		}
		prctl(PR_SET_PDEATHSIG, 0);	/* the job outlives its shim, as any job */
		/* the truncation its open left for the start */
		if (!s->attached[1] && !made_out && fstat(out, &st) == 0 && S_ISREG(st.st_mode) &&
		    ftruncate(out, 0) == -1)
			shim_fail(efd, 126, "cannot truncate %s: %s", s->out, shim_strerror(errno));
		if (!s->attached[2] && err != out && !made_err && fstat(err, &st) == 0 &&
		    S_ISREG(st.st_mode) && ftruncate(err, 0) == -1)
			shim_fail(efd, 126, "cannot truncate %s: %s", s->err, shim_strerror(errno));
	}
	if (dup2(in, 0) == -1 || dup2(out, 1) == -1 || dup2(err, 2) == -1)
		shim_fail(efd, 126, "dup2: %s", shim_strerror(errno));
	/*
	 * nvq run's terminal becomes the job's controlling terminal, its group
	 * the foreground one: job control, and Ctrl-C, Ctrl-Z, Ctrl-\ for the
	 * job's foreground.  Done as the user (never a user's tty acted on as
	 * root), with 0: a terminal that is another session's is not taken.
	 * Not a terminal (a pipe), or one that is: the job runs without one.
	 */
	if (s->attached[0])
		(void)ioctl(0, TIOCSCTTY, 0);
	/* last: the job's PATH is searched, as glibc's execvp would (portable.h) */
	shim_execvpe(s->argv[0], s->argv, s->env);
	shim_fail(efd, errno == ENOENT ? 127 : 126, "cannot execute %s: %s", s->argv[0],
	    shim_strerror(errno));
	return 127;
}

/*
 * clone3 with CLONE_VM: the child runs fn(arg) on the stack in args and
 * exits with what it returns (it never does: shim_job execs or _exits).
 * Neither glibc nor musl wraps clone3, and a child on a new stack cannot
 * return through a C wrapper, so this is the system call itself, for
 * x86-64.  The child's pid, or -errno.
 */
__attribute__((visibility("hidden"))) long shim_clone3_vm(struct clone_args *args,
    size_t size, int (*fn)(void *), void *arg);
#if defined(__x86_64__)
__asm__(
	".text\n"
	".globl shim_clone3_vm\n"
	".hidden shim_clone3_vm\n"
	".type shim_clone3_vm, @function\n"
	"shim_clone3_vm:\n"
	"	movq %rdx, %r8\n"		/* fn and arg, in registers the child gets too */
	"	movq %rcx, %r9\n"
	"	movl $435, %eax\n"		/* __NR_clone3 */
	"	syscall\n"
	"	testq %rax, %rax\n"
	"	jnz 1f\n"
	"	xorl %ebp, %ebp\n"		/* the child, at the top of its stack */
	"	movq %r9, %rdi\n"
	"	call *%r8\n"
	"	movl %eax, %edi\n"
	"	movl $60, %eax\n"		/* __NR_exit */
	"	syscall\n"
	"	hlt\n"
	"1:	ret\n"
	".size shim_clone3_vm, .-shim_clone3_vm\n");
#else
#error "shim_clone3_vm is written for x86-64 only"
#endif

/*
 * Starts the job's process (shim_job) on stack, sharing the shim's memory
 * (CLONE_VM: no copy of its page tables, no copy-on-write faults), and,
 * with clone3's CLONE_INTO_CGROUP (Linux 5.7), born in the job's cgroup:
 * no move through cgroup.procs, whose write waits for an RCU grace period
 * now and then (13 ms in one trace).  Where the kernel cannot, the C
 * library's clone, and shim_job joins the cgroup itself.  The pid, or -1 with errno.
 */
static pid_t
shim_start_job(struct shim_child *c, char *stack, size_t size)
{
	struct clone_args ca;
	long r;
	int dfd;

	if (*c->s->cgroup != '\0' &&
	    (dfd = open(c->s->cgroup, O_RDONLY | O_DIRECTORY | O_CLOEXEC)) != -1) {
		memset(&ca, 0, sizeof(ca));
		ca.flags = CLONE_VM | CLONE_INTO_CGROUP;
		ca.exit_signal = SIGCHLD;
		ca.stack = (uint64_t)(uintptr_t)stack;
		ca.stack_size = size;
		ca.cgroup = (uint64_t)dfd;
		c->born_in = 1;
		r = shim_clone3_vm(&ca, sizeof(ca), shim_job, c);
		close(dfd);
		if (r > 0)
			return (pid_t)r;
		c->born_in = 0;
	}
	return clone(shim_job, stack + size, CLONE_VM | SIGCHLD, c);
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

/* sig to the job's process group, and to everything in its cgroup. */
static void
shim_signal(const struct shim_spec *s, pid_t job, int sig)
{
	kill(-job, sig);
	if (*s->cgroup == '\0')
		return;
	if (sig == SIGKILL)
		cgroup_kill(s->cgroup);
	else
		cgroup_signal(s->cgroup, sig, job);	/* those not in its process group */
}

/*
 * sig to a running job (not reaped: its pid is still its own).  One on nvq
 * run's terminal makes its session first thing; until then its group is
 * the shim's, so its process gets sig itself.
 */
static void
shim_forward(const struct shim_spec *s, pid_t job, int sig)
{
	if (s->attached[0] && getpgid(job) != job)
		kill(job, sig);
	shim_signal(s, job, sig);
}

/*
 * nvqd's warning before the time limit (--signal [B:]SIG@TIME, sigqueue'd
 * as SIGALRM): SIG in the value's low byte, SHIM_WARN_BATCH for the job's
 * own process alone (Slurm's B:, the batch shell), else all of the job.
 */
static void
shim_warn(const struct shim_spec *s, pid_t job, int v)
{
	int sig = v & 0xff;

	if (sig < 1 || sig > 64 || sig == SIGKILL || sig == SIGSTOP)
		return;
	if (v & SHIM_WARN_BATCH)
		kill(job, sig);
	else
		shim_forward(s, job, sig);
}

static double
shim_now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_REALTIME, &ts);
	return (double)ts.tv_sec + ts.tv_nsec / 1e9;
}

/*
 * Opens the status file, its blocks reserved, when the job starts: on a
 * full disk its end can still be recorded.  trunc: empties it (else it is
 * the ticket just taken, which holds no record).  The descriptor, or -1.
 */
static int
shim_status_open(const char *path, int trunc)
{
	int fd;

	if ((fd = open(path, O_RDWR | O_CREAT | (trunc ? O_TRUNC : 0) | O_NOFOLLOW | O_CLOEXEC,
	    0600)) == -1)
		return -1;
	/*
	 * Blocks past its end, so that it stays empty (no record) until the
	 * record is written into them; where that is not supported, zeros,
	 * which status_parse also takes for no record.
	 */
	if (fallocate(fd, FALLOC_FL_KEEP_SIZE, 0, STATUS_SIZE) == -1)
		posix_fallocate(fd, 0, STATUS_SIZE);
	return fd;
}

/* The record, in place, with one write, its end line last (runner.h). */
static void
shim_write_status(int fd, const char *path, const struct status_record *rs)
{
	char buf[STATUS_SIZE];
	int n;

	if (fd == -1 && (fd = shim_status_open(path, 1)) == -1)
		return;
	if ((n = status_format(rs, buf, sizeof(buf))) > 0)
		while (pwrite(fd, buf, (size_t)n, 0) == -1 && errno == EINTR)
			;
	/* no fsync: this must outlive nvqd, not a power cut (which ends the job too) */
	close(fd);
}

/*
 * Reads the job's environment from standard input (-E): NUL-terminated
 * strings, into s->env.  0, or -1 with errno.
 */
static int
shim_read_env(struct shim_spec *s)
{
	size_t len = 0, cap = 65536, count = 0, i = 0;
	char *buf, *p, *nbuf;
	ssize_t n;

	if ((buf = malloc(cap + 1)) == NULL)
		return -1;
	for (;;) {
		if (len == cap) {
			if ((nbuf = realloc(buf, cap * 2 + 1)) == NULL)
				goto fail;
			buf = nbuf;
			cap *= 2;
		}
		if ((n = read(0, buf + len, cap - len)) == 0)
			break;
		if (n == -1 && errno != EINTR)
			goto fail;
		len += n > 0 ? (size_t)n : 0;
	}
	buf[len] = '\0';	/* in case the last string lacks its own */
	for (p = buf; p < buf + len; p += strlen(p) + 1)
		count++;
	if ((s->env = calloc(count + 1, sizeof(*s->env))) == NULL)
		goto fail;
	for (p = buf; p < buf + len; p += strlen(p) + 1)
		s->env[i++] = p;
	return 0;
fail:
	free(buf);
	return -1;
}

/* Blocks, into *set, the signals the shim waits for (its job's, then the job's end). */
static void
shim_block(sigset_t *set)
{
	sigemptyset(set);
	sigaddset(set, SIGCHLD);
	sigaddset(set, SIGTERM);
	sigaddset(set, SIGINT);
	sigaddset(set, SIGHUP);
	sigaddset(set, SIGUSR2);
	sigaddset(set, SIGUSR1);
	sigaddset(set, SIGALRM);
	sigprocmask(SIG_SETMASK, set, NULL);
}

/*
 * Calls off an early child (shim_child.early) waiting at its gate: it
 * removes the output files it made and exits; killed if it is not gone
 * within a second (an open that hangs).
 */
static void
shim_call_off(struct shim_child *c, pid_t job)
{
	int st, i;

	shim_gate_open(&c->gate, SHIM_GATE_OFF);
	for (i = 0; i < 1000 && waitpid(job, &st, WNOHANG) == 0; i++)
		usleep(1000);
	if (i == 1000) {
		kill(job, SIGKILL);
		while (waitpid(job, &st, 0) == -1 && errno == EINTR)
			;
	}
}

/* Removes the job's memory account and the table of exports its hooks made beside it. */
static void
shim_unlink_share(const struct shim_spec *s)
{
	char x[PATH_MAX + sizeof(SHARE_XREG_SUFFIX)];

	unlink(s->share);
	snprintf(x, sizeof(x), "%s%s", s->share, SHARE_XREG_SUFFIX);
	unlink(x);
}

/* Undoes what the shim set up for its job: its cgroup (empty) and memory account. */
static void
shim_undo(const struct shim_spec *s)
{
	if (*s->cgroup != '\0')
		rmdir(s->cgroup);
	cglimit_remove(&s->lim);
	if (*s->share != '\0')
		shim_unlink_share(s);
}

/*
 * nvqd's word on fd (a standby's socket) that the start is committed: the
 * byte 'g'.  Anything else (end of file: nvqd could not commit it, or
 * stopped) is no.  Signals stay blocked meanwhile: one for the job waits.
 */
static int
shim_go(int fd)
{
	struct pollfd pfd = { .fd = fd, .events = POLLIN };
	char c = 0;
	ssize_t n;

	if (fd < 0)
		return 0;
	while (poll(&pfd, 1, -1) == -1)
		if (errno != EINTR)
			return 0;
	while ((n = recv(fd, &c, 1, MSG_DONTWAIT)) == -1 && errno == EINTR)
		;
	return n == 1 && c == 'g';
}

/* The shim's life: start the job, forward signals, record how it ended. */
static void __attribute__((noreturn))
shim_shim(struct shim_spec *s)
{
	struct status_record rs;
	struct rusage ru;
	sigset_t set;
	siginfo_t si;
	struct shim_child child;
	pid_t job = -1, p;
	int efd[2], st, fd, sfd, i, done = 0, env_errno = 0, setup_errno = 0;
	void *stack = MAP_FAILED;
	char ticket[PATH_MAX + 80];
	ssize_t n;

	setsid();	/* nvqd asked posix_spawn for it too; harmless twice */
	prctl(PR_SET_CHILD_SUBREAPER, 1);
	/* posix_spawn reset every signal to its default and unblocked them all */
	shim_block(&set);
	/* a memfd: reading it never blocks */
	if (s->env_on_stdin && shim_read_env(s) == -1)
		env_errno = errno ? errno : ENOMEM;
	if ((fd = open("/dev/null", O_RDWR)) != -1) {
		dup2(fd, 0);
		dup2(fd, 1);
		dup2(fd, 2);
	}
	/* -a's descriptors stay, for the job alone: closed at its exec and here after its clone */
	for (i = 0; i < 3; i++)
		if (!s->attached[i] || fcntl(3 + i, F_SETFD, FD_CLOEXEC) == -1)
			close(3 + i);
	/* a standby's socket on 6 (closed at the job's exec), nothing else */
	if (s->endfd >= 0 && s->endfd != SHIM_END_FD) {
		if (dup3(s->endfd, SHIM_END_FD, O_CLOEXEC) == -1) {
			close(s->endfd);
			s->endfd = -1;
		} else {
			close(s->endfd);
			s->endfd = SHIM_END_FD;
		}
	}
	shim_closefrom(s->endfd >= 0 ? SHIM_END_FD + 1 : SHIM_END_FD);

	/*
	 * What can be undone first: the job's cgroup, its memory account, its
	 * environment, the failure pipe and its process's stack.  Then, for a
	 * standby told to (-w), nvqd's word that the start is committed: the
	 * setup overlaps nvqd's commit.  Then the start's ticket (runner.h),
	 * taken: it becomes the status file, empty or zeros (a spare), so no
	 * record.  Without the word or the ticket (nvqd voided this start),
	 * it undoes its setup and exits.
	 */
	if (*s->cgroup != '\0' && mkdir(s->cgroup, 0755) == -1 && errno != EEXIST)
		s->cgroup[0] = '\0';	/* a process group, as without cgroups */
	s->procs_by_cgroup = s->max_procs > 0 && *s->cgroup != '\0' &&
	    cgroup_pids_max(s->cgroup, s->max_procs) == 0;
	/* where no controller can be had, it runs without (nvqd's log says so) */
	if (*s->cgroup != '\0' && (s->host_mem > 0 || s->cpus > 0))
		cglimit_set(&s->lim, s->cgroup, s->host_mem, s->cpus);
	/* the job's memory account, for the hook in each of its processes */
	if (s->preload != NULL && share_create(s->share, sizeof(s->share), s->drop ? s->uid :
	    getuid(), s->drop ? s->gid : getgid()) == -1)
		s->share[0] = '\0';
	if (env_errno == 0 && shim_job_env(s) == -1)
		env_errno = errno;
	/* the read end never blocks the shim: it is read once the job's process ended */
	if (pipe2(efd, O_CLOEXEC) == -1 || fcntl(efd[0], F_SETFL, O_NONBLOCK) == -1 ||
	    (stack = mmap(NULL, SHIM_CHILD_STACK, PROT_READ | PROT_WRITE,
	    MAP_PRIVATE | MAP_ANONYMOUS | MAP_STACK, -1, 0)) == MAP_FAILED)
		setup_errno = errno ? errno : ENOMEM;
	snprintf(ticket, sizeof(ticket), "%s.%s.ticket", s->status_path, s->ticket);
	child.s = s;
	child.born_in = 0;
	child.efd = efd[1];
	child.gate = SHIM_GATE_WAIT;
	child.shim = getpid();
	/*
	 * Told to wait for nvqd's word: the job's process starts now and sets
	 * up (its cgroup, credentials, output files, folder) meanwhile, then
	 * waits at its gate, before its exec, for the word and the ticket.
	 */
	child.early = s->wait_go && env_errno == 0 && setup_errno == 0;	/* before it runs */
	if (child.early && (job = shim_start_job(&child, stack, SHIM_CHILD_STACK)) == -1)
		child.early = 0;
	if ((s->wait_go && !shim_go(s->endfd)) || rename(ticket, s->status_path) == -1) {
		if (child.early)
			shim_call_off(&child, job);
		shim_undo(s);
		_exit(0);
	}
	memset(&rs, 0, sizeof(rs));
	rs.exit_code = -1;
	rs.max_rss = -1;
	rs.cpu_time = -1;
	sfd = shim_status_open(s->status_path, 0);
	if (child.early)
		shim_gate_open(&child.gate, SHIM_GATE_GO);
	else if (env_errno != 0 || setup_errno != 0 ||
	    (job = shim_start_job(&child, stack, SHIM_CHILD_STACK)) == -1) {
		rs.exit_code = 126;
		snprintf(rs.reason, sizeof(rs.reason), "%s: %s", env_errno ?
		    "cannot read its environment" : "cannot start",
		    shim_strerror(env_errno ? env_errno : setup_errno ? setup_errno : errno));
		rs.ended_at = shim_now();
		shim_undo(s);
		shim_write_status(sfd, s->status_path, &rs);
		_exit(0);
	}
	/* the stack stays: the job's process may still be on it */
	/* also here, so that kill(-job) works at once; a session it makes itself */
	if (!s->attached[0])
		setpgid(job, job);
	close(efd[1]);
	/* nvq run's terminal is the job's, not its supervisor's to keep open */
	for (i = 0; i < 3; i++)
		if (s->attached[i])
			close(3 + i);

	while (!done) {
		if (sigwaitinfo(&set, &si) == -1)
			continue;
		if (si.si_signo == SIGTERM || si.si_signo == SIGINT || si.si_signo == SIGHUP)
			shim_forward(s, job, SIGTERM);
		else if (si.si_signo == SIGUSR2)
			shim_forward(s, job, SIGKILL);
		else if (si.si_signo == SIGUSR1)
			shim_forward(s, job, s->preempt_sig);	/* preempted: the job's --signal */
		else if (si.si_signo == SIGALRM && si.si_code == SI_QUEUE)
			shim_warn(s, job, si.si_value.sival_int);
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
	/* why it could not start, if it could not: written before it exited, small */
	while ((n = read(efd[0], rs.reason, sizeof(rs.reason) - 1)) == -1 && errno == EINTR)
		;
	rs.reason[n > 0 ? n : 0] = '\0';
	close(efd[0]);
	/*
	 * The job is over: what it left behind goes too, so that its GPUs are
	 * free: its group and cgroup, then, if any orphan reparented to us is
	 * left (it escaped the group), a scan of /proc for our children.
	 */
	for (i = 0; i < 400; i++) {
		while ((p = waitpid(-1, &st, WNOHANG)) > 0)
			;
		if (p == -1 && errno == ECHILD && (*s->cgroup == '\0' || cgroup_empty(s->cgroup)))
			break;
		/* SIGTERM, and SIGKILL for what is still there a second later */
		if (i == 0)
			shim_signal(s, job, SIGTERM);
		else if (i >= SHIM_LEFTOVER_GRACE_MS / 5) {
			shim_signal(s, job, SIGKILL);
			shim_kill_children();
		}
		usleep(5000);
	}
	/*
	 * The record, then nvqd told (a standby's socket): it records the end
	 * while the shim cleans up; without the socket it waits for the exit.
	 */
	/* killed for its --mem (not a job that ended well after a child was) */
	if (rs.reason[0] == '\0' && (rs.exit_code != 0 || rs.signal != 0) && s->host_mem > 0 &&
	    *s->cgroup != '\0' && cglimit_oom_kills(&s->lim, s->cgroup) > 0)
		snprintf(rs.reason, sizeof(rs.reason), "%s", STATUS_OOM);
	shim_write_status(sfd, s->status_path, &rs);
	if (s->endfd >= 0)
		while (send(s->endfd, "e", 1, MSG_NOSIGNAL | MSG_DONTWAIT) == -1 && errno == EINTR)
			;
	if (*s->cgroup != '\0')
		rmdir(s->cgroup);
	cglimit_remove(&s->lim);
	if (*s->share != '\0')
		shim_unlink_share(s);
	_exit(0);
}


static int
shim_number(const char *s, int base, unsigned long *v)
{
	char *end;

	errno = 0;
	*v = strtoul(s, &end, base);
	return *s == '\0' || *end != '\0' || errno != 0 ? -1 : 0;
}

static int
shim_usage(const char *why)
{
	fprintf(stderr, "nvq-shim: %s (it is run by nvqd, not by hand)\n", why);
	return 2;
}

static int	shim_place(const struct shim_spec *, const int *, int);

/*
 * The options and command of one job (the usage at the top): starts it,
 * never returns.  passed: from a standby, the descriptors shim_place puts
 * where an exec'd shim has them (NULL: exec'd).
 */
static int
shim_main(int argc, char **argv, const int *passed, int npassed, int endfd)
{
	static struct shim_spec s;
	unsigned long v, id = 0;
	const char *cgbase = NULL;
	char *tok, *save, err[200];
	int c;

	s.endfd = endfd;
	s.umask = 022;
	s.preempt_sig = SIGUSR1;
	while ((c = getopt(argc, argv, "+s:t:o:e:d:u:U:G:g:DP:m:r:c:i:n:ES:a:wM:C:")) != -1) {
		switch (c) {
		case 's': s.status_path = optarg; break;
		case 't':
			if (strlen(optarg) > 64 || strchr(optarg, '/') != NULL)
				return shim_usage("bad ticket");
			s.ticket = optarg;
			break;
		case 'o': s.out = optarg; break;
		case 'e': s.err = optarg; break;
		case 'd': s.cwd = optarg; break;
		case 'u': s.user = optarg; break;
		case 'U':
			if (shim_number(optarg, 10, &v) == -1)
				return shim_usage("bad uid");
			s.uid = (uid_t)v;
			break;
		case 'G':
			if (shim_number(optarg, 10, &v) == -1)
				return shim_usage("bad gid");
			s.gid = (gid_t)v;
			break;
		case 'g':
			for (tok = strtok_r(optarg, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
				if (s.ngroups == SHIM_MAX_GROUPS || shim_number(tok, 10, &v) == -1)
					return shim_usage("bad groups");
				s.groups[s.ngroups++] = (gid_t)v;
			}
			break;
		case 'D': s.drop = 1; break;
		case 'P': s.preload = optarg; break;
		case 'm':
			if (shim_number(optarg, 8, &v) == -1 || v > 0777)
				return shim_usage("bad umask");
			s.umask = (int)v;
			break;
		case 'r':
			if ((s.nrlimits = rlimits_parse(optarg, s.rlimits, err, sizeof(err))) == -1)
				return shim_usage(err);
			break;
		case 'c': cgbase = optarg; break;
		case 'i':
			if (shim_number(optarg, 10, &id) == -1)
				return shim_usage("bad job id");
			break;
		case 'n':
			if (shim_number(optarg, 10, &v) == -1 || v > 1UL << 30)
				return shim_usage("bad process limit");
			s.max_procs = (long long)v;
			break;
		case 'E': s.env_on_stdin = 1; break;
		case 'M':
			if (shim_number(optarg, 10, &v) == -1)
				return shim_usage("bad memory limit");
			s.host_mem = (uint64_t)v;
			break;
		case 'C':
			if (shim_number(optarg, 10, &v) == -1 || v > 65536)
				return shim_usage("bad CPU count");
			s.cpus = (int)v;
			break;
		case 'w': s.wait_go = 1; break;
		case 'a':
			for (tok = optarg; *tok != '\0'; tok++) {
				if (*tok < '0' || *tok > '2')
					return shim_usage("bad -a: a list of 0, 1, 2");
				s.attached[*tok - '0'] = 1;
			}
			break;
		case 'S':
			s.preempt_sig = atoi(optarg);
			if (s.preempt_sig < 1 || s.preempt_sig > 64)
				return shim_usage("bad signal");
			break;
		default:
			return shim_usage("unknown option");
		}
	}
	if (s.status_path == NULL || s.ticket == NULL || s.out == NULL || s.err == NULL || s.cwd == NULL ||
	    s.user == NULL || optind >= argc)
		return shim_usage("missing arguments");
	if (cgbase != NULL)
		cgroup_name(cgbase, (long long)id, getpid(), s.cgroup, sizeof(s.cgroup));
	s.argv = argv + optind;
	if (passed != NULL && shim_place(&s, passed, npassed) == -1)
		return shim_usage("bad descriptors from nvqd");
	shim_shim(&s);
	return 0;
}

/*
 * Standby (-W): started by nvqd ahead of its next job, so that the job's
 * start does not wait for an exec of the shim.  It waits on its
 * standard input, a socket only nvqd holds, for one message (fdpass.h): a
 * memfd holding the options and command nvqd would have passed to an
 * exec'd shim (NUL-terminated strings, from "nvq-shim"), the environment's
 * memfd, and the job's standard descriptors that -a names, in order.  Then
 * it goes on as a shim exec'd with those (shim_main).  End of file or
 * anything else: it exits, having done nothing (nvqd stopped, or gave up
 * on it).
 */
#define SHIM_STANDBY_MAX_ARGS	(4 << 20)

static int
shim_standby(void)
{
	struct pollfd pfd = { .fd = 0, .events = POLLIN };
	struct stat st;
	sigset_t set, none;
	int fds[FDPASS_MAX], n, i, argc = 0;
	char *args, *p, **argv;
	ssize_t r;
	size_t off = 0;

	/*
	 * Blocked from here on, but not while it waits: a signal sent to the
	 * standby itself (pkill nvq-shim) ends it, unused, rather than waiting
	 * to be forwarded to the next job.
	 */
	shim_block(&set);
	sigemptyset(&none);
	while (ppoll(&pfd, 1, NULL, &none) == -1)
		if (errno != EINTR)
			_exit(0);
	if ((n = fdpass_recv(0, fds, 5)) < 2)
		_exit(0);
	if (fstat(fds[0], &st) == -1 || st.st_size <= 0 || st.st_size > SHIM_STANDBY_MAX_ARGS ||
	    (args = malloc((size_t)st.st_size + 1)) == NULL)
		_exit(0);
	while (off < (size_t)st.st_size) {
		if ((r = pread(fds[0], args + off, (size_t)st.st_size - off, (off_t)off)) <= 0) {
			if (r == -1 && errno == EINTR)
				continue;
			_exit(0);
		}
		off += (size_t)r;
	}
	args[off] = '\0';
	close(fds[0]);
	for (p = args; p < args + off; p += strlen(p) + 1)
		argc++;
	if ((argv = calloc((size_t)argc + 1, sizeof(*argv))) == NULL)
		_exit(0);
	for (i = 0, p = args; p < args + off; p += strlen(p) + 1)
		argv[i++] = p;
	/* the socket stays, out of the way of 0 and 3 to 5: the job's end is told on it */
	return shim_main(argc, argv, fds + 1, n - 1, fcntl(0, F_DUPFD_CLOEXEC, 16));
}

/*
 * Puts the descriptors a standby got where an exec'd shim has them: the
 * environment's on 0 (the socket goes), then those -a names on 3 to 5.
 */
static int
shim_place(const struct shim_spec *s, const int *passed, int npassed)
{
	int hi[4], i, k = 1, want = 1;

	for (i = 0; i < 3; i++)
		want += s->attached[i];
	if (npassed != want)
		return -1;
	/* out of the way of 0 and 3 to 5 first */
	for (i = 0; i < npassed; i++) {
		if ((hi[i] = fcntl(passed[i], F_DUPFD, 16)) == -1)
			return -1;
		close(passed[i]);
	}
	if (dup2(hi[0], 0) == -1)
		return -1;
	close(hi[0]);
	for (i = 0; i < 3; i++)
		if (s->attached[i]) {
			if (dup2(hi[k], 3 + i) == -1)
				return -1;
			close(hi[k++]);
		}
	return 0;
}

int
main(int argc, char **argv)
{
	if (argc == 2 && strcmp(argv[1], "-W") == 0)
		return shim_standby();
	return shim_main(argc, argv, NULL, 0, -1);
}
