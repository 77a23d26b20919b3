/*
 * launch_ab.c: the cost of the hook on one kernel launch, measured A/B in
 * one process so that the machine's noise falls on both alike.
 *
 * It opens libnvq-hook.so (path in argv[1]) with dlopen and takes its
 * cuLaunchKernel wrapper, and takes the real cuLaunchKernel from
 * libcuda.so.1; then launches an empty kernel (PTX, compiled by the
 * driver) in alternating batches through each, synchronizing every 128
 * launches so that the queue never fills, and prints the median time per
 * launch of each and their difference.  Run as an nvqd job, the wrapper's
 * gate is the real one: linked to nvqd, holding the lock.
 * Build: cc -O2 -o launch_ab bench/launch_ab.c -ldl
 * Usage: launch_ab HOOK.so [ROUNDS] [BATCH]
 */
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

typedef int (*launch_fn)(void *, unsigned, unsigned, unsigned, unsigned, unsigned,
    unsigned, unsigned, void *, void **, void **);

static const char ptx[] =
    ".version 7.0\n.target sm_50\n.address_size 64\n"
    ".visible .entry noop()\n{\n\tret;\n}\n";

static double
now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static int
cmp(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return (x > y) - (x < y);
}

static void *
must(void *h, const char *name)
{
	void *p = dlsym(h, name);

	if (p == NULL) {
		fprintf(stderr, "launch_ab: %s: %s\n", name, dlerror());
		exit(1);
	}
	return p;
}

int
main(int argc, char **argv)
{
	void *cuda, *hook, *ctx, *mod, *fn;
	int (*init)(unsigned), (*retain)(void **, int), (*setcur)(void *);
	int (*load)(void **, const void *), (*getfn)(void **, void *, const char *);
	int (*sync)(void);
	launch_fn real, wrapped, use;
	int rounds = argc > 2 ? atoi(argv[2]) : 21, batch = argc > 3 ? atoi(argv[3]) : 20000;
	double *ta, *tb, t;
	int r, i, k, rc;

	if (argc < 2) {
		fprintf(stderr, "usage: launch_ab HOOK.so [ROUNDS] [BATCH]\n");
		return 2;
	}
	if ((cuda = dlopen("libcuda.so.1", RTLD_NOW | RTLD_GLOBAL)) == NULL ||
	    (hook = dlopen(argv[1], RTLD_NOW | RTLD_LOCAL)) == NULL) {
		fprintf(stderr, "launch_ab: %s\n", dlerror());
		return 1;
	}
	*(void **)&init = must(cuda, "cuInit");
	*(void **)&retain = must(cuda, "cuDevicePrimaryCtxRetain");
	*(void **)&setcur = must(cuda, "cuCtxSetCurrent");
	*(void **)&load = must(cuda, "cuModuleLoadData");
	*(void **)&getfn = must(cuda, "cuModuleGetFunction");
	*(void **)&sync = must(cuda, "cuCtxSynchronize");
	*(void **)&real = must(cuda, "cuLaunchKernel");
	*(void **)&wrapped = must(hook, "cuLaunchKernel");
	if (init(0) != 0 || retain(&ctx, 0) != 0 || setcur(ctx) != 0 ||
	    (rc = load(&mod, ptx)) != 0 || getfn(&fn, mod, "noop") != 0) {
		fprintf(stderr, "launch_ab: cannot set up the GPU\n");
		return 1;
	}
	ta = calloc((size_t)rounds, sizeof(double));
	tb = calloc((size_t)rounds, sizeof(double));
	for (r = -1; r < rounds; r++) {		/* round -1 warms both up */
		for (k = 0; k < 2; k++) {
			/* alternate which goes first */
			use = (k == (r & 1)) ? real : wrapped;
			sync();
			t = now();
			for (i = 0; i < batch; i++) {
				if (use(fn, 1, 1, 1, 1, 1, 1, 0, NULL, NULL, NULL) != 0) {
					fprintf(stderr, "launch_ab: launch failed\n");
					return 1;
				}
				if ((i & 127) == 127)
					sync();
			}
			sync();
			t = (now() - t) / batch * 1e9;
			if (r >= 0)
				(use == real ? ta : tb)[r] = t;
		}
	}
	qsort(ta, (size_t)rounds, sizeof(double), cmp);
	qsort(tb, (size_t)rounds, sizeof(double), cmp);
	printf("launch_ab: %d rounds of %d launches (sync every 128)\n", rounds, batch);
	printf("median ns per launch: real %.1f, through the hook %.1f; difference %.1f ns "
	    "(%.2f%%); launches/s %.0f vs %.0f\n", ta[rounds / 2], tb[rounds / 2],
	    tb[rounds / 2] - ta[rounds / 2], (tb[rounds / 2] / ta[rounds / 2] - 1) * 100,
	    1e9 / ta[rounds / 2], 1e9 / tb[rounds / 2]);
	return 0;
}
