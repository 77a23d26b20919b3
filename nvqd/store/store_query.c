/*
 * store_query.c: what the front ends read (see store.h): the active jobs
 * at start-up, lists, history, runs, usage, stats, events, the notices and
 * a job's command for its start; and the few changes that go with them:
 * restarting jobs, a job's Slurm id, the dashboard's tokens.
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
#include "jobstate.h"
#include "log.h"
#include "parse.h"
#include "store_int.h"

int
store_drained(struct store *st, store_row_cb cb, void *arg)
{
	return store_rows(st, store_prepare(st, "SELECT uuid, at, by, reason FROM drained "
	    "ORDER BY uuid"), cb, arg);
}

struct store_active_ctx {
	store_active_cb	cb;
	void		*arg;
};

/* The row of store_active's SELECT, column by column, into a struct. */
static int
store_active_row_cb(void *arg, const struct store_col *c, int n)
{
	struct store_active_ctx *x = arg;
	struct store_active_job a;

	if (n < 49)
		return 1;
	memset(&a, 0, sizeof(a));
	a.id = c[0].i;
	a.uid = (uint32_t)c[1].i;
	a.gid = (uint32_t)c[2].i;
	a.user = c[3].s;
	a.state = c[4].s;
	a.gpus = (int)c[5].i;
	a.mem_per_gpu = c[6].type == STORE_NULL ? 0 : (uint64_t)c[6].i;
	a.priority = (int)c[7].i;
	a.submitted_at = c[8].r;
	a.started_at = c[9].r;
	a.time_limit = c[10].type == STORE_NULL ? 0 : c[10].i;
	a.after = c[11].s;
	a.gpu_uuids = c[12].s;
	a.pid = c[13].type == STORE_NULL ? 0 : c[13].i;
	a.has_pid_start = c[14].type != STORE_NULL;
	a.pid_start = c[14].i;
	a.ending = c[15].s;
	a.reason = c[16].s;
	a.held = c[17].i != 0;
	a.boot_id = c[18].s;
	a.requeue = c[19].i != 0;
	a.cgroup = c[20].s;
	a.suspended_at = c[21].type == STORE_NULL ? 0 : c[21].r;
	a.suspend_hold = (int)c[22].i;
	a.ckpt_pids = c[23].s;
	a.run_suspended = c[24].r;
	a.preempt_signal = c[25].type == STORE_NULL ? 0 : (int)c[25].i;
	a.array_id = c[26].type == STORE_NULL ? 0 : c[26].i;
	a.array_index = c[27].type == STORE_NULL ? -1 : c[27].i;
	a.array_limit = c[28].type == STORE_NULL ? 0 : (int)c[28].i;
	a.rank_at = c[29].type == STORE_NULL ? 0 : c[29].r;
	a.gpus_allow = c[30].s;
	a.gpus_deny = c[31].s;
	a.notify = c[32].i != 0;
	a.slurm_id = c[33].type == STORE_NULL ? -1 : c[33].i;
	a.slurm_step = c[34].s;
	a.top_at = c[35].type == STORE_NULL ? 0 : c[35].r;
	a.stored_own = (uint64_t)c[36].i;
	a.stored_shared = (uint64_t)c[37].i;
	a.stored_key = c[38].i;
	a.stored_row = (uint64_t)c[39].i;
	a.cpus = (int)c[40].i;
	a.host_mem = (uint64_t)c[41].i;
	a.mem_per_cpu = (uint64_t)c[42].i;
	a.qos = c[43].s;
	a.lc = c[44].i != 0;
	a.warn_sig = c[45].type == STORE_NULL ? 0 : (int)c[45].i;
	a.warn_time = (int)c[46].i;
	a.warn_batch = c[47].i != 0;
	a.warned_at = c[48].type == STORE_NULL ? 0 : c[48].r;
	return x->cb(x->arg, &a);
}

/* a TEXT column's bytes, as submits count them (length() counts characters) */
#define STORE_LEN(x)	"length(CAST(" x " AS BLOB))"
/*
 * What a job's row keeps of its own, as submits count it (submit_bytes):
 * [limits] max_stored's charge after a restart of nvqd, and nvq restart's.
 */
#define STORE_ROW_SQL	STORE_ROW_BYTES_SQL " + " STORE_LEN("command") " + length(argv) + " \
	STORE_LEN("cwd") " + " STORE_LEN("name") " + " STORE_LEN("user") " + " \
	STORE_LEN("stdout_path") " + " STORE_LEN("stderr_path") " + coalesce(" \
	STORE_LEN("after") ", 0) + coalesce(" STORE_LEN("groups") ", 0) + coalesce(" \
	STORE_LEN("notify") ", 0) + coalesce(" STORE_LEN("mail_user") ", 0) + coalesce(" \
	STORE_LEN("qos") ", 0)"

/* store_active_row_cb's columns */
#define STORE_ACTIVE_SELECT	"SELECT id, uid, gid, user, state, gpus, " \
	"mem_per_gpu, priority, submitted_at, started_at, time_limit, after, gpu_uuids, " \
	"pid, pid_start, ending, reason, held, boot_id, requeue, cgroup, " \
	"suspended_at, suspend_hold, ckpt_pids, run_suspended, preempt_signal, " \
	"array_id, array_index, array_limit, rank_at, gpus_allow, gpus_deny, " \
	"notify IS NOT NULL OR mail_user IS NOT NULL, slurm_id, slurm_step, top_at, " \
	STORE_ROW_SQL " + coalesce((SELECT length(env) FROM private.job_env " \
	"WHERE job_id = jobs.id), 0), " \
	"coalesce((SELECT length(a.env) FROM private.task_env t JOIN private.array_env a ON " \
	"a.array_id = t.array_id WHERE t.job_id = jobs.id), 0) + CASE WHEN array_id IS NOT " \
	"NULL AND length(argv) = 0 THEN (SELECT " STORE_LEN("a.command") " + length(a.argv) " \
	"FROM jobs a WHERE a.id = jobs.array_id) ELSE 0 END, " \
	"coalesce((SELECT array_id FROM private.task_env WHERE job_id = jobs.id), 0), " \
	STORE_ROW_SQL " + CASE WHEN array_id IS NOT NULL AND length(argv) = 0 THEN (SELECT " \
	STORE_LEN("a.command") " + length(a.argv) FROM jobs a WHERE a.id = jobs.array_id) " \
	"ELSE 0 END, coalesce(cpus, 0), coalesce(host_mem, 0), coalesce(mem_per_cpu, 0), qos, coalesce(lc, 0), " \
	"warn_signal, coalesce(warn_time, 0), coalesce(warn_batch, 0), warned_at FROM jobs "

int
store_active(struct store *st, store_active_cb cb, void *arg)
{
	struct store_active_ctx x = { cb, arg };

	return store_rows(st, store_prepare(st, STORE_ACTIVE_SELECT
	    "WHERE state IN ('PENDING', 'RUNNING', 'SUSPENDED') ORDER BY id"),
	    store_active_row_cb, &x);
}

/* A query's ids (its first column) into *ids (*n; the caller frees); 0, or -1. */
static int
store_ids(sqlite3_stmt *s, int64_t **ids, int *n)
{
	int64_t *p;
	int rc, cap = 0;

	*ids = NULL;
	*n = 0;
	while ((rc = sqlite3_step(s)) == SQLITE_ROW) {
		if (*n == cap) {
			cap = cap ? cap * 2 : 64;
			if ((p = realloc(*ids, sizeof(*p) * (size_t)cap)) == NULL) {
				rc = SQLITE_NOMEM;
				break;
			}
			*ids = p;
		}
		(*ids)[(*n)++] = sqlite3_column_int64(s, 0);
	}
	sqlite3_reset(s);
	if (rc != SQLITE_DONE) {
		free(*ids);
		*ids = NULL;
		*n = 0;
		return -1;
	}
	return 0;
}

int
store_array_active(struct store *st, int64_t array, int64_t **ids, int *n)
{
	sqlite3_stmt *s = store_prepare(st, "SELECT id FROM jobs WHERE array_id = ? AND "
	    "state IN ('PENDING', 'RUNNING', 'SUSPENDED') ORDER BY id");

	if (s == NULL)
		return -1;
	sqlite3_bind_int64(s, 1, array);
	return store_ids(s, ids, n);
}

int
store_active_match(struct store *st, const char *user, const char *name, int64_t **ids,
    int *n)
{
	sqlite3_stmt *s = store_prepare(st, "SELECT id FROM jobs INDEXED BY jobs_active WHERE "
	    "state IN ('PENDING', 'RUNNING', 'SUSPENDED') AND (?1 IS NULL OR user = ?1) AND "
	    "(?2 IS NULL OR name = ?2) ORDER BY id");

	if (s == NULL)
		return -1;
	sqlite3_bind_text(s, 1, user, -1, SQLITE_STATIC);
	sqlite3_bind_text(s, 2, name, -1, SQLITE_STATIC);
	return store_ids(s, ids, n);
}

/* The finished states nvq restart --failed takes */
#define STORE_FAILED	"('FAILED', 'TIMEOUT', 'NODE_FAIL')"

int
store_restartable(struct store *st, uint32_t uid, double since, int64_t **ids, int *n)
{
	/* uid's failures (schema/019_stats.sql), not every job uid ever ran */
	sqlite3_stmt *s = store_prepare(st, "SELECT id FROM jobs INDEXED BY jobs_uid_failed "
	    "WHERE uid = ?1 AND state IN " STORE_FAILED " AND ended_at >= ?2 "
	    "AND slurm_id IS NULL ORDER BY id");

	if (s == NULL)
		return -1;
	sqlite3_bind_int64(s, 1, uid);
	sqlite3_bind_double(s, 2, since);
	return store_ids(s, ids, n);
}

/*
 * As store_jobs_insert, the private database first, in a commit of its
 * own: the environments, which start-up deletes again for jobs that did
 * not become PENDING; then the jobs, in one synced commit.
 */
int
store_jobs_restart(struct store *st, const int64_t *ids, int n, const char *env, int envlen,
    double now, const char *why)
{
	sqlite3_stmt *s;
	int64_t key;
	int i;

	if (!store_room(st)) {
		snprintf(st->lasterr, sizeof(st->lasterr), "database or disk is full (its "
		    "reserve for ends and cancels is in use)");
		return -1;
	}
	if (!store_headroom(st, (uint64_t)n * STORE_ROW_BYTES + (uint64_t)envlen))
		return -1;
	if (store_begin(st) == -1)
		return -1;
	/*
	 * the restarter's environment once for all n, as an array's, under a
	 * key of its own below every other (array ids are job ids, above 0)
	 */
	if ((s = store_prepare(st, "INSERT INTO private.array_env (array_id, env) SELECT "
	    "min(0, coalesce(min(array_id), 0)) - 1, ? FROM private.array_env")) == NULL)
		goto fail;
	sqlite3_bind_blob(s, 1, env ? env : "", envlen, SQLITE_STATIC);
	if (store_done(st, s) == -1)
		goto fail;
	key = sqlite3_last_insert_rowid(st->db);
	for (i = 0; i < n; i++) {
		/* what it ran with, if its end's deletion is still to come (engine_env_flush) */
		if (store_env_forget(st, ids[i]) == -1)
			goto fail;
		s = store_prepare(st, "INSERT OR REPLACE INTO private.task_env (job_id, array_id) "
		    "VALUES (?, ?)");
		if (s == NULL)
			goto fail;
		sqlite3_bind_int64(s, 1, ids[i]);
		sqlite3_bind_int64(s, 2, key);
		if (store_done(st, s) == -1)
			goto fail;
	}
	if (store_commit(st) == -1 || store_begin(st) == -1)
		goto fail_env;
	for (i = 0; i < n; i++) {
		s = store_prepare(st, "UPDATE jobs SET state = 'PENDING', started_at = NULL, "
		    "ended_at = NULL, exit_code = NULL, signal = NULL, reason = NULL, "
		    "gpu_uuids = NULL, pid = NULL, pid_start = NULL, ending = NULL, "
		    "cgroup = NULL, boot_id = NULL, held = 0, suspended_at = NULL, "
		    "suspend_hold = 0, ckpt_pids = NULL, rank_at = ?, top_at = NULL, "
		    "restarts = restarts + 1 WHERE id = ? AND "
		    "state NOT IN ('PENDING', 'RUNNING', 'SUSPENDED')");
		if (s == NULL)
			goto fail;
		sqlite3_bind_double(s, 1, now);
		sqlite3_bind_int64(s, 2, ids[i]);
		if (store_done(st, s) == -1 || sqlite3_changes(st->db) != 1 ||
		    store_event(st, ids[i], now, "PENDING", why) == -1)
			goto fail;
	}
	if (store_commit(st) == -1)
		goto fail_env;
	return 0;
fail:
	store_rollback(st);
fail_env:
	for (i = 0; i < n; i++)
		store_env_delete(st, ids[i]);
	return -1;
}

int
store_active_one(struct store *st, int64_t id, store_active_cb cb, void *arg)
{
	struct store_active_ctx x = { cb, arg };
	sqlite3_stmt *s = store_prepare(st, STORE_ACTIVE_SELECT "WHERE id = ?");

	if (s == NULL)
		return -1;
	sqlite3_bind_int64(s, 1, id);
	return store_rows(st, s, store_active_row_cb, &x);
}

#define STORE_JOBS_SELECT	"SELECT id, user, uid, name, state, gpus, " \
	"mem_per_gpu, priority, submitted_at, started_at, ended_at, exit_code, signal, " \
	"reason, gpu_uuids, " STORE_COMMAND " AS command, cwd, time_limit, after, " \
	"stdout_path, stderr_path, requeue, restarts, suspended_time, array_id, array_index, array_limit, held, " \
	"gpus_allow, gpus_deny, notify, mail_user, slurm_id, slurm_step, cpus, host_mem, " \
	"mem_per_cpu, qos, CASE WHEN lc = 1 THEN 'lc' ELSE 'be' END AS latency_class, lc_p50_ns, lc_p99_ns, lc_p999_ns, be_yield_us " \
	"FROM jobs "
#define STORE_JOBS_WHERE	"(?2 IS NULL OR user = ?2) " \
	"AND (?3 IS NULL OR instr(',' || ?3 || ',', ',' || state || ',') > 0) " \
	"AND (?4 = 1 OR ?1 != 0 OR ?3 IS NOT NULL OR " \
	"state IN ('PENDING', 'RUNNING', 'SUSPENDED')) " \
	"AND (?5 = 0 OR state NOT IN ('PENDING', 'RUNNING', 'SUSPENDED')) " \
	"AND (?6 = 0 OR ended_at >= ?6) AND id > ?7 AND id <= ?8 ORDER BY id"

/*
 * The rows a listing reads, by the index that holds them (what follows FROM jobs:
 * the index's condition, as it is in the index so that SQLite can use it;
 * INDEXED BY holds it to that).  A page reads its own rows, not the history
 * before them or the queue among them; only the user and since filters
 * skip rows of the index, and store_jobs_bound bounds those.
 */
enum { STORE_BY_ID, STORE_BY_STATE, STORE_BY_ACTIVE, STORE_BY_FINISHED, STORE_BY_TABLE };
#define STORE_BY_STATE_FROM	"INDEXED BY jobs_state WHERE state = ?3 AND "
#define STORE_BY_ACTIVE_FROM	"INDEXED BY jobs_active WHERE " \
	"state IN ('PENDING', 'RUNNING', 'SUSPENDED') AND "
#define STORE_BY_FINISHED_FROM	"INDEXED BY jobs_finished WHERE " \
	"state NOT IN ('PENDING', 'RUNNING', 'SUSPENDED') AND "

/*
 * 1 if every state of the comma-separated list is one of a job still in the
 * queue, 0 if none is, -1 if some are (or the list is not one: the request
 * check refused it before).
 */
static int
store_states_active(const char *list)
{
	unsigned mask;

	if (jobstate_list(list, &mask) < 0)
		return -1;
	return (mask & ~JOBSTATE_ACTIVE) == 0 ? 1 : (mask & JOBSTATE_ACTIVE) == 0 ? 0 : -1;
}

/*
 * Which rows f's listing reads (schema/015_listing.sql; jobs_state by state,
 * then id).  Several states: the queue's or the history's index where they
 * are all of one, else the table; the page's bound (store_jobs_bound) holds
 * the rows examined either way.
 */
static int
store_jobs_by(const struct store_filter *f)
{
	if (f->id != 0)
		return STORE_BY_ID;
	if (f->state != NULL && strchr(f->state, ',') == NULL)
		return STORE_BY_STATE;
	if (f->state != NULL && store_states_active(f->state) == 1 && !f->finished)
		return STORE_BY_ACTIVE;
	if (f->state != NULL && store_states_active(f->state) == 0)
		return STORE_BY_FINISHED;
	if (!f->all && !f->finished && f->state == NULL)
		return STORE_BY_ACTIVE;
	return f->finished ? STORE_BY_FINISHED : STORE_BY_TABLE;
}

int
store_jobs(struct store *st, const struct store_filter *f, store_row_cb cb, void *arg)
{
	static const char *const sql[] = {
		[STORE_BY_ID] = STORE_JOBS_SELECT "WHERE " STORE_JOBS_WHERE,
		[STORE_BY_STATE] = STORE_JOBS_SELECT STORE_BY_STATE_FROM STORE_JOBS_WHERE,
		[STORE_BY_ACTIVE] = STORE_JOBS_SELECT STORE_BY_ACTIVE_FROM STORE_JOBS_WHERE,
		[STORE_BY_FINISHED] = STORE_JOBS_SELECT STORE_BY_FINISHED_FROM STORE_JOBS_WHERE,
		[STORE_BY_TABLE] = STORE_JOBS_SELECT "WHERE " STORE_JOBS_WHERE,
	};
	sqlite3_stmt *s;

	if ((s = store_prepare(st, sql[store_jobs_by(f)])) == NULL)
		return -1;
	sqlite3_bind_int64(s, 1, f->id);
	sqlite3_bind_text(s, 2, f->user, -1, SQLITE_STATIC);
	sqlite3_bind_text(s, 3, f->state, -1, SQLITE_STATIC);
	sqlite3_bind_int(s, 4, f->all);
	sqlite3_bind_int(s, 5, f->finished);
	sqlite3_bind_double(s, 6, f->since);
	/* one job (f->id): a range of the rowid, so that it is a lookup and not a scan */
	sqlite3_bind_int64(s, 7, f->id != 0 && f->id - 1 > f->after ? f->id - 1 : f->after);
	sqlite3_bind_int64(s, 8, f->id != 0 ? f->id : f->upto > 0 ? f->upto : INT64_MAX);
	return store_rows(st, s, cb, arg);
}

int
store_jobs_bound(struct store *st, const struct store_filter *f, int n, int64_t *upto)
{
	static const char *const sql[] = {
		[STORE_BY_STATE] = "SELECT id FROM jobs " STORE_BY_STATE_FROM "id > ?1 ORDER BY id "
		"LIMIT 1 OFFSET ?2",
		[STORE_BY_ACTIVE] = "SELECT id FROM jobs " STORE_BY_ACTIVE_FROM "id > ?1 ORDER BY id "
		"LIMIT 1 OFFSET ?2",
		[STORE_BY_FINISHED] = "SELECT id FROM jobs " STORE_BY_FINISHED_FROM "id > ?1 ORDER BY id "
		"LIMIT 1 OFFSET ?2",
		[STORE_BY_TABLE] = "SELECT id FROM jobs WHERE id > ?1 ORDER BY id LIMIT 1 OFFSET ?2",
	};
	sqlite3_stmt *s;
	int by = store_jobs_by(f), rc;

	*upto = 0;
	if (by == STORE_BY_ID || n <= 0)
		return 0;
	if ((s = store_prepare(st, sql[by])) == NULL)
		return -1;
	sqlite3_bind_int64(s, 1, f->after);
	sqlite3_bind_int(s, 2, n - 1);
	sqlite3_bind_text(s, 3, f->state, -1, SQLITE_STATIC);
	if ((rc = sqlite3_step(s)) == SQLITE_ROW)
		*upto = sqlite3_column_int64(s, 0);
	sqlite3_reset(s);
	return rc == SQLITE_ROW || rc == SQLITE_DONE ? 0 : -1;
}

int
store_runs(struct store *st, int64_t id, store_row_cb cb, void *arg)
{
	return store_rows_of(st, "SELECT id AS run, gpu_uuids, mem_per_gpu, "
	    "started_at, ended_at, exit_code, signal, cpu_time, max_rss, peak_gpu_mem, "
	    "(SELECT group_concat(gpu_uuid || '=' || peak_gpu_mem, ',') FROM run_gpus "
	    "WHERE run_id = runs.id) AS gpu_peaks, "
	    /* joules, "unknown" where NVML had no counter (never 0); runs before 023: none */
	    "CASE WHEN energy_how IS NULL THEN NULL WHEN energy IS NULL THEN 'unknown' "
	    "ELSE printf('%.3f', energy) END AS energy, energy_how, "
	    "(SELECT group_concat(gpu_uuid || '=' || coalesce(printf('%.3f', energy), 'unknown') "
	    "|| ':' || how, ',') FROM run_energy WHERE run_id = runs.id) AS gpu_energy "
	    "FROM runs WHERE job_id = ? ORDER BY id", id, cb, arg);
}

int
store_usage(struct store *st, double since, double now, store_usage_cb cb, void *arg)
{
	sqlite3_stmt *s;
	int rc;

	/* a run still open counts up to now, less its time suspended so far */
	s = store_prepare(st, "SELECT j.uid, r.gpu_share, r.started_at, "
	    "coalesce(r.ended_at, ?2), CASE WHEN r.ended_at IS NULL THEN j.run_suspended + "
	    "CASE WHEN j.state = 'SUSPENDED' THEN max(0, ?2 - coalesce(j.suspended_at, ?2)) "
	    "ELSE 0 END ELSE r.suspended_time END FROM runs r JOIN jobs j ON j.id = r.job_id "
	    "WHERE (r.ended_at > ?1 OR r.ended_at IS NULL) AND r.gpu_share > 0");
	if (s == NULL)
		return -1;
	sqlite3_bind_double(s, 1, since);
	sqlite3_bind_double(s, 2, now);
	while ((rc = sqlite3_step(s)) == SQLITE_ROW)
		if (cb(arg, (uint32_t)sqlite3_column_int64(s, 0), sqlite3_column_double(s, 1),
		    sqlite3_column_double(s, 2), sqlite3_column_double(s, 3),
		    sqlite3_column_double(s, 4)) != 0)
			break;
	sqlite3_reset(s);
	return rc == SQLITE_ROW || rc == SQLITE_DONE ? 0 : -1;
}

int
store_auto_peak(struct store *st, uint32_t uid, const char *name, const char *command,
    uint64_t *peak, int64_t *from)
{
	/*
	 * Among the last STORE_AUTO_JOBS jobs of the name (or command) and as
	 * many of their arrays' tasks: a submit's cost, on the loop, is not
	 * that of a user's whole history of jobs of one name.
	 */
	static const char *const sql[2] = {
		"SELECT r.peak_gpu_mem, j.id FROM (SELECT id FROM jobs WHERE uid = ?1 AND "
		"name = ?2 ORDER BY id DESC LIMIT " STORE_AUTO_JOBS ") j "
		"JOIN runs r ON r.job_id = j.id WHERE r.state = 'COMPLETED' "
		"AND r.peak_gpu_mem > 0 ORDER BY r.id DESC LIMIT " STORE_AUTO_RUNS,
		/* an array's tasks but its first keep '' (STORE_COMMAND): by its first's */
		"WITH a AS (SELECT id FROM jobs WHERE uid = ?1 AND command = ?2 "
		"ORDER BY id DESC LIMIT " STORE_AUTO_JOBS "), "
		"j AS (SELECT id FROM a UNION ALL SELECT id FROM (SELECT t.id, t.command "
		"FROM a JOIN jobs t ON t.array_id = a.id LIMIT " STORE_AUTO_JOBS ") "
		"WHERE command = '') "
		"SELECT r.peak_gpu_mem, j.id FROM j JOIN runs r ON r.job_id = j.id "
		"WHERE r.state = 'COMPLETED' AND r.peak_gpu_mem > 0 "
		"ORDER BY r.id DESC LIMIT " STORE_AUTO_RUNS,
	};
	sqlite3_stmt *s;
	int k, rc;

	*peak = 0;
	*from = 0;
	for (k = 0; k < 2 && *peak == 0; k++) {
		if ((s = store_prepare(st, sql[k])) == NULL)
			return -1;
		sqlite3_bind_int64(s, 1, uid);
		sqlite3_bind_text(s, 2, k == 0 ? name : command, -1, SQLITE_STATIC);
		while ((rc = sqlite3_step(s)) == SQLITE_ROW)
			if ((uint64_t)sqlite3_column_int64(s, 0) > *peak) {
				*peak = (uint64_t)sqlite3_column_int64(s, 0);
				*from = sqlite3_column_int64(s, 1);
			}
		sqlite3_reset(s);
		if (rc != SQLITE_DONE)
			return -1;
	}
	return *peak > 0;
}

int
store_job_peak(struct store *st, int64_t id, uint64_t *peak, int64_t *mem, int *oom)
{
	sqlite3_stmt *s = store_prepare(st,
	    "SELECT max(r.peak_gpu_mem), j.mem_per_gpu, "
	    "j.state = 'FAILED' AND j.reason LIKE 'out of GPU memory:%' "
	    "FROM jobs j JOIN runs r ON r.job_id = j.id WHERE j.id = ?1");
	int rc, k = 0;

	if (s == NULL)
		return -1;
	sqlite3_bind_int64(s, 1, id);
	if ((rc = sqlite3_step(s)) == SQLITE_ROW && sqlite3_column_type(s, 0) != SQLITE_NULL &&
	    sqlite3_column_int64(s, 0) > 0) {
		*peak = (uint64_t)sqlite3_column_int64(s, 0);
		*mem = sqlite3_column_type(s, 1) == SQLITE_NULL ? 0 : sqlite3_column_int64(s, 1);
		*oom = sqlite3_column_int(s, 2);
		k = 1;
	}
	sqlite3_reset(s);
	return rc == SQLITE_ROW || rc == SQLITE_DONE ? k : -1;
}

/*
 * nvq stats' energy of a group of runs: the joules of those whose energy
 * is known, how many ran on GPUs, how many of those are unknown (no
 * counter, or from before schema 023), and the kWh, 'unknown' where any is.
 */
#define STORE_STATS_ENERGY \
	"coalesce(sum(r.energy), 0.0) AS energy, sum(r.gpus > 0) AS gpu_runs, " \
	"sum(r.gpus > 0 AND r.energy IS NULL) AS energy_unknown, " \
	"CASE WHEN sum(r.gpus > 0 AND r.energy IS NULL) > 0 THEN 'unknown' " \
	"ELSE printf('%.6f', coalesce(sum(r.energy), 0.0) / 3600000.0) END AS kwh "

int
store_stats(struct store *st, int what, double since, const char *user, store_row_cb cb,
    void *arg)
{
	static const char *const sql[STORE_STATS_N] = {
		/* GPU time per user (as fair share counts it), runs, and -m against the peak */
		[STORE_STATS_USERS] =
		"SELECT j.user AS user, count(DISTINCT r.job_id) AS jobs, count(*) AS runs, "
		"sum((r.ended_at - r.started_at - coalesce(r.suspended_time, 0)) * "
		"coalesce(r.gpu_share, r.gpus)) / 3600.0 AS gpu_hours, "
		"sum(r.state IN ('FAILED', 'TIMEOUT', 'NODE_FAIL')) AS failed, "
		"sum(CASE WHEN r.mem_per_gpu > 0 AND r.peak_gpu_mem > 0 THEN 1 ELSE 0 END) "
		"AS measured, "
		"sum(CASE WHEN r.mem_per_gpu > 0 AND r.peak_gpu_mem > 0 THEN r.mem_per_gpu "
		"ELSE 0 END) AS asked, "
		"sum(CASE WHEN r.mem_per_gpu > 0 AND r.peak_gpu_mem > 0 THEN r.peak_gpu_mem "
		"ELSE 0 END) AS used, " STORE_STATS_ENERGY
		"FROM runs r JOIN jobs j ON j.id = r.job_id "
		"WHERE r.ended_at >= ?1 AND (?2 IS NULL OR j.user = ?2) "
		"GROUP BY j.user ORDER BY gpu_hours DESC, j.user",
		/* energy and GPU time per job name, the 20 names of most energy */
		[STORE_STATS_NAMES] =
		"SELECT j.user AS user, j.name AS name, count(*) AS runs, "
		"sum((r.ended_at - r.started_at - coalesce(r.suspended_time, 0)) * "
		"coalesce(r.gpu_share, r.gpus)) / 3600.0 AS gpu_hours, " STORE_STATS_ENERGY
		"FROM runs r JOIN jobs j ON j.id = r.job_id "
		"WHERE r.ended_at >= ?1 AND (?2 IS NULL OR j.user = ?2) AND r.gpus > 0 "
		"GROUP BY j.user, j.name ORDER BY energy DESC, gpu_hours DESC, j.user, j.name "
		"LIMIT 20",
		/* how long jobs waited for their first start: nearest-rank percentiles */
		[STORE_STATS_WAIT] =
		/* the first runs started since: through runs_started, not every job */
		"WITH f AS (SELECT r.started_at - j.submitted_at AS w FROM runs r "
		"JOIN jobs j ON j.id = r.job_id WHERE r.started_at >= ?1 "
		"AND (?2 IS NULL OR j.user = ?2) AND NOT EXISTS (SELECT 1 FROM runs p "
		"WHERE p.job_id = r.job_id AND (p.started_at < r.started_at OR "
		"(p.started_at = r.started_at AND p.id < r.id)))), "
		"o AS (SELECT w, row_number() OVER (ORDER BY w) AS k, count(*) OVER () AS n FROM f) "
		"SELECT count(*) AS started, "
		"coalesce(max(CASE WHEN k = (50 * n + 99) / 100 THEN w END), 0.0) AS p50, "
		"coalesce(max(CASE WHEN k = (90 * n + 99) / 100 THEN w END), 0.0) AS p90, "
		"coalesce(max(CASE WHEN k = (99 * n + 99) / 100 THEN w END), 0.0) AS p99, "
		"coalesce(max(w), 0.0) AS max, coalesce(avg(w), 0.0) AS mean FROM o",
		/* how jobs failed: reasons of a kind together */
		[STORE_STATS_FAILURES] =
		"SELECT state, CASE WHEN reason LIKE 'out of GPU memory:%' THEN 'out of GPU memory' "
		"WHEN reason LIKE 'time limit % reached' THEN 'time limit reached' "
		"WHEN reason LIKE 'cancelled by %' THEN 'cancelled by a user' "
		"WHEN reason LIKE 'dependency % ended %' THEN 'a dependency failed' "
		"ELSE coalesce(reason, '') END AS why, count(*) AS count FROM jobs "
		/* the window's failures (schema/019_stats.sql), not every failure since */
		"INDEXED BY jobs_failed_ended WHERE ended_at >= ?1 AND (?2 IS NULL OR user = ?2) "
		"AND state IN ('FAILED', 'TIMEOUT', 'NODE_FAIL', 'CANCELLED') "
		"GROUP BY state, why ORDER BY count DESC, state, why LIMIT 20",
		/* suspends and resumes: how many, how long, how much they moved */
		[STORE_STATS_SWITCHES] =
		"SELECT s.kind AS kind, count(*) AS count, sum(s.ok) AS ok, "
		"avg(s.seconds) AS mean_s, max(s.seconds) AS max_s, "
		"coalesce(sum(s.bytes), 0) AS bytes FROM switches s JOIN jobs j ON j.id = s.job_id "
		"WHERE s.ended_at >= ?1 AND (?2 IS NULL OR j.user = ?2) GROUP BY s.kind "
		"ORDER BY s.kind DESC",
	};
	sqlite3_stmt *s;

	if (what < 0 || what >= STORE_STATS_N || (s = store_prepare(st, sql[what])) == NULL)
		return -1;
	sqlite3_bind_double(s, 1, since);
	sqlite3_bind_text(s, 2, user, -1, SQLITE_STATIC);
	return store_rows(st, s, cb, arg);
}

int
store_notice(struct store *st, int64_t id, store_notice_cb cb, void *arg)
{
	sqlite3_stmt *s = store_prepare(st, "SELECT uid, gid, user, name, cwd, state, "
	    "exit_code, signal, reason, stdout_path, stderr_path, notify, mail_user "
	    "FROM jobs WHERE id = ?");
	struct store_notice n;
	int rc;

	if (s == NULL)
		return -1;
	sqlite3_bind_int64(s, 1, id);
	if ((rc = sqlite3_step(s)) == SQLITE_ROW) {
		memset(&n, 0, sizeof(n));
		n.id = id;
		n.uid = (uint32_t)sqlite3_column_int64(s, 0);
		n.gid = (uint32_t)sqlite3_column_int64(s, 1);
		n.user = (const char *)sqlite3_column_text(s, 2);
		n.name = (const char *)sqlite3_column_text(s, 3);
		n.cwd = (const char *)sqlite3_column_text(s, 4);
		n.state = (const char *)sqlite3_column_text(s, 5);
		n.exit_code = sqlite3_column_type(s, 6) == SQLITE_NULL ? -1 :
		    sqlite3_column_int(s, 6);
		n.signal = sqlite3_column_int(s, 7);
		n.reason = (const char *)sqlite3_column_text(s, 8);
		n.out = (const char *)sqlite3_column_text(s, 9);
		n.err = (const char *)sqlite3_column_text(s, 10);
		n.notify = (const char *)sqlite3_column_text(s, 11);
		n.mail_user = (const char *)sqlite3_column_text(s, 12);
		cb(arg, &n);
	}
	sqlite3_reset(s);
	return rc == SQLITE_ROW || rc == SQLITE_DONE ? 0 : -1;
}

int
store_job_slurm(struct store *st, int64_t id, int64_t slurm_id, const char *step, double now,
    const char *why)
{
	sqlite3_stmt *s;

	if (store_begin(st) == -1)
		return -1;
	if ((s = store_prepare(st, "UPDATE jobs SET slurm_id = ?, slurm_step = ? WHERE id = ? "
	    "AND state = 'PENDING'")) == NULL)
		goto fail;
	sqlite3_bind_int64(s, 1, slurm_id);
	sqlite3_bind_text(s, 2, step, -1, SQLITE_STATIC);
	sqlite3_bind_int64(s, 3, id);
	if (store_done(st, s) == -1 || sqlite3_changes(st->db) != 1 ||
	    store_event(st, id, now, "PENDING", why) == -1)
		goto fail;
	return store_commit(st);
fail:
	store_rollback(st);
	return -1;
}

int
store_event_add(struct store *st, int64_t id, double at, const char *state, const char *reason)
{
	int r;

	if (store_lazy_begin(st) == -1) {
		store_lazy_commit(st);
		return -1;
	}
	r = store_event(st, id, at, state, reason);
	if (r == -1)
		st->doomed = 1;		/* rolled back by the commit */
	return store_lazy_commit(st) == -1 ? -1 : r;
}

int
store_array_show(struct store *st, int64_t array, store_row_cb cb, void *arg)
{
	if (store_rows_of(st, "SELECT count(*) AS tasks, state AS task_state FROM jobs "
	    "INDEXED BY jobs_array_task WHERE array_id = ? GROUP BY state ORDER BY state",
	    array, cb, arg) == -1)
		return -1;
	if (store_rows_of(st, "SELECT id AS task, array_index AS task_index, state AS "
	    "task_state, coalesce(reason, '') AS task_reason FROM jobs INDEXED BY "
	    "jobs_array_task WHERE array_id = ? ORDER BY array_index LIMIT "
	    "50", array, cb, arg) == -1)
		return -1;
	return store_rows_of(st, "SELECT id AS failed, state AS failed_state, "
	    "coalesce(exit_code, -1) AS failed_code, coalesce(signal, 0) AS failed_signal "
	    "FROM jobs INDEXED BY jobs_array_task WHERE array_id = ? AND state NOT IN "
	    "('PENDING', 'RUNNING', 'SUSPENDED', 'COMPLETED') ORDER BY array_index LIMIT 1",
	    array, cb, arg);
}

int
store_events(struct store *st, int64_t id, store_row_cb cb, void *arg)
{
	return store_rows_of(st, "SELECT at, state, reason FROM events "
	    "WHERE job_id = ? ORDER BY id", id, cb, arg);
}

struct store_exec_ctx {
	store_exec_cb	cb;
	void		*arg;
};

/* The row of store_job_exec's SELECT into a struct. */
static int
store_exec_row_cb(void *arg, const struct store_col *c, int n)
{
	struct store_exec_ctx *x = arg;
	struct store_job_exec r;

	if (n < 13)
		return 1;
	memset(&r, 0, sizeof(r));
	r.argv = c[0].type == STORE_BLOB ? c[0].s : NULL;
	r.argv_len = c[0].type == STORE_BLOB ? c[0].len : 0;
	r.cwd = c[1].s;
	r.stdout_path = c[2].s;
	r.stderr_path = c[3].s;
	r.uid = (uint32_t)c[4].i;
	r.gid = (uint32_t)c[5].i;
	r.user = c[6].s;
	/* an empty blob comes back as NULL bytes, an empty text as "" */
	if (c[7].type == STORE_BLOB || (c[7].type == STORE_TEXT && c[7].len == 0)) {
		r.env = c[7].s != NULL ? c[7].s : "";
		r.env_len = c[7].len;
	}
	r.groups = c[8].type == STORE_TEXT ? c[8].s : NULL;
	r.name = c[9].s;
	r.gpus = (int)c[10].i;
	r.mem = c[11].type == STORE_NULL ? 0 : (uint64_t)c[11].i;
	r.time_limit = c[12].type == STORE_NULL ? 0 : c[12].i;
	if (n >= 16) {
		r.cpus = (int)c[13].i;
		r.host_mem = (uint64_t)c[14].i;
		r.mem_per_cpu = (uint64_t)c[15].i;
	}
	if (n >= 20 && c[16].type != STORE_NULL) {
		r.array_count = c[16].i;
		r.array_min = c[17].i;
		r.array_max = c[18].i;
		r.array_step = c[19].i;
	}
	if (n >= 25) {
		r.partition = c[20].s;
		r.account = c[21].s;
		r.warn_sig = c[22].type == STORE_NULL ? 0 : (int)c[22].i;
		r.warn_time = (int)c[23].i;
		r.warn_batch = c[24].i != 0;
	}
	return x->cb(x->arg, &r);
}

int
store_job_exec(struct store *st, int64_t id, store_exec_cb cb, void *arg)
{
	struct store_exec_ctx x = { cb, arg };

	return store_rows_of(st, "SELECT " STORE_ARGV " AS argv, cwd, stdout_path, "
	    "stderr_path, uid, gid, user, coalesce((SELECT env FROM private.job_env WHERE "
	    "job_id = jobs.id), (SELECT a.env FROM private.task_env t JOIN private.array_env a "
	    "ON a.array_id = t.array_id WHERE t.job_id = jobs.id)) AS env, "
	    "groups, name, gpus, mem_per_gpu, time_limit, coalesce(cpus, 0), coalesce(host_mem, 0), "
	    "coalesce(mem_per_cpu, 0), array_count, array_min, array_max, array_step, "
	    "partition, account, warn_signal, coalesce(warn_time, 0), coalesce(warn_batch, 0) "
	    "FROM jobs WHERE id = ?", id,
	    store_exec_row_cb, &x);
}

int
store_web_token(struct store *st, uint32_t uid, int renew, char *token, size_t len)
{
	sqlite3_stmt *s;
	unsigned char rnd[STORE_TOKEN_BYTES];
	size_t i;
	int rc;

	if (len < 2 * STORE_TOKEN_BYTES + 1)
		return -1;
	if (!renew) {
		if ((s = store_prepare(st, "SELECT token FROM private.web_tokens WHERE uid = ?"))
		    == NULL)
			return -1;
		sqlite3_bind_int64(s, 1, uid);
		rc = sqlite3_step(s);
		if (rc == SQLITE_ROW)
			snprintf(token, len, "%s", (const char *)sqlite3_column_text(s, 0));
		sqlite3_reset(s);
		if (rc == SQLITE_ROW)
			return 0;
		if (rc != SQLITE_DONE)
			return -1;
	}
	if (getrandom(rnd, sizeof(rnd), 0) != (ssize_t)sizeof(rnd))
		return -1;
	for (i = 0; i < sizeof(rnd); i++)
		snprintf(token + 2 * i, 3, "%02x", rnd[i]);
	if ((s = store_prepare(st, "INSERT OR REPLACE INTO private.web_tokens (uid, token) "
	    "VALUES (?, ?)")) == NULL)
		return -1;
	sqlite3_bind_int64(s, 1, uid);
	sqlite3_bind_text(s, 2, token, -1, SQLITE_STATIC);
	return store_done(st, s);
}

int
store_web_uid(struct store *st, const char *token, uint32_t *uid)
{
	sqlite3_stmt *s;
	int rc;

	if (token == NULL || strlen(token) != 2 * STORE_TOKEN_BYTES)
		return 0;
	if ((s = store_prepare(st, "SELECT uid FROM private.web_tokens WHERE token = ?")) == NULL)
		return -1;
	sqlite3_bind_text(s, 1, token, -1, SQLITE_STATIC);
	rc = sqlite3_step(s);
	if (rc == SQLITE_ROW)
		*uid = (uint32_t)sqlite3_column_int64(s, 0);
	sqlite3_reset(s);
	return rc == SQLITE_ROW ? 1 : rc == SQLITE_DONE ? 0 : -1;
}

int
store_hist(struct store *st, int runs, store_row_cb cb, void *arg)
{
	/* +Inf as text: a REAL infinity would not convert to the column's integer */
	sqlite3_stmt *s = store_prepare(st, "SELECT CASE WHEN b.le > 1e300 THEN '+Inf' "
	    "ELSE b.le END AS le, b.n AS n, m.sum AS sum FROM metric_buckets b "
	    "JOIN metric_sums m ON m.kind = b.kind WHERE b.kind = ? ORDER BY b.le");

	if (s == NULL)
		return -1;
	sqlite3_bind_text(s, 1, runs ? "run" : "wait", -1, SQLITE_STATIC);
	return store_rows(st, s, cb, arg);
}

int
store_state_counts(struct store *st, store_row_cb cb, void *arg)
{
	return store_rows(st, store_prepare(st, "SELECT state, n FROM metric_jobs "
	    "ORDER BY state"), cb, arg);
}

int
store_switch_counts(struct store *st, store_row_cb cb, void *arg)
{
	return store_rows(st, store_prepare(st, "SELECT kind, ok, n, seconds "
	    "FROM metric_switches ORDER BY kind DESC, ok DESC"), cb, arg);
}
