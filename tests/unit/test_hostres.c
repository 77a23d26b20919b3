/*
 * test_hostres.c: what a job takes of the host unless it says (hostres.h),
 * row by row.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "hostres.h"

#define G (1ULL << 30)
#define M (1ULL << 20)

static void
test_job_cpus(void **state)
{
	static const struct {
		int		asked, ngpus;
		uint64_t	mem;
		int		cpus, per_gpu, machine_gpus;
		uint64_t	gpu_total;
		int		want;
	} rows[] = {
		{ 3, 1, 0, 64, 0, 8, 80 * G, 3 },	/* -c wins */
		{ 0, 0, 0, 64, 0, 8, 80 * G, 1 },	/* -g 0: 1 CPU */
		{ 0, 1, 0, 64, 0, 8, 80 * G, 8 },	/* a whole GPU: 64 / 8 */
		{ 0, 2, 0, 64, 0, 8, 80 * G, 16 },	/* two: twice */
		{ 0, 1, 8 * G, 64, 0, 8, 80 * G, 1 },	/* a tenth of a GPU: 0.8, at least 1 */
		{ 0, 1, 40 * G, 64, 0, 8, 80 * G, 4 },	/* half of one */
		{ 0, 1, 0, 64, 12, 8, 80 * G, 12 },	/* [resources] cpus_per_gpu */
		{ 0, 8, 0, 16, 4, 8, 80 * G, 16 },	/* never more than the machine's */
		{ 0, 1, 0, 4, 0, 8, 80 * G, 1 },	/* fewer CPUs than GPUs: 1 */
		{ 0, 1, 0, 0, 0, 0, 0, 1 },		/* nothing known: 1 */
	};
	size_t i;

	(void)state;
	for (i = 0; i < sizeof(rows) / sizeof(rows[0]); i++)
		assert_int_equal(hostres_job_cpus(rows[i].asked, rows[i].ngpus, rows[i].mem,
		    rows[i].cpus, rows[i].per_gpu, rows[i].machine_gpus, rows[i].gpu_total),
		    rows[i].want);
}

static void
test_job_mem(void **state)
{
	(void)state;
	assert_int_equal(hostres_job_mem(512 * M, 0, 4, 0), 512 * M);	/* --mem */
	assert_int_equal(hostres_job_mem(0, 100 * M, 4, 0), 400 * M);	/* --mem-per-cpu */
	assert_int_equal(hostres_job_mem(0, 100 * M, 0, 0), 100 * M);	/* 0 CPUs count 1 */
	assert_int_equal(hostres_job_mem(0, 0, 4, G), G);		/* default_mem */
	assert_int_equal(hostres_job_mem(0, 0, 4, 0), 0);		/* none */
	assert_true(hostres_job_mem(0, UINT64_MAX / 2, 4, 0) == UINT64_MAX);	/* saturates */
}

static void
test_reserve(void **state)
{
	(void)state;
	assert_int_equal(hostres_reserve(8 * G), G);			/* at least 1G */
	assert_int_equal(hostres_reserve(512 * G), 512 * G / 20);	/* 5% */
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_job_cpus),
		cmocka_unit_test(test_job_mem),
		cmocka_unit_test(test_reserve),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
