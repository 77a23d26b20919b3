/*
 * offload_probe.c: how fast can a process move its own device memory to
 * host memory and back while keeping the device addresses (VMM API)?
 * Measures each step of the hook's offload path with different staging
 * memory, on the real driver, so that the hook's choices rest on figures.
 *
 *   offload_probe GIB CHUNK_MIB STAGING ROUNDS [pause]
 *
 * STAGING: hostalloc (cuMemHostAlloc at each offload, freed after the
 * restore), register (mmap + MADV_HUGEPAGE, touched by 8 threads, then
 * cuMemHostRegister), keep (cuMemHostAlloc once, kept for every round).
 * With pause, after each offload it prints "offloaded PID" and waits for a
 * line on stdin (a script runs the driver's checkpoint on it meanwhile).
 * Every word is checked after each round trip.  Built on the GPU machine:
 *   gcc -O2 -I/usr/local/cuda/include offload_probe.c -o probe \
 *       -L/usr/local/cuda/lib64/stubs -lcuda -lpthread
 */
#include <cuda.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

#include "probe.h"

#define BLOCK	(2ull << 20)

#define CK(x) do { CUresult r_ = (x); if (r_ != CUDA_SUCCESS) { const char *s_ = "?"; \
	cuGetErrorString(r_, &s_); fprintf(stderr, "%s: %d %s\n", #x, r_, s_); exit(1); } } while (0)

struct chunk { CUdeviceptr va; CUmemGenericAllocationHandle h; void *host; };

static unsigned
pattern(size_t chunk, size_t block)
{
	return (unsigned)(chunk * 2654435761u + block * 40503u + 1u);
}

struct touch { char *p; size_t n; };

static void *
toucher(void *arg)
{
	struct touch *t = arg;
	size_t i;

	for (i = 0; i < t->n; i += 4096)
		t->p[i] = 0;
	return NULL;
}

static void *
staging(const char *how, size_t n)
{
	void *p;
	pthread_t th[8];
	struct touch t[8];
	int i;

	if (strcmp(how, "register") != 0) {
		CK(cuMemHostAlloc(&p, n, 0));
		return p;
	}
	p = mmap(NULL, n, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (p == MAP_FAILED) { perror("mmap"); exit(1); }
	madvise(p, n, MADV_HUGEPAGE);
	for (i = 0; i < 8; i++) {
		t[i].p = (char *)p + n / 8 * i;
		t[i].n = n / 8;
		pthread_create(&th[i], NULL, toucher, &t[i]);
	}
	for (i = 0; i < 8; i++)
		pthread_join(th[i], NULL);
	CK(cuMemHostRegister(p, n, 0));
	return p;
}

static void
unstage(const char *how, void *p, size_t n)
{
	if (strcmp(how, "register") == 0) {
		CK(cuMemHostUnregister(p));
		munmap(p, n);
	} else
		CK(cuMemFreeHost(p));
}

int
main(int argc, char **argv)
{
	size_t gib, cmib, n, i, b, nch, w, bad = 0;
	const char *how;
	int rounds, pause_, r;
	CUdevice dev;
	CUcontext ctx;
	CUmemAllocationProp prop;
	CUmemAccessDesc acc;
	struct chunk *c;
	size_t fr, tot, gran;
	double t0, t1, t2, t3;
	unsigned *check;
	char line[64];

	if (argc < 5) {
		fprintf(stderr, "usage: offload_probe GIB CHUNK_MIB STAGING ROUNDS [pause]\n");
		return 2;
	}
	gib = strtoull(argv[1], NULL, 10);
	cmib = strtoull(argv[2], NULL, 10);
	how = argv[3];
	rounds = atoi(argv[4]);
	pause_ = argc > 5 && strcmp(argv[5], "pause") == 0;
	n = cmib << 20;
	nch = (gib << 30) / n;
	c = calloc(nch, sizeof(*c));
	CK(cuInit(0));
	CK(cuDeviceGet(&dev, 0));
	CK(cuDevicePrimaryCtxRetain(&ctx, dev));
	CK(cuCtxSetCurrent(ctx));
	memset(&prop, 0, sizeof(prop));
	prop.type = CU_MEM_ALLOCATION_TYPE_PINNED;
	prop.location.type = CU_MEM_LOCATION_TYPE_DEVICE;
	prop.location.id = dev;
	CK(cuMemGetAllocationGranularity(&gran, &prop, CU_MEM_ALLOC_GRANULARITY_MINIMUM));
	acc.location = prop.location;
	acc.flags = CU_MEM_ACCESS_FLAGS_PROT_READWRITE;
	CK(cuMemHostAlloc((void **)&check, n, 0));

	t0 = now();
	for (i = 0; i < nch; i++) {
		CK(cuMemAddressReserve(&c[i].va, n, 0, 0, 0));
		CK(cuMemCreate(&c[i].h, n, &prop, 0));
		CK(cuMemMap(c[i].va, n, 0, c[i].h, 0));
		CK(cuMemSetAccess(c[i].va, n, &acc, 1));
		for (b = 0; b < n / BLOCK; b++)
			CK(cuMemsetD32(c[i].va + b * BLOCK, pattern(i, b), BLOCK / 4));
	}
	CK(cuCtxSynchronize());
	printf("granularity %zu KiB; %zu chunks of %zu MiB = %zu GiB, staging %s\n",
	    gran >> 10, nch, cmib, gib, how);
	printf("allocate and fill: %.2f s\n", now() - t0);

	for (r = 1; r <= rounds; r++) {
		/* out: staging, copy, unmap */
		t0 = now();
		for (i = 0; i < nch; i++)
			if (c[i].host == NULL)
				c[i].host = staging(how, n);
		t1 = now();
		for (i = 0; i < nch; i++)
			CK(cuMemcpyDtoH(c[i].host, c[i].va, n));
		t2 = now();
		for (i = 0; i < nch; i++) {
			CK(cuMemUnmap(c[i].va, n));
			CK(cuMemRelease(c[i].h));
		}
		t3 = now();
		CK(cuMemGetInfo(&fr, &tot));
		printf("round %d out: staging %.2f s, copy %.2f s (%.1f GB/s), unmap %.2f s, "
		    "total %.2f s; GPU free %zu MiB of %zu\n", r, t1 - t0, t2 - t1,
		    (double)(nch * n) / (t2 - t1) / 1e9, t3 - t2, t3 - t0, fr >> 20, tot >> 20);
		fflush(stdout);
		if (pause_) {
			printf("offloaded %d\n", (int)getpid());
			fflush(stdout);
			if (fgets(line, sizeof(line), stdin) == NULL)
				return 1;
		}
		/* back: create and map, copy, free the staging */
		t0 = now();
		for (i = 0; i < nch; i++) {
			CK(cuMemCreate(&c[i].h, n, &prop, 0));
			CK(cuMemMap(c[i].va, n, 0, c[i].h, 0));
			CK(cuMemSetAccess(c[i].va, n, &acc, 1));
		}
		t1 = now();
		for (i = 0; i < nch; i++)
			CK(cuMemcpyHtoD(c[i].va, c[i].host, n));
		t2 = now();
		if (strcmp(how, "keep") != 0)
			for (i = 0; i < nch; i++) {
				unstage(how, c[i].host, n);
				c[i].host = NULL;
			}
		t3 = now();
		printf("round %d back: map %.2f s, copy %.2f s (%.1f GB/s), free staging %.2f s, "
		    "total %.2f s\n", r, t1 - t0, t2 - t1, (double)(nch * n) / (t2 - t1) / 1e9,
		    t3 - t2, t3 - t0);
		/* every word */
		for (i = 0; i < nch; i++) {
			CK(cuMemcpyDtoH(check, c[i].va, n));
			for (w = 0; w < n / 4; w++)
				if (check[w] != pattern(i, w * 4 / BLOCK))
					bad++;
		}
		printf("round %d check: %zu bad words\n", r, bad);
		fflush(stdout);
	}
	return bad != 0;
}
