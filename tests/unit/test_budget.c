/*
 * test_budget.c: the hook's accounting: limits per device, reserve and
 * settle, release by key and kind, and the table through growth and
 * deletions, checked against a plain array.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <cmocka.h>

#include "budget.h"

#define M (1ULL << 20)

static void
test_limits(void **state)
{
	struct budget b;

	(void)state;
	budget_init(&b, 100 * M);
	assert_int_equal(budget_reserve(&b, 0, 60 * M), 0);
	assert_int_equal(budget_reserve(&b, 0, 41 * M), -1);
	assert_int_equal(budget_reserve(&b, 1, 100 * M), 0);	/* its own budget */
	assert_int_equal(budget_reserve(&b, 1, 1), -1);
	assert_int_equal(budget_reserve(&b, 0, UINT64_MAX), -1);	/* no overflow */
	assert_int_equal(budget_commit(&b, BUDGET_PTR, 0x1000, 0, 60 * M), 0);
	assert_int_equal(budget_left(&b, 0), 40 * M);
	/* the same number as a handle is another allocation */
	assert_int_equal(budget_release(&b, BUDGET_HANDLE, 0x1000), -1);
	assert_int_equal(budget_release(&b, BUDGET_PTR, 0x1000), 0);
	assert_int_equal(budget_release(&b, BUDGET_PTR, 0x1000), -1);
	assert_int_equal(budget_left(&b, 0), 100 * M);
	assert_int_equal(b.peak[0], 60 * M);
	budget_unreserve(&b, 1, 100 * M);
	assert_int_equal(budget_left(&b, 1), 100 * M);
	budget_free(&b);
	budget_init(&b, 0);	/* no limit */
	assert_int_equal(budget_reserve(&b, 0, UINT64_MAX / 2), 0);
	assert_true(budget_left(&b, 0) == UINT64_MAX);
	budget_free(&b);
}

static void
test_table(void **state)
{
	enum { N = 20000 };
	struct budget b;
	uint64_t *live = calloc(N, sizeof(*live)), x = 12345, sum = 0;
	int i, k;

	(void)state;
	assert_non_null(live);
	budget_init(&b, 0);
	for (i = 0; i < 200000; i++) {
		x ^= x << 13;
		x ^= x >> 7;
		x ^= x << 17;
		k = (int)(x % N);
		if (live[k] == 0) {
			uint64_t size = 1 + x % 4096;
			assert_int_equal(budget_reserve(&b, 0, size), 0);
			assert_int_equal(budget_commit(&b, BUDGET_PTR, 0x7f0000000000ULL + (uint64_t)k * 256,
			    0, size), 0);
			live[k] = size;
			sum += size;
		} else {
			assert_int_equal(budget_release(&b, BUDGET_PTR,
			    0x7f0000000000ULL + (uint64_t)k * 256), 0);
			sum -= live[k];
			live[k] = 0;
		}
		if (i % 9973 == 0)
			assert_int_equal(b.used[0], sum);
	}
	assert_int_equal(b.used[0], sum);
	budget_free(&b);
	free(live);
}

/* handles the job exported itself: counted once, until released or reused */
static void
test_exported(void **state)
{
	struct budget b;
	int i;

	(void)state;
	budget_init(&b, 0);
	assert_int_equal(budget_exported(&b, BUDGET_HANDLE, 7), -1);	/* nothing known */
	assert_int_equal(budget_reserve(&b, 1, 4096), 0);
	assert_int_equal(budget_commit(&b, BUDGET_HANDLE, 7, 1, 4096), 0);
	assert_int_equal(budget_reserve(&b, 1, 1000), 0);
	assert_int_equal(budget_commit(&b, BUDGET_HANDLE, 8, 1, 1000), 0);
	assert_int_equal(budget_exported(&b, BUDGET_PTR, 7), -1);	/* another kind */
	assert_int_equal(budget_exported(&b, BUDGET_HANDLE, 7), 0);
	assert_int_equal(budget_exported(&b, BUDGET_HANDLE, 7), 0);	/* twice: once */
	assert_int_equal(b.exported, 4096);
	assert_int_equal(budget_exported(&b, BUDGET_HANDLE, 8), 0);
	assert_int_equal(b.exported, 5096);
	assert_int_equal(budget_release(&b, BUDGET_HANDLE, 7), 0);
	assert_int_equal(b.exported, 1000);
	/* a key recorded again is a new allocation: not exported */
	assert_int_equal(budget_reserve(&b, 1, 2000), 0);
	assert_int_equal(budget_commit(&b, BUDGET_HANDLE, 8, 1, 2000), 0);
	assert_int_equal(b.exported, 0);
	assert_int_equal(b.used[1], 2000);
	/* marks survive the table growing */
	for (i = 100; i < 300; i++) {
		assert_int_equal(budget_reserve(&b, 0, 10), 0);
		assert_int_equal(budget_commit(&b, BUDGET_HANDLE, (uint64_t)i, 0, 10), 0);
		if (i % 2 == 0)
			assert_int_equal(budget_exported(&b, BUDGET_HANDLE, (uint64_t)i), 0);
	}
	assert_int_equal(b.exported, 1000);
	for (i = 100; i < 300; i++)
		assert_int_equal(budget_release(&b, BUDGET_HANDLE, (uint64_t)i), 0);
	assert_int_equal(b.exported, 0);
	budget_free(&b);
}

/* nvqd's cap (the job's other processes hold the rest) lowers the limit */
static void
test_ceiling(void **state)
{
	struct budget b;

	(void)state;
	budget_init(&b, 1024 * M);
	b.ceiling[0] = 300 * M;
	assert_int_equal(budget_left(&b, 0), 300 * M);
	assert_int_equal(budget_reserve(&b, 0, 400 * M), -1);
	assert_int_equal(budget_reserve(&b, 0, 200 * M), 0);
	assert_int_equal(budget_left(&b, 0), 100 * M);
	assert_int_equal(budget_left(&b, 1), 1024 * M);	/* other devices keep the limit */
	b.ceiling[1] = 2048 * M;				/* a cap never raises it */
	assert_int_equal(budget_reserve(&b, 1, 1100 * M), -1);
	/* used already past a lowered cap: nothing left, nothing negative */
	b.ceiling[0] = 100 * M;
	assert_int_equal(budget_left(&b, 0), 0);
	assert_int_equal(budget_reserve(&b, 0, 1), -1);
	budget_free(&b);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_limits),
		cmocka_unit_test(test_table),
		cmocka_unit_test(test_ceiling),
		cmocka_unit_test(test_exported),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
