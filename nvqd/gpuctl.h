/*
 * gpuctl.h: a job's GPU control, one state machine per running job: its
 * GPU lock (granted, asked back, released, stopped) and its switch (the
 * steps of a suspend and of a resume).  gpuctl.c lists every state and
 * transition at its top.
 *
 * It is driven by events: facts that hooks.c (a process linked, went away,
 * acknowledged a lock, waits for one, is idle, answered a move) and
 * suspend.c (nvq-ckpt ended) report, the lock timer, and requests (nvq
 * suspend, resume, hold, release; the scheduler's preemptions and
 * resumes; a restart's recovery).  The engine dispatches every one of them
 * from one place, engine_gpu(), never re-entrantly: an event reported while
 * one is being handled waits in a queue and is handled next, in the same
 * dispatch, and the lock pass and its timer follow once the queue is empty.
 *
 * gpuctl.c writes struct gpuctl (j->gc) and, at a switch's end, j->state
 * between RUNNING and SUSPENDED; nothing else writes them.  It acts through
 * hooks.c (tell the processes, signal them, ask them to move) and suspend.c
 * (run nvq-ckpt); what the engine must do after (re-arm a time limit, run a
 * scheduling pass) it asks for in gc.fx, which the dispatcher carries out.
 * hooks.c and suspend.c never call each other, nor gpuctl.c.
 */
#ifndef NVQ_GPUCTL_H
#define NVQ_GPUCTL_H

#include <stddef.h>
#include <stdint.h>

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
	int		helper_pid;	/* nvq-ckpt, while CHECKPOINT or RESTORE; 0: none */
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
	GC_EV_TIMER,		/* the lock timer fired */
	GC_EV_CHANGED,		/* jobs or settings changed: decide the locks again */
	/* requests, made outside a dispatch; the first three may be refused */
	GC_EV_SUSPEND,		/* n why, for_job, by */
	GC_EV_RELEASE,		/* nvq resume (by) */
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

/* The names of events, locks and phases, for the log and nvq show. */
const char	*gpuctl_ev_name(int);
/* What the job's lock is now: "granted", "held", "holding", "waiting", "stopped". */
const char	*gpuctl_lock_state(const struct job *);

/*
 * Handles one event for j (NULL for TIMER and CHANGED, and for a job that
 * has ended: then nothing happens).  Only engine_gpu() calls it.  Returns
 * 0, or -1 with a sentence in err for a refused request.
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
 * stopped (sched_give): its processes share GPU memory nvq cannot move,
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
