/*
 * test_jobstate.c: lists of job states (jobstate.c), row by row: what
 * each names, how many items, and what is refused.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <cmocka.h>

#include "jobstate.h"

#define B(s)	(1u << JOBSTATE_##s)

static void
test_lists(void **state)
{
	static const struct {
		const char	*list;
		int		items;
		unsigned	mask;
	} rows[] = {
		{ "PENDING", 1, B(PENDING) },
		{ "NODE_FAIL", 1, B(NODE_FAIL) },
		{ "PENDING,RUNNING,SUSPENDED", 3, JOBSTATE_ACTIVE },
		{ "COMPLETED,FAILED", 2, B(COMPLETED) | B(FAILED) },
		{ "RUNNING,RUNNING", 2, B(RUNNING) },		/* repeats counted */
		{ "CANCELLED,TIMEOUT,PENDING", 3, B(CANCELLED) | B(TIMEOUT) | B(PENDING) },
		{ "", -1, 0 },
		{ ",", -1, 0 },
		{ "PENDING,", -1, 0 },				/* an empty item */
		{ ",PENDING", -1, 0 },
		{ "PENDING,,RUNNING", -1, 0 },
		{ "pending", -1, 0 },				/* nvq turns names and codes into these */
		{ "PD", -1, 0 },
		{ "PENDINGX", -1, 0 },
		{ "PEND", -1, 0 },
		{ "RUNNING,DONE", -1, 0 },
		{ "PENDING RUNNING", -1, 0 },
	};
	unsigned mask;
	size_t i;

	(void)state;
	for (i = 0; i < sizeof(rows) / sizeof(rows[0]); i++) {
		int n = jobstate_list(rows[i].list, &mask);

		if (n != rows[i].items || (n > 0 && mask != rows[i].mask))
			fail_msg("row %zu \"%s\": got %d items (mask %#x), wanted %d (%#x)", i,
			    rows[i].list, n, mask, rows[i].items, rows[i].mask);
	}
	assert_int_equal(jobstate_list(NULL, &mask), -1);
}

static void
test_names(void **state)
{
	unsigned mask;
	int i;

	(void)state;
	/* every name is a list of one, with its own bit */
	for (i = 0; i < JOBSTATE_N; i++) {
		assert_int_equal(jobstate_list(jobstate_names[i], &mask), 1);
		assert_int_equal(mask, 1u << i);
	}
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_lists),
		cmocka_unit_test(test_names),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
