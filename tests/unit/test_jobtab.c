/*
 * test_jobtab.c: the active jobs by id (jobtab.c), against a plain array:
 * every job put is found by its id, through the table's growth and ids
 * that fall in one bucket; a deleted job is not, and the others stay;
 * deleting what is not there changes nothing.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <cmocka.h>

#include "job.h"
#include "jobtab.h"

enum { N = 20000 };

static void
test_find_through_growth(void **state)
{
	struct jobtab t = { 0 };
	struct job *j = calloc(N, sizeof(*j));
	int i;

	(void)state;
	assert_non_null(j);
	assert_null(jobtab_find(&t, 1));
	jobtab_del(&t, &j[0]);		/* an empty table */
	for (i = 0; i < N; i++) {
		/* ids far apart and many sharing their low bits */
		j[i].id = i % 2 ? (int64_t)i << 32 : i + 1;
		assert_int_equal(jobtab_put(&t, &j[i]), 0);
	}
	assert_int_equal(t.n, N);
	assert_true(t.nb >= N);
	for (i = 0; i < N; i++)
		assert_ptr_equal(jobtab_find(&t, j[i].id), &j[i]);
	assert_null(jobtab_find(&t, -5));
	assert_null(jobtab_find(&t, ((int64_t)N << 32) + 3));
	/* every third goes: the rest are found, the gone are not */
	for (i = 0; i < N; i += 3)
		jobtab_del(&t, &j[i]);
	jobtab_del(&t, &j[0]);		/* not there any more: nothing changes */
	assert_int_equal(t.n, N - (N + 2) / 3);
	for (i = 0; i < N; i++)
		if (i % 3 == 0)
			assert_null(jobtab_find(&t, j[i].id));
		else
			assert_ptr_equal(jobtab_find(&t, j[i].id), &j[i]);
	/* put back: found again */
	assert_int_equal(jobtab_put(&t, &j[0]), 0);
	assert_ptr_equal(jobtab_find(&t, j[0].id), &j[0]);
	jobtab_free(&t);
	assert_int_equal(t.n, 0);
	assert_null(jobtab_find(&t, j[1].id));
	free(j);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_find_through_growth),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
