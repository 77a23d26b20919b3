/*
 * test_order.c: the waiting jobs' skip list against a sorted array, then
 * the incremental pass (sched_walk over skip lists, sched_explain for the
 * jobs it did not reach) against the full one (sched_plan over every job)
 * on long seeded random streams: the same starts, resumes and reasons, and
 * the same preemptions from preempt_choose.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "deptab.h"
#include "order.h"
#include "waitq.h"
#include "sched.h"
#include "preempt.h"
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
	struct waitq	q;
	struct sched_settings set;
	double		share[3];	/* variant 16: each user's fair-share term */
};

/* waitq_bonus's function: a user's fair-share term, as the engine's fairshare_bonus. */
static double
world_share(void *arg, uint32_t uid)
{
	const struct world *w = arg;

	return uid >= 1000 && uid < 1003 ? w->share[uid - 1000] : 0;
}

/* The source the engine gives sched_walk: the queue's two kinds, merged across users. */
static int
world_next(void *arg, int kind, struct sched_job *j)
{
	struct world *w = arg;
	struct order_node *n;

	if (kind == SCHED_SRC_ANY)
		fail();
	if ((n = waitq_next(&w->q, kind == SCHED_SRC_CPU ? WAITQ_CPU : WAITQ_GPU)) == NULL)
		return 0;
	*j = w->jobs[((struct item *)(void *)n)->idx];
	return 1;
}

static void
world_drop(void *arg, uint32_t uid, int kind)
{
	struct world *w = arg;

	waitq_drop(&w->q, uid, WAITQ_GPU);
	if (kind == SCHED_SRC_ANY)
		waitq_drop(&w->q, uid, WAITQ_CPU);
}

/* Puts the waiting jobs (pending, not --after) in the queue. */
static void
world_lists(struct world *w)
{
	struct sched_job *j;
	int i;

	waitq_free(&w->q);
	waitq_init(&w->q);
	for (i = 0; i < w->n; i++) {
		j = &w->jobs[i];
		if (j->running || j->suspended || j->dep_wait)
			continue;
		w->items[i].idx = i;
		w->items[i].node.key = sched_key(j, &w->set);
		w->items[i].node.at = j->submitted_at;
		w->items[i].node.id = j->id;
		assert_int_equal(waitq_add(&w->q, j->uid, j->ngpus == 0 ? WAITQ_CPU : WAITQ_GPU,
		    j->mem, &w->items[i].node), 0);
	}
	waitq_bonus(&w->q, world_share, w);
	waitq_begin(&w->q);
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
	struct sched_gpu gpus[4] = { { 0 } };
	struct sched_decision fdec[MAXJ], wdec[MAXJ], d;
	struct sched_plan fp, wp;
	struct sched_preemption fpr, wpr;
	struct sched_source src = { world_next, world_drop, &w, 0, 0 };
	int forder[MAXJ], worder[MAXJ], ngpus = 4, step, i, k, g, nheld, nw, explained = 0;
	int64_t next_id = 1;
	double now = 1000;
	int classes;

	memset(&w, 0, sizeof(w));
	rng_state = seed;
	w.set.reserve_pct = 5;
	w.set.aging = variant & 1 ? 2.0 : 0;
	w.set.max_running_jobs = variant & 2 ? 3 : 0;
	w.set.max_gpus = variant & 2 ? 4 : 0;
	w.set.preempt = variant & 4 ? SCHED_PREEMPT_SUSPEND : SCHED_PREEMPT_OFF;
	w.set.spread = (variant & 8) && (seed & 1);
	/* odd seeds: the host's CPUs and memory counted too ([resources]) */
	w.set.cpus = seed & 1 ? 6 : 0;
	w.set.host_mem = seed & 1 ? 100 * G : 0;
	/* classes on half the seeds: 1 passes and preempts 0; 2 goes after, 2 jobs, 2 GPUs a user */
	classes = (seed & 2) != 0;
	w.set.qos_max_jobs[2] = classes ? 2 : 0;
	w.set.qos_max_gpus[2] = classes ? 2 : 0;
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
			j->cpus = (int)(rng() % 4);
			j->host_mem = rng() % 3 == 0 ? (1 + rng() % 40) * G : 0;
			if (classes) {
				static const int prio[3] = { 0, 3, -2 };

				j->qos = (int)(rng() % 3);
				j->qos_prio = prio[j->qos];
				j->qos_preempts = j->qos == 1 ? 1 : 0;
			}
			/* variant 8: some may start only on some GPUs (-w, -x) */
			if ((variant & 8) && rng() % 4 == 0) {
				j->restrict_gpus = 1;
				j->allowed = rng() % 16;
			}
		}
		/* and GPUs drained now and then (nvq drain) */
		for (g = 0; (variant & 8) && g < ngpus; g++)
			if (rng() % 10 == 0)
				gpus[g].drained = !gpus[g].drained;
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
		/* variant 16: fair share, a term per user that changes between passes */
		for (k = 0; k < 3; k++)
			w.share[k] = variant & 16 ? (double)(rng() % 800) / 100.0 : 0;
		for (i = 0; i < w.n; i++)
			w.jobs[i].share = w.share[w.jobs[i].uid - 1000];

		/* the full pass over every job */
		fp.dec = fdec;
		fp.order = forder;
		sched_plan(gpus, ngpus, w.jobs, w.n, &w.set, now, &fp);
		preempt_choose(gpus, ngpus, w.jobs, w.n, &w.set, now, &fp, &fpr);

		/* the incremental one: held jobs, then the lists */
		for (nheld = 0, i = 0; i < w.n; i++)
			if (w.jobs[i].running || w.jobs[i].suspended)
				wj[nheld++] = w.jobs[i];
		world_lists(&w);
		src.min_mem = waitq_min_mem(&w.q);
		src.whole = waitq_whole(&w.q);
		wp.dec = wdec;
		wp.order = worder;
		nw = sched_walk(&pass, gpus, ngpus, &w.set, now, wj, nheld, MAXJ, &src, &wp);
		preempt_choose(gpus, ngpus, wj, nw, &w.set, now, &wp, &wpr);

		assert_int_equal(wp.nstart, fp.nstart);
		for (i = 0; i < w.n; i++) {
			k = find_id(wj, nw, w.jobs[i].id);
			if (k >= 0)
				d = wdec[k];
			else {
				sched_explain(&pass, &w.jobs[i], &d);
				explained++;
			}
			if (k < 0 && (w.set.max_running_jobs > 0 || classes) && is_wait(fdec[i].why)) {
				/* a user's count (of a class too) may include later jobs of no GPU */
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
	waitq_free(&w.q);
}

static void
test_walk_agrees(void **state)
{
	uint64_t seed;
	int variant;

	(void)state;
	for (seed = 1; seed <= 12; seed++)
		for (variant = 0; variant < 32; variant++)
			/* fair share's variants (16 and up) on a third of the seeds */
			if (variant < 16 || seed % 3 == 0)
				run_stream(seed * 2654435761ULL + (uint64_t)variant, 600, variant);
}

/* A job of one GPU and mem bytes, running on GPU 0 or waiting. */
static void
job_of(struct sched_job *j, int64_t id, uint32_t uid, uint64_t mem, int running)
{
	memset(j, 0, sizeof(*j));
	j->id = id;
	j->uid = uid;
	j->ngpus = 1;
	j->mem = mem;
	j->running = running;
	j->gpumask = running ? 1 : 0;
}

/* An empty world for the tests of one large queue. */
static void
world_empty(struct world *w, const struct sched_settings *set)
{
	memset(w, 0, sizeof(*w));
	w->set = *set;
	w->n = MAXJ;
	waitq_init(&w->q);
}

/* n waiting jobs of kind and mem, ids from 2 in order, of nusers users from 1000. */
static void
world_queue(struct world *w, struct item *items, int n, int nusers, int kind, uint64_t mem)
{
	int i;

	for (i = 0; i < n; i++) {
		items[i].node.key = -(double)i / 3600.0;
		items[i].node.at = i;
		items[i].node.id = i + 2;
		items[i].idx = 0;
		assert_int_equal(waitq_add(&w->q, 1000 + (uint32_t)(i % nusers), kind, mem,
		    &items[i].node), 0);
	}
	waitq_begin(&w->q);
}

/* With the GPUs full, a pass over 100,000 waiting jobs looks at a handful. */
static void
test_walk_stops(void **state)
{
	static struct world w;
	static struct sched_pass pass;
	static struct sched_job wj[MAXJ];
	struct sched_gpu gpus[2] = { { 80 * G, 0, SCHED_AUTO, 0, 0 }, { 10 * G, 0, SCHED_TIMESLICE, 30, 0 } };
	struct sched_settings set = { .aging = 1.0 };
	struct sched_decision dec[MAXJ];
	struct sched_plan p;
	struct sched_source src = { world_next, world_drop, &w, 0, 0 };
	static struct item items[100000];
	struct sched_job one;
	int n;

	(void)state;
	world_empty(&w, &set);
	/* a running job holds 70G; the jobs of 20G wait behind it */
	job_of(&wj[0], 1, 1000, 70 * G, 1);
	world_queue(&w, items, 100000, 7, WAITQ_GPU, 20 * G);
	src.min_mem = waitq_min_mem(&w.q);
	job_of(&w.jobs[0], 0, 1000, 20 * G, 0);
	p.dec = dec;
	p.order = (int[MAXJ]){ 0 };
	n = sched_walk(&pass, gpus, 1, &set, 1e6, wj, 1, MAXJ, &src, &p);
	assert_int_equal(p.nstart, 0);
	assert_true(n - 1 <= 9);	/* 8 claims close the GPU */
	one = w.jobs[0];
	one.id = 99999;
	sched_explain(&pass, &one, &dec[0]);
	assert_int_equal(dec[0].why, SCHED_WAIT_MEM);
	/*
	 * With preemption on and a second GPU, empty, timesliced and too small
	 * for them: nothing can give way there, so the walk need not go on
	 * looking for a job to take it.
	 */
	set.preempt = SCHED_PREEMPT_SUSPEND;
	waitq_begin(&w.q);
	n = sched_walk(&pass, gpus, 2, &set, 1e6, wj, 1, MAXJ, &src, &p);
	assert_int_equal(p.nstart, 0);
	assert_true(n - 1 <= 10);
	waitq_free(&w.q);
}

/*
 * A --stdin sweep of 100,000 jobs of no GPU on 2 CPUs, both held: the pass
 * looks at none of them (the host is closed), and each is told it waits
 * for CPUs.
 */
static void
test_walk_host_stops(void **state)
{
	static struct {
		struct world	w;
		struct sched_pass pass;
		struct sched_job wj[MAXJ];
		struct item	items[100000];
	} h;
	struct sched_gpu gpu = { 80 * G, 0, SCHED_AUTO, 0, 0 };
	struct sched_settings set = { .aging = 1.0, .cpus = 2, .host_mem = 0 };
	struct sched_source src = { world_next, world_drop, &h.w, 0, 0 };
	struct sched_decision dec[MAXJ];
	struct sched_plan p = { dec, (int[MAXJ]){ 0 }, 0, 0, 0 };
	struct sched_job one;
	int n;

	(void)state;
	world_empty(&h.w, &set);
	/* a job of no GPU holds 1 CPU of 2 */
	job_of(&h.wj[0], 1, 1000, 0, 1);
	h.wj[0].ngpus = 0;
	h.wj[0].gpumask = 0;
	world_queue(&h.w, h.items, 100000, 1, WAITQ_CPU, 0);
	/* one CPU free: one job starts, and the walk stops there */
	n = sched_walk(&h.pass, &gpu, 1, &set, 1e6, h.wj, 1, MAXJ, &src, &p);
	assert_int_equal(p.nstart, 1);
	assert_int_equal(n, 2);
	memset(&one, 0, sizeof(one));
	one.id = 99999;
	one.uid = 1000;
	one.cpus = 1;
	sched_explain(&h.pass, &one, &dec[0]);
	assert_int_equal(dec[0].why, SCHED_WAIT_CPUS);
	assert_int_equal(dec[0].host_used, 2);
	/* both held: it looks at none */
	h.wj[0].cpus = 2;
	waitq_begin(&h.w.q);
	n = sched_walk(&h.pass, &gpu, 1, &set, 1e6, h.wj, 1, MAXJ, &src, &p);
	assert_int_equal(p.nstart, 0);
	assert_int_equal(n, 1);
	waitq_free(&h.w.q);
}

/* One user at max_running_jobs with 100,000 jobs: the pass reads the others' only. */
static void
test_walk_drops(void **state)
{
	static struct world w;
	static struct sched_pass pass;
	static struct sched_job wj[MAXJ];
	struct sched_gpu gpu = { 80 * G, 0, SCHED_AUTO, 0, 0 };
	struct sched_settings set = { .max_running_jobs = 2 };
	struct sched_decision dec[MAXJ];
	struct sched_plan p;
	struct sched_source src = { world_next, world_drop, &w, 0, 0 };
	static struct item items[100001];
	int i, n;

	(void)state;
	world_empty(&w, &set);
	/* user 1000 runs two jobs of 1G: at the limit; the GPU has room */
	job_of(&wj[0], 1, 1000, G, 1);
	job_of(&wj[1], 2, 1000, G, 1);
	job_of(&w.jobs[0], 0, 1000, G, 0);
	job_of(&w.jobs[1], 200000, 1001, G, 0);
	for (i = 0; i < 100000; i++) {
		items[i].node.at = i;
		items[i].node.id = i + 3;
		items[i].idx = 0;
		assert_int_equal(waitq_add(&w.q, 1000, WAITQ_GPU, G, &items[i].node), 0);
	}
	/* the other user's job goes last of all */
	items[i].node.at = 1e9;
	items[i].node.id = 200000;
	items[i].idx = 1;
	assert_int_equal(waitq_add(&w.q, 1001, WAITQ_GPU, G, &items[i].node), 0);
	waitq_begin(&w.q);
	src.min_mem = waitq_min_mem(&w.q);
	p.dec = dec;
	p.order = (int[MAXJ]){ 0 };
	n = sched_walk(&pass, &gpu, 1, &set, 1e6, wj, 2, MAXJ, &src, &p);
	/* the other user's job starts; user 1000's were never read (at most the one peeked) */
	assert_int_equal(p.nstart, 1);
	assert_true(n - 2 <= 2);
	assert_int_equal(wj[n - 1].id, 200000);
	assert_int_equal(dec[n - 1].why, SCHED_START);
	sched_explain(&pass, &w.jobs[0], &dec[0]);
	assert_int_equal(dec[0].why, SCHED_WAIT_USER_JOBS);
	waitq_free(&w.q);
}

/*
 * nvq top's move up a user's own list, row by row: the owner's jobs, one
 * moved up (up_key, up_at), and the other user's; the order read across
 * both.  Keys as aging of 1 a second gives them (key = priority - at).
 */
static void
test_waitq_top(void **state)
{
	static const struct {
		const char *what;
		int	prio[4], at[4];	/* users 1, 1, 1 (the last one moved up), 2 */
		int	before;		/* its owner's first job of its priority */
		int	order[4];	/* indexes, as read */
	} t[] = {
		/* 2's job of priority 5 stays before the job moved up, whatever 1's wait */
		{ "no other user's priority passed", { 0, 0, 0, 5 }, { 0, 1, 20, 19 }, 0, { 3, 2, 0, 1 } },
		/* nor 2's older job of the same priority; 1's own wait behind the moved one */
		{ "no older job of another passed", { 0, 0, 0, 0 }, { 0, 1, 20, 19 }, 0, { 3, 2, 0, 1 } },
		/* 2's newer job goes after it and after 1's others, as before the move */
		{ "a newer job of another after", { 0, 0, 0, 0 }, { 0, 1, 20, 30 }, 0, { 2, 0, 1, 3 } },
		/* 1's job of a higher priority keeps its place before it */
		{ "its owner's higher priority first", { 9, 0, 0, 0 }, { 5, 1, 20, 30 }, 1, { 0, 2, 1, 3 } },
	};
	struct item it[4];
	struct order_node *x;
	struct waitq q;
	size_t r;
	int i, k;

	(void)state;
	for (r = 0; r < sizeof(t) / sizeof(t[0]); r++) {
		waitq_init(&q);
		memset(it, 0, sizeof(it));
		for (i = 0; i < 4; i++) {
			it[i].idx = i;
			it[i].node.key = t[r].prio[i] - t[r].at[i];
			it[i].node.at = t[r].at[i];
			it[i].node.id = i + 1;
		}
		/* moved up to just before its owner's first job of its priority */
		it[2].node.up_at = t[r].at[2] - (t[r].at[t[r].before] - 0.001);
		it[2].node.up_key = it[2].node.up_at;
		for (i = 0; i < 4; i++)
			assert_int_equal(waitq_add(&q, i < 3 ? 1 : 2, WAITQ_CPU, 0, &it[i].node), 0);
		waitq_begin(&q);
		for (k = 0; (x = waitq_next(&q, WAITQ_CPU)) != NULL; k++) {
			if (((struct item *)(void *)x)->idx != t[r].order[k])
				fail_msg("%s: read %d was %d, wanted %d", t[r].what, k,
				    ((struct item *)(void *)x)->idx, t[r].order[k]);
		}
		assert_int_equal(k, 4);
		waitq_free(&q);
	}
}

/* The queue read without drops is the order of all its jobs, across users. */
static void
test_waitq_order(void **state)
{
	static struct item it[3000];
	struct order_node *sorted[3000], *x;
	uint32_t uid[3000];
	uint64_t mem[3000];
	struct waitq q;
	int i, k, n = 0;

	(void)state;
	rng_state = 777;
	waitq_init(&q);
	for (i = 0; i < 3000; i++) {
		it[i].node.key = (double)(rng() % 5);
		it[i].node.at = (double)(rng() % 100);
		it[i].node.id = i;
		uid[i] = 1000 + (uint32_t)(rng() % 13);
		mem[i] = (1 + rng() % 3) * G;
		assert_int_equal(waitq_add(&q, uid[i], WAITQ_GPU, mem[i], &it[i].node), 0);
	}
	/* a third of them go again; users whose lists empty leave */
	for (i = 0; i < 3000; i += 3)
		waitq_del(&q, uid[i], WAITQ_GPU, mem[i], &it[i].node);
	assert_int_equal(q.n, 2000);
	for (i = 0; i < 3000; i++)
		if (i % 3 != 0)
			sorted[n++] = &it[i].node;
	qsort(sorted, (size_t)n, sizeof(*sorted), cmp_nodes);
	waitq_begin(&q);
	for (k = 0; (x = waitq_next(&q, WAITQ_GPU)) != NULL; k++)
		assert_ptr_equal(x, sorted[k]);
	assert_int_equal(k, n);
	assert_null(waitq_next(&q, WAITQ_CPU));
	waitq_free(&q);
}

static void
count_cb(void *owner, void *arg)
{
	(*(int *)arg) += *(int *)owner;
}

/* Who waits for whom: 20,000 jobs, most waiting for the same one, taken back in any order. */
static void
test_deptab(void **state)
{
	static struct deptab_node *nodes[20000];
	static int64_t on[20000][2];
	static int weight[20000];
	struct deptab t = { 0 };
	int i, sum, want;

	(void)state;
	rng_state = 4242;
	for (i = 0; i < 20000; i++) {
		weight[i] = 1 + i % 3;
		on[i][0] = 7;				/* everyone waits for job 7 */
		on[i][1] = 100 + (int64_t)(rng() % 50);	/* and for one of 50 others */
		assert_int_equal(deptab_add(&t, &weight[i], on[i], 2, &nodes[i]), 0);
	}
	assert_int_equal(deptab_count(&t, 7), 20000);
	assert_int_equal(deptab_count(&t, 8), 0);
	/* half of them are taken back, in a scattered order */
	for (i = 0; i < 20000; i += 2) {
		deptab_del(&t, nodes[(i * 7919) % 20000], 2);
		nodes[(i * 7919) % 20000] = NULL;
	}
	for (want = 0, i = 0; i < 20000; i++)
		if (nodes[i] != NULL)
			want += weight[i];
	sum = 0;
	deptab_each(&t, 7, count_cb, &sum);
	assert_int_equal(sum, want);
	assert_int_equal(deptab_count(&t, 7), 10000);
	for (i = 0; i < 20000; i++)
		deptab_del(&t, nodes[i], 2);
	assert_int_equal(deptab_count(&t, 7), 0);
	assert_int_equal(t.ngroups, 0);
	deptab_free(&t);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_skiplist),
		cmocka_unit_test(test_walk_agrees),
		cmocka_unit_test(test_walk_stops),
		cmocka_unit_test(test_walk_host_stops),
		cmocka_unit_test(test_walk_drops),
		cmocka_unit_test(test_waitq_order),
		cmocka_unit_test(test_waitq_top),
		cmocka_unit_test(test_deptab),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
