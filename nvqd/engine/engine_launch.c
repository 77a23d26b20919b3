/*
 * engine_launch.c: the launch, PENDING -> RUNNING (job.h): a start the
 * pass decided, recorded inside the pass's transaction with its ticket and
 * its standby's pid (engine_commit_start), handed to that standby before
 * the commit (engine_prepare, engine_unprepare if the commit fails), then
 * acted on: the supervisor told to go or spawned, watched and its time
 * limit armed (engine_spawn).  A start that fails is recorded FAILED
 * (engine_fail, engine_finish.c).
 */
#include <limits.h>
#include <string.h>
#include <unistd.h>

#include "cgroup.h"
#include "engine_rooms.h"
#include "gpuctl.h"
#include "log.h"
#include "proc.h"
#include "reap.h"
#include "runner.h"
#include "start.h"

/* Records PENDING -> RUNNING (inside the pass's transaction); acts later. */
int
engine_commit_start(struct engine *e, struct job *j, uint64_t mask, double now)
{
	char uuids[SCHED_MAX_GPUS * 97], status[PATH_MAX];
	uint64_t granted = engine_gpus_of(e, j, mask, uuids, sizeof(uuids));
	int ahead = e->ahead.id == j->id;

	/* prepared ahead for other GPUs, or another budget: called off */
	if (ahead && (e->ahead.mask != mask || e->ahead.granted != granted)) {
		engine_ahead_drop(e, "it starts on other terms");
		ahead = 0;
	}
	/* the ticket first: a crash after the commit then voids or runs it, once */
	engine_status_path(e, j->id, status, sizeof(status));
	if (!ahead)	/* else the token its standby has */
		engine_new_ticket(e, j);
	if (runner_ticket(status, j->ticket, &e->spares) == -1) {
		log_warn("%s.%s.ticket", status, j->ticket);
		return -1;
	}
	j->promised = 0;
	if (store_job_start(e->store, j->id, now, uuids, j->ngpus, granted,
	    engine_gpu_share(e, j, mask)) == -1)
		return -1;
	if (ahead) {
		/* its standby has it: the pid goes with the start, and runner_go after */
		char cg[PATH_MAX] = "";

		if (e->cgroup_base[0] != '\0')
			cgroup_name(e->cgroup_base, (long long)j->id, e->ahead.pid, cg, sizeof(cg));
		if (store_job_set_pid(e->store, j->id, e->ahead.pid, e->ahead.start,
		    e->boot_id, *cg ? cg : NULL) == -1) {
			engine_ahead_drop(e, "its supervisor's pid cannot be recorded");
			return 0;
		}
		j->promised = e->ahead.pid;
		j->pid_start = e->ahead.start;
		j->prepared = 1;
		j->go_fd = e->ahead.fd;
		e->ahead.id = 0;
		e->ahead.pid = 0;
		e->ahead.fd = -1;
		return 0;
	}
	/*
	 * Its supervisor is the standby shim, if there is one left in this
	 * pass: its pid goes with the start, no commit of its own after it.  A
	 * crash before the standby got the job leaves the ticket, and
	 * recover.c puts the job back.
	 */
	if (e->standby.pid > 0 && !e->standby_taken) {
		char cg[PATH_MAX] = "";

		if (e->cgroup_base[0] != '\0')
			cgroup_name(e->cgroup_base, (long long)j->id, e->standby.pid, cg, sizeof(cg));
		if (store_job_set_pid(e->store, j->id, e->standby.pid, e->standby.start,
		    e->boot_id, *cg ? cg : NULL) == 0) {
			j->promised = e->standby.pid;
			j->pid_start = e->standby.start;
			e->standby_taken = 1;
		}
	}
	return 0;
}

/*
 * Hands job j, whose start is recorded in the pass's open transaction, to
 * the standby promised to it, before the commit: the shim sets up (cgroup,
 * memory account, environment) while nvqd commits, and takes its ticket
 * only on runner_go (engine_spawn).  If the standby is gone, nothing: the
 * job's shim is spawned after the commit, as without one.
 */
void
engine_prepare(struct engine *e, struct job *j, uint64_t mask)
{
	int fd;

	/* the standby is the one promised to j: its pid is j->promised, or none took it */
	if (engine_hand(e, j, mask, &fd) <= 0)
		return;
	j->prepared = 1;
	j->go_fd = fd;
}

/* Calls off the prepared standby of a start that could not be committed. */
void
engine_unprepare(struct engine *e, struct job *j)
{
	if (!j->prepared)
		return;
	j->prepared = 0;
	log_info("job %lld: its start is not committed: its prepared supervisor %d is "
	    "called off", (long long)j->id, (int)j->promised);
	if (j->go_fd >= 0)
		close(j->go_fd);	/* end of file: it undoes its setup and exits */
	j->go_fd = -1;
	reap_pid(e->loop, j->promised);
}

/*
 * Starts a job whose RUNNING state is committed: forks its supervisor.
 * Returns 0, or -1 when it failed to start, was recorded FAILED and freed.
 */
int
engine_spawn(struct engine *e, struct job *j, uint64_t mask, double now)
{
	char uuids[SCHED_MAX_GPUS * 97], status[PATH_MAX], err[256];
	struct start_ctx sc;
	uint64_t granted = engine_gpus_of(e, j, mask, uuids, sizeof(uuids));

	engine_state(e, j, JOB_RUNNING);
	/* --dependency after:ID waits for its start */
	if (deptab_count(&e->deptab, j->id) > 0)
		engine_dep_note(e, j->id);
	j->gpumask = mask;
	j->granted = granted;
	j->started_at = now;
	gpuctl_started(j, now);
	engine_track(e, j);
	engine_energy_start(e, j);
	engine_status_path(e, j->id, status, sizeof(status));
	j->pid = -1;
	if (j->prepared) {
		/* the standby set up while the start was committed: it goes now */
		j->prepared = 0;
		if (runner_go(j->go_fd) == 0) {
			j->pid = j->promised;
			e->standby.taken_fd = j->go_fd;
		} else {
			log_warnx("job %lld: its prepared supervisor %d is gone; starting "
			    "another", (long long)j->id, (int)j->promised);
			close(j->go_fd);
			reap_pid(e->loop, j->promised);
		}
		j->go_fd = -1;
	}
	if (j->pid == -1)
		j->pid = start_shim(engine_start_ctx(e, &sc), j, mask, uuids, granted, status,
		    j->promised > 0 && j->promised == e->standby.pid ? &e->standby : NULL, 0, err,
		    sizeof(err));
	engine_close_stdio(e, j);
	/* handed to the standby: its socket tells the job's end */
	if (e->standby.taken_fd >= 0 && j->pid > 0 && j->pid == j->promised)
		j->endfd = e->standby.taken_fd;
	else if (e->standby.taken_fd >= 0)
		close(e->standby.taken_fd);
	e->standby.taken_fd = -1;
	if (j->pid == -1) {
		j->pid = 0;
		engine_fail(e, j, err);
		return -1;
	}
	/* the standby's was read when it started, and recorded with the start */
	if (j->pid != j->promised)
		j->pid_start = proc_start_time(j->pid);
	if (e->cgroup_base[0] != '\0') {
		char cg[PATH_MAX];

		cgroup_name(e->cgroup_base, (long long)j->id, j->pid, cg, sizeof(cg));
		j->cgroup = strdup(cg);
	}
	log_info("job %lld started (pid %d) on %s", (long long)j->id, (int)j->pid,
	    *uuids ? uuids : "no GPU");
	engine_watch(e, j);
	engine_limit(e, j);
	return 0;
}
