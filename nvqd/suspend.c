/*
 * suspend.c: suspending and resuming jobs (see suspend.h).
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "hooks.h"
#include "log.h"
#include "proc.h"
#include "runner.h"
#include "store.h"
#include "suspend.h"

#define SUSPEND_PIN	60.0	/* seconds a job that failed to switch is left alone */
#define SUSPEND_TURN_MIN 5.0	/* the shortest automatic turn */
/*
 * Before a switch is measured on a GPU, a suspend plus a resume of m bytes
 * is guessed from those measured on an H100 (docs/gpu-results.md): the
 * driver's checkpoint alone about 2 GB/s each way; with the hook's offload
 * about 8 GB/s for the round trip, plus 2 s of the driver's for the rest.
 */
#define SUSPEND_RATE	2e9
#define OFFLOAD_RATE	8e9
#define OFFLOAD_FIXED	2.0
#define CKPT_ARGS	(8 + 256)	/* nvq-ckpt's options, verb and pids */
#define SUSPEND_MAX_PROCS 128	/* processes of a job found without the hook */

static const char *const susp_whys[] = { "user", "preempt", "timeslice", "restart" };

struct susp_op {
	uv_process_t	proc;
	struct engine	*e;
	int64_t		id;
	int		resume;
	char		out[PATH_MAX];
};

/* Host memory free for what a suspend moves out, from /proc/meminfo; -1 if unknown. */
static int64_t
susp_host_available(void)
{
	char line[256];
	long long kb;
	FILE *fp = fopen("/proc/meminfo", "r");
	int64_t r = -1;

	if (fp == NULL)
		return -1;
	while (fgets(line, sizeof(line), fp) != NULL)
		if (sscanf(line, "MemAvailable: %lld kB", &kb) == 1) {
			r = (int64_t)kb * 1024;
			break;
		}
	fclose(fp);
	return r;
}

/*
 * What the job holds on its GPUs now; -1 if unknown.  Per GPU, NVML's figure
 * where NVML sees its processes there (a measure); else its hooks' reports,
 * claims that hooks.c counts as at most what the job may hold there.
 */
static int64_t
susp_bytes(struct engine *e, const struct job *j)
{
	int nvml = !e->gpus.is_virtual && e->gpus.lib != NULL && j->gpu_used != NULL;
	uint64_t used = 0;
	int g;

	for (g = 0; g < e->gpus.n; g++) {
		if (!(j->gpumask & (1ULL << g)))
			continue;
		if (nvml && j->gpu_used[g] > 0)
			used += j->gpu_used[g];
		else if (j->hook_used != NULL)
			used += j->hook_used[g];
	}
	return j->nsess > 0 || used > 0 ? (int64_t)used : -1;
}

/*
 * Whether pid is a process of the job now, and its start time then: read
 * before and after the check, the same both times, so that the check was
 * of the process that start time names.  0, or -1 if it is not the job's.
 */
static int
susp_verify(const struct job *j, pid_t pid, int64_t *start)
{
	*start = proc_start_time(pid);
	if (*start < 0 || !hooks_member(j, pid) || proc_start_time(pid) != *start)
		return -1;
	return 0;
}

int
suspend_pinned(const struct job *j, double now)
{
	return j->pinned_until > now || (j->nsess == 0 && j->relink_until > now);
}

double
suspend_turn(struct engine *e, int g)
{
	double cost = e->switch_cost[g], m = 0;
	const struct job *j;

	if (e->cfg.turn > 0)
		return e->cfg.turn;
	if (cost <= 0) {
		/* nothing measured yet: guess from the largest job there */
		for (j = e->jobs; j != NULL; j = j->next)
			if ((j->gpumask & (1ULL << g)) && (double)j->mem > m)
				m = (double)j->mem;
		cost = e->cfg.offload ? OFFLOAD_FIXED + m / OFFLOAD_RATE : 2 * m / SUSPEND_RATE;
	}
	return sched_quantum(cost, e->cfg.switch_overhead, SUSPEND_TURN_MIN, 0);
}

static void
susp_close_cb(uv_handle_t *h)
{
	free(h->data);
}

/* Reads what nvq-ckpt wrote: 0 if it said ok; its error line into err; driver seconds. */
static int
susp_read(const char *path, double *driver, char *err, size_t errlen)
{
	char line[512], step[32];
	double secs;
	int pid, code, ok = -1;
	FILE *fp = fopen(path, "r");

	*driver = 0;
	snprintf(err, errlen, "nvq-ckpt reported nothing");
	if (fp == NULL)
		return -1;
	while (fgets(line, sizeof(line), fp) != NULL) {
		line[strcspn(line, "\n")] = '\0';
		if (sscanf(line, "skip %d %d", &pid, &code) == 2 && code == 0)
			log_warnx("nvq-ckpt: %s: left out", line);	/* not the job's now */
		else if (strncmp(line, "skip ", 5) == 0)
			log_info("nvq-ckpt: %s (not a CUDA process: left running)", line);
		else if (strncmp(line, "error ", 6) == 0) {
			snprintf(err, errlen, "%s", line + 6);
			ok = -1;
		} else if (sscanf(line, "ok %lf", &secs) == 1)
			ok = 0;
		else if (sscanf(line, "%31s %d %lf", step, &pid, &secs) == 3)
			*driver += secs;
	}
	fclose(fp);
	return ok;
}

static void susp_exit_cb(uv_process_t *, int64_t, int);

/* Asks the job's hooks to move their allocations out or back (offload). */
static void
susp_move(struct engine *e, struct job *j, int out)
{
	j->susp = out ? SUSP_MOVE_OUT : SUSP_MOVE_IN;
	/* at 1 GB/s, the pageable rate, beyond the time to answer at all */
	j->move_until = engine_now() + (double)e->cfg.revoke_timeout +
	    (j->ckpt_bytes > 0 ? (double)j->ckpt_bytes / 1e9 : 0);
	if (hooks_move(e, j, out) == 0)
		suspend_moved(e, j);
	else
		log_debug("job %lld: its hooks move its memory %s", (long long)j->id,
		    out ? "out" : "back");
}

/*
 * j->ckpt_pids for nvq-ckpt, each [?]PID@START.  A PID without its start
 * time (recorded by an nvqd before start times were) is given the one of
 * the process that has it now if that is the job's, and left out if not.
 * Returns a string to free, or NULL.
 */
static char *
susp_ckpt_list(const struct job *j)
{
	size_t len = strlen(j->ckpt_pids), n = 0;
	char *in = strdup(j->ckpt_pids), *out = malloc(2 * len + 64), *tok, *save, *end;
	int64_t start;
	long v;
	int opt;

	if (in == NULL || out == NULL) {
		free(in);
		free(out);
		return NULL;
	}
	out[0] = '\0';
	for (tok = strtok_r(in, ",", &save); tok != NULL; tok = strtok_r(NULL, ",", &save)) {
		if (strchr(tok, '@') != NULL) {
			n += (size_t)snprintf(out + n, 2 * len + 64 - n, "%s%s", n ? "," : "", tok);
			continue;
		}
		opt = tok[0] == '?';
		v = strtol(tok + opt, &end, 10);
		if (*end != '\0' || v <= 0 || v > 0x3fffffff || susp_verify(j, (pid_t)v, &start) == -1) {
			log_warnx("job %lld: process %s of its last switch is no longer the job's: "
			    "left out", (long long)j->id, tok);
			continue;
		}
		n += (size_t)snprintf(out + n, 2 * len + 64 - n, "%s%s%ld@%lld", n ? "," : "",
		    opt ? "?" : "", v, (long long)start);
	}
	free(in);
	return out;
}

/* Runs nvq-ckpt VERB on the job's pids; its end comes to susp_exit_cb. */
static int
susp_spawn(struct engine *e, struct job *j, int resume, char *err, size_t errlen)
{
	char *args[CKPT_ARGS], timeout[32], parent[24], *pids = NULL, *tok, *save;
	uv_process_options_t o;
	uv_stdio_container_t io[3];
	struct susp_op *op;
	int n = 0, fd, r;

	if ((op = calloc(1, sizeof(*op))) == NULL || (pids = susp_ckpt_list(j)) == NULL) {
		free(op);
		snprintf(err, errlen, "out of memory");
		return -1;
	}
	op->e = e;
	op->id = j->id;
	op->resume = resume;
	snprintf(op->out, sizeof(op->out), "%s/.status/%lld.ckpt", e->cfg.spool,
	    (long long)j->id);
	snprintf(timeout, sizeof(timeout), "%lld", (long long)e->cfg.revoke_timeout * 1000);
	args[n++] = e->ckpt;
	args[n++] = "-l";
	args[n++] = e->cfg.cuda_library;
	args[n++] = "-t";
	args[n++] = timeout;
	snprintf(parent, sizeof(parent), "%d", (int)getpid());
	args[n++] = "-d";
	args[n++] = parent;
	args[n++] = resume ? "resume" : "suspend";
	for (tok = strtok_r(pids, ",", &save); tok && n < CKPT_ARGS - 1;
	    tok = strtok_r(NULL, ",", &save))
		args[n++] = tok;
	args[n] = NULL;
	if ((fd = open(op->out, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600)) == -1) {
		snprintf(err, errlen, "%s: %s", op->out, strerror(errno));
		free(pids);
		free(op);
		return -1;
	}
	memset(&o, 0, sizeof(o));
	memset(io, 0, sizeof(io));
	io[0].flags = UV_IGNORE;
	io[1].flags = UV_INHERIT_FD;
	io[1].data.fd = fd;
	io[2].flags = UV_INHERIT_FD;
	io[2].data.fd = 2;
	o.file = e->ckpt;
	o.args = args;
	o.exit_cb = susp_exit_cb;
	o.stdio = io;
	o.stdio_count = 3;
	op->proc.data = op;
	r = uv_spawn(e->loop, &op->proc, &o);
	close(fd);
	free(pids);
	if (r != 0) {
		snprintf(err, errlen, "cannot run %s: %s", e->ckpt, uv_strerror(r));
		uv_close((uv_handle_t *)&op->proc, susp_close_cb);
		return -1;
	}
	log_debug("job %lld: nvq-ckpt %s %s (pid %d)", (long long)j->id,
	    resume ? "resume" : "suspend", j->ckpt_pids, op->proc.pid);
	return 0;
}

static void
susp_switch(struct engine *e, struct job *j, const char *kind, char *uuids, size_t ulen,
    struct store_switch *w)
{
	engine_uuids(e, j->gpumask, uuids, ulen);
	memset(w, 0, sizeof(*w));
	w->kind = kind;
	w->why = susp_whys[j->susp_why];
	w->by_job = j->susp_for;
	w->uuids = uuids;
	w->started_at = j->susp_t0;
	w->ended_at = engine_now();
	w->driver_seconds = -1;
	w->bytes = j->ckpt_bytes;
	w->pids = j->ckpt_pids;
	w->ok = 1;
	w->hook_bytes = j->move_bytes;
	w->hook_seconds = j->move_bytes >= 0 ? j->move_secs : -1;
}

/* The suspend is done: the job holds no GPU memory now. */
static void
susp_suspended(struct engine *e, struct job *j)
{
	char uuids[SCHED_MAX_GPUS * 97], reason[160];
	struct store_switch w;

	susp_switch(e, j, "suspend", uuids, sizeof(uuids), &w);
	w.driver_seconds = j->driver_secs;
	if (j->susp_why == SUSP_USER)
		snprintf(reason, sizeof(reason), "suspended by %s", j->susp_by);
	else if (j->susp_why == SUSP_PREEMPT)
		snprintf(reason, sizeof(reason), "preempted by job %lld", (long long)j->susp_for);
	else
		snprintf(reason, sizeof(reason), "its turn ended; job %lld's began",
		    (long long)j->susp_for);
	if (store_job_suspended(e->store, j->id, j->susp_why == SUSP_USER, reason, &w) == -1)
		log_warnx("job %lld: cannot record its suspend; it is suspended all the same",
		    (long long)j->id);
	j->state = JOB_SUSPENDED;
	j->susp = SUSP_NONE;
	j->suspended_at = w.ended_at;
	j->suspend_hold = j->susp_why == SUSP_USER;
	j->last_suspend = w.ended_at - w.started_at;
	log_info("job %lld SUSPENDED (%s) in %.2fs, %lld bytes moved (%lld by its hooks in "
	    "%.2fs)", (long long)j->id, reason, j->last_suspend, (long long)w.bytes,
	    (long long)(j->move_bytes > 0 ? j->move_bytes : 0), j->move_secs);
	engine_limit(e, j);	/* its time limit waits while it does */
	engine_kick(e);
}

/* The resume is done: the job runs again on its GPUs. */
static void
susp_resumed(struct engine *e, struct job *j)
{
	char uuids[SCHED_MAX_GPUS * 97];
	struct store_switch w;
	double cost;
	int g;

	susp_switch(e, j, "resume", uuids, sizeof(uuids), &w);
	w.driver_seconds = j->driver_secs;
	if (j->state == JOB_RUNNING) {
		/* after a restart: its processes were put back to running */
		w.why = "restart";
		store_job_ckpt_pids(e->store, j->id, NULL);
		store_switch_record(e->store, j->id, 0, &w);
	} else {
		if (store_job_resumed(e->store, j->id, &w) == -1)
			log_warnx("job %lld: cannot record its resume; it runs all the same",
			    (long long)j->id);
		if (j->suspended_at > 0 && w.ended_at > j->suspended_at)
			j->susp_total += w.ended_at - j->suspended_at;
	}
	cost = j->last_suspend + (w.ended_at - w.started_at);
	for (g = 0; g < e->gpus.n; g++)
		if (j->gpumask & (1ULL << g))
			e->switch_cost[g] = e->switch_cost[g] > 0 ?
			    (e->switch_cost[g] + cost) / 2 : cost;
	j->state = JOB_RUNNING;
	j->susp = SUSP_NONE;
	j->slice_start = w.ended_at;
	j->suspend_hold = 0;
	free(j->ckpt_pids);
	j->ckpt_pids = NULL;
	j->suspended_at = 0;
	log_info("job %lld RUNNING again: resumed in %.2fs", (long long)j->id,
	    w.ended_at - w.started_at);
	engine_limit(e, j);
	hooks_update(e);
	engine_kick(e);
}

/* A switch failed: the job stays as it was; it is not asked again for a while. */
static void
susp_failed(struct engine *e, struct job *j, const char *why)
{
	char uuids[SCHED_MAX_GPUS * 97];
	struct store_switch w;
	int resume = j->susp == SUSP_RESTORE || j->susp == SUSP_MOVE_IN;

	susp_switch(e, j, resume ? "resume" : "suspend", uuids, sizeof(uuids), &w);
	w.driver_seconds = j->driver_secs;
	w.ok = 0;
	w.error = why;
	snprintf(j->susp_error, sizeof(j->susp_error), "%s", why);
	j->pinned_until = w.ended_at + SUSPEND_PIN;
	j->susp = SUSP_NONE;
	if (resume) {
		/* still suspended: it waits for nvq resume, which tries again */
		j->suspend_hold = j->state == JOB_SUSPENDED;
		log_warnx("job %lld: cannot resume it: %s; it stays suspended (nvq resume %lld "
		    "tries again)", (long long)j->id, why, (long long)j->id);
	} else
		log_warnx("job %lld: cannot suspend it: %s; it runs on", (long long)j->id, why);
	if (store_switch_record(e->store, j->id, j->suspend_hold, &w) == -1)
		log_warnx("job %lld: cannot record the failed %s", (long long)j->id, w.kind);
	if (!resume) {
		/* w.pids pointed here: freed once recorded */
		free(j->ckpt_pids);
		j->ckpt_pids = NULL;
	}
	hooks_update(e);
	engine_kick(e);
}

static void
susp_exit_cb(uv_process_t *p, int64_t status, int sig)
{
	struct susp_op *op = p->data;
	struct engine *e = op->e;
	struct job *j = engine_find(e, op->id);
	char err[300];
	double driver;
	int ok = susp_read(op->out, &driver, err, sizeof(err));

	unlink(op->out);
	uv_close((uv_handle_t *)p, susp_close_cb);
	if (ok == 0 && (status != 0 || sig != 0))
		ok = -1;
	if (j == NULL || j->exited || j->susp == SUSP_NONE) {
		log_info("job %lld: nvq-ckpt %s ended after the job (%s)", (long long)op->id,
		    op->resume ? "resume" : "suspend", ok == 0 ? "ok" : err);
		return;
	}
	j->driver_secs = driver;
	if (ok != 0)
		susp_failed(e, j, err);
	else if (op->resume && e->cfg.offload && j->nsess > 0)
		susp_move(e, j, 0);	/* then its hooks bring their allocations back */
	else if (op->resume)
		susp_resumed(e, j);
	else
		susp_suspended(e, j);
}

/*
 * The processes to checkpoint, each PID@START so that nvq-ckpt acts only on
 * the process that had the pid now: the job's hooked ones, then, written
 * ?PID@START, those that map libcuda without the hook (the job cleared
 * LD_PRELOAD, or a process that has not called CUDA yet), checked again to
 * be the job's: nvq-ckpt leaves them out if the driver finds no CUDA state
 * in them.
 */
static void
susp_pids(struct engine *e, const struct job *j, char *buf, size_t len)
{
	pid_t procs[SUSPEND_MAX_PROCS];
	int k, count = runner_cuda_procs(j->pid, j->cgroup, procs, SUSPEND_MAX_PROCS);
	int64_t start;
	size_t n;

	hooks_pids(e, j, 1, buf, len);
	for (k = 0; k < count; k++) {
		n = strlen(buf);
		/* not hooked: maybe not CUDA at all */
		if (!hooks_linked(e, j, procs[k]) && n + 40 < len &&
		    susp_verify(j, procs[k], &start) == 0)
			snprintf(buf + n, len - n, "%s?%d@%lld", n ? "," : "", (int)procs[k],
			    (long long)start);
	}
}

int
suspend_job(struct engine *e, struct job *j, int why, int64_t for_job, char *err,
    size_t errlen)
{
	char pids[4096];	/* HOOKS_MAX_PIDS and more, each PID@START */
	int64_t bytes, avail;

	if (j->state != JOB_RUNNING) {
		snprintf(err, errlen, "job %lld is %s; only a running job can be suspended",
		    (long long)j->id, j->state == JOB_SUSPENDED ? "suspended already" : "pending");
		return -1;
	}
	if (j->susp != SUSP_NONE) {
		snprintf(err, errlen, "job %lld is being %s", (long long)j->id,
		    j->susp == SUSP_RESTORE ? "resumed" : "suspended");
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
	if (j->nsess == 0 && j->relink_until > engine_now()) {
		snprintf(err, errlen, "job %lld's processes have not linked to nvqd again since "
		    "it restarted; try again in a few seconds", (long long)j->id);
		return -1;
	}
	susp_pids(e, j, pids, sizeof(pids));
	if (pids[0] != '\0' && e->ckpt[0] == '\0') {
		snprintf(err, errlen, "nvq-ckpt is not installed beside nvqd");
		return -1;
	}
	bytes = susp_bytes(e, j);
	avail = susp_host_available();
	if (bytes > 0 && avail >= 0 && bytes > avail) {
		snprintf(err, errlen, "job %lld holds %.1f GiB of GPU memory and the host has "
		    "%.1f GiB available to take it", (long long)j->id, bytes / 1073741824.0,
		    avail / 1073741824.0);
		return -1;
	}
	if ((j->ckpt_pids = strdup(pids)) == NULL) {
		snprintf(err, errlen, "out of memory");
		return -1;
	}
	/* recorded first: an nvqd restarted in between puts them back to running */
	if (pids[0] != '\0' && store_job_ckpt_pids(e->store, j->id, pids) == -1) {
		snprintf(err, errlen, "cannot record the suspend: %s", store_errmsg(e->store));
		free(j->ckpt_pids);
		j->ckpt_pids = NULL;
		return -1;
	}
	j->ckpt_bytes = bytes;
	j->susp = SUSP_DRAINING;
	j->susp_why = why;
	j->susp_for = for_job;
	j->susp_t0 = engine_now();
	j->susp_error[0] = '\0';
	j->move_bytes = -1;
	j->driver_secs = 0;
	if (for_job > 0)
		log_info("job %lld: suspending (%s, for job %lld), processes %s", (long long)j->id,
		    susp_whys[why], (long long)for_job, pids[0] ? pids : "none");
	else
		log_info("job %lld: suspending (%s), processes %s", (long long)j->id,
		    susp_whys[why], pids[0] ? pids : "none");
	hooks_update(e);	/* takes its locks back; suspend_drained goes on */
	return 0;
}

/* The driver's checkpoint of what the hooks did not move. */
static void
susp_checkpoint(struct engine *e, struct job *j)
{
	char err[256];

	j->susp = SUSP_CHECKPOINT;
	if (j->ckpt_pids[0] == '\0') {
		susp_suspended(e, j);	/* no CUDA process: nothing to move */
		return;
	}
	if (susp_spawn(e, j, 0, err, sizeof(err)) == -1)
		susp_failed(e, j, err);
}

double
suspend_drained(struct engine *e)
{
	struct job *j;
	double now = engine_now(), next = 0;

	for (j = e->jobs; j != NULL; j = j->next) {
		if ((j->susp == SUSP_MOVE_OUT || j->susp == SUSP_MOVE_IN) && j->move_until > 0) {
			if (now >= j->move_until) {
				log_warnx("job %lld: its hooks did not answer the move in time; "
				    "going on without them", (long long)j->id);
				snprintf(j->move_error, sizeof(j->move_error), "no answer in %.0fs",
				    j->move_until - j->susp_t0);
				suspend_moved(e, j);
			} else if (next == 0 || j->move_until < next)
				next = j->move_until;
			continue;
		}
		if (j->susp != SUSP_DRAINING || j->lock_granted || j->revoke_at != 0)
			continue;
		if (j->lock_stopped)
			hooks_continue(e, j);	/* the driver's lock needs it running */
		if (e->cfg.offload && j->nsess > 0)
			susp_move(e, j, 1);
		else
			susp_checkpoint(e, j);
		/* the move's deadline, for hooks_update's timer: its hooks may never answer */
		if (j->move_until > 0 && (next == 0 || j->move_until < next))
			next = j->move_until;
	}
	return next;
}

void
suspend_moved(struct engine *e, struct job *j)
{
	char err[400];

	j->move_until = 0;
	if (j->exited) {
		j->susp = SUSP_NONE;	/* it ended meanwhile: nothing to go on with */
		return;
	}
	if (j->susp == SUSP_MOVE_OUT) {
		if (j->move_error[0] != '\0')
			log_warnx("job %lld: its hooks moved %lld bytes out, not %lld: %s; the "
			    "driver's checkpoint takes the rest", (long long)j->id,
			    (long long)j->move_bytes, (long long)j->move_left, j->move_error);
		susp_checkpoint(e, j);
	} else if (j->susp == SUSP_MOVE_IN) {
		if (j->move_left > 0) {
			snprintf(err, sizeof(err), "bringing its memory back: %s (%lld bytes "
			    "still in host memory)", j->move_error, (long long)j->move_left);
			susp_failed(e, j, err);
		} else {
			if (j->move_error[0] != '\0')
				log_warnx("job %lld: %s", (long long)j->id, j->move_error);
			susp_resumed(e, j);	/* a hook that did not answer brings it back itself */
		}
	}
}

void
suspend_resume(struct engine *e, struct job *j)
{
	char err[256];

	if (j->state != JOB_SUSPENDED || j->susp != SUSP_NONE)
		return;
	j->susp = SUSP_RESTORE;
	j->susp_t0 = engine_now();
	j->move_bytes = -1;
	j->driver_secs = 0;
	if (j->ckpt_pids == NULL || j->ckpt_pids[0] == '\0') {
		if (e->cfg.offload && j->nsess > 0)
			susp_move(e, j, 0);
		else
			susp_resumed(e, j);
		return;
	}
	log_info("job %lld: resuming, processes %s", (long long)j->id, j->ckpt_pids);
	if (susp_spawn(e, j, 1, err, sizeof(err)) == -1)
		susp_failed(e, j, err);
}

void
suspend_recover(struct engine *e, struct job *j)
{
	char err[256];

	if (j->state != JOB_RUNNING || j->ckpt_pids == NULL || j->ckpt_pids[0] == '\0')
		return;
	log_info("job %lld: nvqd stopped while it was being suspended or resumed; "
	    "putting processes %s back to running", (long long)j->id, j->ckpt_pids);
	j->susp = SUSP_RESTORE;
	j->susp_why = SUSP_RESTART;
	j->susp_t0 = engine_now();
	j->ckpt_bytes = -1;
	j->move_bytes = -1;
	j->driver_secs = 0;
	if (susp_spawn(e, j, 1, err, sizeof(err)) == -1)
		susp_failed(e, j, err);
}

int
suspend_release(struct engine *e, struct job *j, const char *by, char *err, size_t errlen)
{
	char why[128];

	if (j->state != JOB_SUSPENDED || j->susp == SUSP_RESTORE) {
		snprintf(err, errlen, "job %lld is %s", (long long)j->id,
		    j->susp == SUSP_RESTORE ? "being resumed" : j->susp != SUSP_NONE ?
		    "being suspended; resume it once it is suspended" :
		    j->state == JOB_RUNNING ? "not suspended" : "pending");
		return -1;
	}
	if (!j->suspend_hold) {
		snprintf(err, errlen, "job %lld resumes on its own once its memory fits",
		    (long long)j->id);
		return -1;
	}
	snprintf(why, sizeof(why), "resume asked by %s", by);
	if (store_job_unhold(e->store, j->id, engine_now(), why) == -1) {
		snprintf(err, errlen, "cannot record the resume: %s", store_errmsg(e->store));
		return -1;
	}
	j->suspend_hold = 0;
	j->pinned_until = 0;
	log_info("job %lld: %s", (long long)j->id, why);
	engine_kick(e);
	return 0;
}
