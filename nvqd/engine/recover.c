/*
 * recover.c: a restarted nvqd takes its jobs back (see recover.h).
 */
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "cgroup.h"
#include "engine.h"
#include "dep.h"
#include "gpuctl.h"
#include "log.h"
#include "proc.h"
#include "recover.h"
#include "runner.h"
#include "slurm.h"
#include "status.h"

/*
 * How long a restart may look for supervisors and wait for cgroups to
 * empty, for all its jobs together: a wait per job would grow with the
 * starts a crash cut short (seen: over 5 s for a few, under ASan).
 */
#define RECOVER_WAIT	1.0

static double
recover_clock(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + ts.tv_nsec / 1e9;
}

struct recover_load {
	struct engine	*e;
	int		count;
};

int
recover_add(struct engine *e, const struct store_active_job *a)
{
	struct engine_array arr = { a->array_id, a->array_index, a->array_limit };
	int64_t after[PARSE_MAX_IDS];
	struct job *j;
	int nafter, pending, singleton;

	/* its stored dependencies (dep_format's text, or "1,2,3" from before -d) */
	nafter = dep_unformat(a->after, after, &singleton);
	if (engine_add(e, a->id, a->uid, a->gid, a->user ? a->user : "?", a->gpus,
	    a->mem_per_gpu, a->priority, a->submitted_at, a->time_limit, after, nafter,
	    a->array_id ? &arr : NULL) == -1)
		return -1;
	j = e->jobs;
	engine_charge(e, j, a->stored_own, a->stored_key, a->stored_shared);
	if (a->qos != NULL)
		engine_qos(e, j, a->qos);
	engine_lc(e, j, a->lc);
	/* held: of a pending job, parked; of a running one, its lock (gpuctl's) */
	pending = a->state == NULL || strcmp(a->state, "PENDING") == 0;
	if ((pending && a->held) || a->rank_at > 0 || a->top_at > 0 || a->gpus_allow != NULL ||
	    a->gpus_deny != NULL) {
		struct engine_extra x = { pending && a->held, a->rank_at, a->top_at,
		    a->gpus_allow, a->gpus_deny };

		engine_extras(e, j, &x);
	}
	if (a->state != NULL && strcmp(a->state, "PENDING") != 0) {
		engine_state(e, j, strcmp(a->state, "SUSPENDED") == 0 ? JOB_SUSPENDED : JOB_RUNNING);
		j->started_at = a->started_at;
		gpuctl_loaded(j, j->state == JOB_RUNNING, a->held, a->suspended_at,
		    a->suspend_hold, a->ckpt_pids, a->run_suspended, engine_now());
		j->pid = (pid_t)a->pid;
		if (a->ending != NULL) {
			snprintf(j->ending, sizeof(j->ending), "%s", a->ending);
			snprintf(j->end_reason, sizeof(j->end_reason), "%s",
			    a->reason ? a->reason : "");
		}
		/* recover_jobs checks that it is still the same process */
		j->pid_start = a->has_pid_start ? a->pid_start : -2;
		if (a->cgroup != NULL)
			j->cgroup = strdup(a->cgroup);
		/* started before the machine's last boot: nothing of it is left */
		if (a->boot_id != NULL && strcmp(a->boot_id, e->boot_id) != 0) {
			j->node_fail = 1;
			j->pid = -j->pid;
		}
	}
	j->requeue = a->requeue;
	j->preempt_signal = a->preempt_signal;
	j->warn_sig = a->warn_sig;
	j->warn_time = a->warn_time;
	j->warn_batch = a->warn_batch;
	/* warned before the restart: not again (a start clears warned_at) */
	j->warned = j->state != JOB_PENDING && a->warned_at > 0;
	/* a Slurm step this node's nvqd follows (adopt.h) */
	j->slurm_id = a->slurm_step != NULL && a->slurm_id > 0 ? a->slurm_id : 0;
	j->notify = a->notify;
	j->cpus = a->cpus;
	j->host_mem = a->host_mem;
	j->mem_per_cpu = a->mem_per_cpu;
	/* the GPUs it holds, from the UUIDs recorded at its start */
	if (j->state != JOB_PENDING && a->gpu_uuids != NULL) {
		char buf[SCHED_MAX_GPUS * 97], *tok, *save;
		int g;

		snprintf(buf, sizeof(buf), "%s", a->gpu_uuids);
		for (tok = strtok_r(buf, ",", &save); tok; tok = strtok_r(NULL, ",", &save))
			for (g = 0; g < e->gpus.n; g++)
				if (strcmp(e->gpus.gpus[g].uuid, tok) == 0)
					j->gpumask |= 1ULL << g;
		j->granted = j->mem;
		for (g = 0; g < e->gpus.n && j->mem == 0; g++)
			if (j->gpumask & (1ULL << g))
				j->granted = engine_budget(e, g);
	}
	return 0;
}

static int
recover_load_cb(void *arg, const struct store_active_job *a)
{
	struct recover_load *l = arg;
	struct engine *e = l->e;

	if (e->slurm != NULL) {
		/* a job nvqd ran itself cannot be followed through Slurm */
		if ((a->slurm_id < 0 || a->slurm_step != NULL) && strcmp(a->state, "PENDING") != 0)
			log_fatalx("job %lld is %s on this machine: [cluster] engine = slurm "
			    "waits until nvqd's own jobs have ended (engine = local)",
			    (long long)a->id, a->state);
		if (slurm_add(e->slurm, a->id, a->uid, a->gid, a->gpus, a->mem_per_gpu, a->state,
		    a->slurm_id, 1) == -1)
			return 1;
		l->count++;
		return 0;
	}
	if (a->slurm_id >= 0 && a->slurm_step == NULL)
		log_fatalx("job %lld is Slurm's (job %lld): set [cluster] engine = slurm until "
		    "Slurm's jobs have ended", (long long)a->id, (long long)a->slurm_id);
	if (recover_add(e, a) == -1)
		return 1;
	l->count++;
	return 0;
}

/*
 * A RUNNING job without a pid in the database (nvqd stopped between
 * committing its start and recording its shim's pid), or whose recorded
 * shim is gone (recorded: a standby shim is recorded with the start, before
 * it is given the job).  If the shim recorded an end, that is used; if it
 * never took its ticket, the job never started and goes back to PENDING
 * (returns 1); else its shim, if it runs, is adopted: looked for a second
 * where its pid is unknown, once where the recorded one is gone (the
 * standby was gone too and a shim was spawned instead).
 */
static int
recover_adopt(struct engine *e, struct job *j, int recorded, double deadline)
{
	char status[PATH_MAX], cg[PATH_MAX];
	struct status_record rs;
	pid_t pid = -1;

	engine_status_path(e, j->id, status, sizeof(status));
	if (status_read(status, &rs) == 0)
		return 0;
	if (!runner_void_start(status)) {
		/*
		 * Its shim took the ticket: it started, and has ended (its status
		 * says how) or is to be found.
		 */
		for (;;) {
			if (status_read(status, &rs) == 0)
				return 0;
			if ((pid = runner_find_shim(status)) > 0 || recorded ||
			    recover_clock() >= deadline)
				break;
			usleep(10000);
		}
		if (pid <= 0)
			return 0;
		j->pid = pid;
		j->pid_start = proc_start_time(pid);
		if (e->cgroup_base[0] != '\0' && j->cgroup == NULL) {
			cgroup_name(e->cgroup_base, (long long)j->id, pid, cg, sizeof(cg));
			j->cgroup = strdup(cg);
		}
		log_info("job %lld: found its supervisor (pid %d)", (long long)j->id, (int)pid);
		store_job_set_pid(e->store, j->id, pid, j->pid_start, e->boot_id, j->cgroup);
		return 0;
	}
	if (store_job_unstart(e->store, j->id, engine_now()) == -1)
		return 0;	/* FAILED as having no supervisor, below */
	log_info("job %lld: never started; pending again", (long long)j->id);
	engine_state(e, j, JOB_PENDING);
	j->gpumask = 0;
	j->granted = 0;
	j->started_at = 0;
	gpuctl_init(j);
	free(j->cgroup);
	j->cgroup = NULL;
	return 1;
}

/* Kills what is in a job's cgroup (its shim is gone) and removes it; waits until deadline. */
static void
recover_cgroup_end(const char *cg, double deadline)
{
	if (cgroup_kill(cg) == -1 && errno != ENOENT)
		log_warn("%s", cg);
	while (!cgroup_empty(cg) && recover_clock() < deadline)
		usleep(10000);
	if (rmdir(cg) == -1 && errno != ENOENT)
		log_warn("cannot remove %s", cg);
}

/* Keeps j->pid only if it is still the same process, with a pidfd on it; else 0. */
static void
recover_same(struct job *j)
{
	j->pidfd = (int)syscall(SYS_pidfd_open, j->pid, 0);
	if (proc_start_time(j->pid) != j->pid_start) {
		if (j->pidfd >= 0)
			close(j->pidfd);
		j->pidfd = -1;
		j->pid = 0;
	}
}

void
recover_jobs(struct engine *e)
{
	struct recover_load l = { e, 0 };
	struct gc_event ev = { .type = GC_EV_RECOVER };
	struct job *j, *next;
	double deadline = recover_clock() + RECOVER_WAIT;
	int recorded;

	if (store_active(e->store, recover_load_cb, &l) == -1)
		log_fatalx("cannot load the jobs from the database");
	for (j = e->jobs; j != NULL; j = next) {
		next = j->next;
		if (j->state == JOB_PENDING)
			continue;
		/*
		 * A pid read back from the database is the shim only if it is the
		 * same process: open a pidfd first, then compare start times, so
		 * that a pid reused in between cannot pass; every signal then goes
		 * through that pidfd.
		 */
		recorded = j->pid > 0;
		if (j->pid > 0)
			recover_same(j);
		if (j->pid == 0 && !j->node_fail) {
			if (recover_adopt(e, j, recorded, deadline) == 1)
				continue;	/* it never started: pending again */
			if (j->pid > 0)
				recover_same(j);
		}
		if (j->pid <= 0) {
			j->pid = 0;
			log_info("job %lld: its supervisor is gone%s", (long long)j->id,
			    j->node_fail ? " (the machine restarted since it started)" : "");
			/* whatever of it outlived its shim ends with it */
			if (j->cgroup != NULL)
				recover_cgroup_end(j->cgroup, deadline);
			engine_job_ended(e, j);
			continue;
		}
		j->recovered = 1;
		log_info("job %lld: still %s (pid %d), reattached", (long long)j->id,
		    j->state == JOB_SUSPENDED ? "suspended" : "running", (int)j->pid);
		engine_track(e, j);
		engine_energy_load(e, j);
		engine_watch(e, j);
		ev.job = j->id;
		engine_gpu(e, &ev, NULL, 0);	/* GC_EV_RECOVER */
		if (j->ending[0] != '\0') {
			runner_stop(j->pid, j->pidfd, RUNNER_TERM);
			engine_arm(e, j, (double)e->cfg.kill_grace);
		} else
			engine_limit(e, j);
	}
	log_info("%d active jobs loaded", l.count);
}
