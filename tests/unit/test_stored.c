/*
 * test_stored.c: what jobs share, counted once (stored.c): the first job of
 * a key brings its bytes, the last takes them away, a job that brings more
 * raises the count; and the table keeps every key through growth and
 * deletions that shift colliding keys (checked against a plain array).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <cmocka.h>

#include "stored.h"

#define MIB	(1ULL << 20)

/* A row: a job of key becomes active (add, with bytes) or ends, and what changes. */
struct step {
	int		add;
	int64_t		key;
	uint64_t	bytes;
	uint64_t	want;		/* *more of an add, or what a drop returns */
};

static void
test_once_per_key(void **state)
{
	static const struct step s[] = {
		{ 1, 7, MIB, MIB },		/* an array's first task */
		{ 1, 7, MIB, 0 },		/* its others: counted already */
		{ 1, 7, MIB, 0 },
		{ 0, 7, 0, 0 },			/* the first ends: the share stays */
		{ 1, -1, 300, 300 },		/* a restart's, below 0 */
		{ 0, 7, 0, 0 },
		{ 0, 7, 0, MIB },		/* the last of 7: its share goes */
		{ 0, 7, 0, 0 },			/* a key no longer there */
		{ 0, -1, 0, 300 },
		/* a task restarted alone brings less than its array's: the most counts */
		{ 1, 11, 50, 50 },
		{ 1, 11, 500, 450 },
		{ 1, 11, 10, 0 },
		{ 0, 11, 0, 0 },
		{ 0, 11, 0, 0 },
		{ 0, 11, 0, 500 },
	};
	struct stored t = { 0 };
	uint64_t got;
	size_t i;

	(void)state;
	for (i = 0; i < sizeof(s) / sizeof(s[0]); i++) {
		if (s[i].add)
			assert_int_equal(stored_add(&t, s[i].key, s[i].bytes, &got), 0);
		else
			got = stored_drop(&t, s[i].key);
		if (got != s[i].want)
			fail_msg("step %zu: %llu, wanted %llu", i, (unsigned long long)got,
			    (unsigned long long)s[i].want);
	}
	assert_int_equal(t.n, 0);
	stored_free(&t);
}

static void
test_table_against_model(void **state)
{
	enum { KEYS = 3000 };
	static int jobs[KEYS];		/* the model: active jobs per key index */
	struct stored t = { 0 };
	uint64_t got, want, total = 0, model = 0;
	int64_t key;
	int step, k;

	(void)state;
	srand(39);
	/* keys that collide (multiples of a power of two) and keys below 0 */
	for (step = 0; step < 200000; step++) {
		k = rand() % KEYS;
		key = k % 2 ? -(int64_t)(k + 1) : (int64_t)(k + 1) << 12;
		if (rand() % 5 < 3) {
			assert_int_equal(stored_add(&t, key, (uint64_t)k + 1, &got), 0);
			want = jobs[k]++ == 0 ? (uint64_t)k + 1 : 0;
			assert_int_equal(got, want);
			total += got;
			model += want;
		} else {
			got = stored_drop(&t, key);
			want = jobs[k] > 0 && --jobs[k] == 0 ? (uint64_t)k + 1 : 0;
			assert_int_equal(got, want);
			total -= got;
			model -= want;
		}
		assert_true(t.cap == 0 || 2 * t.n <= t.cap);
	}
	assert_int_equal(total, model);
	for (k = 0, want = 0; k < KEYS; k++)
		want += jobs[k] > 0;
	assert_int_equal(t.n, want);
	stored_free(&t);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_once_per_key),
		cmocka_unit_test(test_table_against_model),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
