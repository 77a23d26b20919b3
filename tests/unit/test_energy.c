/*
 * test_energy.c: a GPU's energy split among the jobs that held it
 * (energy.c), as a table: a job alone gets the whole delta; jobs sharing
 * get parts by their utilisation that add up to the delta; processes
 * outside the queue keep their part; unknown where the counter or the
 * utilisation is missing, never 0 passed off as measured.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <cmocka.h>

#include "energy.h"

struct split_case {
	const char	*what;
	double		delta;
	int		util_known;
	double		outside;
	int		n;
	double		util[3];
	double		want[3];
	int		how[3];
};

static const struct split_case split_cases[] = {
	{ "alone: the whole delta", 3600, 1, 0, 1, { 80 }, { 3600 }, { ENERGY_ALONE } },
	{ "alone, NVML gives no samples: still the whole delta", 100, 0, 0, 1, { 0 }, { 100 },
	    { ENERGY_ALONE } },
	{ "alone and idle: the whole delta", 50, 1, 0, 1, { 0 }, { 50 }, { ENERGY_ALONE } },
	{ "two jobs: 3 to 1 by utilisation", 1000, 1, 0, 2, { 75, 25 }, { 750, 250 },
	    { ENERGY_SHARED, ENERGY_SHARED } },
	{ "three jobs, one idle", 900, 1, 0, 3, { 60, 0, 30 }, { 600, 0, 300 },
	    { ENERGY_SHARED, ENERGY_SHARED, ENERGY_SHARED } },
	{ "two jobs, none measured busy: evenly", 500, 1, 0, 2, { 0, 0 }, { 250, 250 },
	    { ENERGY_SHARED, ENERGY_SHARED } },
	{ "a job beside a process outside the queue: its part only", 1000, 1, 60, 1, { 40 },
	    { 400 }, { ENERGY_SHARED } },
	{ "two jobs, no per-process utilisation: unknown", 1000, 0, 0, 2, { 0, 0 }, { 0, 0 },
	    { ENERGY_UNKNOWN, ENERGY_UNKNOWN } },
	{ "no counter: unknown", -1, 1, 0, 1, { 90 }, { 0 }, { ENERGY_UNKNOWN } },
	{ "no counter, shared: unknown", -1, 1, 0, 2, { 90, 10 }, { 0, 0 },
	    { ENERGY_UNKNOWN, ENERGY_UNKNOWN } },
};

static void
test_split(void **state)
{
	size_t k;
	int i;

	(void)state;
	for (k = 0; k < sizeof(split_cases) / sizeof(split_cases[0]); k++) {
		const struct split_case *c = &split_cases[k];
		struct energy_part p[3] = { { 0 } };
		double sum = 0;

		for (i = 0; i < c->n; i++) {
			p[i].util = c->util[i];
			p[i].joules = -7;	/* set by the split, whatever it was */
		}
		energy_split(c->delta, c->util_known, c->outside, p, c->n);
		for (i = 0; i < c->n; i++) {
			if (p[i].how != c->how[i] || p[i].joules < c->want[i] - 1e-9 ||
			    p[i].joules > c->want[i] + 1e-9)
				fail_msg("%s: part %d: %g J %s, wanted %g J %s", c->what, i,
				    p[i].joules, energy_how_name(p[i].how), c->want[i],
				    energy_how_name(c->how[i]));
			sum += p[i].joules;
		}
		/* jobs alone on the GPU between them: the parts are the delta */
		if (c->delta >= 0 && c->outside <= 0 && c->how[0] != ENERGY_UNKNOWN &&
		    (sum < c->delta - 1e-9 || sum > c->delta + 1e-9))
			fail_msg("%s: the parts add up to %g J, not the delta %g J", c->what, sum,
			    c->delta);
	}
}

static void
test_delta(void **state)
{
	(void)state;
	assert_true(energy_delta(1000, 4600) == 3.6);
	assert_true(energy_delta(5, 5) == 0);
	/* the driver loaded again: the counter began anew, the interval unknown */
	assert_true(energy_delta(9000, 10) < 0);
}

static void
test_how(void **state)
{
	(void)state;
	assert_int_equal(energy_how_merge(ENERGY_ALONE, ENERGY_SHARED), ENERGY_SHARED);
	assert_int_equal(energy_how_merge(ENERGY_UNKNOWN, ENERGY_SHARED), ENERGY_UNKNOWN);
	assert_int_equal(energy_how_merge(ENERGY_ALONE, ENERGY_ALONE), ENERGY_ALONE);
	assert_string_equal(energy_how_name(ENERGY_SHARED), "shared");
	assert_string_equal(energy_how_name(42), "unknown");
	assert_int_equal(energy_how_parse("alone"), ENERGY_ALONE);
	assert_int_equal(energy_how_parse("unknown"), ENERGY_UNKNOWN);
	assert_int_equal(energy_how_parse("most"), -1);
	assert_int_equal(energy_how_parse(NULL), -1);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_split),
		cmocka_unit_test(test_delta),
		cmocka_unit_test(test_how),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
