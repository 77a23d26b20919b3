/*
 * engine_ahead.c: the shims that wait before a start (runner.h): a standby
 * spawned on libuv's thread pool ahead of the next start, and the job
 * predicted to start next handed to it before its turn (engine_ahead,
 * engine_ahead_plan), called off if the prediction fails
 * (engine_ahead_drop).  It serves the launch (engine_launch.c) and is
 * called off by the end (engine_finish.c); it calls engine_admit.c,
 * engine_usage.c and engine_base.c only.
 */
#include <errno.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <sys/wait.h>
#include <unistd.h>

#include "engine_rooms.h"
#include "log.h"
#include "reap.h"
#include "runner.h"
#include "start.h"

/* What a start needs of e (start.h), into *c; returns c. */
const struct start_ctx *
engine_start_ctx(const struct engine *e, struct start_ctx *c)
{
	c->store = e->store;
	c->cfg = &e->cfg;
	c->is_root = e->is_root;
	c->shim = e->shim;
	c->hook = e->hook;
	c->srun = e->srun;
	c->cgroup_base = e->cgroup_base;
	return c;
}

/* A new token for j's start's ticket (runner.h). */
void
engine_new_ticket(struct engine *e, struct job *j)
{
	snprintf(j->ticket, sizeof(j->ticket), "%llx-%x", e->ticket_base, e->tickets++);
}

/*
 * Hands job j, to start on mask, to the standby with runner_spec.prepare:
 * it sets up and waits for runner_go.  Its pid, and in *fd its socket (the
 * caller's now), or -1 and *fd -1 if there was no standby to take it.
 */
pid_t
engine_hand(struct engine *e, struct job *j, uint64_t mask, int *fd)
{
	char uuids[SCHED_MAX_GPUS * 97], status[PATH_MAX], err[256];
	struct start_ctx sc;
	uint64_t granted = engine_gpus_of(e, j, mask, uuids, sizeof(uuids));
	pid_t pid;

	engine_status_path(e, j->id, status, sizeof(status));
	*fd = -1;
	if ((pid = start_shim(engine_start_ctx(e, &sc), j, mask, uuids, granted, status, &e->standby,
	    1, err, sizeof(err))) <= 0) {
		log_debug("job %lld: not prepared: %s", (long long)j->id, err);
		return -1;
	}
	*fd = e->standby.taken_fd;
	e->standby.taken_fd = -1;
	return pid;
}

/*
 * Calls off the standby prepared ahead of its job's turn (engine_ahead):
 * end of file on its socket, and it undoes its setup and exits.
 */
void
engine_ahead_drop(struct engine *e, const char *why)
{
	if (e->ahead.id == 0)
		return;
	log_debug("job %lld: its supervisor %d prepared ahead is called off: %s",
	    (long long)e->ahead.id, (int)e->ahead.pid, why);
	close(e->ahead.fd);
	if (!e->stopping)
		reap_pid(e->loop, e->ahead.pid);
	else {
		/* nvqd stops: wait for its cleanup (its cgroup, the job's account), a second at most */
		int st, i;

		for (i = 0; i < 100 && waitpid(e->ahead.pid, &st, WNOHANG) == 0; i++)
			usleep(10000);
		if (i == 100) {
			kill(e->ahead.pid, SIGKILL);
			waitpid(e->ahead.pid, &st, 0);
		}
	}
	e->ahead.id = 0;
	e->ahead.pid = 0;
	e->ahead.fd = -1;
}

/* On the thread pool: the spawn, which waits for the shim's exec, off the loop. */
static void
engine_standby_work_cb(uv_work_t *w)
{
	struct engine *e = w->data;

	e->standby_err = runner_standby_start(&e->standby_next, e->shim) == -1 ? errno : 0;
}

/* Back on the loop: the new standby is the one the next start takes. */
static void
engine_standby_done_cb(uv_work_t *w, int status)
{
	struct engine *e = w->data;

	e->standby_busy = 0;
	if (status != 0)
		return;		/* cancelled before it ran: nothing started */
	if (e->standby_err != 0) {
		errno = e->standby_err;
		log_warn("cannot start a standby shim %s", e->shim);
		return;
	}
	if (e->stopping || e->standby.pid > 0)
		runner_standby_stop(&e->standby_next);
	else {
		e->standby = e->standby_next;
		engine_ahead(e);
	}
}

/*
 * A standby for the next start, if there is none: spawned on libuv's thread
 * pool, so that the loop goes on (recording the job that just started, the
 * next submit, the end) while the kernel makes the process.  A start before
 * it is ready spawns its own shim, as without one.
 */
void
engine_standby_kick(struct engine *e)
{
	if (e->standby.pid > 0 || e->standby_busy || e->stopping)
		return;
	e->standby_work.data = e;
	e->standby_next.pid = -1;
	e->standby_next.fd = -1;
	e->standby_next.taken_fd = -1;
	if (uv_queue_work(e->loop, &e->standby_work, engine_standby_work_cb,
	    engine_standby_done_cb) == 0)
		e->standby_busy = 1;
	else if (runner_standby_start(&e->standby, e->shim) == -1)
		log_warn("cannot start a standby shim %s", e->shim);
}

/*
 * The next job's start, prepared before its turn: the job the last pass
 * put first among those waiting for room (e->next_id), handed to the
 * standby now, while the running jobs run.  Its supervisor sets up (cgroup,
 * memory account, environment) and waits for runner_go; the start then only
 * commits (engine_commit_start) and says go.  Only where what the job gets
 * is known before its turn: no GPU, or all of them with a fixed -m (its
 * budget then does not move with what NVML sees).  A prediction that turns
 * out wrong costs the standby (called off) and a spawned supervisor.
 */
void
engine_ahead(struct engine *e)
{
	char uuids[SCHED_MAX_GPUS * 97];
	struct job *j = e->next_id != 0 ? engine_find(e, e->next_id) : NULL;
	uint64_t granted = 0;
	int64_t start;
	pid_t pid;
	int fd;

	if (j != NULL && (j->state != JOB_PENDING || j->prepared))
		j = NULL;
	if (j != NULL)
		granted = engine_gpus_of(e, j, e->next_mask, uuids, sizeof(uuids));
	if (e->ahead.id != 0 && (j == NULL || e->ahead.id != j->id ||
	    e->ahead.mask != e->next_mask || e->ahead.granted != granted))
		engine_ahead_drop(e, "another job is next");
	if (e->ahead.id != 0 || j == NULL || e->standby.pid <= 0 || e->stopping)
		return;
	engine_new_ticket(e, j);
	start = e->standby.start;
	if ((pid = engine_hand(e, j, e->next_mask, &fd)) > 0) {
		log_debug("job %lld: prepared ahead by supervisor %d", (long long)j->id, (int)pid);
		e->ahead.id = j->id;
		e->ahead.pid = pid;
		e->ahead.start = start;
		e->ahead.fd = fd;
		e->ahead.mask = e->next_mask;
		e->ahead.granted = granted;
	}
	engine_standby_kick(e);	/* a standby for any other start */
}

/*
 * The job a slot or GPU freed would go to: the first in the order of the
 * wait queue's two fronts (jobs of a GPU, jobs of none), if what it would
 * get can be told now (engine_ahead).  O(users), as a pass's start.  Jobs
 * the plan passed over for a user's limit are there too: when the user's
 * running job ends, the next is theirs.
 */
void
engine_ahead_plan(struct engine *e, double now)
{
	struct order_node *n;
	struct sched_job sj, best;
	struct job *j = NULL, *c;
	int kind;

	e->next_id = 0;
	waitq_begin(&e->wq);
	for (kind = WAITQ_GPU; kind <= WAITQ_CPU; kind++) {
		if ((n = waitq_next(&e->wq, kind)) == NULL)
			continue;
		c = (struct job *)(void *)n;	/* on is its job's first field */
		engine_sj(e, c, now, &sj);
		if (j == NULL || sched_before(&sj, &best, &e->cfg.sched)) {
			j = c;
			best = sj;
		}
	}
	/* nvq run's (its terminal is handed over at its start), or GPUs not known yet */
	if (j == NULL || j->state != JOB_PENDING || j->stdio[0] >= 0 || j->stdio[1] >= 0 ||
	    j->stdio[2] >= 0)
		return;
	if (j->ngpus == 0)
		e->next_mask = 0;
	else if (j->ngpus == e->gpus.n && j->mem != 0 && e->gpus.n < 64 && !j->placed)
		e->next_mask = (1ULL << e->gpus.n) - 1;
	else
		return;
	e->next_id = j->id;
}
