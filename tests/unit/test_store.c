/*
 * test_store.c: the store's transactions (store.c's store_tx, store_job.c)
 * on a real database in a temporary folder: a change is all or nothing (an
 * end refused half way leaves the run it had closed open, and no event),
 * a job's life is recorded in order (submitted, held, released, started,
 * ended), and what is refused says so (-1) without touching the row.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <cmocka.h>
#include <sqlite3.h>

#include "store.h"

static char dir[] = "/tmp/nvq-test-store.XXXXXX", path[256];

/* The one integer a query gives (on its own connection: what is committed). */
static long long
one(const char *sql)
{
	sqlite3 *db;
	sqlite3_stmt *s;
	long long v = -1;

	assert_int_equal(sqlite3_open_v2(path, &db, SQLITE_OPEN_READONLY, NULL), SQLITE_OK);
	assert_int_equal(sqlite3_prepare_v2(db, sql, -1, &s, NULL), SQLITE_OK);
	if (sqlite3_step(s) == SQLITE_ROW)
		v = sqlite3_column_int64(s, 0);
	sqlite3_finalize(s);
	sqlite3_close(db);
	return v;
}

static int64_t
submit(struct store *st)
{
	static const char argv[] = "sleep\0" "1";
	struct store_job_new j;

	memset(&j, 0, sizeof(j));
	j.uid = j.gid = 1000;
	j.user = "alice";
	j.name = j.command = "sleep";
	j.cwd = "/tmp";
	j.argv = argv;
	j.argv_len = sizeof(argv);
	j.env = "A=1";
	j.env_len = 4;
	j.spool = dir;
	j.now = 100;
	return store_job_insert(st, &j);
}

static void
test_life_all_or_nothing(void **state)
{
	char err[256], buf[32];
	struct store *st;
	struct store_end e;
	int64_t id;

	(void)state;
	assert_non_null(mkdtemp(dir));
	snprintf(path, sizeof(path), "%s/nvq.db", dir);
	st = store_open(path, 0, err, sizeof(err));
	assert_non_null(st);
	id = submit(st);
	assert_true(id > 0);
	assert_int_equal(store_job_state(st, id, buf, sizeof(buf)), 0);
	assert_string_equal(buf, "PENDING");

	/* hold, release: the row and an event each */
	assert_int_equal(store_job_held(st, id, 1, 101, "by alice"), 0);
	assert_int_equal(one("SELECT held FROM jobs"), 1);
	assert_int_equal(store_job_held(st, id, 0, 102, "by alice"), 0);
	assert_int_equal(one("SELECT count(*) FROM events WHERE state IN ('HELD', 'RELEASED')"), 2);
	/* a job that is not there: refused, nothing written */
	assert_int_equal(store_job_held(st, id + 1, 1, 103, "by alice"), -1);
	assert_int_equal(one("SELECT count(*) FROM events WHERE job_id = 2"), 0);

	assert_int_equal(store_job_start(st, id, 110, "GPU-0", 1, 0, 0), 0);
	assert_int_equal(one("SELECT count(*) FROM runs WHERE ended_at IS NULL"), 1);
	memset(&e, 0, sizeof(e));
	e.state = "COMPLETED";
	e.reason = "exit 0";
	e.now = 120;
	e.exit_code = 0;
	e.cpu_time = e.max_rss = e.peak_gpu_mem = -1;
	assert_int_equal(store_job_end(st, id, &e), 0);
	assert_int_equal(store_job_state(st, id, buf, sizeof(buf)), 0);
	assert_string_equal(buf, "COMPLETED");
	assert_int_equal(one("SELECT count(*) FROM runs WHERE ended_at IS NULL"), 0);
	long long events = one("SELECT count(*) FROM events");

	/*
	 * Ended twice: the second end closes no run and changes no row, so it
	 * is refused, and its event is not written: all or nothing.
	 */
	e.state = "FAILED";
	e.now = 130;
	assert_int_equal(store_job_end(st, id, &e), -1);
	assert_int_equal(one("SELECT count(*) FROM events"), events);
	assert_int_equal(one("SELECT count(*) FROM jobs WHERE state = 'COMPLETED'"), 1);
	/* the runs' ends are those of the first end only */
	assert_int_equal(one("SELECT count(*) FROM runs WHERE state = 'FAILED'"), 0);
	store_close(st);
}

/* A requeue after a run half recorded: its run closes and the job waits again, in one commit. */
static void
test_requeue(void **state)
{
	char err[256], buf[32];
	struct store *st;
	struct store_end e;
	int64_t id;

	(void)state;
	st = store_open(path, 0, err, sizeof(err));
	assert_non_null(st);
	id = submit(st);
	assert_int_equal(store_job_start(st, id, 210, "GPU-0", 1, 0, 0), 0);
	memset(&e, 0, sizeof(e));
	e.state = "NODE_FAIL";
	e.reason = "the machine restarted";
	e.now = 220;
	e.exit_code = -1;
	e.cpu_time = e.max_rss = e.peak_gpu_mem = -1;
	assert_int_equal(store_job_requeue(st, id, &e), 0);
	assert_int_equal(store_job_state(st, id, buf, sizeof(buf)), 0);
	assert_string_equal(buf, "PENDING");
	assert_int_equal(one("SELECT restarts FROM jobs ORDER BY id DESC LIMIT 1"), 1);
	assert_int_equal(one("SELECT count(*) FROM runs WHERE ended_at IS NULL"), 0);
	/* not running any more: a second requeue is refused and leaves no event */
	long long events = one("SELECT count(*) FROM events");
	assert_int_equal(store_job_requeue(st, id, &e), -1);
	assert_int_equal(one("SELECT count(*) FROM events"), events);
	store_close(st);
}

static int
cleanup(void **state)
{
	char cmd[300];

	(void)state;
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
	return system(cmd) == 0 ? 0 : -1;
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_life_all_or_nothing),
		cmocka_unit_test(test_requeue),
	};

	return cmocka_run_group_tests(tests, NULL, cleanup);
}
