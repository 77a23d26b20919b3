/*
 * test_order.c: the waiting jobs' skip list against a sorted array, then
 * the incremental pass (sched_walk over skip lists, sched_explain for the
 * jobs it did not reach) against the full one (sched_plan over every job)
 * on long seeded random streams: the same starts, resumes and reasons, and
 * the same preemptions from sched_preempt.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "order.h"
#include "sched.h"
#include "rng.h"

#define G (1ULL << 30)
#define MAXJ 400


struct item {
	struct order_node node;		/* first: a node is its item */
	int		idx;
};

static int
cmp_nodes(const void *a, const void *b)
{
	const struct order_node *x = *(struct order_node *const *)a;
	const struct order_node *y = *(struct order_node *const *)b;

	return sched_goes_before(x->key, x->at, x->id, y->key, y->at, y->id) ? -1 : 1;
}

/* Random inserts and removes; the list always reads as the sorted array. */
static void
test_skiplist(void **state)
{
	static struct item it[2000];
	struct order_node *sorted[2000], *x;
	struct order o;
	int in[2000] = { 0 }, n = 0, step, i, k;

	(void)state;
	rng_state = 12345;
	order_init(&o);
	for (step = 0; step < 20000; step++) {
		i = (int)(rng() % 2000);
		if (in[i]) {
			order_remove(&o, &it[i].node);
			in[i] = 0;
		} else {
			it[i].node.key = (double)(rng() % 7) - (double)(rng() % 50) / 3.0;
			it[i].node.at = (double)(rng() % 20);
			it[i].node.id = i;
			order_insert(&o, &it[i].node);
			in[i] = 1;
		}
		if (step % 500 != 0)
			continue;
		for (n = 0, k = 0; k < 2000; k++)
			if (in[k])
				sorted[n++] = &it[k].node;
		qsort(sorted, (size_t)n, sizeof(*sorted), cmp_nodes);
		assert_int_equal(o.n, n);
		for (k = 0, x = order_first(&o); x != NULL; x = order_next(x), k++)
			assert_ptr_equal(x, sorted[k]);
		assert_int_equal(k, n);
	}
}

/* The stream's jobs, and the lists the engine would keep of the waiting ones. */
struct world {
	struct sched_job jobs[MAXJ];
	struct item	items[MAXJ];
	int		n;
	struct order	gpu, cpu;
	struct order_node *cur[2];
	int		started[2];
	struct sched_settings set;
};

/* The source the engine gives sched_walk: two cursors over the lists. */
static int
world_next(void *arg, int kind, struct sched_job *j)
{
	struct world *w = arg;
	int k = kind == SCHED_SRC_CPU, i;

	if (!w->started[k]) {
		w->started[k] = 1;
		w->cur[k] = order_first(k ? &w->cpu : &w->gpu);
	}
	if (kind == SCHED_SRC_ANY)
		fail();
	if (w->cur[k] == NULL)
		return 0;
	i = ((struct item *)(void *)w->cur[k])->idx;
	*j = w->jobs[i];
	w->cur[k] = order_next(w->cur[k]);
	return 1;
}

/* Puts the waiting jobs (pending, not --after) in the lists. */
static void
world_lists(struct world *w)
{
	struct sched_job *j;
	int i;

	order_init(&w->gpu);
	order_init(&w->cpu);
	w->started[0] = w->started[1] = 0;
	for (i = 0; i < w->n; i++) {
		j = &w->jobs[i];
		if (j->running || j->suspended || j->dep_wait)
			continue;
		w->items[i].idx = i;
		w->items[i].node.key = sched_key(j, &w->set);
		w->items[i].node.at = j->submitted_at;
		w->items[i].node.id = j->id;
		order_insert(j->ngpus == 0 ? &w->cpu : &w->gpu, &w->items[i].node);
	}
}

static int
find_id(const struct sched_job *jobs, int n, int64_t id)
{
	int i;

	for (i = 0; i < n; i++)
		if (jobs[i].id == id)
			return i;
	return -1;
}

static int
is_wait(int why)
{
	return why != SCHED_START && why != SCHED_RESUME && why != SCHED_RUNNING;
}

static void
run_stream(uint64_t seed, int steps, int variant)
{
	static struct world w;
	static struct sched_pass pass;
	static struct sched_job wj[MAXJ];
	struct sched_gpu gpus[4];
	struct sched_decision fdec[MAXJ], wdec[MAXJ], d;
	struct sched_plan fp, wp;
	struct sched_preemption fpr, wpr;
	struct sched_source src = { world_next, &w };
	int forder[MAXJ], worder[MAXJ], ngpus = 4, step, i, k, g, nheld, nw, explained = 0;
	int64_t next_id = 1;
	double now = 1000;

	memset(&w, 0, sizeof(w));
	rng_state = seed;
	w.set.reserve_pct = 5;
	w.set.aging = variant & 1 ? 2.0 : 0;
	w.set.max_running_jobs = variant & 2 ? 3 : 0;
	w.set.max_gpus = variant & 2 ? 4 : 0;
	w.set.preempt = variant & 4 ? SCHED_PREEMPT_SUSPEND : SCHED_PREEMPT_OFF;
	for (g = 0; g < ngpus; g++) {
		gpus[g].total = (g < 2 ? 80 : 40) * G;
		gpus[g].outside = 0;
		gpus[g].mode = g == 3 ? SCHED_SERIAL : g == 2 && (variant & 4) ? SCHED_TIMESLICE :
		    SCHED_AUTO;
		gpus[g].quantum = 300;
	}
	for (step = 0; step < steps; step++) {
		now += (double)(rng() % 600);
		for (k = (int)(rng() % 4); k > 0 && w.n < MAXJ; k--) {
			struct sched_job *j = &w.jobs[w.n++];

			memset(j, 0, sizeof(*j));
			j->id = next_id++;
			j->uid = 1000 + (uint32_t)(rng() % 3);
			j->ngpus = (int)(rng() % 4 == 0 ? 0 : 1 + rng() % 2);
			j->mem = rng() % 10 == 0 ? 0 : (1 + rng() % 50) * G;
			j->priority = (int)(rng() % 5);
			j->submitted_at = now - (double)(rng() % 100);
			j->dep_wait = rng() % 8 == 0;
		}
		for (i = 0; i < w.n; i++) {
			struct sched_job *j = &w.jobs[i];

			if (j->running && rng() % 5 == 0) {
				w.jobs[i] = w.jobs[--w.n];
				i--;
			} else if (j->running && j->ngpus > 0 && rng() % 9 == 0) {
				j->running = 0;
				j->suspended = 1;
				j->may_resume = rng() % 3 != 0;
				j->submitted_at = now;
			} else if (j->dep_wait && rng() % 4 == 0)
				j->dep_wait = 0;
			j->slice_start = now - (double)(rng() % 1000);
			j->busy = j->running && rng() % 20 == 0;
		}
		gpus[0].outside = rng() % 8 == 0 ? (rng() % 20) * G : gpus[0].outside;

		/* the full pass over every job */
		fp.dec = fdec;
		fp.order = forder;
		sched_plan(gpus, ngpus, w.jobs, w.n, &w.set, now, &fp);
		sched_preempt(gpus, ngpus, w.jobs, w.n, &w.set, now, &fp, &fpr);

		/* the incremental one: held jobs, then the lists */
		for (nheld = 0, i = 0; i < w.n; i++)
			if (w.jobs[i].running || w.jobs[i].suspended)
				wj[nheld++] = w.jobs[i];
		world_lists(&w);
		wp.dec = wdec;
		wp.order = worder;
		nw = sched_walk(&pass, gpus, ngpus, &w.set, now, wj, nheld, MAXJ, &src, &wp);
		sched_preempt(gpus, ngpus, wj, nw, &w.set, now, &wp, &wpr);

		assert_int_equal(wp.nstart, fp.nstart);
		for (i = 0; i < w.n; i++) {
			k = find_id(wj, nw, w.jobs[i].id);
			if (k >= 0)
				d = wdec[k];
			else {
				sched_explain(&pass, &w.jobs[i], &d);
				explained++;
			}
			if (k < 0 && w.set.max_running_jobs > 0 && is_wait(fdec[i].why)) {
				/* a user's count may include later jobs of no GPU */
				assert_true(is_wait(d.why));
				continue;
			}
			if (d.why != fdec[i].why || d.gpumask != fdec[i].gpumask ||
			    d.behind != fdec[i].behind || d.largest_free != fdec[i].largest_free) {
				print_error("seed %llu variant %d step %d job %lld (%s): full %d %llx,"
				    " incremental %d %llx\n", (unsigned long long)seed, variant, step,
				    (long long)w.jobs[i].id, k >= 0 ? "walked" : "explained",
				    fdec[i].why, (unsigned long long)fdec[i].gpumask, d.why,
				    (unsigned long long)d.gpumask);
				fail();
			}
		}
		/* the same job is served, by the same jobs giving way */
		assert_int_equal(wpr.beneficiary < 0, fpr.beneficiary < 0);
		if (fpr.beneficiary >= 0) {
			assert_int_equal(wj[wpr.beneficiary].id, w.jobs[fpr.beneficiary].id);
			assert_int_equal(wpr.nvictims, fpr.nvictims);
			for (k = 0; k < fpr.nvictims; k++)
				assert_int_equal(wj[wpr.victims[k]].id, w.jobs[fpr.victims[k]].id);
		} else if (wpr.next_wake != fpr.next_wake) {
			print_error("seed %llu variant %d step %d: wake %f, full %f\n",
			    (unsigned long long)seed, variant, step, wpr.next_wake, fpr.next_wake);
			fail();
		}

		/* what the plan says happens */
		for (i = 0; i < w.n; i++)
			if (fdec[i].why == SCHED_START || fdec[i].why == SCHED_RESUME) {
				w.jobs[i].running = 1;
				w.jobs[i].suspended = 0;
				w.jobs[i].gpumask = fdec[i].gpumask;
			}
		if (fpr.beneficiary >= 0)
			for (k = 0; k < fpr.nvictims; k++) {
				w.jobs[fpr.victims[k]].running = 0;
				w.jobs[fpr.victims[k]].suspended = 1;
				w.jobs[fpr.victims[k]].may_resume = 1;
				w.jobs[fpr.victims[k]].submitted_at = now;
			}
	}
	/* the walk stopped early, often: it left jobs to sched_explain */
	assert_true(explained > steps);
}

static void
test_walk_agrees(void **state)
{
	uint64_t seed;
	int variant;

	(void)state;
	for (seed = 1; seed <= 12; seed++)
		for (variant = 0; variant < 8; variant++)
			run_stream(seed * 2654435761ULL + (uint64_t)variant, 600, variant);
}

/* With the GPUs full, a pass over 100,000 waiting jobs looks at a handful. */
static void
test_walk_stops(void **state)
{
	static struct world w;
	static struct sched_pass pass;
	static struct sched_job wj[MAXJ];
	struct sched_gpu gpu = { 80 * G, 0, SCHED_AUTO, 0 };
	struct sched_settings set = { 0, 0, 1.0, 0, 0, 0, 0 };
	struct sched_decision dec[MAXJ];
	struct sched_plan p;
	struct sched_source src = { world_next, &w };
	static struct item items[100000];
	struct sched_job one;
	int i, n;

	(void)state;
	memset(&w, 0, sizeof(w));
	w.set = set;
	order_init(&w.gpu);
	order_init(&w.cpu);
	/* a running job holds 70G; the jobs of 20G wait behind it */
	memset(&wj[0], 0, sizeof(wj[0]));
	wj[0].id = 1;
	wj[0].running = 1;
	wj[0].ngpus = 1;
	wj[0].mem = 70 * G;
	wj[0].gpumask = 1;
	w.n = MAXJ;
	for (i = 0; i < 100000; i++) {
		items[i].node.key = -(double)i / 3600.0;
		items[i].node.at = i;
		items[i].node.id = i + 2;
		items[i].idx = 0;
		order_insert(&w.gpu, &items[i].node);
	}
	memset(&w.jobs[0], 0, sizeof(w.jobs[0]));
	w.jobs[0].ngpus = 1;
	w.jobs[0].mem = 20 * G;
	p.dec = dec;
	p.order = (int[MAXJ]){ 0 };
	n = sched_walk(&pass, &gpu, 1, &set, 1e6, wj, 1, MAXJ, &src, &p);
	assert_int_equal(p.nstart, 0);
	assert_true(n - 1 <= 9);	/* 8 claims close the GPU */
	one = w.jobs[0];
	one.id = 99999;
	sched_explain(&pass, &one, &dec[0]);
	assert_int_equal(dec[0].why, SCHED_WAIT_MEM);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_skiplist),
		cmocka_unit_test(test_walk_agrees),
		cmocka_unit_test(test_walk_stops),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
