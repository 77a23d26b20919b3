/*
 * test_parse.c: sizes, durations, ids and their formatting, table-driven.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <signal.h>
#include <stdint.h>
#include <string.h>
#include <cmocka.h>

#include "parse.h"

#define K 1024ULL
#define M (K * K)
#define G (M * K)

static void
test_sizes(void **state)
{
	static const struct { const char *s; int ok; uint64_t v; } t[] = {
		{ "512M", 0, 512 * M }, { "20G", 0, 20 * G }, { "1.5T", 0, 1536 * G },
		{ "20g", 0, 20 * G }, { "20GiB", 0, 20 * G }, { "20GB", 0, 20 * G },
		{ "100", 0, 100 * M }, { "4096b", 0, 4096 }, { "0.5G", 0, 512 * M },
		{ "", -1, 0 }, { "G", -1, 0 }, { "-1G", -1, 0 }, { "20X", -1, 0 },
		{ "20 G", -1, 0 }, { "1e30T", -1, 0 }, { "nanG", -1, 0 }, { " 5G", -1, 0 },
		{ "inf", -1, 0 },
	};
	uint64_t v;
	size_t i;

	(void)state;
	for (i = 0; i < sizeof(t) / sizeof(t[0]); i++) {
		int r = parse_size(t[i].s, &v);
		if (r != t[i].ok || (r == 0 && v != t[i].v)) {
			print_error("parse_size(\"%s\") = %d, %llu\n", t[i].s, r,
			    (unsigned long long)v);
			fail();
		}
	}
}

static void
test_durations(void **state)
{
	static const struct { const char *s; int ok; int64_t v; } t[] = {
		{ "90", 0, 5400 }, { "05:30", 0, 330 }, { "1:00:00", 0, 3600 },
		{ "2-00:00:00", 0, 172800 }, { "1-2", 0, 93600 }, { "1-02:03", 0, 93780 },
		{ "45s", 0, 45 }, { "30m", 0, 1800 }, { "2h", 0, 7200 }, { "1d", 0, 86400 },
		{ "", -1, 0 }, { "s", -1, 0 }, { "1:60", -1, 0 }, { "1:2:3:4", -1, 0 },
		{ "-5", -1, 0 }, { "5x", -1, 0 }, { "1-", -1, 0 }, { "1.5h", -1, 0 },
		{ "1-02:60", -1, 0 }, { "::", -1, 0 },
		/* the longest time limit; absurd ones parse exactly, for callers to refuse */
		{ "365d", 0, PARSE_MAX_LIMIT }, { "365-00:00:00", 0, PARSE_MAX_LIMIT },
		{ "300000000000d", 0, 300000000000LL * 86400 },
		{ "999999999999-23:59:59", 0, 999999999999LL * 86400 + 86399 },
		{ "1000000000000d", -1, 0 },
	};
	int64_t v;
	size_t i;

	(void)state;
	for (i = 0; i < sizeof(t) / sizeof(t[0]); i++) {
		int r = parse_duration(t[i].s, &v);
		if (r != t[i].ok || (r == 0 && v != t[i].v)) {
			print_error("parse_duration(\"%s\") = %d, %lld\n", t[i].s, r, (long long)v);
			fail();
		}
	}
}

static void
test_ids(void **state)
{
	int64_t ids[PARSE_MAX_IDS], id;

	(void)state;
	assert_int_equal(parse_id_list("3", ids, PARSE_MAX_IDS), 1);
	assert_int_equal(parse_id_list("3,4,15", ids, PARSE_MAX_IDS), 3);
	assert_int_equal(ids[2], 15);
	assert_int_equal(parse_id_list("3,,4", ids, PARSE_MAX_IDS), -1);
	assert_int_equal(parse_id_list("3,", ids, PARSE_MAX_IDS), -1);
	assert_int_equal(parse_id_list("0", ids, PARSE_MAX_IDS), -1);
	assert_int_equal(parse_id_list("a", ids, PARSE_MAX_IDS), -1);
	assert_int_equal(parse_id_list("1,2,3", ids, 2), -1);
	assert_int_equal(parse_id("42", &id), 0);
	assert_int_equal(id, 42);
	assert_int_equal(parse_id("-1", &id), -1);
	assert_int_equal(parse_id("+1", &id), -1);
	assert_int_equal(parse_id("99999999999999999999", &id), -1);
}

static void
test_reserve(void **state)
{
	unsigned pct;
	uint64_t bytes;

	(void)state;
	assert_int_equal(parse_reserve("5%", &pct, &bytes), 0);
	assert_int_equal(pct, 5);
	assert_int_equal(bytes, 0);
	assert_int_equal(parse_reserve("2G", &pct, &bytes), 0);
	assert_int_equal(pct, 0);
	assert_int_equal(bytes, 2 * G);
	assert_int_equal(parse_reserve("100%", &pct, &bytes), -1);
	assert_int_equal(parse_reserve("%", &pct, &bytes), -1);
	assert_int_equal(parse_reserve("x", &pct, &bytes), -1);
}

static void
test_format(void **state)
{
	char b[32];

	(void)state;
	fmt_size(20 * G, b, sizeof(b));
	assert_string_equal(b, "20G");
	fmt_size(1536 * M, b, sizeof(b));
	assert_string_equal(b, "1.5G");
	fmt_size(512 * M, b, sizeof(b));
	assert_string_equal(b, "512M");
	fmt_size(12, b, sizeof(b));
	assert_string_equal(b, "12B");
	fmt_elapsed(59, b, sizeof(b));
	assert_string_equal(b, "00:59");
	fmt_elapsed(3661, b, sizeof(b));
	assert_string_equal(b, "1:01:01");
	fmt_elapsed(90061, b, sizeof(b));
	assert_string_equal(b, "1-01:01:01");
	fmt_elapsed(PARSE_MAX_LIMIT, b, sizeof(b));
	assert_string_equal(b, "365-00:00:00");
	fmt_elapsed(INT64_MAX, b, sizeof(b));
	assert_string_equal(b, "106751991167300-15:30:07");
}

static void
test_signals(void **state)
{
	int s = 0;

	(void)state;
	assert_int_equal(parse_signal("USR1", &s), 0);
	assert_int_equal(s, SIGUSR1);
	assert_int_equal(parse_signal("SIGUSR2", &s), 0);
	assert_int_equal(s, SIGUSR2);
	assert_int_equal(parse_signal("term", &s), 0);
	assert_int_equal(s, SIGTERM);
	assert_int_equal(parse_signal("2", &s), 0);
	assert_int_equal(s, SIGINT);
	s = 0;
	assert_int_equal(parse_signal("KILL", &s), -1);
	assert_int_equal(parse_signal("9", &s), -1);
	assert_int_equal(parse_signal("SIGSTOP", &s), -1);
	assert_int_equal(parse_signal("0", &s), -1);
	assert_int_equal(parse_signal("65", &s), -1);
	assert_int_equal(parse_signal("USR", &s), -1);
	assert_int_equal(parse_signal("", &s), -1);
	assert_int_equal(parse_signal("SIG", &s), -1);
	assert_int_equal(s, 0);
}

/* nvq's own names (it may be built with musl) are glibc's, where glibc has one */
static void
test_signames(void **state)
{
	int sig;

	(void)state;
	for (sig = -1; sig <= 70; sig++) {
		const char *ours = parse_signame(sig), *glibc = sig > 0 ? sigabbrev_np(sig) : NULL;

		if (glibc == NULL)
			assert_null(ours);
		else
			assert_string_equal(ours, glibc);
	}
	assert_string_equal(parse_signame(SIGWINCH), "WINCH");
}

/* Slurm's SLURM_ARRAY_TASK_COUNT, _MIN, _MAX and _STEP of a spec */
static void
test_array_shape(void **state)
{
	static const struct {
		const char	*spec;
		int64_t		count, min, max, step;
	} rows[] = {
		{ "1-7:3", 3, 1, 7, 3 },	/* a range with a stride: the stride */
		{ "1-7:3%2", 3, 1, 7, 3 },	/* %N is not part of it */
		{ "3,5,9", 3, 3, 9, 1 },	/* a list: 1, as Slurm */
		{ "9,3,5", 3, 3, 9, 1 },	/* min and max, not first and last */
		{ "0-15", 16, 0, 15, 1 },
		{ "0-10:2,20", 7, 0, 20, 1 },	/* a mix: no one stride */
		{ "4", 1, 4, 4, 1 },
	};
	static int64_t idx[64];
	struct parse_shape sh;
	char why[128];
	int n, limit;
	size_t i;

	(void)state;
	for (i = 0; i < sizeof(rows) / sizeof(rows[0]); i++) {
		assert_int_equal(parse_array(rows[i].spec, idx, 64, &n, &limit, why,
		    sizeof(why)), 0);
		parse_array_shape(rows[i].spec, idx, n, &sh);
		if (sh.count != rows[i].count || sh.min != rows[i].min || sh.max != rows[i].max ||
		    sh.step != rows[i].step)
			fail_msg("%s: got %lld %lld %lld %lld", rows[i].spec, (long long)sh.count,
			    (long long)sh.min, (long long)sh.max, (long long)sh.step);
	}
	/* --stdin's tasks: 0 to n - 1 */
	for (n = 0; n < 5; n++)
		idx[n] = n;
	parse_array_shape(NULL, idx, 5, &sh);
	assert_true(sh.count == 5 && sh.min == 0 && sh.max == 4 && sh.step == 1);
}

/* Slurm's --signal [{R|B}:]SIG[@TIME], and how nvq's command line tells it from its own */
static void
test_warn(void **state)
{
	char why[160];
	int sig, secs, batch;

	(void)state;
	assert_int_equal(parse_warn("USR1@90", &sig, &secs, &batch, why, sizeof(why)), 0);
	assert_true(sig == SIGUSR1 && secs == 90 && batch == 0);
	assert_int_equal(parse_warn("B:TERM", &sig, &secs, &batch, why, sizeof(why)), 0);
	assert_true(sig == SIGTERM && secs == 60 && batch == 1);	/* sbatch's 60 s */
	assert_int_equal(parse_warn("b:10@0", &sig, &secs, &batch, why, sizeof(why)), 0);
	assert_true(sig == 10 && secs == 0 && batch == 1);
	assert_int_equal(parse_warn("R:USR1@5", &sig, &secs, &batch, why, sizeof(why)), -1);
	assert_non_null(strstr(why, "no reservations"));
	assert_int_equal(parse_warn("KILL@5", &sig, &secs, &batch, why, sizeof(why)), -1);
	assert_int_equal(parse_warn("USR1@65536", &sig, &secs, &batch, why, sizeof(why)), -1);
	assert_non_null(strstr(why, "0 to 65535"));
	assert_int_equal(parse_warn("USR1@", &sig, &secs, &batch, why, sizeof(why)), -1);
	assert_int_equal(parse_warn("@5", &sig, &secs, &batch, why, sizeof(why)), -1);
	assert_int_equal(parse_warn("B:", &sig, &secs, &batch, why, sizeof(why)), -1);
	assert_true(parse_is_warn("USR1@5") && parse_is_warn("B:USR1") && parse_is_warn("r:1"));
	assert_false(parse_is_warn("USR1") || parse_is_warn("12") || parse_is_warn("SIGTERM"));
}

static void
test_array(void **state)
{
	static int64_t idx[PARSE_MAX_TASKS];
	char why[128];
	int n, limit;

	(void)state;
	assert_int_equal(parse_array("0-9:3,20%2", idx, PARSE_MAX_TASKS, &n, &limit, why,
	    sizeof(why)), 0);
	assert_int_equal(n, 5);
	assert_int_equal(limit, 2);
	assert_int_equal(idx[0], 0);
	assert_int_equal(idx[3], 9);
	assert_int_equal(idx[4], 20);
	assert_int_equal(parse_array("7,1,5", idx, PARSE_MAX_TASKS, &n, &limit, why,
	    sizeof(why)), 0);
	assert_int_equal(n, 3);
	assert_int_equal(idx[0], 7);	/* in the order given */
	assert_int_equal(limit, 0);
	assert_int_equal(parse_array("%8", idx, PARSE_MAX_TASKS, &n, &limit, why,
	    sizeof(why)), 0);
	assert_int_equal(n, 0);
	assert_int_equal(limit, 8);
	assert_int_equal(parse_array("0-99999", idx, PARSE_MAX_TASKS, &n, &limit, why,
	    sizeof(why)), 0);
	assert_int_equal(n, 100000);
	assert_int_equal(parse_array("0-100000", idx, PARSE_MAX_TASKS, &n, &limit, why,
	    sizeof(why)), -1);
	assert_non_null(strstr(why, "over 100000 tasks"));
	assert_int_equal(parse_array("1,1", idx, 10, &n, &limit, why, sizeof(why)), -1);
	assert_non_null(strstr(why, "twice"));
	assert_int_equal(parse_array("0-4,3", idx, 10, &n, &limit, why, sizeof(why)), -1);
	assert_int_equal(parse_array("5-2", idx, 10, &n, &limit, why, sizeof(why)), -1);
	assert_int_equal(parse_array("3:2", idx, 10, &n, &limit, why, sizeof(why)), -1);
	assert_int_equal(parse_array("1,", idx, 10, &n, &limit, why, sizeof(why)), -1);
	assert_int_equal(parse_array(",1", idx, 10, &n, &limit, why, sizeof(why)), -1);
	assert_int_equal(parse_array("-1", idx, 10, &n, &limit, why, sizeof(why)), -1);
	assert_int_equal(parse_array("0-3%0", idx, 10, &n, &limit, why, sizeof(why)), -1);
	assert_int_equal(parse_array("0-3%x", idx, 10, &n, &limit, why, sizeof(why)), -1);
	assert_int_equal(parse_array("", idx, 10, &n, &limit, why, sizeof(why)), -1);
	assert_int_equal(parse_array("0-9:0", idx, 10, &n, &limit, why, sizeof(why)), -1);
	assert_int_equal(parse_array("10000001", idx, 10, &n, &limit, why, sizeof(why)), -1);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_sizes),
		cmocka_unit_test(test_durations),
		cmocka_unit_test(test_ids),
		cmocka_unit_test(test_reserve),
		cmocka_unit_test(test_format),
		cmocka_unit_test(test_signals),
		cmocka_unit_test(test_signames),
		cmocka_unit_test(test_array),
		cmocka_unit_test(test_array_shape),
		cmocka_unit_test(test_warn),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
