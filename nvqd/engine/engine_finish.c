/*
 * engine_finish.c: the end of a job, the last stage of its life (job.h).
 * An exited job's end is read from its shim's status file (engine_final),
 * recorded in the pass's transaction with the starts after it
 * (engine_finish, engine_ends_close), and the job requeued or ended and
 * dropped (engine_drop: out of every list, its handles closed, GPU control
 * told, freed in the last close callback); its status file and environment
 * go after the pass's starts (engine_recycle).  Cancels of pending jobs end
 * here at once; running ones are stopped by engine_supervise.c.
 */
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "engine_rooms.h"
#include "gpuctl.h"
#include "hooks.h"
#include "lcbe.h"
#include "lcbestat.h"
#include "log.h"
#include "reap.h"
#include "runner.h"
#include "status.h"
#include "suspend.h"

#define ENGINE_ENV_BATCH	128	/* finished jobs whose environments go in one commit, */
#define ENGINE_ENV_DELAY_MS	50	/* or this long after the first of them ended */

/* Unlinks a job that is no longer active; frees it once its handles close. */
void
engine_drop(struct engine *e, struct job *j)
{
	struct gc_event ev = { .type = GC_EV_GONE, .job = j->id };
	char err[8];

	engine_close_stdio(e, j);
	if (e->ahead.id == j->id)
		engine_ahead_drop(e, "it is no longer pending");
	if (e->ckpt_ready != NULL)
		suspend_unready(e, j->id);	/* an nvq-ckpt ready for its resume ends */
	jobtab_del(&e->jobtab, j);
	engine_queue_out(e, j);
	engine_gate_leave(e, j);
	if (j->prev != NULL)
		j->prev->next = j->next;
	else
		e->jobs = j->next;
	if (j->next != NULL)
		j->next->prev = j->prev;
	e->njobs--;
	engine_count_pending(e, j, -1);
	engine_lc(e, j, 0);
	engine_uncharge(e, j);
	j->gone = 1;
	/* whoever runs --after it may be ready, or never */
	if (deptab_count(&e->deptab, j->id) > 0)
		engine_dep_note(e, j->id);
	if (j->arrn != NULL) {
		deptab_del(&e->arrtab, j->arrn, 1);
		j->arrn = NULL;
		/* its array's last task: whoever waits for the whole array */
		if (j->id != j->array_id && deptab_count(&e->arrtab, j->array_id) == 0 &&
		    deptab_count(&e->deptab, j->array_id) > 0)
			engine_dep_note(e, j->array_id);
	}
	if (j->poll != NULL)
		uv_close((uv_handle_t *)j->poll, engine_handle_closed_cb);
	if (j->timer != NULL)
		uv_close((uv_handle_t *)j->timer, engine_handle_closed_cb);
	j->poll = NULL;
	j->timer = NULL;
	engine_end_unwatch(j);
	/* a shim that told its job's end and is still cleaning up: reaped when it exits */
	if (j->reap && j->pidfd >= 0 && j->pid > 0)
		reap_later(e->loop, j->pid, j->pidfd);
	else if (j->pidfd >= 0)
		close(j->pidfd);
	j->pidfd = -1;
	free(j->cgroup);
	j->cgroup = NULL;
	/* its locks decide nothing now; others may take its timeslice GPUs */
	hooks_job_gone(e, j);
	if (!e->stopping)
		e->gpu_job(e, j, &ev, err, sizeof(err));
	gpuctl_free(j);
	engine_untrack(j);
	free(j->end_peaks);
	free(j->end_uuids);
	free(j->lc_hist);
	j->lc_hist = NULL;
	j->end_peaks = NULL;
	j->end_uuids = NULL;
	if (j->handles == 0)
		free(j);
}

/*
 * A job that can no longer start: its environment goes at once (it may hold
 * secrets, and megabytes of a user's disk share), in a commit of its own
 * that is not synced (a crash leaves it to start-up's sweep), which on a
 * full disk takes the reserve: it gives room back.
 */
static void
engine_forget_env(struct engine *e, const struct job *j)
{
	store_envs_delete(e->store, &j->id, 1);
}

/* A job's end is committed: its notifiers, if it or [daemon] on_finish has any. */
void
engine_notice(struct engine *e, const struct job *j)
{
	if (j->notify || e->cfg.on_finish[0] != '\0')
		notify_job(&e->notify, j->id);
}

void
engine_fail(struct engine *e, struct job *j, const char *why)
{
	struct store_end end = { "FAILED", engine_now(), -1, 0, -1, -1, why, -1, 0, NULL, NULL, 0, { 0, 0, 0 }, 0 };

	log_warnx("job %lld: %s", (long long)j->id, why);
	if (store_job_end(e->store, j->id, &end) == -1)
		log_warnx("job %lld: cannot record its failure", (long long)j->id);
	else {
		engine_forget_env(e, j);
		engine_notice(e, j);
	}
	engine_drop(e, j);
}

/*
 * The reason of a job that failed after an allocation past its budget was
 * refused: the sizes, how it ended, and the -m that would have held it (the
 * most it asked for, rounded up to a GiB, and [scheduler] auto_margin).
 */
static void
engine_oom_reason(struct engine *e, struct job *j)
{
	char asked[16], used[16], lim[16], want[16], was[128];
	uint64_t need = j->oom_used + j->oom_asked, g = 1ULL << 30;

	snprintf(was, sizeof(was), "%s", j->final_reason);
	need += (uint64_t)((double)need * e->cfg.auto_margin);
	need = (need + g - 1) / g * g;
	fmt_size(j->oom_asked, asked, sizeof(asked));
	fmt_size(j->oom_used, used, sizeof(used));
	fmt_size(j->oom_limit, lim, sizeof(lim));
	fmt_size(need, want, sizeof(want));
	snprintf(j->final_reason, sizeof(j->final_reason), "out of GPU memory: asked %s more "
	    "with %s of its -m %s in use (%s); try -m %s", asked, used, lim, was, want);
}

/* How an exited job ended, from what its shim recorded, into j->final_*. */
static void
engine_final(struct engine *e, struct job *j, struct store_end *end)
{
	struct status_record rs;
	char status[PATH_MAX];
	int has_status;

	engine_status_path(e, j->id, status, sizeof(status));
	memset(end, 0, sizeof(*end));
	end->now = engine_now();
	j->final_reason[0] = '\0';
	has_status = status_read(status, &rs) == 0;
	if (!has_status && j->recovered && !j->node_fail && j->ending[0] == '\0' &&
	    runner_void_start(status) == 1) {
		/*
		 * Its shim, recorded by an earlier nvqd, ended without taking the
		 * start's ticket: it never ran the job (a standby shim that lost
		 * nvqd before it got the job, and was still there, or a zombie,
		 * when this nvqd started), which goes back to PENDING.  Not for a
		 * start of this nvqd's: a shim that cannot take its job would
		 * then be tried again and again.
		 */
		snprintf(j->final_state, sizeof(j->final_state), "UNSTARTED");
		snprintf(j->final_reason, sizeof(j->final_reason), "its supervisor ended "
		    "before it took the job; pending again");
		end->exit_code = -1;
		end->cpu_time = -1;
		end->max_rss = -1;
	} else if (!has_status) {
		snprintf(j->final_state, sizeof(j->final_state), "%s",
		    j->node_fail ? "NODE_FAIL" : j->ending[0] ? j->ending : "FAILED");
		end->exit_code = -1;
		end->cpu_time = -1;
		end->max_rss = -1;
		snprintf(j->final_reason, sizeof(j->final_reason), "%s", j->node_fail ?
		    (j->requeue ? "the machine restarted while it ran; requeued (--requeue)" :
		    "the machine restarted while it ran") :
		    "its supervisor ended without recording an exit status");
	} else {
		end->now = rs.ended_at;
		end->exit_code = rs.exit_code;
		end->signal = rs.signal;
		end->cpu_time = rs.cpu_time;
		end->max_rss = rs.max_rss;
		if (rs.reason[0] != '\0' && strcmp(rs.reason, STATUS_OOM) != 0) {
			snprintf(j->final_state, sizeof(j->final_state), "FAILED");
			snprintf(j->final_reason, sizeof(j->final_reason), "%s", rs.reason);
		} else if (j->ending[0] != '\0') {
			snprintf(j->final_state, sizeof(j->final_state), "%s", j->ending);
			snprintf(j->final_reason, sizeof(j->final_reason), "%s", j->end_reason);
		} else if (rs.reason[0] != '\0') {
			/*
			 * its cgroup's OOM killer: Slurm's OUT_OF_MEMORY, which the
			 * jobs table's CHECK on state (001_init.sql) does not take:
			 * FAILED, with the reason
			 */
			char m[16];

			fmt_size(j->host_mem, m, sizeof(m));
			snprintf(j->final_state, sizeof(j->final_state), "FAILED");
			snprintf(j->final_reason, sizeof(j->final_reason), "killed: over its --mem %s "
			    "of host memory (%s %d)", m, rs.signal > 0 ? "signal" : "exit code",
			    rs.signal > 0 ? rs.signal : rs.exit_code);
		} else if (rs.exit_code == 0) {
			snprintf(j->final_state, sizeof(j->final_state), "COMPLETED");
		} else if (rs.signal > 0) {
			snprintf(j->final_state, sizeof(j->final_state), "FAILED");
			snprintf(j->final_reason, sizeof(j->final_reason),
			    "killed by signal %d (%s)", rs.signal, strsignal(rs.signal));
		} else {
			snprintf(j->final_state, sizeof(j->final_state), "FAILED");
			snprintf(j->final_reason, sizeof(j->final_reason), "exit code %d",
			    rs.exit_code);
		}
	}
	/* it failed after the hook refused it memory: most likely why */
	if (strcmp(j->final_state, "FAILED") == 0 && j->oom_asked > 0 && j->ending[0] == '\0')
		engine_oom_reason(e, j);
	end->state = j->final_state;
	end->reason = j->final_reason[0] ? j->final_reason : NULL;
	engine_energy_end(e, j);
	/* what its hooks measured of lc/be (gpu/lcbe.c): an lc job's latencies, a be job's yield */
	if (j->lc_hist != NULL || j->lc_yield_us > 0) {
		end->has_lcbe = 1;
		end->lc_ns[0] = (int64_t)lcbestat_quantile(j->lc_hist, 0.5);
		end->lc_ns[1] = (int64_t)lcbestat_quantile(j->lc_hist, 0.99);
		end->lc_ns[2] = (int64_t)lcbestat_quantile(j->lc_hist, 0.999);
		end->be_yield_us = (int64_t)j->lc_yield_us;
	}
	/* known from NVML, or from the hook where it reported */
	end->peak_gpu_mem = -1;
	if ((j->gpu_peak != NULL && !e->gpus.is_virtual && e->gpus.lib != NULL) ||
	    engine_job_peak(e, j) > 0)
		end->peak_gpu_mem = (int64_t)engine_job_peak(e, j);
	if (end->peak_gpu_mem >= 0 && j->gpumask != 0) {
		int g;

		if (j->end_peaks == NULL) {
			j->end_peaks = calloc(SCHED_MAX_GPUS, sizeof(*j->end_peaks));
			j->end_uuids = calloc(SCHED_MAX_GPUS, sizeof(*j->end_uuids));
		}
		for (g = 0; j->end_peaks != NULL && j->end_uuids != NULL && g < e->gpus.n; g++)
			if (j->gpumask & (1ULL << g)) {
				j->end_uuids[end->npeaks] = e->gpus.gpus[g].uuid;
				j->end_peaks[end->npeaks++] = (int64_t)engine_gpu_peak(j, g);
			}
		end->peak_uuids = j->end_uuids;
		end->peaks = j->end_peaks;
	}
}

/*
 * The environments of finished jobs, which are no longer needed and may
 * hold secrets, deleted in one commit (if nvqd stops before, store_open
 * deletes them).  Not those of jobs active again since (nvq restart gave
 * them a new one).
 */
static void
engine_env_flush(struct engine *e)
{
	int i;

	uv_timer_stop(&e->envgone_timer);
	if (e->nenvgone == 0)
		return;
	store_lazy_begin(e->store);
	for (i = 0; i < e->nenvgone; i++)
		if (engine_find(e, e->envgone[i]) == NULL)
			store_env_delete(e->store, e->envgone[i]);
	if (store_lazy_commit(e->store) == -1)
		log_warnx("cannot delete the environments of %d finished jobs; they go when "
		    "nvqd restarts", e->nenvgone);
	e->nenvgone = 0;
}

static void
engine_env_flush_cb(uv_timer_t *t)
{
	engine_env_flush(t->loop->data);
}

/*
 * What a finished job leaves, once the pass's starts are handed over (not
 * between a job's end and the next one's start): its status file, made a
 * spare (runner.h), and its environment, deleted with those of the jobs
 * that end in the next ENGINE_ENV_DELAY_MS (one commit, not one per job:
 * one at a time, that commit cost nvqd as much as a job's start).
 */
void
engine_recycle(struct engine *e)
{
	char status[PATH_MAX];
	int i;

	/* below ENGINE_ENV_BATCH after each call, so a pass's ends always fit */
	_Static_assert(sizeof(e->envgone) / sizeof(e->envgone[0]) >= ENGINE_ENV_BATCH - 1 +
	    sizeof(e->recycle) / sizeof(e->recycle[0]), "envgone holds a batch and a pass");
	for (i = 0; i < e->nrecycle; i++) {
		engine_status_path(e, e->recycle[i], status, sizeof(status));
		runner_recycle(status, &e->spares);
		e->envgone[e->nenvgone++] = e->recycle[i];
	}
	e->nrecycle = 0;
	if (e->nenvgone == 0)
		return;
	if (e->nenvgone >= ENGINE_ENV_BATCH || e->stopping)
		engine_env_flush(e);
	else if (!uv_is_active((uv_handle_t *)&e->envgone_timer))
		uv_timer_start(&e->envgone_timer, engine_env_flush_cb, ENGINE_ENV_DELAY_MS, 0);
}

/* engine_recycle's work for job id, later in the pass. */
static void
engine_recycle_later(struct engine *e, int64_t id)
{
	if (e->nrecycle == (int)(sizeof(e->recycle) / sizeof(e->recycle[0]))) {
		engine_ends_close(e);	/* no status file of an end not committed goes */
		engine_recycle(e);
	}
	e->recycle[e->nrecycle++] = id;
}

/* Logs, forgets and drops a job whose end is committed. */
static void
engine_ended(struct engine *e, struct job *j)
{
	log_info("job %lld %s%s%s", (long long)j->id, j->final_state,
	    j->final_reason[0] ? ": " : "", j->final_reason);
	engine_recycle_later(e, j->id);
	engine_notice(e, j);
	engine_drop(e, j);
}

/*
 * nvq requeue, NODE_FAIL or preemption of a job submitted with --requeue,
 * or a start its shim never took (UNSTARTED): it goes back to PENDING.
 */
static int
engine_requeued(const struct job *j)
{
	return strcmp(j->final_state, "REQUEUED") == 0 ||
	    strcmp(j->final_state, "UNSTARTED") == 0 || (j->requeue &&
	    (strcmp(j->final_state, "NODE_FAIL") == 0 ||
	    strcmp(j->final_state, "PREEMPTED") == 0));
}

/* Replaces a job that went back to PENDING with a fresh one, as submitted. */
static void
engine_requeue(struct engine *e, struct job *j)
{
	struct engine_array arr = { j->array_id, j->array_index, j->array_limit };
	char status[PATH_MAX];

	log_info("job %lld %s: %s", (long long)j->id, j->final_state, j->final_reason);
	/* now: the job may start again in this pass, with a status file of that name */
	engine_status_path(e, j->id, status, sizeof(status));
	runner_recycle(status, &e->spares);
	if (engine_add(e, j->id, j->uid, j->gid, j->user, j->ngpus, j->mem, j->priority,
	    j->submitted_at, j->time_limit, j->after, j->nafter, j->array_id ? &arr : NULL) == -1)
		log_warnx("job %lld: out of memory; it runs after a restart of nvqd",
		    (long long)j->id);
	else {
		/* before j gives its count back: an array's share stays counted */
		if (j->stored > 0 || j->stored_key != 0)
			engine_charge(e, e->jobs, j->stored, j->stored_key, 0);
		e->jobs->requeue = j->requeue;
		e->jobs->preempt_signal = j->preempt_signal;
		e->jobs->warn_sig = j->warn_sig;
		e->jobs->warn_time = j->warn_time;
		e->jobs->warn_batch = j->warn_batch;
		engine_qos(e, e->jobs, j->qos);
		engine_lc(e, e->jobs, j->lc);
		e->jobs->placed = j->placed;
		e->jobs->allowed = j->allowed;
		e->jobs->notify = j->notify;
		e->jobs->cpus = j->cpus;
		e->jobs->host_mem = j->host_mem;
		e->jobs->mem_per_cpu = j->mem_per_cpu;
	}
	engine_drop(e, j);
}

/* A job's end as engine_finish recorded it, kept until it is committed. */
struct engine_end {
	int64_t		id;
	int		kind;		/* ENGINE_END_* */
	char		state[16], reason[256];
	struct store_end end;		/* its strings and peaks point into this */
	const char	*uuids[SCHED_MAX_GPUS];
	int64_t		peaks[SCHED_MAX_GPUS];
};
enum { ENGINE_END_END, ENGINE_END_REQUEUE, ENGINE_END_UNSTART };

static int
engine_end_kind(const struct job *j)
{
	if (strcmp(j->final_state, "UNSTARTED") == 0)
		return ENGINE_END_UNSTART;
	return engine_requeued(j) ? ENGINE_END_REQUEUE : ENGINE_END_END;
}

static int
engine_record_end(struct engine *e, int kind, int64_t id, const struct store_end *end)
{
	if (kind == ENGINE_END_UNSTART)
		return store_job_unstart(e->store, id, end->now);
	if (kind == ENGINE_END_REQUEUE)
		return store_job_requeue(e->store, id, end);
	return store_job_end(e->store, id, end);
}

/* Keeps a copy of j's end (e->ends, grown by engine_finish). */
static void
engine_end_keep(struct engine *e, const struct job *j, const struct store_end *end)
{
	struct engine_end *c = &e->ends[e->nends++];
	int i;

	c->id = j->id;
	c->kind = engine_end_kind(j);
	c->end = *end;
	snprintf(c->state, sizeof(c->state), "%s", end->state);
	c->end.state = c->state;
	if (end->reason != NULL) {
		snprintf(c->reason, sizeof(c->reason), "%s", end->reason);
		c->end.reason = c->reason;
	}
	for (i = 0; i < end->npeaks && i < SCHED_MAX_GPUS; i++) {
		c->uuids[i] = end->peak_uuids[i];	/* e->gpus' own: they stay */
		c->peaks[i] = end->peaks[i];
	}
	c->end.npeaks = i;
	c->end.peak_uuids = c->uuids;
	c->end.peaks = c->peaks;
}

/* Takes id off the status files the pass makes spares: a restart reads its record. */
static void
engine_recycle_forget(struct engine *e, int64_t id)
{
	int i;

	for (i = 0; i < e->nrecycle; i++)
		if (e->recycle[i] == id) {
			e->recycle[i] = e->recycle[--e->nrecycle];
			return;
		}
}

/*
 * Commits the ends engine_finish left in an open transaction (with the
 * starts recorded after them, if any).  If that fails, everything in it
 * is rolled back, and each end is recorded again on its own; an end that
 * cannot be recorded at all keeps its status file, which a restart of
 * nvqd reads.  0, or -1 if the transaction failed.
 */
int
engine_ends_close(struct engine *e)
{
	int i, ok;

	if (!e->ends_open)
		return 0;
	e->ends_open = 0;
	ok = store_tx_commit(e->store) == 0;
	if (ok)
		e->unsynced = 0;
	else
		log_warnx("the ends of %d jobs cannot be committed (%s); recording them one by one",
		    e->nends, store_errmsg(e->store));
	for (i = 0; i < e->nends && !ok; i++) {
		if (engine_record_end(e, e->ends[i].kind, e->ends[i].id, &e->ends[i].end) == 0)
			continue;
		log_warnx("job %lld: cannot record its end (%s); it is read from its status "
		    "file when nvqd restarts", (long long)e->ends[i].id, e->ends[i].state);
		engine_recycle_forget(e, e->ends[i].id);
	}
	e->nends = 0;
	return ok ? 0 : -1;
}

/* Room in e->ends for n more.  0, or -1. */
static int
engine_ends_grow(struct engine *e, int n)
{
	struct engine_end *ne;
	int cap = e->cap_ends;

	while (cap < e->nends + n)
		cap = cap ? cap * 2 : 16;
	if (cap == e->cap_ends)
		return 0;
	if ((ne = realloc(e->ends, (size_t)cap * sizeof(*ne))) == NULL)
		return -1;
	e->ends = ne;
	e->cap_ends = cap;
	return 0;
}

/*
 * Records the end of every job that exited since the last pass, in one
 * transaction, and drops the jobs.  The transaction stays open
 * (e->ends_open) for the starts the pass decides next: one commit for a
 * job's end and the next one's start (engine_ends_close commits it before
 * anything else the pass writes).  If a row cannot be recorded, or no
 * copy of the ends can be kept, the ends are committed at once, each on
 * its own if the group fails, so that one bad row cannot hold the others
 * back; a job whose end cannot be recorded at all then keeps its GPUs and
 * is tried again in a second (a restart reconciles it too).
 */
void
engine_finish(struct engine *e)
{
	struct store_end end;
	struct job *j, *next;
	int n = 0, ok, left = 0, hold;

	for (j = e->held; j != NULL; j = j->lnext)
		n += j->exited;
	if (n == 0)
		return;
	hold = engine_ends_grow(e, n) == 0;
	ok = store_tx_begin(e->store) == 0;
	for (j = e->held; j != NULL && ok; j = j->lnext) {
		if (!j->exited)
			continue;
		engine_final(e, j, &end);
		ok = engine_record_end(e, engine_end_kind(j), j->id, &end) == 0;
		if (ok && hold)
			engine_end_keep(e, j, &end);
	}
	if (ok && hold) {
		e->ends_open = 1;
		e->ends_mark = store_begins(e->store);
	} else {
		e->nends = 0;
		/* a failed row doomed the transaction: this rolls it back */
		ok = store_tx_commit(e->store) == 0 && ok;
	}
	/* each on its own, in its own transaction, if the batch failed */
	for (j = e->held; j != NULL; j = j->lnext) {
		if (!j->exited)
			continue;
		j->recorded = ok;
		if (!ok) {
			engine_final(e, j, &end);
			if (engine_record_end(e, engine_end_kind(j), j->id, &end) == -1) {
				log_warnx("job %lld: cannot record its end; trying again",
				    (long long)j->id);
				left++;
				continue;
			}
			j->recorded = 1;
		}
	}
	for (j = e->held; j != NULL; j = next) {
		next = j->lnext;
		if (!j->recorded)
			continue;
		if (engine_requeued(j))
			engine_requeue(e, j);
		else
			engine_ended(e, j);
	}
	/*
	 * Something the drops set off wrote (GPU control recording another
	 * job's switch): committed now, so that a failure of the starts'
	 * commit cannot take it back.
	 */
	if (e->ends_open && store_begins(e->store) != e->ends_mark)
		engine_ends_close(e);
	if (left > 0)
		e->retry = 1;
}

int
engine_cancel(struct engine *e, struct job *j, const char *by)
{
	struct store_end end = { "CANCELLED", engine_now(), -1, 0, -1, -1, NULL, -1, 0, NULL, NULL, 0, { 0, 0, 0 }, 0 };
	char why[128];

	snprintf(why, sizeof(why), "cancelled by %s", by);
	/* a cancel while it stops to be requeued: it ends CANCELLED instead */
	if (j->state != JOB_PENDING && strcmp(j->ending, "REQUEUED") == 0) {
		if (store_job_ending(e->store, j->id, "CANCELLED", why, engine_now()) == -1)
			return -1;
		snprintf(j->ending, sizeof(j->ending), "CANCELLED");
		snprintf(j->end_reason, sizeof(j->end_reason), "%s", why);
		return 0;
	}
	if (j->state != JOB_PENDING)
		return engine_stop(e, j, "CANCELLED", why);
	end.reason = why;
	if (store_job_end(e->store, j->id, &end) == -1)
		return -1;
	log_info("job %lld %s", (long long)j->id, why);
	engine_forget_env(e, j);
	engine_notice(e, j);
	engine_drop(e, j);
	engine_kick(e);
	return 0;
}

int
engine_cancel_many(struct engine *e, struct job *const *js, int n, const char *by,
    int64_t *failed)
{
	struct store_end end = { "CANCELLED", engine_now(), -1, 0, -1, -1, NULL, -1, 0, NULL, NULL, 0, { 0, 0, 0 }, 0 };
	char why[128];
	int i, k = 0, grouped = 0, npending = 0;
	int64_t *ids;

	snprintf(why, sizeof(why), "cancelled by %s", by);
	end.reason = why;
	/*
	 * the pending ones' ends in one commit, which on a full disk takes the
	 * reserve (it frees room: their environments go); each on its own if
	 * it fails
	 */
	for (i = 0; i < n; i++)
		npending += js[i]->state == JOB_PENDING;
	if (npending > 1 && (ids = malloc(sizeof(*ids) * (size_t)npending)) != NULL) {
		for (i = 0, k = 0; i < n; i++)
			if (js[i]->state == JOB_PENDING)
				ids[k++] = js[i]->id;
		/* and their environments in one more, which may take the reserve too */
		if ((grouped = store_jobs_end(e->store, ids, k, &end) == 0) &&
		    store_envs_delete(e->store, ids, k) == -1)
			log_warnx("cannot delete the environments of %d cancelled jobs; they go "
			    "when nvqd restarts", k);
		free(ids);
		k = 0;
	}
	for (i = 0; i < n; i++) {
		struct job *j = js[i];

		if (!grouped || j->state != JOB_PENDING) {
			if (engine_cancel(e, j, by) == -1)
				failed[k++] = j->id;
			continue;
		}
		log_info("job %lld %s", (long long)j->id, why);
		engine_notice(e, j);
		engine_drop(e, j);
	}
	engine_kick(e);
	return k;
}
