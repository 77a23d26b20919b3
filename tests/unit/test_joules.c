/*
 * test_joules.c: energy as nvq prints it (nvq/joules.c): the unit changes
 * at a watt-hour and a kilowatt-hour, unknown is never 0, and nvqd's
 * per-GPU list reads as UUID, energy, how.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "joules.h"

static void
test_units(void **state)
{
	static const struct { double j; const char *want; } cases[] = {
		{ -1, "unknown" }, { 0, "0.0 J" }, { 2.5, "2.5 J" }, { 512, "512 J" },
		{ 3599, "3599 J" }, { 3600, "1.00 Wh" }, { 45000, "12.50 Wh" },
		{ 3.6e6, "1.000 kWh" }, { 5.472e6, "1.520 kWh" },
	};
	char buf[32];
	size_t i;

	(void)state;
	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		joules_fmt(cases[i].j, buf, sizeof(buf));
		assert_string_equal(buf, cases[i].want);
	}
}

static void
test_list(void **state)
{
	char buf[256];

	(void)state;
	joules_list("GPU-a=3600.000:alone,GPU-b=unknown:unknown", buf, sizeof(buf));
	assert_string_equal(buf, "GPU-a 1.00 Wh alone, GPU-b unknown unknown");
	joules_list("GPU-a=12.000:shared", buf, sizeof(buf));
	assert_string_equal(buf, "GPU-a 12 J shared");
	/* what it cannot read is passed on as it came */
	joules_list("odd", buf, sizeof(buf));
	assert_string_equal(buf, "odd");
	joules_list("", buf, sizeof(buf));
	assert_string_equal(buf, "");
	/* cut to the buffer, still a string */
	joules_list("GPU-a=3600.000:alone,GPU-b=unknown:unknown", buf, 10);
	assert_int_equal(buf[9], '\0');
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_units),
		cmocka_unit_test(test_list),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
