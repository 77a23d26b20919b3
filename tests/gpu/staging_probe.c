/*
 * staging_probe.c: what a suspend's host staging costs, step by step, for
 * the kinds of memory a pool kept between switches could be (issue 14).
 *
 *   staging_probe GIB
 *
 * For each kind: getting the memory (and faulting it in), page-locking it
 * (cuMemHostRegister in 1 GiB pieces, from 8 threads), copying GIB of
 * device memory into it and back, unlocking and freeing it; every word is
 * checked after the round trip.  Kinds:
 *   anon     mmap + MADV_HUGEPAGE, touched by 8 threads (the hook today)
 *   memfd    memfd_create + fallocate by 8 threads (what nvqd could hold
 *            ahead of a switch and hand over), then mmap MAP_SHARED
 *   relock   the memfd's pages again, mapped by a second mmap: the cost of
 *            page-locking memory another process already faulted in
 * Built on the GPU machine:
 *   gcc -O2 -I/usr/local/cuda/include staging_probe.c -o probe \
 *       -L/usr/local/cuda/lib64/stubs -lcuda -lpthread
 */
#define _GNU_SOURCE
#include <cuda.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

#include "probe.h"

#define GIB	(1ull << 30)
#define THREADS	8

#define CK(x) do { CUresult r_ = (x); if (r_ != CUDA_SUCCESS) { const char *s_ = "?"; \
	cuGetErrorString(r_, &s_); fprintf(stderr, "%s: %d %s\n", #x, r_, s_); exit(1); } } while (0)

static CUcontext ctx;

struct work {
	char	*p;
	int	fd;
	size_t	pieces, *next;
	int	op;	/* 0 touch, 1 fallocate, 2 register, 3 unregister */
};

static void *
worker(void *arg)
{
	struct work *w = arg;
	size_t c, i;

	cuCtxSetCurrent(ctx);
	while ((c = __atomic_fetch_add(w->next, 1, __ATOMIC_RELAXED)) < w->pieces) {
		switch (w->op) {
		case 0:
			for (i = 0; i < GIB; i += 4096)
				w->p[c * GIB + i] = 0;
			break;
		case 1:
			if (fallocate(w->fd, 0, (off_t)(c * GIB), (off_t)GIB) == -1)
				perror("fallocate");
			break;
		case 2:
			CK(cuMemHostRegister(w->p + c * GIB, GIB, CU_MEMHOSTREGISTER_PORTABLE));
			break;
		case 3:
			CK(cuMemHostUnregister(w->p + c * GIB));
			break;
		}
	}
	return NULL;
}

static double
all(int op, char *p, int fd, size_t pieces)
{
	pthread_t t[THREADS];
	struct work w[THREADS];
	size_t next = 0;
	double t0 = now();
	int i;

	for (i = 0; i < THREADS; i++) {
		w[i] = (struct work){ p, fd, pieces, &next, op };
		pthread_create(&t[i], NULL, worker, &w[i]);
	}
	for (i = 0; i < THREADS; i++)
		pthread_join(t[i], NULL);
	return now() - t0;
}

static void
fill(CUdeviceptr d, size_t n)
{
	unsigned *h = malloc(64 << 20);
	size_t off, i;

	for (off = 0; off < n; off += 64 << 20) {
		for (i = 0; i < (64u << 20) / 4; i++)
			h[i] = (unsigned)((off / 4 + i) * 2654435761u);
		CK(cuMemcpyHtoD(d + off, h, 64 << 20));
	}
	free(h);
}

static long
check(CUdeviceptr d, size_t n)
{
	unsigned *h = malloc(64 << 20);
	size_t off, i;
	long bad = 0;

	for (off = 0; off < n; off += 64 << 20) {
		CK(cuMemcpyDtoH(h, d + off, 64 << 20));
		for (i = 0; i < (64u << 20) / 4; i++)
			bad += h[i] != (unsigned)((off / 4 + i) * 2654435761u);
	}
	free(h);
	return bad;
}

static void
round_trip(const char *kind, char *p, double get, CUdeviceptr d, size_t n, size_t pieces, int fd)
{
	double reg, out, in, unreg, t;
	size_t c;

	reg = all(2, p, fd, pieces);
	/* a copy never crosses a registered piece's edge */
	t = now();
	for (c = 0; c < pieces; c++)
		CK(cuMemcpyDtoH(p + c * GIB, d + c * GIB, GIB));
	out = now() - t;
	CK(cuMemsetD8(d, 0, n));
	CK(cuCtxSynchronize());
	t = now();
	for (c = 0; c < pieces; c++)
		CK(cuMemcpyHtoD(d + c * GIB, p + c * GIB, GIB));
	in = now() - t;
	unreg = all(3, p, fd, pieces);
	printf("%-7s get+fault %.2f s, page-lock %.2f s, copy out %.2f s (%.1f GB/s), "
	    "copy in %.2f s (%.1f GB/s), unlock %.2f s; bad words %ld\n", kind, get, reg, out,
	    n / out / 1e9, in, n / in / 1e9, unreg, check(d, n));
	fflush(stdout);
}

int
main(int argc, char **argv)
{
	size_t gib = argc > 1 ? strtoull(argv[1], NULL, 10) : 30, n = gib * GIB;
	CUdevice dev;
	CUdeviceptr d;
	double t;
	char *p, *q;
	int fd;

	CK(cuInit(0));
	CK(cuDeviceGet(&dev, 0));
	CK(cuDevicePrimaryCtxRetain(&ctx, dev));
	CK(cuCtxSetCurrent(ctx));
	CK(cuMemAlloc(&d, n));
	fill(d, n);

	t = now();
	p = mmap(NULL, n, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	madvise(p, n, MADV_HUGEPAGE);
	all(0, p, -1, gib);
	round_trip("anon", p, now() - t, d, n, gib, -1);
	t = now();
	munmap(p, n);
	printf("anon    free %.2f s\n", now() - t);

	t = now();
	fd = memfd_create("nvq-staging", MFD_CLOEXEC);
	if (fd == -1 || ftruncate(fd, (off_t)n) == -1) {
		perror("memfd");
		return 1;
	}
	all(1, NULL, fd, gib);
	printf("memfd   fallocate (what nvqd would do ahead) %.2f s\n", now() - t);
	t = now();
	p = mmap(NULL, n, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	round_trip("memfd", p, now() - t, d, n, gib, fd);
	t = now();
	q = mmap(NULL, n, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_POPULATE, fd, 0);
	printf("relock  mmap MAP_POPULATE %.2f s\n", now() - t);
	munmap(p, n);
	round_trip("relock", q, 0, d, n, gib, fd);
	t = now();
	munmap(q, n);
	close(fd);
	printf("memfd   free %.2f s\n", now() - t);
	CK(cuMemFree(d));
	return 0;
}
