/*
 * test_slurm.c: what nvqd says to Slurm and reads back (slurmjob.c):
 * sbatch's arguments for -g/-m/-t, the batch script's quoting (run through
 * sh), squeue's rows, the states, scontrol -d's GPUs, the plugin's peaks.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <cmocka.h>

#include "slurmjob.h"

#define GIB	(1ULL << 30)

/* sbatch's arguments for r joined by spaces, or "" when refused (why in why). */
static const char *
joined_args(const struct slurm_req *r, char *why)
{
	static char joined[2048];
	char buf[2048], *argv[SLURM_MAX_ARGS];
	int n, i;

	joined[0] = '\0';
	n = slurmjob_sbatch_args(r, "/usr/bin/sbatch", buf, sizeof(buf), argv, SLURM_MAX_ARGS,
	    why, 256);
	for (i = 0; i < n; i++) {
		strcat(joined, i ? " " : "");
		strcat(joined, argv[i]);
	}
	if (n > 0)
		assert_null(argv[n]);
	return joined;
}

/* Those of job 7, "train", of gpus GPUs of mem each. */
static const char *
args(int gpus, uint64_t mem, int64_t limit, const char *out, char *why)
{
	struct slurm_req r = { 7, "train", "/home/a", out, "/home/a/e", gpus, mem, GIB, limit,
	    "gpu", 0, 0, 0, NULL, 0, 0, 0 };

	return joined_args(&r, why);
}

/* Those of a job of no GPU with -c, --mem or --mem-per-cpu. */
static const char *
host_args(int cpus, uint64_t host_mem, uint64_t per_cpu, char *why)
{
	struct slurm_req r = { 7, "prep", "/home/a", "/home/a/o", "/home/a/e", 0, 0, GIB, 0,
	    "gpu", cpus, host_mem, per_cpu, NULL, 0, 0, 0 };

	return joined_args(&r, why);
}

static void
test_sbatch_args(void **state)
{
	char why[256] = "";

	(void)state;
	/* one GPU with -m: shards, rounded up, and the plugin's --gpu-mem */
	assert_string_equal(args(1, 3 * GIB / 2, 0, "/home/a/o", why),
	    "/usr/bin/sbatch --parsable --job-name=train --chdir=/home/a --output=/home/a/o "
	    "--error=/home/a/e --comment=nvq:7 --gres=shard:2 --gpu-mem=1536M --partition=gpu");
	/* more GPUs: whole ones, with the budget per GPU; a time limit as H:MM:SS */
	assert_string_equal(args(2, 4 * GIB, 5400 + 7, "/home/a/o", why),
	    "/usr/bin/sbatch --parsable --job-name=train --chdir=/home/a --output=/home/a/o "
	    "--error=/home/a/e --comment=nvq:7 --gres=gpu:2 --gpu-mem=4096M --time=1:30:07 "
	    "--partition=gpu");
	/* whole GPU, no budget; no GPU at all */
	assert_non_null(strstr(args(1, 0, 0, "/o", why), "--gres=gpu:1 --partition"));
	assert_null(strstr(args(1, 0, 0, "/o", why), "--gpu-mem"));
	assert_null(strstr(args(0, 0, 0, "/o", why), "--gres"));
	/* -c, --mem and --mem-per-cpu go on, in MiB rounded up; none of them when not asked */
	assert_null(strstr(args(0, 0, 0, "/o", why), "--cpus-per-task"));
	assert_null(strstr(args(0, 0, 0, "/o", why), "--mem"));
	assert_non_null(strstr(host_args(4, GIB + 1, 0, why), "--cpus-per-task=4 --mem=1025M "
	    "--partition"));
	assert_non_null(strstr(host_args(2, 2 * GIB, GIB, why), "--cpus-per-task=2 "
	    "--mem-per-cpu=1024M --partition"));
	/* the job's own --account and --signal [B:]SIG@TIME go on, after the partition */
	{
		struct slurm_req r = { 7, "train", "/home/a", "/home/a/o", "/home/a/e", 1, 0, GIB,
		    600, "debug,gpu", 0, 0, 0, "acme", 10, 90, 1 };

		assert_non_null(strstr(joined_args(&r, why), "--time=0:10:00 "
		    "--partition=debug,gpu --account=acme --signal=B:10@90"));
		/* every option at once still fits SLURM_MAX_ARGS */
		r.mem = GIB;
		r.cpus = 4;
		r.host_mem = GIB;
		r.warn_batch = 0;
		assert_non_null(strstr(joined_args(&r, why), "--account=acme --signal=10@90"));
	}
	/* % is Slurm's pattern: refused, not run somewhere else */
	assert_string_equal(args(1, GIB, 0, "/home/a/%x.out", why), "");
	assert_non_null(strstr(why, "without %"));
	assert_int_equal(slurmjob_shards(GIB, GIB), 1);
	assert_int_equal(slurmjob_shards(GIB + 1, GIB), 2);
	assert_int_equal(slurmjob_shards(1, GIB), 1);
}

/* The script, run by sh with its exec replaced by printf, prints each argument back. */
static void
test_script_quoting(void **state)
{
	static const char argv[] = "printf\0[%s]\0it's\0a b\0$HOME\0`x`\0\"q\"\0line\nbreak\0";
	char buf[512], path[] = "/tmp/nvq-test-slurm.XXXXXX", cmd[600], got[512];
	FILE *fp;
	size_t n;
	int len, fd;

	(void)state;
	len = slurmjob_script(3, argv, (int)sizeof(argv) - 1, buf, sizeof(buf));
	assert_true(len > 0);
	assert_int_equal(strncmp(buf, "#!/bin/sh\n# nvq job 3\nexec 'printf' '[%s]' ", 39), 0);
	assert_int_equal(buf[len - 1], '\n');
	fd = mkstemp(path);
	assert_true(fd >= 0);
	assert_int_equal(write(fd, buf, (size_t)len), len);
	close(fd);
	snprintf(cmd, sizeof(cmd), "sh %s", path);
	fp = popen(cmd, "r");
	assert_non_null(fp);
	n = fread(got, 1, sizeof(got) - 1, fp);
	got[n] = '\0';
	pclose(fp);
	unlink(path);
	assert_string_equal(got, "[it's][a b][$HOME][`x`][\"q\"][line\nbreak]");
	/* too small, or not NUL-terminated: refused */
	assert_int_equal(slurmjob_script(3, argv, (int)sizeof(argv) - 1, buf, 40), -1);
	assert_int_equal(slurmjob_script(3, "ab", 2, buf, sizeof(buf)), -1);
}

static void
test_rows(void **state)
{
	struct slurm_row r;

	(void)state;
	assert_int_equal(slurmjob_parse_row("137|FAILED|768|vm|2026-11-25T11:58:00|"
	    "2026-11-25T11:58:03|NonZeroExitCode|", &r), 0);
	assert_int_equal(r.sid, 137);
	assert_string_equal(r.state, "FAILED");
	assert_int_equal(r.status, 768);
	assert_string_equal(r.nodes, "vm");
	assert_true(r.start > 0);
	assert_true(r.end - r.start == 3);
	assert_string_equal(r.reason, "NonZeroExitCode");
	assert_int_equal(slurmjob_parse_row("140|PENDING|0||N/A|N/A|Resources|", &r), 0);
	assert_true(r.start == 0 && r.end == 0);
	assert_string_equal(r.reason, "Resources");
	assert_int_equal(slurmjob_parse_row("140|RUNNING|0|vm|2026-11-25T11:58:09|NONE|None|", &r), 0);
	/* not rows: an error line, a short row, a bad id, a bad state */
	assert_int_equal(slurmjob_parse_row("slurm_load_jobs error: Invalid job id specified", &r), -1);
	assert_int_equal(slurmjob_parse_row("140|RUNNING|0|vm|", &r), -1);
	assert_int_equal(slurmjob_parse_row("x1|RUNNING|0|vm|N/A|N/A|None|", &r), -1);
	assert_int_equal(slurmjob_parse_row("1|run ning|0|vm|N/A|N/A|None|", &r), -1);
}

static void
test_states(void **state)
{
	int final;

	(void)state;
	assert_string_equal(slurmjob_state("PENDING", &final), "PENDING");
	assert_int_equal(final, 0);
	assert_string_equal(slurmjob_state("COMPLETING", &final), "RUNNING");
	assert_int_equal(final, 0);
	assert_string_equal(slurmjob_state("OUT_OF_MEMORY", &final), "FAILED");
	assert_int_equal(final, 1);
	assert_string_equal(slurmjob_state("DEADLINE", &final), "TIMEOUT");
	assert_string_equal(slurmjob_state("CANCELLED", &final), "CANCELLED");
	assert_int_equal(final, 1);
	assert_null(slurmjob_state("NEW_STATE", &final));
}

static void
test_gpus(void **state)
{
	char out[256];

	(void)state;
	assert_int_equal(slurmjob_gpus("JobId=141 JobName=wrap JobState=RUNNING NodeList=vm "
	    "  Nodes=vm CPU_IDs=0 Mem=0 GRES=shard:2(IDX:0) TresPerNode=gres:shard:2", out,
	    sizeof(out)), 0);
	assert_string_equal(out, "vm:0");
	assert_int_equal(slurmjob_gpus("JobId=9 Nodes=n1 CPU_IDs=0-1 Mem=0 GRES=gpu:3(IDX:0-1,3) "
	    "Nodes=n2 CPU_IDs=0 Mem=0 GRES=gpu:1(IDX:2) Partition=x", out, sizeof(out)), 0);
	assert_string_equal(out, "n1:0,n1:1,n1:3,n2:2");
	/* a node without GPUs named alone; no node at all is no answer */
	assert_int_equal(slurmjob_gpus("JobId=9 Nodes=n3 CPU_IDs=0 Mem=0 Partition=x", out,
	    sizeof(out)), 0);
	assert_string_equal(out, "n3");
	assert_int_equal(slurmjob_gpus("JobId=9 JobState=PENDING", out, sizeof(out)), -1);
	assert_int_equal(slurmjob_gpus("JobId=9 Nodes=n1 GRES=gpu:2(IDX:0-1)", out, 6), -1);
	/* indexes past any node's (the fuzzer's overflow), and backwards ranges */
	assert_int_equal(slurmjob_gpus("Nodes=n GRES=gpu:1(IDX:9223372036854775807)", out,
	    sizeof(out)), -1);
	assert_int_equal(slurmjob_gpus("Nodes=n GRES=gpu:1(IDX:0-9223372036854775807)", out,
	    sizeof(out)), -1);
	assert_int_equal(slurmjob_gpus("Nodes=n GRES=gpu:1(IDX:3-1)", out, sizeof(out)), -1);
}

static void
test_peaks(void **state)
{
	char gpu[64];
	uint64_t b;

	(void)state;
	assert_int_equal(slurmjob_peak_line("vm 0 536870912\n", gpu, sizeof(gpu), &b), 0);
	assert_string_equal(gpu, "vm:0");
	assert_int_equal(b, 536870912);
	assert_int_equal(slurmjob_peak_line("vm 0 5 extra", gpu, sizeof(gpu), &b), -1);
	assert_int_equal(slurmjob_peak_line("vm -1 5", gpu, sizeof(gpu), &b), -1);
	assert_int_equal(slurmjob_peak_line("v'm 0 5", gpu, sizeof(gpu), &b), -1);
	assert_int_equal(slurmjob_peak_line("vm 0", gpu, sizeof(gpu), &b), -1);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_sbatch_args),
		cmocka_unit_test(test_script_quoting),
		cmocka_unit_test(test_rows),
		cmocka_unit_test(test_states),
		cmocka_unit_test(test_gpus),
		cmocka_unit_test(test_peaks),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
