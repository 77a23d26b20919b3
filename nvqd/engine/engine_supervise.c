/*
 * engine_supervise.c: supervision and time limits, the stage of a running
 * job (job.h): its supervisor watched through a pidfd and, where it was a
 * standby, the socket that tells the job's end before the shim's exit
 * (engine_watch, engine_end_cb); the end noticed (engine_job_ended: the
 * next pass records it); the time limit armed from its start, stopped
 * while suspended (engine_limit), and on the same timer Slurm's warning
 * TIME seconds before it (--signal [B:]SIG@TIME, engine_warn); and a stop
 * committed then signalled,
 * SIGKILL after kill_grace (engine_stop, engine_timer_cb).  It calls only
 * engine_base.c.
 */
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include "engine_rooms.h"
#include "log.h"
#include "parse.h"
#include "runner.h"

#define ENGINE_MAX_ARM_MS 3.2e12	/* about a century: no timer waits longer */

/* Stops listening on the standby's socket for the job's end. */
void
engine_end_unwatch(struct job *j)
{
	if (j->endpoll != NULL)
		uv_close((uv_handle_t *)j->endpoll, engine_handle_closed_cb);
	j->endpoll = NULL;
	if (j->endfd >= 0)
		close(j->endfd);
	j->endfd = -1;
}

/*
 * The shim says its job ended (a byte): its status file holds the record,
 * the job's processes are gone.  The pass records the end now; the shim,
 * still cleaning up, is reaped when it exits (reap.h).  Anything else (the
 * socket closed, an error) says nothing of the job: its pidfd still does.
 */
static void
engine_end_cb(uv_poll_t *h, int status, int events)
{
	struct job *j = h->data;
	struct engine *e = h->loop->data;
	char c = 0;
	ssize_t n;
	int st;

	(void)status;
	(void)events;
	while ((n = recv(j->endfd, &c, 1, MSG_DONTWAIT)) == -1 && errno == EINTR)
		;
	if (n == -1 && errno == EAGAIN)
		return;
	engine_end_unwatch(j);
	if (n != 1 || c != 'e' || j->exited)
		return;
	if (waitpid(j->pid, &st, WNOHANG) != j->pid)
		j->reap = 1;
	if (j->poll != NULL)
		uv_poll_stop(j->poll);
	j->exited = 1;
	engine_kick(e);
}

static void
engine_poll_cb(uv_poll_t *h, int status, int events)
{
	struct job *j = h->data;
	struct engine *e = h->loop->data;

	(void)status;
	(void)events;
	engine_job_ended(e, j);
}

/* Watches the shim through a pidfd (opened here unless it already is). */
void
engine_watch(struct engine *e, struct job *j)
{
	if (j->pidfd == -1)
		j->pidfd = (int)syscall(SYS_pidfd_open, j->pid, 0);
	if (j->pidfd == -1) {
		/* no pidfd (Linux < 5.3): the poll timer checks the pid instead */
		log_debug("job %lld: pidfd_open: %s", (long long)j->id, strerror(errno));
		return;
	}
	if ((j->poll = calloc(1, sizeof(*j->poll))) == NULL ||
	    uv_poll_init(e->loop, j->poll, j->pidfd) != 0) {
		free(j->poll);
		j->poll = NULL;
		return;
	}
	j->poll->data = j;
	j->handles++;
	uv_poll_start(j->poll, UV_READABLE, engine_poll_cb);
	/* the standby's socket too, where there is one: its end is told before its exit */
	if (j->endfd < 0)
		return;
	if ((j->endpoll = calloc(1, sizeof(*j->endpoll))) == NULL ||
	    uv_poll_init(e->loop, j->endpoll, j->endfd) != 0) {
		free(j->endpoll);
		j->endpoll = NULL;
		engine_end_unwatch(j);
		return;
	}
	j->endpoll->data = j;
	j->handles++;
	uv_poll_start(j->endpoll, UV_READABLE, engine_end_cb);
}

static void engine_timer_cb(uv_timer_t *);

/* Fires the job's timer in secs; a century or more saturates (no double-to-int overflow). */
void
engine_arm(struct engine *e, struct job *j, double secs)
{
	double ms = secs * 1000;

	if (j->timer == NULL) {
		if ((j->timer = calloc(1, sizeof(*j->timer))) == NULL)
			return;
		uv_timer_init(e->loop, j->timer);
		j->timer->data = j;
		j->handles++;
	}
	uv_timer_start(j->timer, engine_timer_cb, !(ms > 0) ? 0 :
	    ms < ENGINE_MAX_ARM_MS ? (uint64_t)ms : (uint64_t)ENGINE_MAX_ARM_MS, 0);
}

/* Seconds of its time limit job j has left (its suspended time not counted). */
static double
engine_left(const struct job *j)
{
	return j->started_at + (double)j->time_limit + j->gc.susp_total - engine_now();
}

/* Whether j's --signal SIG@TIME warning is still to be sent. */
static int
engine_warn_due(const struct job *j)
{
	return j->warn_sig > 0 && !j->warned && j->slurm_id == 0;
}

/*
 * Arms the job's timer for its warning (--signal SIG@TIME) if that is still
 * to come, else for its time limit: one timer a job, whatever it waits for.
 */
void
engine_limit(struct engine *e, struct job *j)
{
	double left;

	if (j->time_limit <= 0 || j->ending[0] != '\0' || j->exited)
		return;
	if (j->state == JOB_SUSPENDED) {
		if (j->timer != NULL)
			uv_timer_stop(j->timer);
		return;
	}
	left = engine_left(j);
	if (engine_warn_due(j))
		left -= j->warn_time;
	engine_arm(e, j, left > 0 ? left : 0);
}

/*
 * The warning before the time limit, through its shim, recorded so that a
 * restart of nvqd does not send it again; then the timer for the limit.
 */
static void
engine_warn(struct engine *e, struct job *j)
{
	const char *name = parse_signame(j->warn_sig);

	j->warned = 1;
	log_info("job %lld: %d s before its time limit, sending SIG%s%s", (long long)j->id,
	    j->warn_time, name ? name : "RTMIN+?", j->warn_batch ? " to its batch shell" : "");
	if (j->pid > 0 && runner_warn(j->pid, j->pidfd, j->warn_sig, j->warn_batch) == -1)
		log_warn("job %lld: its warning", (long long)j->id);
	if (store_job_warned(e->store, j->id, engine_now()) == -1)
		log_warnx("job %lld: its warning is not recorded: a restart of nvqd may send "
		    "it again", (long long)j->id);
	engine_limit(e, j);
}

/*
 * Commits that a running job is to end in state, then signals it: preempt
 * set, with its --signal (SIGUSR1), to save what it can within kill_grace;
 * else SIGTERM.
 */
int
engine_stop_as(struct engine *e, struct job *j, const char *state, const char *reason,
    int preempt)
{
	int sig;

	if (j->ending[0] != '\0' || j->slurm_id != 0)	/* slurmstepd is Slurm's */
		return 0;
	if (store_job_ending(e->store, j->id, state, reason, engine_now()) == -1)
		return -1;
	snprintf(j->ending, sizeof(j->ending), "%s", state);
	snprintf(j->end_reason, sizeof(j->end_reason), "%s", reason);
	sig = preempt ? (j->preempt_signal ? j->preempt_signal : SIGUSR1) : SIGTERM;
	log_info("job %lld: %s, sending SIG%s", (long long)j->id, reason,
	    parse_signame(sig) ? parse_signame(sig) : "RTMIN+?");
	if (j->pid > 0 && !j->exited)
		runner_stop(j->pid, j->pidfd, preempt ? RUNNER_PREEMPT : RUNNER_TERM);
	engine_arm(e, j, (double)e->cfg.kill_grace);
	return 0;
}

/* Commits that a running job is to stop, then signals it (PREEMPTED: its --signal). */
int
engine_stop(struct engine *e, struct job *j, const char *state, const char *reason)
{
	return engine_stop_as(e, j, state, reason, strcmp(state, "PREEMPTED") == 0);
}

static void
engine_timer_cb(uv_timer_t *h)
{
	struct job *j = h->data;
	struct engine *e = h->loop->data;
	char why[64], t[24];

	if (j->exited)
		return;
	if (j->ending[0] == '\0' && engine_warn_due(j)) {
		/* a timer may fire a little early: the warning, or the wait for it again */
		if (engine_left(j) <= j->warn_time + 0.01)
			engine_warn(e, j);
		else
			engine_limit(e, j);
		return;
	}
	if (j->ending[0] == '\0') {
		fmt_elapsed(j->time_limit, t, sizeof(t));
		snprintf(why, sizeof(why), "time limit %s reached", t);
		engine_stop(e, j, "TIMEOUT", why);
		return;
	}
	if (!j->killed_hard && j->pid > 0 && !j->exited) {
		log_info("job %lld: still running after %llds, sending SIGKILL",
		    (long long)j->id, (long long)e->cfg.kill_grace);
		runner_stop(j->pid, j->pidfd, RUNNER_KILL);
		j->killed_hard = 1;
	}
}

/* The shim is gone: reap it; the next pass records how the job ended. */
void
engine_job_ended(struct engine *e, struct job *j)
{
	int st;

	if (j->pid > 0)
		waitpid(j->pid, &st, WNOHANG);
	if (j->poll != NULL)
		uv_poll_stop(j->poll);
	engine_end_unwatch(j);
	j->exited = 1;
	engine_kick(e);
}

int
engine_requeue_job(struct engine *e, struct job *j, const char *by)
{
	char why[128];

	snprintf(why, sizeof(why), "requeued by %s", by);
	return engine_stop(e, j, "REQUEUED", why);
}
