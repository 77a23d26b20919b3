/*
 * test_runner.c: spare status files (runner.h): a status file nvqd has read
 * becomes, emptied, the next start's ticket, and a record written into it
 * later reads back whole; a spare never reads as a record.  In a folder of
 * its own under /tmp.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <cmocka.h>

#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "runner.h"
#include "status.h"

static char dir[64];

static int
setup(void **state)
{
	(void)state;
	snprintf(dir, sizeof(dir), "/tmp/test_runner.XXXXXX");
	return mkdtemp(dir) == NULL ? -1 : 0;
}

static int
teardown(void **state)
{
	char cmd[128];

	(void)state;
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
	return system(cmd) == 0 ? 0 : -1;
}

static int
exists(const char *fmt, ...)
{
	char path[PATH_MAX];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(path, sizeof(path), fmt, ap);
	va_end(ap);
	return access(path, F_OK) == 0;
}

static off_t
size_of(const char *path)
{
	struct stat st;

	assert_int_equal(stat(path, &st), 0);
	return st.st_size;
}

/* What the shim does with a ticket: takes it, then writes a record in place. */
static void
shim_run(const char *status, const char *token, int exit_code, const char *reason)
{
	char ticket[PATH_MAX], buf[STATUS_SIZE];
	struct status_record rs;
	int fd, n;

	snprintf(ticket, sizeof(ticket), "%s.%s.ticket", status, token);
	assert_int_equal(rename(ticket, status), 0);
	assert_int_equal(status_read(status, &rs), -1);	/* no record yet */
	memset(&rs, 0, sizeof(rs));
	rs.exit_code = exit_code;
	rs.cpu_time = 0.5;
	rs.max_rss = 4096;
	rs.ended_at = 1e9;
	snprintf(rs.reason, sizeof(rs.reason), "%s", reason);
	n = status_format(&rs, buf, sizeof(buf));
	assert_true(n > 0);
	fd = open(status, O_RDWR);
	assert_true(fd != -1);
	assert_int_equal(pwrite(fd, buf, (size_t)n, 0), n);
	close(fd);
}

static void
t_spare_round_trip(void **state)
{
	char s1[PATH_MAX], s2[PATH_MAX], spare[PATH_MAX];
	struct status_record rs;
	unsigned spares = 0;

	(void)state;
	snprintf(s1, sizeof(s1), "%s/1", dir);
	snprintf(s2, sizeof(s2), "%s/2", dir);
	snprintf(spare, sizeof(spare), "%s/spare.0", dir);

	/* no spare: the ticket is a new empty file */
	assert_int_equal(runner_ticket(s1, "a-0", &spares), 0);
	assert_true(exists("%s.a-0.ticket", s1));
	shim_run(s1, "a-0", 3, "a reason long enough to leave bytes behind");
	assert_int_equal(status_read(s1, &rs), 0);
	assert_int_equal(rs.exit_code, 3);

	/* read: it becomes a spare, its bytes zeros, no record */
	runner_recycle(s1, &spares);
	assert_int_equal(spares, 1);
	assert_false(exists("%s", s1));
	assert_true(size_of(spare) > 0);
	assert_int_equal(status_read(spare, &rs), -1);

	/* the next start's ticket is the spare */
	assert_int_equal(runner_ticket(s2, "a-1", &spares), 0);
	assert_int_equal(spares, 0);
	assert_false(exists("%s", spare));
	assert_true(exists("%s.a-1.ticket", s2));
	/* a shorter record over the zeros reads back whole */
	shim_run(s2, "a-1", 0, "");
	assert_int_equal(status_read(s2, &rs), 0);
	assert_int_equal(rs.exit_code, 0);
	assert_string_equal(rs.reason, "");
}

static void
t_spares_bounded_and_cleared(void **state)
{
	char s[PATH_MAX], other[PATH_MAX];
	unsigned spares = 0, i;
	int fd;

	(void)state;
	for (i = 0; i < RUNNER_SPARES + 3; i++) {
		snprintf(s, sizeof(s), "%s/%u", dir, 100 + i);
		fd = open(s, O_WRONLY | O_CREAT, 0600);
		assert_true(fd != -1);
		assert_int_equal(write(fd, "exit 0\n", 7), 7);
		close(fd);
		runner_recycle(s, &spares);
		assert_false(exists("%s", s));
	}
	assert_int_equal(spares, RUNNER_SPARES);
	assert_true(exists("%s/spare.%u", dir, RUNNER_SPARES - 1));
	assert_false(exists("%s/spare.%u", dir, RUNNER_SPARES));

	/* a file that is not nvqd's alone (a second link) is removed, not kept */
	spares = 0;
	snprintf(s, sizeof(s), "%s/7", dir);
	snprintf(other, sizeof(other), "%s/elsewhere", dir);
	fd = open(s, O_WRONLY | O_CREAT, 0600);
	close(fd);
	assert_int_equal(link(s, other), 0);
	runner_recycle(s, &spares);
	assert_int_equal(spares, 0);
	assert_false(exists("%s", s));

	/* nvqd's start removes the spares, and nothing else */
	runner_spares_clear(dir);
	assert_false(exists("%s/spare.0", dir));
	assert_true(exists("%s", other));
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(t_spare_round_trip, setup, teardown),
		cmocka_unit_test_setup_teardown(t_spares_bounded_and_cleared, setup, teardown),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
