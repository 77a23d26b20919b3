/*
 * store.c: SQLite access for nvqd (see store.h): opening the database and
 * its schema, transactions (store_tx), the reserve kept for a full disk,
 * prepared statements.  Statements are prepared when used (sqlite keeps
 * them cheap at this scale); each change runs in one transaction, so a
 * crash leaves either all of it or none.  A job's rows change in
 * store_job.c; what the front ends read is in store_query.c; what the
 * three share, in store_int.h.
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

/* Logs a failure and keeps its sentence for store_errmsg. */
void
store_warn(struct store *st, const char *what, const char *msg)
{
	snprintf(st->lasterr, sizeof(st->lasterr), "%s", msg);
	st->full = sqlite3_errcode(st->db) == SQLITE_FULL;
	if (what != NULL)
		log_warnx("database: %s: %s", what, msg);
	else
		log_warnx("database: %s", msg);
}

int
store_exec(struct store *st, const char *sql)
{
	char *msg = NULL;

	if (sqlite3_exec(st->db, sql, NULL, NULL, &msg) != SQLITE_OK) {
		store_warn(st, sql, msg ? msg : "?");
		sqlite3_free(msg);
		return -1;
	}
	return 0;
}

/*
 * Transactions nest: only the outermost begins and commits, so that the
 * engine can group the changes of one pass into one commit (one fsync).
 * A failure inside makes the outermost commit roll everything back.
 */
int
store_begin(struct store *st)
{
	st->begins++;
	if (st->depth++ > 0)
		return 0;
	st->doomed = 0;
	if (store_exec(st, "BEGIN IMMEDIATE") == -1) {
		st->depth = 0;
		return -1;
	}
	return 0;
}

int
store_commit(struct store *st)
{
	if (st->depth == 0 || --st->depth > 0)
		return st->doomed ? -1 : 0;
	if (st->doomed) {
		store_exec(st, "ROLLBACK");
		return -1;
	}
	if (store_exec(st, "COMMIT") == -1) {
		/* SQLite may have rolled back already (SQLITE_FULL does) */
		if (!sqlite3_get_autocommit(st->db))
			sqlite3_exec(st->db, "ROLLBACK", NULL, NULL, NULL);
		return -1;
	}
	return 0;
}

void
store_rollback(struct store *st)
{
	if (st->depth == 0)
		return;
	if (--st->depth > 0) {
		st->doomed = 1;
		return;
	}
	if (!sqlite3_get_autocommit(st->db))
		sqlite3_exec(st->db, "ROLLBACK", NULL, NULL, NULL);
}

int
store_tx_begin(struct store *st)
{
	return store_begin(st);
}

int
store_tx_commit(struct store *st)
{
	return store_commit(st);
}

unsigned long
store_begins(const struct store *st)
{
	return st->begins;
}


/*
 * fn in one transaction: all of it or none.  must: what has to be recorded
 * even on a full disk (an end, a requeue) is tried again with the reserve,
 * a quarter of it at a time, until it is spent; a user's change (hold,
 * release) never takes the reserve, which a user looping hold and release
 * on a full disk would spend.
 */
int
store_tx(struct store *st, store_op_fn fn, const struct store_op *op, int must)
{
	int r;

	do {
		if ((r = store_begin(st)) == -1)
			continue;
		if (fn(st, op) == -1) {
			store_rollback(st);
			r = -1;
		} else
			r = store_commit(st);
	} while (r == -1 && must && store_reserve_use(st));
	return r;
}

/*
 * The reserve: a file beside the database whose blocks are allocated, so
 * that a user who fills the disk (environments, a job's output) cannot stop
 * nvqd from recording ends and cancels.  A write that must not fail and
 * found the disk full gives a quarter of it back and is tried again;
 * submits are refused until there is room to make it whole again
 * (store_room).  It is STORE_RESERVE, or a sixteenth of a small file system.
 * Its size, once known, stays the headroom submits keep (store_headroom)
 * even while the file could not be made: a disk full at start-up (the
 * reserve spent, nvqd restarted) has it made once there is room.  0, or -1
 * where it can never be made here (the file system allocates no blocks
 * ahead, or the file cannot be created): then there is nothing to keep.
 */
static int
store_reserve_make(struct store *st)
{
	char dir[PATH_MAX + 16], *slash;
	struct statvfs sv;
	struct stat sb;
	int fd, err;

	if (st->reserve_size == 0) {
		snprintf(dir, sizeof(dir), "%s", st->reserve);
		if ((slash = strrchr(dir, '/')) != NULL)
			*slash = '\0';
		if (statvfs(slash != NULL ? dir : ".", &sv) == -1)
			return -1;
		st->reserve_size = STORE_RESERVE;
		if ((uint64_t)sv.f_blocks * sv.f_frsize / 16 < STORE_RESERVE)
			st->reserve_size = (off_t)((uint64_t)sv.f_blocks * sv.f_frsize / 16);
	}
	if ((fd = open(st->reserve, O_WRONLY | O_CREAT | O_CLOEXEC | O_NOFOLLOW, 0600)) == -1)
		return errno == ENOSPC || errno == EDQUOT ? 0 : -1;
	if ((err = posix_fallocate(fd, 0, st->reserve_size)) == 0)
		st->reserved = st->reserve_size;
	else if (fstat(fd, &sb) == 0 && sb.st_size < st->reserve_size)
		st->reserved = sb.st_size;	/* what a spent reserve kept: still usable */
	close(fd);
	if (err == 0 || err == ENOSPC || err == EDQUOT || err == EFBIG)
		return 0;
	errno = err;	/* for log_warn */
	return -1;
}

/* After a failure: 1 if the disk was full and part of the reserve is now free for a retry. */
int
store_reserve_use(struct store *st)
{
	if (!st->full || st->reserved == 0 || st->depth > 0)
		return 0;
	if (st->reserved == st->reserve_size)
		log_warnx("the disk holding the database is full: its reserve for ends and "
		    "cancels is in use, and submits are refused until there is room again");
	st->reserved -= st->reserve_size / 4 > 0 ? st->reserve_size / 4 : st->reserved;
	if (st->reserved < 0 || truncate(st->reserve, st->reserved) == -1)
		st->reserved = 0;
	if (st->reserved == 0)
		unlink(st->reserve);
	return 1;
}

int
store_room(struct store *st)
{
	char dir[PATH_MAX + 16], *slash;
	struct statvfs sv;

	if (st->reserve_size == 0 || st->reserved == st->reserve_size)
		return 1;	/* whole, or none can ever be made: nothing to keep */
	snprintf(dir, sizeof(dir), "%s", st->reserve);
	if ((slash = strrchr(dir, '/')) != NULL)
		*slash = '\0';
	if (statvfs(slash != NULL ? dir : ".", &sv) == 0 &&
	    (uint64_t)sv.f_bavail * sv.f_frsize >= 2ull * (uint64_t)st->reserve_size) {
		store_reserve_make(st);
		if (st->reserved == st->reserve_size)
			log_info("the database's disk has room again: its reserve is whole");
	}
	return st->reserved == st->reserve_size;
}

sqlite3_stmt *
store_prepare(struct store *st, const char *sql)
{
	sqlite3_stmt *s = NULL;
	size_t h = ((uintptr_t)sql >> 3) % STORE_CACHE, k;

	for (k = 0; k < STORE_CACHE; k++, h = (h + 1) % STORE_CACHE) {
		if (st->sql[h] == sql)
			return st->stmt[h];
		if (st->sql[h] == NULL)
			break;
	}
	if (sqlite3_prepare_v3(st->db, sql, -1, SQLITE_PREPARE_PERSISTENT, &s, NULL) !=
	    SQLITE_OK) {
		store_warn(st, "prepare", sqlite3_errmsg(st->db));
		return NULL;
	}
	if (k < STORE_CACHE) {
		st->sql[h] = sql;
		st->stmt[h] = s;
	}
	return s;
}

/* Makes a statement ready for its next use (or frees it if it is not cached). */
void
store_release(struct store *st, sqlite3_stmt *s)
{
	size_t k;

	for (k = 0; k < STORE_CACHE; k++)
		if (st->stmt[k] == s) {
			sqlite3_reset(s);
			sqlite3_clear_bindings(s);
			return;
		}
	sqlite3_finalize(s);
}

/* Steps a statement that returns no rows, then releases it. */
int
store_done(struct store *st, sqlite3_stmt *s)
{
	int rc;

	if (s == NULL)
		return -1;
	rc = sqlite3_step(s);
	store_release(st, s);
	if (rc != SQLITE_DONE) {
		store_warn(st, NULL, sqlite3_errmsg(st->db));
		return -1;
	}
	return 0;
}

int
store_rows(struct store *st, sqlite3_stmt *s, store_row_cb cb, void *arg)
{
	struct store_col cols[STORE_MAX_COLS];
	int rc, n, i;

	if (s == NULL)
		return -1;
	/* a query of more columns is a bug: said, not cut short */
	if ((n = sqlite3_column_count(s)) > STORE_MAX_COLS) {
		store_warn(st, "rows", "a query of more columns than STORE_MAX_COLS");
		return -1;
	}
	while ((rc = sqlite3_step(s)) == SQLITE_ROW) {
		for (i = 0; i < n; i++) {
			memset(&cols[i], 0, sizeof(cols[i]));
			cols[i].name = sqlite3_column_name(s, i);
			switch (sqlite3_column_type(s, i)) {
			case SQLITE_INTEGER:
				cols[i].type = STORE_INT;
				cols[i].i = sqlite3_column_int64(s, i);
				cols[i].r = (double)cols[i].i;
				break;
			case SQLITE_FLOAT:
				cols[i].type = STORE_REAL;
				cols[i].r = sqlite3_column_double(s, i);
				cols[i].i = (int64_t)cols[i].r;
				break;
			case SQLITE_TEXT:
				cols[i].type = STORE_TEXT;
				cols[i].s = (const char *)sqlite3_column_text(s, i);
				cols[i].len = sqlite3_column_bytes(s, i);
				break;
			case SQLITE_BLOB:
				cols[i].type = STORE_BLOB;
				cols[i].s = sqlite3_column_blob(s, i);
				cols[i].len = sqlite3_column_bytes(s, i);
				break;
			default:
				cols[i].type = STORE_NULL;
			}
		}
		if (cb(arg, cols, n) != 0) {
			rc = SQLITE_DONE;
			break;
		}
	}
	store_release(st, s);
	if (rc != SQLITE_DONE) {
		store_warn(st, NULL, sqlite3_errmsg(st->db));
		return -1;
	}
	return 0;
}

static int
store_mkdirs(const char *path)
{
	char buf[PATH_MAX], *p;

	if (strlen(path) >= sizeof(buf))
		return -1;
	strcpy(buf, path);
	if ((p = strrchr(buf, '/')) == NULL || p == buf)
		return 0;
	*p = '\0';
	for (p = buf + 1; *p; p++) {
		if (*p != '/')
			continue;
		*p = '\0';
		if (mkdir(buf, 0755) == -1 && errno != EEXIST)
			return -1;
		*p = '/';
	}
	if (mkdir(buf, 0755) == -1 && errno != EEXIST)
		return -1;
	return 0;
}

/* 0 if every foreign key still points at a row (after a migration), else -1. */
static int
store_fk_check(struct store *st)
{
	sqlite3_stmt *s;
	int rc;

	if (sqlite3_prepare_v2(st->db, "PRAGMA foreign_key_check", -1, &s, NULL) != SQLITE_OK)
		return -1;
	rc = sqlite3_step(s);
	sqlite3_finalize(s);
	return rc == SQLITE_DONE ? 0 : -1;
}

static int
store_migrate(struct store *st, char *err, size_t errlen)
{
	char sql[64];
	int have = store_version(st), want = 0, v;

	while (store_schema[want] != NULL)
		want++;
	if (have > want) {
		snprintf(err, errlen, "the database is at schema version %d, newer than "
		    "this nvqd's %d; use a newer nvqd", have, want);
		return -1;
	}
	for (v = have; v < want; v++) {
		if (store_begin(st) == -1)
			goto fail;
		snprintf(sql, sizeof(sql), "PRAGMA user_version = %d", v + 1);
		if (store_exec(st, store_schema[v]) == -1 || store_exec(st, sql) == -1 ||
		    store_fk_check(st) == -1) {
			store_rollback(st);
			goto fail;
		}
		if (store_commit(st) == -1)
			goto fail;
		log_info("database: applied schema version %d", v + 1);
	}
	return 0;
fail:
	snprintf(err, errlen, "cannot apply schema version %d: %s", v + 1,
	    sqlite3_errmsg(st->db));
	return -1;
}

/*
 * Environments come and go by the megabyte: the private database gives its
 * free pages back (incremental auto-vacuum), so that what a user once
 * submitted does not hold the disk after the jobs are gone.  An older file
 * is converted once, by a VACUUM (it holds only the active environments).
 */
static int
store_private_vacuum_mode(struct store *st)
{
	sqlite3_stmt *s = store_prepare(st, "PRAGMA private.auto_vacuum");
	int mode = -1;

	if (s == NULL)
		return -1;
	if (sqlite3_step(s) == SQLITE_ROW)
		mode = sqlite3_column_int(s, 0);
	store_release(st, s);
	if (mode == 2)
		return 0;
	if (store_exec(st, "PRAGMA private.journal_mode = DELETE") == -1 ||
	    store_exec(st, "PRAGMA private.auto_vacuum = INCREMENTAL") == -1)
		return -1;
	return store_exec(st, "VACUUM private");
}

/*
 * Attaches <path>.private, made 0600 before SQLite ever opens it.  Its
 * tables: job_env, a job's own environment; array_env, one environment
 * that several jobs share (an array's, by its id; a restart's, by a key
 * below 0), each of which has a task_env row while it is active; jobs_copy
 * (store_restore); web_tokens.
 */
static int
store_private(struct store *st, const char *path, char *err, size_t errlen)
{
	char priv[PATH_MAX + 16];
	sqlite3_stmt *s;
	int fd;

	snprintf(priv, sizeof(priv), "%s.private", path);
	if ((fd = open(priv, O_RDWR | O_CREAT | O_CLOEXEC, 0600)) == -1) {
		snprintf(err, errlen, "%s: %s", priv, strerror(errno));
		return -1;
	}
	fchmod(fd, 0600);
	close(fd);
	if ((s = store_prepare(st, "ATTACH DATABASE ? AS private")) == NULL)
		goto fail;
	sqlite3_bind_text(s, 1, priv, -1, SQLITE_STATIC);
	if (store_done(st, s) == -1 || store_private_vacuum_mode(st) == -1 ||
	    store_exec(st, "PRAGMA private.journal_mode = WAL") == -1 ||
	    store_exec(st, "PRAGMA private.journal_size_limit = 1048576") == -1 ||
	    store_exec(st, st->sync_full ? "PRAGMA private.synchronous = FULL" :
	    "PRAGMA private.synchronous = NORMAL") == -1 ||
	    store_exec(st, "CREATE TABLE IF NOT EXISTS private.job_env ("
	    "job_id INTEGER PRIMARY KEY, env BLOB NOT NULL)") == -1 ||
	    store_exec(st, "CREATE TABLE IF NOT EXISTS private.array_env ("
	    "array_id INTEGER PRIMARY KEY, env BLOB NOT NULL)") == -1 ||
	    store_exec(st, "CREATE TABLE IF NOT EXISTS private.task_env ("
	    "job_id INTEGER PRIMARY KEY, array_id INTEGER NOT NULL)") == -1 ||
	    store_exec(st, "CREATE INDEX IF NOT EXISTS private.task_env_array ON "
	    "task_env (array_id)") == -1 ||
	    store_exec(st, "CREATE TABLE IF NOT EXISTS private.web_tokens ("
	    "uid INTEGER PRIMARY KEY, token TEXT NOT NULL UNIQUE)") == -1)
		goto fail;
	return 0;
fail:
	snprintf(err, errlen, "%s: %s", priv, sqlite3_errmsg(st->db));
	return -1;
}

/* Copies made by an older nvqd lack the newer columns: added. */
static int
store_copy_columns(struct store *st)
{
	static const char *const cols[] = { "array_id", "array_index", "array_limit", "held",
	    "gpus_allow", "gpus_deny", "notify", "mail_user", "cpus", "host_mem",
	    "mem_per_cpu", "qos", "lc", "array_count", "array_min", "array_max", "array_step",
	    "warn_signal", "warn_time", "warn_batch", "partition", "account" };
	sqlite3_stmt *s;
	char sql[128];
	size_t i;
	int have;

	for (i = 0; i < sizeof(cols) / sizeof(cols[0]); i++) {
		if ((s = store_prepare(st, "SELECT count(*) FROM pragma_table_info('jobs_copy', "
		    "'private') WHERE name = ?")) == NULL)
			return -1;
		sqlite3_bind_text(s, 1, cols[i], -1, SQLITE_STATIC);
		have = sqlite3_step(s) == SQLITE_ROW && sqlite3_column_int(s, 0) > 0;
		store_release(st, s);
		/* no type, as the table's own columns: a text such as a partition "0123" stays text */
		snprintf(sql, sizeof(sql), "ALTER TABLE private.jobs_copy ADD COLUMN %s", cols[i]);
		if (!have && store_exec(st, sql) == -1)
			return -1;
	}
	return 0;
}

/*
 * Puts back the submitted jobs whose rows a power cut (or a crash between
 * the two commits of store_jobs_insert) took from the main database, from
 * their copies, each with its first event.  The main database's commit is
 * synced before the private one empties the copies.
 */
static int
store_restore(struct store *st)
{
	int n;

	if (store_exec(st, "CREATE TABLE IF NOT EXISTS private.jobs_copy ("
	    "id INTEGER PRIMARY KEY, " STORE_JOB_REST ")") == -1 ||
	    store_copy_columns(st) == -1 || store_begin(st) == -1)
		return -1;
	if (store_exec(st, "INSERT INTO jobs (state, " STORE_JOB_COLS ") SELECT 'PENDING', "
	    STORE_JOB_COLS " FROM private.jobs_copy WHERE id NOT IN (SELECT id FROM jobs)") == -1)
		goto fail;
	n = sqlite3_changes(st->db);
	if (store_exec(st, "INSERT INTO events (job_id, at, state, reason) SELECT c.id, "
	    "c.submitted_at, 'PENDING', 'submitted' FROM private.jobs_copy c "
	    "WHERE NOT EXISTS (SELECT 1 FROM events WHERE job_id = c.id)") == -1 ||
	    store_exec(st, "DELETE FROM private.jobs_copy") == -1)
		goto fail;
	if (store_commit(st) == -1)
		return -1;
	if (n > 0)
		log_warnx("database: %d submitted job%s put back from the private database "
		    "(the main one had lost them, as in a power cut)", n, n == 1 ? "" : "s");
	return 0;
fail:
	store_rollback(st);
	return -1;
}

/*
 * After each commit, with the pages now in a database's log: past
 * CHECKPOINT_PAGES, the checkpoint thread copies them back, so that the
 * loop's commits never do (SQLite's auto-checkpoint is off with this hook).
 */
static int
store_wal_cb(void *arg, sqlite3 *db, const char *name, int pages)
{
	struct store *st = arg;

	(void)db;
	if (pages >= CHECKPOINT_PAGES)
		checkpoint_kick(st->ckpt, strcmp(name, "private") == 0 ? CHECKPOINT_PRIVATE :
		    CHECKPOINT_MAIN);
	return SQLITE_OK;
}

struct store *
store_open(const char *path, int sync_full, char *err, size_t errlen)
{
	struct store *st;
	int rc;

	if (store_mkdirs(path) == -1) {
		snprintf(err, errlen, "%s: cannot create its folder: %s", path, strerror(errno));
		return NULL;
	}
	if ((st = calloc(1, sizeof(*st))) == NULL) {
		snprintf(err, errlen, "out of memory");
		return NULL;
	}
	/*
	 * nvqd uses its connection from its loop's thread alone (the web
	 * server runs in the loop too): no mutex around each call, and no
	 * count of SQLite's memory under a global one (before SQLite starts;
	 * refused harmlessly if it has).
	 */
	sqlite3_config(SQLITE_CONFIG_MEMSTATUS, 0);
	rc = sqlite3_open_v2(path, &st->db, SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE |
	    SQLITE_OPEN_NOMUTEX, NULL);
	if (rc != SQLITE_OK) {
		snprintf(err, errlen, "%s: %s", path, st->db ? sqlite3_errmsg(st->db) :
		    "cannot open");
		goto fail;
	}
	sqlite3_busy_timeout(st->db, 5000);
	st->sync_full = sync_full;
	if (store_exec(st, "PRAGMA journal_mode = WAL") == -1 ||
	    store_exec(st, sync_full ? "PRAGMA synchronous = FULL" :
	    "PRAGMA synchronous = NORMAL") == -1) {
		snprintf(err, errlen, "%s: %s", path, sqlite3_errmsg(st->db));
		goto fail;
	}
	/* off while a migration rebuilds a table (SQLite's documented way) */
	if (store_migrate(st, err, errlen) == -1)
		goto fail;
	if (store_exec(st, "PRAGMA foreign_keys = ON") == -1) {
		snprintf(err, errlen, "%s: %s", path, sqlite3_errmsg(st->db));
		goto fail;
	}
	if (store_private(st, path, err, errlen) == -1)
		goto fail;
	if (store_restore(st) == -1) {
		snprintf(err, errlen, "%s: cannot restore submitted jobs from the private "
		    "database: %s", path, sqlite3_errmsg(st->db));
		goto fail;
	}
	snprintf(st->reserve, sizeof(st->reserve), "%s.reserve", path);
	if (store_reserve_make(st) == -1) {
		log_warn("%s: cannot reserve room for recording ends and cancels on a "
		    "full disk", st->reserve);
		st->reserve_size = 0;
	} else if (st->reserved < st->reserve_size)
		log_warnx("%s: the disk is full: the reserve kept for ends and cancels is not "
		    "whole; submits are refused until there is room to make it", st->reserve);
	/* environments of jobs that ended, or whose submit never committed */
	store_exec(st, "DELETE FROM private.job_env WHERE job_id NOT IN "
	    "(SELECT id FROM jobs WHERE state IN ('PENDING', 'RUNNING', 'SUSPENDED'))");
	store_exec(st, "DELETE FROM private.task_env WHERE job_id NOT IN "
	    "(SELECT id FROM jobs WHERE state IN ('PENDING', 'RUNNING', 'SUSPENDED'))");
	store_exec(st, "DELETE FROM private.array_env WHERE array_id NOT IN "
	    "(SELECT array_id FROM private.task_env)");
	store_exec(st, "PRAGMA private.incremental_vacuum");
	store_exec(st, "PRAGMA private.wal_checkpoint(TRUNCATE)");
	/* People read it with the sqlite3 shell; the environments are not in it. */
	chmod(path, 0644);
	{
		char priv[PATH_MAX + 16], cerr[256];

		snprintf(priv, sizeof(priv), "%s.private", path);
		if ((st->ckpt = checkpoint_start(path, priv, cerr, sizeof(cerr))) != NULL)
			sqlite3_wal_hook(st->db, store_wal_cb, st);
		else
			log_warnx("database: %s: checkpoints stay in nvqd's loop", cerr);
	}
	return st;
fail:
	store_close(st);
	return NULL;
}

struct store *
store_open_reader(const char *path, char *err, size_t errlen)
{
	struct store *st;

	if ((st = calloc(1, sizeof(*st))) == NULL) {
		snprintf(err, errlen, "out of memory");
		return NULL;
	}
	if (sqlite3_open_v2(path, &st->db, SQLITE_OPEN_READONLY | SQLITE_OPEN_NOMUTEX,
	    NULL) != SQLITE_OK) {
		snprintf(err, errlen, "%s: %s", path, st->db ? sqlite3_errmsg(st->db) :
		    "cannot open");
		sqlite3_close(st->db);
		free(st);
		return NULL;
	}
	sqlite3_busy_timeout(st->db, 5000);
	return st;
}

void
store_close(struct store *st)
{
	size_t k;

	if (st == NULL)
		return;
	checkpoint_stop(st->ckpt);
	for (k = 0; k < STORE_CACHE; k++)
		if (st->stmt[k] != NULL)
			sqlite3_finalize(st->stmt[k]);
	sqlite3_close(st->db);
	free(st);
}

const char *
store_errmsg(struct store *st)
{
	return st->lasterr[0] != '\0' ? st->lasterr : "unknown error (see nvqd's log)";
}

int
store_version(struct store *st)
{
	sqlite3_stmt *s = store_prepare(st, "PRAGMA user_version");
	int v = -1;

	if (s == NULL)
		return -1;
	if (sqlite3_step(s) == SQLITE_ROW)
		v = sqlite3_column_int(s, 0);
	store_release(st, s);
	return v;
}

int
store_event(struct store *st, int64_t id, double now, const char *state, const char *reason)
{
	sqlite3_stmt *s = store_prepare(st,
	    "INSERT INTO events (job_id, at, state, reason) VALUES (?, ?, ?, ?)");

	if (s == NULL)
		return -1;
	sqlite3_bind_int64(s, 1, id);
	sqlite3_bind_double(s, 2, now);
	sqlite3_bind_text(s, 3, state, -1, SQLITE_STATIC);
	sqlite3_bind_text(s, 4, reason, -1, SQLITE_STATIC);
	return store_done(st, s);
}

