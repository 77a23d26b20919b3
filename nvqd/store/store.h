/*
 * store.h: nvqd's persistent state in SQLite, and nothing else.
 *
 * The database runs in WAL mode with a busy timeout, so that people can
 * query it with the sqlite3 shell while nvqd writes.  The schema comes from
 * schema/NNN_*.sql, embedded at build time and applied in order, each in
 * one transaction recorded in PRAGMA user_version.  Every function that
 * changes a job commits before it returns.  Functions return 0 or -1 (and
 * log why), unless said otherwise.
 */
#ifndef NVQ_STORE_H
#define NVQ_STORE_H

#include <stddef.h>
#include <stdint.h>

struct store;

/*
 * What a job's row and its first event take in storage beyond their
 * strings: the estimate store_headroom and [limits] max_stored add to them.
 */
#define STORE_ROW_BYTES		512
#define STORE_ROW_BYTES_SQL	"512"

enum store_type { STORE_NULL, STORE_INT, STORE_REAL, STORE_TEXT, STORE_BLOB };

/* One column of a result row; s and blob are valid during the callback. */
struct store_col {
	const char	*name;
	int		type;
	int64_t		i;
	double		r;
	const char	*s;	/* TEXT, or BLOB bytes */
	int		len;	/* TEXT or BLOB length */
};

/* Called once per row; a non-zero return stops the query. */
typedef int (*store_row_cb)(void *arg, const struct store_col *, int ncols);

struct store_job_new {
	uint32_t	uid, gid;
	const char	*user, *name, *command, *cwd;
	const char	*argv;		/* NUL-terminated strings, back to back */
	int		argv_len;
	const char	*env;		/* likewise, the environment */
	const char	*groups;	/* "4,24,27", or NULL */
	int		env_len;
	int		gpus;
	uint64_t	mem;		/* 0: a whole GPU */
	int		priority;
	const char	*qos;		/* its class (qos.h), or NULL: the default's */
	int		lc;		/* --class lc (1) or be (0) (024_lcbe.sql) */
	int64_t		time_limit;	/* 0: none */
	const char	*after;		/* NULL or "3,4" */
	const char	*stdout_path;	/* NULL: <spool>/<uid>/<id>.out */
	const char	*stderr_path;	/* NULL: <spool>/<uid>/<id>.err */
	const char	*spool;
	int		requeue;	/* --requeue: back to PENDING after NODE_FAIL */
	int		preempt_signal;	/* --signal; 0: the default (SIGUSR1) */
	/*
	 * array_task: a task of an array, of index array_index, whose first
	 * task (its id is the array's) is array_back places back in the same
	 * store_jobs_insert; array_limit: its tasks running at once (0: any).
	 */
	int		array_task;
	int64_t		array_index;
	int		array_back;
	int		array_limit;
	/*
	 * cmd_shared: the task's command is its array's (not --stdin's own):
	 * stored once, in the first task's row.  Tasks share their array's
	 * environment always.
	 */
	int		cmd_shared;
	int		held;		/* --hold: it waits for nvq release; 2: for nvq run */
	const char	*gpus_allow;	/* -w, -x: UUIDs "GPU-a,GPU-b", or NULL */
	const char	*gpus_deny;
	const char	*notify;	/* --notify COMMAND, or NULL */
	const char	*mail_user;	/* --mail-user ADDRESS, or NULL */
	double		now;
	int		cpus;		/* -c, or the default it got */
	uint64_t	host_mem;	/* host memory, bytes; 0: none of its own */
	uint64_t	mem_per_cpu;	/* --mem-per-cpu as asked; 0: not asked */
	/* an array's shape, the same in each task (025): count 0 for no array */
	int64_t		array_count, array_min, array_max, array_step;
	/* --signal [B:]SIG@TIME: warn_sig (0: none) warn_time s before the limit */
	int		warn_sig, warn_time, warn_batch;
	const char	*partition, *account;	/* engine = slurm's --partition, --account; or NULL */
};

struct store_end {
	const char	*state;		/* COMPLETED, FAILED, CANCELLED, TIMEOUT, NODE_FAIL */
	double		now;
	int		exit_code;	/* -1: none */
	int		signal;		/* 0: none */
	double		cpu_time;	/* <0: unknown */
	int64_t		max_rss;	/* <0: unknown */
	const char	*reason;	/* may be NULL */
	int64_t		peak_gpu_mem;	/* largest use of one GPU; <0: unknown (0 is 0) */
	int		npeaks;		/* per GPU of the run: run_gpus rows */
	const char	*const *peak_uuids;
	const int64_t	*peaks;
	int		has_lcbe;	/* the figures below were measured (024_lcbe.sql) */
	int64_t		lc_ns[3];	/* an lc job's launch latency p50, p99, p99.9; 0: none */
	int64_t		be_yield_us;	/* a be job's time yielding to lc jobs */
};

struct store_filter {
	int64_t		id;		/* 0: any */
	const char	*user;		/* NULL: any */
	const char	*state;		/* NULL: any */
	int		all;		/* include finished jobs */
	int		finished;	/* only finished jobs */
	double		since;		/* finished at or after; 0: any */
	int64_t		after;		/* ids above this only (a page's cursor); 0: from the first */
	int64_t		upto;		/* ids up to this only (store_jobs_bound); 0: any */
};

struct store	*store_open(const char *path, int sync_full, char *err, size_t errlen);
/*
 * A read-only connection to the database store_open made ready (no private
 * database, no migration), for reports on a thread other than the loop's:
 * store_stats and the like work on it, from one thread at a time.  NULL
 * with a sentence in err.  Closed with store_close.
 */
struct store	*store_open_reader(const char *path, char *err, size_t errlen);
void		 store_close(struct store *);
int		 store_version(struct store *);
/*
 * Whether the reserve kept for ends and cancels on a full disk is in place
 * (made again here once there is room); submits are refused without it.
 */
int		 store_room(struct store *);
/* SQLite's sentence for the last failure, e.g. "database or disk is full". */
const char	*store_errmsg(struct store *);

/* Inserts a PENDING job and its first event; returns the new id or -1. */
int64_t		 store_job_insert(struct store *, const struct store_job_new *);
/* n jobs in two commits however many (environments, then jobs): ids[n]; 0 or -1. */
int		 store_jobs_insert(struct store *, const struct store_job_new *const *, int n,
		    int64_t *ids);
/* PENDING -> RUNNING with a new run row (gpu_share: runs.gpu_share). */
int		 store_job_start(struct store *, int64_t id, double now, const char *uuids,
		    int gpus, uint64_t mem, double gpu_share);
/*
 * Within store_lazy_begin/commit: the supervisor's pid, its start time, the
 * boot it started in and the job's cgroup (NULL: none); a job's environment
 * gone (and the private database's free pages given back, a batch at a time).
 */
int		 store_job_set_pid(struct store *, int64_t id, int pid, int64_t pid_start,
		    const char *boot_id, const char *cgroup);
int		 store_env_delete(struct store *, int64_t id);
/*
 * The environments of n jobs that can no longer start, in one commit that
 * is not synced; on a full disk (deleting writes before it frees) tried
 * again with the reserve, a quarter at a time.
 */
int		 store_envs_delete(struct store *, const int64_t *ids, int n);
/* Groups changes into one synced commit; they nest. */
int		 store_tx_begin(struct store *);
int		 store_tx_commit(struct store *);
/* Transactions begun so far, nested ones too: whether anything wrote since. */
unsigned long	 store_begins(const struct store *);
/* Groups changes into one commit that is not synced on its own. */
int		 store_lazy_begin(struct store *);
int		 store_lazy_commit(struct store *);
/*
 * Syncs the main database's commits so far, lazy ones included (what the
 * next synced commit would do); 0 without sync = full.
 */
int		 store_sync(struct store *);
/* Records that a running job was asked to stop, and as what. */
int		 store_job_ending(struct store *, int64_t id, const char *state,
		    const char *reason, double now);
/* Records that job id's run got its --signal SIG@TIME warning at now. */
int		 store_job_warned(struct store *, int64_t id, double now);
/* Any active job -> a final state, closing its run if it had one. */
int		 store_job_end(struct store *, int64_t id, const struct store_end *);
/*
 * n pending jobs to e->state in one commit (nvq cancel of an array): on a
 * full disk, tried again with the reserve, a quarter at a time.
 */
int		 store_jobs_end(struct store *, const int64_t *ids, int n,
		    const struct store_end *e);
/*
 * A running job whose run ended as e->state (NODE_FAIL) goes back to
 * PENDING, as it was submitted, with its run closed and one more restart.
 */
int		 store_job_requeue(struct store *, int64_t id, const struct store_end *);
/*
 * A job recorded RUNNING that never started (nvqd stopped between the commit
 * and the spawn, or before the standby shim recorded with it got the job):
 * back to PENDING, its open run removed.
 */
int		 store_job_unstart(struct store *, int64_t id, double now);
/*
 * The energy of job id's open run on GPU uuid so far (store_energy.c):
 * joules < 0 is unknown (NULL), how alone, shared or unknown, counter the
 * GPU's counter in mJ now (< 0: none).  store_energy_total then sets the
 * run's total; store_energy_get reads the open run's rows back.
 */
int		 store_energy_put(struct store *, int64_t id, const char *uuid, double joules,
		    const char *how, int64_t counter);
int		 store_energy_total(struct store *, int64_t id);
typedef void (*store_energy_cb)(void *arg, const char *uuid, double joules, const char *how,
		    int64_t counter);
int		 store_energy_get(struct store *, int64_t id, store_energy_cb, void *);
/* /metrics: the known joules of each user's runs (user, joules), kept by triggers. */
int		 store_energy_counts(struct store *, store_row_cb, void *);
/* nvq hold (held 1) or release (0) of a running or pending job, with its event. */
int		 store_job_held(struct store *, int64_t id, int held, double now,
		    const char *reason);
/* What nvq modify or nvq top changes of a pending job. */
struct store_change {
	int		has_priority, priority;
	int		has_mem;
	uint64_t	mem;		/* 0: a whole GPU */
	int		has_time;
	int64_t		time_limit;	/* 0: none */
	double		top_at;		/* > 0: its new place among its owner's jobs (nvq top) */
	int		has_cpus, cpus;	/* -c */
	int		has_host_mem;	/* --mem, or -c of a --mem-per-cpu job: */
	uint64_t	host_mem;	/* its host memory now */
	uint64_t	mem_per_cpu;	/* and --mem-per-cpu (0 once --mem replaces it) */
};
int		 store_job_modify(struct store *, int64_t id, const struct store_change *,
		    double now, const char *reason);
/* nvq drain (drained 1) or undrain (0) of a GPU by its UUID. */
int		 store_drain(struct store *, const char *uuid, int drained, const char *by,
		    const char *reason, double now);
/* The drained GPUs: rows uuid, at, by, reason. */
int		 store_drained(struct store *, store_row_cb, void *);
/* One suspend or resume, for the switches table. */
struct store_switch {
	const char	*kind;		/* suspend, resume */
	const char	*why;		/* user, preempt, timeslice, restart */
	int64_t		by_job;		/* 0: none */
	const char	*uuids;
	double		started_at, ended_at;
	double		driver_seconds;	/* < 0: unknown */
	int64_t		bytes;		/* < 0: unknown */
	const char	*pids;
	int		ok;
	const char	*error;
	double		hook_seconds;	/* the hooks' move (offload); < 0: none */
	int64_t		hook_bytes;	/* < 0: none */
};
/* A suspend begins: the pids it checkpoints (for a restart in between). */
int		 store_job_ckpt_pids(struct store *, int64_t id, const char *pids);
/* RUNNING -> SUSPENDED, with its switch; hold: it waits for nvq resume. */
int		 store_job_suspended(struct store *, int64_t id, int hold, const char *reason,
		    const struct store_switch *);
/* SUSPENDED -> RUNNING, with its switch; its time suspended is added up. */
int		 store_job_resumed(struct store *, int64_t id, const struct store_switch *);
/*
 * A switch that left the job's state as it was (failed, or a restart's
 * recovery); hold: a failed resume then waits for nvq resume.
 */
int		 store_switch_record(struct store *, int64_t id, int hold,
		    const struct store_switch *);
/* nvq resume of a job suspended by a user: it may resume once it fits. */
int		 store_job_unhold(struct store *, int64_t id, double now, const char *reason);
/* The job's switches, oldest first. */
int		 store_switches(struct store *, int64_t id, store_row_cb, void *);
/* Copies the job's state into buf; returns 0, or -1 if there is no such job. */
int		 store_job_state(struct store *, int64_t id, char *buf, size_t len);
/*
 * Job id's state (into buf) and the array it is a task of (*array; 0 for
 * none): 0, or -1 if there is no such job.
 */
int		 store_job_of_array(struct store *, int64_t id, char *buf, size_t len,
		    int64_t *array);
/* The job id of array's task of index (nvq's A_I): 0, or -1 if there is none. */
int		 store_array_task(struct store *, int64_t array, int64_t index, int64_t *id);
/*
 * --dependency singleton: uid's active jobs named name, the latest first,
 * to cb as ("id", "array", "singleton": whether it is one too, "started":
 * running or suspended), at most max of them (the jobs_active_name
 * index).  0, or -1.
 */
int		 store_active_named(struct store *, uint32_t uid, const char *name, int max,
		    store_row_cb, void *);
/* How many of array's tasks did not end COMPLETED (into *n): 0, or -1. */
int		 store_array_unfinished(struct store *, int64_t array, int64_t *n);
/*
 * A job's owner, name and dependency text (""; none): 0, 1 when there is
 * no such job, or -1.
 */
int		 store_job_named(struct store *, int64_t id, uint32_t *uid, char *name, size_t len,
		    char *after, size_t alen);
/* A pending job's dependency text anew (a restarted singleton's): 0, or -1. */
int		 store_job_set_after(struct store *, int64_t id, const char *after);
/*
 * nvq show A_ and nvq wait A_: array's tasks per state ("tasks",
 * "task_state"), its first STORE_ARRAY_SHOWN tasks by index ("task",
 * "task_index", "task_state", "task_reason"), and its first task that
 * ended but did not complete ("failed", "failed_state", "failed_code",
 * "failed_signal"), as rows to cb.  Each reads the array's tasks only
 * (the array_task index): bounded by an array's size.  0, or -1.
 */
#define STORE_ARRAY_SHOWN	50	/* store_query.c writes it in its SQL */
int		 store_array_show(struct store *, int64_t array, store_row_cb, void *);

/*
 * A job nvqd follows (PENDING, RUNNING or SUSPENDED) as stored, read at
 * start-up.  Strings are NULL where the column is, and valid during the
 * callback only; has_* say whether a nullable number was there.
 */
struct store_active_job {
	int64_t		id;
	uint32_t	uid, gid;
	const char	*user;
	const char	*state;
	int		gpus;
	uint64_t	mem_per_gpu;	/* 0: whole GPUs */
	int		priority;
	double		submitted_at, started_at;
	int64_t		time_limit;	/* 0: none */
	const char	*after, *gpu_uuids;
	int64_t		pid;		/* 0: none recorded */
	int		has_pid_start;
	int64_t		pid_start;
	const char	*ending, *reason;
	int		held, requeue;
	const char	*boot_id, *cgroup;
	double		suspended_at;	/* 0: not suspended */
	int		suspend_hold;
	const char	*ckpt_pids;
	double		run_suspended;
	int		preempt_signal;	/* 0: the default */
	/*
	 * the bytes it keeps in nvqd's files: of its own, and of what it
	 * shares with its array's other tasks or its restart's other jobs
	 * (environment, command), stored under stored_key (0: none)
	 */
	uint64_t	stored_own, stored_shared;
	int64_t		stored_key;
	/*
	 * its row's bytes with its array's command if it shares it, without
	 * any environment: what an nvq restart of it keeps (and the
	 * restarter's environment)
	 */
	uint64_t	stored_row;
	int64_t		array_id;	/* 0: no array */
	int64_t		array_index;	/* -1: no array */
	int		array_limit;	/* 0: none */
	double		rank_at;	/* nvq restart: its place in order; 0: submitted_at */
	double		top_at;		/* nvq top: its place among its owner's jobs; 0: none */
	const char	*gpus_allow, *gpus_deny;	/* -w, -x: UUIDs, or NULL */
	int		notify;		/* --notify or --mail-user given */
	int64_t		slurm_id;	/* Slurm's job id; -1: none (013_slurm.sql) */
	const char	*slurm_step;	/* a step nvqd follows on its node, or NULL (014) */
	int		cpus;		/* 0: not recorded (before 020_resources.sql) */
	uint64_t	host_mem;	/* 0: none */
	uint64_t	mem_per_cpu;	/* 0: not asked */
	const char	*qos;		/* its class, or NULL: the default's (022) */
	int		lc;		/* --class lc (1), else be (024) */
	int		warn_sig, warn_time, warn_batch;	/* --signal SIG@TIME (025) */
	double		warned_at;	/* its run was warned then; 0: not yet */
};

/*
 * What a job's start needs.  argv and env are NUL-terminated strings back
 * to back (argv_len, env_len bytes); env is NULL where the job's
 * environment is gone, groups NULL where none was recorded.  Valid during
 * the callback only.
 */
struct store_job_exec {
	const char	*argv;
	int		argv_len;
	const char	*cwd, *stdout_path, *stderr_path, *user;
	uint32_t	uid, gid;
	const char	*env;
	int		env_len;
	const char	*groups;
	const char	*name;
	int		gpus;
	uint64_t	mem;		/* per GPU; 0: whole GPUs */
	int64_t		time_limit;	/* seconds; 0: none */
	int		cpus;		/* 0: none recorded */
	uint64_t	host_mem, mem_per_cpu;	/* 0: none */
	/* its array's shape as submitted (025): count 0 for none or unknown */
	int64_t		array_count, array_min, array_max, array_step;
	/* engine = slurm: what sbatch gets besides (025); NULL, 0: none */
	const char	*partition, *account;
	int		warn_sig, warn_time, warn_batch;
};

/* Called once per row; a non-zero return stops the query. */
typedef int (*store_active_cb)(void *arg, const struct store_active_job *);
typedef int (*store_exec_cb)(void *arg, const struct store_job_exec *);

/* The active jobs, by id, for start-up. */
int		 store_active(struct store *, store_active_cb, void *);
/*
 * A pending job Slurm has: its id (sbatch took it), or its id and step (a
 * step on this node, the plugin's), and the event that says so.
 */
int		 store_job_slurm(struct store *, int64_t id, int64_t slurm_id, const char *step,
		    double now, const char *why);
/* Job id's row as store_active reads it (whatever its state). */
int		 store_active_one(struct store *, int64_t id, store_active_cb, void *);
/*
 * nvq cancel's filters: the ids of the active jobs of user (NULL: anyone's)
 * named name (NULL: any name), by id, into *ids (*n; the caller frees).
 * Reads the active jobs only (jobs_active).  0, or -1.
 */
int		 store_active_match(struct store *, const char *user, const char *name,
		    int64_t **ids, int *n);
/* The ids of array's active tasks, into *ids (*n; the caller frees).  0, or -1. */
int		 store_array_active(struct store *, int64_t array, int64_t **ids, int *n);
/*
 * nvq restart --failed: the ids of uid's jobs that ended FAILED, TIMEOUT or
 * NODE_FAIL at or after since, into *ids (*n; the caller frees).  0, or -1.
 */
int		 store_restartable(struct store *, uint32_t uid, double since, int64_t **ids,
		    int *n);
/*
 * nvq restart: finished jobs PENDING again, with env (envlen bytes, as
 * store_job_new's) and an event saying why; their runs and events are
 * kept, restarts counts it, rank_at puts them behind those waiting now.
 * All or none: 0, or -1 (a job not finished, or the database failed).
 */
int		 store_jobs_restart(struct store *, const int64_t *ids, int n, const char *env,
		    int envlen, double now, const char *why);
/* Rows of jobs for clients: each column by name, as nvq lists them. */
int		 store_jobs(struct store *, const struct store_filter *, store_row_cb, void *);
/*
 * A page's bound: *upto, the id of the n-th row after f->after of those
 * f's listing reads (its index's rows, before the user and since filters
 * skip some), or 0 if fewer are left; a page that reads no further than
 * it examines at most n rows, however few of them match.  0, or -1.
 */
int		 store_jobs_bound(struct store *, const struct store_filter *, int n,
		    int64_t *upto);
int		 store_runs(struct store *, int64_t id, store_row_cb, void *);
int		 store_events(struct store *, int64_t id, store_row_cb, void *);
/*
 * What a job's notifiers are told once it has ended: its row.  Strings are
 * NULL where the column is, and valid during the callback only.
 */
struct store_notice {
	int64_t		id;
	uint32_t	uid, gid;
	const char	*user, *name, *cwd, *state, *reason, *out, *err;
	int		exit_code;	/* -1: none */
	int		signal;		/* 0: none */
	const char	*notify, *mail_user;
};
typedef void (*store_notice_cb)(void *arg, const struct store_notice *);
/*
 * -m auto: the largest peak on one GPU (runs.peak_gpu_mem) of the last 5
 * runs that COMPLETED of uid's jobs of this name, else of this command,
 * and the job it came from; among the last 1000 jobs of the name (of the
 * command, and 1000 of their arrays' tasks), so that its cost is bounded.
 * 1, 0 when there is none, or -1.
 */
int		 store_auto_peak(struct store *, uint32_t uid, const char *name,
		    const char *command, uint64_t *peak, int64_t *from);
/*
 * The largest peak on one GPU of job id's runs, its -m (0: none or a whole
 * GPU) and whether it failed out of GPU memory.  1, 0 with no peak known, or -1.
 */
int		 store_job_peak(struct store *, int64_t id, uint64_t *peak, int64_t *mem,
		    int *oom);
/*
 * nvq stats: rows of one kind over what ended (or started) at or after
 * since, of user's jobs (NULL: everyone's): GPU-hours, runs, failures and
 * -m against the peak per user; the queue wait's percentiles; failures by
 * state and reason; suspends and resumes; energy and GPU-hours per job
 * name (with the users' energy beside their GPU-hours).  0, or -1.
 */
enum { STORE_STATS_USERS, STORE_STATS_WAIT, STORE_STATS_FAILURES, STORE_STATS_SWITCHES,
	STORE_STATS_NAMES, STORE_STATS_N };
int		 store_stats(struct store *, int what, double since, const char *user,
		    store_row_cb, void *);
/*
 * The dashboard's token of uid (made if it has none, or anew with renew),
 * kept in the private database: hex, into token (49 bytes at least).  0, or -1.
 */
int		 store_web_token(struct store *, uint32_t uid, int renew, char *token, size_t len);
/*
 * /metrics, from what the triggers of schema/018_metrics.sql keep (a few
 * rows, whatever the history).  store_hist: the cumulative histogram of
 * the queue wait of jobs' first starts (runs 0) or of finished runs' time
 * running (runs 1): rows of "le" (REAL, or the text "+Inf"), "n" and
 * "sum" (of all the values, on every row), by le.  store_state_counts: jobs by state,
 * rows of "state", "n".  store_switch_counts: suspends and resumes, rows
 * of "kind", "ok", "n", "seconds".  0, or -1.
 */
int		 store_hist(struct store *, int runs, store_row_cb, void *);
int		 store_state_counts(struct store *, store_row_cb, void *);
int		 store_switch_counts(struct store *, store_row_cb, void *);
/* The uid whose token it is: 1, 0 for none, -1 (the database failed). */
int		 store_web_uid(struct store *, const char *token, uint32_t *uid);
/* Calls cb with job id's row, if there is one; 0, or -1. */
int		 store_notice(struct store *, int64_t id, store_notice_cb, void *);
/* One event of a job, in a commit of its own (not synced with sync = full). */
int		 store_event_add(struct store *, int64_t id, double at, const char *state,
		    const char *reason);
/*
 * The runs of a GPU that ended after since, or are open (counted up to
 * now): each one's user, gpu_share, start, end and seconds suspended; cb
 * returns non-zero to stop.  0, or -1.
 */
typedef int (*store_usage_cb)(void *arg, uint32_t uid, double gpu_share, double start,
		    double end, double suspended);
int		 store_usage(struct store *, double since, double now, store_usage_cb, void *);
/* What job id's start needs; cb is not called if there is no such job. */
int		 store_job_exec(struct store *, int64_t id, store_exec_cb, void *);

#endif
