/*
 * test_status.c: the status record a job's shim writes (runner.c's
 * status_format and status_parse), table-driven: what is a
 * whole record, and that no reason, whatever bytes it holds, adds a field.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/types.h>
#include <cmocka.h>

#include "status.h"

#define OK	"exit 5\nsignal 0\ncpu 1.250\nrss 4096\nended 1700000000.500\nreason \nend\n"

static void
test_parse_table(void **state)
{
	static const struct { const char *s; int ok; int exit; double cpu; } t[] = {
		{ OK, 0, 5, 1.25 },
		{ "exit -1\nsignal 9\ncpu 0.000\nrss -1\nended 1.000\nreason killed\nend\n", 0, -1, 0 },
		{ "exit 126\nsignal 0\ncpu -1.000\nrss -1\nended 2.000\nreason cannot open x\nend\n",
		    0, 126, -1 },
		/* torn: no end line, or cut inside it */
		{ "exit 5\nsignal 0\ncpu 1.250\nrss 4096\nended 1700000000.500\nreason \n", -1, 0, 0 },
		{ "exit 5\nsignal 0\ncpu 1.250\nrss 4096\nended 1700000000.500\nreason \nen", -1, 0, 0 },
		{ "exit 5\nsignal 0\ncpu 1.250\nrss 4096\nended 1700000000.500\nreason \nend", -1, 0, 0 },
		{ "", -1, 0, 0 },
		/* a duplicate, an unknown key, keys out of order, a missing one */
		{ "exit 5\nexit 0\nsignal 0\ncpu 1.250\nrss 4096\nended 1.5\nreason \nend\n", -1, 0, 0 },
		{ "exit 5\nsignal 0\ncpu 1.250\nrss 4096\nended 1.5\nreason \nend\nexit 0\n", -1, 0, 0 },
		{ "exit 5\nsignal 0\nmem 3\ncpu 1.250\nrss 4096\nended 1.5\nreason \nend\n", -1, 0, 0 },
		{ "signal 0\nexit 5\ncpu 1.250\nrss 4096\nended 1.5\nreason \nend\n", -1, 0, 0 },
		{ "exit 5\nsignal 0\nrss 4096\nended 1.5\nreason \nend\n", -1, 0, 0 },
		/* values: range, form, the exit-or-signal rule */
		{ "exit 256\nsignal 0\ncpu 1\nrss 1\nended 1\nreason \nend\n", -1, 0, 0 },
		{ "exit 5\nsignal 0\ncpu 1e3\nrss 1\nended 1\nreason \nend\n", -1, 0, 0 },
		{ "exit 5\nsignal 0\ncpu nan\nrss 1\nended 1\nreason \nend\n", -1, 0, 0 },
		{ "exit  5\nsignal 0\ncpu 1\nrss 1\nended 1\nreason \nend\n", -1, 0, 0 },
		{ "exit 5\nsignal 0\ncpu -2\nrss 1\nended 1\nreason \nend\n", -1, 0, 0 },
		{ "exit 5\nsignal 0\ncpu 1\nrss 1\nended 0\nreason \nend\n", -1, 0, 0 },
		/* fuzz_status: 0.0000250 would be written back as 0.000, which is no time */
		{ "exit 5\nsignal 0\ncpu 1\nrss 1\nended 00.0000250\nreason \nend\n", -1, 0, 0 },
		{ "exit 5\nsignal 0\ncpu 1\nrss 1\nended 0.999\nreason \nend\n", -1, 0, 0 },
		{ "exit 5\nsignal 3\ncpu 1\nrss 1\nended 1\nreason \nend\n", -1, 0, 0 },
		{ "exit -1\nsignal 0\ncpu 1\nrss 1\nended 1\nreason \nend\n", -1, 0, 0 },
		{ "exit 5\nsignal 0\ncpu 1\nrss 1\nended 1\nreason a\tb\nend\n", -1, 0, 0 },
		{ "exit 5\nsignal 0\ncpu 1\nrss 1\nended 1\nreason \nend \n", -1, 0, 0 },
		{ "exit 5\nsignal 0\ncpu 1\nrss 1\nended 1\nreason\nend\n", -1, 0, 0 },
	};
	struct status_record rs;
	size_t i;

	(void)state;
	for (i = 0; i < sizeof(t) / sizeof(t[0]); i++) {
		int r = status_parse(t[i].s, strlen(t[i].s), &rs);
		if (r != t[i].ok || (r == 0 && (rs.exit_code != t[i].exit ||
		    rs.cpu_time != t[i].cpu))) {
			print_error("status_parse(\"%s\") = %d, exit %d cpu %f\n", t[i].s, r,
			    rs.exit_code, rs.cpu_time);
			fail();
		}
	}
}

/* The reserved space after the record is zeros; anything else there is not. */
static void
test_parse_reserved(void **state)
{
	char buf[STATUS_SIZE];
	struct status_record rs;

	(void)state;
	memset(buf, 0, sizeof(buf));
	memcpy(buf, OK, strlen(OK));
	assert_int_equal(status_parse(buf, sizeof(buf), &rs), 0);
	assert_int_equal(rs.exit_code, 5);
	assert_int_equal(rs.max_rss, 4096);
	buf[sizeof(buf) - 1] = 'x';
	assert_int_equal(status_parse(buf, sizeof(buf), &rs), -1);
	/* zeros alone: the shim started, the job has not ended */
	memset(buf, 0, sizeof(buf));
	assert_int_equal(status_parse(buf, sizeof(buf), &rs), -1);
	assert_int_equal(rs.exit_code, -1);
}

/* A reason with newlines and every control character stays one line. */
static void
test_format_reason(void **state)
{
	char buf[STATUS_SIZE];
	struct status_record rs, back;
	int n, c;

	(void)state;
	memset(&rs, 0, sizeof(rs));
	rs.exit_code = 126;
	rs.cpu_time = -1;
	rs.max_rss = -1;
	rs.ended_at = 1700000000;
	snprintf(rs.reason, sizeof(rs.reason), "cannot open /nonexistent/x\nexit 0\ncpu 99999\n"
	    "rss 99999999999\nend\n");
	n = status_format(&rs, buf, sizeof(buf));
	assert_true(n > 0);
	assert_int_equal(status_parse(buf, (size_t)n, &back), 0);
	assert_int_equal(back.exit_code, 126);
	assert_true(back.cpu_time == -1);
	assert_int_equal(back.max_rss, -1);
	assert_string_equal(back.reason, "cannot open /nonexistent/x\\nexit 0\\ncpu 99999\\n"
	    "rss 99999999999\\nend\\n");
	/* every byte, and one as long as the field: cut, never past it */
	for (c = 1; c < 256; c++)
		rs.reason[c - 1] = (char)c;
	rs.reason[255] = '\0';
	n = status_format(&rs, buf, sizeof(buf));
	assert_int_equal(status_parse(buf, (size_t)n, &back), 0);
	assert_true(strlen(back.reason) < sizeof(back.reason));
	assert_null(strchr(back.reason, '\n'));
	assert_null(strchr(back.reason, 0x7f));
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_parse_table),
		cmocka_unit_test(test_parse_reserved),
		cmocka_unit_test(test_format_reason),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
