/*
 * job.h: an active job (struct job) and its life, on one page.  The
 * database holds every job; nvqd keeps the active ones (pending, running,
 * suspended) in memory, in e->jobs and a table by id (jobtab.h), and in the
 * list or queue that its stage puts it in (job_queue).  This header holds
 * the struct and the table of its life; it includes nothing of the
 * engine's, so that the lower modules that only read a job (jobtab.c,
 * member.c, start.c) need nothing more.
 *
 * A job's life (engine_rooms.h says which room is which file; job_life()
 * tells a job's row from its fields):
 *
 *   life       what it is                          fields that say so
 *   PARKED     pending, held (nvq hold, --hold)    PENDING, queue PARKED (parked)
 *   DEPS       pending, waits for --after          PENDING, queue DEPS (dep_wait)
 *   GATED      pending, waits for a place in its   PENDING, queue GATED
 *              array's limit
 *   READY      pending, in the order a pass reads  PENDING, queue READY (NONE: out of
 *                                                  memory filing it; a reload files it)
 *   STARTING   its start recorded in the pass's    PENDING, promised (a standby's pid)
 *              open transaction, not yet acted on  or prepared (that standby has it)
 *   RUNNING    its supervisor watched, its time    RUNNING, queue HELD, pid, pidfd
 *              limit armed
 *   SUSPENDED  its GPU memory moved out (gpuctl)   SUSPENDED, queue HELD
 *   STOPPING   its end committed as ending, the    ending[] ("CANCELLED", "TIMEOUT",
 *              supervisor signalled; SIGKILL       "PREEMPTED", "REQUEUED"), end_reason;
 *              after kill_grace                    killed_hard once SIGKILLed
 *   EXITED     the supervisor is gone, or told     exited (reap: it told the end and
 *              the end; the next pass records it   still cleans up; reap.h waits for it)
 *   RECORDED   its end committed (inside the       exited, recorded, final_state,
 *              pass's engine_finish only)          final_reason
 *   GONE       unlinked; freed when its last       gone (handles: libuv handles open)
 *              libuv handle closes
 *
 *   from        event                          to         by (file)
 *   -           a submit committed, a restart  PARKED,    engine_add, engine_extras ->
 *               read it, or a requeue          DEPS,      engine_queue_in (engine_admit.c;
 *                                              GATED or   from submit.c, recover.c,
 *                                              READY      engine_requeue)
 *   PARKED      nvq release, nvq run attached  DEPS,      engine_park, engine_attach
 *                                              GATED or   (engine_admit.c)
 *                                              READY
 *   DEPS, GATED nvq hold                       PARKED     engine_park
 *   or READY
 *   DEPS        the pass: --after met          GATED or   engine_pass -> engine_resolve
 *                                              READY      (engine_deps.c)
 *   DEPS        the pass: --after never met    GONE       engine_resolve -> engine_drop
 *                                              CANCELLED  (engine_finish.c)
 *   GATED       a task of its array leaves     READY      engine_drop -> engine_gate_leave
 *   PARKED to   nvq cancel                     GONE       engine_cancel, engine_cancel_many
 *   READY                                      CANCELLED  -> engine_drop (engine_finish.c)
 *   READY       the pass plans its start       STARTING   engine_pass -> engine_commit_start,
 *                                                         engine_prepare (engine_launch.c)
 *   STARTING    the pass's commit fails        READY      engine_unprepare (engine_launch.c)
 *   STARTING    the commit holds               RUNNING    engine_spawn -> engine_state,
 *                                                         engine_watch, engine_limit
 *   STARTING    no supervisor could be         GONE       engine_spawn -> engine_fail ->
 *               spawned                        FAILED     engine_drop
 *   RUNNING <-> a suspend's or resume's end    SUSPENDED, gpuctl.c (its own table)
 *   SUSPENDED                                  RUNNING
 *   RUNNING,    time limit, nvq cancel, nvq    STOPPING   engine_timer_cb, engine_cancel,
 *   SUSPENDED   requeue, a preemption that                engine_requeue_job, engine_preempt
 *               stops                                     -> engine_stop_as
 *                                                         (engine_supervise.c)
 *   STOPPING    kill_grace passed              STOPPING   engine_timer_cb: SIGKILL,
 *                                                         killed_hard
 *   RUNNING,    its pidfd readable (the shim   EXITED     engine_poll_cb -> engine_job_ended,
 *   SUSPENDED,  exited), or its standby                   engine_end_cb (engine_supervise.c);
 *   STOPPING    socket said 'e'; without a                engine_poll_gpus_cb (engine.c)
 *               pidfd, the GPU poll saw the
 *               pid gone
 *   EXITED      the pass                       RECORDED   engine_pass -> engine_finish ->
 *                                                         engine_final (engine_finish.c)
 *   EXITED      the pass: its end not          EXITED     engine_finish (again in a
 *               recorded                                  second: e->retry)
 *   RECORDED    requeued (REQUEUED, UNSTARTED, GONE, and  engine_requeue -> engine_add,
 *               --requeue's NODE_FAIL or       a new      engine_drop
 *               PREEMPTED)                     READY job
 *   RECORDED    any other end                  GONE       engine_ended -> engine_drop
 *   GONE        its last libuv handle closed   (freed)    engine_handle_closed_cb
 *                                                         (engine_base.c)
 *   any         nvqd starts: read back from    any above  recover.c: engine_add,
 *               the database and the running              engine_state, engine_watch,
 *               supervisors                               engine_arm, engine_job_ended
 *
 * The flags are kept as they are; each stands for a row above: parked
 * PARKED, dep_wait DEPS, promised and prepared STARTING, ending[] and
 * killed_hard STOPPING, exited and reap EXITED, recorded RECORDED, gone
 * GONE.  node_fail and recovered say how a job read back at start-up came
 * (recover.c).  job_life() derives the row from them.
 *
 * Fields: struct job's are grouped by the file that writes them (C11
 * anonymous structs: they are named as before, j->pid, j->ending).  Where
 * more than one file writes a group, its comment says which and why.
 */
#ifndef NVQ_JOB_H
#define NVQ_JOB_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>
#include <uv.h>

#include "gate.h"
#include "gpuctl.h"
#include "order.h"
#include "parse.h"
#include "qos.h"
#include "sched.h"

struct deptab_node;

enum job_state { JOB_PENDING, JOB_RUNNING, JOB_SUSPENDED };

/* Where an active job is kept, besides e->jobs and the table by id. */
/* JOB_Q_PARKED: pending and held by nvq hold, in no list (only e->jobs) */
enum job_queue { JOB_Q_NONE, JOB_Q_READY, JOB_Q_DEPS, JOB_Q_HELD, JOB_Q_GATED, JOB_Q_PARKED };

/* The rows of the table above (job_life). */
enum job_life {
	JOB_LIFE_PARKED, JOB_LIFE_DEPS, JOB_LIFE_GATED, JOB_LIFE_READY, JOB_LIFE_STARTING,
	JOB_LIFE_RUNNING, JOB_LIFE_SUSPENDED, JOB_LIFE_STOPPING, JOB_LIFE_EXITED,
	JOB_LIFE_RECORDED, JOB_LIFE_GONE
};

struct job {
	/*
	 * Its place in the queues: engine_admit.c (engine_queue_in,
	 * engine_queue_out, engine_link); engine_finish.c's engine_drop
	 * unlinks next and prev.  The nodes' insides are their modules' own
	 * (order.c and waitq.c, deptab.c, gate.c).
	 */
	struct {
		struct order_node on;		/* JOB_Q_READY: its place in e->wq (first) */
		int		queue;		/* enum job_queue */
		struct job	*lnext, *lprev;	/* JOB_Q_DEPS, JOB_Q_HELD: e->deps, e->held */
		struct deptab_node *depn;	/* JOB_Q_DEPS: filed under each job it waits for */
		struct deptab_node *arrn;	/* a task: filed under its array (e->arrtab) */
		struct gate_node gn;		/* JOB_Q_GATED: waits for a place in its array */
		int		parked;		/* JOB_Q_PARKED: pending, held by nvq hold (--hold) */
		struct job	*next, *prev;	/* e->jobs */
	};
	/*
	 * What its submit asked for: engine_admit.c (engine_add, engine_extras,
	 * engine_modify, engine_charge); engine_deps.c clears dep_wait once its
	 * --after is met.
	 */
	struct {
		int64_t		id;
		uint32_t	uid, gid;
		char		user[64];
		int		ngpus;
		uint64_t	mem;		/* per GPU asked; 0: whole GPU */
		int		priority;
		char		qos[QOS_NAME_MAX];	/* its class (qos.h) */
		int		qos_i;		/* its index in the configuration's classes */
		int		lc;		/* --class lc (1) or be (0): who yields on a GPU (lcbe.h) */
		double		submitted_at;
		double		top_at;		/* nvq top: its time among its owner's jobs; 0: none */
		int64_t		time_limit;
		int64_t		after[PARSE_MAX_IDS];	/* dep.h's packed dependencies */
		int		nafter;
		int		dep_wait;
		int		dep_first;	/* the first of after[] not met at the last look */
		int64_t		array_id;	/* 0: no array */
		int64_t		array_index;
		int		array_limit;	/* its array's tasks at once; 0: any */
		int		placed;		/* -w or -x said where it may start: */
		uint64_t	allowed;	/* these GPUs, by index */
		uint64_t	stored;		/* bytes of its own in nvqd's files (stored.h) */
		int64_t		stored_key;	/* and what it shares, counted there under this key */
		int		stdio[3];	/* nvq run's stdin, stdout, stderr for its start, or -1 */
	};
	/*
	 * Its submit's options that engine_add does not take: submit.c, or
	 * recover.c for a job read back; engine_finish.c's engine_requeue
	 * copies them (placed and allowed too) to the job that replaces it.
	 */
	struct {
		int		requeue;	/* --requeue: NODE_FAIL sends it back to PENDING */
		int		preempt_signal;	/* --signal: sent first when preempted by a stop; 0: SIGUSR1 */
		int		notify;		/* --notify or --mail-user: notifiers to run at its end */
		int		cpus;		/* -c, or its default; 0: not recorded (counts 1) */
		uint64_t	host_mem;	/* host memory, its cgroup's limit; 0: none */
		uint64_t	mem_per_cpu;	/* --mem-per-cpu as asked (SLURM_MEM_PER_CPU) */
		/* --signal [B:]SIG@TIME: warn_sig (0: none) warn_time s before the limit */
		int		warn_sig, warn_time;
		int		warn_batch;	/* B: the batch shell alone */
	};
	/*
	 * enum job_state: engine_admit.c's engine_state (every change that
	 * keeps the per-user counts), and gpuctl.c between RUNNING and
	 * SUSPENDED at a switch's end (gpuctl.h).
	 */
	int		state;
	/*
	 * The pass's view: engine.c (engine_pass); engine_deps.c marks the
	 * jobs it looked at in a round.
	 */
	struct {
		struct sched_decision dec;	/* from the last pass */
		unsigned	dec_pass;	/* the pass that decided dec */
		unsigned	dep_seen;	/* engine_resolve: looked at in this round */
	};
	/*
	 * Its start: engine_launch.c (engine_commit_start, engine_prepare,
	 * engine_spawn); engine_ahead.c gives ticket its token; recover.c and
	 * adopt.c set gpumask, granted, started_at, pid, pid_start and cgroup
	 * for a job found running at start-up or adopted from Slurm; engine.c's
	 * pass clears promised when its commit fails; engine_finish.c frees
	 * cgroup at the drop.  engine_add gives go_fd its first -1.
	 */
	struct {
		uint64_t	gpumask;
		uint64_t	granted;	/* per GPU given (running) */
		double		started_at;
		pid_t		pid;		/* the shim */
		int64_t		pid_start;	/* its start time, to know it again */
		pid_t		promised;	/* the standby shim its start recorded (runner.h); 0: none */
		int		prepared;	/* handed to it before the commit, waiting for runner_go */
		int		go_fd;		/* prepared: that standby's socket, for runner_go */
		char		ticket[40];	/* the token of its start's ticket (runner.h) */
		char		*cgroup;	/* running: its cgroup v2 folder, or NULL */
	};
	/*
	 * Its supervision: engine_supervise.c (engine_watch, engine_arm,
	 * engine_end_cb, engine_job_ended, engine_stop_as, engine_timer_cb;
	 * engine_warn sets warned); recover.c opens pidfd and sets ending and
	 * warned for a job read back;
	 * engine_finish.c's engine_cancel turns a REQUEUED ending into
	 * CANCELLED, and engine_drop closes the handles and descriptors;
	 * engine_launch.c gives endfd the standby's socket; engine_base.c
	 * counts handles down as they close.  engine_add gives pidfd and endfd
	 * their first -1.
	 */
	struct {
		int		pidfd;
		uv_poll_t	*poll;
		/*
		 * A standby shim's socket (runner.h): it says the job ended before the
		 * shim's own cleanup and exit; -1: none.  reap: the shim outlived the
		 * record of its job's end; reap.h waits for it.
		 */
		int		endfd;
		uv_poll_t	*endpoll;
		uv_timer_t	*timer;		/* time limit, then kill grace */
		int		handles;	/* open libuv handles; freed at 0 */
		int		exited;		/* the shim is gone; the end is not recorded yet */
		int		reap;
		char		ending[16];	/* "", CANCELLED or TIMEOUT */
		char		end_reason[256];
		int		killed_hard;
		int		warned;		/* this run got its --signal SIG@TIME warning */
	};
	/* How it came back at start-up: recover.c; adopt.c sets slurm_id too. */
	struct {
		int		recovered;	/* running when nvqd started (recover.c) */
		int		node_fail;	/* it ran when the machine restarted */
		int64_t		slurm_id;	/* a Slurm step on this node (adopt.h): its job; 0: not */
	};
	/* Its end: engine_finish.c (engine_final, engine_finish, engine_drop). */
	struct {
		int		recorded;	/* engine_finish: its end is committed */
		char		final_state[16];
		char		final_reason[256];
		int64_t		*end_peaks;	/* engine_final: per GPU of the run, for run_gpus */
		const char	**end_uuids;
		int		gone;
	};
	/*
	 * Its GPU use: engine_usage.c (engine_track, engine_refresh); hooks.c
	 * writes hook_used and hook_peak, which engine_usage.c makes room for.
	 */
	struct {
		uint64_t	*gpu_used;	/* running: bytes NVML sees its processes use, */
		uint64_t	*gpu_peak;	/* per GPU index, and the most seen; */
		uint64_t	*gpu_acc;	/* NULL for virtual GPUs or no memory */
		uint64_t	*hook_used;	/* per GPU index: the hook's reports, summed */
		uint64_t	*hook_peak;	/* over the job's processes, and the most seen */
		struct job_energy *energy;	/* per GPU index: engine_energy.c's */
	};
	/* What its hooks said: hooks.c. */
	struct {
		uint64_t	hook_shared;	/* shared memory they say a suspend cannot move */
		uint64_t	hook_staged;	/* host staging they hold ready (bounded by their shares) */
		int		nsess;		/* its processes linked to nvqd (hooks.c) */
		uint64_t	lc_yield_us;	/* be: time its launches yielded to lc jobs (gpu/lcbe.c) */
		uint64_t	*lc_hist;	/* lc: its launch latencies, LCBE_HIST buckets (lcbe_page.h); or NULL */
		uint64_t	oom_asked;	/* the hook's last refusal past the budget: bytes asked, */
		uint64_t	oom_used;	/* what the job held on that GPU, its limit there */
		uint64_t	oom_limit;
	};
	/*
	 * Its GPU lock and switch: gpuctl.c's alone, but for the dispatcher in
	 * engine.c, which clears gc.fx and gc.fx_next as it does what they ask.
	 */
	struct gpuctl	gc;
	struct job	*hnext;		/* jobtab.c */
};

/* A running job's energy on one GPU (engine_energy.c, energy.h). */
struct job_energy {
	double		joules;		/* this run's so far */
	int		how;		/* enum energy_how: the least sure of its intervals */
	double		util;		/* its processes' SM utilisation at the last poll */
	uint64_t	mark;		/* the GPU's counter when nvqd last saved it (recover) */
	int		has_mark;
};

/* e->wq holds a job's on: the job is found from it */
_Static_assert(offsetof(struct job, on) == 0, "struct job's on must be its first field");

/* The row of the table above that j is in. */
int	job_life(const struct job *j);

#endif
