/*
 * test_config.c: the INI key table: defaults, every kind of value, and
 * errors that name the file and the line.
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

#include "config.h"
#include "rlimits.h"

#define G (1ULL << 30)

static char path[] = "/tmp/nvq-test-config-XXXXXX";

static void
write_file(const char *text)
{
	FILE *fp = fopen(path, "w");

	assert_non_null(fp);
	fputs(text, fp);
	fclose(fp);
}

static void
test_defaults(void **state)
{
	struct config c;
	char err[256];

	(void)state;
	assert_int_equal(config_load(&c, NULL, err, sizeof(err)), 0);
	assert_int_equal(c.sched.reserve_pct, 5);
	assert_int_equal(c.mode_default, SCHED_AUTO);
	assert_int_equal(c.kill_grace, 30);
	assert_int_equal(c.gpu_poll, 5);
	assert_int_equal(c.nvirtual, 0);
	assert_int_equal(c.sync_full, 1);
	assert_true(c.sched.aging == 1.0);
	assert_true(c.socket[0] == '/');
	assert_true(c.database[0] == '/');
}

static void
test_values(void **state)
{
	struct config c;
	char err[256];

	(void)state;
	write_file("; a comment\n[daemon]\nsocket = /tmp/x.sock\nlog_level = debug\n"
	    "sync = normal\n[gpus]\nvirtual = 2x80G,40G\npoll = 2s\n"
	    "[scheduler]\nmode = auto,1:serial\nreserve = 2G\naging = 0.5\nkill_grace = 1m\n"
	    "[limits]\nmax_running_jobs = 3\nmax_gpus = 4\nmax_priority = 7\numask = 077\n"
	    "rlimits = nofile=10:20\n[security]\nadmin_group = root\n[daemon]\ncgroups = off\n");
	assert_int_equal(config_load(&c, path, err, sizeof(err)), 0);
	assert_string_equal(c.socket, "/tmp/x.sock");
	assert_int_equal(c.log_level, LOG_LEVEL_DEBUG);
	assert_int_equal(c.sync_full, 0);
	assert_int_equal(c.nvirtual, 3);
	assert_true(c.virtual_mem[0] == 80 * G && c.virtual_mem[2] == 40 * G);
	assert_int_equal(c.gpu_poll, 2);
	assert_int_equal(config_mode(&c, 0), SCHED_AUTO);
	assert_int_equal(config_mode(&c, 1), SCHED_SERIAL);
	assert_int_equal(config_mode(&c, 2), SCHED_AUTO);
	assert_true(c.sched.reserve_bytes == 2 * G && c.sched.reserve_pct == 0);
	assert_true(c.sched.aging == 0.5);
	assert_int_equal(c.kill_grace, 60);
	assert_int_equal(c.sched.max_running_jobs, 3);
	assert_int_equal(c.sched.max_gpus, 4);
	assert_int_equal(c.max_priority, 7);
	assert_int_equal(c.job_umask, 077);
	assert_string_equal(c.rlimits, "nofile=10:20");
	assert_true(c.has_admin_gid && c.admin_gid == 0);
	assert_int_equal(c.cgroups, 0);
}

static void
test_errors(void **state)
{
	static const struct { const char *text; const char *want; } t[] = {
		{ "[daemon]\nbogus = 1\n", ":2: unknown key \"bogus\" in [daemon]" },
		{ "[nope]\nx = 1\n", ":2: unknown section [nope]" },
		{ "x = 1\n", ":1: key \"x\" outside any section" },
		{ "[gpus]\n\nvirtual = 2x\n", ":3: virtual:" },
		{ "[gpus]\nvirtual = 0G\n", ":2: virtual:" },
		{ "[scheduler]\nmode = fast\n", ":2: mode:" },
		{ "[scheduler]\nmode = auto,99:serial\n", ":2: mode:" },
		{ "[scheduler]\nreserve = 120%\n", ":2: reserve:" },
		{ "[scheduler]\naging = -1\n", ":2: aging:" },
		{ "[scheduler]\nkill_grace = forever\n", ":2: kill_grace:" },
		{ "[limits]\nmax_gpus = 65\n", ":2: max_gpus:" },
		{ "[limits]\nmax_running_jobs = 1.5\n", ":2: max_running_jobs:" },
		{ "[daemon]\nsocket = relative.sock\n", ":2: socket: \"relative.sock\" is not an "
		  "absolute path" },
		{ "[daemon]\nlog_level = loud\n", ":2: log_level:" },
		{ "[daemon]\nthis line is broken\n", ":2: syntax error" },
		{ "[daemon\n", ":1: syntax error" },
		{ "[limits]\numask = 0999\n", ":2: umask:" },
		{ "[limits]\nmax_priority = -1\n", ":2: max_priority:" },
		{ "[limits]\nrlimits = nofile=2:1\n", ":2: rlimits: nofile: the soft limit is above" },
		{ "[limits]\nrlimits = cores=0\n", ":2: rlimits: unknown limit \"cores\"" },
		{ "[security]\nadmin_group = no-such-group-nvq\n", ":2: admin_group: no such group" },
		{ "[daemon]\ncgroups = maybe\n", ":2: cgroups:" },
		{ "[qos hi]\npriority = 1000001\n", ":2: priority:" },
		{ "[qos hi]\ncolour = red\n", ":2: unknown key \"colour\" in [qos hi]" },
		{ "[qos a b]\npriority = 1\n", ":1: [qos a b]: a class's name" },
		{ "[qos hi]\nusers = no-such-user-nvq\n", ":2: users: no user \"no-such-user-nvq\"" },
		{ "[qos hi]\ngroups = no-such-group-nvq\n", ":2: groups: no group" },
		{ "[qos hi]\nmax_jobs_per_user = -1\n", ":2: max_jobs_per_user:" },
		{ "[qos hi]\npreempts = hi\n", ": [qos hi] preempts itself" },
		{ "[qos hi]\npreempts = lo\n", ": [qos hi] preempts lo: there is no such class" },
		{ "[qos a]\npreempts = b\n[qos b]\npreempts = c\n[qos c]\npreempts = a\n",
		  ": [qos a]: classes preempt each other in a ring" },
		{ "[scheduler]\ndefault_qos = gold\n", ": [scheduler] default_qos = gold: there is "
		  "no [qos gold]" },
	};
	struct config c;
	char err[512];
	size_t i;

	(void)state;
	for (i = 0; i < sizeof(t) / sizeof(t[0]); i++) {
		write_file(t[i].text);
		if (config_load(&c, path, err, sizeof(err)) != -1 ||
		    strncmp(err, path, strlen(path)) != 0 || strstr(err, t[i].want) == NULL) {
			print_error("config \"%s\": got \"%s\", wanted \"%s\"\n", t[i].text, err,
			    t[i].want);
			fail();
		}
	}
	assert_int_equal(config_load(&c, "/nonexistent/nvq.ini", err, sizeof(err)), -1);
	assert_non_null(strstr(err, "No such file"));
}

/* [qos NAME] sections: the classes, "normal" made where it has none, preempts as a mask. */
static void
test_qos(void **state)
{
	struct config c;
	char err[512];
	int hi, lo, n;

	(void)state;
	write_file("[qos hi]\npriority = 10\npreempts = normal, lo\nusers = root, 4242\n"
	    "groups = 77\nmax_gpus_per_user = 2\n[qos lo]\npriority = -3\n"
	    "max_jobs_per_user = 5\n");
	assert_int_equal(config_load(&c, path, err, sizeof(err)), 0);
	assert_int_equal(c.qos.n, 3);
	hi = qos_find(&c.qos, "hi");
	lo = qos_find(&c.qos, "lo");
	n = qos_find(&c.qos, "normal");
	assert_true(hi >= 0 && lo >= 0 && n >= 0);
	assert_int_equal(c.qos.dflt, n);
	assert_int_equal(c.qos.c[hi].priority, 10);
	assert_int_equal(c.qos.c[lo].priority, -3);
	assert_int_equal(c.qos.c[hi].preempts, (1U << n) | (1U << lo));
	assert_int_equal(c.qos.c[lo].preempts, 0);
	assert_int_equal(c.qos.c[n].preempts, 0);
	assert_int_equal(c.sched.qos_max_gpus[hi], 2);
	assert_int_equal(c.sched.qos_max_jobs[lo], 5);
	assert_int_equal(c.sched.qos_max_jobs[n], 0);
	/* who may use it: listed users, members of its groups (primary or not), root */
	gid_t groups[2] = { 5, 77 };
	assert_true(qos_may_use(&c.qos.c[hi], 4242, 100, NULL, 0));
	assert_true(qos_may_use(&c.qos.c[hi], 0, 100, NULL, 0));
	assert_true(qos_may_use(&c.qos.c[hi], 5000, 77, NULL, 0));
	assert_true(qos_may_use(&c.qos.c[hi], 5000, 100, groups, 2));
	assert_false(qos_may_use(&c.qos.c[hi], 5000, 100, groups, 1));
	assert_true(qos_may_use(&c.qos.c[lo], 5000, 100, NULL, 0));
	/* a default class of its own section */
	write_file("[scheduler]\ndefault_qos = lo\n[qos lo]\npriority = -1\n");
	assert_int_equal(config_load(&c, path, err, sizeof(err)), 0);
	assert_int_equal(c.qos.n, 1);
	assert_string_equal(c.qos.c[c.qos.dflt].name, "lo");
	/* a section without keys: a class of the defaults */
	write_file("[qos empty]\n[qos  spaced ] # a comment\n[limits]\nmax_gpus = 1\n");
	assert_int_equal(config_load(&c, path, err, sizeof(err)), 0);
	assert_int_equal(c.qos.n, 3);
	assert_true(qos_find(&c.qos, "empty") >= 0 && qos_find(&c.qos, "spaced") >= 0);
	/* without any: "normal" alone */
	assert_int_equal(config_load(&c, NULL, err, sizeof(err)), 0);
	assert_int_equal(c.qos.n, 1);
	assert_string_equal(c.qos.c[c.qos.dflt].name, "normal");
}

/* The rlimits policy: names, sizes, SOFT:HARD, unlimited, and what is refused. */
static void
test_rlimits(void **state)
{
	static const struct {
		const char *text;
		int n, resource;
		unsigned long long soft, hard;
	} ok[] = {
		{ "", 0, 0, 0, 0 },
		{ "core=0", 1, RLIMIT_CORE, 0, 0 },
		{ "nofile=1024:4096", 1, RLIMIT_NOFILE, 1024, 4096 },
		{ " as=4G:unlimited , core=0", 2, RLIMIT_AS, 4ULL << 30, RLIM_INFINITY },
		{ "stack=8M", 1, RLIMIT_STACK, 8ULL << 20, 8ULL << 20 },
	};
	static const char *bad[] = {
		"nofile", "nofile=", "nofile=4G", "core=-1", "core=1:", "nproc=2:1", "x=1",
		"core=0,core=1", "cpu=99999999999999999999", "as=1Q",
	};
	struct rlimits_entry r[RLIMITS_MAX];
	char err[200];
	size_t i;

	(void)state;
	for (i = 0; i < sizeof(ok) / sizeof(ok[0]); i++) {
		assert_int_equal(rlimits_parse(ok[i].text, r, err, sizeof(err)), ok[i].n);
		if (ok[i].n > 0) {
			assert_int_equal(r[0].resource, ok[i].resource);
			assert_true(r[0].lim.rlim_cur == ok[i].soft);
			assert_true(r[0].lim.rlim_max == ok[i].hard);
		}
	}
	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		err[0] = '\0';
		if (rlimits_parse(bad[i], r, err, sizeof(err)) != -1 || err[0] == '\0') {
			print_error("rlimits \"%s\" was accepted\n", bad[i]);
			fail();
		}
	}
}

/* The example the table prints loads, and gives the defaults back. */
static void
test_print_loads(void **state)
{
	struct config a, b;
	char err[256];
	FILE *fp = fopen(path, "w");

	(void)state;
	assert_non_null(fp);
	config_print(fp);
	fclose(fp);
	assert_int_equal(config_load(&a, path, err, sizeof(err)), 0);
	assert_int_equal(config_load(&b, NULL, err, sizeof(err)), 0);
	assert_memory_equal(&a, &b, sizeof(a));
}

static int
setup(void **state)
{
	int fd = mkstemp(path);

	(void)state;
	if (fd == -1)
		return -1;
	close(fd);
	return 0;
}

static int
teardown(void **state)
{
	(void)state;
	unlink(path);
	return 0;
}

/*
 * Each key's value lands in its own field and nowhere else: keys of one
 * type were once told apart by a strcmp chain whose last branch took any
 * key it did not name.
 */
static void
test_each_key_its_field(void **state)
{
	struct config c, d;
	char err[256];

	(void)state;
	assert_int_equal(config_load(&d, NULL, err, sizeof(err)), 0);
	write_file("[gpus]\npoll = 7s\n[scheduler]\nquantum = 11s\nrevoke_timeout = 13s\n"
	    "kill_grace = 17s\npreempt_min_runtime = 19s\nturn = 23s\nswitch_overhead = 29%\n"
	    "offload = off\n[daemon]\ncgroups = off\n[limits]\nmax_running_jobs = 31\n"
	    "max_gpus = 3\nmax_pending = 37\nmax_procs = 41\nmax_priority = 43\n"
	    "max_env = 47K\nmax_stored = 53M\numask = 053\n");
	assert_int_equal(config_load(&c, path, err, sizeof(err)), 0);
	assert_int_equal(c.gpu_poll, 7);
	assert_int_equal(c.quantum, 11);
	assert_int_equal(c.revoke_timeout, 13);
	assert_int_equal(c.kill_grace, 17);
	assert_true(c.sched.preempt_min_runtime == 19.0);
	assert_true(c.turn == 23.0);
	assert_true(c.switch_overhead > 0.289 && c.switch_overhead < 0.291);
	assert_int_equal(c.offload, 0);
	assert_int_equal(c.cgroups, 0);
	assert_int_equal(c.sched.max_running_jobs, 31);
	assert_int_equal(c.sched.max_gpus, 3);
	assert_int_equal(c.max_pending, 37);
	assert_int_equal(c.max_procs, 41);
	assert_int_equal(c.max_priority, 43);
	assert_int_equal(c.max_env, 47 * 1024);
	assert_int_equal(c.max_stored, 53ULL << 20);
	assert_int_equal(c.job_umask, 053);
	/* and the keys not named kept their defaults */
	assert_true(c.sched.aging == d.sched.aging);
	assert_int_equal(c.sync_full, d.sync_full);
	assert_int_equal(c.log_level, d.log_level);
	assert_int_equal(c.sched.preempt, d.sched.preempt);
	assert_int_equal(c.sched.reserve_pct, d.sched.reserve_pct);
	assert_string_equal(c.nvml_library, d.nvml_library);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_defaults),
		cmocka_unit_test(test_values),
		cmocka_unit_test(test_each_key_its_field),
		cmocka_unit_test(test_errors),
		cmocka_unit_test(test_print_loads),
		cmocka_unit_test(test_rlimits),
		cmocka_unit_test(test_qos),
	};

	return cmocka_run_group_tests(tests, setup, teardown);
}
