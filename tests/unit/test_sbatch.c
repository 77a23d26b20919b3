/*
 * test_sbatch.c: nvq/sbatch.c: every row of the #SBATCH table, by its long
 * name and by its letter, gives nvq's words (or nothing, or its refusal);
 * the forms of a line (--opt=V, --opt V, -xV, -x V); and the values of the
 * Slurm-named options (GPUs, nodes, mail types, exports).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <cmocka.h>

#include "sbatch.h"

/* The words of one line, joined by blanks; "!" and the reason if refused. */
static const char *
tr(const char *line)
{
	static char out[1024];
	char buf[512], *argv[32], *p, why[256];
	const char *w[SBATCH_MAX_OUT];
	int argc = 0, n, i;

	snprintf(buf, sizeof(buf), "%s", line);
	for (p = strtok(buf, " "); p != NULL && argc < 32; p = strtok(NULL, " "))
		argv[argc++] = p;
	if ((n = sbatch_translate(argc, argv, w, SBATCH_MAX_OUT, why, sizeof(why))) == -1) {
		snprintf(out, sizeof(out), "! %s", why);
		return out;
	}
	out[0] = '\0';
	for (i = 0; i < n; i++)
		snprintf(out + strlen(out), sizeof(out) - strlen(out), "%s%s", i ? " " : "", w[i]);
	return out;
}

/* A value a row's check takes ("V" where it has none); its check refuses "-V-". */
static const char *
good_value(const struct sbatch_row *r)
{
	static const char *const good[][2] = {
		{ "gres", "gpu:1" }, { "gpus", "1" }, { "gpus-per-node", "1" },
		{ "gpus-per-task", "1" }, { "nodes", "1" }, { "mail-type", "END" },
		{ "export", "ALL" }, { "signal", "B:USR1@5" },
	};
	char why[256];
	size_t i;

	if (r->check == NULL)
		return "V";
	if (r->check(r->name, "-V-", why, sizeof(why)) != -1)
		fail_msg("row %s: its check takes \"-V-\"", r->name);
	for (i = 0; i < sizeof(good) / sizeof(good[0]); i++)
		if (strcmp(good[i][0], r->name) == 0)
			return good[i][1];
	fail_msg("row %s: a check and no good value in the test", r->name);
	return NULL;
}

/* Every row, each way it can be written, does what its kind says. */
static void
test_rows(void **state)
{
	char line[128], want[256];
	const struct sbatch_row *r;
	int i, form;

	(void)state;
	for (i = 0; i < sbatch_nrows; i++) {
		r = &sbatch_table[i];
		assert_ptr_equal(sbatch_find(r->name, 0), r);
		if (r->letter != 0)
			assert_ptr_equal(sbatch_find(NULL, r->letter), r);
		for (form = 0; form < (r->letter != 0 ? 4 : 2); form++) {
			const char *v = r->arg != 0 ? good_value(r) : NULL;

			if (form == 0)
				snprintf(line, sizeof(line), "--%s%s%s", r->name, v ? "=" : "", v ? v : "");
			else if (form == 1)
				snprintf(line, sizeof(line), "--%s%s%s", r->name,
				    v && r->arg == 1 ? " " : "", v && r->arg == 1 ? v : "");
			else if (form == 2)
				snprintf(line, sizeof(line), "-%c%s", r->letter, v ? v : "");
			else
				snprintf(line, sizeof(line), "-%c%s%s", r->letter, v ? " " : "",
				    v ? v : "");
			if (r->how == SBATCH_REFUSE)
				snprintf(want, sizeof(want), "! --%s: %s", r->name, r->to);
			else if (r->how == SBATCH_MEANINGLESS)
				snprintf(want, sizeof(want), "%s", "");
			else if (r->how == SBATCH_FLAG)
				snprintf(want, sizeof(want), "%s", r->to);
			else if (form == 1 && r->arg == 2)
				snprintf(want, sizeof(want), "%s %s", r->to, r->dflt);
			else
				snprintf(want, sizeof(want), "%s %s", r->to, v);
			if (strcmp(tr(line), want) != 0)
				fail_msg("row %s, \"%s\": \"%s\", not \"%s\"", r->name, line, tr(line),
				    want);
		}
	}
}

/* What scripts say, line by line, and the lines that are wrong. */
static void
test_lines(void **state)
{
	static const char *const t[][2] = {
		{ "--job-name=train --gres=gpu:1 --time=1:00:00",
		  "--job-name train --gres gpu:1 --time 1:00:00" },
		{ "-J sweep -a 0-9%2 -o out/%A_%a.out",
		  "--job-name sweep --array 0-9%2 --output out/%A_%a.out" },
		{ "-n 3 -c 4 --mem=8G",
		  "--ntasks 3 --cpus-per-task 4 --mem 8G" },
		{ "-d afterany:12:13",
		  "--dependency afterany:12:13" },
		{ "--nice",
		  "--nice 100" },
		{ "--nice=-5",
		  "--nice -5" },
		{ "--exclusive --no-requeue --requeue",
		  "--requeue" },
		{ "-p gpu -A acme",	/* nvqd passes them on to Slurm, or refuses them */
		  "--partition gpu --account acme" },
		{ "--signal=B:USR1@30 --signal=USR2",
		  "--signal B:USR1@30 --signal USR2" },
		{ "--signal=R:USR1@30",
		  "! --signal R:USR1@30: R: lets a job overlap a reservation; nvq has no "
		  "reservations (leave R: out)" },
		{ "--reservation=maint",
		  "! --reservation: this is one server: nvq has no reservations" },
		{ "--frobnicate=3",
		  "! unknown sbatch option --frobnicate" },
		{ "--job",
		  "! unknown sbatch option --job" },
		{ "-Z",
		  "! unknown sbatch option -Z" },
		{ "--time",
		  "! --time needs a value" },
		{ "-t",
		  "! -t needs a value" },
		{ "--requeue=1",
		  "! --requeue takes no value" },
		{ "-Hv",
		  "! -H takes no value (one letter a word)" },
		{ "--nodes=2",
		  "! --nodes 2: this is one server: a job runs on " "one node (-N 1)" },
		{ "--gres=gpu:1 -N 1-2 --export=NONE --mail-type=END,FAIL",
		  "--gres gpu:1 --nodes 1-2 --export NONE --mail-type END,FAIL" },
		{ "--mail-type=ALL",
		  "! --mail-type ALL: it includes BEGIN, and nvq mails only at a job's end "
		  "(END,FAIL is what it can do)" },
		{ "train.py",
		  "! #SBATCH lines take options only, not \"train.py\"" },
		{ "",
		  "" },
	};
	size_t i;

	(void)state;
	for (i = 0; i < sizeof(t) / sizeof(t[0]); i++)
		if (strcmp(tr(t[i][0]), t[i][1]) != 0)
			fail_msg("\"%s\": \"%s\", not \"%s\"", t[i][0], tr(t[i][0]), t[i][1]);
}

static void
test_gpus(void **state)
{
	static const struct { const char *opt, *val; int n; } ok[] = {
		{ "gres", "gpu", 1 }, { "gres", "gpu:2", 2 }, { "gres", "gpu:a100:3", 3 },
		{ "gres", "gpu:a100", 1 }, { "gres", "gpu:1,gpu:v100:2", 3 }, { "gres", "none", 0 },
		{ "gpus", "4", 4 }, { "gpus", "h100:2", 2 }, { "gpus-per-node", "0", 0 },
		{ "gpus-per-task", "1", 1 }, { "gpus", "64", 64 },
	};
	static const struct { const char *opt, *val; } bad[] = {
		{ "gres", "shard:2" }, { "gres", "gpu:2,mps:100" }, { "gres", "gpux:1" },
		{ "gres", "gpu:a:b" }, { "gres", "gpu:65" }, { "gpus", "" }, { "gpus", "x" },
		{ "gpus", "65" }, { "gpus", "-1" }, { "gpus", ":2" }, { "gpus", "1,2" },
		{ "gpus", "a100:" },
	};
	char why[256];
	size_t i;
	int n;

	(void)state;
	for (i = 0; i < sizeof(ok) / sizeof(ok[0]); i++) {
		n = -1;
		if (sbatch_gpus(ok[i].opt, ok[i].val, &n, why, sizeof(why)) != 0 || n != ok[i].n)
			fail_msg("--%s %s: %d (%s), not %d", ok[i].opt, ok[i].val, n, why, ok[i].n);
	}
	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
		if (sbatch_gpus(bad[i].opt, bad[i].val, &n, why, sizeof(why)) != -1)
			fail_msg("--%s %s taken as %d", bad[i].opt, bad[i].val, n);
	assert_int_equal(sbatch_gpus("gres", "mps:1", &n, why, sizeof(why)), -1);
	assert_string_equal(why, "--gres mps:1: GPUs only (gpu[:TYPE][:N]); this server has no "
	    "other generic resources");
}

static void
test_nodes_mail(void **state)
{
	char why[256];
	int mail = -1;

	(void)state;
	assert_int_equal(sbatch_nodes("1", why, sizeof(why)), 0);
	assert_int_equal(sbatch_nodes("1-4", why, sizeof(why)), 0);
	assert_int_equal(sbatch_nodes("2", why, sizeof(why)), -1);
	assert_string_equal(why, "--nodes 2: this is one server: a job runs on one node (-N 1)");
	assert_int_equal(sbatch_nodes("2-4", why, sizeof(why)), -1);
	assert_int_equal(sbatch_nodes("1-0", why, sizeof(why)), -1);
	assert_int_equal(sbatch_nodes("1-", why, sizeof(why)), -1);

	assert_int_equal(sbatch_mail_type("END", &mail, why, sizeof(why)), 0);
	assert_int_equal(mail, 1);
	assert_int_equal(sbatch_mail_type("end,fail,ARRAY_TASKS", &mail, why, sizeof(why)), 0);
	assert_int_equal(mail, 1);
	assert_int_equal(sbatch_mail_type("NONE", &mail, why, sizeof(why)), 0);
	assert_int_equal(mail, 0);
	assert_int_equal(sbatch_mail_type("FAIL", &mail, why, sizeof(why)), -1);
	assert_int_equal(sbatch_mail_type("BEGIN,END", &mail, why, sizeof(why)), -1);
	assert_string_equal(why, "--mail-type BEGIN: nvq mails only at a job's end");
	assert_int_equal(sbatch_mail_type("ALL", &mail, why, sizeof(why)), -1);
	assert_int_equal(sbatch_mail_type("END,", &mail, why, sizeof(why)), -1);
	assert_int_equal(sbatch_mail_type("SOMETIMES", &mail, why, sizeof(why)), -1);
}

static void
test_export(void **state)
{
	char why[256], buf[64];

	(void)state;
	assert_int_equal(sbatch_export_check("ALL", why, sizeof(why)), 0);
	assert_int_equal(sbatch_export_check("NONE", why, sizeof(why)), 0);
	assert_int_equal(sbatch_export_check("ALL,A=1,B", why, sizeof(why)), 0);
	assert_int_equal(sbatch_export_check("A,B_2=x y", why, sizeof(why)), 0);
	assert_int_equal(sbatch_export_check("", why, sizeof(why)), -1);
	assert_int_equal(sbatch_export_check("A,,B", why, sizeof(why)), -1);
	assert_int_equal(sbatch_export_check("1A", why, sizeof(why)), -1);
	assert_int_equal(sbatch_export_check("A-B=1", why, sizeof(why)), -1);

	assert_true(sbatch_export_keeps("ALL", "HOME=/root"));
	assert_false(sbatch_export_keeps("NONE", "HOME=/root"));
	assert_true(sbatch_export_keeps("NONE", "SLURM_CONF=/x"));
	assert_true(sbatch_export_keeps("HOME,PATH", "HOME=/root"));
	assert_false(sbatch_export_keeps("HOME,PATH", "HOMEDIR=/root"));
	assert_false(sbatch_export_keeps("HOME,PATH", "USER=root"));
	assert_true(sbatch_export_keeps("ALL,X=1", "USER=root"));
	assert_false(sbatch_export_keeps("ALL,X=1", "X=2"));	/* the spec's value instead */
	assert_false(sbatch_export_keeps("X=1", "X=2"));

	assert_string_equal(sbatch_export_value("ALL,X=1,Y,Z=a b", 0, buf, sizeof(buf)), "X=1");
	assert_string_equal(sbatch_export_value("ALL,X=1,Y,Z=a b", 1, buf, sizeof(buf)), "Z=a b");
	assert_null(sbatch_export_value("ALL,X=1,Y,Z=a b", 2, buf, sizeof(buf)));
	assert_null(sbatch_export_value("NONE", 0, buf, sizeof(buf)));
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_rows),
		cmocka_unit_test(test_lines),
		cmocka_unit_test(test_gpus),
		cmocka_unit_test(test_nodes_mail),
		cmocka_unit_test(test_export),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
