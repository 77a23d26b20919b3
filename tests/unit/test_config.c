/*
 * test_config.c: the INI key table: defaults, every kind of value, and
 * errors that name the file and the line.
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

#include "config.h"

#define G (1ULL << 30)

static char path[] = "/tmp/nvq-test-config-XXXXXX";

static void
write_file(const char *text)
{
	FILE *fp = fopen(path, "w");

	assert_non_null(fp);
	fputs(text, fp);
	fclose(fp);
}

static void
test_defaults(void **state)
{
	struct config c;
	char err[256];

	(void)state;
	assert_int_equal(config_load(&c, NULL, err, sizeof(err)), 0);
	assert_int_equal(c.sched.reserve_pct, 5);
	assert_int_equal(c.mode_default, SCHED_AUTO);
	assert_int_equal(c.kill_grace, 30);
	assert_int_equal(c.gpu_poll, 5);
	assert_int_equal(c.nvirtual, 0);
	assert_int_equal(c.sync_full, 1);
	assert_true(c.sched.aging == 1.0);
	assert_true(c.socket[0] == '/');
	assert_true(c.database[0] == '/');
}

static void
test_values(void **state)
{
	struct config c;
	char err[256];

	(void)state;
	write_file("; a comment\n[daemon]\nsocket = /tmp/x.sock\nlog_level = debug\n"
	    "sync = normal\n[gpus]\nvirtual = 2x80G,40G\npoll = 2s\n"
	    "[scheduler]\nmode = auto,1:serial\nreserve = 2G\naging = 0.5\nkill_grace = 1m\n"
	    "[limits]\nmax_running_jobs = 3\nmax_gpus = 4\n");
	assert_int_equal(config_load(&c, path, err, sizeof(err)), 0);
	assert_string_equal(c.socket, "/tmp/x.sock");
	assert_int_equal(c.log_level, LOG_LEVEL_DEBUG);
	assert_int_equal(c.sync_full, 0);
	assert_int_equal(c.nvirtual, 3);
	assert_true(c.virtual_mem[0] == 80 * G && c.virtual_mem[2] == 40 * G);
	assert_int_equal(c.gpu_poll, 2);
	assert_int_equal(config_mode(&c, 0), SCHED_AUTO);
	assert_int_equal(config_mode(&c, 1), SCHED_SERIAL);
	assert_int_equal(config_mode(&c, 2), SCHED_AUTO);
	assert_true(c.sched.reserve_bytes == 2 * G && c.sched.reserve_pct == 0);
	assert_true(c.sched.aging == 0.5);
	assert_int_equal(c.kill_grace, 60);
	assert_int_equal(c.sched.max_running_jobs, 3);
	assert_int_equal(c.sched.max_gpus, 4);
}

static void
test_errors(void **state)
{
	static const struct { const char *text; const char *want; } t[] = {
		{ "[daemon]\nbogus = 1\n", ":2: unknown key \"bogus\" in [daemon]" },
		{ "[nope]\nx = 1\n", ":2: unknown section [nope]" },
		{ "x = 1\n", ":1: key \"x\" outside any section" },
		{ "[gpus]\n\nvirtual = 2x\n", ":3: virtual:" },
		{ "[gpus]\nvirtual = 0G\n", ":2: virtual:" },
		{ "[scheduler]\nmode = fast\n", ":2: mode:" },
		{ "[scheduler]\nmode = auto,99:serial\n", ":2: mode:" },
		{ "[scheduler]\nreserve = 120%\n", ":2: reserve:" },
		{ "[scheduler]\naging = -1\n", ":2: aging:" },
		{ "[scheduler]\nkill_grace = forever\n", ":2: kill_grace:" },
		{ "[limits]\nmax_gpus = 65\n", ":2: max_gpus:" },
		{ "[limits]\nmax_running_jobs = 1.5\n", ":2: max_running_jobs:" },
		{ "[daemon]\nsocket = relative.sock\n", ":2: socket: \"relative.sock\" is not an "
		  "absolute path" },
		{ "[daemon]\nlog_level = loud\n", ":2: log_level:" },
		{ "[daemon]\nthis line is broken\n", ":2: syntax error" },
		{ "[daemon\n", ":1: syntax error" },
	};
	struct config c;
	char err[512];
	size_t i;

	(void)state;
	for (i = 0; i < sizeof(t) / sizeof(t[0]); i++) {
		write_file(t[i].text);
		if (config_load(&c, path, err, sizeof(err)) != -1 ||
		    strncmp(err, path, strlen(path)) != 0 || strstr(err, t[i].want) == NULL) {
			print_error("config \"%s\": got \"%s\", wanted \"%s\"\n", t[i].text, err,
			    t[i].want);
			fail();
		}
	}
	assert_int_equal(config_load(&c, "/nonexistent/nvq.ini", err, sizeof(err)), -1);
	assert_non_null(strstr(err, "No such file"));
}

/* The example the table prints loads, and gives the defaults back. */
static void
test_print_loads(void **state)
{
	struct config a, b;
	char err[256];
	FILE *fp = fopen(path, "w");

	(void)state;
	assert_non_null(fp);
	config_print(fp);
	fclose(fp);
	assert_int_equal(config_load(&a, path, err, sizeof(err)), 0);
	assert_int_equal(config_load(&b, NULL, err, sizeof(err)), 0);
	assert_memory_equal(&a, &b, sizeof(a));
}

static int
setup(void **state)
{
	int fd = mkstemp(path);

	(void)state;
	if (fd == -1)
		return -1;
	close(fd);
	return 0;
}

static int
teardown(void **state)
{
	(void)state;
	unlink(path);
	return 0;
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_defaults),
		cmocka_unit_test(test_values),
		cmocka_unit_test(test_errors),
		cmocka_unit_test(test_print_loads),
	};

	return cmocka_run_group_tests(tests, setup, teardown);
}
