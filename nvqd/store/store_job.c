/*
 * store_job.c: a job's rows through its life (see store.h): the submit's
 * insert with its environment, its start and pid, its end, requeue, hold,
 * suspend and resume with the switches recorded, a change by nvq modify;
 * and the GPUs drained.  Each change is one transaction (store_tx in
 * store.c); an end or a requeue is recorded even on a full disk.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <sqlite3.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/random.h>
#include <sys/statvfs.h>
#include <unistd.h>

#include "checkpoint.h"
#include "log.h"
#include "parse.h"
#include "store_int.h"

/*
 * An output path with %j (the job's id), %A (its array's id), %a (its
 * index in the array), %x (the job's name), %u (its user) and %% (a %)
 * put in, as sbatch does; other % stay as they are.  Outside an array %A
 * is the job's id and %a is 0.
 */
static void
store_path(char *out, size_t len, const char *tmpl, int64_t id, int64_t array_id,
    int64_t index, const struct store_job_new *j)
{
	size_t o = 0;
	const char *p;
	int n;

	for (p = tmpl; *p != '\0' && o + 1 < len; p++) {
		n = 0;
		if (*p == '%' && p[1] == 'j')
			n = snprintf(out + o, len - o, "%lld", (long long)id);
		else if (*p == '%' && p[1] == 'A')
			n = snprintf(out + o, len - o, "%lld", (long long)(array_id ? array_id : id));
		else if (*p == '%' && p[1] == 'a')
			n = snprintf(out + o, len - o, "%lld", (long long)(array_id ? index : 0));
		else if (*p == '%' && p[1] == '%')
			n = snprintf(out + o, len - o, "%%");
		else if (*p == '%' && p[1] == 'x')
			n = snprintf(out + o, len - o, "%s", j->name);
		else if (*p == '%' && p[1] == 'u')
			n = snprintf(out + o, len - o, "%s", j->user);
		else {
			out[o++] = *p;
			continue;
		}
		p++;
		o += n > 0 && (size_t)n < len - o ? (size_t)n : 0;
	}
	out[o < len ? o : len - 1] = '\0';
}

/* Whether j's command is its array's, stored once in its first task's row. */
static int
store_cmd_shared(const struct store_job_new *j)
{
	return j->array_task && j->array_back > 0 && j->cmd_shared;
}

/*
 * The bytes of the database's files that storing jobs (n of them) takes:
 * what each row holds, and its environment where it is not an array's
 * second or later task's (those share their first's).  An estimate for
 * store_headroom, not a measure.
 */
static uint64_t
store_jobs_bytes(const struct store_job_new *const *jobs, int n)
{
	const struct store_job_new *j;
	uint64_t b = 0;
	int i;

	for (i = 0; i < n; i++) {
		j = jobs[i];
		b += STORE_ROW_BYTES + strlen(j->user) + strlen(j->name) + strlen(j->cwd) +
		    (j->after ? strlen(j->after) : 0) + (j->groups ? strlen(j->groups) : 0) +
		    (j->stdout_path ? strlen(j->stdout_path) : 0) +
		    (j->stderr_path ? strlen(j->stderr_path) : 0) +
		    (j->gpus_allow ? strlen(j->gpus_allow) : 0) +
		    (j->gpus_deny ? strlen(j->gpus_deny) : 0) +
		    (j->notify ? strlen(j->notify) : 0) + (j->mail_user ? strlen(j->mail_user) : 0);
		if (!store_cmd_shared(j))
			b += strlen(j->command) + (uint64_t)j->argv_len;
		if (!j->array_task || j->array_back == 0)
			b += (uint64_t)j->env_len;
	}
	return b;
}

/*
 * Whether the database's file system keeps room for ends and cancels
 * after writing need bytes (twice: into the write-ahead log, then into
 * the database file at its checkpoint): submits must never spend it.
 * One statvfs; 1, or 0 with the reason as the last error.
 */
int
store_headroom(struct store *st, uint64_t need)
{
	char dir[PATH_MAX + 16], *slash, fr[32], nd[32], kp[32];
	struct statvfs sv;
	uint64_t avail, keep = (uint64_t)st->reserve_size;

	if (keep == 0)
		return 1;	/* no reserve can ever be made: nothing to keep */
	snprintf(dir, sizeof(dir), "%s", st->reserve);
	if ((slash = strrchr(dir, '/')) != NULL)
		*slash = '\0';
	if (statvfs(slash != NULL ? dir : ".", &sv) == -1)
		return 1;
	avail = (uint64_t)sv.f_bavail * sv.f_frsize;
	if (avail >= 2 * need + keep)
		return 1;
	fmt_size(avail, fr, sizeof(fr));
	fmt_size(2 * need, nd, sizeof(nd));
	fmt_size(keep, kp, sizeof(kp));
	snprintf(st->lasterr, sizeof(st->lasterr), "the database's disk has %s free: this "
	    "would take about %s of it, and %s stay free for recording ends and cancels",
	    fr, nd, kp);
	st->full = 0;
	return 0;
}

/*
 * Binds and runs the INSERT of job j under id: into jobs (with its first
 * event), or into the private database's copy (copy 1).
 */
static int
store_job_row(struct store *st, const struct store_job_new *j, int64_t id, int copy)
{
	sqlite3_stmt *s;
	char out[PATH_MAX], errp[PATH_MAX];
	int64_t array_id = j->array_task ? id - j->array_back : 0;

	s = store_prepare(st, copy ? "INSERT OR REPLACE INTO private.jobs_copy ("
	    STORE_JOB_COLS ") VALUES (" STORE_JOB_ARGS ")" : "INSERT INTO jobs ("
	    STORE_JOB_COLS ", state) VALUES (" STORE_JOB_ARGS ", 'PENDING')");
	if (s == NULL)
		return -1;
	sqlite3_bind_int64(s, 1, id);
	sqlite3_bind_int64(s, 2, j->uid);
	sqlite3_bind_int64(s, 3, j->gid);
	sqlite3_bind_text(s, 4, j->user, -1, SQLITE_STATIC);
	sqlite3_bind_text(s, 5, j->name, -1, SQLITE_STATIC);
	/* an array's tasks but its first: '' and x'', read as the first's (017) */
	sqlite3_bind_text(s, 6, store_cmd_shared(j) ? "" : j->command, -1, SQLITE_STATIC);
	if (store_cmd_shared(j))
		sqlite3_bind_zeroblob(s, 7, 0);
	else
		sqlite3_bind_blob(s, 7, j->argv, j->argv_len, SQLITE_STATIC);
	sqlite3_bind_text(s, 8, j->cwd, -1, SQLITE_STATIC);
	sqlite3_bind_int(s, 9, j->gpus);
	if (j->mem > 0)
		sqlite3_bind_int64(s, 10, (int64_t)j->mem);
	sqlite3_bind_int(s, 11, j->priority);
	if (j->time_limit > 0)
		sqlite3_bind_int64(s, 12, j->time_limit);
	sqlite3_bind_text(s, 13, j->after, -1, SQLITE_STATIC);
	if (j->stdout_path != NULL)
		store_path(out, sizeof(out), j->stdout_path, id, array_id, j->array_index, j);
	else
		snprintf(out, sizeof(out), "%s/%u/%lld.out", j->spool, (unsigned)j->uid,
		    (long long)id);
	if (j->stderr_path != NULL)
		store_path(errp, sizeof(errp), j->stderr_path, id, array_id, j->array_index, j);
	else
		snprintf(errp, sizeof(errp), "%s/%u/%lld.err", j->spool, (unsigned)j->uid,
		    (long long)id);
	sqlite3_bind_text(s, 14, out, -1, SQLITE_STATIC);
	sqlite3_bind_text(s, 15, errp, -1, SQLITE_STATIC);
	sqlite3_bind_double(s, 16, j->now);
	sqlite3_bind_text(s, 17, j->groups, -1, SQLITE_STATIC);
	sqlite3_bind_int(s, 18, j->requeue != 0);
	if (j->preempt_signal > 0)
		sqlite3_bind_int(s, 19, j->preempt_signal);
	if (j->array_task) {
		sqlite3_bind_int64(s, 20, array_id);
		sqlite3_bind_int64(s, 21, j->array_index);
		if (j->array_limit > 0)
			sqlite3_bind_int(s, 22, j->array_limit);
	}
	sqlite3_bind_int(s, 23, j->held != 0);
	sqlite3_bind_text(s, 24, j->gpus_allow, -1, SQLITE_STATIC);
	sqlite3_bind_text(s, 25, j->gpus_deny, -1, SQLITE_STATIC);
	sqlite3_bind_text(s, 26, j->notify, -1, SQLITE_STATIC);
	sqlite3_bind_text(s, 27, j->mail_user, -1, SQLITE_STATIC);
	sqlite3_bind_int(s, 28, j->cpus);
	sqlite3_bind_int64(s, 29, (int64_t)j->host_mem);
	if (j->mem_per_cpu > 0)
		sqlite3_bind_int64(s, 30, (int64_t)j->mem_per_cpu);
	sqlite3_bind_text(s, 31, j->qos, -1, SQLITE_STATIC);
	if (j->lc)
		sqlite3_bind_int(s, 32, 1);
	if (j->array_task && j->array_count > 0) {
		sqlite3_bind_int64(s, 33, j->array_count);
		sqlite3_bind_int64(s, 34, j->array_min);
		sqlite3_bind_int64(s, 35, j->array_max);
		sqlite3_bind_int64(s, 36, j->array_step);
	}
	if (j->warn_sig > 0) {
		sqlite3_bind_int(s, 37, j->warn_sig);
		sqlite3_bind_int(s, 38, j->warn_time);
		sqlite3_bind_int(s, 39, j->warn_batch != 0);
	}
	sqlite3_bind_text(s, 40, j->partition, -1, SQLITE_STATIC);
	sqlite3_bind_text(s, 41, j->account, -1, SQLITE_STATIC);
	if (store_done(st, s) == -1)
		return -1;
	return copy ? 0 : store_event(st, id, j->now, "PENDING", j->held == 2 ?
	    "submitted, held until nvq run attaches" : j->held ?
	    "submitted, held (nvq release starts it)" : "submitted");
}

/*
 * Job id's environment into the private database: its own, or for an
 * array's task a link to its array's, which the first task stores.
 */
static int
store_env_insert(struct store *st, const struct store_job_new *j, int64_t id)
{
	sqlite3_stmt *s;

	if (!j->array_task || j->array_back == 0) {
		s = store_prepare(st, j->array_task ? "INSERT OR REPLACE INTO private.array_env "
		    "(array_id, env) VALUES (?, ?)" : "INSERT OR REPLACE INTO private.job_env "
		    "(job_id, env) VALUES (?, ?)");
		if (s == NULL)
			return -1;
		sqlite3_bind_int64(s, 1, id);
		sqlite3_bind_blob(s, 2, j->env ? j->env : "", j->env_len, SQLITE_STATIC);
		if (store_done(st, s) == -1)
			return -1;
	}
	if (!j->array_task)
		return 0;
	s = store_prepare(st, "INSERT OR REPLACE INTO private.task_env (job_id, array_id) "
	    "VALUES (?, ?)");
	if (s == NULL)
		return -1;
	sqlite3_bind_int64(s, 1, id);
	sqlite3_bind_int64(s, 2, id - j->array_back);
	return store_done(st, s);
}

/*
 * One flush for any number of jobs.  SQLite commits a main and an attached
 * WAL database one after the other, not as one, so the private database
 * goes first, in a commit of its own: the environments, and with sync =
 * full a copy of each job's row; only this commit is synced.  Then the
 * jobs, under the ids the copies have (nvqd is the only writer), in a
 * commit that reaches the disk with the next synced one (a start, an end, a
 * cancel, a checkpoint).  A power cut that takes the jobs' commit leaves
 * their copies, which start-up puts back (store_restore); a crash between
 * the two leaves the same.  Two commits however many jobs: a loop turn's
 * submits share them (submit.c).
 */
int
store_jobs_insert(struct store *st, const struct store_job_new *const *jobs, int n,
    int64_t *ids)
{
	sqlite3_stmt *s;
	int64_t id = -1;
	int i, r;

	if ((s = store_prepare(st, "SELECT max(coalesce((SELECT seq FROM sqlite_sequence "
	    "WHERE name = 'jobs'), 0), coalesce((SELECT max(id) FROM jobs), 0)) + 1")) == NULL)
		return -1;
	if (sqlite3_step(s) == SQLITE_ROW)
		id = sqlite3_column_int64(s, 0);
	store_release(st, s);
	if (!store_room(st)) {
		snprintf(st->lasterr, sizeof(st->lasterr), "database or disk is full (its "
		    "reserve for ends and cancels is in use)");
		return -1;
	}
	if (n > 0 && !store_headroom(st, store_jobs_bytes(jobs, n)))
		return -1;
	if (id <= 0 || n <= 0 || store_begin(st) == -1)
		return -1;
	for (i = 0; i < n; i++) {
		ids[i] = id + i;
		if (store_env_insert(st, jobs[i], ids[i]) == -1 ||
		    (st->sync_full && store_job_row(st, jobs[i], ids[i], 1) == -1))
			goto fail;
	}
	if (store_commit(st) == -1)
		return -1;

	if (st->sync_full && st->depth == 0)
		store_exec(st, "PRAGMA main.synchronous = NORMAL");
	r = store_begin(st);
	for (i = 0; i < n && r == 0; i++)
		r = store_job_row(st, jobs[i], ids[i], 0);
	if (r == -1)
		store_rollback(st);
	else
		r = store_commit(st);
	if (st->sync_full && st->depth == 0)
		store_exec(st, "PRAGMA main.synchronous = FULL");
	if (r == -1)
		for (i = 0; i < n; i++)
			store_env_delete(st, ids[i]);
	return r;
fail:
	store_rollback(st);
	return -1;
}

int64_t
store_job_insert(struct store *st, const struct store_job_new *j)
{
	int64_t id;

	return store_jobs_insert(st, &j, 1, &id) == -1 ? -1 : id;
}

int
store_job_start(struct store *st, int64_t id, double now, const char *uuids, int gpus,
    uint64_t mem, double gpu_share)
{
	sqlite3_stmt *s;

	if (store_begin(st) == -1)
		return -1;
	s = store_prepare(st, "UPDATE jobs SET state = 'RUNNING', started_at = ?, "
	    "gpu_uuids = ?, pid = NULL, pid_start = NULL, run_suspended = 0, warned_at = NULL "
	    "WHERE id = ? AND state = 'PENDING'");
	if (s == NULL)
		goto fail;
	sqlite3_bind_double(s, 1, now);
	sqlite3_bind_text(s, 2, uuids, -1, SQLITE_STATIC);
	sqlite3_bind_int64(s, 3, id);
	if (store_done(st, s) == -1 || sqlite3_changes(st->db) != 1)
		goto fail;
	s = store_prepare(st, "INSERT INTO runs (job_id, gpu_uuids, gpus, mem_per_gpu, "
	    "started_at, gpu_share) VALUES (?, ?, ?, ?, ?, ?)");
	if (s == NULL)
		goto fail;
	sqlite3_bind_int64(s, 1, id);
	sqlite3_bind_text(s, 2, uuids, -1, SQLITE_STATIC);
	sqlite3_bind_int(s, 3, gpus);
	sqlite3_bind_int64(s, 4, (int64_t)mem);
	sqlite3_bind_double(s, 5, now);
	sqlite3_bind_double(s, 6, gpu_share);
	if (store_done(st, s) == -1 || store_event(st, id, now, "RUNNING", uuids) == -1)
		goto fail;
	return store_commit(st);
fail:
	store_rollback(st);
	return -1;
}

int
store_job_set_pid(struct store *st, int64_t id, int pid, int64_t pid_start,
    const char *boot_id, const char *cgroup)
{
	sqlite3_stmt *s = store_prepare(st, "UPDATE jobs SET pid = ?, pid_start = ?, "
	    "boot_id = ?, cgroup = ? WHERE id = ?");

	if (s == NULL)
		return -1;
	sqlite3_bind_int(s, 1, pid);
	sqlite3_bind_int64(s, 2, pid_start);
	sqlite3_bind_text(s, 3, boot_id, -1, SQLITE_STATIC);
	sqlite3_bind_text(s, 4, cgroup, -1, SQLITE_STATIC);
	sqlite3_bind_int64(s, 5, id);
	return store_done(st, s);
}

/*
 * A task's link to its array's environment goes; the environment with
 * the last link (an index lookup, however many tasks the array has).
 */
static int
store_task_env_delete(struct store *st, int64_t id)
{
	sqlite3_stmt *s = store_prepare(st, "SELECT array_id FROM private.task_env "
	    "WHERE job_id = ?");
	int64_t array = 0;

	if (s == NULL)
		return -1;
	sqlite3_bind_int64(s, 1, id);
	if (sqlite3_step(s) == SQLITE_ROW)
		array = sqlite3_column_int64(s, 0);
	store_release(st, s);
	if (array == 0)
		return 0;
	if ((s = store_prepare(st, "DELETE FROM private.task_env WHERE job_id = ?")) == NULL)
		return -1;
	sqlite3_bind_int64(s, 1, id);
	if (store_done(st, s) == -1)
		return -1;
	if ((s = store_prepare(st, "DELETE FROM private.array_env WHERE array_id = ?1 AND "
	    "NOT EXISTS (SELECT 1 FROM private.task_env WHERE array_id = ?1)")) == NULL)
		return -1;
	sqlite3_bind_int64(s, 1, array);
	return store_done(st, s);
}

/* Job id's environment, its own or its link to a shared one, gone. */
int
store_env_forget(struct store *st, int64_t id)
{
	sqlite3_stmt *s = store_prepare(st, "DELETE FROM private.job_env WHERE job_id = ?");

	if (s == NULL)
		return -1;
	sqlite3_bind_int64(s, 1, id);
	if (store_done(st, s) == -1)
		return -1;
	return store_task_env_delete(st, id);
}

int
store_env_delete(struct store *st, int64_t id)
{
	sqlite3_stmt *s;
	int freed = 0;

	if (store_env_forget(st, id) == -1)
		return -1;
	if ((s = store_prepare(st, "DELETE FROM private.jobs_copy WHERE id = ?")) == NULL)
		return -1;
	sqlite3_bind_int64(s, 1, id);
	if (store_done(st, s) == -1)
		return -1;
	/* the pages it held back to the file system, a batch at a time */
	if ((s = store_prepare(st, "PRAGMA private.freelist_count")) == NULL)
		return 0;
	if (sqlite3_step(s) == SQLITE_ROW)
		freed = sqlite3_column_int(s, 0);
	store_release(st, s);
	if (freed >= STORE_VACUUM_PAGES && store_exec(st, "PRAGMA private.incremental_vacuum") == 0)
		st->vacuumed = 1;
	return 0;
}

int
store_envs_delete(struct store *st, const int64_t *ids, int n)
{
	int i, r;

	do {
		r = store_lazy_begin(st);
		for (i = 0; i < n && r == 0; i++)
			r = store_env_delete(st, ids[i]);
		if (r == -1)
			st->doomed = 1;	/* the commit rolls back, and restores sync */
		r = store_lazy_commit(st);
	} while (r == -1 && store_reserve_use(st));
	return r;
}

/*
 * A transaction that is not synced on its own: it reaches the disk with the
 * next synced commit.  A crash of nvqd loses nothing (the WAL is in the page
 * cache); a power cut could, which is why only what can be lost goes here:
 * pids (the job died with the power too) and deleting old environments.
 */
int
store_lazy_begin(struct store *st)
{
	if (st->sync_full && st->depth == 0) {
		store_exec(st, "PRAGMA synchronous = NORMAL");
		store_exec(st, "PRAGMA private.synchronous = NORMAL");
	}
	return store_begin(st);
}

int
store_lazy_commit(struct store *st)
{
	int r = store_commit(st);

	/* the file itself shrinks when its WAL is checkpointed (and cut short) */
	if (st->vacuumed && st->depth == 0) {
		st->vacuumed = 0;
		if (st->ckpt != NULL)
			checkpoint_kick(st->ckpt, CHECKPOINT_PRIVATE_TRUNCATE);
		else
			store_exec(st, "PRAGMA private.wal_checkpoint(TRUNCATE)");
	}
	if (st->sync_full && st->depth == 0) {
		store_exec(st, "PRAGMA synchronous = FULL");
		store_exec(st, "PRAGMA private.synchronous = FULL");
	}
	return r;
}

/*
 * Makes the main database's commits so far durable: SQLite's own sync of
 * its write-ahead log (reached through SQLITE_FCNTL_JOURNAL_POINTER), the
 * one a synced commit would run.  Nothing to do without sync = full.
 */
int
store_sync(struct store *st)
{
	sqlite3_file *wal = NULL;

	if (!st->sync_full)
		return 0;
	if (sqlite3_file_control(st->db, "main", SQLITE_FCNTL_JOURNAL_POINTER, &wal) !=
	    SQLITE_OK) {
		store_warn(st, "sync", "cannot reach the write-ahead log");
		return -1;
	}
	if (wal == NULL || wal->pMethods == NULL)
		return 0;	/* not open: nothing in it */
	if (wal->pMethods->xSync(wal, SQLITE_SYNC_NORMAL) != SQLITE_OK) {
		store_warn(st, "sync", "the write-ahead log cannot be synced");
		return -1;
	}
	return 0;
}

static int
store_job_ending_do(struct store *st, const struct store_op *op)
{
	sqlite3_stmt *s = store_prepare(st, "UPDATE jobs SET ending = ?, reason = ? WHERE id = ?");

	if (s == NULL)
		return -1;
	sqlite3_bind_text(s, 1, op->state, -1, SQLITE_STATIC);
	sqlite3_bind_text(s, 2, op->reason, -1, SQLITE_STATIC);
	sqlite3_bind_int64(s, 3, op->id);
	if (store_done(st, s) == -1 || store_event(st, op->id, op->now, "RUNNING", op->reason) == -1)
		return -1;
	return 0;
}

int
store_job_warned(struct store *st, int64_t id, double now)
{
	sqlite3_stmt *s = store_prepare(st, "UPDATE jobs SET warned_at = ? WHERE id = ?");

	if (s == NULL)
		return -1;
	sqlite3_bind_double(s, 1, now);
	sqlite3_bind_int64(s, 2, id);
	return store_done(st, s);
}

/* Must be recorded even on a full disk. */
int
store_job_ending(struct store *st, int64_t id, const char *state, const char *reason,
    double now)
{
	struct store_op op = { .id = id, .state = state, .reason = reason, .now = now };

	return store_tx(st, store_job_ending_do, &op, 1);
}

static void
store_bind_end(sqlite3_stmt *s, const struct store_end *e, int first)
{
	if (e->exit_code >= 0)
		sqlite3_bind_int(s, first, e->exit_code);
	if (e->signal > 0)
		sqlite3_bind_int(s, first + 1, e->signal);
}

/*
 * Closes the job's open run, with its peaks per GPU; inside a transaction,
 * before the job's row changes.
 */
static int
store_run_end(struct store *st, int64_t id, const struct store_end *e)
{
	sqlite3_stmt *s;
	int i;

	for (i = 0; i < e->npeaks; i++) {
		s = store_prepare(st, "INSERT OR REPLACE INTO run_gpus (run_id, gpu_uuid, "
		    "peak_gpu_mem) SELECT id, ?, ? FROM runs WHERE job_id = ? AND ended_at IS NULL");
		if (s == NULL)
			return -1;
		sqlite3_bind_text(s, 1, e->peak_uuids[i], -1, SQLITE_STATIC);
		sqlite3_bind_int64(s, 2, e->peaks[i]);
		sqlite3_bind_int64(s, 3, id);
		if (store_done(st, s) == -1)
			return -1;
	}
	/* before the job's row: its last stint suspended is still there */
	s = store_prepare(st, "UPDATE runs SET ended_at = ?1, exit_code = ?, signal = ?, "
	    "cpu_time = ?, max_rss = ?, peak_gpu_mem = ?, state = ?, suspended_time = "
	    "(SELECT j.run_suspended + CASE WHEN j.state = 'SUSPENDED' THEN "
	    "max(0, ?1 - coalesce(j.suspended_at, ?1)) ELSE 0 END FROM jobs j WHERE j.id = ?8) "
	    "WHERE job_id = ?8 AND ended_at IS NULL");
	if (s == NULL)
		return -1;
	sqlite3_bind_double(s, 1, e->now);
	store_bind_end(s, e, 2);
	if (e->cpu_time >= 0)
		sqlite3_bind_double(s, 4, e->cpu_time);
	if (e->max_rss >= 0)
		sqlite3_bind_int64(s, 5, e->max_rss);
	if (e->peak_gpu_mem >= 0)
		sqlite3_bind_int64(s, 6, e->peak_gpu_mem);
	sqlite3_bind_text(s, 7, e->state, -1, SQLITE_STATIC);
	sqlite3_bind_int64(s, 8, id);
	return store_done(st, s);
}

/* The lc/be figures its hooks measured, in the end's transaction. */
static int
store_job_lcbe(struct store *st, int64_t id, const struct store_end *e)
{
	sqlite3_stmt *s = store_prepare(st, "UPDATE jobs SET lc_p50_ns = ?, lc_p99_ns = ?, "
	    "lc_p999_ns = ?, be_yield_us = ? WHERE id = ?");
	int i;

	if (s == NULL)
		return -1;
	for (i = 0; i < 3; i++)
		if (e->lc_ns[i] > 0)
			sqlite3_bind_int64(s, i + 1, e->lc_ns[i]);
	sqlite3_bind_int64(s, 4, e->be_yield_us);
	sqlite3_bind_int64(s, 5, id);
	return store_done(st, s);
}

static int
store_job_end_one(struct store *st, int64_t id, const struct store_end *e)
{
	sqlite3_stmt *s;

	if (store_run_end(st, id, e) == -1)
		return -1;
	s = store_prepare(st, "UPDATE jobs SET state = ?, ended_at = ?, exit_code = ?, "
	    "signal = ?, reason = ?, pid = NULL, pid_start = NULL, ending = NULL, cgroup = NULL, "
	    "suspended_time = suspended_time + CASE WHEN state = 'SUSPENDED' THEN "
	    "max(0, ?2 - suspended_at) ELSE 0 END, suspended_at = NULL, ckpt_pids = NULL "
	    "WHERE id = ? AND state IN ('PENDING', 'RUNNING', 'SUSPENDED')");
	if (s == NULL)
		return -1;
	sqlite3_bind_text(s, 1, e->state, -1, SQLITE_STATIC);
	sqlite3_bind_double(s, 2, e->now);
	store_bind_end(s, e, 3);
	sqlite3_bind_text(s, 5, e->reason, -1, SQLITE_STATIC);
	sqlite3_bind_int64(s, 6, id);
	if (store_done(st, s) == -1 || sqlite3_changes(st->db) != 1)
		return -1;
	if (e->has_lcbe && store_job_lcbe(st, id, e) == -1)
		return -1;
	return store_event(st, id, e->now, e->state, e->reason);
}

static int
store_jobs_end_do(struct store *st, const struct store_op *op)
{
	int i;

	for (i = 0; i < op->n; i++)
		if (store_job_end_one(st, op->ids[i], op->e) == -1)
			return -1;
	return 0;
}

/* Must be recorded even on a full disk. */
int
store_job_end(struct store *st, int64_t id, const struct store_end *e)
{
	return store_jobs_end(st, &id, 1, e);
}

int
store_jobs_end(struct store *st, const int64_t *ids, int n, const struct store_end *e)
{
	struct store_op op = { .ids = ids, .n = n, .e = e };

	return store_tx(st, store_jobs_end_do, &op, 1);
}

static int
store_job_unstart_do(struct store *st, const struct store_op *op)
{
	int64_t id = op->id;
	sqlite3_stmt *s;

	s = store_prepare(st, "UPDATE jobs SET state = 'PENDING', started_at = NULL, "
	    "gpu_uuids = NULL, pid = NULL, pid_start = NULL, cgroup = NULL, boot_id = NULL "
	    "WHERE id = ? AND state = 'RUNNING'");
	if (s == NULL)
		return -1;
	sqlite3_bind_int64(s, 1, id);
	if (store_done(st, s) == -1 || sqlite3_changes(st->db) != 1)
		return -1;
	/* its energy rows first: they name the run */
	if ((s = store_prepare(st, "DELETE FROM run_energy WHERE run_id IN (SELECT id FROM runs "
	    "WHERE job_id = ? AND ended_at IS NULL)")) == NULL)
		return -1;
	sqlite3_bind_int64(s, 1, id);
	if (store_done(st, s) == -1)
		return -1;
	if ((s = store_prepare(st, "DELETE FROM runs WHERE job_id = ? AND ended_at IS NULL")) == NULL)
		return -1;
	sqlite3_bind_int64(s, 1, id);
	if (store_done(st, s) == -1 ||
	    store_event(st, id, op->now, "PENDING", "nvqd stopped before it started the job") == -1)
		return -1;
	return 0;
}

int
store_job_unstart(struct store *st, int64_t id, double now)
{
	struct store_op op = { .id = id, .now = now };

	return store_tx(st, store_job_unstart_do, &op, 0);
}

static int
store_job_requeue_do(struct store *st, const struct store_op *op)
{
	const struct store_end *e = op->e;
	int64_t id = op->id;
	sqlite3_stmt *s;

	if (store_run_end(st, id, e) == -1)
		return -1;
	s = store_prepare(st, "UPDATE jobs SET state = 'PENDING', started_at = NULL, "
	    "gpu_uuids = NULL, pid = NULL, pid_start = NULL, ending = NULL, cgroup = NULL, "
	    "boot_id = NULL, held = 0, reason = ?, restarts = restarts + 1, "
	    "suspended_at = NULL, suspend_hold = 0, ckpt_pids = NULL "
	    "WHERE id = ? AND state IN ('RUNNING', 'SUSPENDED')");
	if (s == NULL)
		return -1;
	sqlite3_bind_text(s, 1, e->reason, -1, SQLITE_STATIC);
	sqlite3_bind_int64(s, 2, id);
	if (store_done(st, s) == -1 || sqlite3_changes(st->db) != 1 ||
	    store_event(st, id, e->now, e->state, e->reason) == -1 ||
	    store_event(st, id, e->now, "PENDING", "requeued") == -1)
		return -1;
	return 0;
}

/* Must be recorded even on a full disk. */
int
store_job_requeue(struct store *st, int64_t id, const struct store_end *e)
{
	struct store_op op = { .id = id, .e = e };

	return store_tx(st, store_job_requeue_do, &op, 1);
}

static int
store_job_held_do(struct store *st, const struct store_op *op)
{
	sqlite3_stmt *s;

	if ((s = store_prepare(st, "UPDATE jobs SET held = ? WHERE id = ? AND "
	    "state IN ('RUNNING', 'PENDING')")) == NULL)
		return -1;
	sqlite3_bind_int(s, 1, op->held);
	sqlite3_bind_int64(s, 2, op->id);
	if (store_done(st, s) == -1 || sqlite3_changes(st->db) != 1 ||
	    store_event(st, op->id, op->now, op->held ? "HELD" : "RELEASED", op->reason) == -1)
		return -1;
	return 0;
}

/* A user's change (nvq hold, release, run's attach): it never takes the reserve. */
int
store_job_held(struct store *st, int64_t id, int held, double now, const char *reason)
{
	struct store_op op = { .id = id, .held = held, .now = now, .reason = reason };

	return store_tx(st, store_job_held_do, &op, 0);
}

/* The rows of a query about one job (its id is the one parameter). */
int
store_rows_of(struct store *st, const char *sql, int64_t id, store_row_cb cb, void *arg)
{
	sqlite3_stmt *s = store_prepare(st, sql);

	if (s == NULL)
		return -1;
	sqlite3_bind_int64(s, 1, id);
	return store_rows(st, s, cb, arg);
}

int
store_job_ckpt_pids(struct store *st, int64_t id, const char *pids)
{
	sqlite3_stmt *s = store_prepare(st, "UPDATE jobs SET ckpt_pids = ? WHERE id = ?");

	if (s == NULL)
		return -1;
	sqlite3_bind_text(s, 1, pids, -1, SQLITE_STATIC);
	sqlite3_bind_int64(s, 2, id);
	return store_done(st, s);
}

static int
store_switch_insert(struct store *st, int64_t id, const struct store_switch *w)
{
	sqlite3_stmt *s = store_prepare(st, "INSERT INTO switches (job_id, kind, why, by_job, "
	    "gpu_uuids, started_at, ended_at, seconds, driver_seconds, bytes, pids, ok, error, "
	    "hook_seconds, hook_bytes) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)");

	if (s == NULL)
		return -1;
	sqlite3_bind_int64(s, 1, id);
	sqlite3_bind_text(s, 2, w->kind, -1, SQLITE_STATIC);
	sqlite3_bind_text(s, 3, w->why, -1, SQLITE_STATIC);
	if (w->by_job > 0)
		sqlite3_bind_int64(s, 4, w->by_job);
	sqlite3_bind_text(s, 5, w->uuids ? w->uuids : "", -1, SQLITE_STATIC);
	sqlite3_bind_double(s, 6, w->started_at);
	sqlite3_bind_double(s, 7, w->ended_at);
	sqlite3_bind_double(s, 8, w->ended_at - w->started_at);
	if (w->driver_seconds >= 0)
		sqlite3_bind_double(s, 9, w->driver_seconds);
	if (w->bytes >= 0)
		sqlite3_bind_int64(s, 10, w->bytes);
	sqlite3_bind_text(s, 11, w->pids, -1, SQLITE_STATIC);
	sqlite3_bind_int(s, 12, w->ok);
	sqlite3_bind_text(s, 13, w->error, -1, SQLITE_STATIC);
	if (w->hook_seconds >= 0)
		sqlite3_bind_double(s, 14, w->hook_seconds);
	if (w->hook_bytes >= 0)
		sqlite3_bind_int64(s, 15, w->hook_bytes);
	return store_done(st, s);
}

/*
 * Runs sql on id (?1), the time (?2) and hold (?3), where it names them, one
 * row changed; then adds an event and the switch, in one commit.
 */
static int
store_switch_do(struct store *st, const struct store_op *op)
{
	sqlite3_stmt *s;

	if ((s = store_prepare(st, op->sql)) == NULL)
		return -1;
	sqlite3_bind_int64(s, 1, op->id);
	if (sqlite3_bind_parameter_count(s) >= 2)
		sqlite3_bind_double(s, 2, op->now);
	if (sqlite3_bind_parameter_count(s) >= 3)
		sqlite3_bind_int(s, 3, op->held);
	if (store_done(st, s) == -1 || sqlite3_changes(st->db) != 1)
		return -1;
	if ((op->state != NULL && store_event(st, op->id, op->now, op->state, op->reason) == -1) ||
	    store_switch_insert(st, op->id, op->w) == -1)
		return -1;
	return 0;
}

static int
store_switch_tx(struct store *st, int64_t id, const char *sql, int hold, double at,
    const char *state, const char *reason, const struct store_switch *w)
{
	struct store_op op = { .id = id, .sql = sql, .held = hold, .now = at, .state = state,
	    .reason = reason, .w = w };

	return store_tx(st, store_switch_do, &op, 0);
}

int
store_job_suspended(struct store *st, int64_t id, int hold, const char *reason,
    const struct store_switch *w)
{
	return store_switch_tx(st, id, "UPDATE jobs SET state = 'SUSPENDED', suspended_at = ?2, "
	    "suspend_hold = ?3 WHERE id = ?1 AND state = 'RUNNING'", hold, w->ended_at,
	    "SUSPENDED", reason, w);
}

int
store_job_resumed(struct store *st, int64_t id, const struct store_switch *w)
{
	return store_switch_tx(st, id, "UPDATE jobs SET state = 'RUNNING', "
	    "suspended_time = suspended_time + max(0, ?2 - suspended_at), "
	    "run_suspended = run_suspended + max(0, ?2 - suspended_at), suspended_at = NULL, "
	    "suspend_hold = ?3, ckpt_pids = NULL WHERE id = ?1 AND state = 'SUSPENDED'", 0,
	    w->ended_at, "RUNNING", "resumed", w);
}

int
store_switch_record(struct store *st, int64_t id, int hold, const struct store_switch *w)
{
	/* a failed suspend left it running: its pids need no restore */
	return store_switch_tx(st, id, strcmp(w->kind, "suspend") == 0 ?
	    "UPDATE jobs SET ckpt_pids = NULL WHERE id = ?1" :
	    "UPDATE jobs SET suspend_hold = ?3 WHERE id = ?1", hold, w->ended_at, NULL, NULL, w);
}

static int
store_job_unhold_do(struct store *st, const struct store_op *op)
{
	sqlite3_stmt *s;

	if ((s = store_prepare(st, "UPDATE jobs SET suspend_hold = 0 WHERE id = ? AND "
	    "state = 'SUSPENDED'")) == NULL)
		return -1;
	sqlite3_bind_int64(s, 1, op->id);
	if (store_done(st, s) == -1 || sqlite3_changes(st->db) != 1 ||
	    store_event(st, op->id, op->now, "RESUMING", op->reason) == -1)
		return -1;
	return 0;
}

int
store_job_unhold(struct store *st, int64_t id, double now, const char *reason)
{
	struct store_op op = { .id = id, .now = now, .reason = reason };

	return store_tx(st, store_job_unhold_do, &op, 0);
}

int
store_switches(struct store *st, int64_t id, store_row_cb cb, void *arg)
{
	return store_rows_of(st, "SELECT kind, why, by_job, started_at, seconds, "
	    "driver_seconds, hook_seconds, bytes, hook_bytes, ok, error FROM switches "
	    "WHERE job_id = ? ORDER BY id", id, cb, arg);
}

int
store_job_state(struct store *st, int64_t id, char *buf, size_t len)
{
	int64_t array;

	return store_job_of_array(st, id, buf, len, &array);
}

int
store_job_of_array(struct store *st, int64_t id, char *buf, size_t len, int64_t *array)
{
	sqlite3_stmt *s = store_prepare(st, "SELECT state, coalesce(array_id, 0) FROM jobs "
	    "WHERE id = ?");
	int r = -1;

	if (s == NULL)
		return -1;
	sqlite3_bind_int64(s, 1, id);
	if (sqlite3_step(s) == SQLITE_ROW) {
		snprintf(buf, len, "%s", (const char *)sqlite3_column_text(s, 0));
		*array = sqlite3_column_int64(s, 1);
		r = 0;
	}
	store_release(st, s);
	return r;
}

/* The first column of sql's first row, its ?1 and ?2 bound to a and b: 0, or -1 (no row). */
static int
store_int_of(struct store *st, const char *sql, int64_t a, int64_t b, int64_t *out)
{
	sqlite3_stmt *s = store_prepare(st, sql);
	int r = -1;

	if (s == NULL)
		return -1;
	sqlite3_bind_int64(s, 1, a);
	sqlite3_bind_int64(s, 2, b);
	if (sqlite3_step(s) == SQLITE_ROW) {
		*out = sqlite3_column_int64(s, 0);
		r = 0;
	}
	store_release(st, s);
	return r;
}

int
store_array_task(struct store *st, int64_t array, int64_t index, int64_t *id)
{
	/* schema/021_array_task.sql's index: O(log n) whatever the array's size */
	return store_int_of(st, "SELECT id FROM jobs INDEXED BY jobs_array_task "
	    "WHERE array_id = ?1 AND array_index = ?2", array, index, id);
}

int
store_active_named(struct store *st, uint32_t uid, const char *name, int max, store_row_cb cb,
    void *arg)
{
	sqlite3_stmt *s = store_prepare(st, "SELECT id, coalesce(array_id, 0), "
	    "coalesce(after, '') LIKE '%singleton%', state != 'PENDING' FROM jobs "
	    "INDEXED BY jobs_active_name "
	    "WHERE uid = ? AND name = ? AND state IN ('PENDING', 'RUNNING', 'SUSPENDED') "
	    "ORDER BY id DESC LIMIT ?");
	struct store_col c[4] = { { .name = "id", .type = STORE_INT },
	    { .name = "array", .type = STORE_INT }, { .name = "singleton", .type = STORE_INT },
	    { .name = "started", .type = STORE_INT } };
	int r, i;

	if (s == NULL)
		return -1;
	sqlite3_bind_int64(s, 1, uid);
	sqlite3_bind_text(s, 2, name, -1, SQLITE_STATIC);
	sqlite3_bind_int(s, 3, max);
	while ((r = sqlite3_step(s)) == SQLITE_ROW) {
		for (i = 0; i < 4; i++)
			c[i].i = sqlite3_column_int64(s, i);
		if (cb(arg, c, 4) != 0)
			break;
	}
	store_release(st, s);
	return r == SQLITE_ROW || r == SQLITE_DONE ? 0 : -1;
}

int
store_job_named(struct store *st, int64_t id, uint32_t *uid, char *name, size_t len,
    char *after, size_t alen)
{
	sqlite3_stmt *s = store_prepare(st, "SELECT uid, coalesce(name, ''), coalesce(after, '') "
	    "FROM jobs WHERE id = ?");
	int r;

	if (s == NULL)
		return -1;
	sqlite3_bind_int64(s, 1, id);
	if ((r = sqlite3_step(s)) == SQLITE_ROW) {
		*uid = (uint32_t)sqlite3_column_int64(s, 0);
		snprintf(name, len, "%s", (const char *)sqlite3_column_text(s, 1));
		snprintf(after, alen, "%s", (const char *)sqlite3_column_text(s, 2));
	}
	store_release(st, s);
	return r == SQLITE_ROW ? 0 : r == SQLITE_DONE ? 1 : -1;
}

int
store_job_set_after(struct store *st, int64_t id, const char *after)
{
	sqlite3_stmt *s = store_prepare(st, "UPDATE jobs SET after = ? WHERE id = ? AND "
	    "state = 'PENDING'");

	if (s == NULL)
		return -1;
	sqlite3_bind_text(s, 1, after, -1, SQLITE_STATIC);
	sqlite3_bind_int64(s, 2, id);
	return store_done(st, s);
}

int
store_array_unfinished(struct store *st, int64_t array, int64_t *n)
{
	/* ?2: store_int_of binds two; 0 here */
	return store_int_of(st, "SELECT count(*) FROM jobs INDEXED BY jobs_array_task WHERE "
	    "array_id = ?1 AND state != 'COMPLETED' AND ?2 = 0", array, 0, n);
}

/* nvq modify and nvq top of a pending job: what c has, with its event. */
int
store_job_modify(struct store *st, int64_t id, const struct store_change *c, double now,
    const char *reason)
{
	sqlite3_stmt *s;

	if (store_begin(st) == -1)
		return -1;
	s = store_prepare(st, "UPDATE jobs SET priority = CASE WHEN ?1 THEN ?2 ELSE priority END, "
	    "mem_per_gpu = CASE WHEN ?3 THEN ?4 ELSE mem_per_gpu END, "
	    "time_limit = CASE WHEN ?5 THEN ?6 ELSE time_limit END, "
	    "top_at = CASE WHEN ?7 > 0 THEN ?7 ELSE top_at END, "
	    "cpus = CASE WHEN ?9 THEN ?10 ELSE cpus END, "
	    "host_mem = CASE WHEN ?11 THEN ?12 ELSE host_mem END, "
	    "mem_per_cpu = CASE WHEN ?11 THEN ?13 ELSE mem_per_cpu END "
	    "WHERE id = ?8 AND state = 'PENDING'");
	if (s == NULL)
		goto fail;
	sqlite3_bind_int(s, 1, c->has_priority);
	sqlite3_bind_int(s, 2, c->priority);
	sqlite3_bind_int(s, 3, c->has_mem);
	if (c->mem > 0)
		sqlite3_bind_int64(s, 4, (int64_t)c->mem);
	sqlite3_bind_int(s, 5, c->has_time);
	if (c->time_limit > 0)
		sqlite3_bind_int64(s, 6, c->time_limit);
	sqlite3_bind_double(s, 7, c->top_at);
	sqlite3_bind_int64(s, 8, id);
	sqlite3_bind_int(s, 9, c->has_cpus);
	sqlite3_bind_int(s, 10, c->cpus);
	sqlite3_bind_int(s, 11, c->has_host_mem);
	sqlite3_bind_int64(s, 12, (int64_t)c->host_mem);
	if (c->mem_per_cpu > 0)
		sqlite3_bind_int64(s, 13, (int64_t)c->mem_per_cpu);
	if (store_done(st, s) == -1 || sqlite3_changes(st->db) != 1 ||
	    store_event(st, id, now, "PENDING", reason) == -1)
		goto fail;
	return store_commit(st);
fail:
	store_rollback(st);
	return -1;
}

int
store_drain(struct store *st, const char *uuid, int drained, const char *by,
    const char *reason, double now)
{
	sqlite3_stmt *s;

	if (store_begin(st) == -1)
		return -1;
	s = store_prepare(st, drained ? "INSERT OR REPLACE INTO drained (uuid, at, by, reason) "
	    "VALUES (?1, ?2, ?3, ?4)" : "DELETE FROM drained WHERE uuid = ?1");
	if (s == NULL)
		goto fail;
	sqlite3_bind_text(s, 1, uuid, -1, SQLITE_STATIC);
	if (drained) {
		sqlite3_bind_double(s, 2, now);
		sqlite3_bind_text(s, 3, by, -1, SQLITE_STATIC);
		sqlite3_bind_text(s, 4, reason, -1, SQLITE_STATIC);
	}
	if (store_done(st, s) == -1)
		goto fail;
	return store_commit(st);
fail:
	store_rollback(st);
	return -1;
}

