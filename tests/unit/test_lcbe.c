/*
 * test_lcbe.c: lc/be's pure parts (issue 43): the latency buckets the hook
 * counts and nvqd reads (lcbe_page.h), percentiles (lcbestat_quantile), a
 * report's claims (lcbestat_parse), when a be launch waits (lcbe_busy), and
 * who may submit lc and what a submit's class is (lcclass).  Table-driven.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <cmocka.h>

#include "lcbe_page.h"
#include "lcbestat.h"
#include "lcclass.h"

/* every latency lies in its bucket: above the previous bucket's upper edge, at most its own */
static void
test_buckets(void **state)
{
	static const uint64_t ns[] = { 0, 1, 2, 3, 4, 5, 7, 8, 999, 1000, 1023, 1024, 1279,
	    1280, 4500, 65535, 1000000, 123456789, 1ULL << 47, (1ULL << 48) - 1 };
	size_t i;
	int b;

	(void)state;
	for (i = 0; i < sizeof(ns) / sizeof(ns[0]); i++) {
		b = lcbe_bucket(ns[i]);
		assert_true(b >= 0 && b < LCBE_HIST);
		if (ns[i] > 0)
			assert_true(ns[i] < lcbe_upper(b));
		if (b > 0 && ns[i] > 0)
			assert_true(ns[i] >= lcbe_upper(b - 1) || lcbe_upper(b - 1) == lcbe_upper(b));
		/* a quarter of a power of two wide: the edge is at most 25% over (from 4 ns) */
		if (ns[i] >= 4)
			assert_true((double)lcbe_upper(b) <= (double)ns[i] * 1.25 + 1);
	}
	assert_int_equal(lcbe_bucket(UINT64_MAX), LCBE_HIST - 1);
}

/* percentiles of known histograms */
static void
test_quantile(void **state)
{
	uint64_t h[LCBE_HIST];
	int b5 = lcbe_bucket(5000), b50 = lcbe_bucket(50000), b900 = lcbe_bucket(900000);

	(void)state;
	assert_int_equal(lcbestat_quantile(NULL, 0.5), 0);
	memset(h, 0, sizeof(h));
	assert_int_equal(lcbestat_quantile(h, 0.99), 0);
	/* 1000 launches: 989 at 5 us, 10 at 50 us, 1 at 900 us */
	h[b5] = 989;
	h[b50] = 10;
	h[b900] = 1;
	assert_int_equal(lcbestat_quantile(h, 0.5), lcbe_upper(b5));
	assert_int_equal(lcbestat_quantile(h, 0.99), lcbe_upper(b50));
	assert_int_equal(lcbestat_quantile(h, 0.999), lcbe_upper(b900));
	assert_int_equal(lcbestat_quantile(h, 1.0), lcbe_upper(b900));
	/* 999 of them quick: p99.9 is the 1000th fastest, the slow one */
	h[b5] = 999;
	h[b50] = 0;
	assert_int_equal(lcbestat_quantile(h, 0.999), lcbe_upper(b900));
	assert_int_equal(lcbestat_quantile(h, 0.99), lcbe_upper(b5));
}

/* a report as its bytes would decode */
static int
test_report(const char *spec, struct lcbestat_claims *c, char *err, size_t len)
{
	struct proto_buf b = { 0 };
	struct proto_msg m;
	char key[16], derr[128];
	long long v;
	const char *p = spec;
	int n, type, rc;
	uint32_t blen;

	proto_begin(&b, MSG_HOOK_REPORT);
	while (sscanf(p, " %15[a-z_]=%lld%n", key, &v, &n) == 2) {
		proto_put_int(&b, key, v);
		p += n;
	}
	assert_int_equal(proto_end(&b), 0);
	assert_int_equal(proto_header(b.data, &type, &blen, derr, sizeof(derr)), 0);
	assert_int_equal(proto_decode(type, b.data + PROTO_HEADER, blen, &m, derr, sizeof(derr)), 0);
	rc = lcbestat_parse(&m, c, err, len);
	proto_msg_free(&m);
	proto_buf_free(&b);
	return rc;
}

static void
test_parse(void **state)
{
	static const struct {
		const char	*spec;
		int		rc, has_yield, n;
		uint64_t	yield, first;
	} t[] = {
		{ "", 0, 0, 0, 0, 0 },
		{ "used=5 yield_us=1500", 0, 1, 0, 1500, 0 },
		{ "lb=40 ln=7 lb=41 ln=1", 0, 0, 2, 0, 7 },
		{ "yield_us=-1", -1, 0, 0, 0, 0 },
		{ "lb=192 ln=1", -1, 0, 0, 0, 0 },	/* past the last bucket */
		{ "lb=-1 ln=1", -1, 0, 0, 0, 0 },
		{ "ln=3", -1, 0, 0, 0, 0 },		/* a count with no bucket */
		{ "lb=4 lb=5 ln=1", -1, 0, 0, 0, 0 },	/* a bucket with no count */
		{ "lb=4", -1, 0, 0, 0, 0 },
		{ "lb=4 ln=-2", -1, 0, 0, 0, 0 },
		{ "lb=4 ln=4294967297", -1, 0, 0, 0, 0 },	/* over LCBESTAT_MAX_COUNT */
		{ "lb=4 ln=4294967296", 0, 0, 1, 0, 4294967296ULL },
	};
	struct lcbestat_claims c;
	char err[256], many[1024];
	size_t i, off = 0;
	int k;

	(void)state;
	for (i = 0; i < sizeof(t) / sizeof(t[0]); i++) {
		err[0] = '\0';
		if (test_report(t[i].spec, &c, err, sizeof(err)) != t[i].rc) {
			print_error("%s: got %s\n", t[i].spec, err[0] ? err : "accepted");
			fail();
		}
		if (t[i].rc == 0) {
			assert_int_equal(c.has_yield, t[i].has_yield);
			assert_int_equal(c.yield_us, t[i].yield);
			assert_int_equal(c.n, t[i].n);
			if (c.n > 0)
				assert_int_equal(c.count[0], t[i].first);
		} else
			assert_true(err[0] != '\0');
	}
	/* at most LCBESTAT_PAIRS pairs: one more is refused, not cut */
	for (k = 0; k <= LCBESTAT_PAIRS; k++)
		off += (size_t)snprintf(many + off, sizeof(many) - off, "lb=%d ln=1 ", k);
	assert_int_equal(test_report(many, &c, err, sizeof(err)), -1);
}

/* a job's sums from its processes' claims: totals never go down, sums never wrap */
static void
test_sums(void **state)
{
	static const struct {
		uint64_t	sum, add, want;
	} adds[] = {
		{ 0, 0, 0 },
		{ 5, 7, 12 },
		{ LCBESTAT_MAX_SUM - 1, 1, LCBESTAT_MAX_SUM },
		{ LCBESTAT_MAX_SUM - 1, 2, LCBESTAT_MAX_SUM },
		{ 1, UINT64_MAX, LCBESTAT_MAX_SUM },
		{ LCBESTAT_MAX_SUM, 0, LCBESTAT_MAX_SUM },
		{ UINT64_MAX, 1, LCBESTAT_MAX_SUM },
	};
	static const struct {
		uint64_t	claimed;
		int		rc;
		uint64_t	total, last;	/* after it */
	} claims[] = {
		{ 100, 0, 100, 100 },
		{ 100, 0, 100, 100 },		/* nothing new */
		{ 250, 0, 250, 250 },
		{ 0, -1, 250, 250 },		/* a total that went down: refused, nothing counted */
		{ (uint64_t)INT64_MAX, 0, LCBESTAT_MAX_SUM, (uint64_t)INT64_MAX },
		{ 0, -1, LCBESTAT_MAX_SUM, (uint64_t)INT64_MAX },	/* and cannot be counted again */
		{ (uint64_t)INT64_MAX, 0, LCBESTAT_MAX_SUM, (uint64_t)INT64_MAX },
	};
	uint64_t sum, total = 0, last = 0;
	char err[160];
	size_t i;

	(void)state;
	for (i = 0; i < sizeof(adds) / sizeof(adds[0]); i++) {
		sum = adds[i].sum;
		lcbestat_add(&sum, adds[i].add);
		if (sum != adds[i].want)
			fail_msg("add row %zu: got %llu, wanted %llu", i, (unsigned long long)sum,
			    (unsigned long long)adds[i].want);
	}
	for (i = 0; i < sizeof(claims) / sizeof(claims[0]); i++) {
		int rc = lcbestat_yield(&total, &last, claims[i].claimed, err, sizeof(err));

		if (rc != claims[i].rc || total != claims[i].total || last != claims[i].last)
			fail_msg("claim row %zu: got %d total %llu last %llu", i, rc,
			    (unsigned long long)total, (unsigned long long)last);
	}
	assert_non_null(strstr(err, "never goes down"));
	/* the histogram's total of sums at the bound still fits */
	assert_true(LCBESTAT_MAX_SUM <= UINT64_MAX / LCBE_HIST);
	assert_true(LCBESTAT_MAX_SUM <= (uint64_t)INT64_MAX);
}

/* a be launch waits for a busy slot of its GPU, live there by nvqd's word, whose beat is fresh; for nothing else */
static void
test_busy(void **state)
{
	static struct lcbe_page p;
	static struct lcbe_live live;
	uint64_t now = 10ULL * 1000000000ULL;

	(void)state;
	memset(&p, 0, sizeof(p));
	memset(&live, 0, sizeof(live));
	assert_false(lcbe_busy(&p, NULL, 0, now));
	p.up[0] = 1ULL << 5;
	p.beat[5] = now - 100000000;	/* 100 ms ago: alive */
	assert_true(lcbe_busy(&p, NULL, 0, now));	/* no live page (an older nvqd): the bit */
	assert_false(lcbe_busy(&p, &live, 0, now));	/* nvqd names no slot 5: a page kept past its job */
	live.live[0] = 1ULL << 5;
	assert_true(lcbe_busy(&p, &live, 0, now));
	live.live[1] = 1ULL << 5;	/* slot 5 live on GPU 1 too: GPU 1's word is still down */
	assert_false(lcbe_busy(&p, &live, 1, now));	/* another GPU */
	live.live[0] = 1ULL << 6;	/* slot 5 taken back, slot 6 given */
	assert_false(lcbe_busy(&p, &live, 0, now));
	live.live[0] = 1ULL << 5;
	p.beat[5] = now - LCBE_STALE_NS;	/* gone quiet: its owner died or stopped */
	assert_false(lcbe_busy(&p, &live, 0, now));
	p.up[0] |= 1ULL << 63;	/* a second slot, alive */
	p.beat[63] = now;
	assert_false(lcbe_busy(&p, &live, 0, now));	/* not live by nvqd's word */
	live.live[0] |= 1ULL << 63;
	assert_true(lcbe_busy(&p, &live, 0, now));
	p.up[0] = 0;	/* nvqd cleared them */
	assert_false(lcbe_busy(&p, &live, 0, now));
}

static void
test_who(void **state)
{
	static struct lcclass none, all, named;
	char msg[256];
	gid_t g[2] = { 4242, 77 };

	(void)state;
	assert_int_equal(lcclass_finish(&none, msg, sizeof(msg)), 0);
	assert_true(lcclass_may_use(&none, 0, 0, NULL, 0));	/* root */
	assert_false(lcclass_may_use(&none, 1000, 1000, NULL, 0));	/* nobody named: root alone */
	strcpy(all.users, "*");
	assert_int_equal(lcclass_finish(&all, msg, sizeof(msg)), 0);
	assert_true(lcclass_may_use(&all, 1000, 1000, NULL, 0));
	strcpy(named.users, "1001,1002");
	strcpy(named.groups, "4242");
	assert_int_equal(lcclass_finish(&named, msg, sizeof(msg)), 0);
	assert_true(lcclass_may_use(&named, 1002, 100, NULL, 0));
	assert_false(lcclass_may_use(&named, 1003, 100, NULL, 0));
	assert_true(lcclass_may_use(&named, 1003, 4242, NULL, 0));	/* its group */
	assert_true(lcclass_may_use(&named, 1003, 100, g, 2));	/* a supplementary group */
	strcpy(named.users, "no-such-user-here");
	assert_int_equal(lcclass_finish(&named, msg, sizeof(msg)), -1);
	assert_non_null(strstr(msg, "no user"));
}

/* a submit's class, row by row: asked, who, the limit, the default */
static void
test_decide(void **state)
{
	static const struct {
		const char	*name, *asked;
		uint32_t	uid;
		int		active, ntasks, limit, dflt;
		int		rc, lc;
		const char	*err;	/* a word of the refusal */
	} t[] = {
		{ "nothing asked: be", NULL, 1001, 0, 1, 0, 0, 0, 0, NULL },
		{ "be asked: be, for anyone", "be", 1005, 0, 1, 0, 0, 0, 0, NULL },
		{ "lc for one named", "lc", 1001, 0, 1, 0, 0, 0, 1, NULL },
		{ "lc for one not named: refused", "lc", 1005, 0, 1, 0, 0, -1, 0, "may not" },
		{ "lc for root, not named: yes", "lc", 0, 0, 1, 0, 0, 0, 1, NULL },
		{ "a class that is not one", "LC", 1001, 0, 1, 0, 0, -1, 0, "not a class" },
		{ "at the limit: refused", "lc", 1001, 2, 1, 2, 0, -1, 0, "max_jobs_per_user is 2" },
		{ "below it: yes", "lc", 1001, 1, 1, 2, 0, 0, 1, NULL },
		{ "an array past it: refused", "lc", 1001, 1, 2, 2, 0, -1, 0, "ask for more" },
		{ "root past it: yes", "lc", 0, 5, 1, 2, 0, 0, 1, NULL },
		{ "default lc, one named: lc", NULL, 1001, 0, 1, 0, 1, 0, 1, NULL },
		{ "default lc, one not named: be, not refused", NULL, 1005, 0, 1, 0, 1, 0, 0, NULL },
		{ "default lc at the limit: be, not refused", NULL, 1001, 2, 1, 2, 1, 0, 0, NULL },
	};
	static struct lcclass c;
	struct lcclass_who w;
	char err[256], msg[256];
	size_t i;
	int lc;

	(void)state;
	strcpy(c.users, "1001,1002");
	assert_int_equal(lcclass_finish(&c, msg, sizeof(msg)), 0);
	for (i = 0; i < sizeof(t) / sizeof(t[0]); i++) {
		memset(&w, 0, sizeof(w));
		w.uid = t[i].uid;
		w.gid = 100;
		w.active = t[i].active;
		c.max_jobs_per_user = t[i].limit;
		c.default_lc = t[i].dflt;
		err[0] = '\0';
		lc = -1;
		if (lcclass_decide(&c, t[i].asked, &w, t[i].ntasks, &lc, err, sizeof(err)) !=
		    t[i].rc || (t[i].rc == 0 && lc != t[i].lc) ||
		    (t[i].err != NULL && strstr(err, t[i].err) == NULL)) {
			print_error("%s: got lc %d, '%s'\n", t[i].name, lc, err);
			fail();
		}
	}
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_buckets),
		cmocka_unit_test(test_quantile),
		cmocka_unit_test(test_parse),
		cmocka_unit_test(test_busy),
		cmocka_unit_test(test_sums),
		cmocka_unit_test(test_who),
		cmocka_unit_test(test_decide),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
