/*
 * store.c: SQLite access for nvqd (see store.h).  Statements are prepared
 * when used (sqlite keeps them cheap at this scale); each change runs in one
 * transaction, so a crash leaves either all of it or none.
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
#include "store.h"

extern const char *const store_schema[];

#define STORE_CACHE	64	/* prepared statements kept, keyed by their SQL's address */
/*
 * Room kept on the database's file system for what must be recorded when
 * it is full (a job's end, a cancel): thousands of such commits.
 */
#define STORE_RESERVE	(4 << 20)
/*
 * What a submit sets of a job's row (the rest has its defaults), as jobs
 * and the private database's copies (store_jobs_insert) both have it.
 */
#define STORE_JOB_REST	"uid, gid, user, name, command, argv, cwd, gpus, mem_per_gpu, " \
	"priority, time_limit, after, stdout_path, stderr_path, submitted_at, groups, " \
	"requeue, preempt_signal, array_id, array_index, array_limit, held, gpus_allow, " \
	"gpus_deny, notify, mail_user"
#define STORE_JOB_COLS	"id, " STORE_JOB_REST
#define STORE_JOB_ARGS	"?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, " \
	"?, ?"

/* a dashboard token's random bytes (hex: twice as many characters) */
#define STORE_TOKEN_BYTES	24

/* columns of a query read through store_rows */
#define STORE_MAX_COLS		64

/* -m auto looks at this many of the last successful runs */
#define STORE_AUTO_RUNS		"5"
#define STORE_AUTO_JOBS		"1000"	/* of a name or command, the last: -m auto looks no further */

/*
 * A task of an array whose command is the array's keeps '' and x'' in
 * command and argv (schema/017_array_shared.sql): its first task's, read
 * here.  In a query of jobs, by its own name.
 */
#define STORE_COMMAND	"CASE WHEN jobs.array_id IS NOT NULL AND jobs.command = '' THEN " \
	"(SELECT a.command FROM jobs a WHERE a.id = jobs.array_id) ELSE jobs.command END"
#define STORE_ARGV	"CASE WHEN jobs.array_id IS NOT NULL AND length(jobs.argv) = 0 THEN " \
	"(SELECT a.argv FROM jobs a WHERE a.id = jobs.array_id) ELSE jobs.argv END"

/* freed pages of the private database given back once there are this many */
#define STORE_VACUUM_PAGES	64

struct store {
	sqlite3		*db;
	int		sync_full;
	int		depth;		/* of nested transactions */
	int		doomed;		/* an inner one failed */
	unsigned long	begins;		/* transactions begun, nested ones too */
	char		lasterr[128];	/* sqlite3_errmsg of the last failure */
	int		full;		/* the last failure was SQLITE_FULL */
	char		reserve[PATH_MAX + 16];	/* <database>.reserve */
	off_t		reserved;	/* the bytes it holds now */
	off_t		reserve_size;	/* what it holds when whole */
	int		vacuumed;	/* the private database shrank: checkpoint it */
	struct checkpoint *ckpt;	/* WAL checkpoints off the loop (checkpoint.h) */
	const char	*sql[STORE_CACHE];
	sqlite3_stmt	*stmt[STORE_CACHE];
};

/* Logs a failure and keeps its sentence for store_errmsg. */
static void
store_warn(struct store *st, const char *what, const char *msg)
{
	snprintf(st->lasterr, sizeof(st->lasterr), "%s", msg);
	st->full = sqlite3_errcode(st->db) == SQLITE_FULL;
	if (what != NULL)
		log_warnx("database: %s: %s", what, msg);
	else
		log_warnx("database: %s", msg);
}

static int
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
static int
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

static int
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

static void
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
 * What one change of a job's row needs (each change reads the fields it
 * names), so that every change runs through store_tx.
 */
struct store_op {
	int64_t		id;
	const int64_t	*ids;		/* store_jobs_end: n of them */
	int		n;
	const struct store_end *e;
	const char	*state, *reason;
	double		now;
	int		held;
	const char	*sql;		/* store_switch_do */
	const struct store_switch *w;
};

typedef int (*store_op_fn)(struct store *, const struct store_op *);

static int	store_reserve_use(struct store *);

/*
 * fn in one transaction: all of it or none.  must: what has to be recorded
 * even on a full disk (an end, a requeue) is tried again with the reserve,
 * a quarter of it at a time, until it is spent; a user's change (hold,
 * release) never takes the reserve, which a user looping hold and release
 * on a full disk would spend.
 */
static int
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
static int
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

static sqlite3_stmt *
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
static void
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
static int
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

static int
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
	    "gpus_allow", "gpus_deny", "notify", "mail_user" };
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
		snprintf(sql, sizeof(sql), "ALTER TABLE private.jobs_copy ADD COLUMN %s INTEGER",
		    cols[i]);
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

static int
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

/*
 * An output path with %j (the job's id), %A (its array's id), %a (its
 * index in the array) and %% (a %) put in; other % stay as they are.
 * Outside an array %A is the job's id and %a is 0.
 */
static void
store_path(char *out, size_t len, const char *tmpl, int64_t id, int64_t array_id,
    int64_t index)
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
static int
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
		store_path(out, sizeof(out), j->stdout_path, id, array_id, j->array_index);
	else
		snprintf(out, sizeof(out), "%s/%u/%lld.out", j->spool, (unsigned)j->uid,
		    (long long)id);
	if (j->stderr_path != NULL)
		store_path(errp, sizeof(errp), j->stderr_path, id, array_id, j->array_index);
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
	    "gpu_uuids = ?, pid = NULL, pid_start = NULL, run_suspended = 0 "
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
static int
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
static int
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
	sqlite3_stmt *s = store_prepare(st, "SELECT state FROM jobs WHERE id = ?");
	int r = -1;

	if (s == NULL)
		return -1;
	sqlite3_bind_int64(s, 1, id);
	if (sqlite3_step(s) == SQLITE_ROW) {
		snprintf(buf, len, "%s", (const char *)sqlite3_column_text(s, 0));
		r = 0;
	}
	store_release(st, s);
	return r;
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
	    "top_at = CASE WHEN ?7 > 0 THEN ?7 ELSE top_at END "
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

	if (n < 39)
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
	STORE_LEN("notify") ", 0) + coalesce(" STORE_LEN("mail_user") ", 0)"

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
	"ELSE 0 END FROM jobs "

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
	"gpus_allow, gpus_deny, notify, mail_user, slurm_id, slurm_step FROM jobs "
#define STORE_JOBS_WHERE	"(?2 IS NULL OR user = ?2) " \
	"AND (?3 IS NULL OR state = ?3) " \
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

/* Which rows f's listing reads (schema/015_listing.sql; jobs_state by state, then id). */
static int
store_jobs_by(const struct store_filter *f)
{
	if (f->id != 0)
		return STORE_BY_ID;
	if (f->state != NULL)
		return STORE_BY_STATE;
	if (!f->all && !f->finished)
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
	    "WHERE run_id = runs.id) AS gpu_peaks FROM runs WHERE job_id = ? ORDER BY id", id, cb, arg);
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
		"ELSE 0 END) AS used "
		"FROM runs r JOIN jobs j ON j.id = r.job_id "
		"WHERE r.ended_at >= ?1 AND (?2 IS NULL OR j.user = ?2) "
		"GROUP BY j.user ORDER BY gpu_hours DESC, j.user",
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
	    "groups, name, gpus, mem_per_gpu, time_limit FROM jobs WHERE id = ?", id,
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
