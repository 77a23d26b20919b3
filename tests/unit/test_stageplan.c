/*
 * test_stageplan.c: which parts of which allocations each piece of a move
 * out's staging receives: table-driven cases, then every layout of a few
 * sizes against a byte-by-byte map of the staging (each byte of every
 * allocation lands exactly once, in order, never across a piece's edge).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <cmocka.h>

#include "stageplan.h"

#define MAXN	8

struct want { size_t item, from, len, at; };

static const struct {
	const char	*what;
	size_t		size[MAXN], n, chunk, piece;
	struct want	parts[MAXN];
	size_t		nparts;
} cases[] = {
	{ "one allocation over three pieces: the middle one", { 10 }, 1, 4, 1,
	    { { 0, 4, 4, 0 } }, 1 },
	{ "its last piece, shorter", { 10 }, 1, 4, 2, { { 0, 8, 2, 0 } }, 1 },
	{ "two small ones share a piece", { 1, 2, 5 }, 3, 4, 0,
	    { { 0, 0, 1, 0 }, { 1, 0, 2, 1 }, { 2, 0, 1, 3 } }, 3 },
	{ "an edge inside the third", { 1, 2, 5 }, 3, 4, 1, { { 2, 1, 4, 0 } }, 1 },
	{ "empty allocations are skipped", { 0, 4, 0, 0, 4 }, 5, 4, 1, { { 4, 0, 4, 0 } }, 1 },
	{ "a piece past the end has none", { 4 }, 1, 4, 1, { { 0 } }, 0 },
	{ "exactly one piece each", { 4, 4, 4 }, 3, 4, 2, { { 2, 0, 4, 0 } }, 1 },
};

static void
test_cases(void **state)
{
	size_t k, j, cur, off[MAXN + 1];
	struct stageplan_part p;

	(void)state;
	for (k = 0; k < sizeof(cases) / sizeof(cases[0]); k++) {
		stageplan_layout(cases[k].size, cases[k].n, off);
		cur = 0;
		for (j = 0; j < cases[k].nparts; j++) {
			if (!stageplan_next(off, cases[k].n, cases[k].chunk, cases[k].piece, &cur, &p))
				fail_msg("%s: part %zu missing", cases[k].what, j);
			if (p.item != cases[k].parts[j].item || p.from != cases[k].parts[j].from ||
			    p.len != cases[k].parts[j].len || p.at != cases[k].parts[j].at)
				fail_msg("%s: part %zu is item %zu from %zu len %zu at %zu", cases[k].what,
				    j, p.item, p.from, p.len, p.at);
		}
		if (stageplan_next(off, cases[k].n, cases[k].chunk, cases[k].piece, &cur, &p))
			fail_msg("%s: a part too many (item %zu)", cases[k].what, p.item);
	}
	assert_int_equal(stageplan_pieces(0, 4), 0);
	assert_int_equal(stageplan_pieces(4, 4), 1);
	assert_int_equal(stageplan_pieces(5, 4), 2);
	assert_int_equal(stageplan_layout(cases[2].size, 3, off), 8);
}

/* Every byte of every allocation lands once, where the layout puts it. */
static void
test_every_byte(void **state)
{
	enum { MAX = 64 };
	size_t size[4], off[5], n, total, chunk, c, cur, b, i, pieces;
	unsigned char seen[MAX];
	struct stageplan_part p;
	unsigned s;

	(void)state;
	for (s = 0; s < 4 * 4 * 4 * 4 * 6; s++) {
		n = 1 + s % 4;
		for (i = 0; i < n; i++)
			size[i] = (s / 4 >> (2 * i) & 3) * 3;	/* 0, 3, 6 or 9 */
		chunk = 1 + s / 256 % 6;
		total = stageplan_layout(size, n, off);
		assert_true(total <= MAX);
		memset(seen, 0, sizeof(seen));
		pieces = stageplan_pieces(total, chunk);
		for (c = 0; c < pieces + 1; c++)
			for (cur = 0; stageplan_next(off, n, chunk, c, &cur, &p);) {
				assert_true(p.item < n && p.len > 0);
				assert_true(p.at + p.len <= chunk);	/* never across an edge */
				assert_true(p.from + p.len <= size[p.item]);
				assert_int_equal(c * chunk + p.at, off[p.item] + p.from);
				for (b = 0; b < p.len; b++)
					seen[c * chunk + p.at + b]++;
			}
		for (b = 0; b < total; b++)
			assert_int_equal(seen[b], 1);
	}
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_cases),
		cmocka_unit_test(test_every_byte),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
