/*
 * test_xreg.c: the job's table of exported memory (hook/xreg.c): a row
 * found by the open file itself (a descriptor passed with SCM_RIGHTS is
 * the same open file, as a dup is) and not by another open of the same
 * inode; where the memory is; a row dropped or taken again, or of a
 * process that ended, names nothing; a file that is not the caller's is
 * refused.
 */
#include <fcntl.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>
#include <cmocka.h>

#include "share.h"
#include "xreg.h"

#ifndef SYS_kcmp
#define SYS_kcmp	312
#endif

static char base[64], table[80], mem[64];

static int
setup(void **state)
{
	int fd;

	(void)state;
	snprintf(base, sizeof(base), "/tmp/nvq-xreg-test-XXXXXX");
	if ((fd = mkstemp(base)) == -1)
		return -1;
	close(fd);
	snprintf(table, sizeof(table), "%s%s", base, SHARE_XREG_SUFFIX);
	snprintf(mem, sizeof(mem), "/tmp/nvq-xreg-mem-XXXXXX");	/* stands for the driver's file */
	if ((fd = mkstemp(mem)) == -1)
		return -1;
	close(fd);
	return xreg_open(base);
}

static int
teardown(void **state)
{
	(void)state;
	unlink(base);
	unlink(table);
	unlink(mem);
	return 0;
}

/* Whether this kernel tells open files apart (kcmp); without it only the inode is. */
static int
kcmp_works(void)
{
	int a = open(mem, O_RDONLY), b = dup(a);
	long r = syscall(SYS_kcmp, getpid(), getpid(), 0, a, b);

	close(a);
	close(b);
	return r == 0;
}

static void
test_found_by_open_file(void **state)
{
	struct xreg_row r;
	uint32_t gen, g2;
	int fd = open(mem, O_RDWR), keep = dup(fd), passed = dup(fd), other, row;

	(void)state;
	assert_true(xreg_active());
	assert_true((row = xreg_add(keep, 12345, &gen)) >= 0);
	assert_int_equal(xreg_find(passed, &r, &g2), row);
	assert_int_equal(g2, gen);
	assert_int_equal(r.pid, getpid());
	assert_int_equal(r.fd, keep);
	assert_int_equal(r.size, 12345);
	assert_int_equal(xreg_state(row, gen), XREG_IN);
	/* the same inode opened again is another open file: not this export */
	other = open(mem, O_RDWR);
	if (kcmp_works())
		assert_int_equal(xreg_find(other, &r, &g2), -1);
	xreg_set(row, gen, XREG_OUT);
	assert_int_equal(xreg_state(row, gen), XREG_OUT);
	xreg_set(row, gen, XREG_IN);
	xreg_drop(row, gen);
	assert_int_equal(xreg_state(row, gen), 0);
	assert_int_equal(xreg_find(passed, &r, &g2), -1);
	/* taken again: the old generation names nothing, even by the same number */
	assert_int_equal(xreg_add(keep, 1, &g2), row);
	assert_true(g2 != gen);
	assert_int_equal(xreg_state(row, gen), 0);
	assert_int_equal(xreg_state(row, g2), XREG_IN);
	xreg_drop(row, g2);
	close(fd);
	close(keep);
	close(passed);
	close(other);
}

static void
test_exporter_ended(void **state)
{
	struct xreg_row r;
	uint32_t gen;
	int fd = open(mem, O_RDWR), p[2], row = -1, st;
	pid_t pid;

	(void)state;
	assert_int_equal(pipe(p), 0);
	if ((pid = fork()) == 0) {
		uint32_t g;
		int k = xreg_add(fd, 7, &g);

		(void)!write(p[1], &k, sizeof(k));
		(void)!write(p[1], &g, sizeof(g));
		_exit(0);
	}
	assert_int_equal(read(p[0], &row, sizeof(row)), sizeof(row));
	assert_int_equal(read(p[0], &gen, sizeof(gen)), sizeof(gen));
	waitpid(pid, &st, 0);
	assert_true(row >= 0);
	/* its process has ended: its row names nothing, and is taken back when needed */
	assert_int_equal(xreg_state(row, gen), 0);
	assert_int_equal(xreg_find(fd, &r, &gen), -1);
	close(p[0]);
	close(p[1]);
	close(fd);
}

static void
test_not_the_jobs(void **state)
{
	char other[] = "/tmp/nvq-xreg-other-XXXXXX", x[64];
	int fd = mkstemp(other);

	(void)state;
	assert_true(fd >= 0);
	close(fd);
	snprintf(x, sizeof(x), "%s%s", other, SHARE_XREG_SUFFIX);
	fd = open(x, O_RDWR | O_CREAT, 0600);
	assert_true(fd >= 0);
	if (geteuid() == 0) {
		/* another user's table would lie to the job: refused */
		assert_int_equal(fchown(fd, 65534, 65534), 0);
		assert_int_equal(xreg_open(other), -1);
	}
	close(fd);
	unlink(x);
	unlink(other);
	assert_int_equal(xreg_open(NULL), -1);
	assert_int_equal(xreg_open(""), -1);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_not_the_jobs),
		cmocka_unit_test_setup_teardown(test_found_by_open_file, setup, teardown),
		cmocka_unit_test_setup_teardown(test_exporter_ended, setup, teardown),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
