/*
 * test_webrate.c: the web listener's requests per address (nvqd/front/webrate.c),
 * table-driven: bursts, refills, addresses apart, a full table.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "webrate.h"

static struct webrate W;

static void
test_take_table(void **state)
{
	/* one table at rate 2, asked in this order */
	static const struct { uint32_t addr; double now; int ok; } t[] = {
		{ 1, 0.0, 1 }, { 1, 0.0, 1 }, { 1, 0.0, 0 },	/* a burst of 2, then no */
		{ 2, 0.0, 1 },					/* another address: its own */
		{ 1, 0.25, 0 }, { 1, 0.5, 1 }, { 1, 0.5, 0 },	/* half a token, then one */
		{ 1, 100.0, 1 }, { 1, 100.0, 1 }, { 1, 100.0, 0 },	/* refills to 2, not 200 */
		{ 1, 99.0, 0 },					/* the clock back: nothing given */
	};
	size_t i;

	(void)state;
	webrate_init(&W, 2);
	for (i = 0; i < sizeof(t) / sizeof(t[0]); i++)
		assert_int_equal(webrate_take(&W, t[i].addr, t[i].now), t[i].ok);
}

static void
test_full_table(void **state)
{
	uint32_t a;

	(void)state;
	webrate_init(&W, 1);
	assert_int_equal(webrate_take(&W, 7, 0), 1);
	assert_int_equal(webrate_take(&W, 7, 0), 0);
	/* more addresses than slots, all later: 7, the least recently seen, gives its place up */
	for (a = 100; a < 100 + 2 * WEBRATE_SLOTS; a++)
		assert_int_equal(webrate_take(&W, a, 1 + a * 1e-6), 1);
	/* those still in the table are refused a second ask at once */
	assert_int_equal(webrate_take(&W, 100 + 2 * WEBRATE_SLOTS - 1, 1.01), 0);
	/* 7 comes back as new, with a full bucket */
	assert_int_equal(webrate_take(&W, 7, 1.01), 1);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_take_table),
		cmocka_unit_test(test_full_table),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
