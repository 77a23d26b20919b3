/*
 * test_portable.c: nvq-shim's portable.c: the lookup's errors as glibc's
 * execvp gives them, a script without "#!" run by /bin/sh (in a child, and
 * the shell's arguments on their own), shim_closefrom, and errors in
 * glibc's words.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>
#include <cmocka.h>

#include "portable.h"

static char dir[64];

static void
put(const char *name, const char *text, mode_t mode)
{
	char p[128];
	FILE *f;

	snprintf(p, sizeof(p), "%s/%s", dir, name);
	assert_non_null(f = fopen(p, "w"));
	fputs(text, f);
	fclose(f);
	assert_int_equal(chmod(p, mode), 0);
}

static int
setup(void **state)
{
	(void)state;
	snprintf(dir, sizeof(dir), "/tmp/nvq-test-portable.XXXXXX");
	if (mkdtemp(dir) == NULL)
		return -1;
	put("script", "echo \"$0 $# $1\" > \"$OUT\"\n", 0755);
	put("ro", "exit 0\n", 0644);
	return 0;
}

/* The folder and the three files the tests make in it. */
static int
teardown(void **state)
{
	static const char *const names[] = { "script", "ro", "out" };
	char p[128];
	size_t i;

	(void)state;
	for (i = 0; i < sizeof(names) / sizeof(names[0]); i++) {
		snprintf(p, sizeof(p), "%s/%s", dir, names[i]);
		unlink(p);
	}
	return rmdir(dir);
}

static void
test_errors(void **state)
{
	char path[128], *argv[] = { "x", NULL };
	char *none[] = { NULL }, *env[] = { path, NULL };

	(void)state;
	errno = 0;
	assert_int_equal(shim_execvpe("", argv, none), -1);
	assert_int_equal(errno, ENOENT);
	snprintf(path, sizeof(path), "PATH=%s:/nonexistent", dir);
	errno = 0;
	assert_int_equal(shim_execvpe("nvq-no-such-command", argv, env), -1);
	assert_int_equal(errno, ENOENT);
	/* found only where it may not run: EACCES, not the later ENOENT */
	errno = 0;
	assert_int_equal(shim_execvpe("ro", argv, env), -1);
	assert_int_equal(errno, EACCES);
	errno = 0;
	assert_int_equal(shim_execvpe("/nonexistent/x", argv, env), -1);
	assert_int_equal(errno, ENOENT);
}

/*
 * Runs file with argv (NULL: "name0 one") in a child with PATH=path; its
 * exit status, and the line the script wrote in *line ("" if none).
 */
static int
run(const char *file, char **argv, const char *path, char *line, size_t size)
{
	char out[128], pv[160], ov[160];
	char *dflt[] = { "name0", "one", NULL }, *env[] = { pv, ov, NULL };
	FILE *f;
	pid_t pid;
	int st;

	snprintf(out, sizeof(out), "%s/out", dir);
	unlink(out);
	snprintf(pv, sizeof(pv), "PATH=%s", path);
	snprintf(ov, sizeof(ov), "OUT=%s", out);
	if ((pid = fork()) == 0) {
		shim_execvpe(file, argv != NULL ? argv : dflt, env);
		_exit(errno == ENOENT ? 127 : 126);
	}
	assert_int_equal(waitpid(pid, &st, 0), pid);
	*line = '\0';
	if ((f = fopen(out, "r")) != NULL) {
		if (fgets(line, (int)size, f) == NULL)
			*line = '\0';
		fclose(f);
	}
	return WIFEXITED(st) ? WEXITSTATUS(st) : -1;
}

static void
test_script(void **state)
{
	char line[256], want[256], abs[128], p[128];

	(void)state;
	/* by name: /bin/sh gets the path found, then the arguments after argv[0] */
	snprintf(want, sizeof(want), "%s/script 1 one\n", dir);
	assert_int_equal(run("script", NULL, "/nonexistent:/tmp", line, sizeof(line)), 127);
	snprintf(p, sizeof(p), "/nonexistent:%s", dir);
	assert_int_equal(run("script", NULL, p, line, sizeof(line)), 0);
	assert_string_equal(line, want);
	/* by its path, PATH unused */
	snprintf(abs, sizeof(abs), "%s/script", dir);
	assert_int_equal(run(abs, NULL, "/nonexistent", line, sizeof(line)), 0);
	assert_string_equal(line, want);
	/* an empty entry is the working folder */
	assert_int_equal(chdir(dir), 0);
	assert_int_equal(run("script", NULL, "/nonexistent:", line, sizeof(line)), 0);
	snprintf(want, sizeof(want), "script 1 one\n");
	assert_string_equal(line, want);
	assert_int_equal(chdir("/"), 0);
}

/* A script run with no arguments at all, not even argv[0]: /bin/sh gets the file and nothing after. */
static void
test_script_no_argv(void **state)
{
	char abs[128], line[256], want[256], *none[] = { NULL };

	(void)state;
	snprintf(abs, sizeof(abs), "%s/script", dir);
	assert_int_equal(run(abs, none, "/nonexistent", line, sizeof(line)), 0);
	snprintf(want, sizeof(want), "%s 0 \n", abs);
	assert_string_equal(line, want);
}

/* shim_script_argv on an array of stale pointers: every slot it owns is set, the NULL too. */
static void
test_script_argv(void **state)
{
	char *sh[8], *none[] = { NULL }, *two[] = { "name0", "one", NULL };
	char stale[] = "stale";
	size_t i;

	(void)state;
	for (i = 0; i < 8; i++)
		sh[i] = stale;
	assert_int_equal(shim_script_argv(sh, "/x/s", none, 0), 2);
	assert_string_equal(sh[0], "/bin/sh");
	assert_string_equal(sh[1], "/x/s");
	assert_null(sh[2]);
	for (i = 0; i < 8; i++)
		sh[i] = stale;
	assert_int_equal(shim_script_argv(sh, "/x/s", two, 2), 3);
	assert_string_equal(sh[2], "one");
	assert_null(sh[3]);
}

static void
test_closefrom(void **state)
{
	int fd[4], i;

	(void)state;
	for (i = 0; i < 4; i++)
		assert_true((fd[i] = open("/dev/null", O_RDONLY)) >= 0);
	shim_closefrom(fd[2]);
	assert_true(fcntl(fd[0], F_GETFD) >= 0);
	assert_true(fcntl(fd[1], F_GETFD) >= 0);
	assert_int_equal(fcntl(fd[2], F_GETFD), -1);
	assert_int_equal(fcntl(fd[3], F_GETFD), -1);
	close(fd[0]);
	close(fd[1]);
}

static void
test_strerror(void **state)
{
	(void)state;
	assert_string_equal(shim_strerror(ELOOP), "Too many levels of symbolic links");
	assert_string_equal(shim_strerror(ENOMEM), "Cannot allocate memory");
	assert_string_equal(shim_strerror(EMFILE), "Too many open files");
	assert_string_equal(shim_strerror(EACCES), "Permission denied");
	assert_string_equal(shim_strerror(ENOENT), "No such file or directory");
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_errors),
		cmocka_unit_test(test_script),
		cmocka_unit_test(test_script_no_argv),
		cmocka_unit_test(test_script_argv),
		cmocka_unit_test(test_closefrom),
		cmocka_unit_test(test_strerror),
	};

	return cmocka_run_group_tests(tests, setup, teardown);
}
