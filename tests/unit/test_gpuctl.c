/*
 * test_gpuctl.c: GPU control's table (gpuctl.c), one case per row: a job
 * in a state (its lock, its phase, its state), an event or a pass, and the
 * state it ends in with the actions gpuctl.c returns, written as a line
 * ("LOCK(1,2) FX(KICK)": see fx_said).  After every row, gpuctl_check
 * holds; and gpuctl_check finds each of its rules broken.
 */
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "gpuctl.h"
#include "sched.h"

#define NOW	1000.0

/* One job (id 1) on GPU 0 of two, with what gpuctl.c reads around it. */
struct fx {
	struct gpuctl	gc, gc2;
	struct gc_job	j[2];		/* j[1]: a second job (id 2), for the pass's turns */
	int		n;		/* jobs in the pass */
	struct gpuctl_all all;
	struct gc_env	env;
	struct sched_settings ss;
	double		cost[GPUCTL_MAX_GPUS];
	struct gc_acts	acts;
	char		said[1024];
};

static struct fx F;

static void
fx_job(struct gc_job *j, struct gpuctl *gc, int64_t id)
{
	free(gc->ckpt_pids);
	memset(gc, 0, sizeof(*gc));
	gc->lock = GC_GRANTED;
	gc->ckpt_bytes = -1;
	gc->move_bytes = -1;
	memset(j, 0, sizeof(*j));
	j->id = id;
	j->state = GC_JOB_RUNNING;
	j->gpumask = 1;
	j->mem = 1 << 30;
	j->nsess = 1;
	j->gc = gc;
}

static int
fx_setup(void **state)
{
	(void)state;
	gcacts_free(&F.acts);
	fx_job(&F.j[0], &F.gc, 1);
	fx_job(&F.j[1], &F.gc2, 2);
	F.n = 1;
	memset(&F.all, 0, sizeof(F.all));
	memset(&F.ss, 0, sizeof(F.ss));
	memset(F.cost, 0, sizeof(F.cost));
	memset(&F.env, 0, sizeof(F.env));
	F.env.ngpus = 2;
	F.env.ckpt = 1;
	F.env.revoke_timeout = 10;
	F.env.switch_timeout = 120;
	F.env.quantum = 30;
	F.env.read_from = NOW;
	F.env.switch_cost = F.cost;
	F.env.sched = &F.ss;
	F.env.all = &F.all;
	return 0;
}

static int
fx_teardown(void **state)
{
	(void)state;
	gcacts_free(&F.acts);
	free(F.gc.ckpt_pids);
	free(F.gc2.ckpt_pids);
	F.gc.ckpt_pids = F.gc2.ckpt_pids = NULL;
	return 0;
}

/* The actions returned since the last look, LOG left out, as one line. */
static const char *
fx_said(void)
{
	static const char *const kind[] = {
		"LOG", "LOCK", "SIGNAL", "CUT", "MOVE", "READY", "SPAWN", "KILL", "PIDS",
		"SUSPENDED", "RESUMED", "SWITCH", "UNHOLD", "UNHELD", "COST", "FX"
	};
	const struct gc_action *a;
	size_t n = 0;
	int k;

	F.said[0] = '\0';
	for (k = 0; k < F.acts.n && n < sizeof(F.said); k++) {
		a = &F.acts.a[k];
		if (a->kind == GC_ACT_LOG)
			continue;
		n += (size_t)snprintf(F.said + n, sizeof(F.said) - n, "%s%s", n ? " " : "",
		    kind[a->kind]);
		if (n >= sizeof(F.said))
			break;
		switch (a->kind) {
		case GC_ACT_LOCK:
			n += (size_t)snprintf(F.said + n, sizeof(F.said) - n, "(%lld,%lld)",
			    (long long)a->n, (long long)a->m);
			break;
		case GC_ACT_SIGNAL:
			n += (size_t)snprintf(F.said + n, sizeof(F.said) - n, "(%s)",
			    a->n == SIGSTOP ? "STOP" : a->n == SIGCONT ? "CONT" : "?");
			break;
		case GC_ACT_CUT:
			n += (size_t)snprintf(F.said + n, sizeof(F.said) - n, "(%lld)",
			    (long long)a->n);
			break;
		case GC_ACT_MOVE:
			n += (size_t)snprintf(F.said + n, sizeof(F.said) - n, "(%s)",
			    a->m ? "out" : "in");
			break;
		case GC_ACT_SPAWN:
			n += (size_t)snprintf(F.said + n, sizeof(F.said) - n, "(%s)",
			    a->m ? "resume" : "suspend");
			break;
		case GC_ACT_PIDS:
			n += (size_t)snprintf(F.said + n, sizeof(F.said) - n, "(%s)",
			    a->n ? a->text : "-");
			break;
		case GC_ACT_SWITCH:
			n += (size_t)snprintf(F.said + n, sizeof(F.said) - n, "(%s,%s)",
			    a->sw.kind, a->sw.ok ? "ok" : "failed");
			break;
		case GC_ACT_COST:
			n += (size_t)snprintf(F.said + n, sizeof(F.said) - n, "(%d)", a->gpu);
			break;
		case GC_ACT_FX:
			n += (size_t)snprintf(F.said + n, sizeof(F.said) - n, "(%s%s%s)",
			    a->n & GC_FX_LIMIT ? "LIMIT" : "",
			    (a->n & GC_FX_LIMIT) && (a->n & GC_FX_KICK) ? "," : "",
			    a->n & GC_FX_KICK ? "KICK" : "");
			break;
		}
	}
	gcacts_reset(&F.acts);
	return F.said;
}

/* The rules hold for every job of the fixture. */
static void
fx_holds(void)
{
	char why[128] = "";
	int k;

	for (k = 0; k < F.n; k++) {
		if (gpuctl_check(&F.j[k], why, sizeof(why)) != 0)
			fail_msg("job %d breaks a rule: %s", k + 1, why);
	}
}

/* An event for job 1; its answer. */
static int
fx_ev(struct gc_event *ev, char *err, size_t errlen)
{
	int r;

	ev->job = 1;
	r = gpuctl_decide(&F.j[0], &F.env, ev, NOW, &F.acts, err, errlen);
	if (r == 0 || r == -1)
		fx_holds();
	return r;
}

static int
fx_event(int type, int64_t n)
{
	struct gc_event ev = { .type = type, .n = n };
	char err[512];

	return fx_ev(&ev, err, sizeof(err));
}

static double
fx_pass(double now)
{
	double next = gpuctl_decide_pass(F.j, F.n, &F.env, now, &F.acts);

	fx_holds();
	return next;
}

/* Job 1 as a suspend leaves it at phase p, its lock RELEASED. */
static void
fx_switching(int phase, const char *pids)
{
	F.gc.lock = GC_RELEASED;
	F.gc.phase = phase;
	F.gc.ckpt_pids = strdup(pids);
	F.gc.why = GC_PREEMPT;
	F.gc.for_job = 9;
	F.gc.t0 = NOW - 5;
	if (phase == GC_CHECKPOINT || phase == GC_RESTORE) {
		F.gc.helper = 1;
		F.gc.helper_pid = 4242;
		F.gc.helper_until = NOW + 100;
	}
	if (phase == GC_MOVE_OUT || phase == GC_MOVE_IN) {
		F.gc.move_seq = 3;
		F.gc.move_until = NOW + 10;
		F.gc.move_bytes = 0;
	}
}

/* Job 1 suspended: its lock RELEASED, pids checkpointed. */
static void
fx_suspended(const char *pids)
{
	F.j[0].state = GC_JOB_SUSPENDED;
	F.gc.lock = GC_RELEASED;
	F.gc.suspended_at = NOW - 50;
	if (pids != NULL)
		F.gc.ckpt_pids = strdup(pids);
}

/* ---- the lock ---- */

static void
test_lock_released_desired_granted(void **state)
{
	(void)state;
	F.gc.lock = GC_RELEASED;
	F.gc.seq = 4;
	fx_pass(NOW);
	assert_int_equal(F.gc.lock, GC_GRANTED);
	assert_string_equal(fx_said(), "LOCK(1,5)");
	assert_int_equal(F.gc.want_held, 0);
}

static void
test_lock_revoking_desired_granted(void **state)
{
	(void)state;
	F.gc.lock = GC_REVOKING;
	F.gc.seq = 4;
	F.gc.revoke_at = NOW - 1;
	F.gc.want_held = 1;
	fx_pass(NOW);
	assert_int_equal(F.gc.lock, GC_GRANTED);
	assert_int_equal(F.gc.revoke_at, 0);
	assert_int_equal(F.gc.want_held, 0);
	assert_string_equal(fx_said(), "LOCK(1,5)");
}

static void
test_lock_stopped_desired_granted(void **state)
{
	(void)state;
	F.gc.lock = GC_STOPPED;
	F.gc.seq = 4;
	fx_pass(NOW);
	assert_int_equal(F.gc.lock, GC_GRANTED);
	assert_string_equal(fx_said(), "SIGNAL(CONT) LOCK(1,5)");
}

static void
test_lock_granted_undesired_revoking(void **state)
{
	(void)state;
	F.gc.held = 1;
	F.gc.seq = 4;
	assert_true(fx_pass(NOW) == NOW + 10);	/* its revoke_timeout */
	assert_int_equal(F.gc.lock, GC_REVOKING);
	assert_true(F.gc.revoke_at == NOW);
	assert_string_equal(fx_said(), "LOCK(0,5)");
}

static void
test_lock_granted_undesired_no_process_released(void **state)
{
	(void)state;
	F.gc.held = 1;
	F.j[0].nsess = 0;	/* nobody to answer: released at once */
	fx_pass(NOW);
	assert_int_equal(F.gc.lock, GC_RELEASED);
	assert_string_equal(fx_said(), "LOCK(0,1)");
}

/* Job 1 held, its lock being taken back since t as seq 5. */
static void
fx_revoking(double t)
{
	F.gc.held = 1;
	F.gc.lock = GC_REVOKING;
	F.gc.seq = 5;
	F.gc.revoke_at = t;
	snprintf(F.j[0].cut_why, sizeof(F.j[0].cut_why), "process 7 did not answer");
}

static void
test_lock_revoking_acked_released(void **state)
{
	(void)state;
	fx_revoking(NOW - 1);
	F.gc.want_held = 1;
	F.gc.cut_fails = 1;
	F.j[0].acked = 1;
	F.all.ts_holder[0] = 1;
	fx_pass(NOW);
	assert_int_equal(F.gc.lock, GC_RELEASED);
	assert_int_equal(F.gc.cut_fails, 0);
	assert_int_equal(F.gc.wants, 1);	/* the wait held over the release */
	assert_int_equal(F.all.ts_holder[0], 0);
	assert_string_equal(fx_said(), "");
}

static void
test_lock_revoking_cut_sent(void **state)
{
	(void)state;
	fx_revoking(NOW - 1);
	F.j[0].cut_ready = 1;
	fx_pass(NOW);
	assert_int_equal(F.gc.lock, GC_REVOKING);
	assert_int_equal(F.gc.cut_sent, 5);
	assert_string_equal(fx_said(), "CUT(5)");
}

static void
test_lock_revoking_timeout_stopped(void **state)
{
	(void)state;
	fx_revoking(NOW - 11);
	F.j[0].cut_old = 1;	/* a hook that cannot cut did not acknowledge */
	F.all.ts_holder[0] = 1;
	fx_pass(NOW);
	assert_int_equal(F.gc.lock, GC_STOPPED);
	assert_int_equal(F.all.ts_holder[0], 0);
	assert_string_equal(fx_said(), "SIGNAL(STOP)");
}

static void
test_lock_revoking_timeout_no_rank_stopped(void **state)
{
	(void)state;
	fx_revoking(NOW - 11);
	fx_pass(NOW);
	assert_int_equal(F.gc.lock, GC_STOPPED);
	assert_string_equal(fx_said(), "SIGNAL(STOP)");
}

static void
test_lock_revoking_timeout_unread_waits(void **state)
{
	(void)state;
	fx_revoking(NOW - 11);
	F.env.read_from = NOW - 2;	/* nvqd stood still: its sockets are read first */
	assert_true(fx_pass(NOW) == NOW);
	assert_int_equal(F.gc.lock, GC_REVOKING);
	assert_string_equal(fx_said(), "");
}

static void
test_lock_revoking_cuts_failed_stopped(void **state)
{
	(void)state;
	fx_revoking(NOW - 11);
	F.j[0].cut_ranks = 2;
	F.gc.cut_fails = 2;	/* GPUCTL_CUT_FAILS: the bound */
	fx_pass(NOW);
	assert_int_equal(F.gc.lock, GC_STOPPED);
	assert_string_equal(fx_said(), "SIGNAL(STOP)");
}

static void
test_lock_revoking_cut_failed_granted(void **state)
{
	(void)state;
	fx_revoking(NOW - 11);
	F.j[0].cut_ranks = 2;
	F.gc.cut_fails = 1;
	F.gc.want_held = 1;
	fx_pass(NOW);
	assert_int_equal(F.gc.lock, GC_GRANTED);
	assert_int_equal(F.gc.cut_fails, 2);
	assert_int_equal(F.gc.held, 0);
	assert_int_equal(F.gc.seq, 6);
	assert_non_null(strstr(F.gc.cut_error, "process 7 did not answer"));
	assert_string_equal(fx_said(), "UNHELD LOCK(1,6)");
}

static void
test_lock_cut_failed_fails_suspend(void **state)
{
	(void)state;
	fx_revoking(NOW - 11);
	F.gc.held = 0;
	F.gc.phase = GC_DRAINING;
	F.gc.ckpt_pids = strdup("7@1");
	F.j[0].cut_ranks = 2;
	fx_pass(NOW);
	assert_int_equal(F.gc.lock, GC_GRANTED);
	assert_int_equal(F.gc.phase, GC_NONE);
	assert_true(F.gc.unsusp_until > NOW);
	assert_string_equal(fx_said(), "SWITCH(suspend,failed) FX(KICK) LOCK(1,6)");
}

static void
test_lock_stopped_draining_released(void **state)
{
	(void)state;
	F.gc.lock = GC_STOPPED;
	F.gc.phase = GC_DRAINING;
	F.gc.ckpt_pids = strdup("7@1");
	fx_pass(NOW);
	assert_int_equal(F.gc.lock, GC_RELEASED);
	assert_int_equal(F.gc.phase, GC_CHECKPOINT);
	assert_string_equal(fx_said(), "SIGNAL(CONT) SPAWN(suspend)");
}

static void
test_lock_events_noted(void **state)
{
	(void)state;
	snprintf(F.gc.cut_error, sizeof(F.gc.cut_error), "an old one");
	assert_int_equal(fx_event(GC_EV_HOLD, 1), 0);
	assert_int_equal(F.gc.held, 1);
	assert_string_equal(F.gc.cut_error, "");
	assert_int_equal(fx_event(GC_EV_HOLD, 0), 0);
	assert_int_equal(F.gc.held, 0);
	assert_int_equal(F.gc.wants, 1);	/* a linked process: it waits again */
	assert_int_equal(fx_event(GC_EV_IDLE, 1), 0);
	assert_int_equal(F.gc.idle, 1);
	/* a want while the lock is taken back is kept past its release */
	F.gc.lock = GC_REVOKING;
	F.gc.revoke_at = NOW - 1;
	assert_int_equal(fx_event(GC_EV_WANT, 0), 0);
	assert_int_equal(F.gc.want_held, 1);
	assert_int_equal(F.gc.lock, GC_REVOKING);	/* the pass decides */
	assert_int_equal(fx_event(GC_EV_ACK, 5), 0);
	assert_int_equal(fx_event(GC_EV_CUT, 5), 0);
	assert_string_equal(fx_said(), "");
}

static void
test_lock_gone_released(void **state)
{
	(void)state;
	F.all.ts_holder[0] = 1;
	F.gc.phase = GC_DRAINING;
	assert_int_equal(fx_event(GC_EV_GONE, 0), 0);
	assert_int_equal(F.gc.lock, GC_RELEASED);
	assert_int_equal(F.gc.phase, GC_NONE);
	assert_int_equal(F.all.ts_holder[0], 0);
	assert_string_equal(fx_said(), "");
}

/* Timeslice GPU 0: the longest waiting takes it; its holder yields at its quantum's end. */
static void
test_lock_timeslice_turns(void **state)
{
	(void)state;
	F.env.compute_ts = 1;
	F.n = 2;
	F.gc.wants = F.gc2.wants = 1;
	F.gc.want_since = NOW - 5;
	F.gc2.want_since = NOW - 9;	/* job 2 waited longer */
	F.gc.lock = F.gc2.lock = GC_RELEASED;
	fx_pass(NOW);
	assert_int_equal(F.all.ts_holder[0], 2);
	assert_int_equal(F.gc2.lock, GC_GRANTED);
	assert_int_equal(F.gc.lock, GC_RELEASED);
	assert_string_equal(fx_said(), "LOCK(1,1)");
	/* its quantum over and job 1 waiting: it yields, its lock taken back */
	assert_true(fx_pass(NOW + 31) == NOW + 31 + 10);
	assert_int_equal(F.gc2.yielding, 1);
	assert_int_equal(F.gc2.lock, GC_REVOKING);
	assert_string_equal(fx_said(), "LOCK(0,2)");
}

/* ---- the switch ---- */

static int
fx_helper(int resume, int ok)
{
	struct gc_event ev = { .type = GC_EV_HELPER, .n = resume, .ok = ok };
	char err[64];

	snprintf(ev.error, sizeof(ev.error), "the driver said no");
	return fx_ev(&ev, err, sizeof(err));
}


/* The suspend's probe: what nvq-ckpt is to checkpoint. */
static struct gc_probe P;

static int
fx_suspend(const char *pids, int ok, char *err, size_t errlen)
{
	struct gc_event ev = { .type = GC_EV_SUSPEND, .n = GC_PREEMPT, .for_job = 9 };

	snprintf(P.pids, sizeof(P.pids), "%s", pids);
	P.bytes = 1 << 30;
	P.avail = 1LL << 40;
	F.j[0].probe = &P;
	ev.ok = ok;
	snprintf(ev.error, sizeof(ev.error), "disk full");
	return fx_ev(&ev, err, errlen);
}

static void
test_switch_suspend_draining(void **state)
{
	struct gc_event ev = { .type = GC_EV_SUSPEND, .n = GC_PREEMPT, .for_job = 9 };
	char err[512];

	(void)state;
	/* its facts first, then its pids recorded, then it drains */
	assert_int_equal(fx_ev(&ev, err, sizeof(err)), GPUCTL_PROBE);
	assert_string_equal(fx_said(), "");
	assert_int_equal(fx_suspend("7@1", 0, err, sizeof(err)), GPUCTL_RECORD);
	assert_string_equal(fx_said(), "PIDS(7@1)");
	assert_int_equal(F.gc.phase, GC_NONE);
	assert_int_equal(fx_suspend("7@1", 1, err, sizeof(err)), 0);
	assert_int_equal(F.gc.phase, GC_DRAINING);
	assert_int_equal(F.gc.why, GC_PREEMPT);
	assert_string_equal(F.gc.ckpt_pids, "7@1");
	assert_string_equal(fx_said(), "READY");
	/* the pass takes its lock back */
	fx_pass(NOW);
	assert_int_equal(F.gc.lock, GC_REVOKING);
}

static void
test_switch_suspend_refused(void **state)
{
	char err[512];

	(void)state;
	assert_int_equal(fx_suspend("7@1", -1, err, sizeof(err)), -1);	/* the record failed */
	assert_string_equal(err, "cannot record the suspend: disk full");
	assert_int_equal(F.gc.phase, GC_NONE);
	assert_null(F.gc.ckpt_pids);
	F.j[0].hook_shared = 1 << 20;
	assert_int_equal(fx_suspend("7@1", 0, err, sizeof(err)), -1);
	assert_non_null(strstr(err, "cannot be suspended"));
	F.j[0].hook_shared = 0;
	F.j[0].state = GC_JOB_OTHER;
	assert_int_equal(fx_suspend("7@1", 0, err, sizeof(err)), -1);
	assert_non_null(strstr(err, "is pending"));
	assert_string_equal(fx_said(), "");
}

static void
test_switch_draining_move_out(void **state)
{
	(void)state;
	fx_switching(GC_DRAINING, "7@1");
	F.env.offload = 1;
	assert_true(fx_pass(NOW) == NOW + 10);	/* the move's deadline */
	assert_int_equal(F.gc.phase, GC_MOVE_OUT);
	assert_string_equal(fx_said(), "MOVE(out)");
}

static void
test_switch_draining_checkpoint(void **state)
{
	(void)state;
	fx_switching(GC_DRAINING, "7@1");
	/* nvq-ckpt's deadline is armed by the next pass, not this one (as before) */
	assert_true(fx_pass(NOW) == 0);
	assert_int_equal(F.gc.phase, GC_CHECKPOINT);
	assert_int_equal(F.gc.helper, 1);
	assert_string_equal(fx_said(), "SPAWN(suspend)");
}

static void
test_switch_move_out_moved_checkpoint(void **state)
{
	struct gc_event ev = { .type = GC_EV_MOVED, .n = 3, .bytes = 100 };
	char err[64];

	(void)state;
	fx_switching(GC_MOVE_OUT, "7@1");
	assert_int_equal(fx_ev(&ev, err, sizeof(err)), 0);
	assert_int_equal(F.gc.phase, GC_CHECKPOINT);
	assert_int_equal(F.gc.move_bytes, 100);
	assert_string_equal(fx_said(), "SPAWN(suspend)");
}

static void
test_switch_move_out_overdue_checkpoint(void **state)
{
	(void)state;
	fx_switching(GC_MOVE_OUT, "7@1");
	F.j[0].moving = 1;
	fx_pass(NOW + 11);
	assert_int_equal(F.gc.phase, GC_CHECKPOINT);
	assert_string_equal(fx_said(), "SPAWN(suspend)");
}

static void
test_switch_checkpoint_nothing_suspended(void **state)
{
	(void)state;
	fx_switching(GC_DRAINING, "");	/* no CUDA process */
	fx_pass(NOW);
	assert_int_equal(F.gc.phase, GC_NONE);
	assert_int_equal(F.j[0].state, GC_JOB_SUSPENDED);
	assert_string_equal(fx_said(), "SUSPENDED FX(LIMIT,KICK)");
}

static void
test_switch_checkpoint_helper_ok_suspended(void **state)
{
	(void)state;
	fx_switching(GC_CHECKPOINT, "7@1");
	F.gc.unsusp_until = NOW + 10;
	assert_int_equal(fx_helper(0, 1), 0);
	assert_int_equal(F.gc.phase, GC_NONE);
	assert_int_equal(F.j[0].state, GC_JOB_SUSPENDED);
	assert_int_equal(F.gc.helper, 0);
	assert_true(F.gc.unsusp_until == 0);	/* it can be suspended after all */
	assert_string_equal(fx_said(), "SUSPENDED FX(LIMIT,KICK)");
}

static void
test_switch_checkpoint_helper_failed_runs(void **state)
{
	(void)state;
	fx_switching(GC_CHECKPOINT, "7@1");
	assert_int_equal(fx_helper(0, 0), 0);
	assert_int_equal(F.gc.phase, GC_NONE);
	assert_int_equal(F.j[0].state, GC_JOB_RUNNING);
	assert_true(F.gc.unsusp_until > NOW);
	assert_null(F.gc.ckpt_pids);
	assert_string_equal(fx_said(), "SWITCH(suspend,failed) FX(KICK)");
}

static void
test_switch_checkpoint_nospawn_runs(void **state)
{
	struct gc_event ev = { .type = GC_EV_NOSPAWN, .n = 0 };
	char err[64];

	(void)state;
	fx_switching(GC_CHECKPOINT, "7@1");
	F.gc.helper_pid = 0;	/* it never started */
	snprintf(ev.error, sizeof(ev.error), "cannot run nvq-ckpt");
	assert_int_equal(fx_ev(&ev, err, sizeof(err)), 0);
	assert_int_equal(F.gc.phase, GC_NONE);
	assert_string_equal(F.gc.error, "cannot run nvq-ckpt");
	assert_string_equal(fx_said(), "SWITCH(suspend,failed) FX(KICK)");
}

static void
test_switch_checkpoint_overdue_killed(void **state)
{
	(void)state;
	fx_switching(GC_CHECKPOINT, "7@1");
	fx_pass(NOW + 101);
	assert_int_equal(F.gc.phase, GC_CHECKPOINT);
	assert_int_equal(F.gc.helper_killed, 1);
	assert_int_equal(F.acts.a[F.acts.n - 1].n, 4242);
	assert_string_equal(fx_said(), "KILL");
	fx_pass(NOW + 102);	/* killed once */
	assert_string_equal(fx_said(), "");
}

/* Its nvq-ckpt neither started nor said it could not (lost for want of memory): it fails at the deadline. */
static void
test_switch_checkpoint_unstarted_overdue_fails(void **state)
{
	(void)state;
	fx_switching(GC_CHECKPOINT, "7@1");
	F.gc.helper_pid = 0;
	fx_pass(NOW + 50);
	assert_int_equal(F.gc.phase, GC_CHECKPOINT);
	assert_string_equal(fx_said(), "");
	fx_pass(NOW + 101);
	assert_int_equal(F.gc.phase, GC_NONE);
	assert_int_equal(F.gc.helper, 0);
	assert_string_equal(F.gc.error, "nvq-ckpt did not start");
	/* the job runs on: its lock comes back in the same pass */
	assert_string_equal(fx_said(), "SWITCH(suspend,failed) FX(KICK) LOCK(1,1)");
}

static void
test_switch_checkpoint_killed_undo(void **state)
{
	(void)state;
	fx_switching(GC_CHECKPOINT, "7@1");
	F.gc.helper_killed = 1;
	assert_int_equal(fx_helper(0, 0), 0);
	assert_int_equal(F.gc.phase, GC_RESTORE);
	assert_int_equal(F.gc.undo, 1);
	assert_string_equal(fx_said(), "SPAWN(resume)");
}

static void
test_switch_resume_restore(void **state)
{
	(void)state;
	fx_suspended("7@1");
	assert_int_equal(fx_event(GC_EV_RESUME, 0), 0);
	assert_int_equal(F.gc.phase, GC_RESTORE);
	assert_string_equal(fx_said(), "SPAWN(resume)");
}

static void
test_switch_resume_nothing_checkpointed(void **state)
{
	(void)state;
	fx_suspended(NULL);
	assert_int_equal(fx_event(GC_EV_RESUME, 0), 0);
	assert_int_equal(F.gc.phase, GC_NONE);
	assert_int_equal(F.j[0].state, GC_JOB_RUNNING);
	assert_string_equal(fx_said(), "RESUMED COST(0) FX(LIMIT,KICK)");
	fx_setup(NULL);
	fx_suspended(NULL);
	F.env.offload = 1;
	assert_int_equal(fx_event(GC_EV_RESUME, 0), 0);
	assert_int_equal(F.gc.phase, GC_MOVE_IN);
	assert_string_equal(fx_said(), "MOVE(in)");
}

static void
test_switch_recover_restore(void **state)
{
	(void)state;
	F.gc.ckpt_pids = strdup("7@1");
	assert_int_equal(fx_event(GC_EV_RECOVER, 0), 0);
	assert_int_equal(F.gc.phase, GC_RESTORE);
	assert_int_equal(F.gc.why, GC_RESTART);
	assert_true(F.gc.relink_until > NOW);
	assert_string_equal(fx_said(), "SPAWN(resume)");
	fx_setup(NULL);		/* nothing recorded: it runs on */
	assert_int_equal(fx_event(GC_EV_RECOVER, 0), 0);
	assert_int_equal(F.gc.phase, GC_NONE);
	assert_string_equal(fx_said(), "");
}

static void
test_switch_restore_ok_move_in(void **state)
{
	(void)state;
	fx_suspended(NULL);
	fx_switching(GC_RESTORE, "7@1");
	F.env.offload = 1;
	assert_int_equal(fx_helper(1, 1), 0);
	assert_int_equal(F.gc.phase, GC_MOVE_IN);
	assert_string_equal(fx_said(), "MOVE(in)");
}

static void
test_switch_restore_ok_running(void **state)
{
	(void)state;
	fx_suspended(NULL);
	fx_switching(GC_RESTORE, "7@1");
	F.gc.last_suspend = 3;
	assert_int_equal(fx_helper(1, 1), 0);
	assert_int_equal(F.gc.phase, GC_NONE);
	assert_int_equal(F.j[0].state, GC_JOB_RUNNING);
	assert_null(F.gc.ckpt_pids);
	assert_true(F.gc.susp_total == 50);
	assert_true(F.acts.a[1].x == 3 + 5);	/* COST: its suspend and this resume */
	assert_string_equal(fx_said(), "RESUMED COST(0) FX(LIMIT,KICK)");
}

static void
test_switch_restore_restart_running(void **state)
{
	(void)state;
	fx_switching(GC_RESTORE, "7@1");
	F.gc.why = GC_RESTART;
	assert_int_equal(fx_helper(1, 1), 0);
	assert_int_equal(F.gc.phase, GC_NONE);
	assert_string_equal(fx_said(), "PIDS(-) SWITCH(resume,ok) COST(0) FX(LIMIT,KICK)");
}

static void
test_switch_restore_failed_suspended(void **state)
{
	(void)state;
	fx_suspended(NULL);
	fx_switching(GC_RESTORE, "7@1");
	assert_int_equal(fx_helper(1, 0), 0);
	assert_int_equal(F.gc.phase, GC_NONE);
	assert_int_equal(F.j[0].state, GC_JOB_SUSPENDED);
	assert_int_equal(F.gc.hold, 1);
	assert_true(F.gc.pinned_until > NOW);
	assert_string_equal(F.gc.ckpt_pids, "7@1");	/* the next resume's */
	assert_string_equal(fx_said(), "SWITCH(resume,failed) FX(KICK)");
}

static void
test_switch_restore_overdue_killed(void **state)
{
	(void)state;
	fx_suspended(NULL);
	fx_switching(GC_RESTORE, "7@1");
	fx_pass(NOW + 101);
	assert_int_equal(F.gc.helper_killed, 1);
	assert_string_equal(fx_said(), "KILL");
}

static void
test_switch_restore_killed_suspended(void **state)
{
	(void)state;
	fx_suspended(NULL);
	fx_switching(GC_RESTORE, "7@1");
	F.gc.helper_killed = 1;
	snprintf(F.gc.helper_why, sizeof(F.gc.helper_why), "killed");
	assert_int_equal(fx_helper(1, 1), 0);
	assert_int_equal(F.gc.phase, GC_NONE);
	assert_int_equal(F.j[0].state, GC_JOB_SUSPENDED);
	assert_string_equal(F.gc.error, "killed");
	assert_string_equal(fx_said(), "SWITCH(resume,failed) FX(KICK)");
}

static void
test_switch_restore_undo_running(void **state)
{
	struct gc_event ev = { .type = GC_EV_NOSPAWN, .n = 1 };
	char err[64];

	(void)state;
	fx_switching(GC_RESTORE, "7@1");
	F.gc.undo = 1;
	snprintf(F.gc.helper_why, sizeof(F.gc.helper_why), "nvq-ckpt suspend was killed");
	assert_int_equal(fx_helper(1, 1), 0);
	assert_int_equal(F.gc.phase, GC_NONE);
	assert_int_equal(F.j[0].state, GC_JOB_RUNNING);
	assert_int_equal(F.gc.undo, 0);
	assert_true(F.gc.unsusp_until > NOW);
	assert_string_equal(F.gc.error, "nvq-ckpt suspend was killed, and the switch was undone");
	assert_string_equal(fx_said(), "SWITCH(suspend,failed) FX(KICK)");
	/* its nvq-ckpt resume could not start */
	fx_setup(NULL);
	fx_switching(GC_RESTORE, "7@1");
	F.gc.undo = 1;
	F.gc.helper_pid = 0;
	snprintf(ev.error, sizeof(ev.error), "no nvq-ckpt");
	assert_int_equal(fx_ev(&ev, err, sizeof(err)), 0);
	assert_int_equal(F.gc.phase, GC_NONE);
	assert_non_null(strstr(F.gc.error, "could not run: no nvq-ckpt"));
	assert_string_equal(fx_said(), "SWITCH(suspend,failed) FX(KICK)");
}

static void
test_switch_move_in_running(void **state)
{
	(void)state;
	fx_suspended(NULL);
	fx_switching(GC_MOVE_IN, "");
	assert_int_equal(fx_event(GC_EV_UNLINKED, 0), 0);	/* none moving */
	assert_int_equal(F.gc.phase, GC_NONE);
	assert_int_equal(F.j[0].state, GC_JOB_RUNNING);
	assert_string_equal(fx_said(), "RESUMED COST(0) FX(LIMIT,KICK)");
}

static void
test_switch_move_in_left_suspended(void **state)
{
	struct gc_event ev = { .type = GC_EV_MOVED, .n = 3, .left = 4096 };
	char err[64];

	(void)state;
	fx_suspended(NULL);
	fx_switching(GC_MOVE_IN, "");
	assert_int_equal(fx_ev(&ev, err, sizeof(err)), 0);
	assert_int_equal(F.gc.phase, GC_NONE);
	assert_int_equal(F.j[0].state, GC_JOB_SUSPENDED);
	assert_string_equal(fx_said(), "SWITCH(resume,failed) FX(KICK)");
}

static void
test_switch_release_unheld(void **state)
{
	struct gc_event ev = { .type = GC_EV_RELEASE, .by = "ann" };
	char err[128];

	(void)state;
	fx_suspended("7@1");
	F.gc.hold = 1;
	F.gc.pinned_until = NOW + 5;
	assert_int_equal(fx_ev(&ev, err, sizeof(err)), GPUCTL_RECORD);
	assert_string_equal(fx_said(), "UNHOLD");
	assert_int_equal(F.gc.hold, 1);
	ev.ok = 1;
	assert_int_equal(fx_ev(&ev, err, sizeof(err)), 0);
	assert_int_equal(F.gc.hold, 0);
	assert_true(F.gc.pinned_until == 0);
	assert_int_equal(F.j[0].state, GC_JOB_SUSPENDED);
	assert_string_equal(fx_said(), "FX(KICK)");
	ev.ok = 0;
	assert_int_equal(fx_ev(&ev, err, sizeof(err)), -1);	/* not held now */
	assert_string_equal(fx_said(), "");
}

static void
test_switch_after_exit_none(void **state)
{
	(void)state;
	fx_switching(GC_CHECKPOINT, "7@1");
	F.j[0].exited = 1;
	assert_int_equal(fx_helper(0, 1), 0);
	assert_int_equal(F.gc.phase, GC_NONE);
	assert_string_equal(fx_said(), "");
}

/* ---- the rules ---- */

/* A job's lock and switch as a row sets them, and the rule they break ("": none). */
struct rule {
	int		lock, phase, state;
	double		revoke_at, move_until;
	int		want_held, cut_fails, helper, helper_killed, undo;
	const char	*pids;
	const char	*why;
};

/* Each rule of gpuctl_check, broken once, is found; the states beside them hold. */
static void
test_check_finds_broken_rules(void **state)
{
	static const struct rule r[] = {
		{ GC_GRANTED, GC_NONE, GC_JOB_RUNNING, 0, 0, 0, 0, 0, 0, 0, NULL, "" },
		{ GC_REVOKING, GC_NONE, GC_JOB_RUNNING, 0, 0, 0, 0, 0, 0, 0, NULL,
		    "revoke_at set exactly while REVOKING" },
		{ GC_REVOKING, GC_NONE, GC_JOB_RUNNING, NOW, 0, 1, 0, 0, 0, 0, NULL, "" },
		{ GC_GRANTED, GC_NONE, GC_JOB_RUNNING, NOW, 0, 0, 0, 0, 0, 0, NULL,
		    "revoke_at set exactly while REVOKING" },
		{ GC_GRANTED, GC_NONE, GC_JOB_RUNNING, 0, 0, 1, 0, 0, 0, 0, NULL,
		    "want_held outside REVOKING" },
		{ GC_GRANTED, GC_NONE, GC_JOB_RUNNING, 0, 0, 0, 3, 0, 0, 0, NULL,
		    "cut_fails past GPUCTL_CUT_FAILS" },
		{ GC_GRANTED, GC_NONE, GC_JOB_SUSPENDED, 0, 0, 0, 0, 0, 0, 0, NULL,
		    "a SUSPENDED job's lock not RELEASED" },
		{ GC_RELEASED, GC_CHECKPOINT, GC_JOB_SUSPENDED, 0, 0, 0, 0, 1, 0, 0, "7@1",
		    "DRAINING, MOVE_OUT or CHECKPOINT while SUSPENDED" },
		{ GC_RELEASED, GC_DRAINING, GC_JOB_RUNNING, 0, 0, 0, 0, 0, 0, 0, NULL,
		    "DRAINING, MOVE_OUT or CHECKPOINT without its pids" },
		{ GC_RELEASED, GC_RESTORE, GC_JOB_SUSPENDED, 0, 0, 0, 0, 1, 0, 0, "",
		    "RESTORE without pids to restore" },
		{ GC_RELEASED, GC_CHECKPOINT, GC_JOB_RUNNING, 0, 0, 0, 0, 0, 0, 0, "7@1",
		    "CHECKPOINT or RESTORE without nvq-ckpt" },
		{ GC_RELEASED, GC_NONE, GC_JOB_RUNNING, 0, 0, 0, 0, 0, 1, 0, NULL,
		    "helper_killed with no nvq-ckpt" },
		{ GC_RELEASED, GC_MOVE_OUT, GC_JOB_RUNNING, 0, 0, 0, 0, 0, 0, 0, "7@1",
		    "move_until set exactly while MOVE_OUT or MOVE_IN" },
		{ GC_RELEASED, GC_NONE, GC_JOB_RUNNING, 0, NOW, 0, 0, 0, 0, 0, NULL,
		    "move_until set exactly while MOVE_OUT or MOVE_IN" },
		{ GC_RELEASED, GC_CHECKPOINT, GC_JOB_RUNNING, 0, 0, 0, 0, 1, 0, 1, "7@1",
		    "undo outside RESTORE" },
		{ GC_RELEASED, GC_RESTORE, GC_JOB_RUNNING, 0, 0, 0, 0, 1, 1, 1, "7@1", "" },
	};
	char why[128];
	size_t k;

	(void)state;
	for (k = 0; k < sizeof(r) / sizeof(r[0]); k++) {
		fx_job(&F.j[0], &F.gc, 1);
		F.gc.lock = r[k].lock;
		F.gc.phase = r[k].phase;
		F.j[0].state = r[k].state;
		F.gc.revoke_at = r[k].revoke_at;
		F.gc.move_until = r[k].move_until;
		F.gc.want_held = r[k].want_held;
		F.gc.cut_fails = r[k].cut_fails;
		F.gc.helper = r[k].helper;
		F.gc.helper_killed = r[k].helper_killed;
		F.gc.undo = r[k].undo;
		F.gc.ckpt_pids = r[k].pids != NULL ? strdup(r[k].pids) : NULL;
		why[0] = '\0';
		if (gpuctl_check(&F.j[0], why, sizeof(why)) != (r[k].why[0] != '\0' ? -1 : 0) ||
		    strcmp(why, r[k].why) != 0)
			fail_msg("row %zu: \"%s\", not \"%s\"", k, why, r[k].why);
	}
}

#define ROW(t)	cmocka_unit_test_setup_teardown(t, fx_setup, fx_teardown)

int
main(void)
{
	const struct CMUnitTest tests[] = {
		ROW(test_lock_released_desired_granted),
		ROW(test_lock_revoking_desired_granted),
		ROW(test_lock_stopped_desired_granted),
		ROW(test_lock_granted_undesired_revoking),
		ROW(test_lock_granted_undesired_no_process_released),
		ROW(test_lock_revoking_acked_released),
		ROW(test_lock_revoking_cut_sent),
		ROW(test_lock_revoking_timeout_stopped),
		ROW(test_lock_revoking_timeout_no_rank_stopped),
		ROW(test_lock_revoking_timeout_unread_waits),
		ROW(test_lock_revoking_cuts_failed_stopped),
		ROW(test_lock_revoking_cut_failed_granted),
		ROW(test_lock_cut_failed_fails_suspend),
		ROW(test_lock_stopped_draining_released),
		ROW(test_lock_events_noted),
		ROW(test_lock_gone_released),
		ROW(test_lock_timeslice_turns),
		ROW(test_switch_suspend_draining),
		ROW(test_switch_suspend_refused),
		ROW(test_switch_draining_move_out),
		ROW(test_switch_draining_checkpoint),
		ROW(test_switch_move_out_moved_checkpoint),
		ROW(test_switch_move_out_overdue_checkpoint),
		ROW(test_switch_checkpoint_nothing_suspended),
		ROW(test_switch_checkpoint_helper_ok_suspended),
		ROW(test_switch_checkpoint_helper_failed_runs),
		ROW(test_switch_checkpoint_nospawn_runs),
		ROW(test_switch_checkpoint_overdue_killed),
		ROW(test_switch_checkpoint_unstarted_overdue_fails),
		ROW(test_switch_checkpoint_killed_undo),
		ROW(test_switch_resume_restore),
		ROW(test_switch_resume_nothing_checkpointed),
		ROW(test_switch_recover_restore),
		ROW(test_switch_restore_ok_move_in),
		ROW(test_switch_restore_ok_running),
		ROW(test_switch_restore_restart_running),
		ROW(test_switch_restore_failed_suspended),
		ROW(test_switch_restore_overdue_killed),
		ROW(test_switch_restore_killed_suspended),
		ROW(test_switch_restore_undo_running),
		ROW(test_switch_move_in_running),
		ROW(test_switch_move_in_left_suspended),
		ROW(test_switch_release_unheld),
		ROW(test_switch_after_exit_none),
		ROW(test_check_finds_broken_rules),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
