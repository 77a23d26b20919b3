/*
 * fake_job.c: a CUDA "job" for the system tests, linked with the fake
 * libcuda and run under nvqd with the hook preloaded.  It reaches the
 * driver the way frameworks do (cuGetProcAddress_v2), so every call goes
 * through the hook.
 *
 *   fake_job launch SECONDS FILE [BYTES]
 *	allocates BYTES (64M), then launches kernels for SECONDS, writing
 *	the count so far to FILE every 20 ms;
 *   fake_job alloc BYTES SECONDS
 *	allocates BYTES, prints "alloc ok" or "alloc oom", holds it SECONDS;
 *   fake_job fork SECONDS
 *	allocates and launches, forks a child that does the same with its
 *	own budget, both hold on SECONDS, and prints what each got.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "cuda_decls.h"

typedef CUresult (*gpa2_fn)(const char *, void **, int, cuuint64_t,
    CUdriverProcAddressQueryResult *);
typedef CUresult (*alloc_fn)(CUdeviceptr *, size_t);
typedef CUresult (*launch_fn)(void *, unsigned, unsigned, unsigned, unsigned, unsigned,
    unsigned, unsigned, CUstream, void **, void **);

CUresult cuGetProcAddress_v2(const char *, void **, int, cuuint64_t,
    CUdriverProcAddressQueryResult *);

static void *
resolve(const char *name)
{
	CUdriverProcAddressQueryResult st;
	void *p = NULL;

	if (cuGetProcAddress_v2(name, &p, 12000, 0, &st) != CUDA_SUCCESS || p == NULL) {
		fprintf(stderr, "fake_job: cannot resolve %s\n", name);
		exit(3);
	}
	return p;
}

static double
now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static void
put_count(const char *file, long n)
{
	char tmp[4096];
	FILE *fp;

	snprintf(tmp, sizeof(tmp), "%s.tmp", file);
	if ((fp = fopen(tmp, "w")) == NULL)
		return;
	fprintf(fp, "%ld\n", n);
	fclose(fp);
	rename(tmp, file);
}

static int
do_alloc(size_t bytes)
{
	CUdeviceptr p;

	return ((alloc_fn)resolve("cuMemAlloc"))(&p, bytes) == CUDA_SUCCESS ? 0 : -1;
}

int
main(int argc, char **argv)
{
	launch_fn launch;
	double end, last = 0;
	long n = 0;
	pid_t pid;
	int st;

	if (argc >= 4 && strcmp(argv[1], "launch") == 0) {
		if (do_alloc(argc > 4 ? strtoull(argv[4], NULL, 10) : 64 << 20) == -1) {
			printf("alloc oom\n");
			return 1;
		}
		launch = (launch_fn)resolve("cuLaunchKernel");
		end = now() + atof(argv[2]);
		while (now() < end) {
			launch(NULL, 1, 1, 1, 1, 1, 1, 0, NULL, NULL, NULL);
			n++;
			if (now() - last >= 0.02) {
				put_count(argv[3], n);
				last = now();
			}
			usleep(500);
		}
		put_count(argv[3], n);
		printf("launched %ld\n", n);
		return 0;
	}
	if (argc == 4 && strcmp(argv[1], "alloc") == 0) {
		st = do_alloc(strtoull(argv[2], NULL, 10));
		printf("alloc %s\n", st == 0 ? "ok" : "oom");
		fflush(stdout);
		sleep((unsigned)atoi(argv[3]));
		return st == 0 ? 0 : 1;
	}
	if (argc == 3 && strcmp(argv[1], "fork") == 0) {
		st = do_alloc(1 << 20);
		launch = (launch_fn)resolve("cuLaunchKernel");
		launch(NULL, 1, 1, 1, 1, 1, 1, 0, NULL, NULL, NULL);
		printf("parent alloc %s\n", st == 0 ? "ok" : "oom");
		fflush(stdout);
		if ((pid = fork()) == 0) {
			st = do_alloc(2 << 20);
			launch(NULL, 1, 1, 1, 1, 1, 1, 0, NULL, NULL, NULL);
			printf("child alloc %s\n", st == 0 ? "ok" : "oom");
			fflush(stdout);
			sleep((unsigned)atoi(argv[2]));
			_exit(0);
		}
		sleep((unsigned)atoi(argv[2]));
		waitpid(pid, &st, 0);
		printf("child exited %d\n", WIFEXITED(st) ? WEXITSTATUS(st) : -1);
		return 0;
	}
	fprintf(stderr, "usage: fake_job launch SECONDS FILE [BYTES] | alloc BYTES SECONDS | "
	    "fork SECONDS\n");
	return 2;
}
