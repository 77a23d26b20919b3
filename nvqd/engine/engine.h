/*
 * engine.h: the glue of nvqd.  It holds the active jobs in memory (the
 * database holds everything), runs a scheduling pass once per loop turn
 * after any kick, applies the plan (commit, then act), watches each job's
 * supervisor through a pidfd, and enforces time limits and cancels.
 * struct job and the table of a job's life are in job.h; engine.c and the
 * rooms that own each stage of that life are listed in engine_rooms.h.
 */
#ifndef NVQ_ENGINE_H
#define NVQ_ENGINE_H

#include <limits.h>
#include <stdint.h>
#include <sys/types.h>
#include <uv.h>

#include "config.h"
#include "deptab.h"
#include "fairshare.h"
#include "gpu.h"
#include "gpuctl.h"
#include "job.h"
#include "jobtab.h"
#include "notify.h"
#include "gate.h"
#include "waitq.h"
#include "parse.h"
#include "runner.h"
#include "sched.h"
#include "store.h"
#include "stored.h"

struct slurm;
struct susp_op;

struct engine {
	uv_loop_t	*loop;
	/* called after anything a watcher shows may have changed (watch.h) */
	void		(*on_change)(void *);
	struct config	cfg;
	const char	*config_path;
	struct store	*store;
	struct gpu_set	gpus;
	struct job	*jobs;		/* the active jobs */
	/*
	 * and by what a pass needs of them: the PENDING jobs that may start, in
	 * order per user and kind (waitq.h); the PENDING ones waiting for
	 * --after; the RUNNING and SUSPENDED ones
	 */
	struct waitq	wq;
	struct job	*deps;
	struct job	*held;
	uint64_t	drained;	/* GPUs drained by nvq drain, by index */
	char		drain_why[SCHED_MAX_GPUS][192];	/* a drained GPU's: who, and why */
	struct fairshare fs;		/* users' recent GPU use (fairshare.h) */
	struct notify_set notify;	/* notifiers of ended jobs (notify.h) */
	struct sched_pass pass;		/* the last pass, for sched_explain */
	unsigned	npass;
	struct jobtab	jobtab;		/* and by id */
	int		njobs;
	struct {			/* PENDING jobs per uid, for [limits] max_pending: */
		uint32_t uid;		/* kept by engine_state, engine_link, engine_drop; */
		int	pending;
		uint64_t stored;	/* the bytes its active jobs keep (max_stored): */
		int	lc;		/* its active --class lc jobs: engine_lc, engine_drop */
		int	attached;	/* its pending jobs holding nvq run's descriptors */
	}		*users;		/* engine_charge, engine_drop */
	int		nusers;
	struct stored	shared;		/* what jobs share, counted once (stored.h) */
	int		is_root;
	char		shim[PATH_MAX];	/* nvq-shim */
	char		hook[PATH_MAX];	/* libnvq-hook.so, or "" */
	char		ckpt[PATH_MAX];	/* nvq-ckpt, or "" */
	char		srun[PATH_MAX];	/* the folder of nvq's srun (bin/srun), or "" */
	struct susp_op	*ckpt_ready;	/* nvq-ckpts ready ahead, one per job at most (suspend.h) */
	double		switch_cost[SCHED_MAX_GPUS];	/* seconds of a suspend + resume there */
	char		boot_id[40];	/* this boot's, from /proc */
	unsigned long long ticket_base;	/* start tickets: nvqd's start time, in ns, */
	unsigned	tickets;	/* and a count */
	unsigned	spares;		/* spare status files (runner.h) */
	/* jobs ended this pass: their environments and status files go after its starts */
	int64_t		recycle[64];
	int		nrecycle;
	/*
	 * their environments, deleted in one commit once ENGINE_ENV_BATCH
	 * gathered or ENGINE_ENV_DELAY_MS after the first: not one commit per
	 * finished job
	 */
	int64_t		envgone[256];
	int		nenvgone;
	uv_timer_t	envgone_timer;
	struct runner_standby standby;	/* a shim started ahead of the next job (runner.h) */
	int		standby_taken;	/* promised to a start of this pass */
	/*
	 * The job predicted to start next (engine_ahead): handed to a standby
	 * before its turn, which sets up while the running jobs run; its start
	 * then only commits and says runner_go.  id 0: none.  next_*: the last
	 * pass's prediction.
	 */
	struct {
		int64_t		id;
		pid_t		pid;
		int64_t		start;	/* the standby's start time (proc.h) */
		int		fd;	/* its socket: runner_go, then the job's end */
		uint64_t	mask, granted;
	}		ahead;
	int64_t		next_id;
	uint64_t	next_mask;
	/* the next standby, started on libuv's thread pool (a spawn blocks until its exec) */
	uv_work_t	standby_work;
	struct runner_standby standby_next;	/* what standby_work started */
	int		standby_err;	/* its errno; 0: started */
	int		standby_busy;	/* standby_work is queued or running */
	char		cgroup_base[PATH_MAX];	/* where job cgroups go; "": none */
	uv_idle_t	kick;
	uv_timer_t	wake;
	uv_timer_t	poll;
	int		kicked;
	/*
	 * --after: who waits for whom; the jobs that ended with dependents and
	 * the jobs that came waiting, since the last pass (their ids); deps_all:
	 * look at every waiting job (memory ran out for the above)
	 */
	struct deptab	deptab;
	/* each active task filed under its array's id: how many an array has left, O(1) */
	struct deptab	arrtab;
	struct gates	gates;		/* arrays' limits */
	int64_t		*dep_ids;
	size_t		ndep_ids, dep_cap;
	int		deps_all;
	unsigned	dep_round;
	int		stopping;
	int		retry;		/* a commit failed: pass again within a second */
	int		unsynced;	/* ends committed, not yet synced (engine_finish) */
	/*
	 * The pass's ends, recorded in a transaction left open for the starts
	 * that follow them (one commit for both); a copy of each, to record
	 * them one by one should that commit fail (engine_ends_close)
	 */
	int		ends_open;
	unsigned long	ends_mark;	/* store_begins() once they were recorded */
	struct engine_end *ends;
	int		nends, cap_ends;
	/* the hook sessions (hooks.c) */
	struct hook_sess *sessions;
	struct lcbe	*lcbe;		/* the lc/be page and its slots (gpu/lcbe.c); NULL: none yet */
	/* GPU control (gpuctl.h): its state across jobs, and engine_gpu's */
	struct gpuctl_all gca;
	uv_timer_t	locks;		/* the next deadline gpuctl_pass found */
	/*
	 * When the loop's sockets were last read: a poll for I/O begins
	 * (io_prepare) at polling; once it has handed on what it read
	 * (io_check), every message sent before polling has been read, and
	 * read_from = polling.  A deadline for an answer is over only once
	 * read_from passes it (gpuctl.c), however long nvqd stood still.
	 */
	uv_prepare_t	io_prepare;
	uv_check_t	io_check;
	double		polling, read_from;
	int		gc_busy;	/* engine_gpu is dispatching */
	struct gc_event	*gcq;		/* events reported meanwhile, handled next */
	int		gcq_n, gcq_cap;
	/* how hooks.c and suspend.c report events: engine_gpu, set by engine_init */
	void		(*report)(struct engine *, const struct gc_event *);
	/*
	 * How the rooms (engine_rooms.h) ask engine.c for what it alone does,
	 * set by engine_init: engine_drop tells GPU control that a job no
	 * longer findable is gone (its dispatcher, with the job); engine_kick
	 * starts e->kick with the pass's callback.
	 */
	int		(*gpu_job)(struct engine *, struct job *, const struct gc_event *,
			    char *, size_t);
	uv_idle_cb	kick_cb;
	/* scratch for the scheduler, grown as needed */
	struct sched_job *sj;
	struct sched_decision *dec;
	int		*order;
	struct job	**map;
	struct {
		int64_t	id;
		pid_t	pid;
		int64_t	pid_start;
		const char *cgroup;
	}		*started;
	int		cap;
	/* [cluster] engine = slurm: the jobs Slurm runs (slurm.h); NULL: none */
	struct slurm	*slurm;
};

double	engine_now(void);
/*
 * (Re)arms a running job's time limit from its start, its limit and the
 * time it spent suspended since; stops it while the job is suspended.
 */
void	engine_limit(struct engine *, struct job *);
int	engine_init(struct engine *, uv_loop_t *);
/* After engine_init and recover_jobs: GPU use read again, its poll, a first pass. */
void	engine_run(struct engine *);
/*
 * For recover.c, a job's life as start-up finds it: its state changed
 * (keeping the per-user counts), room to follow its GPU use, its
 * supervisor watched through a pidfd, its timer armed in secs, its end
 * noticed (the next pass records it), its supervisor's status file.
 */
void	engine_state(struct engine *, struct job *, int state);
void	engine_track(struct engine *, struct job *);
/*
 * A recovered job's energy so far, read back from run_energy (recover.c);
 * then, once all are read, the energy of the time nvqd was away given to
 * the jobs that held each GPU (engine_run).
 */
void	engine_energy_load(struct engine *, struct job *);
void	engine_energy_recovered(struct engine *);
/*
 * A running job's energy so far over its GPUs (joules; unknown where any
 * GPU's is) and how it was measured (energy.h): 0, or -1 for a job not
 * followed (no GPUs, not running).
 */
int	engine_job_energy(const struct engine *, const struct job *, double *joules, int *how);
void	engine_watch(struct engine *, struct job *);
void	engine_arm(struct engine *, struct job *, double secs);
void	engine_job_ended(struct engine *, struct job *);
void	engine_status_path(struct engine *, int64_t id, char *, size_t);
/* Asks for a scheduling pass in this loop turn. */
void	engine_kick(struct engine *);
void	engine_reload(struct engine *);
void	engine_shutdown(struct engine *);
/* Frees what engine_init made, once the loop has ended. */
void	engine_free(struct engine *);
/* The active job id, or NULL. */
struct job *engine_find(struct engine *, int64_t);
/*
 * The one place a GPU-control event is handled (gpuctl.h): an event that
 * comes while one is being handled is queued and handled in the same
 * dispatch, then gpuctl's pass runs, its timer is armed once, and what
 * gpuctl asked of the engine is done.  Returns gpuctl_event's answer to a
 * request (0, or -1 with a sentence in err).
 */
int	engine_gpu(struct engine *, const struct gc_event *, char *err, size_t errlen);
/* How many PENDING jobs uid has, counted as they come and go, not scanned. */
int	engine_pending(const struct engine *, uint32_t uid);
/* uid's active (pending, running, suspended) --class lc jobs. */
int	engine_lc_active(const struct engine *, uint32_t uid);
/* What uid's active jobs keep in nvqd's files ([limits] max_stored), likewise. */
uint64_t engine_stored(const struct engine *, uint32_t uid);
/* A job's place in its array, for engine_add. */
struct engine_array {
	int64_t		id;		/* the array's: its first task's id */
	int64_t		index;
	int		limit;		/* its tasks at once; 0: any */
};
/*
 * Adds a job that store_job_insert just committed (arr: NULL, or its
 * array); it becomes the head of e->jobs.
 */
int	engine_add(struct engine *, int64_t id, uint32_t uid, uint32_t gid, const char *user,
	    int ngpus, uint64_t mem, int priority, double now, int64_t limit,
	    const int64_t *after, int nafter, const struct engine_array *arr);
/*
 * Counts what job j keeps in nvqd's files against its user's [limits]
 * max_stored: own bytes, and shared bytes (key not 0: its array's, or its
 * restart's, environment) counted once for all the jobs of that key
 * (stored.h); given back when it is no longer active.
 */
void	engine_charge(struct engine *, struct job *j, uint64_t own, int64_t key,
	    uint64_t shared);
/* What a job has beyond its submit's fields, for engine_extras. */
struct engine_extra {
	int		parked;		/* held while pending (nvq hold, --hold) */
	double		rank_at;	/* > 0: its place in order (nvq restart) */
	double		top_at;		/* > 0: its place among its owner's jobs (nvq top) */
	const char	*allow, *deny;	/* -w, -x: GPU UUIDs, comma-separated, or NULL */
};
/* Gives a job engine_add just added what x says. */
void	engine_extras(struct engine *, struct job *, const struct engine_extra *x);
/*
 * nvq run's descriptors for a pending job held until they came (fds[i]: the
 * job's stdin, stdout, stderr, or -1; now the job's, closed once it
 * started or ended): the job is released.  0, or -1 (fds closed).
 */
int	engine_attach(struct engine *, struct job *, const int fds[3]);
/*
 * uid's pending jobs that hold nvq run's descriptors (engine_attach gave
 * them; engine_close_stdio takes them back): each holds up to three of
 * nvqd's open files until it starts, so a user may have at most
 * ENGINE_MAX_ATTACHED_UID (ctl_jobs.c refuses more).
 */
#define ENGINE_MAX_ATTACHED_UID	32
int	engine_attached(const struct engine *, uint32_t uid);
/*
 * Makes j, which engine_add just added, of class name (NULL, or one the
 * configuration no longer has: the default class, said in the log).
 */
void	engine_qos(struct engine *, struct job *, const char *name);
/* Sets j's latency class (--class lc: 1, be: 0), counted in its user's lc jobs. */
void	engine_lc(struct engine *, struct job *, int lc);
/* nvq hold (parked 1) and release (0) of a pending job: committed, then done. */
int	engine_park(struct engine *, struct job *, int parked, const char *why);
/* nvq modify and nvq top of a pending job: committed, then done. */
int	engine_modify(struct engine *, struct job *, const struct store_change *,
	    const char *why);
/*
 * nvq top: the time that puts a pending job first among its owner's
 * waiting jobs of its priority and kind (of GPUs or none), or 0 where it is
 * first already.  Its cost is the owner's jobs ahead of it, no one else's.
 */
double	engine_top_at(struct engine *, const struct job *);
/* nvq requeue of a running or suspended job: stopped, then PENDING again. */
int	engine_requeue_job(struct engine *, struct job *, const char *by);
/* nvq drain (1) and undrain (0) of GPU i: committed, then done. */
int	engine_drain(struct engine *, int i, int drained, const char *by, const char *reason);
/* what nvq gpus says of drained GPU i: "by USER: REASON" */
void	engine_drain_why(struct engine *, int i, const char *by, const char *reason);
/* Cancels an active job: at once if pending, by signals if running. */
int	engine_cancel(struct engine *, struct job *, const char *by);
/*
 * Cancels n active jobs (an array's tasks), the pending ones' ends in one
 * commit; the ids of those whose cancel could not be recorded go into
 * failed (n of room), and their count is returned.
 */
int	engine_cancel_many(struct engine *, struct job *const *, int n, const char *by,
	    int64_t *failed);
/*
 * The users' recent GPU use and fair-share ranks, brought forward to now
 * (the active users are those of the last pass).
 */
const struct fairshare *engine_usage(struct engine *);
/* A sentence for why a pending job waits. */
void	engine_reason(struct engine *, const struct job *, char *, size_t);
/* The memory demanded on GPU i by running jobs, and their ids. */
uint64_t engine_demanded(struct engine *, int i, char *ids, size_t len);
/* Whether the job holds its GPUs' memory now (running, or being resumed). */
int	engine_holds(const struct job *);
/* What the queue's processes use of GPU i (NVML's figures). */
uint64_t engine_queue_used(struct engine *, int i);
/* The CPUs and host memory the running jobs hold ([resources]), as the scheduler counts them. */
void	engine_host_used(const struct engine *, long long *cpus, uint64_t *mem);
/* A job's largest use on one GPU so far, and its use now (summed over GPUs). */
uint64_t engine_job_peak(const struct engine *, const struct job *);
uint64_t engine_job_used(const struct engine *, const struct job *);
uint64_t engine_budget(struct engine *, int i);
/* A user's folder in the spool: job environments and default output. */
void	engine_user_dir(struct engine *, uint32_t uid, char *, size_t);

#endif
