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
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
