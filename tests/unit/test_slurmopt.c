/*
 * test_slurmopt.c: slurmopt_take, a submit's Slurm options as nvqd checks
 * them: --partition and --account only under engine = slurm, and
 * --signal SIG@TIME's bounds and its need of a time limit.
 */
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "slurmopt.h"

/* A submit of fields "k=v" (v a number where k starts with warn_), decoded into m. */
static void
msg(struct proto_msg *m, const char *const *kv, int n)
{
	struct proto_buf b = { 0 };
	char err[128], k[32];
	const char *eq;
	int i;

	proto_begin(&b, MSG_SUBMIT);
	for (i = 0; i < n; i++) {
		eq = strchr(kv[i], '=');
		snprintf(k, sizeof(k), "%.*s", (int)(eq - kv[i]), kv[i]);
		if (strncmp(k, "warn_", 5) == 0)
			proto_put_int(&b, k, strtoll(eq + 1, NULL, 10));
		else
			proto_put_str(&b, k, eq + 1);
	}
	assert_int_equal(proto_end(&b), 0);
	assert_int_equal(proto_decode(MSG_SUBMIT, b.data + PROTO_HEADER, (uint32_t)(b.len -
	    PROTO_HEADER), m, err, sizeof(err)), 0);
	proto_buf_free(&b);
}

static void
test_take(void **state)
{
	static const struct {
		const char	*kv[3];
		int		slurm;
		int64_t		limit;
		const char	*err;	/* NULL: taken */
	} rows[] = {
		{ { "partition=gpu" }, 0, 0, "--partition gpu: this is one server: partitions" },
		{ { "account=acme" }, 0, 0, "--account acme: this is one server: accounts" },
		{ { "partition=gpu,debug", "account=acme" }, 1, 0, NULL },
		{ { "partition=a b" }, 1, 0, "1 to 64 letters" },
		{ { "warn_signal=10", "warn_time=30" }, 0, 60, NULL },
		{ { "warn_signal=10", "warn_time=30" }, 0, 0, "--signal 10@30: the job has no time limit" },
		{ { "warn_signal=9", "warn_time=30" }, 0, 60, "other than KILL and STOP" },
		{ { "warn_signal=10", "warn_time=65536" }, 0, 60, "TIME from 0 to 65535" },
		{ { "warn_signal=10", "warn_time=-1" }, 0, 60, "TIME from 0 to 65535" },
	};
	struct store_job_new j;
	struct proto_msg m;
	char err[512];
	size_t i;
	int n, rc;

	(void)state;
	for (i = 0; i < sizeof(rows) / sizeof(rows[0]); i++) {
		for (n = 0; n < 3 && rows[i].kv[n] != NULL; n++)
			;
		msg(&m, rows[i].kv, n);
		memset(&j, 0, sizeof(j));
		err[0] = '\0';
		rc = slurmopt_take(&m, rows[i].slurm, rows[i].limit, &j, err, sizeof(err));
		if (rows[i].err == NULL ? rc != 0 : rc != -1 || strstr(err, rows[i].err) == NULL)
			fail_msg("row %zu: rc %d, \"%s\"", i, rc, err);
		proto_msg_free(&m);
	}
	/* what it takes goes into the job: B:USR1@30 */
	{
		const char *kv[] = { "warn_signal=10", "warn_time=30", "warn_batch=1" };

		msg(&m, kv, 3);
		memset(&j, 0, sizeof(j));
		assert_int_equal(slurmopt_take(&m, 0, 60, &j, err, sizeof(err)), 0);
		assert_true(j.warn_sig == 10 && j.warn_time == 30 && j.warn_batch == 1);
		assert_null(j.partition);
		proto_msg_free(&m);
	}
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_take),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
