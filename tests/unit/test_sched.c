/*
 * test_sched.c: the admission policy, table-driven, then as a property over
 * long seeded random streams of submits, exits and outside-use changes.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "sched.h"
#include "rng.h"

#define G (1ULL << 30)
#define MAXJ 64

struct tcase {
	const char	*name;
	int		ngpus;
	uint64_t	total[4];
	uint64_t	outside[4];
	int		mode[4];
	struct sched_settings set;
	double		now;
	int		njobs;
	struct sched_job jobs[8];
	int		why[8];		/* expected */
	uint64_t	mask[8];	/* expected for SCHED_START/RUNNING; ~0: any */
};

/* reserve 5%, aging 1 point per hour, no limits */
#define DEFAULT_SET { 0, 5, 1.0, 0, 0 }
#define NORES_SET { 0, 0, 0.0, 0, 0 }
/* id, uid, running, ngpus, mem, prio, submitted, dep_wait, mask */
#define PEND(id, n, mem, prio, t) { id, 1000, 0, n, mem, prio, t, 0, 0 }
#define RUN(id, n, mem, mask) { id, 1000, 1, n, mem, 0, 0, 0, mask }
/* the host's CPUs and memory: jobs of -c CPUS and --mem HMEM, of one GPU of 1G or none */
#define HOST_SET(nc, hmem) { .reserve_pct = 5, .cpus = (nc), .host_mem = (hmem) }
#define PENDC(i, n, c, hm, t) { .id = (i), .uid = 1000, .ngpus = (n), .mem = (n) ? G : 0, \
	.submitted_at = (t), .cpus = (c), .host_mem = (hm) }
#define RUNC(i, n, c, hm) { .id = (i), .uid = 1000, .running = 1, .ngpus = (n), \
	.mem = (n) ? G : 0, .gpumask = (n) ? 1 : 0, .cpus = (c), .host_mem = (hm) }

/* of user u and class q (qos_prio p points) */
#define PENDQ(i, n, m, pr, t, u, q, p) { .id = i, .uid = u, .ngpus = n, .mem = m, \
	.priority = pr, .submitted_at = t, .qos = q, .qos_prio = p }
#define RUNQ(i, n, m, mask, u, q) { .id = i, .uid = u, .running = 1, .ngpus = n, \
	.mem = m, .gpumask = mask, .qos = q }

static const struct tcase cases[] = {
	{ "a class's priority passes another user's earlier, higher -p",
	  1, { 16 * G }, { 0 }, { 0 }, NORES_SET, 100, 2,
	  { PENDQ(1, 1, 10 * G, 5, 1, 1000, 0, 0), PENDQ(2, 1, 10 * G, 0, 2, 1001, 1, 10) },
	  { SCHED_WAIT_MEM, SCHED_START }, { 0, 1 } },
	{ "a class's max_jobs_per_user: the user's next job of it waits, not others'",
	  2, { 16 * G, 16 * G }, { 0 }, { 0 }, { .qos_max_jobs = { [1] = 1 } }, 100, 4,
	  { RUNQ(1, 1, 4 * G, 1, 1000, 1), PENDQ(2, 1, 4 * G, 0, 1, 1000, 1, 0),
	    PENDQ(3, 1, 4 * G, 0, 2, 1001, 1, 0), PENDQ(4, 1, 4 * G, 0, 3, 1000, 0, 0) },
	  { SCHED_RUNNING, SCHED_WAIT_QOS_JOBS, SCHED_START, SCHED_START }, { 1, 0, ~0ULL, ~0ULL } },
	{ "a class's max_gpus_per_user, counting what the user's jobs of it hold",
	  2, { 16 * G, 16 * G }, { 0 }, { 0 }, { .qos_max_gpus = { [1] = 2 } }, 100, 3,
	  { RUNQ(1, 1, 4 * G, 1, 1000, 1), PENDQ(2, 2, 4 * G, 0, 1, 1000, 1, 0),
	    PENDQ(3, 1, 4 * G, 0, 2, 1000, 1, 0) },
	  { SCHED_RUNNING, SCHED_WAIT_QOS_GPUS, SCHED_START }, { 1, 0, ~0ULL } },
	{ "pack three 10G on 2x16G, a 2-GPU 4G job fits beside",
	  2, { 16 * G, 16 * G }, { 0 }, { 0 }, DEFAULT_SET, 100, 4,
	  { PEND(1, 1, 10 * G, 0, 1), PEND(2, 1, 10 * G, 0, 2), PEND(3, 1, 10 * G, 0, 3),
	    PEND(4, 2, 4 * G, 0, 4) },
	  { SCHED_START, SCHED_START, SCHED_WAIT_MEM, SCHED_START }, { 1, 2, 0, 3 } },
	{ "serial: one job per GPU whatever its size",
	  1, { 80 * G }, { 0 }, { SCHED_SERIAL }, DEFAULT_SET, 100, 2,
	  { PEND(1, 1, 1 * G, 0, 1), PEND(2, 1, 1 * G, 0, 2) },
	  { SCHED_START, SCHED_WAIT_MEM }, { 1, 0 } },
	{ "auto: small jobs share a GPU",
	  1, { 80 * G }, { 0 }, { SCHED_AUTO }, DEFAULT_SET, 100, 3,
	  { PEND(1, 1, 1 * G, 0, 1), PEND(2, 1, 1 * G, 0, 2), PEND(3, 1, 70 * G, 0, 3) },
	  { SCHED_START, SCHED_START, SCHED_START }, { 1, 1, 1 } },
	{ "N GPUs: all or nothing",
	  2, { 16 * G, 16 * G }, { 0 }, { 0 }, NORES_SET, 100, 2,
	  { RUN(1, 1, 10 * G, 1), PEND(2, 2, 8 * G, 0, 1) },
	  { SCHED_RUNNING, SCHED_WAIT_MEM }, { 1, 0 } },
	{ "higher priority first though submitted later",
	  1, { 16 * G }, { 0 }, { 0 }, NORES_SET, 100, 2,
	  { PEND(1, 1, 10 * G, 0, 1), PEND(2, 1, 10 * G, 5, 50) },
	  { SCHED_WAIT_MEM, SCHED_START }, { 0, 1 } },
	{ "aging: ten hours of waiting beat 5 priority points",
	  1, { 16 * G }, { 0 }, { 0 }, { 0, 0, 1.0, 0, 0 }, 36000 + 100, 2,
	  { PEND(1, 1, 10 * G, 0, 100), PEND(2, 1, 10 * G, 5, 36000 + 50) },
	  { SCHED_START, SCHED_WAIT_MEM }, { 1, 0 } },
	{ "equal priority: first submitted first",
	  1, { 16 * G }, { 0 }, { 0 }, NORES_SET, 100, 2,
	  { PEND(2, 1, 10 * G, 0, 20), PEND(1, 1, 10 * G, 0, 10) },
	  { SCHED_WAIT_MEM, SCHED_START }, { 0, 1 } },
	{ "backfill that cannot delay the blocked job starts",
	  1, { 16 * G }, { 0 }, { 0 }, DEFAULT_SET, 100, 3,
	  { RUN(1, 1, 10 * G, 1), PEND(2, 1, 10 * G, 10, 1), PEND(3, 1, 4 * G, 0, 2) },
	  { SCHED_RUNNING, SCHED_WAIT_MEM, SCHED_START }, { 1, 0, 1 } },
	{ "backfill that could delay the blocked job waits",
	  1, { 16 * G }, { 0 }, { 0 }, NORES_SET, 100, 4,
	  { RUN(1, 1, 4 * G, 1), RUN(2, 1, 4 * G, 1), PEND(3, 1, 12 * G, 10, 1),
	    PEND(4, 1, 2 * G, 0, 2) },
	  { SCHED_RUNNING, SCHED_RUNNING, SCHED_WAIT_MEM, SCHED_WAIT_PRIORITY }, { 1, 1, 0, 0 } },
	{ "a GPU the blocked job cannot use is free for others",
	  2, { 16 * G, 8 * G }, { 0 }, { 0 }, NORES_SET, 100, 3,
	  { RUN(1, 1, 10 * G, 1), PEND(2, 1, 12 * G, 10, 1), PEND(3, 1, 6 * G, 0, 2) },
	  { SCHED_RUNNING, SCHED_WAIT_MEM, SCHED_START }, { 1, 0, 2 } },
	{ "user limit on running jobs",
	  2, { 16 * G, 16 * G }, { 0 }, { 0 }, { 0, 0, 0, 1, 0 }, 100, 3,
	  { RUN(1, 1, 1 * G, 1), PEND(2, 1, 1 * G, 0, 1), { 3, 2000, 0, 1, G, 0, 2, 0, 0 } },
	  { SCHED_RUNNING, SCHED_WAIT_USER_JOBS, SCHED_START }, { 1, 0, ~0ULL } },
	{ "user limit on GPUs",
	  2, { 16 * G, 16 * G }, { 0 }, { 0 }, { 0, 0, 0, 0, 2 }, 100, 3,
	  { RUN(1, 1, 1 * G, 1), PEND(2, 2, 1 * G, 0, 1), PEND(3, 1, 1 * G, 0, 2) },
	  { SCHED_RUNNING, SCHED_WAIT_USER_GPUS, SCHED_START }, { 1, 0, ~0ULL } },
	{ "a job waiting on --after does not hold others back",
	  1, { 16 * G }, { 0 }, { 0 }, NORES_SET, 100, 2,
	  { { 1, 1000, 0, 1, 10 * G, 9, 1, 1, 0 }, PEND(2, 1, 10 * G, 0, 2) },
	  { SCHED_WAIT_DEP, SCHED_START }, { 0, 1 } },
	{ "no-GPU jobs always start",
	  1, { 16 * G }, { 0 }, { SCHED_SERIAL }, NORES_SET, 100, 2,
	  { RUN(1, 1, 0, 1), PEND(2, 0, 0, 0, 1) },
	  { SCHED_RUNNING, SCHED_START }, { 1, 0 } },
	{ "memory used outside the queue shrinks the budget",
	  1, { 16 * G }, { 10 * G }, { 0 }, DEFAULT_SET, 100, 2,
	  { PEND(1, 1, 6 * G, 0, 1), PEND(2, 1, 5 * G, 0, 2) },
	  { SCHED_WAIT_MEM, SCHED_START }, { 0, 1 } },
	{ "outside use beyond the running demands admits nothing",
	  1, { 16 * G }, { 12 * G }, { 0 }, NORES_SET, 100, 2,
	  { RUN(1, 1, 8 * G, 1), PEND(2, 1, 1 * G, 0, 1) },
	  { SCHED_RUNNING, SCHED_WAIT_MEM }, { 1, 0 } },
	{ "a whole-GPU job needs an empty GPU and fills it",
	  2, { 16 * G, 16 * G }, { 0 }, { 0 }, NORES_SET, 100, 3,
	  { RUN(1, 1, 1 * G, 1), PEND(2, 1, 0, 0, 1), PEND(3, 1, 1 * G, 0, 2) },
	  { SCHED_RUNNING, SCHED_START, SCHED_START }, { 1, 2, 1 } },
	{ "more GPUs than exist",
	  2, { 16 * G, 16 * G }, { 0 }, { 0 }, NORES_SET, 100, 1,
	  { PEND(1, 3, 1 * G, 0, 1) }, { SCHED_WAIT_GPUS }, { 0 } },
	{ "best fit: the GPU with the least room that fits",
	  2, { 16 * G, 16 * G }, { 0 }, { 0 }, NORES_SET, 100, 2,
	  { RUN(1, 1, 10 * G, 2), PEND(2, 1, 4 * G, 0, 1) },
	  { SCHED_RUNNING, SCHED_START }, { 2, 2 } },
	{ "CPUs: no more running -c than the machine has",
	  1, { 16 * G }, { 0 }, { 0 }, HOST_SET(4, 0), 100, 4,
	  { RUNC(1, 0, 2, 0), PENDC(2, 0, 2, 0, 1), PENDC(3, 0, 1, 0, 2), PENDC(4, 1, 1, 0, 3) },
	  { SCHED_RUNNING, SCHED_START, SCHED_WAIT_CPUS, SCHED_WAIT_CPUS }, { 0, 0, 0, 0 } },
	{ "CPUs: -c 0 counts as 1",
	  1, { 16 * G }, { 0 }, { 0 }, HOST_SET(2, 0), 100, 3,
	  { RUNC(1, 0, 0, 0), PENDC(2, 0, 0, 0, 1), PENDC(3, 0, 0, 0, 2) },
	  { SCHED_RUNNING, SCHED_START, SCHED_WAIT_CPUS }, { 0, 0, 0 } },
	{ "CPUs: a -c 4 job that waits is not passed by a -c 1 one",
	  1, { 16 * G }, { 0 }, { 0 }, HOST_SET(4, 0), 100, 3,
	  { RUNC(1, 0, 2, 0), PENDC(2, 0, 4, 0, 1), PENDC(3, 0, 1, 0, 2) },
	  { SCHED_RUNNING, SCHED_WAIT_CPUS, SCHED_WAIT_PRIORITY }, { 0, 0, 0 } },
	{ "CPUs: a GPU job waiting for GPU memory holds no CPU job back",
	  1, { 16 * G }, { 0 }, { 0 }, HOST_SET(4, 0), 100, 3,
	  { RUN(1, 1, 15 * G, 1), PENDC(2, 1, 1, 0, 1), PENDC(3, 0, 2, 0, 2) },
	  { SCHED_RUNNING, SCHED_WAIT_MEM, SCHED_START }, { 1, 0, 0 } },
	{ "CPUs: a GPU job whose GPU fits waits for its CPUs",
	  1, { 16 * G }, { 0 }, { 0 }, HOST_SET(4, 0), 100, 2,
	  { RUNC(1, 0, 3, 0), PENDC(2, 1, 2, 0, 1) },
	  { SCHED_RUNNING, SCHED_WAIT_CPUS }, { 0, 0 } },
	{ "host memory: --mem jobs fit beside the running ones', no --mem asks none",
	  1, { 16 * G }, { 0 }, { 0 }, HOST_SET(0, 10 * G), 100, 4,
	  { RUNC(1, 0, 1, 6 * G), PENDC(2, 0, 1, 0, 1), PENDC(3, 0, 1, 4 * G, 2),
	    PENDC(4, 0, 1, 1, 3) },
	  { SCHED_RUNNING, SCHED_START, SCHED_START, SCHED_WAIT_HOST_MEM }, { 0, 0, 0, 0 } },
	{ "host memory: a job that waits for it holds later ones back",
	  1, { 16 * G }, { 0 }, { 0 }, HOST_SET(8, 10 * G), 100, 3,
	  { RUNC(1, 0, 1, 6 * G), PENDC(2, 1, 1, 5 * G, 1), PENDC(3, 0, 1, 0, 2) },
	  { SCHED_RUNNING, SCHED_WAIT_HOST_MEM, SCHED_WAIT_PRIORITY }, { 0, 0, 0 } },
};

static void
test_table(void **state)
{
	struct sched_gpu gpus[4] = { { 0 } };
	struct sched_decision dec[8];
	struct sched_plan plan;
	int order[8];
	size_t c;
	int i, g;

	(void)state;
	for (c = 0; c < sizeof(cases) / sizeof(cases[0]); c++) {
		const struct tcase *t = &cases[c];
		for (g = 0; g < t->ngpus; g++) {
			gpus[g].total = t->total[g];
			gpus[g].outside = t->outside[g];
			gpus[g].mode = t->mode[g];
		}
		plan.dec = dec;
		plan.order = order;
		sched_plan(gpus, t->ngpus, t->jobs, t->njobs, &t->set, t->now, &plan);
		for (i = 0; i < t->njobs; i++) {
			if (dec[i].why != t->why[i] ||
			    (t->mask[i] != ~0ULL && dec[i].why <= SCHED_START &&
			    dec[i].gpumask != t->mask[i])) {
				print_error("case \"%s\", job %lld: why %d mask %llx, expected %d "
				    "mask %llx\n", t->name, (long long)t->jobs[i].id, dec[i].why,
				    (unsigned long long)dec[i].gpumask, t->why[i],
				    (unsigned long long)t->mask[i]);
				fail();
			}
		}
	}
}

static void
test_could_fit(void **state)
{
	struct sched_gpu gpus[2] = { { 80 * G, 70 * G, 0 }, { 40 * G, 0, 0 } };
	struct sched_settings s = DEFAULT_SET;
	char why[128];

	(void)state;
	assert_int_equal(sched_could_fit(gpus, 2, &s, 1, 70 * G, why, sizeof(why)), 0);
	assert_int_equal(sched_could_fit(gpus, 2, &s, 2, 30 * G, why, sizeof(why)), 0);
	assert_int_equal(sched_could_fit(gpus, 2, &s, 2, 50 * G, why, sizeof(why)), -1);
	assert_non_null(strstr(why, "needs 50G on 2 GPUs"));
	assert_int_equal(sched_could_fit(gpus, 2, &s, 3, G, why, sizeof(why)), -1);
	assert_non_null(strstr(why, "this server has 2"));
	assert_int_equal(sched_could_fit(gpus, 2, &s, 1, 79 * G, why, sizeof(why)), -1);
	assert_int_equal(sched_could_fit(gpus, 2, &s, 1, 0, why, sizeof(why)), 0);
}

static void
test_budget(void **state)
{
	struct sched_gpu g = { 100 * G, 10 * G, 0 };
	struct sched_settings pct = { 0, 5, 0, 0, 0 }, bytes = { 2 * G, 0, 0, 0, 0 };

	(void)state;
	assert_int_equal(sched_budget(&g, &pct), 85 * G);
	assert_int_equal(sched_budget(&g, &bytes), 88 * G);
	g.outside = 200 * G;
	assert_int_equal(sched_budget(&g, &bytes), 0);
}

/* Plans jobs on gpus; the decisions into dec. */
static void
plan_on(struct sched_gpu *gpus, int ngpus, const struct sched_job *jobs, int n,
    const struct sched_settings *s, struct sched_decision *dec)
{
	struct sched_plan plan;
	int order[8];

	plan.dec = dec;
	plan.order = order;
	sched_plan(gpus, ngpus, jobs, n, s, 100, &plan);
}

/* placement = pack or spread; drained GPUs; -w and -x (restrict_gpus, allowed) */
static void
test_placement(void **state)
{
	struct sched_gpu gpus[3] = { { 16 * G, 0, 0 }, { 16 * G, 0, 0 }, { 16 * G, 0, 0 } };
	struct sched_settings s = NORES_SET;
	struct sched_job jobs[3] = { RUN(1, 1, 4 * G, 2), PEND(2, 1, 4 * G, 0, 1),
	    PEND(3, 1, 4 * G, 0, 2) };
	struct sched_decision dec[3];

	(void)state;
	/* pack: beside the running job */
	plan_on(gpus, 3, jobs, 2, &s, dec);
	assert_int_equal(dec[1].why, SCHED_START);
	assert_int_equal(dec[1].gpumask, 2);
	/* spread: the first empty GPU */
	s.spread = 1;
	plan_on(gpus, 3, jobs, 2, &s, dec);
	assert_int_equal(dec[1].gpumask, 1);
	/* spread, two more: both empty GPUs, not the busy one */
	plan_on(gpus, 3, jobs, 3, &s, dec);
	assert_int_equal(dec[1].gpumask | dec[2].gpumask, 5);
	/* GPU 0 drained: spread goes to GPU 2, pack to GPU 1 */
	gpus[0].drained = 1;
	plan_on(gpus, 3, jobs, 2, &s, dec);
	assert_int_equal(dec[1].gpumask, 4);
	s.spread = 0;
	plan_on(gpus, 3, jobs, 2, &s, dec);
	assert_int_equal(dec[1].gpumask, 2);
	/* -w 0 while 0 is drained: it waits, and claims nothing, so job 3 starts */
	jobs[1].restrict_gpus = 1;
	jobs[1].allowed = 1;
	jobs[1].priority = 10;
	plan_on(gpus, 3, jobs, 3, &s, dec);
	assert_int_equal(dec[1].why, SCHED_WAIT_PLACE);
	assert_int_equal(dec[2].why, SCHED_START);
	/* -x 1 (allowed 0 and 2), GPU 0 undrained: GPU 0 or 2, never 1 */
	gpus[0].drained = 0;
	jobs[1].allowed = 5;
	plan_on(gpus, 3, jobs, 2, &s, dec);
	assert_int_equal(dec[1].why, SCHED_START);
	assert_int_equal(dec[1].gpumask & 2, 0);
	/* a 2-GPU job allowed only one GPU waits */
	jobs[1].ngpus = 2;
	jobs[1].allowed = 4;
	plan_on(gpus, 3, jobs, 2, &s, dec);
	assert_int_equal(dec[1].why, SCHED_WAIT_PLACE);
	/* sched_could: what a job could ever hold leaves out drained and disallowed GPUs */
	gpus[2].drained = 1;
	jobs[1].ngpus = 1;
	jobs[1].allowed = 6;
	assert_int_equal(sched_could(gpus, 3, &s, &jobs[1]), 2);
}

/* ---- the property test ---- */


static uint64_t
demand_on(const struct sched_job *jobs, int n, const struct sched_decision *dec, int g,
    uint64_t budget)
{
	uint64_t sum = 0;
	int i;

	for (i = 0; i < n; i++)
		if ((jobs[i].running || dec[i].why == SCHED_START) && (dec[i].gpumask >> g & 1))
			sum += jobs[i].mem ? jobs[i].mem : budget;
	return sum;
}

static int
popcount(uint64_t m)
{
	int n = 0;

	for (; m; m &= m - 1)
		n++;
	return n;
}

/*
 * Checks that starting s on g cannot delay b: for every subset of the jobs
 * that held g before this pass, if b would fit with that subset it still
 * fits with s added.
 */
static void
check_no_delay(const struct sched_job *jobs, int n, const struct sched_decision *dec,
    uint64_t budget, int g, int s, int b)
{
	uint64_t held[MAXJ], sum;
	int nh = 0, i;
	unsigned m;

	for (i = 0; i < n; i++)
		if (jobs[i].running && (jobs[i].gpumask >> g & 1))
			held[nh++] = jobs[i].mem;
	/* jobs started in this pass ahead of b count as held too */
	for (i = 0; i < n; i++)
		if (!jobs[i].running && i != s && dec[i].why == SCHED_START &&
		    (dec[i].gpumask >> g & 1) && nh < MAXJ)
			held[nh++] = jobs[i].mem;
	if (nh > 12)
		return;
	for (m = 0; m < (1U << nh); m++) {
		for (sum = 0, i = 0; i < nh; i++)
			if (m >> i & 1)
				sum += held[i];
		if (sum + jobs[b].mem <= budget && sum + jobs[b].mem + jobs[s].mem > budget) {
			print_error("job %lld started on GPU %d could delay job %lld\n",
			    (long long)jobs[s].id, g, (long long)jobs[b].id);
			fail();
		}
	}
}

static void
run_stream(uint64_t seed, int steps, double aging)
{
	struct sched_gpu gpus[4] = { { 0 } };
	struct sched_job jobs[MAXJ];
	struct sched_decision dec[MAXJ];
	struct sched_plan plan;
	struct sched_settings set = { 0, 5, aging, 0, 0 };
	int order[MAXJ], n = 0, ngpus = 4, step, i, k, g;
	int64_t next_id = 1;
	double now = 1000;
	uint64_t budget[4];

	rng_state = seed;
	for (g = 0; g < ngpus; g++) {
		gpus[g].total = (g < 2 ? 80 : 40) * G;
		gpus[g].outside = 0;
		gpus[g].mode = g == 3 ? SCHED_SERIAL : SCHED_AUTO;
	}
	for (step = 0; step < steps; step++) {
		now += (double)(rng() % 600);
		/* submits, while the stream is not draining */
		for (k = (int)(rng() % 3); k > 0 && n < MAXJ && step < steps - 400; k--) {
			struct sched_job *j = &jobs[n++];
			memset(j, 0, sizeof(*j));
			j->id = next_id++;
			j->uid = 1000 + (uint32_t)(rng() % 3);
			j->ngpus = (int)(rng() % 3);
			j->mem = (1 + rng() % 38) * G;
			j->priority = (int)(rng() % 5);
			j->submitted_at = now;
		}
		/* exits */
		for (i = 0; i < n; i++)
			if (jobs[i].running && rng() % 4 == 0) {
				jobs[i] = jobs[--n];
				i--;
			}
		/* outside use comes and goes on GPU 0 */
		gpus[0].outside = rng() % 8 == 0 ? (rng() % 20) * G : gpus[0].outside;
		for (g = 0; g < ngpus; g++)
			budget[g] = sched_budget(&gpus[g], &set);

		plan.dec = dec;
		plan.order = order;
		sched_plan(gpus, ngpus, jobs, n, &set, now, &plan);

		for (i = 0; i < n; i++) {
			if (dec[i].why != SCHED_START)
				continue;
			/* all or nothing */
			assert_int_equal(popcount(dec[i].gpumask), jobs[i].ngpus);
			for (g = 0; g < ngpus; g++) {
				if (!(dec[i].gpumask >> g & 1))
					continue;
				/* never over budget where something started */
				assert_true(demand_on(jobs, n, dec, g, budget[g]) <= budget[g]);
				if (gpus[g].mode == SCHED_SERIAL)
					for (k = 0; k < n; k++)
						assert_true(k == i || !((jobs[k].running ||
						    dec[k].why == SCHED_START) && (dec[k].gpumask >> g & 1)));
			}
			/* never ahead of a higher-priority job it could delay */
			for (k = 0; k < n && aging == 0; k++) {
				if (k == i || jobs[k].running || jobs[k].priority <= jobs[i].priority ||
				    (dec[k].why != SCHED_WAIT_MEM && dec[k].why != SCHED_WAIT_PRIORITY))
					continue;
				for (g = 0; g < ngpus; g++)
					if ((dec[i].gpumask >> g & 1) && gpus[g].mode == SCHED_AUTO &&
					    budget[g] >= jobs[k].mem)
						check_no_delay(jobs, n, dec, budget[g], g, i, k);
			}
		}
		for (i = 0; i < n; i++)
			if (dec[i].why == SCHED_START) {
				jobs[i].running = 1;
				jobs[i].gpumask = dec[i].gpumask;
			}
	}
	/* drained: with no new submits, everything ran */
	for (i = 0; i < n; i++)
		if (!jobs[i].running) {
			print_error("seed %llu: job %lld never started\n",
			    (unsigned long long)seed, (long long)jobs[i].id);
			fail();
		}
}

static void
test_property(void **state)
{
	uint64_t seed;

	(void)state;
	for (seed = 1; seed <= 40; seed++) {
		run_stream(seed * 2654435761ULL, 1500, 0);
		run_stream(seed * 40503ULL + 7, 1500, 2.0);
	}
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_table),
		cmocka_unit_test(test_could_fit),
		cmocka_unit_test(test_budget),
		cmocka_unit_test(test_placement),
		cmocka_unit_test(test_property),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
