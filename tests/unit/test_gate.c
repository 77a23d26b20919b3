/*
 * test_gate.c: the limits of arrays (gate.c): an array's tasks past its
 * limit wait in order, a place given back goes to the first waiting, a
 * cancelled task leaves the line, a task that runs already (force) is let
 * through, arrays do not share places, and an array's gate goes when its
 * last task does (checked through the table's count, across growth).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <cmocka.h>

#include "gate.h"

static void
test_limit_and_order(void **state)
{
	struct gates t = { 0 };
	struct gate_node n[5] = { 0 };

	(void)state;
	assert_int_equal(gates_enter(&t, 7, 2, &n[0], 0), 1);
	assert_int_equal(gates_enter(&t, 7, 2, &n[1], 0), 1);
	assert_int_equal(gates_enter(&t, 7, 2, &n[2], 0), 0);
	assert_int_equal(gates_enter(&t, 7, 2, &n[3], 0), 0);
	assert_int_equal(n[2].waiting, 1);
	assert_int_equal(n[2].slot, 0);
	assert_int_equal(t.n, 1);
	/* a node that holds a place asks again: nothing changes */
	assert_int_equal(gates_enter(&t, 7, 2, &n[0], 0), 1);
	assert_int_equal(gates_enter(&t, 7, 2, &n[4], 0), 0);
	/* a place given back: the first waiting, out of the line, enters now */
	assert_ptr_equal(gates_leave(&t, 7, &n[0]), &n[2]);
	assert_int_equal(n[2].waiting, 0);
	assert_int_equal(n[0].slot, 0);
	assert_int_equal(gates_enter(&t, 7, 2, &n[2], 0), 1);
	/* the next in line is cancelled: the one after it is next */
	gates_cancel(&t, 7, &n[3]);
	assert_int_equal(n[3].waiting, 0);
	assert_ptr_equal(gates_leave(&t, 7, &n[1]), &n[4]);
	assert_int_equal(gates_enter(&t, 7, 2, &n[4], 0), 1);
	/* nobody waits: leaving hands nothing on; the last one out frees the gate */
	assert_null(gates_leave(&t, 7, &n[2]));
	assert_int_equal(t.n, 1);
	assert_null(gates_leave(&t, 7, &n[4]));
	assert_int_equal(t.n, 0);
	/* leaving again, or cancelling what does not wait: nothing */
	assert_null(gates_leave(&t, 7, &n[4]));
	gates_cancel(&t, 7, &n[3]);
	gates_free(&t);
}

static void
test_force(void **state)
{
	struct gates t = { 0 };
	struct gate_node n[3] = { 0 };

	(void)state;
	assert_int_equal(gates_enter(&t, 3, 1, &n[0], 0), 1);
	/* a task that runs already (nvqd restarted) holds a place past the limit */
	assert_int_equal(gates_enter(&t, 3, 1, &n[1], 1), 1);
	assert_int_equal(gates_enter(&t, 3, 1, &n[2], 0), 0);
	/* two hold places of one: a place given back leaves one, still no room */
	assert_null(gates_leave(&t, 3, &n[0]));
	assert_ptr_equal(gates_leave(&t, 3, &n[1]), &n[2]);
	assert_int_equal(gates_enter(&t, 3, 1, &n[2], 0), 1);
	assert_null(gates_leave(&t, 3, &n[2]));
	assert_int_equal(t.n, 0);
	gates_free(&t);
}

/* Many arrays, one place each: none takes another's, through the table's growth. */
static void
test_arrays_apart(void **state)
{
	enum { N = 3000 };
	struct gates t = { 0 };
	struct gate_node *a = calloc(N, sizeof(*a)), *b = calloc(N, sizeof(*b));
	int i;

	(void)state;
	assert_non_null(a);
	assert_non_null(b);
	for (i = 0; i < N; i++)
		assert_int_equal(gates_enter(&t, 1000 + i * 4096, 1, &a[i], 0), 1);
	for (i = 0; i < N; i++)
		assert_int_equal(gates_enter(&t, 1000 + i * 4096, 1, &b[i], 0), 0);
	assert_int_equal(t.n, N);
	for (i = N - 1; i >= 0; i--)
		assert_ptr_equal(gates_leave(&t, 1000 + i * 4096, &a[i]), &b[i]);
	for (i = 0; i < N; i++) {
		assert_int_equal(gates_enter(&t, 1000 + i * 4096, 1, &b[i], 0), 1);
		assert_null(gates_leave(&t, 1000 + i * 4096, &b[i]));
	}
	assert_int_equal(t.n, 0);
	gates_free(&t);
	free(a);
	free(b);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_limit_and_order),
		cmocka_unit_test(test_force),
		cmocka_unit_test(test_arrays_apart),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
