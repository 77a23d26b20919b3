/*
 * gpuctl.h: a job's GPU control, one state machine per running job: its
 * GPU lock (granted, asked back, released, stopped) and its switch (the
 * steps of a suspend and of a resume).  gpuctl.c lists every state and
 * transition at its top.
 *
 * It is driven by events: facts that hooks.c (a process linked, went away,
 * acknowledged a lock, waits for one, is idle, answered a move), suspend.c
 * (nvq-ckpt ended) and gpuact.c (nvq-ckpt could not start) report, the
 * lock timer,
 * and requests (nvq suspend, resume, hold, release; the scheduler's
 * preemptions and resumes; a restart's recovery).  The engine dispatches
 * every one of them from one place, engine_gpu(), never re-entrantly: an
 * event reported while one is being handled waits in a queue and is
 * handled next, in the same dispatch, and the lock pass and its timer
 * follow once the queue is empty.
 *
 * Two files: gpuctl.c decides and gpuact.c acts.  gpuctl.c is pure: it
 * sees a job as plain facts (struct gc_job, which points at the job's own
 * struct gpuctl, the only thing it writes besides the job's state between
 * RUNNING and SUSPENDED and, through gcslice.c, the timeslice table of
 * gpuctl_all), nvqd's
 * settings (struct gc_env), and returns what is to be done as data (struct
 * gc_action: tell the processes their lock, signal them, send a cut, ask
 * them to move, run or kill nvq-ckpt, record a switch, log, ...).  gpuact.c
 * gathers the facts from the engine, hooks.c and suspend.c, calls gpuctl.c,
 * and carries its actions out in order; it owns this header's API below,
 * which the engine, ctl.c and web.c call.  hooks.c and suspend.c never call
 * each other, nor gpuctl.c or gpuact.c.
 */
#ifndef NVQ_GPUCTL_H
#define NVQ_GPUCTL_H

#include <stddef.h>
#include <stdint.h>

#include "gcacts.h"

#define GPUCTL_MAX_GPUS	64	/* SCHED_MAX_GPUS */

struct engine;
struct job;

/* A job's lock: what its processes were told last, and whether they heard it. */
enum gc_lock {
	GC_GRANTED = 0,		/* they may launch */
	GC_REVOKING,		/* asked back (a new seq); not every process acknowledged */
	GC_RELEASED,		/* not theirs now: every process acknowledged */
	GC_STOPPED		/* no acknowledgement in time: SIGSTOPped */
};

/* A job's switch. */
enum gc_phase {
	GC_NONE = 0,		/* no switch under way (running, or suspended) */
	GC_DRAINING,		/* suspend: its lock is being taken back */
	GC_MOVE_OUT,		/* suspend: its hooks move their allocations out */
	GC_CHECKPOINT,		/* suspend: nvq-ckpt suspend runs */
	GC_RESTORE,		/* resume: nvq-ckpt resume runs */
	GC_MOVE_IN		/* resume: its hooks bring their allocations back */
};

enum gc_why { GC_USER, GC_PREEMPT, GC_TURN, GC_RESTART };

/* What the engine is to do for a job after an event (gc.fx). */
#define GC_FX_LIMIT	0x1	/* re-arm its time limit (engine_limit) */
#define GC_FX_KICK	0x2	/* a scheduling pass */

/* Seconds a restarted nvqd gives a job's hooks to link again (they retry
 * every half second) before it may be suspended: until then nvqd does not
 * know which of its processes hold GPU memory. */
#define GPUCTL_RELINK	3.0

struct gpuctl {
	/* the lock */
	int		lock;		/* enum gc_lock */
	int64_t		seq;		/* of the last lock change sent */
	double		revoke_at;	/* REVOKING: asked back then */
	int		held;		/* nvq hold */
	int		yielding;	/* timeslice: giving its GPU to the next job */
	int		wants;		/* timeslice: one of its launches waits */
	int		want_held;	/* one said so while its lock was being taken back */
	double		want_since;
	int		idle;		/* timeslice: it launches nothing */
	int64_t		cut_sent;	/* the revoke seq whose cut targets were sent */
	int		cut_fails;	/* revokes in a row whose cut was not reached */
	char		cut_error[256];	/* the last revoke whose cut was not reached, why */
	/* the switch */
	int		phase;		/* enum gc_phase */
	int		why;		/* enum gc_why */
	int64_t		for_job;	/* the job it gives way to; 0: none */
	char		by[64];		/* nvq suspend: who */
	double		t0;		/* when the switch was asked */
	double		suspended_at;
	double		last_suspend;	/* seconds its last suspend took */
	double		slice_start;	/* when it started or last resumed */
	double		pinned_until;	/* a resume of it failed: not asked again before */
	double		unsusp_until;	/* a suspend of it failed: until then it gives way
					   by being stopped (gpuctl_unsuspendable) */
	int		hold;		/* suspended by a user: waits for nvq resume */
	char		*ckpt_pids;	/* the processes checkpointed, comma-separated */
	int64_t		ckpt_bytes;	/* GPU memory moved; -1: unknown */
	char		error[256];	/* the last switch that failed, why */
	int64_t		move_seq;	/* the hooks' last move (offload), asked */
	double		move_until;	/* when nvqd stops waiting for their answers */
	int64_t		move_bytes;	/* what they moved, summed; -1: no move */
	int64_t		move_left;	/* what they could not move */
	double		move_secs;	/* the slowest process's seconds */
	char		move_error[160];
	double		driver_secs;	/* nvq-ckpt's seconds in this switch */
	int		helper;		/* nvq-ckpt runs (or is starting), while CHECKPOINT
					   or RESTORE */
	int		helper_pid;	/* its pid once started (gpuctl_spawned); 0: none */
	double		helper_until;	/* when it is killed (switch_timeout) */
	double		helper_secs;	/* the time it had */
	int		helper_killed;	/* it was: its switch is undone */
	int		undo;		/* RESTORE undoes a suspend whose nvq-ckpt was killed */
	char		helper_why[128];	/* why it was killed */
	double		susp_total;	/* seconds suspended in this run (time limit) */
	double		relink_until;	/* reattached by a restarted nvqd: its hooks may
					   not have linked again before then */
	/* for the dispatcher */
	int		fx;		/* GC_FX_* asked, not carried out yet */
	struct job	*fx_next;	/* in gpuctl_all.fx while fx != 0 */
};

/* What gpuctl keeps of all jobs: who holds each timeslice GPU. */
struct gpuctl_all {
	int64_t		ts_holder[GPUCTL_MAX_GPUS];	/* 0: nobody */
	double		ts_since[GPUCTL_MAX_GPUS];
	struct job	*fx;		/* jobs with gc.fx set */
};

enum gc_ev {
	/* facts (hooks.c, suspend.c, the timer), queued while a dispatch runs */
	GC_EV_LINKED,		/* a process of the job linked */
	GC_EV_UNLINKED,		/* a process of the job went away */
	GC_EV_ACK,		/* a process acknowledged a lock seq */
	GC_EV_CUT,		/* a process reported its NCCL counts for revoke seq n */
	GC_EV_WANT,		/* a process waits for the lock */
	GC_EV_IDLE,		/* n: the job launches nothing (1) or again (0) */
	GC_EV_MOVED,		/* a process answered a move: bytes, left, secs, error */
	GC_EV_HELPER,		/* nvq-ckpt ended: n resume, ok, secs (driver), error */
	GC_EV_NOSPAWN,		/* nvq-ckpt could not start: n resume, error */
	GC_EV_TIMER,		/* the lock timer fired */
	GC_EV_CHANGED,		/* jobs or settings changed: decide the locks again */
	/* requests, made outside a dispatch; the first three may be refused */
	GC_EV_SUSPEND,		/* n why, for_job, by (ok: gpuctl_decide's record, below) */
	GC_EV_RELEASE,		/* nvq resume (by; ok as SUSPEND's) */
	GC_EV_HOLD,		/* n: nvq hold (1), nvq release (0) */
	GC_EV_RESUME,		/* the scheduler found room for a suspended job */
	GC_EV_RECOVER,		/* a restarted nvqd reattached it */
	GC_EV_GONE		/* the job is ending: it no longer holds anything */
};

struct gc_event {
	int		type;		/* enum gc_ev */
	int64_t		job;		/* 0: none (TIMER, CHANGED) */
	int64_t		n;
	int64_t		for_job;
	int64_t		bytes, left;
	double		secs;
	int		ok;
	char		by[64];
	char		error[300];
};

/* ---- gpuctl.c: the decisions, as data ---- */

/* A job's state as gpuctl.c sees it (struct job's enum job_state, mapped). */
enum gc_job_state { GC_JOB_OTHER = 0, GC_JOB_RUNNING, GC_JOB_SUSPENDED };

/* What a suspend request needs from the host (gpuact.c gathers it when asked). */
struct gc_probe {
	char		pids[4096];	/* hooks_pids and suspend_pids: [?]PID@START,... */
	int64_t		bytes;		/* suspend_bytes; -1: unknown */
	int64_t		avail;		/* suspend_host_available; -1: unknown */
};

/*
 * What gpuctl.c sees of a job: plain facts, gathered by gpuact.c, and the
 * job's own struct gpuctl, which gpuctl.c writes.  The hooks' answers
 * (acked .. cut_why) are of lock seq gc->seq: gathered for a job whose lock
 * is REVOKING as a pass begins, and, when gpuctl.c sends a new seq,
 * derived (nobody has answered it: acked only with no process).  A revoke
 * is never over in the pass that began it (revoke_timeout >= 1 s), so
 * cut_old, cut_ranks and cut_why are only read when gathered.
 */
struct gc_job {
	int64_t		id;
	int		state;		/* enum gc_job_state: RUNNING <-> SUSPENDED written */
	uint64_t	gpumask;
	uint64_t	mem;
	int		requeue;
	int		nsess;		/* its processes linked (hooks.c) */
	int		exited;		/* its processes ended; the engine has not let go */
	int		ending;		/* it is being stopped */
	uint64_t	hook_shared;	/* GPU memory its processes share, unmovable */
	uint64_t	hook_staged;	/* host staging they hold ready */
	int		acked;		/* hooks_acked */
	int		cut_ready;	/* hooks_cut_ready */
	int		cut_old;	/* hooks_cut_old */
	int		cut_ranks;	/* hooks_cut_ranks */
	char		cut_why[200];	/* hooks_cut_why */
	int		moving;		/* hooks_moving: a process has not answered its move */
	const struct gc_probe *probe;	/* SUSPEND: NULL until gpuctl_decide asks */
	struct gpuctl	*gc;		/* the job's own: written by gpuctl.c */
};

struct sched_settings;

/* nvqd's settings and state that gpuctl.c reads (and, for all, writes). */
struct gc_env {
	int		ngpus;
	uint64_t	compute_ts;	/* GPUs whose [gpu] compute is timeslice */
	uint64_t	mode_ts;	/* GPUs whose [scheduler] mode is timeslice */
	int		offload;	/* [scheduler] offload */
	int		ckpt;		/* nvq-ckpt is installed */
	double		revoke_timeout, switch_timeout, quantum;
	double		read_from;	/* the loop has read every socket sent to before this */
	const double	*switch_cost;	/* per GPU: seconds of a suspend and a resume; 0: none yet */
	const struct sched_settings *sched;
	struct gpuctl_all *all;		/* who holds each timeslice GPU: written */
};

/* gpuctl_decide's answers besides 0 and -1. */
#define GPUCTL_PROBE	1	/* fill job->probe and decide again */
#define GPUCTL_RECORD	2	/* carry out the actions, the last a record that may
				   fail; then decide again with ev->ok 1, or -1 and
				   ev->error saying why */

/*
 * Handles one event for job j (the caller's actions appended to acts).
 * Returns 0, -1 with a sentence in err for a refused request, or
 * GPUCTL_PROBE / GPUCTL_RECORD (SUSPEND, RELEASE) as above.
 */
int		 gpuctl_decide(struct gc_job *j, const struct gc_env *, const struct gc_event *,
		    double now, struct gc_acts *, char *err, size_t errlen);
/* The pass over jobs[0..n) (the running and suspended, in the engine's
 * order); returns the next deadline (0: none). */
double		 gpuctl_decide_pass(struct gc_job *jobs, int n, const struct gc_env *, double now,
		    struct gc_acts *);
/* nvq-ckpt that GC_ACT_SPAWN asked for runs as pid. */
void		 gpuctl_spawned(struct gpuctl *, int pid);
/* The failed suspend's why (borrowed) kept; unsuspendable until now + a while. */
void		 gpuctl_unsusp(struct gpuctl *, const char *why, double now);
/*
 * What must hold in the job's lock and phase (SQLite's assert_pager_state),
 * between events: 0, or -1 with the broken rule in why.  gpuact.c calls it
 * after every decision in builds without NDEBUG.
 */
int		 gpuctl_check(const struct gc_job *, char *why, size_t len);

/* ---- gpuact.c: the engine's API ---- */

/* The names of events, locks and phases, for the log and nvq show. */
const char	*gpuctl_ev_name(int);
/* What the job's lock is now: "granted", "held", "holding", "waiting", "stopped". */
const char	*gpuctl_lock_state(const struct job *);

/*
 * Handles one event for j (NULL for TIMER and CHANGED, and for a job that
 * has ended: then nothing happens): gpuctl_decide, its actions carried
 * out.  Only engine_gpu() calls it.  Returns 0, or -1 with a sentence in
 * err for a refused request.
 */
int		 gpuctl_event(struct engine *, struct job *, const struct gc_event *, double now,
		    char *err, size_t errlen);
/*
 * The pass over every running job's lock and switch (timeslice turns,
 * grants, revokes, their deadlines, switches whose lock came back).  Only
 * engine_gpu() calls it, after the events.  Returns the next deadline (0:
 * none) for the lock timer.
 */
double		 gpuctl_pass(struct engine *, double now);

/* A new job's control: its lock is its own until a pass decides otherwise. */
void		 gpuctl_init(struct job *);
/* It starts running at now (engine_spawn). */
void		 gpuctl_started(struct job *, double now);
/* As read back at start-up: held, suspended since, by a user, its checkpointed pids. */
void		 gpuctl_loaded(struct job *, int running, int held, double suspended_at, int hold,
		    const char *ckpt_pids, double suspended_total, double now);
/* The scheduler asked it to give way and it could not: not asked again before until. */
void		 gpuctl_pin(struct job *, double until);
/* The scheduler asked it to suspend and it could not, for why (borrowed):
 * for a while it is one that cannot be suspended, stopped instead when it
 * must give way. */
void		 gpuctl_suspend_failed(struct job *, const char *why, double now);
/*
 * Whether the job cannot be suspended now, so gives way only by being
 * stopped (preempt_give): its processes share GPU memory nvq cannot move,
 * or a suspend of it failed lately.  If so, and why is not NULL, the
 * reason into why (len bytes), for its events.
 */
int		 gpuctl_unsuspendable(const struct job *, double now, char *why, size_t len);
/* Frees what gpuctl holds of a job. */
void		 gpuctl_free(struct job *);

/* Whether the job may not be asked to give way now: a resume of it failed
 * lately, a stop of it could not begin, or nvqd restarted and its hooks
 * have not linked again yet. */
int		 gpuctl_pinned(const struct job *, double now);
/* The turn on timeslice GPU g, in seconds. */
double		 gpuctl_turn(struct engine *, int g);
/* The job that holds timeslice GPU g now; 0: nobody. */
int64_t		 gpuctl_holder(const struct engine *, int g);

#endif
