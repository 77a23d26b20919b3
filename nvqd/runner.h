/*
 * runner.h: starting a job under its supervisor, signalling it, and
 * finding it again.
 *
 * nvqd starts a supervisor, nvq-shim (nvq-shim/shim.c), for each job, with
 * posix_spawn: no copy of nvqd's memory, and a program of its own that
 * outlives nvqd.  The shim runs as root with an environment of nvqd's own
 * (PATH alone): the job's, which the submitter wrote, reaches it through a
 * memfd on its standard input and is applied only in the job's process,
 * after it dropped privileges, so that no LD_PRELOAD of a user's is loaded
 * by root.  The shim drops privileges, runs the job in a process group of
 * its own, and records how it ended in a status file (common/status.h).
 * Beside it, STATUS.TOKEN.ticket exists from before the start is committed
 * until the shim takes it (renames it to STATUS), so that a start nvqd may
 * have crashed in is either run once or voided, never both.  TOKEN is new
 * for each start: a shim of a voided start that is slow to take its ticket
 * must not take the ticket of the job's next start.  No libuv here.
 */
#ifndef NVQ_RUNNER_H
#define NVQ_RUNNER_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

struct runner_spec {
	int64_t		id;
	char *const	*argv;
	char *const	*envp;
	const char	*cwd;
	const char	*out, *err;
	const char	*status_path;
	const char	*ticket;	/* the TOKEN of the start's ticket */
	const char	*user;
	uid_t		uid;
	gid_t		gid;
	int		drop;		/* become uid, gid and groups */
	const char	*shim;		/* path of nvq-shim */
	const char	*preload;	/* the hook, put first in the job's LD_PRELOAD */
	const gid_t	*groups;	/* the user's supplementary groups */
	int		ngroups;
	int		umask;
	const char	*rlimits;	/* rlimits.h's text, or NULL */
	const char	*cgroup_base;	/* cgroup.h's base, or NULL: no cgroup */
	long long	max_procs;	/* processes per job ([limits] max_procs); 0: none */
	uint64_t	host_mem;	/* its host memory limit (--mem), bytes; 0: none */
	int		cpus;		/* its CPU quota (-c); 0: none */
	int		preempt_signal;	/* RUNNER_PREEMPT's signal (--signal); 0: SIGUSR1 */
	const int	*stdio;		/* NULL, or 3: the job's stdin, stdout, stderr (-1: its own) */
	/*
	 * Hand it to the standby only, before the start is committed (in
	 * the pass's transaction, or before its turn: engine.c's
	 * engine_ahead): the shim and the job's process set up and wait for
	 * runner_go (nvq-shim -w); no spawn if there is no standby, and the
	 * ticket stays for one after the commit
	 */
	int		prepare;
};

/*
 * Makes the ticket of a start (see above), before the start is committed;
 * removes an old status file.  The ticket is a spare (below) where there is
 * one.  0 or -1 with errno.
 */
int	runner_ticket(const char *status_path, const char *token, unsigned *spares);
/*
 * Spare status files.  A status file nvqd has read is emptied (its bytes
 * zeroed in place: no record is left in it, status.h) and kept beside the
 * others as spare.K, K < *spares (at most RUNNER_SPARES), to become a later
 * start's ticket, which the shim renames into its status file: no file is
 * made or removed for each job.  On ext4 without a journal every new inode
 * is looked for past those freed in the last minutes, so a file made and
 * removed per job made each start slower the more jobs had just run.
 */
#define RUNNER_SPARES	64
void	runner_recycle(const char *status_path, unsigned *spares);
/* Removes the spares in the status folder dir (nvqd's start: it counts from 0). */
void	runner_spares_clear(const char *dir);
/*
 * A shim started ahead of a job (nvq-shim -W), waiting on a socket for the
 * arguments an exec'd shim would get: a job then starts without waiting for
 * an exec.  pid -1: none.  Its pid is known before the start is committed,
 * so the start's transaction records it (engine.c), and it gets its job
 * before that commit (runner_spec.prepare): it sets up meanwhile, and takes
 * the start's ticket only after runner_go.  It started as nvqd's child and
 * a session of its own, with nvqd's clean environment, as any shim; it
 * exits unused when nvqd goes (end of file on the socket).
 */
struct runner_standby {
	pid_t		pid;
	int64_t		start;		/* its start time (proc.h), for pid_start */
	int		fd;		/* nvqd's end of the socket */
	/*
	 * After runner_spawn handed it a job: that socket, now the job's
	 * (-1: none), for the caller to take.  The shim sends one byte on it
	 * once the job's end is in its status file and the job's processes
	 * are gone, before its own cleanup and exit.
	 */
	int		taken_fd;
};
/* Starts one (the shim at path shim); 0, or -1 with errno and sb->pid -1. */
int	runner_standby_start(struct runner_standby *sb, const char *shim);
/* Kills and reaps an unused one. */
void	runner_standby_stop(struct runner_standby *sb);
/*
 * Starts the job's shim (runner_ticket first): hands it to the standby sb
 * where there is one (sb NULL or its pid -1: none), which is then used up
 * (pid -1), else, or if the standby is gone, spawns one.  Returns the
 * shim's pid, or -1 with a sentence in err.
 */
pid_t	runner_spawn(const struct runner_spec *, struct runner_standby *sb, char *err,
	    size_t errlen);
/*
 * Tells a shim prepared with runner_spec.prepare, on fd (its standby's
 * socket, sb->taken_fd then), that its start is committed.  0, or -1 (it
 * is gone; its ticket is not taken).  Closing fd instead calls it off.
 */
int	runner_go(int fd);
/*
 * The shim that records into status_path, found among the running
 * processes (for a job whose shim's pid never reached the database); or -1.
 * The youngest session leader, if a shim of a voided start is still there too
 * (the job's process, forked by the shim, has the shim's command line until
 * it execs).
 */
pid_t	runner_find_shim(const char *status_path);
/*
 * After a crash between committing a start and its shim running: voids the
 * start if its shim has not begun (1: it never will), else 0 (it began).
 * Every ticket of the job goes, whatever its token.
 */
int	runner_void_start(const char *status_path);
/*
 * The job's processes that have the CUDA driver mapped (so may hold GPU
 * memory), but the shim: those in its cgroup v2 folder where it has one,
 * else those in the shim's session.  Fills out (max), returns how many.
 */
int	runner_cuda_procs(pid_t shim, const char *cgroup, pid_t *out, int max);
/*
 * Asks the shim to signal its job: RUNNER_TERM (SIGTERM), RUNNER_KILL
 * (SIGKILL) or RUNNER_PREEMPT (the job's --signal, SIGUSR1 unless it said).
 * Through pidfd (a process nvqd knows to be the shim) where it is not -1.
 */
enum { RUNNER_TERM = 0, RUNNER_KILL = 1, RUNNER_PREEMPT = 2 };
int	runner_stop(pid_t shim, int pidfd, int how);
/*
 * Asks the shim to send sig to its job, to the job's own process alone
 * (batch: Slurm's B:, the batch shell) or to all of it: Slurm's --signal
 * warning before the time limit.  A SIGALRM queued with sig (and
 * RUNNER_WARN_BATCH) as its value, through pidfd where it is not -1.
 * 0, or -1 with errno.
 */
#define RUNNER_WARN_BATCH	0x100	/* the shim's SHIM_WARN_BATCH */
int	runner_warn(pid_t shim, int pidfd, int sig, int batch);

#endif
