/*
 * test_stored.c: the bytes users' active jobs keep (stored.c): a job's own
 * bytes come and go with it; an array's shared bytes are counted once for
 * all its tasks and given back with the last; users are counted apart.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <cmocka.h>

#include "stored.h"

#define MIB	(1ULL << 20)

/* A row: a job becomes active (add) or ends (drop), and uid's count after it. */
struct step {
	int		add;
	uint32_t	uid;
	uint64_t	own;
	int64_t		array;
	uint64_t	shared;
	uint64_t	want;		/* stored_bytes(uid) after the step */
};

static void
run(const struct step *s, size_t n)
{
	struct stored t = { 0 };
	size_t i;

	for (i = 0; i < n; i++) {
		if (s[i].add)
			assert_int_equal(stored_add(&t, s[i].uid, s[i].own, s[i].array,
			    s[i].shared), 0);
		else
			stored_drop(&t, s[i].uid, s[i].own, s[i].array);
		if (stored_bytes(&t, s[i].uid) != s[i].want)
			fail_msg("step %zu: uid %u keeps %llu bytes, wanted %llu", i,
			    (unsigned)s[i].uid, (unsigned long long)stored_bytes(&t, s[i].uid),
			    (unsigned long long)s[i].want);
	}
	stored_free(&t);
}

static void
test_plain_jobs(void **state)
{
	static const struct step s[] = {
		{ 1, 1000, MIB, 0, 0, MIB },
		{ 1, 1000, 2 * MIB, 0, 0, 3 * MIB },
		{ 1, 1001, 5, 0, 0, 5 },		/* another user's */
		{ 0, 1000, MIB, 0, 0, 2 * MIB },
		{ 0, 1000, 2 * MIB, 0, 0, 0 },
		{ 0, 1001, 5, 0, 0, 0 },
	};

	(void)state;
	run(s, sizeof(s) / sizeof(s[0]));
}

static void
test_array_once(void **state)
{
	/* an array of 3 tasks sharing 1 MiB, each 100 bytes of its own */
	static const struct step s[] = {
		{ 1, 1000, 100, 7, MIB, MIB + 100 },
		{ 1, 1000, 100, 7, MIB, MIB + 200 },
		{ 1, 1000, 100, 7, MIB, MIB + 300 },
		{ 0, 1000, 100, 7, 0, MIB + 200 },	/* the first ends: shared stays */
		{ 0, 1000, 100, 7, 0, MIB + 100 },
		{ 1, 1000, 100, 9, MIB, 2 * MIB + 200 },	/* another array */
		{ 0, 1000, 100, 7, 0, MIB + 100 },	/* the last of 7: its share goes */
		{ 0, 1000, 100, 9, 0, 0 },
		/* a task restarted alone brings less than its array's: the most counts */
		{ 1, 1000, 10, 11, 50, 60 },
		{ 1, 1000, 10, 11, 500, 520 },
		{ 0, 1000, 10, 11, 0, 510 },
		{ 0, 1000, 10, 11, 0, 0 },
	};

	(void)state;
	run(s, sizeof(s) / sizeof(s[0]));
}

static void
test_many_arrays(void **state)
{
	struct stored t = { 0 };
	int64_t a;

	(void)state;
	/* past the first table's size: it grows and keeps every array */
	for (a = 1; a <= 1000; a++) {
		assert_int_equal(stored_add(&t, 1000, 1, a, 10), 0);
		assert_int_equal(stored_add(&t, 1000, 1, a, 10), 0);
	}
	assert_int_equal(stored_bytes(&t, 1000), 1000 * 12);
	for (a = 1; a <= 1000; a++)
		stored_drop(&t, 1000, 1, a);
	assert_int_equal(stored_bytes(&t, 1000), 1000 * 11);
	for (a = 1; a <= 1000; a++)
		stored_drop(&t, 1000, 1, a);
	assert_int_equal(stored_bytes(&t, 1000), 0);
	assert_int_equal(t.n, 0);
	/* a drop more than was added (an estimate) stops at 0 */
	stored_drop(&t, 1000, 5, 0);
	assert_int_equal(stored_bytes(&t, 1000), 0);
	stored_free(&t);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_plain_jobs),
		cmocka_unit_test(test_array_once),
		cmocka_unit_test(test_many_arrays),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
