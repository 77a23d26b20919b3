/*
 * test_share.c: the job's shared memory account (common/share.c): limits
 * across processes, a forked child's own slot, what a process that ended
 * held taken back, a pid reused by another process told apart by its start
 * time, and a file that is not the job's refused.
 */
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>
#include <cmocka.h>

#include "share.h"

#define M (1ULL << 20)

static char path[256];

static int
setup(void **state)
{
	(void)state;
	return share_create(path, sizeof(path), getuid(), getgid());
}

static int
teardown(void **state)
{
	(void)state;
	unlink(path);
	return 0;
}

/* Runs fn in a child: its exit status. */
static int
in_child(int (*fn)(void))
{
	int st;
	pid_t pid = fork();

	if (pid == 0) {
		share_child();
		_exit(fn());
	}
	waitpid(pid, &st, 0);
	return WIFEXITED(st) ? WEXITSTATUS(st) : 99;
}

static int
child_takes_rest(void)
{
	/* 600M of 1G are the parent's: 600M more would pass, 400M fits */
	if (share_reserve(0, 600 * M, 1024 * M) != -1)
		return 1;
	if (share_reserve(0, 400 * M, 1024 * M) != 0)
		return 2;
	return 0;	/* ends holding 400M */
}

static void
test_across_processes(void **state)
{
	(void)state;
	assert_int_equal(share_open(path), 0);
	assert_true(share_active());
	assert_int_equal(share_reserve(0, 600 * M, 1024 * M), 0);
	assert_int_equal(share_total(0), 600 * M);
	assert_int_equal(share_reserve(1, 1024 * M, 1024 * M), 0);	/* each device its own */
	share_release(1, 1024 * M);
	/* the child took 400M and ended without freeing: its share comes back */
	assert_int_equal(in_child(child_takes_rest), 0);
	assert_int_equal(share_total(0), 1000 * M);
	assert_int_equal(share_reserve(0, 300 * M, 1024 * M), 0);	/* after taking it back */
	assert_int_equal(share_total(0), 900 * M);
	/* a release never takes more than this process holds */
	share_release(0, 5000 * M);
	assert_int_equal(share_total(0), 0);
	assert_int_equal(share_reserve(0, UINT64_MAX, 1024 * M), -1);	/* no overflow */
	/* the most held at once, per device, for the SPANK plugin's record */
	{
		uint64_t peaks[SHARE_DEVS];

		assert_int_equal(share_peaks(path, peaks), 0);
		assert_int_equal(peaks[0], 1000 * M);	/* this process's 600M + the child's 400M */
		assert_int_equal(peaks[1], 1024 * M);
		assert_int_equal(peaks[2], 0);
		assert_int_equal(share_peaks("/dev/null", peaks), -1);
	}
}

static int
fake_gone(pid_t pid, int64_t start)
{
	(void)pid;
	(void)start;
	return 1;	/* every other process has ended (its pid went to another) */
}

static int
child_holds(void)
{
	return share_reserve(0, 700 * M, 1024 * M) == 0 ? 0 : 1;
}

static void
test_reused_pid(void **state)
{
	int (*real)(pid_t, int64_t) = share_gone;
	int st;
	pid_t pid;

	(void)state;
	assert_int_equal(share_open(path), 0);
	/* a child holds 700M and stays alive: not taken back */
	if ((pid = fork()) == 0) {
		share_child();
		if (child_holds() != 0)
			_exit(1);
		pause();
		_exit(0);
	}
	while (share_total(0) < 700 * M)
		usleep(1000);
	assert_int_equal(share_reserve(0, 400 * M, 1024 * M), -1);
	/* the same pid with another start time is another process: taken back */
	share_gone = fake_gone;
	assert_int_equal(share_reserve(0, 400 * M, 1024 * M), 0);
	share_gone = real;
	assert_int_equal(share_total(0), 400 * M);
	share_release(0, 400 * M);
	kill(pid, SIGKILL);
	waitpid(pid, &st, 0);
}

static void
test_not_the_jobs(void **state)
{
	char other[] = "/tmp/nvq-share-test-XXXXXX";
	int fd = mkstemp(other);

	(void)state;
	assert_true(fd >= 0);
	assert_int_equal(ftruncate(fd, sizeof(struct share_map)), 0);	/* no magic */
	close(fd);
	assert_int_equal(share_open(other), -1);
	assert_int_equal(share_open("/nonexistent/nvq-share"), -1);
	assert_int_equal(share_open(NULL), -1);
	assert_false(share_active());
	/* without an account, nothing is refused or counted here */
	assert_int_equal(share_reserve(0, 5000 * M, 1024 * M), 0);
	unlink(other);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_across_processes, setup, teardown),
		cmocka_unit_test_setup_teardown(test_reused_pid, setup, teardown),
		cmocka_unit_test(test_not_the_jobs),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
