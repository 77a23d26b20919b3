/*
 * gpuctl.c: a job's GPU control as one state machine (see gpuctl.h): the
 * decisions, pure.  It reads plain structs and returns what is to be done
 * as data; it does no I/O and calls no hooks_, store_ or suspend_
 * function: gpuact.c carries its actions out, in order.
 *
 * A running job has a LOCK and a PHASE, both in j->gc; nothing else writes
 * them.  Every change below happens in gpuctl_decide() (one event, one job)
 * or gpuctl_decide_pass() (every job, after the events), which gpuact.c
 * calls from engine_gpu(), once at a time.
 *
 * The actions (enum gc_act) are named in capitals in the tables: LOCK (tell
 * the processes their lock, with its seq), SIGNAL STOP or CONT, CUT (send a
 * cut's targets), MOVE (ask the hooks to move their memory), READY (an
 * nvq-ckpt ready ahead), SPAWN and KILL (nvq-ckpt), the records PIDS,
 * SUSPENDED, RESUMED, SWITCH, UNHOLD and UNHELD, COST (a GPU's measured
 * switch), FX_LIMIT and FX_KICK (the engine's part); every decision may
 * LOG.  A fact that needs an answer comes back: nvq-ckpt's pid
 * (gpuctl_spawned) or its failure to start (the event NOSPAWN); a request
 * whose record must be made before it is granted returns GPUCTL_RECORD and
 * is decided again with the outcome (gpuctl.h).
 *
 * LOCK      what its processes were told last, and whether they heard it
 *   GRANTED   they may launch kernels
 *   REVOKING  asked back with a new seq at revoke_at; some have not acknowledged
 *             (those that launched NCCL kernels report their counts first, and
 *             run on to the cut nvqd sends them: hook/cut.h)
 *   RELEASED  not theirs: every process acknowledged (or there is none)
 *   STOPPED   no acknowledgement within revoke_timeout: SIGSTOPped (pidfds);
 *             the time nvqd itself stood still, not reading, does not count
 *
 * The lock is "desired" when the job runs (not SUSPENDED), has no switch
 * under way, is not held (nvq hold), is not yielding its timeslice GPU, and
 * holds every timeslice GPU it runs on.
 *
 *   from               event                          to         action
 *   RELEASED,REVOKING  pass: desired                  GRANTED    seq++, LOCK (granted);
 *                                                                want_held = 0
 *   STOPPED            pass: desired                  GRANTED    SIGNAL CONT, seq++, LOCK;
 *                                                                want_held = 0
 *   GRANTED            pass: not desired              REVOKING   seq++, LOCK (revoked),
 *                                                                revoke_at = now
 *   REVOKING           pass: every process acked seq  RELEASED   free its timeslice GPUs; wants =
 *                                                                want_held, want_since = now;
 *                                                                cut_fails = 0
 *   REVOKING           pass: every process that can   REVOKING   send those not acked and not
 *                      cut acked seq or reported its             sent targets for seq yet the
 *                      counts (CUT), some not acked              cut (CUT): the largest count of
 *                      have counts and no targets                each communicator; cut_sent = seq
 *                      for seq (one linked late)
 *   REVOKING           pass: revoke_timeout passed,   STOPPED    SIGNAL STOP (all its processes),
 *                      its sockets read since, and a             free its timeslice GPUs
 *                      process whose hook cannot cut
 *                      did not ack, or no process
 *                      reported NCCL counts (no rank:
 *                      none is mid-collective)
 *   REVOKING           pass: revoke_timeout passed,   STOPPED    the same, logged with why; the
 *                      its sockets read since, some              bound on cuts not reached, so
 *                      reported NCCL counts, every               that a job cannot keep its lock
 *                      one not acked can cut, and                by never reaching one
 *                      cut_fails >= GPUCTL_CUT_FAILS
 *   REVOKING           pass: the same, cut_fails <    GRANTED    not reached: cut_fails++, seq++,
 *                      GPUCTL_CUT_FAILS (a rank short            LOCK; why (which process, at
 *                      of its target, or one that can            which count of which target, or
 *                      cut and did not answer or                 which did not answer or drain)
 *                      drain: stopping now could stop            in cut_error and the log; the
 *                      a rank mid-collective)                    operation that wanted the lock
 *                                                                fails: held = 0 (UNHELD: nvq hold
 *                                                                says why), yielding = 0 (a new turn),
 *                                                                DRAINING -> NONE (R) as a
 *                                                                failed suspend
 *   STOPPED            pass: DRAINING                 RELEASED   SIGNAL CONT (the driver's lock
 *                                                                needs it running)
 *   any                HOLD n / LINKED, ACK, CUT,     (pass)     held = n (a hold clears
 *                      WANT, IDLE, UNLINKED, TIMER,              cut_error); wants, idle,
 *                      CHANGED                                   want_since as reported (a
 *                                                                WANT while REVOKING is kept
 *                                                                past the release: want_held;
 *                                                                one that can cut and LINKED
 *                                                                while REVOKING has not acked
 *                                                                seq: it reports first)
 *   any                GONE                           RELEASED   free its timeslice GPUs
 *
 * Timeslice GPUs (gpuctl_all.ts_holder): the pass gives a free one to the
 * job that has waited longest for it (WANT, or LINKED on a timeslice GPU);
 * its holder yields (yielding = 1, so its lock is no longer desired) at the
 * end of its quantum, or when IDLE, if another job waits; a job whose lock
 * is RELEASED or STOPPED holds none.
 *
 * PHASE     the steps of a switch
 *   NONE        none under way (the job RUNNING or SUSPENDED)
 *   DRAINING    suspend: its lock is being taken back (not desired)
 *   MOVE_OUT    suspend: its hooks move their allocations to host memory
 *   CHECKPOINT  suspend: nvq-ckpt suspend runs
 *   RESTORE     resume: nvq-ckpt resume runs
 *   MOVE_IN     resume: its hooks bring their allocations back
 *
 *   from        event                              to          action
 *   NONE (R)    SUSPEND (checks pass)              DRAINING    PIDS recorded first (a failure
 *                                                              refuses it); READY: an nvq-ckpt
 *                                                              ready ahead for the resume
 *   DRAINING    pass: lock RELEASED or STOPPED,    MOVE_OUT    MOVE out; deadline move_until
 *               offload on and hooks linked
 *   DRAINING    pass: lock back, else              CHECKPOINT  SPAWN nvq-ckpt suspend
 *   MOVE_OUT    MOVED or UNLINKED: none moving     CHECKPOINT  SPAWN nvq-ckpt suspend
 *               pass: move_until passed            CHECKPOINT  (without their answers)
 *   CHECKPOINT  (no CUDA process to checkpoint)    NONE (S)    SUSPENDED; unsuspendable no
 *                                                              more; FX_LIMIT, FX_KICK
 *   CHECKPOINT  HELPER ok                          NONE (S)    the same
 *   CHECKPOINT  HELPER failed, NOSPAWN, or pass:   NONE (R)    SWITCH (failed); unsuspendable
 *               helper_until passed, none started              a while; FX_KICK
 *   CHECKPOINT  pass: helper_until passed          CHECKPOINT  KILL nvq-ckpt (switch_timeout)
 *   CHECKPOINT  HELPER after that kill             RESTORE     undo = 1: SPAWN nvq-ckpt resume
 *   NONE (S)    RESUME                             RESTORE     SPAWN nvq-ckpt resume
 *   NONE (S)    RESUME, nothing checkpointed       MOVE_IN or NONE (R), as below
 *   NONE (R)    RECOVER (pids recorded)            RESTORE     SPAWN nvq-ckpt resume
 *   RESTORE     HELPER ok, offload on, hooks       MOVE_IN     MOVE back
 *   RESTORE     HELPER ok, else                    NONE (R)    RESUMED (a restart's: PIDS
 *                                                              none, SWITCH); COST; FX_LIMIT,
 *                                                              FX_KICK
 *   RESTORE     HELPER failed, or NOSPAWN          NONE (S)    SWITCH (failed); hold (nvq
 *                                                              resume tries again); FX_KICK
 *   RESTORE     pass: helper_until passed          RESTORE     KILL nvq-ckpt (switch_timeout)
 *   RESTORE     HELPER after that kill, not undo   NONE (S)    failed, as the row above
 *   RESTORE     HELPER or NOSPAWN, undo (whatever  NONE (R)    the suspend failed: SWITCH,
 *               its end)                                       with how the undo went;
 *                                                              unsuspendable a while
 *   MOVE_IN     MOVED or UNLINKED: none moving,    NONE (R)    RESUMED, COST; FX_LIMIT,
 *               or pass: move_until passed                     FX_KICK
 *   MOVE_IN     the same, some bytes left behind   NONE (S)    failed, as RESTORE's
 *   NONE (S)    RELEASE (checks pass)              NONE (S)    UNHOLD recorded first (a
 *                                                              failure refuses it); hold = 0,
 *                                                              pinned = 0; FX_KICK
 *   any         GONE, or an event after the job    NONE        nothing goes on (its nvq-ckpt
 *               exited                                         ready ahead ends as the
 *                                                              engine lets go of the job)
 *
 * (R) and (S): j->state RUNNING and SUSPENDED.  A request that fails its
 * checks changes nothing and is answered with why.  A switch that fails
 * leaves the job as it was; it is never killed here.  A failed resume pins
 * it (not asked to switch again for GPUCTL_PIN); a failed suspend makes it,
 * for as long, one that cannot be suspended (gpuctl_unsuspendable), which
 * the scheduler stops with its --signal, then requeues or cancels, when it
 * must give way: a job that can make its checkpoint fail buys no place.
 */
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gcslice.h"
#include "gpuctl.h"
#include "parse.h"
#include "sched.h"
#include "preempt.h"

#define GPUCTL_PIN	60.0	/* seconds a failed switch counts (pinned, unsuspendable) */
/* revokes in a row whose cut may fail (the lock goes back); the next is stopped */
#define GPUCTL_CUT_FAILS	2

/* A decision's context: the settings, the jobs of a pass, where its actions go. */
struct gc_ctx {
	const struct gc_env *env;
	struct gc_acts	*out;
	struct gc_job	*jobs;		/* the pass's; NULL for an event */
	int		 njobs;
	double		 cost[GPUCTL_MAX_GPUS];	/* switch_cost, as COST leaves it */
};

static const char *const gc_whys[] = { "user", "preempt", "timeslice", "restart" };
static const char *const gc_evs[] = {
	"linked", "unlinked", "ack", "cut", "want", "idle", "moved", "helper", "nospawn", "timer",
	"changed", "suspend", "release", "hold", "resume", "recover", "gone"
};

const char *
gpuctl_ev_name(int t)
{
	return t >= 0 && t < (int)(sizeof(gc_evs) / sizeof(gc_evs[0])) ? gc_evs[t] : "?";
}

/* A new action of j's (gcacts_add). */
static struct gc_action *
gc_act(struct gc_ctx *c, const struct gc_job *j, int kind)
{
	return gcacts_add(c->out, j->id, kind);
}

static char *
gc_dup(const char *s)
{
	return s != NULL ? strdup(s) : NULL;
}

#define gc_log(c, j, level, ...)	gcacts_log((c)->out, (j)->id, level, __VA_ARGS__)

static void
gc_act_n(struct gc_ctx *c, const struct gc_job *j, int kind, int64_t n, int64_t m)
{
	struct gc_action *a = gc_act(c, j, kind);

	a->n = n;
	a->m = m;
}

/* Asks the engine to do fx for j once the dispatch is over. */
static void
gc_fx(struct gc_ctx *c, struct gc_job *j, int fx)
{
	gc_act_n(c, j, GC_ACT_FX, fx, 0);
}

/* LOCK: its processes are told the lock as it is now. */
static void
gc_send_lock(struct gc_ctx *c, struct gc_job *j)
{
	gc_act_n(c, j, GC_ACT_LOCK, j->gc->lock == GC_GRANTED, j->gc->seq);
	/* a seq nobody has answered yet */
	j->acked = j->nsess == 0;
	j->cut_ready = 0;
}

static int
gc_in(const struct gc_job *j, int g)
{
	return (j->gpumask & (1ULL << g)) != 0;
}

static int
gc_timesliced(struct gc_ctx *c, const struct gc_job *j)
{
	return (j->gpumask & c->env->compute_ts) != 0;
}

void
gpuctl_spawned(struct gpuctl *gc, int pid)
{
	gc->helper_pid = pid;
}

void
gpuctl_unsusp(struct gpuctl *gc, const char *why, double now)
{
	if (why != gc->error)
		snprintf(gc->error, sizeof(gc->error), "%s", why);
	gc->unsusp_until = now + GPUCTL_PIN;
}

/* ---- the switch ---- */

/* A record of j's switch (kind: an action), as it stands. */
static struct gc_action *
gc_record(struct gc_ctx *c, struct gc_job *j, int kind, const char *sk, double now)
{
	struct gc_action *a = gc_act(c, j, kind);
	struct gc_switch *w = &a->sw;
	struct gpuctl *gc = j->gc;

	w->kind = sk;
	w->why = gc_whys[gc->why];
	w->by_job = gc->for_job;
	w->started_at = gc->t0;
	w->ended_at = now;
	w->driver_seconds = gc->driver_secs;
	w->bytes = gc->ckpt_bytes;
	w->pids = gc_dup(gc->ckpt_pids);
	w->ok = 1;
	w->hook_bytes = gc->move_bytes;
	w->hook_seconds = gc->move_bytes >= 0 ? gc->move_secs : -1;
	return a;
}

/* CHECKPOINT -> NONE (S): the job holds no GPU memory now. */
static void
gc_suspended(struct gc_ctx *c, struct gc_job *j, double now)
{
	struct gpuctl *gc = j->gc;
	struct gc_action *a;
	char reason[160];

	if (gc->why == GC_USER)
		snprintf(reason, sizeof(reason), "suspended by %s", gc->by);
	else if (gc->why == GC_PREEMPT)
		snprintf(reason, sizeof(reason), "preempted by job %lld", (long long)gc->for_job);
	else
		snprintf(reason, sizeof(reason), "its turn ended; job %lld's began",
		    (long long)gc->for_job);
	a = gc_record(c, j, GC_ACT_SUSPENDED, "suspend", now);
	a->n = gc->why == GC_USER;
	a->text = gc_dup(reason);
	j->state = GC_JOB_SUSPENDED;
	gc->phase = GC_NONE;
	gc->suspended_at = now;
	gc->hold = gc->why == GC_USER;
	gc->last_suspend = now - gc->t0;
	gc->unsusp_until = 0;		/* it can be suspended after all */
	gc_log(c, j, GC_LOG_INFO, "job %lld SUSPENDED (%s) in %.2fs, %lld bytes moved (%lld by "
	    "its hooks in %.2fs)", (long long)j->id, reason, gc->last_suspend,
	    (long long)gc->ckpt_bytes, (long long)(gc->move_bytes > 0 ? gc->move_bytes : 0),
	    gc->move_secs);
	gc_fx(c, j, GC_FX_LIMIT | GC_FX_KICK);	/* its time limit waits while it does */
}

/* RESTORE or MOVE_IN -> NONE (R): the job runs again on its GPUs. */
static void
gc_resumed(struct gc_ctx *c, struct gc_job *j, double now)
{
	struct gpuctl *gc = j->gc;
	struct gc_action *a;
	double cost;
	int g;

	if (j->state == GC_JOB_RUNNING) {
		/* after a restart: its processes were put back to running */
		gc_act_n(c, j, GC_ACT_PIDS, 0, 0);
		a = gc_record(c, j, GC_ACT_SWITCH, "resume", now);
		a->sw.why = "restart";
	} else {
		gc_record(c, j, GC_ACT_RESUMED, "resume", now);
		if (gc->suspended_at > 0 && now > gc->suspended_at)
			gc->susp_total += now - gc->suspended_at;
	}
	cost = gc->last_suspend + (now - gc->t0);
	for (g = 0; g < c->env->ngpus && g < GPUCTL_MAX_GPUS; g++)
		if (gc_in(j, g)) {
			c->cost[g] = c->cost[g] > 0 ? (c->cost[g] + cost) / 2 : cost;
			a = gc_act(c, j, GC_ACT_COST);
			a->gpu = g;
			a->x = c->cost[g];
		}
	j->state = GC_JOB_RUNNING;
	gc->phase = GC_NONE;
	gc->slice_start = now;
	gc->hold = 0;
	free(gc->ckpt_pids);
	gc->ckpt_pids = NULL;
	gc->suspended_at = 0;
	gc_log(c, j, GC_LOG_INFO, "job %lld RUNNING again: resumed in %.2fs", (long long)j->id,
	    now - gc->t0);
	gc_fx(c, j, GC_FX_LIMIT | GC_FX_KICK);
}

/* A switch failed: the job stays as it was; it is not asked again for a while. */
static void
gc_failed(struct gc_ctx *c, struct gc_job *j, const char *why, double now)
{
	struct gpuctl *gc = j->gc;
	int resume = gc->phase == GC_RESTORE || gc->phase == GC_MOVE_IN;
	struct gc_action *a;

	snprintf(gc->error, sizeof(gc->error), "%s", why);
	if (resume)
		gc->pinned_until = now + GPUCTL_PIN;
	else
		gpuctl_unsusp(gc, gc->error, now);	/* stopped, not passed over */
	gc->phase = GC_NONE;
	if (resume) {
		/* still suspended: it waits for nvq resume, which tries again */
		gc->hold = j->state == GC_JOB_SUSPENDED;
		gc_log(c, j, GC_LOG_WARN, "job %lld: cannot resume it: %s; it stays suspended (nvq "
		    "resume %lld tries again)", (long long)j->id, why, (long long)j->id);
	} else
		gc_log(c, j, GC_LOG_WARN, "job %lld: cannot suspend it: %s; it runs on",
		    (long long)j->id, why);
	a = gc_record(c, j, GC_ACT_SWITCH, resume ? "resume" : "suspend", now);
	a->n = gc->hold;
	a->sw.ok = 0;
	a->sw.error = gc_dup(why);
	if (!resume) {
		free(gc->ckpt_pids);
		gc->ckpt_pids = NULL;
	}
	gc_fx(c, j, GC_FX_KICK);
}

static void gc_moved(struct gc_ctx *, struct gc_job *, double);

/* -> MOVE_OUT or MOVE_IN: asks the job's hooks to move their allocations. */
static void
gc_move(struct gc_ctx *c, struct gc_job *j, int out, double now)
{
	struct gpuctl *gc = j->gc;
	struct gc_action *a;

	gc->phase = out ? GC_MOVE_OUT : GC_MOVE_IN;
	/* at 1 GB/s, the pageable rate, beyond the time to answer at all */
	gc->move_until = now + c->env->revoke_timeout +
	    (gc->ckpt_bytes > 0 ? (double)gc->ckpt_bytes / 1e9 : 0);
	gc->move_seq++;
	gc->move_bytes = gc->move_left = 0;
	gc->move_secs = 0;
	gc->move_error[0] = '\0';
	j->moving = j->nsess > 0;	/* each of its processes is asked */
	a = gc_act(c, j, GC_ACT_MOVE);
	a->n = gc->move_seq;
	a->m = out;
	a->x = j->moving;	/* their answers are waited for */
	if (!j->moving)
		gc_moved(c, j, now);
	else
		gc_log(c, j, GC_LOG_DEBUG, "job %lld: its hooks move its memory %s",
		    (long long)j->id, out ? "out" : "back");
}

/*
 * SPAWN: nvq-ckpt for j's switch, with its deadline: switch_timeout plus a
 * second per 256 MiB the job holds.  Its pid comes back (gpuctl_spawned),
 * or its failure to start, as NOSPAWN.
 */
static void
gc_spawn(struct gc_ctx *c, struct gc_job *j, int resume, double now)
{
	struct gpuctl *gc = j->gc;
	struct gc_action *a = gc_act(c, j, GC_ACT_SPAWN);

	a->m = resume;
	a->text = gc_dup(gc->ckpt_pids);
	gc->helper = 1;
	gc->helper_pid = 0;
	gc->helper_killed = 0;
	gc->helper_secs = c->env->switch_timeout +
	    (gc->ckpt_bytes > 0 ? (double)gc->ckpt_bytes / (256.0 * 1048576.0) : 0);
	gc->helper_until = now + gc->helper_secs;
}

/* -> CHECKPOINT: the driver's checkpoint of what the hooks did not move. */
static void
gc_checkpoint(struct gc_ctx *c, struct gc_job *j, double now)
{
	j->gc->phase = GC_CHECKPOINT;
	if (j->gc->ckpt_pids[0] == '\0') {
		gc_suspended(c, j, now);	/* no CUDA process: nothing to move */
		return;
	}
	gc_spawn(c, j, 0, now);
}

/* MOVE_OUT or MOVE_IN: every process answered, went away, or is overdue. */
static void
gc_moved(struct gc_ctx *c, struct gc_job *j, double now)
{
	struct gpuctl *gc = j->gc;
	char err[400];

	gc->move_until = 0;
	if (j->exited) {
		gc->phase = GC_NONE;	/* it ended meanwhile: nothing to go on with */
		return;
	}
	if (gc->phase == GC_MOVE_OUT) {
		if (gc->move_error[0] != '\0')
			gc_log(c, j, GC_LOG_WARN, "job %lld: its hooks moved %lld bytes out, not "
			    "%lld: %s; the driver's checkpoint takes the rest", (long long)j->id,
			    (long long)gc->move_bytes, (long long)gc->move_left, gc->move_error);
		gc_checkpoint(c, j, now);
	} else if (gc->phase == GC_MOVE_IN) {
		if (gc->move_left > 0) {
			snprintf(err, sizeof(err), "bringing its memory back: %s (%lld bytes "
			    "still in host memory)", gc->move_error, (long long)gc->move_left);
			gc_failed(c, j, err, now);
		} else {
			if (gc->move_error[0] != '\0')
				gc_log(c, j, GC_LOG_WARN, "job %lld: %s", (long long)j->id,
				    gc->move_error);
			gc_resumed(c, j, now);	/* a hook that did not answer brings it back itself */
		}
	}
}

/*
 * How a giving way reads, by enum sched_give: what stops a job that cannot be
 * suspended (SCHED_GIVE_NEVER: nothing does; SUSPEND does not apply).
 */
static const char *const gc_give_says[] = {
	[SCHED_GIVE_REQUEUE] = "stops it with its --signal and queues it again (--requeue)",
	[SCHED_GIVE_CANCEL] = "stops it with its --signal and cancels it (no --requeue)",
};

/*
 * What stops unsuspendable job j instead of a suspend under nvqd's settings,
 * from preempt_give and preempt_give_turn, into buf: by a higher-priority job,
 * and, on a timeslice GPU, at the end of its turn.
 */
static void
gc_instead(struct gc_ctx *c, const struct gc_job *j, char *buf, size_t len)
{
	struct sched_job sj = { .running = 1, .unsuspendable = 1, .requeue = j->requeue };
	const struct sched_settings *s = c->env->sched;
	size_t n;
	int give = preempt_give(&sj, s), turns = (j->gpumask & c->env->mode_ts) != 0;

	if (give == SCHED_GIVE_REQUEUE || give == SCHED_GIVE_CANCEL)
		snprintf(buf, len, "a higher-priority job that needs its memory %s",
		    gc_give_says[give]);
	else
		snprintf(buf, len, "a higher-priority job that needs its memory waits for it (%s)",
		    s->preempt == SCHED_PREEMPT_OFF ? "preempt = off" :
		    "preempt = requeue, and it has no --requeue");
	give = preempt_give_turn(&sj);
	if (turns && (n = strlen(buf)) < len &&
	    (give == SCHED_GIVE_REQUEUE || give == SCHED_GIVE_CANCEL))
		snprintf(buf + n, len - n, "; at the end of its turn on a timeslice GPU, a job "
		    "waiting for its memory %s", gc_give_says[give]);
	else if (turns && (n = strlen(buf)) < len)
		snprintf(buf + n, len - n, "; it takes no turns on a timeslice GPU: jobs of its "
		    "priority wait for its end");
}

/*
 * NONE (R) -> DRAINING, or a sentence why not.  Asks for its probe first
 * (GPUCTL_PROBE), then, with processes to checkpoint, for PIDS to be
 * recorded before anything moves (GPUCTL_RECORD): an nvqd restarted in
 * between puts them back to running.
 */
static int
gc_suspend(struct gc_ctx *c, struct gc_job *j, const struct gc_event *ev, double now,
    char *err, size_t errlen)
{
	struct gpuctl *gc = j->gc;
	const char *pids;
	char shared[32];
	int64_t bytes, avail;
	struct gc_action *a;

	if (j->state != GC_JOB_RUNNING) {
		snprintf(err, errlen, "job %lld is %s; only a running job can be suspended",
		    (long long)j->id, j->state == GC_JOB_SUSPENDED ? "suspended already" : "pending");
		return -1;
	}
	if (gc->phase != GC_NONE) {
		snprintf(err, errlen, "job %lld is being %s", (long long)j->id,
		    gc->phase == GC_RESTORE ? "resumed" : "suspended");
		return -1;
	}
	if (j->gpumask == 0) {
		snprintf(err, errlen, "job %lld holds no GPU: there is nothing to suspend",
		    (long long)j->id);
		return -1;
	}
	if (j->ending) {
		snprintf(err, errlen, "job %lld is ending", (long long)j->id);
		return -1;
	}
	if (j->nsess == 0 && gc->relink_until > now) {
		snprintf(err, errlen, "job %lld's processes have not linked to nvqd again since "
		    "it restarted; try again in a few seconds", (long long)j->id);
		return -1;
	}
	if (j->hook_shared > 0) {
		/* what the hooks say they cannot move (hook/offload.h, hook.c) */
		fmt_size(j->hook_shared, shared, sizeof(shared));
		snprintf(err, errlen, "job %lld's processes share %s of GPU memory nvq cannot move "
		    "(the driver's own CUDA IPC handles: allocations under 2 MiB, or all with "
		    "offload off; cuMemExportToShareableHandle while [scheduler] offload is off; or "
		    "memory of a process that has ended): it cannot be suspended and runs on untouched; "
		    "`nvq requeue "
		    "%lld` stops it and queues it again, and ", (long long)j->id, shared,
		    (long long)j->id);
		gc_instead(c, j, err + strlen(err), errlen - strlen(err));
		return -1;
	}
	if (j->probe == NULL)
		return GPUCTL_PROBE;
	pids = j->probe->pids;
	if (pids[0] != '\0' && !c->env->ckpt) {
		snprintf(err, errlen, "nvq-ckpt is not installed beside nvqd");
		return -1;
	}
	bytes = j->probe->bytes;
	avail = j->probe->avail;
	/* the staging its processes hold ready is host memory the move needs no more of */
	if (avail >= 0)
		avail += (int64_t)(j->hook_staged < INT64_MAX / 2 ? j->hook_staged : INT64_MAX / 2);
	if (bytes > 0 && avail >= 0 && bytes > avail) {
		snprintf(err, errlen, "job %lld holds %.1f GiB of GPU memory and the host has "
		    "%.1f GiB available to take it", (long long)j->id, bytes / 1073741824.0,
		    avail / 1073741824.0);
		return -1;
	}
	if (ev->ok == 0) {
		free(gc->ckpt_pids);
		if ((gc->ckpt_pids = strdup(pids)) == NULL) {
			snprintf(err, errlen, "out of memory");
			return -1;
		}
		if (pids[0] != '\0') {
			a = gc_act(c, j, GC_ACT_PIDS);
			a->n = 1;
			a->text = gc_dup(pids);
			return GPUCTL_RECORD;
		}
	} else if (ev->ok < 0) {
		snprintf(err, errlen, "cannot record the suspend: %s", ev->error);
		free(gc->ckpt_pids);
		gc->ckpt_pids = NULL;
		return -1;
	}
	gc->ckpt_bytes = bytes;
	gc->phase = GC_DRAINING;
	/* its resume's nvq-ckpt loads the driver now, while the job holds its GPUs */
	if (pids[0] != '\0')
		gc_act(c, j, GC_ACT_READY);
	gc->why = (int)ev->n;
	gc->for_job = ev->for_job;
	if (ev->n == GC_USER)
		snprintf(gc->by, sizeof(gc->by), "%s", ev->by);
	gc->t0 = now;
	gc->error[0] = '\0';
	gc->move_bytes = -1;
	gc->driver_secs = 0;
	if (ev->for_job > 0)
		gc_log(c, j, GC_LOG_INFO, "job %lld: suspending (%s, for job %lld), processes %s",
		    (long long)j->id, gc_whys[gc->why], (long long)ev->for_job,
		    pids[0] ? pids : "none");
	else
		gc_log(c, j, GC_LOG_INFO, "job %lld: suspending (%s), processes %s",
		    (long long)j->id, gc_whys[gc->why], pids[0] ? pids : "none");
	return 0;	/* the pass takes its lock back */
}

/* NONE (S) -> RESTORE (or MOVE_IN, or NONE (R) at once). */
static void
gc_resume(struct gc_ctx *c, struct gc_job *j, double now)
{
	struct gpuctl *gc = j->gc;

	if (j->state != GC_JOB_SUSPENDED || gc->phase != GC_NONE)
		return;
	gc->phase = GC_RESTORE;
	gc->t0 = now;
	gc->move_bytes = -1;
	gc->driver_secs = 0;
	if (gc->ckpt_pids == NULL || gc->ckpt_pids[0] == '\0') {
		if (c->env->offload && j->nsess > 0)
			gc_move(c, j, 0, now);
		else
			gc_resumed(c, j, now);
		return;
	}
	gc_log(c, j, GC_LOG_INFO, "job %lld: resuming, processes %s", (long long)j->id,
	    gc->ckpt_pids);
	gc->undo = 0;
	gc_spawn(c, j, 1, now);
}

/* A restarted nvqd: a running job it had begun to suspend or resume runs on. */
static void
gc_recover(struct gc_ctx *c, struct gc_job *j, double now)
{
	struct gpuctl *gc = j->gc;

	gc->relink_until = now + GPUCTL_RELINK;
	if (j->state != GC_JOB_RUNNING || gc->ckpt_pids == NULL || gc->ckpt_pids[0] == '\0')
		return;
	gc_log(c, j, GC_LOG_INFO, "job %lld: nvqd stopped while it was being suspended or "
	    "resumed; putting processes %s back to running", (long long)j->id, gc->ckpt_pids);
	gc->phase = GC_RESTORE;
	gc->why = GC_RESTART;
	gc->t0 = now;
	gc->ckpt_bytes = -1;
	gc->move_bytes = -1;
	gc->driver_secs = 0;
	gc->undo = 0;
	gc_spawn(c, j, 1, now);
}

/* nvq resume: a job suspended by a user may resume once it fits (UNHOLD first). */
static int
gc_release(struct gc_ctx *c, struct gc_job *j, const struct gc_event *ev, double now,
    char *err, size_t errlen)
{
	struct gpuctl *gc = j->gc;
	struct gc_action *a;
	char why[128];

	if (j->state != GC_JOB_SUSPENDED || gc->phase == GC_RESTORE) {
		snprintf(err, errlen, "job %lld is %s", (long long)j->id,
		    gc->phase == GC_RESTORE ? "being resumed" : gc->phase != GC_NONE ?
		    "being suspended; resume it once it is suspended" :
		    j->state == GC_JOB_RUNNING ? "not suspended" : "pending");
		return -1;
	}
	if (!gc->hold) {
		snprintf(err, errlen, "job %lld resumes on its own once its memory fits",
		    (long long)j->id);
		return -1;
	}
	snprintf(why, sizeof(why), "resume asked by %s", ev->by);
	if (ev->ok == 0) {
		a = gc_act(c, j, GC_ACT_UNHOLD);
		a->x = now;
		a->text = gc_dup(why);
		return GPUCTL_RECORD;
	}
	if (ev->ok < 0) {
		snprintf(err, errlen, "cannot record the resume: %s", ev->error);
		return -1;
	}
	gc->hold = 0;
	gc->pinned_until = 0;
	gc_log(c, j, GC_LOG_INFO, "job %lld: %s", (long long)j->id, why);
	gc_fx(c, j, GC_FX_KICK);
	return 0;
}

/*
 * A suspend whose nvq-ckpt was killed: undone by nvq-ckpt resume (RESTORE,
 * undo), which puts its processes back to running from wherever they got
 * to; then the suspend is recorded as failed and the job runs on.  nospawn:
 * that nvq-ckpt resume could not start, why.
 */
static void
gc_undone(struct gc_ctx *c, struct gc_job *j, const struct gc_event *ev, int killed,
    const char *nospawn, double now)
{
	struct gpuctl *gc = j->gc;
	char why[sizeof(gc->helper_why) + 300];

	if (!gc->undo) {
		gc_log(c, j, GC_LOG_WARN, "job %lld: %s; putting processes %s back to running",
		    (long long)j->id, gc->helper_why, gc->ckpt_pids);
		gc->undo = 1;
		gc->phase = GC_RESTORE;
		gc_spawn(c, j, 1, now);
		return;
	}
	if (nospawn != NULL)
		snprintf(why, sizeof(why), "%s; and nvq-ckpt resume could not run: %s (its "
		    "processes may stay stopped in the driver: cancel it)", gc->helper_why, nospawn);
	else if (!ev->ok || killed)
		snprintf(why, sizeof(why), "%s; and undoing it failed: %s (its processes may "
		    "stay stopped in the driver: cancel it)", gc->helper_why,
		    killed ? "nvq-ckpt resume was killed too" : ev->error);
	else
		snprintf(why, sizeof(why), "%s, and the switch was undone", gc->helper_why);
	/* a failed suspend: the job runs on, its memory counted where it is */
	gc->undo = 0;
	gc->phase = GC_CHECKPOINT;
	gc_failed(c, j, why, now);
}

/* HELPER: nvq-ckpt ended. */
static void
gc_helper(struct gc_ctx *c, struct gc_job *j, const struct gc_event *ev, double now)
{
	struct gpuctl *gc = j->gc;
	int resume = ev->n != 0, killed;

	if (j->exited || (resume ? gc->phase != GC_RESTORE : gc->phase != GC_CHECKPOINT)) {
		gc_log(c, j, GC_LOG_INFO, "job %lld: nvq-ckpt %s ended after the job or its switch "
		    "(%s)", (long long)j->id, resume ? "resume" : "suspend",
		    ev->ok ? "ok" : ev->error);
		if (j->exited)
			gc->phase = GC_NONE;
		return;
	}
	killed = gc->helper_killed;
	gc->helper = 0;
	gc->helper_pid = 0;
	gc->helper_killed = 0;
	gc->driver_secs = ev->secs;
	if (gc->undo || (killed && !resume)) {
		gc_undone(c, j, ev, killed, NULL, now);
		return;
	}
	if (killed)
		gc_failed(c, j, gc->helper_why, now);	/* a resume: it stays suspended */
	else if (!ev->ok)
		gc_failed(c, j, ev->error, now);
	else if (resume && c->env->offload && j->nsess > 0)
		gc_move(c, j, 0, now);	/* then its hooks bring their allocations back */
	else if (resume)
		gc_resumed(c, j, now);
	else
		gc_suspended(c, j, now);
}

/* NOSPAWN: the nvq-ckpt that SPAWN asked for could not start: the switch fails. */
static void
gc_nospawn(struct gc_ctx *c, struct gc_job *j, const struct gc_event *ev, double now)
{
	struct gpuctl *gc = j->gc;
	int resume = ev->n != 0;

	if (!gc->helper || gc->helper_pid != 0 ||
	    (resume ? gc->phase != GC_RESTORE : gc->phase != GC_CHECKPOINT))
		return;	/* not this switch's: it went on meanwhile */
	gc->helper = 0;
	if (resume && gc->undo)
		gc_undone(c, j, ev, 0, ev->error, now);
	else
		gc_failed(c, j, ev->error, now);
}

/* MOVED: a process's answer, added up; the last one lets the switch go on. */
static void
gc_moved_one(struct gc_ctx *c, struct gc_job *j, const struct gc_event *ev, double now)
{
	struct gpuctl *gc = j->gc;

	if (ev->n != gc->move_seq)
		return;	/* an old move's: that switch went on without it */
	gc->move_bytes += ev->bytes;
	gc->move_left += ev->left;
	if (ev->secs > gc->move_secs)
		gc->move_secs = ev->secs;
	if (ev->error[0] != '\0' && gc->move_error[0] == '\0')
		snprintf(gc->move_error, sizeof(gc->move_error), "%s", ev->error);
	if ((gc->phase == GC_MOVE_OUT || gc->phase == GC_MOVE_IN) && !j->moving)
		gc_moved(c, j, now);
}

static void
gc_ctx_init(struct gc_ctx *c, const struct gc_env *env, struct gc_acts *out,
    struct gc_job *jobs, int njobs)
{
	int g;

	c->env = env;
	c->out = out;
	c->jobs = jobs;
	c->njobs = njobs;
	for (g = 0; g < GPUCTL_MAX_GPUS; g++)
		c->cost[g] = g < env->ngpus && env->switch_cost != NULL ? env->switch_cost[g] : 0;
}

int
gpuctl_decide(struct gc_job *j, const struct gc_env *env, const struct gc_event *ev,
    double now, struct gc_acts *out, char *err, size_t errlen)
{
	struct gpuctl *gc;
	struct gc_ctx c;

	if (j == NULL)
		return 0;	/* TIMER, CHANGED: the pass decides */
	gc_ctx_init(&c, env, out, NULL, 0);
	gc = j->gc;
	switch (ev->type) {
	case GC_EV_LINKED:
		if (gc_timesliced(&c, j) && !gc->wants) {
			gc->wants = 1;	/* a CUDA process: it will launch */
			gc->want_since = now;
		}
		if (gc->relink_until > 0) {
			gc->relink_until = 0;	/* may give way again: schedule */
			gc_fx(&c, j, GC_FX_KICK);
		}
		break;
	case GC_EV_UNLINKED:
		if (j->nsess == 0)
			gc->wants = gc->idle = 0;
		/* a process that ends in the middle of a move has nothing left to move */
		if ((gc->phase == GC_MOVE_OUT || gc->phase == GC_MOVE_IN) && !j->moving)
			gc_moved(&c, j, now);
		break;
	case GC_EV_ACK:
	case GC_EV_CUT:
		break;	/* the pass sees who acknowledged or reported */
	case GC_EV_WANT:
		if (gc->lock == GC_REVOKING)
			gc->want_held = 1;
		if (!gc->wants) {
			gc->wants = 1;
			gc->want_since = now;
		}
		break;
	case GC_EV_IDLE:
		gc->idle = (int)ev->n;
		break;
	case GC_EV_MOVED:
		gc_moved_one(&c, j, ev, now);
		break;
	case GC_EV_HELPER:
		gc_helper(&c, j, ev, now);
		break;
	case GC_EV_NOSPAWN:
		gc_nospawn(&c, j, ev, now);
		break;
	case GC_EV_SUSPEND:
		return gc_suspend(&c, j, ev, now, err, errlen);
	case GC_EV_RELEASE:
		return gc_release(&c, j, ev, now, err, errlen);
	case GC_EV_HOLD:
		gc->held = (int)ev->n;
		if (gc->held)
			gc->cut_error[0] = '\0';	/* nvq hold waits for this one's outcome */
		if (!gc->held)
			gc->wants = j->nsess > 0;
		break;
	case GC_EV_RESUME:
		gc_resume(&c, j, now);
		break;
	case GC_EV_RECOVER:
		gc_recover(&c, j, now);
		break;
	case GC_EV_GONE:
		gcslice_drop(env, j->id);
		gc->phase = GC_NONE;
		gc->lock = GC_RELEASED;
		break;
	default:
		break;
	}
	return 0;
}

/* ---- the pass ---- */

static void
gc_next(double *next, double t)
{
	if (t > 0 && (*next == 0 || t < *next))
		*next = t;
}

/*
 * Whether j's revoke_timeout is over: passed, and the loop has read its
 * sockets since.  nvqd may have stood still past it (a slow disk, a stopped
 * or starved process) with an acknowledgement sent in time waiting in a
 * socket; the loop runs its timers before it reads, so until it has read
 * once more the time is not over, and *next asks for a look right after.
 */
static int
gc_revoke_over(struct gc_ctx *c, struct gc_job *j, double now, double *next)
{
	double t = j->gc->revoke_at + c->env->revoke_timeout;

	if (now < t) {
		gc_next(next, t);
		return 0;
	}
	if (c->env->read_from < t) {
		gc_log(c, j, GC_LOG_DEBUG, "job %lld: revoke_timeout passed %.3fs ago; its sockets "
		    "are read once more first", (long long)j->id, now - t);
		gc_next(next, now);
		return 0;
	}
	return 1;
}

/*
 * REVOKING, revoke_timeout over, and every process answered: some did not
 * reach the cut (or did and their work did not drain).  Stopping them now
 * would stop a rank mid-collective: the lock goes back to the job, and the
 * operation that wanted it fails with the reason.
 */
static void
gc_cut_failed(struct gc_ctx *c, struct gc_job *j, double now)
{
	struct gpuctl *gc = j->gc;
	struct gc_action *a;
	char err[300];
	int g;

	snprintf(gc->cut_error, sizeof(gc->cut_error), "its processes did not reach the "
	    "same collective in %llds: %s; its lock was given back",
	    (long long)c->env->revoke_timeout, j->cut_why);
	gc_log(c, j, GC_LOG_WARN, "job %lld: %s (seq %lld)", (long long)j->id, gc->cut_error,
	    (long long)gc->seq);
	if (gc->held) {
		gc->held = 0;
		a = gc_act(c, j, GC_ACT_UNHELD);
		a->x = now;
		a->text = gc_dup("hold failed: its processes did not reach the same collective");
	}
	if (gc->yielding) {
		/* its turn goes on: the next quantum's end tries again */
		gc->yielding = 0;
		for (g = 0; g < c->env->ngpus; g++)
			if (c->env->all->ts_holder[g] == j->id)
				c->env->all->ts_since[g] = now;
	}
	if (gc->phase == GC_DRAINING) {
		snprintf(err, sizeof(err), "%s", gc->cut_error);
		gc_failed(c, j, err, now);
	}
	gc->cut_fails++;
	gc->lock = GC_GRANTED;
	gc->seq++;
	gc->revoke_at = 0;
	gc->want_held = 0;
	gc_send_lock(c, j);
}

/*
 * REVOKING, revoke_timeout over: SIGSTOP, where a process whose hook cannot
 * cut did not acknowledge, where no process is a rank (nothing is stopped
 * mid-collective), or where the job's cuts failed GPUCTL_CUT_FAILS times in
 * a row (the bound: a job does not keep its lock by never reaching a cut).
 */
static void
gc_stop(struct gc_ctx *c, struct gc_job *j, double now)
{
	if (j->cut_old == 0 && j->cut_ranks > 0)
		gc_log(c, j, GC_LOG_WARN, "job %lld: no cut was reached in %d revokes in a row: "
		    "stopping its processes (SIGSTOP); the last: %s", (long long)j->id,
		    j->gc->cut_fails + 1, j->cut_why);
	else
		gc_log(c, j, GC_LOG_WARN, "job %lld: no acknowledgement of the lock in %llds: "
		    "stopping its processes (SIGSTOP)", (long long)j->id,
		    (long long)c->env->revoke_timeout);
	gc_act_n(c, j, GC_ACT_SIGNAL, SIGSTOP, 0);
	j->gc->lock = GC_STOPPED;
	j->gc->revoke_at = 0;
	gcslice_release(c->env, j, now);
}

/* Rounds over the locks until nothing changes; the next deadline into *next. */
static void
gc_locks(struct gc_ctx *c, double now, double *next)
{
	struct gc_job *j;
	struct gpuctl *gc;
	int k, round, changed;

	gcslice_tidy(c->jobs, c->njobs, c->env);
	for (round = 0; round < 4; round++) {
		changed = 0;
		gcslice_assign(c->jobs, c->njobs, c->env, now);
		gcslice_yield(c->jobs, c->njobs, c->env, now, c->out, next);
		for (k = 0; k < c->njobs; k++) {
			j = &c->jobs[k];
			gc = j->gc;
			if (j->state != GC_JOB_RUNNING)
				continue;
			if (gcslice_desired(c->env, j) && gc->lock != GC_GRANTED) {
				if (gc->lock == GC_STOPPED)
					gc_act_n(c, j, GC_ACT_SIGNAL, SIGCONT, 0);
				gc->lock = GC_GRANTED;
				gc->seq++;
				gc->revoke_at = 0;
				gc->want_held = 0;
				gc_send_lock(c, j);
				gc_log(c, j, GC_LOG_DEBUG, "job %lld: lock granted (seq %lld)",
				    (long long)j->id, (long long)gc->seq);
				changed = 1;
			} else if (!gcslice_desired(c->env, j) && gc->lock == GC_GRANTED) {
				gc->lock = GC_REVOKING;
				gc->seq++;
				gc->revoke_at = now;
				gc_send_lock(c, j);
				gc_log(c, j, GC_LOG_DEBUG, "job %lld: lock asked back (seq %lld)",
				    (long long)j->id, (long long)gc->seq);
				changed = 1;
			}
			if (gc->lock != GC_REVOKING)
				continue;
			if (j->acked) {
				gc->lock = GC_RELEASED;
				gc->revoke_at = 0;
				gc->cut_fails = 0;
				gcslice_release(c->env, j, now);
				changed = 1;
				continue;
			}
			if (j->cut_ready) {
				gc_act_n(c, j, GC_ACT_CUT, gc->seq, 0);
				gc->cut_sent = gc->seq;
				j->cut_ready = 0;	/* sent: none waits for targets now */
			}
			if (!gc_revoke_over(c, j, now, next))
				continue;
			if (j->cut_old == 0 && j->cut_ranks > 0 && gc->cut_fails < GPUCTL_CUT_FAILS)
				gc_cut_failed(c, j, now);
			else
				gc_stop(c, j, now);
			changed = 1;
		}
		if (!changed)
			break;
	}
}

/*
 * The switches the pass moves on: DRAINING jobs whose lock is back, moves
 * whose answers are overdue.  Returns 1 if a switch ended (its lock may be
 * desired again).
 */
static int
gc_switches(struct gc_ctx *c, double now, double *next)
{
	struct gc_job *j;
	struct gpuctl *gc;
	int k, ended = 0;

	for (k = 0; k < c->njobs; k++) {
		j = &c->jobs[k];
		gc = j->gc;
		if ((gc->phase == GC_CHECKPOINT || gc->phase == GC_RESTORE) && gc->helper) {
			if (now < gc->helper_until)
				gc_next(next, gc->helper_until);
			else if (gc->helper_pid == 0) {
				/* no start, no failure reported (lost for want of memory): as NOSPAWN */
				struct gc_event ev = { .type = GC_EV_NOSPAWN,
				    .n = gc->phase == GC_RESTORE };

				snprintf(ev.error, sizeof(ev.error), "nvq-ckpt did not start");
				gc_nospawn(c, j, &ev, now);
				ended = 1;
			} else if (!gc->helper_killed) {
				snprintf(gc->helper_why, sizeof(gc->helper_why), "nvq-ckpt %s took "
				    "longer than %.0f s (switch_timeout): killed",
				    gc->phase == GC_RESTORE ? "resume" : "suspend", gc->helper_secs);
				gc_log(c, j, GC_LOG_WARN, "job %lld: %s", (long long)j->id,
				    gc->helper_why);
				gc->helper_killed = 1;
				gc_act_n(c, j, GC_ACT_KILL, gc->helper_pid, 0);	/* its end: HELPER */
			}
			continue;
		}
		if ((gc->phase == GC_MOVE_OUT || gc->phase == GC_MOVE_IN) && gc->move_until > 0) {
			if (now >= gc->move_until) {
				gc_log(c, j, GC_LOG_WARN, "job %lld: its hooks did not answer the move "
				    "in time; going on without them", (long long)j->id);
				snprintf(gc->move_error, sizeof(gc->move_error), "no answer in %.0fs",
				    gc->move_until - gc->t0);
				gc_moved(c, j, now);
				ended |= gc->phase == GC_NONE;
			} else
				gc_next(next, gc->move_until);
			continue;
		}
		if (gc->phase != GC_DRAINING || (gc->lock != GC_RELEASED && gc->lock != GC_STOPPED))
			continue;
		if (gc->lock == GC_STOPPED) {
			/* the driver's lock needs it running */
			gc_act_n(c, j, GC_ACT_SIGNAL, SIGCONT, 0);
			gc->lock = GC_RELEASED;
		}
		if (c->env->offload && j->nsess > 0)
			gc_move(c, j, 1, now);
		else
			gc_checkpoint(c, j, now);
		ended |= gc->phase == GC_NONE;
		/* the move's deadline: its hooks may never answer */
		if (gc->phase == GC_MOVE_OUT)
			gc_next(next, gc->move_until);
	}
	return ended;
}

double
gpuctl_decide_pass(struct gc_job *jobs, int n, const struct gc_env *env, double now,
    struct gc_acts *out)
{
	struct gc_ctx c;
	double next;
	int k;

	gc_ctx_init(&c, env, out, jobs, n);
	/* a switch that ends (or fails) in the pass may change the locks: again */
	for (k = 0; k < 4; k++) {
		next = 0;
		gc_locks(&c, now, &next);
		if (!gc_switches(&c, now, &next))
			break;
	}
	return next;
}

/* ---- the invariants ---- */

#define GC_RULE(cond, text)	do { if (!(cond)) { snprintf(why, len, "%s", text); return -1; } } while (0)

int
gpuctl_check(const struct gc_job *j, char *why, size_t len)
{
	const struct gpuctl *gc = j->gc;
	int switching = gc->phase == GC_DRAINING || gc->phase == GC_MOVE_OUT ||
	    gc->phase == GC_CHECKPOINT;

	GC_RULE(gc->lock >= GC_GRANTED && gc->lock <= GC_STOPPED, "lock out of range");
	GC_RULE(gc->phase >= GC_NONE && gc->phase <= GC_MOVE_IN, "phase out of range");
	/* the lock */
	GC_RULE((gc->lock == GC_REVOKING) == (gc->revoke_at > 0),
	    "revoke_at set exactly while REVOKING");
	GC_RULE(!gc->want_held || gc->lock == GC_REVOKING, "want_held outside REVOKING");
	GC_RULE(gc->cut_sent <= gc->seq, "a cut sent for a seq not sent");
	GC_RULE(gc->cut_fails >= 0 && gc->cut_fails <= GPUCTL_CUT_FAILS,
	    "cut_fails past GPUCTL_CUT_FAILS");
	GC_RULE(j->state != GC_JOB_SUSPENDED || gc->lock == GC_RELEASED,
	    "a SUSPENDED job's lock not RELEASED");
	/* the switch */
	GC_RULE(!switching || j->state != GC_JOB_SUSPENDED,
	    "DRAINING, MOVE_OUT or CHECKPOINT while SUSPENDED");
	GC_RULE(!switching || gc->ckpt_pids != NULL,
	    "DRAINING, MOVE_OUT or CHECKPOINT without its pids");
	GC_RULE(gc->phase != GC_RESTORE || (gc->ckpt_pids != NULL && gc->ckpt_pids[0] != '\0'),
	    "RESTORE without pids to restore");
	GC_RULE((gc->phase != GC_CHECKPOINT && gc->phase != GC_RESTORE) || gc->helper,
	    "CHECKPOINT or RESTORE without nvq-ckpt");
	GC_RULE(!gc->helper_killed || gc->helper, "helper_killed with no nvq-ckpt");
	GC_RULE((gc->phase == GC_MOVE_OUT || gc->phase == GC_MOVE_IN) == (gc->move_until > 0),
	    "move_until set exactly while MOVE_OUT or MOVE_IN");
	GC_RULE(!gc->undo || gc->phase == GC_RESTORE, "undo outside RESTORE");
	return 0;
}
