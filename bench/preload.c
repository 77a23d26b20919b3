/*
 * preload.c: what a preloaded library costs each process.  N times: fork,
 * exec PROG (its output to /dev/null) with an environment of PATH alone,
 * or PATH and LD_PRELOAD=LIB, and wait; prints the median and the 90th
 * percentile.  Build: cc -O2 -o preload bench/preload.c
 * Usage: preload N PROG [LIB]   (PROG: a dynamically linked program,
 * bench/stamp.c for one; LIB: build/libnvq-hook.so)
 */
#define _GNU_SOURCE
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "clock.h"

int
main(int argc, char **argv)
{
	char pre[4200], *env[3] = { "PATH=/usr/bin:/bin", NULL, NULL }, *av[2];
	double a, *d;
	int n, i, st, fd;
	pid_t pid;

	if (argc < 3 || argc > 4 || (n = atoi(argv[1])) < 1) {
		fprintf(stderr, "usage: preload N PROG [LIB]\n");
		return 2;
	}
	if (argc == 4) {
		snprintf(pre, sizeof(pre), "LD_PRELOAD=%s", argv[3]);
		env[1] = pre;
	}
	av[0] = argv[2];
	av[1] = NULL;
	if ((d = calloc((size_t)n, sizeof(*d))) == NULL)
		return 1;
	for (i = 0; i < n; i++) {
		a = bench_now();
		if ((pid = fork()) == 0) {
			if ((fd = open("/dev/null", O_WRONLY)) != -1)
				dup2(fd, 1);
			execve(av[0], av, env);
			_exit(127);
		}
		if (pid == -1 || waitpid(pid, &st, 0) != pid || !WIFEXITED(st) ||
		    WEXITSTATUS(st) != 0) {
			fprintf(stderr, "preload: %s failed\n", av[0]);
			return 1;
		}
		d[i] = bench_now() - a;
	}
	qsort(d, (size_t)n, sizeof(*d), bench_cmp);
	printf("%s %s: median %.3f ms, p90 %.3f\n", av[0], argc == 4 ? "preloaded" : "plain",
	    d[n / 2] * 1e3, d[n * 9 / 10] * 1e3);
	return 0;
}
