/*
 * test_job.c: job_life() (job.c) tells each row of a job's life (job.h)
 * from the fields that say so, one case per row, and the rows that a job
 * may seem to be in twice are told in the table's order: an end under way
 * beats the state, a supervisor gone beats the end asked for, an unlinked
 * job is GONE whatever else it says.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <cmocka.h>

#include "job.h"

/* A row: the fields that matter, and the life they make. */
struct row {
	const char	*name;
	int		state, queue, promised, prepared;
	const char	*ending;
	int		exited, recorded, gone;
	int		want;
};

static const struct row rows[] = {
	{ "PARKED", JOB_PENDING, JOB_Q_PARKED, 0, 0, "", 0, 0, 0, JOB_LIFE_PARKED },
	{ "DEPS", JOB_PENDING, JOB_Q_DEPS, 0, 0, "", 0, 0, 0, JOB_LIFE_DEPS },
	{ "GATED", JOB_PENDING, JOB_Q_GATED, 0, 0, "", 0, 0, 0, JOB_LIFE_GATED },
	{ "READY", JOB_PENDING, JOB_Q_READY, 0, 0, "", 0, 0, 0, JOB_LIFE_READY },
	/* out of memory filing it: still ready, filed again at a reload */
	{ "READY unfiled", JOB_PENDING, JOB_Q_NONE, 0, 0, "", 0, 0, 0, JOB_LIFE_READY },
	{ "STARTING promised", JOB_PENDING, JOB_Q_READY, 4242, 0, "", 0, 0, 0, JOB_LIFE_STARTING },
	{ "STARTING prepared", JOB_PENDING, JOB_Q_READY, 4242, 1, "", 0, 0, 0, JOB_LIFE_STARTING },
	{ "RUNNING", JOB_RUNNING, JOB_Q_HELD, 0, 0, "", 0, 0, 0, JOB_LIFE_RUNNING },
	{ "SUSPENDED", JOB_SUSPENDED, JOB_Q_HELD, 0, 0, "", 0, 0, 0, JOB_LIFE_SUSPENDED },
	{ "STOPPING", JOB_RUNNING, JOB_Q_HELD, 0, 0, "TIMEOUT", 0, 0, 0, JOB_LIFE_STOPPING },
	{ "STOPPING suspended", JOB_SUSPENDED, JOB_Q_HELD, 0, 0, "CANCELLED", 0, 0, 0,
	  JOB_LIFE_STOPPING },
	{ "EXITED", JOB_RUNNING, JOB_Q_HELD, 0, 0, "", 1, 0, 0, JOB_LIFE_EXITED },
	{ "EXITED stopping", JOB_RUNNING, JOB_Q_HELD, 0, 0, "REQUEUED", 1, 0, 0, JOB_LIFE_EXITED },
	{ "RECORDED", JOB_RUNNING, JOB_Q_HELD, 0, 0, "", 1, 1, 0, JOB_LIFE_RECORDED },
	{ "GONE", JOB_RUNNING, JOB_Q_NONE, 0, 0, "", 1, 1, 1, JOB_LIFE_GONE },
	{ "GONE pending", JOB_PENDING, JOB_Q_NONE, 0, 0, "", 0, 0, 1, JOB_LIFE_GONE },
};

static void
test_row(void **state)
{
	const struct row *r = *state;
	struct job j;
	int got;

	memset(&j, 0, sizeof(j));
	j.state = r->state;
	j.queue = r->queue;
	j.promised = r->promised;
	j.prepared = r->prepared;
	snprintf(j.ending, sizeof(j.ending), "%s", r->ending);
	j.exited = r->exited;
	j.recorded = r->recorded;
	j.gone = r->gone;
	if ((got = job_life(&j)) != r->want)
		fail_msg("%s: life %d, wanted %d", r->name, got, r->want);
}

/* Every row of job.h's life, and none twice: the rows above reach each one. */
static void
test_every_life(void **state)
{
	int seen[JOB_LIFE_GONE + 1] = { 0 };
	size_t i;
	int k;

	(void)state;
	for (i = 0; i < sizeof(rows) / sizeof(rows[0]); i++)
		seen[rows[i].want] = 1;
	for (k = 0; k <= JOB_LIFE_GONE; k++)
		if (!seen[k])
			fail_msg("no row for life %d", k);
}

#define ROW(i) { rows[i].name, test_row, NULL, NULL, (void *)&rows[i] }

int
main(void)
{
	const struct CMUnitTest tests[] = {
		ROW(0), ROW(1), ROW(2), ROW(3), ROW(4), ROW(5), ROW(6), ROW(7), ROW(8), ROW(9),
		ROW(10), ROW(11), ROW(12), ROW(13), ROW(14), ROW(15),
		cmocka_unit_test(test_every_life),
	};

	_Static_assert(sizeof(rows) / sizeof(rows[0]) == 16, "a ROW() for every row");
	return cmocka_run_group_tests(tests, NULL, NULL);
}
