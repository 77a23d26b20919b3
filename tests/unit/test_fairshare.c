/*
 * test_fairshare.c: users' decayed GPU use (nvqd/queue/fairshare.c) and the
 * priority it earns them, then with the pure scheduler over a simulated
 * week: two users on one GPU get half of it each, whatever they queue.
 */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "fairshare.h"
#include "sched.h"

#define HOUR	3600.0
#define DAY	86400.0
#define T0	1.7e9

static void
test_decay(void **state)
{
	struct fairshare f;

	(void)state;
	/* one GPU for an hour that ended now, half-life an hour: h/ln2 (1 - 1/2) */
	fairshare_init(&f, T0);
	assert_int_equal(fairshare_add(&f, 7, 1, T0 - HOUR, T0, HOUR), 0);
	assert_float_equal(fairshare_find(&f, 7)->usage, HOUR / M_LN2 * 0.5, 1e-6);
	/* a half-life later, with nothing running: half of it */
	fairshare_advance(&f, T0 + HOUR, HOUR);
	assert_float_equal(fairshare_find(&f, 7)->usage, HOUR / M_LN2 * 0.25, 1e-6);
	/* a part after the set's time counts as of then; nothing for no GPU */
	assert_int_equal(fairshare_add(&f, 8, 2, T0 + HOUR - 60, T0 + 2 * HOUR, HOUR), 0);
	assert_float_equal(fairshare_find(&f, 8)->usage, 2 * HOUR / M_LN2 * (1 - exp2(-60 / HOUR)), 1e-6);
	assert_int_equal(fairshare_add(&f, 9, 0, T0, T0 + HOUR, HOUR), 0);
	assert_null(fairshare_find(&f, 9));
	fairshare_free(&f);
}

/* Use counted live, pass after pass, adds up to the same as counted from history. */
static void
test_live_matches_history(void **state)
{
	struct fairshare live, hist;
	double t = T0;
	int i;

	(void)state;
	fairshare_init(&live, T0);
	fairshare_init(&hist, T0 + 10 * HOUR);
	/* 1.5 GPUs from T0 for 4 h, in passes at uneven times, then 6 h of nothing */
	for (i = 0; t < T0 + 4 * HOUR; i++) {
		fairshare_begin(&live);
		fairshare_use(&live, 5, 1.5);
		t += 60 + (i * 37) % 500;
		if (t > T0 + 4 * HOUR)
			t = T0 + 4 * HOUR;
		fairshare_advance(&live, t, DAY);
	}
	fairshare_begin(&live);
	fairshare_advance(&live, T0 + 10 * HOUR, DAY);
	assert_int_equal(fairshare_add(&hist, 5, 1.5, T0, T0 + 4 * HOUR, DAY), 0);
	assert_float_equal(fairshare_find(&live, 5)->usage, fairshare_find(&hist, 5)->usage, 1e-6);
	/* about 6 GPU-hours, decayed a little over 10 h of a 1-day half-life */
	assert_true(fairshare_find(&hist, 5)->usage / HOUR > 6 * exp2(-10.0 / 24) &&
	    fairshare_find(&hist, 5)->usage / HOUR < 6);
	fairshare_free(&live);
	fairshare_free(&hist);
}

static void
test_bonus(void **state)
{
	struct fairshare f;

	(void)state;
	fairshare_init(&f, T0);
	/* nobody used anything: all of the weight each */
	fairshare_begin(&f);
	fairshare_use(&f, 1, 0);
	fairshare_use(&f, 2, 0);
	fairshare_rank(&f, 100);
	assert_float_equal(fairshare_bonus(&f, 1), 100, 1e-9);
	assert_float_equal(fairshare_bonus(&f, 2), 100, 1e-9);
	/* equal use: half each; one used it all: a quarter, the other all */
	fairshare_add(&f, 1, 1, T0 - HOUR, T0, DAY);
	fairshare_add(&f, 2, 1, T0 - HOUR, T0, DAY);
	fairshare_rank(&f, 100);
	assert_float_equal(fairshare_bonus(&f, 1), 50, 1e-9);
	assert_float_equal(fairshare_find(&f, 1)->frac, 0.5, 1e-9);
	fairshare_add(&f, 3, 1, T0 - HOUR, T0, DAY);
	fairshare_begin(&f);
	fairshare_use(&f, 3, 0);
	fairshare_use(&f, 4, 0);
	fairshare_rank(&f, 100);
	assert_float_equal(fairshare_bonus(&f, 3), 25, 1e-9);
	assert_float_equal(fairshare_bonus(&f, 4), 100, 1e-9);
	assert_int_equal(f.nactive, 2);
	/* users with no jobs in the queue earn nothing, and are not counted */
	assert_float_equal(fairshare_bonus(&f, 1), 0, 1e-9);
	assert_float_equal(fairshare_find(&f, 1)->frac, 0, 1e-9);
	/* use forgotten: a user gone long enough is dropped, uid 4 (no use) at once */
	fairshare_begin(&f);
	fairshare_advance(&f, T0 + 60 * DAY, DAY);
	fairshare_rank(&f, 100);
	assert_null(fairshare_find(&f, 1));
	assert_null(fairshare_find(&f, 4));
	assert_int_equal(f.n, 0);
	fairshare_free(&f);
}

#define SIM_JOBS	400

struct sim {
	struct sched_job jobs[SIM_JOBS];
	double		len[SIM_JOBS];
	double		end[SIM_JOBS];
	int		n;
};

static void
sim_submit(struct sim *s, uint32_t uid, double at, double len, int count)
{
	while (count-- > 0 && s->n < SIM_JOBS) {
		struct sched_job *j = &s->jobs[s->n];

		memset(j, 0, sizeof(*j));
		j->id = s->n + 1;
		j->uid = uid;
		j->ngpus = 1;
		j->mem = 0;		/* a whole GPU */
		j->submitted_at = at;
		s->len[s->n++] = len;
	}
}

/*
 * One GPU for a week from T0: user 1 queues 200 jobs of an hour at T0 - a
 * day of use before (past_a hours), user 2 queues 100 jobs of two hours a
 * minute later.  Passes run as jobs end, as nvqd's do.  The GPU-hours each
 * got in the week.
 */
static void
sim_week(int fair, double past_a, double *ha, double *hb)
{
	static struct sim s;
	struct sched_gpu gpu = { 80ULL << 30, 0, SCHED_AUTO, 0, 0 };
	struct sched_settings set = { .reserve_pct = 5, .aging = 1.0,
	    .preempt = SCHED_PREEMPT_OFF, .preempt_min_runtime = 60 };
	struct sched_decision dec[SIM_JOBS];
	int order[SIM_JOBS], i, run = -1;
	struct sched_plan plan = { dec, order, 0, 0, 0 };
	struct fairshare f;
	double now = T0, stop = T0 + 7 * DAY;

	memset(&s, 0, sizeof(s));
	sim_submit(&s, 1, T0, HOUR, 200);
	sim_submit(&s, 2, T0 + 60, 2 * HOUR, 100);
	fairshare_init(&f, T0);
	if (past_a > 0)
		fairshare_add(&f, 1, 1, T0 - past_a * HOUR, T0, 7 * DAY);
	*ha = *hb = 0;
	while (now < stop) {
		/* the pass: use brought forward, ranks, the plan */
		fairshare_advance(&f, now, 7 * DAY);
		fairshare_begin(&f);
		for (i = 0; i < s.n; i++)
			if (s.jobs[i].submitted_at <= now && (s.end[i] == 0 || s.jobs[i].running))
				fairshare_use(&f, s.jobs[i].uid, s.jobs[i].running ? 1 : 0);
		fairshare_rank(&f, 100);
		for (i = 0; i < s.n; i++)
			s.jobs[i].share = fair ? fairshare_bonus(&f, s.jobs[i].uid) : 0;
		/* jobs not submitted yet are not given; nor are ended ones */
		{
			static struct sched_job now_jobs[SIM_JOBS];
			int map[SIM_JOBS], m = 0;

			for (i = 0; i < s.n; i++)
				if (s.jobs[i].submitted_at <= now && (s.end[i] == 0 || s.jobs[i].running)) {
					now_jobs[m] = s.jobs[i];
					map[m++] = i;
				}
			sched_plan(&gpu, 1, now_jobs, m, &set, now, &plan);
			for (i = 0; i < m; i++)
				if (dec[i].why == SCHED_START) {
					assert_int_equal(run, -1);	/* one whole-GPU job at a time */
					run = map[i];
					s.jobs[run].running = 1;
					s.jobs[run].gpumask = 1;
					s.end[run] = now + s.len[run];
					fairshare_use(&f, s.jobs[run].uid, 1);
				}
		}
		/* to the next event: the running job's end, or user 2's arrival */
		if (run >= 0) {
			double until = s.end[run] < stop ? s.end[run] : stop;

			*(s.jobs[run].uid == 1 ? ha : hb) += (until - now) / HOUR;
			now = until;
			s.jobs[run].running = 0;
			run = -1;
		} else
			now = now < T0 + 60 ? T0 + 60 : stop;
	}
	fairshare_free(&f);
}

static void
test_week_half_each(void **state)
{
	double a, b;

	(void)state;
	/* fair share: half each, though user 1 queued first and in more jobs */
	sim_week(1, 0, &a, &b);
	print_message("fair share, a week: user 1 %.1f GPU-hours, user 2 %.1f\n", a, b);
	assert_true(a + b > 167.9);
	assert_true(fabs(a - 84) <= 2.5 && fabs(b - 84) <= 2.5);
	/* without it, first come first served: user 1's 200 hours go first */
	sim_week(0, 0, &a, &b);
	print_message("first come first served, a week: user 1 %.1f GPU-hours, user 2 %.1f\n",
	    a, b);
	assert_true(a > 167.9 && b < 0.1);
}

static void
test_past_use_counts(void **state)
{
	double a, b, a0, b0;

	(void)state;
	/* user 1 had the GPU to itself for two days before: user 2 gets more for a while */
	sim_week(1, 48, &a, &b);
	print_message("after 48 GPU-hours of user 1: user 1 %.1f, user 2 %.1f\n", a, b);
	sim_week(1, 0, &a0, &b0);
	assert_true(b > b0 + 16);
	/* and over the two weeks together, they come near half each */
	assert_true(fabs((a + 48) - b) < 0.3 * (a + 48 + b));
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_decay),
		cmocka_unit_test(test_live_matches_history),
		cmocka_unit_test(test_bonus),
		cmocka_unit_test(test_week_half_each),
		cmocka_unit_test(test_past_use_counts),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
