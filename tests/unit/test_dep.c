/*
 * test_dep.c: dependencies in Slurm's syntax (dep.c): parsed, refused,
 * packed, written back, and whether each kind holds on a job in each
 * state and on a whole array; table-driven.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <cmocka.h>

#include "dep.h"

/* What a parse gave, as text: "ok:12 any:14_ notok:15_3 s" */
static void
test_dep_show(const struct dep_list *l, char *buf, size_t len)
{
	static const char *const k[] = { "ok", "any", "notok", "after" };
	size_t off = 0;
	int i;

	buf[0] = '\0';
	for (i = 0; i < l->n; i++) {
		off += (size_t)snprintf(buf + off, len - off, "%s%s:%lld", i ? " " : "",
		    k[l->d[i].kind], (long long)l->d[i].id);
		if (l->d[i].index == DEP_WHOLE)
			off += (size_t)snprintf(buf + off, len - off, "_");
		else if (l->d[i].index >= 0)
			off += (size_t)snprintf(buf + off, len - off, "_%lld",
			    (long long)l->d[i].index);
	}
	if (l->singleton)
		snprintf(buf + off, len - off, "%ss", l->n ? " " : "");
}

static void
test_parse(void **state)
{
	static const struct { const char *s; int bare; const char *want; } t[] = {
		{ "afterok:12", DEP_AFTERANY, "ok:12" },
		{ "afterok:12:13", DEP_AFTERANY, "ok:12 ok:13" },
		{ "afterany:14_,afternotok:15_3", DEP_AFTERANY, "any:14_ notok:15_3" },
		{ "after:16", DEP_AFTERANY, "after:16" },
		{ "afterok:7_*", DEP_AFTERANY, "ok:7_" },
		{ "afterok:7_0", DEP_AFTERANY, "ok:7_0" },
		{ "singleton", DEP_AFTERANY, "s" },
		{ "afterok:1,singleton", DEP_AFTERANY, "ok:1 s" },
		/* bare ids: Slurm's afterany for -d, afterok for nvq's --after and old rows */
		{ "12", DEP_AFTERANY, "any:12" },
		{ "1,2,3", DEP_AFTEROK, "ok:1 ok:2 ok:3" },
		{ "23_", DEP_AFTEROK, "ok:23_" },
	};
	struct dep_list l;
	char got[256], why[160];
	size_t i;
	int r;

	(void)state;
	for (i = 0; i < sizeof(t) / sizeof(t[0]); i++) {
		memset(&l, 0, sizeof(l));
		why[0] = '\0';
		r = dep_parse(t[i].s, t[i].bare, &l, why, sizeof(why));
		test_dep_show(&l, got, sizeof(got));
		if (r != 0 || strcmp(got, t[i].want) != 0) {
			print_error("dep_parse(\"%s\") = %d, \"%s\" (%s)\n", t[i].s, r, got, why);
			fail();
		}
	}
}

/* Refused, each with a sentence. */
static void
test_refused(void **state)
{
	static const char *const t[] = { "", "afterok:1?afterany:2", "aftercorr:1", "afterok:",
	    "afterok:1+5", "afterok:0", "afterok:x", "afterok:1_x", "afterok:1_-1",
	    "afterok:1_10000001", "afterok:1,", "singletons", "afterok:99999999999999999999" };
	struct dep_list l;
	char why[160];
	size_t i;

	(void)state;
	for (i = 0; i < sizeof(t) / sizeof(t[0]); i++) {
		memset(&l, 0, sizeof(l));
		why[0] = '\0';
		if (dep_parse(t[i], DEP_AFTERANY, &l, why, sizeof(why)) != -1 || why[0] == '\0') {
			print_error("dep_parse(\"%s\") was taken\n", t[i]);
			fail();
		}
	}
}

static void
test_too_many(void **state)
{
	char s[PARSE_MAX_IDS * 8 + 16], why[160];
	struct dep_list l;
	size_t off;
	int i;

	(void)state;
	off = (size_t)snprintf(s, sizeof(s), "afterok");
	for (i = 0; i < PARSE_MAX_IDS; i++)
		off += (size_t)snprintf(s + off, sizeof(s) - off, ":%d", i + 1);
	memset(&l, 0, sizeof(l));
	assert_int_equal(dep_parse(s, DEP_AFTERANY, &l, why, sizeof(why)), 0);
	assert_int_equal(l.n, PARSE_MAX_IDS);
	snprintf(s + off, sizeof(s) - off, ":99");
	memset(&l, 0, sizeof(l));
	assert_int_equal(dep_parse(s, DEP_AFTERANY, &l, why, sizeof(why)), -1);
	assert_non_null(strstr(why, "at most 64"));
}

static void
test_pack_format(void **state)
{
	int64_t v[] = { dep_pack(DEP_AFTEROK, 0, 12), dep_pack(DEP_AFTERANY, 1, 14),
	    dep_pack(DEP_AFTEROK, 1, 79), dep_pack(DEP_AFTER, 0, (INT64_C(1) << 47) + 3) };
	struct dep_list l;
	char buf[DEP_MAX_TEXT], why[160];
	int i;

	(void)state;
	assert_int_equal(dep_id(v[1]), 14);
	assert_int_equal(dep_kind(v[1]), DEP_AFTERANY);
	assert_true(dep_whole(v[1]));
	assert_false(dep_whole(v[0]));
	assert_int_equal(dep_id(v[3]), (INT64_C(1) << 47) + 3);
	assert_int_equal(dep_kind(v[3]), DEP_AFTER);
	assert_true(dep_format(v, 4, 1, buf, sizeof(buf)) > 0);
	assert_string_equal(buf, "afterok:12:79_,afterany:14_,after:140737488355331,singleton");
	assert_int_equal(dep_format(v, 0, 0, buf, sizeof(buf)), 0);
	assert_string_equal(buf, "");
	assert_int_equal(dep_format(v, 4, 0, buf, 10), -1);
	/* what is stored reads back as it was */
	assert_true(dep_format(v, 3, 0, buf, sizeof(buf)) > 0);
	memset(&l, 0, sizeof(l));
	assert_int_equal(dep_parse(buf, DEP_AFTEROK, &l, why, sizeof(why)), 0);
	assert_int_equal(l.n, 3);
	for (i = 0; i < 3; i++)
		assert_true(dep_pack(l.d[i].kind, l.d[i].index == DEP_WHOLE, l.d[i].id) ==
		    v[i == 0 ? 0 : i == 1 ? 2 : 1]);
	/* and dep_unformat packs it back, with singleton */
	{
		int64_t back[PARSE_MAX_IDS];
		int single = 0;

		assert_true(dep_format(v, 4, 1, buf, sizeof(buf)) > 0);
		assert_int_equal(dep_unformat(buf, back, &single), 4);
		assert_int_equal(single, 1);
		assert_true(back[0] == v[0] && back[1] == v[2] && back[2] == v[1] && back[3] == v[3]);
		assert_int_equal(dep_unformat("singleton", back, &single), 0);
		assert_int_equal(single, 1);
		assert_int_equal(dep_unformat("1,2,3", back, &single), 3);	/* nvq's before -d */
		assert_true(dep_kind(back[2]) == DEP_AFTEROK && dep_id(back[2]) == 3 && !single);
		assert_int_equal(dep_unformat("", back, &single), 0);
		assert_int_equal(dep_unformat(NULL, back, &single), 0);
		assert_int_equal(dep_unformat("afterok:x", back, &single), 0);	/* unreadable */
	}
}

/* Every kind against every state: Slurm's meaning; never means cancelled. */
static void
test_holds(void **state)
{
	static const struct { const char *state; int ok, any, notok, after; } t[] = {
		{ "PENDING", DEP_WAIT, DEP_WAIT, DEP_WAIT, DEP_WAIT },
		{ "RUNNING", DEP_WAIT, DEP_WAIT, DEP_WAIT, DEP_MET },
		{ "SUSPENDED", DEP_WAIT, DEP_WAIT, DEP_WAIT, DEP_MET },
		{ "COMPLETED", DEP_MET, DEP_MET, DEP_NEVER, DEP_MET },
		{ "FAILED", DEP_NEVER, DEP_MET, DEP_MET, DEP_MET },
		{ "CANCELLED", DEP_NEVER, DEP_MET, DEP_MET, DEP_MET },
		{ "TIMEOUT", DEP_NEVER, DEP_MET, DEP_MET, DEP_MET },
		{ "NODE_FAIL", DEP_NEVER, DEP_MET, DEP_MET, DEP_MET },
	};
	size_t i;

	(void)state;
	for (i = 0; i < sizeof(t) / sizeof(t[0]); i++) {
		if (dep_holds(DEP_AFTEROK, t[i].state) != t[i].ok ||
		    dep_holds(DEP_AFTERANY, t[i].state) != t[i].any ||
		    dep_holds(DEP_AFTERNOTOK, t[i].state) != t[i].notok ||
		    dep_holds(DEP_AFTER, t[i].state) != t[i].after) {
			print_error("dep_holds(*, %s)\n", t[i].state);
			fail();
		}
	}
}

/* A whole array: waits while a task is active, then as afterok/any/notok on all. */
static void
test_array_holds(void **state)
{
	static const struct { int kind; int64_t active, unfinished; int want; } t[] = {
		{ DEP_AFTEROK, 1, 0, DEP_WAIT }, { DEP_AFTERANY, 3, 2, DEP_WAIT },
		{ DEP_AFTERNOTOK, 1, 1, DEP_WAIT },
		{ DEP_AFTEROK, 0, 0, DEP_MET }, { DEP_AFTEROK, 0, 1, DEP_NEVER },
		{ DEP_AFTERANY, 0, 0, DEP_MET }, { DEP_AFTERANY, 0, 5, DEP_MET },
		{ DEP_AFTERNOTOK, 0, 0, DEP_NEVER }, { DEP_AFTERNOTOK, 0, 1, DEP_MET },
	};
	size_t i;

	(void)state;
	for (i = 0; i < sizeof(t) / sizeof(t[0]); i++)
		if (dep_array_holds(t[i].kind, t[i].active, t[i].unfinished) != t[i].want) {
			print_error("row %zu\n", i);
			fail();
		}
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_parse),
		cmocka_unit_test(test_refused),
		cmocka_unit_test(test_too_many),
		cmocka_unit_test(test_pack_format),
		cmocka_unit_test(test_holds),
		cmocka_unit_test(test_array_holds),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
