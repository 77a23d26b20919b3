/*
 * lcbe_cost.c: what lc/be adds to one launch (issue 43), against whatever
 * libcuda.so.1 is found (the fake one in bench/lcbe_cost.sh).
 *
 * It allocates once (so that the hook's link starts and takes the lc/be
 * page when run as an nvqd job), then launches through the cuLaunchKernel
 * the dynamic linker gives (the hook's when preloaded) in ROUNDS batches of
 * BATCH launches and prints the median time per launch in ns.
 * Build: cc -O2 -iquote bench -o lcbe_cost bench/lcbe_cost.c -ldl
 * Usage: lcbe_cost [ROUNDS] [BATCH]
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include "clock.h"

typedef int (*launch_fn)(void *, unsigned, unsigned, unsigned, unsigned, unsigned,
    unsigned, unsigned, void *, void **, void **);
typedef int (*alloc_fn)(unsigned long long *, size_t);

int
main(int argc, char **argv)
{
	int rounds = argc > 1 ? atoi(argv[1]) : 31, batch = argc > 2 ? atoi(argv[2]) : 20000;
	double *t, t0;
	unsigned long long p;
	launch_fn launch;
	alloc_fn alloc;
	int r, k;

	if (dlopen("libcuda.so.1", RTLD_NOW | RTLD_GLOBAL) == NULL ||
	    (launch = (launch_fn)dlsym(RTLD_DEFAULT, "cuLaunchKernel")) == NULL ||
	    (alloc = (alloc_fn)dlsym(RTLD_DEFAULT, "cuMemAlloc_v2")) == NULL) {
		fprintf(stderr, "lcbe_cost: no libcuda.so.1: %s\n", dlerror());
		return 1;
	}
	if (rounds < 1 || batch < 1 || (t = calloc((size_t)rounds, sizeof(*t))) == NULL)
		return 2;
	alloc(&p, 1 << 20);
	usleep(200000);	/* the link's first words, the page attached */
	for (r = 0; r < rounds; r++) {
		t0 = bench_now();
		for (k = 0; k < batch; k++)
			launch(NULL, 1, 1, 1, 1, 1, 1, 0, NULL, NULL, NULL);
		t[r] = (bench_now() - t0) / batch * 1e9;
	}
	qsort(t, (size_t)rounds, sizeof(*t), bench_cmp);
	printf("%.1f\n", t[rounds / 2]);
	return 0;
}
