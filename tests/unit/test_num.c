/*
 * test_num.c: nvq/num.c against the C library it stands in for: num_real
 * must give strtod's double bit for bit (nvqd's "%.3f" times, "%.4f"
 * shares, integers, and whatever else strtod takes), num_int what "%lld"
 * prints.
 */
#include <inttypes.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "num.h"
#include "rng.h"

/* num_real(s) and strtod(s, NULL) are the same double, -0 and all */
static void
test_same(const char *s)
{
	double a = num_real(s), b = strtod(s, NULL);

	if (memcmp(&a, &b, sizeof(a)) != 0)
		fail_msg("num_real(\"%s\") = %.17g, strtod %.17g", s, a, b);
}

static void
test_real_printed(void **state)
{
	static const char *fmts[] = { "%.3f", "%.4f", "%.0f", "%.1f", "%.6f" };
	char buf[64];
	int i, k;

	(void)state;
	rng_state = 0x9e3779b97f4a7c15ULL;
	for (i = 0; i < 200000; i++) {
		/* times around now, small shares, and large values past 15 digits */
		double v = i % 3 == 0 ? 1.7e9 + (double)(rng() % 100000000) / 1000.0 :
		    i % 3 == 1 ? (double)(rng() % 1000000) / 1e6 :
		    (double)(int64_t)rng() / 1000.0;

		if (rng() % 4 == 0)
			v = -v;
		for (k = 0; k < 5; k++) {
			snprintf(buf, sizeof(buf), fmts[k], v);
			test_same(buf);
		}
	}
}

static void
test_real_edges(void **state)
{
	static const char *t[] = {
		"0", "-0", "-0.000", "5.", "-2", "00012", "0.1", "0.3", "1764191234.999",
		"999999999999999", "9999999999999999", "123456789012.3456", "0.0000000000000000000001",
		"0.00000000000000000000001", "1e3", "-1.5e-3", " 12", "+3", ".5", "-", "", "abc",
		"12abc", "1.2.3", "inf", "-nan", "0x1p3", "1.", "-.5",
	};
	size_t i;

	(void)state;
	for (i = 0; i < sizeof(t) / sizeof(t[0]); i++)
		test_same(t[i]);
}

static void
test_int(void **state)
{
	static const int64_t t[] = { 0, 1, -1, 9, 10, -10, 42, INT64_MAX, INT64_MIN,
	    INT64_MIN + 1, 1000000000000LL };
	char a[NUM_INT_LEN], b[32];
	size_t i;

	(void)state;
	for (i = 0; i < sizeof(t) / sizeof(t[0]); i++) {
		snprintf(b, sizeof(b), "%" PRId64, t[i]);
		assert_string_equal(num_int(t[i], a), b);
	}
	rng_state = 12345;
	for (i = 0; i < 100000; i++) {
		int64_t v = (int64_t)rng() >> (rng() % 64);

		snprintf(b, sizeof(b), "%" PRId64, v);
		assert_string_equal(num_int(v, a), b);
	}
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_real_printed),
		cmocka_unit_test(test_real_edges),
		cmocka_unit_test(test_int),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
