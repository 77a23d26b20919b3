/*
 * gpuctl.c: a job's GPU control as one state machine (see gpuctl.h).
 *
 * A running job has a LOCK and a PHASE, both in j->gc; nothing else writes
 * them.  Every change below happens in gpuctl_event() (one event, one job)
 * or gpuctl_pass() (every job, after the events), which only engine_gpu()
 * calls, once at a time.
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
 *   RELEASED,REVOKING  pass: desired                  GRANTED    seq++, tell its processes;
 *                                                                want_held = 0
 *   STOPPED            pass: desired                  GRANTED    SIGCONT, seq++, tell;
 *                                                                want_held = 0
 *   GRANTED            pass: not desired              REVOKING   seq++, tell, revoke_at = now
 *   REVOKING           pass: every process acked seq  RELEASED   free its timeslice GPUs; wants =
 *                                                                want_held, want_since = now;
 *                                                                cut_fails = 0
 *   REVOKING           pass: every process that can   REVOKING   send those not acked and not
 *                      cut acked seq or reported its             sent targets for seq yet the
 *                      counts (CUT), some not acked              cut: the largest count of each
 *                      have counts and no targets                communicator; cut_sent = seq
 *                      for seq (one linked late)
 *   REVOKING           pass: revoke_timeout passed,   STOPPED    SIGSTOP (all its processes),
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
 *                      GPUCTL_CUT_FAILS (a rank short            tell; why (which process, at
 *                      of its target, or one that can            which count of which target, or
 *                      cut and did not answer or                 which did not answer or drain)
 *                      drain: stopping now could stop            in cut_error and the log; the
 *                      a rank mid-collective)                    operation that wanted the lock
 *                                                                fails: held = 0 (nvq hold says
 *                                                                why), yielding = 0 (a new turn),
 *                                                                DRAINING -> NONE (R) as a
 *                                                                failed suspend
 *   STOPPED            pass: DRAINING                 RELEASED   SIGCONT (the driver's lock
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
 *   NONE (R)    SUSPEND (checks pass)              DRAINING    record its pids first; an
 *                                                              nvq-ckpt ready ahead for the
 *                                                              resume (suspend_ready)
 *   DRAINING    pass: lock RELEASED or STOPPED,    MOVE_OUT    ask its hooks to move out;
 *               offload on and hooks linked                    deadline move_until
 *   DRAINING    pass: lock back, else              CHECKPOINT  spawn nvq-ckpt suspend
 *   MOVE_OUT    MOVED or UNLINKED: none moving     CHECKPOINT  spawn nvq-ckpt suspend
 *               pass: move_until passed            CHECKPOINT  (without their answers)
 *   CHECKPOINT  (no CUDA process to checkpoint)    NONE (S)    record; unsuspendable no
 *                                                              more; FX_LIMIT, FX_KICK
 *   CHECKPOINT  HELPER ok                          NONE (S)    the same
 *   CHECKPOINT  HELPER failed, or spawn failed     NONE (R)    record; unsuspendable a
 *                                                              while; FX_KICK
 *   CHECKPOINT  pass: helper_until passed          CHECKPOINT  kill nvq-ckpt (switch_timeout)
 *   CHECKPOINT  HELPER after that kill             RESTORE     undo = 1: spawn nvq-ckpt resume
 *   NONE (S)    RESUME                             RESTORE     spawn nvq-ckpt resume
 *   NONE (S)    RESUME, nothing checkpointed       MOVE_IN or NONE (R), as below
 *   NONE (R)    RECOVER (pids recorded)            RESTORE     spawn nvq-ckpt resume
 *   RESTORE     HELPER ok, offload on, hooks       MOVE_IN     ask its hooks to move back
 *   RESTORE     HELPER ok, else                    NONE (R)    record; FX_LIMIT, FX_KICK
 *   RESTORE     HELPER failed, or spawn failed     NONE (S)    record; hold (nvq resume
 *                                                              tries again); FX_KICK
 *   RESTORE     pass: helper_until passed          RESTORE     kill nvq-ckpt (switch_timeout)
 *   RESTORE     HELPER after that kill, not undo   NONE (S)    failed, as the row above
 *   RESTORE     HELPER, undo (whatever its end)    NONE (R)    the suspend failed: record,
 *                                                              with how the undo went;
 *                                                              unsuspendable a while
 *   MOVE_IN     MOVED or UNLINKED: none moving,    NONE (R)    record; FX_LIMIT, FX_KICK
 *               or pass: move_until passed
 *   MOVE_IN     the same, some bytes left behind   NONE (S)    failed, as RESTORE's
 *   NONE (S)    RELEASE (checks pass)              NONE (S)    hold = 0, pinned = 0; FX_KICK
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

#include "engine.h"
#include "gpuctl.h"
#include "hooks.h"
#include "jobtab.h"
#include "log.h"
#include "parse.h"
#include "suspend.h"

#define GPUCTL_PIN	60.0	/* seconds a failed switch counts (pinned, unsuspendable) */
#define GPUCTL_TURN_MIN	5.0	/* the shortest automatic turn */
/* revokes in a row whose cut may fail (the lock goes back); the next is stopped */
#define GPUCTL_CUT_FAILS	2
/*
 * Before a switch is measured on a GPU, a suspend plus a resume of m bytes
 * is guessed from those measured on an H100 (docs/gpu-results.md): the
 * driver's checkpoint alone about 2 GB/s each way; with the hook's offload
 * about 8 GB/s for the round trip, plus 2 s of the driver's for the rest.
 */
#define SUSPEND_RATE	2e9
#define OFFLOAD_RATE	8e9
#define OFFLOAD_FIXED	2.0

static const char *const gc_whys[] = { "user", "preempt", "timeslice", "restart" };
static const char *const gc_evs[] = {
	"linked", "unlinked", "ack", "cut", "want", "idle", "moved", "helper", "timer", "changed",
	"suspend", "release", "hold", "resume", "recover", "gone"
};

const char *
gpuctl_ev_name(int t)
{
	return t >= 0 && t < (int)(sizeof(gc_evs) / sizeof(gc_evs[0])) ? gc_evs[t] : "?";
}

const char *
gpuctl_lock_state(const struct job *j)
{
	switch (j->gc.lock) {
	case GC_STOPPED:
		return "stopped";
	case GC_GRANTED:
		return "granted";
	case GC_REVOKING:
		return "holding";	/* asked back, not acknowledged yet */
	default:
		return j->gc.held ? "held" : "waiting";
	}
}

void
gpuctl_init(struct job *j)
{
	free(j->gc.ckpt_pids);
	memset(&j->gc, 0, sizeof(j->gc));
	j->gc.lock = GC_GRANTED;
	j->gc.ckpt_bytes = -1;
	j->gc.move_bytes = -1;
}

void
gpuctl_started(struct job *j, double now)
{
	j->gc.slice_start = now;
}

void
gpuctl_loaded(struct job *j, int running, int held, double suspended_at, int hold,
    const char *ckpt_pids, double suspended_total, double now)
{
	j->gc.slice_start = now;	/* a restart: a full turn */
	j->gc.suspended_at = suspended_at;
	j->gc.hold = hold;
	j->gc.susp_total = suspended_total;
	if (ckpt_pids != NULL)
		j->gc.ckpt_pids = strdup(ckpt_pids);
	if (held) {
		j->gc.held = 1;	/* its processes get the lock back on release */
		j->gc.lock = GC_RELEASED;
	}
	if (!running)
		j->gc.lock = GC_RELEASED;	/* its hooks, linking again, wait for its resume */
}

void
gpuctl_pin(struct job *j, double until)
{
	j->gc.pinned_until = until;
}

void
gpuctl_free(struct job *j)
{
	free(j->gc.ckpt_pids);
	j->gc.ckpt_pids = NULL;
}

int
gpuctl_pinned(const struct job *j, double now)
{
	return j->gc.pinned_until > now || (j->nsess == 0 && j->gc.relink_until > now);
}

void
gpuctl_suspend_failed(struct job *j, const char *why, double now)
{
	if (why != j->gc.error)
		snprintf(j->gc.error, sizeof(j->gc.error), "%s", why);
	j->gc.unsusp_until = now + GPUCTL_PIN;
}

int
gpuctl_unsuspendable(const struct job *j, double now, char *why, size_t len)
{
	if (j->hook_shared > 0) {
		if (why != NULL)
			snprintf(why, len, "it shares GPU memory");
		return 1;
	}
	if (j->gc.unsusp_until > now) {
		if (why != NULL)
			snprintf(why, len, "its suspend failed: %s", j->gc.error);
		return 1;
	}
	return 0;
}

double
gpuctl_turn(struct engine *e, int g)
{
	double cost = e->switch_cost[g], m = 0;
	const struct job *j;

	if (e->cfg.turn > 0)
		return e->cfg.turn;
	if (cost <= 0) {
		/* nothing measured yet: guess from the largest job there */
		for (j = e->held; j != NULL; j = j->lnext)
			if ((j->gpumask & (1ULL << g)) && (double)j->mem > m)
				m = (double)j->mem;
		cost = e->cfg.offload ? OFFLOAD_FIXED + m / OFFLOAD_RATE : 2 * m / SUSPEND_RATE;
	}
	return sched_quantum(cost, e->cfg.switch_overhead, GPUCTL_TURN_MIN, 0);
}

/* Asks the dispatcher to do fx for j once the event is handled. */
static void
gc_fx(struct engine *e, struct job *j, int fx)
{
	if (j->gc.fx == 0) {
		j->gc.fx_next = e->gca.fx;
		e->gca.fx = j;
	}
	j->gc.fx |= fx;
}

static int
gc_in(const struct job *j, int g)
{
	return (j->gpumask & (1ULL << g)) != 0;
}

static int
gc_timesliced(struct engine *e, const struct job *j)
{
	return config_timesliced(&e->cfg, j->gpumask, e->gpus.n);
}

/* ---- the switch ---- */

static void
gc_record(struct engine *e, struct job *j, const char *kind, char *uuids, size_t ulen,
    struct store_switch *w, double now)
{
	gpu_uuids(&e->gpus, j->gpumask, uuids, ulen);
	memset(w, 0, sizeof(*w));
	w->kind = kind;
	w->why = gc_whys[j->gc.why];
	w->by_job = j->gc.for_job;
	w->uuids = uuids;
	w->started_at = j->gc.t0;
	w->ended_at = now;
	w->driver_seconds = j->gc.driver_secs;
	w->bytes = j->gc.ckpt_bytes;
	w->pids = j->gc.ckpt_pids;
	w->ok = 1;
	w->hook_bytes = j->gc.move_bytes;
	w->hook_seconds = j->gc.move_bytes >= 0 ? j->gc.move_secs : -1;
}

/* CHECKPOINT -> NONE (S): the job holds no GPU memory now. */
static void
gc_suspended(struct engine *e, struct job *j, double now)
{
	char uuids[SCHED_MAX_GPUS * 97], reason[160];
	struct store_switch w;

	gc_record(e, j, "suspend", uuids, sizeof(uuids), &w, now);
	if (j->gc.why == GC_USER)
		snprintf(reason, sizeof(reason), "suspended by %s", j->gc.by);
	else if (j->gc.why == GC_PREEMPT)
		snprintf(reason, sizeof(reason), "preempted by job %lld", (long long)j->gc.for_job);
	else
		snprintf(reason, sizeof(reason), "its turn ended; job %lld's began",
		    (long long)j->gc.for_job);
	if (store_job_suspended(e->store, j->id, j->gc.why == GC_USER, reason, &w) == -1)
		log_warnx("job %lld: cannot record its suspend; it is suspended all the same",
		    (long long)j->id);
	j->state = JOB_SUSPENDED;
	j->gc.phase = GC_NONE;
	j->gc.suspended_at = now;
	j->gc.hold = j->gc.why == GC_USER;
	j->gc.last_suspend = now - j->gc.t0;
	j->gc.unsusp_until = 0;		/* it can be suspended after all */
	log_info("job %lld SUSPENDED (%s) in %.2fs, %lld bytes moved (%lld by its hooks in "
	    "%.2fs)", (long long)j->id, reason, j->gc.last_suspend, (long long)w.bytes,
	    (long long)(j->gc.move_bytes > 0 ? j->gc.move_bytes : 0), j->gc.move_secs);
	gc_fx(e, j, GC_FX_LIMIT | GC_FX_KICK);	/* its time limit waits while it does */
}

/* RESTORE or MOVE_IN -> NONE (R): the job runs again on its GPUs. */
static void
gc_resumed(struct engine *e, struct job *j, double now)
{
	char uuids[SCHED_MAX_GPUS * 97];
	struct store_switch w;
	double cost;
	int g;

	gc_record(e, j, "resume", uuids, sizeof(uuids), &w, now);
	if (j->state == JOB_RUNNING) {
		/* after a restart: its processes were put back to running */
		w.why = "restart";
		store_job_ckpt_pids(e->store, j->id, NULL);
		store_switch_record(e->store, j->id, 0, &w);
	} else {
		if (store_job_resumed(e->store, j->id, &w) == -1)
			log_warnx("job %lld: cannot record its resume; it runs all the same",
			    (long long)j->id);
		if (j->gc.suspended_at > 0 && now > j->gc.suspended_at)
			j->gc.susp_total += now - j->gc.suspended_at;
	}
	cost = j->gc.last_suspend + (now - j->gc.t0);
	for (g = 0; g < e->gpus.n; g++)
		if (gc_in(j, g))
			e->switch_cost[g] = e->switch_cost[g] > 0 ?
			    (e->switch_cost[g] + cost) / 2 : cost;
	j->state = JOB_RUNNING;
	j->gc.phase = GC_NONE;
	j->gc.slice_start = now;
	j->gc.hold = 0;
	free(j->gc.ckpt_pids);
	j->gc.ckpt_pids = NULL;
	j->gc.suspended_at = 0;
	log_info("job %lld RUNNING again: resumed in %.2fs", (long long)j->id, now - j->gc.t0);
	gc_fx(e, j, GC_FX_LIMIT | GC_FX_KICK);
}

/* A switch failed: the job stays as it was; it is not asked again for a while. */
static void
gc_failed(struct engine *e, struct job *j, const char *why, double now)
{
	char uuids[SCHED_MAX_GPUS * 97];
	struct store_switch w;
	int resume = j->gc.phase == GC_RESTORE || j->gc.phase == GC_MOVE_IN;

	gc_record(e, j, resume ? "resume" : "suspend", uuids, sizeof(uuids), &w, now);
	w.ok = 0;
	w.error = why;
	snprintf(j->gc.error, sizeof(j->gc.error), "%s", why);
	if (resume)
		j->gc.pinned_until = now + GPUCTL_PIN;
	else
		gpuctl_suspend_failed(j, j->gc.error, now);	/* stopped, not passed over */
	j->gc.phase = GC_NONE;
	if (resume) {
		/* still suspended: it waits for nvq resume, which tries again */
		j->gc.hold = j->state == JOB_SUSPENDED;
		log_warnx("job %lld: cannot resume it: %s; it stays suspended (nvq resume %lld "
		    "tries again)", (long long)j->id, why, (long long)j->id);
	} else
		log_warnx("job %lld: cannot suspend it: %s; it runs on", (long long)j->id, why);
	if (store_switch_record(e->store, j->id, j->gc.hold, &w) == -1)
		log_warnx("job %lld: cannot record the failed %s", (long long)j->id, w.kind);
	if (!resume) {
		/* w.pids pointed here: freed once recorded */
		free(j->gc.ckpt_pids);
		j->gc.ckpt_pids = NULL;
	}
	gc_fx(e, j, GC_FX_KICK);
}

static void gc_moved(struct engine *, struct job *, double);

/* -> MOVE_OUT or MOVE_IN: asks the job's hooks to move their allocations. */
static void
gc_move(struct engine *e, struct job *j, int out, double now)
{
	j->gc.phase = out ? GC_MOVE_OUT : GC_MOVE_IN;
	/* at 1 GB/s, the pageable rate, beyond the time to answer at all */
	j->gc.move_until = now + (double)e->cfg.revoke_timeout +
	    (j->gc.ckpt_bytes > 0 ? (double)j->gc.ckpt_bytes / 1e9 : 0);
	j->gc.move_seq++;
	j->gc.move_bytes = j->gc.move_left = 0;
	j->gc.move_secs = 0;
	j->gc.move_error[0] = '\0';
	if (hooks_move(e, j, j->gc.move_seq, out) == 0)
		gc_moved(e, j, now);
	else
		log_debug("job %lld: its hooks move its memory %s", (long long)j->id,
		    out ? "out" : "back");
}

/*
 * Starts nvq-ckpt for j's switch, with its deadline: switch_timeout plus a
 * second per 256 MiB the job holds.  0, or -1 with why in err.
 */
static int
gc_spawn(struct engine *e, struct job *j, int resume, double now, char *err, size_t errlen)
{
	int pid = suspend_spawn(e, j, resume, j->gc.ckpt_pids, err, errlen);

	if (pid == -1)
		return -1;
	j->gc.helper_pid = pid;
	j->gc.helper_killed = 0;
	j->gc.helper_secs = (double)e->cfg.switch_timeout +
	    (j->gc.ckpt_bytes > 0 ? (double)j->gc.ckpt_bytes / (256.0 * 1048576.0) : 0);
	j->gc.helper_until = now + j->gc.helper_secs;
	return 0;
}

/* -> CHECKPOINT: the driver's checkpoint of what the hooks did not move. */
static void
gc_checkpoint(struct engine *e, struct job *j, double now)
{
	char err[256];

	j->gc.phase = GC_CHECKPOINT;
	if (j->gc.ckpt_pids[0] == '\0') {
		gc_suspended(e, j, now);	/* no CUDA process: nothing to move */
		return;
	}
	if (gc_spawn(e, j, 0, now, err, sizeof(err)) == -1)
		gc_failed(e, j, err, now);
}

/* MOVE_OUT or MOVE_IN: every process answered, went away, or is overdue. */
static void
gc_moved(struct engine *e, struct job *j, double now)
{
	char err[400];

	j->gc.move_until = 0;
	if (j->exited) {
		j->gc.phase = GC_NONE;	/* it ended meanwhile: nothing to go on with */
		return;
	}
	if (j->gc.phase == GC_MOVE_OUT) {
		if (j->gc.move_error[0] != '\0')
			log_warnx("job %lld: its hooks moved %lld bytes out, not %lld: %s; the "
			    "driver's checkpoint takes the rest", (long long)j->id,
			    (long long)j->gc.move_bytes, (long long)j->gc.move_left,
			    j->gc.move_error);
		gc_checkpoint(e, j, now);
	} else if (j->gc.phase == GC_MOVE_IN) {
		if (j->gc.move_left > 0) {
			snprintf(err, sizeof(err), "bringing its memory back: %s (%lld bytes "
			    "still in host memory)", j->gc.move_error, (long long)j->gc.move_left);
			gc_failed(e, j, err, now);
		} else {
			if (j->gc.move_error[0] != '\0')
				log_warnx("job %lld: %s", (long long)j->id, j->gc.move_error);
			gc_resumed(e, j, now);	/* a hook that did not answer brings it back itself */
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
 * from sched_give and sched_give_turn, into buf: by a higher-priority job,
 * and, on a timeslice GPU, at the end of its turn.
 */
static void
gc_instead(struct engine *e, const struct job *j, char *buf, size_t len)
{
	struct sched_job sj = { .running = 1, .unsuspendable = 1, .requeue = j->requeue };
	const struct sched_settings *s = &e->cfg.sched;
	size_t n;
	int g, give = sched_give(&sj, s), turns = 0;

	if (give == SCHED_GIVE_REQUEUE || give == SCHED_GIVE_CANCEL)
		snprintf(buf, len, "a higher-priority job that needs its memory %s",
		    gc_give_says[give]);
	else
		snprintf(buf, len, "a higher-priority job that needs its memory waits for it (%s)",
		    s->preempt == SCHED_PREEMPT_OFF ? "preempt = off" :
		    "preempt = requeue, and it has no --requeue");
	for (g = 0; g < e->gpus.n; g++)
		if (gc_in(j, g) && config_mode(&e->cfg, g) == SCHED_TIMESLICE)
			turns = 1;
	give = sched_give_turn(&sj);
	if (turns && (n = strlen(buf)) < len &&
	    (give == SCHED_GIVE_REQUEUE || give == SCHED_GIVE_CANCEL))
		snprintf(buf + n, len - n, "; at the end of its turn on a timeslice GPU, a job "
		    "waiting for its memory %s", gc_give_says[give]);
	else if (turns && (n = strlen(buf)) < len)
		snprintf(buf + n, len - n, "; it takes no turns on a timeslice GPU: jobs of its "
		    "priority wait for its end");
}

/* NONE (R) -> DRAINING, or a sentence why not. */
static int
gc_suspend(struct engine *e, struct job *j, const struct gc_event *ev, double now, char *err,
    size_t errlen)
{
	char pids[4096];	/* HOOKS_MAX_PIDS and more, each PID@START */
	char shared[32];
	int64_t bytes, avail;

	if (j->state != JOB_RUNNING) {
		snprintf(err, errlen, "job %lld is %s; only a running job can be suspended",
		    (long long)j->id, j->state == JOB_SUSPENDED ? "suspended already" : "pending");
		return -1;
	}
	if (j->gc.phase != GC_NONE) {
		snprintf(err, errlen, "job %lld is being %s", (long long)j->id,
		    j->gc.phase == GC_RESTORE ? "resumed" : "suspended");
		return -1;
	}
	if (j->gpumask == 0) {
		snprintf(err, errlen, "job %lld holds no GPU: there is nothing to suspend",
		    (long long)j->id);
		return -1;
	}
	if (j->ending[0] != '\0') {
		snprintf(err, errlen, "job %lld is ending", (long long)j->id);
		return -1;
	}
	if (j->nsess == 0 && j->gc.relink_until > now) {
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
		gc_instead(e, j, err + strlen(err), errlen - strlen(err));
		return -1;
	}
	hooks_pids(e, j, 1, pids, sizeof(pids));
	suspend_pids(j, pids, sizeof(pids));
	if (pids[0] != '\0' && e->ckpt[0] == '\0') {
		snprintf(err, errlen, "nvq-ckpt is not installed beside nvqd");
		return -1;
	}
	bytes = suspend_bytes(e, j);
	avail = suspend_host_available();
	/* the staging its processes hold ready is host memory the move needs no more of */
	if (avail >= 0)
		avail += (int64_t)(j->hook_staged < INT64_MAX / 2 ? j->hook_staged : INT64_MAX / 2);
	if (bytes > 0 && avail >= 0 && bytes > avail) {
		snprintf(err, errlen, "job %lld holds %.1f GiB of GPU memory and the host has "
		    "%.1f GiB available to take it", (long long)j->id, bytes / 1073741824.0,
		    avail / 1073741824.0);
		return -1;
	}
	free(j->gc.ckpt_pids);
	if ((j->gc.ckpt_pids = strdup(pids)) == NULL) {
		snprintf(err, errlen, "out of memory");
		return -1;
	}
	/* recorded first: an nvqd restarted in between puts them back to running */
	if (pids[0] != '\0' && store_job_ckpt_pids(e->store, j->id, pids) == -1) {
		snprintf(err, errlen, "cannot record the suspend: %s", store_errmsg(e->store));
		free(j->gc.ckpt_pids);
		j->gc.ckpt_pids = NULL;
		return -1;
	}
	j->gc.ckpt_bytes = bytes;
	j->gc.phase = GC_DRAINING;
	/* its resume's nvq-ckpt loads the driver now, while the job holds its GPUs */
	if (pids[0] != '\0')
		suspend_ready(e, j);
	j->gc.why = (int)ev->n;
	j->gc.for_job = ev->for_job;
	if (ev->n == GC_USER)
		snprintf(j->gc.by, sizeof(j->gc.by), "%s", ev->by);
	j->gc.t0 = now;
	j->gc.error[0] = '\0';
	j->gc.move_bytes = -1;
	j->gc.driver_secs = 0;
	if (ev->for_job > 0)
		log_info("job %lld: suspending (%s, for job %lld), processes %s", (long long)j->id,
		    gc_whys[j->gc.why], (long long)ev->for_job, pids[0] ? pids : "none");
	else
		log_info("job %lld: suspending (%s), processes %s", (long long)j->id,
		    gc_whys[j->gc.why], pids[0] ? pids : "none");
	return 0;	/* the pass takes its lock back */
}

/* NONE (S) -> RESTORE (or MOVE_IN, or NONE (R) at once). */
static void
gc_resume(struct engine *e, struct job *j, double now)
{
	char err[256];

	if (j->state != JOB_SUSPENDED || j->gc.phase != GC_NONE)
		return;
	j->gc.phase = GC_RESTORE;
	j->gc.t0 = now;
	j->gc.move_bytes = -1;
	j->gc.driver_secs = 0;
	if (j->gc.ckpt_pids == NULL || j->gc.ckpt_pids[0] == '\0') {
		if (e->cfg.offload && j->nsess > 0)
			gc_move(e, j, 0, now);
		else
			gc_resumed(e, j, now);
		return;
	}
	log_info("job %lld: resuming, processes %s", (long long)j->id, j->gc.ckpt_pids);
	j->gc.undo = 0;
	if (gc_spawn(e, j, 1, now, err, sizeof(err)) == -1)
		gc_failed(e, j, err, now);
}

/* A restarted nvqd: a running job it had begun to suspend or resume runs on. */
static void
gc_recover(struct engine *e, struct job *j, double now)
{
	char err[256];

	j->gc.relink_until = now + GPUCTL_RELINK;
	if (j->state != JOB_RUNNING || j->gc.ckpt_pids == NULL || j->gc.ckpt_pids[0] == '\0')
		return;
	log_info("job %lld: nvqd stopped while it was being suspended or resumed; "
	    "putting processes %s back to running", (long long)j->id, j->gc.ckpt_pids);
	j->gc.phase = GC_RESTORE;
	j->gc.why = GC_RESTART;
	j->gc.t0 = now;
	j->gc.ckpt_bytes = -1;
	j->gc.move_bytes = -1;
	j->gc.driver_secs = 0;
	j->gc.undo = 0;
	if (gc_spawn(e, j, 1, now, err, sizeof(err)) == -1)
		gc_failed(e, j, err, now);
}

/* nvq resume: a job suspended by a user may resume once it fits. */
static int
gc_release(struct engine *e, struct job *j, const char *by, double now, char *err,
    size_t errlen)
{
	char why[128];

	if (j->state != JOB_SUSPENDED || j->gc.phase == GC_RESTORE) {
		snprintf(err, errlen, "job %lld is %s", (long long)j->id,
		    j->gc.phase == GC_RESTORE ? "being resumed" : j->gc.phase != GC_NONE ?
		    "being suspended; resume it once it is suspended" :
		    j->state == JOB_RUNNING ? "not suspended" : "pending");
		return -1;
	}
	if (!j->gc.hold) {
		snprintf(err, errlen, "job %lld resumes on its own once its memory fits",
		    (long long)j->id);
		return -1;
	}
	snprintf(why, sizeof(why), "resume asked by %s", by);
	if (store_job_unhold(e->store, j->id, now, why) == -1) {
		snprintf(err, errlen, "cannot record the resume: %s", store_errmsg(e->store));
		return -1;
	}
	j->gc.hold = 0;
	j->gc.pinned_until = 0;
	log_info("job %lld: %s", (long long)j->id, why);
	gc_fx(e, j, GC_FX_KICK);
	return 0;
}

/* HELPER: nvq-ckpt ended. */
/*
 * A suspend whose nvq-ckpt was killed: undone by nvq-ckpt resume (RESTORE,
 * undo), which puts its processes back to running from wherever they got
 * to; then the suspend is recorded as failed and the job runs on.
 */
static void
gc_undone(struct engine *e, struct job *j, const struct gc_event *ev, int killed, double now)
{
	char why[sizeof(j->gc.helper_why) + 300], err[256];

	if (!j->gc.undo) {
		log_warnx("job %lld: %s; putting processes %s back to running", (long long)j->id,
		    j->gc.helper_why, j->gc.ckpt_pids);
		j->gc.undo = 1;
		j->gc.phase = GC_RESTORE;
		if (gc_spawn(e, j, 1, now, err, sizeof(err)) == 0)
			return;
		snprintf(why, sizeof(why), "%s; and nvq-ckpt resume could not run: %s (its "
		    "processes may stay stopped in the driver: cancel it)", j->gc.helper_why, err);
	} else if (!ev->ok || killed)
		snprintf(why, sizeof(why), "%s; and undoing it failed: %s (its processes may "
		    "stay stopped in the driver: cancel it)", j->gc.helper_why,
		    killed ? "nvq-ckpt resume was killed too" : ev->error);
	else
		snprintf(why, sizeof(why), "%s, and the switch was undone", j->gc.helper_why);
	/* a failed suspend: the job runs on, its memory counted where it is */
	j->gc.undo = 0;
	j->gc.phase = GC_CHECKPOINT;
	gc_failed(e, j, why, now);
}

static void
gc_helper(struct engine *e, struct job *j, const struct gc_event *ev, double now)
{
	int resume = ev->n != 0, killed;

	if (j->exited || (resume ? j->gc.phase != GC_RESTORE : j->gc.phase != GC_CHECKPOINT)) {
		log_info("job %lld: nvq-ckpt %s ended after the job or its switch (%s)",
		    (long long)j->id, resume ? "resume" : "suspend", ev->ok ? "ok" : ev->error);
		if (j->exited)
			j->gc.phase = GC_NONE;
		return;
	}
	killed = j->gc.helper_killed;
	j->gc.helper_pid = 0;
	j->gc.helper_killed = 0;
	j->gc.driver_secs = ev->secs;
	if (j->gc.undo || (killed && !resume)) {
		gc_undone(e, j, ev, killed, now);
		return;
	}
	if (killed)
		gc_failed(e, j, j->gc.helper_why, now);	/* a resume: it stays suspended */
	else if (!ev->ok)
		gc_failed(e, j, ev->error, now);
	else if (resume && e->cfg.offload && j->nsess > 0)
		gc_move(e, j, 0, now);	/* then its hooks bring their allocations back */
	else if (resume)
		gc_resumed(e, j, now);
	else
		gc_suspended(e, j, now);
}

/* MOVED: a process's answer, added up; the last one lets the switch go on. */
static void
gc_moved_one(struct engine *e, struct job *j, const struct gc_event *ev, double now)
{
	if (ev->n != j->gc.move_seq)
		return;	/* an old move's: that switch went on without it */
	j->gc.move_bytes += ev->bytes;
	j->gc.move_left += ev->left;
	if (ev->secs > j->gc.move_secs)
		j->gc.move_secs = ev->secs;
	if (ev->error[0] != '\0' && j->gc.move_error[0] == '\0')
		snprintf(j->gc.move_error, sizeof(j->gc.move_error), "%s", ev->error);
	if ((j->gc.phase == GC_MOVE_OUT || j->gc.phase == GC_MOVE_IN) && !hooks_moving(e, j))
		gc_moved(e, j, now);
}

/* Frees the timeslice GPUs j holds. */
static void
gc_release_slices(struct engine *e, struct job *j, double now)
{
	int g;

	for (g = 0; g < e->gpus.n; g++)
		if (e->gca.ts_holder[g] == j->id)
			e->gca.ts_holder[g] = 0;
	j->gc.yielding = 0;
	/*
	 * A process that waited for the lock while it was being taken back
	 * (a rank at the cut while its peer ran on to it) says so once: that
	 * wait goes on, at the back of the line.  Dropped, the job would wait
	 * for a turn that never comes.
	 */
	j->gc.wants = j->gc.want_held;
	j->gc.want_since = now;
	j->gc.want_held = 0;
	j->gc.idle = 0;
}

int
gpuctl_event(struct engine *e, struct job *j, const struct gc_event *ev, double now, char *err,
    size_t errlen)
{
	int g;

	if (j == NULL)
		return 0;	/* TIMER, CHANGED: the pass decides */
	switch (ev->type) {
	case GC_EV_LINKED:
		if (gc_timesliced(e, j) && !j->gc.wants) {
			j->gc.wants = 1;	/* a CUDA process: it will launch */
			j->gc.want_since = now;
		}
		if (j->gc.relink_until > 0) {
			j->gc.relink_until = 0;	/* may give way again: schedule */
			gc_fx(e, j, GC_FX_KICK);
		}
		break;
	case GC_EV_UNLINKED:
		if (j->nsess == 0)
			j->gc.wants = j->gc.idle = 0;
		/* a process that ends in the middle of a move has nothing left to move */
		if ((j->gc.phase == GC_MOVE_OUT || j->gc.phase == GC_MOVE_IN) && !hooks_moving(e, j))
			gc_moved(e, j, now);
		break;
	case GC_EV_ACK:
	case GC_EV_CUT:
		break;	/* the pass sees who acknowledged or reported */
	case GC_EV_WANT:
		if (j->gc.lock == GC_REVOKING)
			j->gc.want_held = 1;
		if (!j->gc.wants) {
			j->gc.wants = 1;
			j->gc.want_since = now;
		}
		break;
	case GC_EV_IDLE:
		j->gc.idle = (int)ev->n;
		break;
	case GC_EV_MOVED:
		gc_moved_one(e, j, ev, now);
		break;
	case GC_EV_HELPER:
		gc_helper(e, j, ev, now);
		break;
	case GC_EV_SUSPEND:
		return gc_suspend(e, j, ev, now, err, errlen);
	case GC_EV_RELEASE:
		return gc_release(e, j, ev->by, now, err, errlen);
	case GC_EV_HOLD:
		j->gc.held = (int)ev->n;
		if (j->gc.held)
			j->gc.cut_error[0] = '\0';	/* nvq hold waits for this one's outcome */
		if (!j->gc.held)
			j->gc.wants = j->nsess > 0;
		break;
	case GC_EV_RESUME:
		gc_resume(e, j, now);
		break;
	case GC_EV_RECOVER:
		gc_recover(e, j, now);
		break;
	case GC_EV_GONE:
		for (g = 0; g < e->gpus.n; g++)
			if (e->gca.ts_holder[g] == j->id)
				e->gca.ts_holder[g] = 0;
		j->gc.phase = GC_NONE;
		j->gc.lock = GC_RELEASED;
		break;
	default:
		break;
	}
	return 0;
}

/* ---- the pass ---- */

/* Whether j should hold its lock now. */
static int
gc_desired(struct engine *e, const struct job *j)
{
	int g;

	if (j->gc.held || j->gc.yielding || j->gc.phase != GC_NONE || j->state != JOB_RUNNING)
		return 0;
	for (g = 0; g < e->gpus.n; g++)
		if (gc_in(j, g) && config_compute(&e->cfg, g) == COMPUTE_TIMESLICE &&
		    e->gca.ts_holder[g] != j->id)
			return 0;
	return 1;
}

/* Whether a job other than h waits for timeslice GPU g. */
static int
gc_waiter(struct engine *e, int g, int64_t h)
{
	struct job *j;

	for (j = e->held; j != NULL; j = j->lnext)
		if (j->id != h && j->state == JOB_RUNNING && j->gc.wants && !j->gc.held &&
		    j->nsess > 0 && gc_in(j, g))
			return 1;
	return 0;
}

/* Gives free timeslice GPUs to waiting jobs, longest waiting first. */
static void
gc_assign(struct engine *e, double now)
{
	struct job *j, *best;
	int g, ok;

	for (;;) {
		best = NULL;
		for (j = e->held; j != NULL; j = j->lnext) {
			if (j->state != JOB_RUNNING || j->gc.held || j->gc.yielding || j->nsess == 0 ||
			    !j->gc.wants || !gc_timesliced(e, j))
				continue;
			ok = 1;
			for (g = 0; g < e->gpus.n && ok; g++)
				if (gc_in(j, g) && config_compute(&e->cfg, g) == COMPUTE_TIMESLICE &&
				    e->gca.ts_holder[g] != 0 && e->gca.ts_holder[g] != j->id)
					ok = 0;
			if (!ok || gc_desired(e, j))
				continue;	/* it has them all already, or cannot have them */
			if (best == NULL || j->gc.want_since < best->gc.want_since)
				best = j;
		}
		if (best == NULL)
			return;
		for (g = 0; g < e->gpus.n; g++)
			if (gc_in(best, g) && config_compute(&e->cfg, g) == COMPUTE_TIMESLICE) {
				e->gca.ts_holder[g] = best->id;
				e->gca.ts_since[g] = now;
			}
		best->gc.idle = 0;
	}
}

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
gc_revoke_over(const struct engine *e, const struct job *j, double now, double *next)
{
	double t = j->gc.revoke_at + (double)e->cfg.revoke_timeout;

	if (now < t) {
		gc_next(next, t);
		return 0;
	}
	if (e->read_from < t) {
		log_debug("job %lld: revoke_timeout passed %.3fs ago; its sockets are read "
		    "once more first", (long long)j->id, now - t);
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
gc_cut_failed(struct engine *e, struct job *j, double now)
{
	char why[200], err[300];
	int g;

	hooks_cut_why(e, j, j->gc.seq, why, sizeof(why));
	snprintf(j->gc.cut_error, sizeof(j->gc.cut_error), "its processes did not reach the "
	    "same collective in %llds: %s; its lock was given back", (long long)e->cfg.revoke_timeout,
	    why);
	log_warnx("job %lld: %s (seq %lld)", (long long)j->id, j->gc.cut_error,
	    (long long)j->gc.seq);
	if (j->gc.held) {
		j->gc.held = 0;
		if (store_job_held(e->store, j->id, 0, now,
		    "hold failed: its processes did not reach the same collective") == -1)
			log_warnx("job %lld: cannot record that its hold failed", (long long)j->id);
	}
	if (j->gc.yielding) {
		/* its turn goes on: the next quantum's end tries again */
		j->gc.yielding = 0;
		for (g = 0; g < e->gpus.n; g++)
			if (e->gca.ts_holder[g] == j->id)
				e->gca.ts_since[g] = now;
	}
	if (j->gc.phase == GC_DRAINING) {
		snprintf(err, sizeof(err), "%s", j->gc.cut_error);
		gc_failed(e, j, err, now);
	}
	j->gc.cut_fails++;
	j->gc.lock = GC_GRANTED;
	j->gc.seq++;
	j->gc.revoke_at = 0;
	j->gc.want_held = 0;
	hooks_send_lock(e, j);
}

/*
 * REVOKING, revoke_timeout over: SIGSTOP, where a process whose hook cannot
 * cut did not acknowledge, where no process is a rank (nothing is stopped
 * mid-collective), or where the job's cuts failed GPUCTL_CUT_FAILS times in
 * a row (the bound: a job does not keep its lock by never reaching a cut).
 */
static void
gc_stop(struct engine *e, struct job *j, double now)
{
	char why[200];

	if (hooks_cut_old(e, j, j->gc.seq) == 0 && hooks_cut_ranks(e, j, j->gc.seq) > 0) {
		hooks_cut_why(e, j, j->gc.seq, why, sizeof(why));
		log_warnx("job %lld: no cut was reached in %d revokes in a row: stopping its "
		    "processes (SIGSTOP); the last: %s", (long long)j->id, j->gc.cut_fails + 1, why);
	} else
		log_warnx("job %lld: no acknowledgement of the lock in %llds: stopping its "
		    "processes (SIGSTOP)", (long long)j->id, (long long)e->cfg.revoke_timeout);
	hooks_signal(e, j, SIGSTOP);
	j->gc.lock = GC_STOPPED;
	j->gc.revoke_at = 0;
	gc_release_slices(e, j, now);
}

/* Rounds over the locks until nothing changes; the next deadline into *next. */
static void
gc_locks(struct engine *e, double now, double *next)
{
	struct job *j;
	int g, round, changed;
	int64_t h;

	for (g = 0; g < e->gpus.n; g++) {
		if ((h = e->gca.ts_holder[g]) == 0)
			continue;
		j = jobtab_find(&e->jobtab, h);
		if (j == NULL || j->state != JOB_RUNNING || !gc_in(j, g) || j->nsess == 0 ||
		    config_compute(&e->cfg, g) != COMPUTE_TIMESLICE)
			e->gca.ts_holder[g] = 0;
	}
	for (round = 0; round < 4; round++) {
		changed = 0;
		gc_assign(e, now);
		/* a holder yields at the end of its quantum, or when idle, if others wait */
		for (g = 0; g < e->gpus.n; g++) {
			if ((h = e->gca.ts_holder[g]) == 0 || !gc_waiter(e, g, h))
				continue;
			j = jobtab_find(&e->jobtab, h);
			if (j->gc.yielding || j->gc.lock != GC_GRANTED)
				continue;
			if (j->gc.idle || now - e->gca.ts_since[g] >= (double)e->cfg.quantum) {
				log_debug("job %lld yields GPU %d (%s)", (long long)h, g,
				    j->gc.idle ? "idle" : "quantum over");
				j->gc.yielding = 1;
			} else
				gc_next(next, e->gca.ts_since[g] + (double)e->cfg.quantum);
		}
		for (j = e->held; j != NULL; j = j->lnext) {
			if (j->state != JOB_RUNNING)
				continue;
			if (gc_desired(e, j) && j->gc.lock != GC_GRANTED) {
				if (j->gc.lock == GC_STOPPED)
					hooks_signal(e, j, SIGCONT);
				j->gc.lock = GC_GRANTED;
				j->gc.seq++;
				j->gc.revoke_at = 0;
				j->gc.want_held = 0;
				hooks_send_lock(e, j);
				log_debug("job %lld: lock granted (seq %lld)", (long long)j->id,
				    (long long)j->gc.seq);
				changed = 1;
			} else if (!gc_desired(e, j) && j->gc.lock == GC_GRANTED) {
				j->gc.lock = GC_REVOKING;
				j->gc.seq++;
				j->gc.revoke_at = now;
				hooks_send_lock(e, j);
				log_debug("job %lld: lock asked back (seq %lld)", (long long)j->id,
				    (long long)j->gc.seq);
				changed = 1;
			}
			if (j->gc.lock != GC_REVOKING)
				continue;
			if (hooks_acked(e, j, j->gc.seq)) {
				j->gc.lock = GC_RELEASED;
				j->gc.revoke_at = 0;
				j->gc.cut_fails = 0;
				gc_release_slices(e, j, now);
				changed = 1;
				continue;
			}
			if (hooks_cut_ready(e, j, j->gc.seq)) {
				hooks_cut_send(e, j, j->gc.seq);
				j->gc.cut_sent = j->gc.seq;
			}
			if (!gc_revoke_over(e, j, now, next))
				continue;
			if (hooks_cut_old(e, j, j->gc.seq) == 0 && hooks_cut_ranks(e, j, j->gc.seq) > 0 &&
			    j->gc.cut_fails < GPUCTL_CUT_FAILS)
				gc_cut_failed(e, j, now);
			else
				gc_stop(e, j, now);
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
gc_switches(struct engine *e, double now, double *next)
{
	struct job *j;
	int ended = 0;

	for (j = e->held; j != NULL; j = j->lnext) {
		if ((j->gc.phase == GC_CHECKPOINT || j->gc.phase == GC_RESTORE) &&
		    j->gc.helper_pid > 0) {
			if (now < j->gc.helper_until)
				gc_next(next, j->gc.helper_until);
			else if (!j->gc.helper_killed) {
				snprintf(j->gc.helper_why, sizeof(j->gc.helper_why), "nvq-ckpt %s took "
				    "longer than %.0f s (switch_timeout): killed",
				    j->gc.phase == GC_RESTORE ? "resume" : "suspend",
				    j->gc.helper_secs);
				log_warnx("job %lld: %s", (long long)j->id, j->gc.helper_why);
				j->gc.helper_killed = 1;
				suspend_kill(j->gc.helper_pid);	/* its end comes as HELPER */
			}
			continue;
		}
		if ((j->gc.phase == GC_MOVE_OUT || j->gc.phase == GC_MOVE_IN) &&
		    j->gc.move_until > 0) {
			if (now >= j->gc.move_until) {
				log_warnx("job %lld: its hooks did not answer the move in time; "
				    "going on without them", (long long)j->id);
				snprintf(j->gc.move_error, sizeof(j->gc.move_error),
				    "no answer in %.0fs", j->gc.move_until - j->gc.t0);
				gc_moved(e, j, now);
				ended |= j->gc.phase == GC_NONE;
			} else
				gc_next(next, j->gc.move_until);
			continue;
		}
		if (j->gc.phase != GC_DRAINING ||
		    (j->gc.lock != GC_RELEASED && j->gc.lock != GC_STOPPED))
			continue;
		if (j->gc.lock == GC_STOPPED) {
			hooks_signal(e, j, SIGCONT);	/* the driver's lock needs it running */
			j->gc.lock = GC_RELEASED;
		}
		if (e->cfg.offload && j->nsess > 0)
			gc_move(e, j, 1, now);
		else
			gc_checkpoint(e, j, now);
		ended |= j->gc.phase == GC_NONE;
		/* the move's deadline: its hooks may never answer */
		if (j->gc.phase == GC_MOVE_OUT)
			gc_next(next, j->gc.move_until);
	}
	return ended;
}

double
gpuctl_pass(struct engine *e, double now)
{
	double next;
	int k;

	/* a switch that ends (or fails) in the pass may change the locks: again */
	for (k = 0; k < 4; k++) {
		next = 0;
		gc_locks(e, now, &next);
		if (!gc_switches(e, now, &next))
			break;
	}
	return next;
}

int64_t
gpuctl_holder(const struct engine *e, int g)
{
	return g >= 0 && g < GPUCTL_MAX_GPUS ? e->gca.ts_holder[g] : 0;
}
