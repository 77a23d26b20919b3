/*
 * cgstart.c: what putting a new process into a cgroup v2 costs.  N times:
 * make a cgroup in CGDIR, start /bin/true in it and wait for it, remove the
 * cgroup; MODE 0: no cgroup (fork), 1: fork, then the child writes its pid
 * to cgroup.procs (as nvq-shim did), 2: clone3 with CLONE_INTO_CGROUP (as it
 * does now).  Prints the mean, median, 90th percentile and maximum.  Root.
 * Build: cc -O2 -o cgstart bench/cgstart.c
 * Usage: cgstart MODE N CGDIR   (CGDIR: a folder on the cgroup2 mount)
 */
#define _GNU_SOURCE
#include <fcntl.h>
#include <linux/sched.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "clock.h"

int
main(int argc, char **argv)
{
	char *av[] = { "/bin/true", NULL }, dir[4096], procs[4200];
	struct clone_args ca;
	double t0, a, *d;
	int mode, n, i, st, dfd, fd;
	pid_t pid;

	if (argc != 4 || (mode = atoi(argv[1])) < 0 || mode > 2 || (n = atoi(argv[2])) < 1) {
		fprintf(stderr, "usage: cgstart MODE N CGDIR\n");
		return 2;
	}
	if ((d = calloc((size_t)n, sizeof(*d))) == NULL)
		return 1;
	t0 = bench_now();
	for (i = 0; i < n; i++) {
		a = bench_now();
		snprintf(dir, sizeof(dir), "%s/cgstart-%d", argv[3], i);
		if (mode > 0 && mkdir(dir, 0755) == -1) {
			perror(dir);
			return 1;
		}
		if (mode == 2) {
			if ((dfd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC)) == -1) {
				perror(dir);
				return 1;
			}
			memset(&ca, 0, sizeof(ca));
			ca.flags = CLONE_INTO_CGROUP;
			ca.exit_signal = SIGCHLD;
			ca.cgroup = (uint64_t)dfd;
			if ((pid = (pid_t)syscall(SYS_clone3, &ca, sizeof(ca))) == 0) {
				execv(av[0], av);
				_exit(127);
			}
			close(dfd);
		} else if ((pid = fork()) == 0) {
			snprintf(procs, sizeof(procs), "%s/cgroup.procs", dir);
			if (mode == 1 && ((fd = open(procs, O_WRONLY)) == -1 || write(fd, "0", 1) != 1))
				_exit(126);
			execv(av[0], av);
			_exit(127);
		}
		if (pid == -1 || waitpid(pid, &st, 0) != pid || !WIFEXITED(st) ||
		    WEXITSTATUS(st) != 0) {
			fprintf(stderr, "cgstart: the child failed\n");
			return 1;
		}
		if (mode > 0)
			rmdir(dir);
		d[i] = bench_now() - a;
	}
	a = bench_now() - t0;
	qsort(d, (size_t)n, sizeof(*d), bench_cmp);
	printf("mode %d: mean %.3f ms, median %.3f, p90 %.3f, max %.3f\n", mode, a / n * 1e3,
	    d[n / 2] * 1e3, d[n * 9 / 10] * 1e3, d[n - 1] * 1e3);
	return 0;
}
