/*
 * test_cgplace.c: which cgroup nvqd manages and whether it may step into
 * its leaf (cgplace.h), row by row.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <string.h>

#include "cgplace.h"

static void
test_plan(void **state)
{
	static const struct {
		const char	*own;
		int		systemd;
		int		rc;
		const char	*delegated;
		int		may_move, in_leaf;
	} rows[] = {
		/* by hand in a cgroup of its own: manage it, step into its leaf if refused */
		{ "/nvqsvc", 0, 0, "/nvqsvc", 1, 0 },
		/* systemd 254+ with DelegateSubgroup=nvqd: the unit's cgroup is the parent */
		{ "/system.slice/nvqd.service/nvqd", 1, 0, "/system.slice/nvqd.service", 0, 1 },
		/* an older systemd: stay, a restart could not enter a cgroup with controllers */
		{ "/system.slice/nvqd.service", 1, 0, "/system.slice/nvqd.service", 0, 0 },
		/* restarted by hand after stepping into the leaf: the same delegated cgroup */
		{ "/nvqsvc/nvqd", 0, 0, "/nvqsvc", 0, 1 },
		{ "/nvqsvc/nvqd/", 0, 0, "/nvqsvc", 0, 1 },
		/* the mount's root, or a leaf right under it */
		{ "/", 0, 0, "", 1, 0 },
		{ "/", 1, 0, "", 0, 0 },
		{ "/nvqd", 0, 0, "", 0, 1 },
		/* names that only look like the leaf */
		{ "/a/nvqdx", 0, 0, "/a/nvqdx", 1, 0 },
		{ "/a/xnvqd", 0, 0, "/a/xnvqd", 1, 0 },
		/* not a path */
		{ "", 0, -1, "", 0, 0 },
		{ "relative/nvqd", 0, -1, "", 0, 0 },
		{ "/a/../b", 0, -1, "", 0, 0 },
	};
	struct cgplace p;
	size_t i;

	(void)state;
	for (i = 0; i < sizeof(rows) / sizeof(rows[0]); i++) {
		print_message("row %zu: %s\n", i, rows[i].own);
		assert_int_equal(cgplace_plan(rows[i].own, rows[i].systemd, &p), rows[i].rc);
		assert_string_equal(p.delegated, rows[i].delegated);
		assert_int_equal(p.may_move, rows[i].may_move);
		assert_int_equal(p.in_leaf, rows[i].in_leaf);
	}
	assert_int_equal(cgplace_plan(NULL, 0, &p), -1);
}

static void
test_act(void **state)
{
	static const struct {
		int		may_move, holds, mixable;
		enum cgplace_act want;
	} rows[] = {
		{ 1, 0, 0, CGPLACE_ENABLE },	/* empty: ask */
		{ 0, 0, 0, CGPLACE_ENABLE },
		{ 1, 1, 0, CGPLACE_MOVE },	/* nvqd in it, by hand: step aside first */
		{ 0, 1, 0, CGPLACE_NONE },	/* processes and no move: ask for nothing */
		{ 0, 1, 1, CGPLACE_ENABLE },	/* the real root may have both */
		{ 1, 1, 1, CGPLACE_ENABLE },
	};
	struct cgplace p;
	size_t i;

	(void)state;
	memset(&p, 0, sizeof(p));
	for (i = 0; i < sizeof(rows) / sizeof(rows[0]); i++) {
		print_message("row %zu\n", i);
		p.may_move = rows[i].may_move;
		assert_int_equal(cgplace_act(&p, rows[i].holds, rows[i].mixable), rows[i].want);
	}
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_plan),
		cmocka_unit_test(test_act),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
