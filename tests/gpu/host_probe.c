/*
 * host_probe.c: what fresh host memory costs to fault in and page-lock on
 * this machine, by thread count, the first time and again (issue 40).  On
 * a fresh VM the first touch of a page is the host's too, and slow; once
 * freed, does the guest hand the same (warm) pages back?
 *
 *   host_probe STEP...    each STEP: what:GIB:THREADS, run in order
 *     touch     mmap + MADV_HUGEPAGE, each 4 KiB written, in 1 GiB pieces
 *               taken in turn by THREADS threads; kept until "free"
 *     reg       the same pieces page-locked with cuMemHostRegister alone,
 *               untouched (the driver faults them in), kept
 *     treg      touched, then page-locked, per piece (the hook's way)
 *     pop       like treg, faulted in by MADV_POPULATE_WRITE instead of writes
 *     pipe      treg by THREADS workers while this thread copies GIB of device
 *               memory into each piece as it is handed over (the hook's move
 *               out); piped: the same with pop's fault-in
 *     halloc    pieces the driver allocates page-locked (cuMemHostAlloc);
 *               hpipe: halloc's pieces copied into as pipe's are
 *     dma       copies GIB of device memory into the pieces kept (page-locked)
 *     free      unlocks and unmaps everything kept (GIB, THREADS ignored)
 * After each step: the host's AnonHugePages (whether THP served the pieces).
 * libcuda is opened at run time: built anywhere with
 *   gcc -O2 -pthread host_probe.c -o host_probe -ldl
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

#include "probe.h"

#define GIB	(1ull << 30)
#define MAXP	256

static int (*cu_init)(unsigned), (*cu_dev)(int *, int), (*cu_retain)(void **, int),
    (*cu_set)(void *), (*cu_reg)(void *, size_t, unsigned), (*cu_unreg)(void *);
static int (*cu_halloc)(void **, size_t, unsigned), (*cu_hfree)(void *);
static int (*cu_alloc)(unsigned long long *, size_t), (*cu_dtoh)(void *, unsigned long long, size_t);
static void *ctx;
static unsigned long long dbuf;
static size_t dbuf_gib;
static pthread_mutex_t qmu = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t qcv = PTHREAD_COND_INITIALIZER;
static size_t queue[MAXP], qtail, exited;
static char *piece[MAXP];
static int locked[MAXP];	/* 1: registered, 2: cuMemHostAlloc's */
static size_t npiece;

struct job { size_t first, end, *next; int op; };

static void *
worker(void *arg)
{
	struct job *j = arg;
	size_t c, i;
	char *p;

	if (cu_set != NULL)
		cu_set(ctx);
	while ((c = __atomic_fetch_add(j->next, 1, __ATOMIC_RELAXED)) < j->end) {
		if (j->op == 4) {
			int r = cu_halloc((void **)&p, GIB, 0);

			if (r != 0) {
				fprintf(stderr, "cuMemHostAlloc: %d\n", r);
				exit(1);
			}
			locked[c] = 2;
			goto made;
		}
		p = mmap(NULL, GIB, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
		if (p == MAP_FAILED) {
			perror("mmap");
			exit(1);
		}
		madvise(p, GIB, MADV_HUGEPAGE);
		if (j->op == 3) {
			if (madvise(p, GIB, 23 /* MADV_POPULATE_WRITE */) != 0)
				perror("MADV_POPULATE_WRITE");
		} else if (j->op != 1)
			for (i = 0; i < GIB; i += 4096)
				((volatile char *)p)[i] = 0;
		if (j->op != 0) {
			int r = cu_reg(p, GIB, 1);
			if (r != 0)
				fprintf(stderr, "cuMemHostRegister: %d\n", r);
			locked[c] = r == 0;
		}
made:
		piece[c] = p;
		pthread_mutex_lock(&qmu);
		queue[qtail++] = c;
		pthread_cond_signal(&qcv);
		pthread_mutex_unlock(&qmu);
	}
	pthread_mutex_lock(&qmu);
	exited++;
	pthread_cond_signal(&qcv);
	pthread_mutex_unlock(&qmu);
	return NULL;
}

/* Device memory of gib GiB, made once (the largest asked for). */
static void
device(size_t gib)
{
	if (gib <= dbuf_gib)
		return;
	if (cu_alloc(&dbuf, gib * GIB) != 0) {
		fprintf(stderr, "cuMemAlloc of %zu GiB failed\n", gib);
		exit(1);
	}
	dbuf_gib = gib;
}

static void
anon_huge(void)
{
	char line[128];
	FILE *f = fopen("/proc/meminfo", "r");

	while (f != NULL && fgets(line, sizeof(line), f) != NULL)
		if (strncmp(line, "AnonHugePages:", 14) == 0)
			printf("    %s", line);
	if (f != NULL)
		fclose(f);
}

int
main(int argc, char **argv)
{
	void *lib = dlopen("libcuda.so.1", RTLD_NOW);
	pthread_t t[64];
	struct job j[64];
	char what[16];
	size_t gib, next, c;
	int th, i, dev, op;
	double t0, s;

	if (lib == NULL) {
		fprintf(stderr, "%s\n", dlerror());
		return 1;
	}
	*(void **)&cu_init = dlsym(lib, "cuInit");
	*(void **)&cu_dev = dlsym(lib, "cuDeviceGet");
	*(void **)&cu_retain = dlsym(lib, "cuDevicePrimaryCtxRetain");
	*(void **)&cu_set = dlsym(lib, "cuCtxSetCurrent");
	*(void **)&cu_reg = dlsym(lib, "cuMemHostRegister_v2");
	*(void **)&cu_unreg = dlsym(lib, "cuMemHostUnregister");
	*(void **)&cu_alloc = dlsym(lib, "cuMemAlloc_v2");
	*(void **)&cu_halloc = dlsym(lib, "cuMemHostAlloc");
	*(void **)&cu_hfree = dlsym(lib, "cuMemFreeHost");
	*(void **)&cu_dtoh = dlsym(lib, "cuMemcpyDtoH_v2");
	if (cu_init == NULL || cu_reg == NULL || cu_alloc == NULL || cu_dtoh == NULL ||
	    cu_init(0) != 0 || cu_dev(&dev, 0) != 0 || cu_retain(&ctx, dev) != 0)
		return 1;
	if (cu_set != NULL)	/* (the tests' fake libcuda has none) */
		cu_set(ctx);
	for (i = 1; i < argc; i++) {
		if (sscanf(argv[i], "%15[a-z]:%zu:%d", what, &gib, &th) != 3 || th < 1 || th > 64) {
			fprintf(stderr, "bad step %s\n", argv[i]);
			return 2;
		}
		t0 = now();
		if (strcmp(what, "free") == 0) {
			for (c = 0; c < npiece; c++) {
				if (locked[c] == 2) {
					cu_hfree(piece[c]);
					continue;
				}
				if (locked[c])
					cu_unreg(piece[c]);
				munmap(piece[c], GIB);
			}
			printf("%-22s %zu GiB freed in %.2f s\n", argv[i], npiece, now() - t0);
			npiece = 0;
			fflush(stdout);
			continue;
		}
		if (strcmp(what, "dma") == 0) {
			device(gib);
			if (gib > npiece)
				return 2;
			t0 = now();
			for (c = 0; c < gib; c++)
				cu_dtoh(piece[c], dbuf + c * GIB, GIB);
			s = now() - t0;
			printf("%-22s %.2f s, %.2f GB/s\n", argv[i], s, gib * GIB / s / 1e9);
			fflush(stdout);
			continue;
		}
		op = strcmp(what, "touch") == 0 ? 0 : strcmp(what, "reg") == 0 ? 1 :
		    strcmp(what, "pop") == 0 || strcmp(what, "piped") == 0 ? 3 :
		    strcmp(what, "halloc") == 0 || strcmp(what, "hpipe") == 0 ? 4 : 2;
		if (op == 4 && (cu_halloc == NULL || cu_hfree == NULL))
			return 1;
		if (npiece + gib > MAXP)
			return 2;
		if (strncmp(what, "pipe", 4) == 0 || strcmp(what, "hpipe") == 0)
			device(gib);
		t0 = now();
		next = npiece;
		qtail = exited = 0;
		for (c = 0; c < (size_t)th; c++) {
			j[c] = (struct job){ npiece, npiece + gib, &next, op };
			pthread_create(&t[c], NULL, worker, &j[c]);
		}
		if (strncmp(what, "pipe", 4) == 0 || strcmp(what, "hpipe") == 0) {
			size_t head = 0, k;

			pthread_mutex_lock(&qmu);
			for (;;) {
				while (head == qtail && exited < (size_t)th)
					pthread_cond_wait(&qcv, &qmu);
				if (head == qtail)
					break;
				k = queue[head++];
				pthread_mutex_unlock(&qmu);
				cu_dtoh(piece[k], dbuf + (k - npiece) * GIB, GIB);
				pthread_mutex_lock(&qmu);
			}
			pthread_mutex_unlock(&qmu);
		}
		for (c = 0; c < (size_t)th; c++)
			pthread_join(t[c], NULL);
		npiece += gib;
		s = now() - t0;
		printf("%-22s %.2f s, %.2f GB/s\n", argv[i], s, gib * GIB / s / 1e9);
		anon_huge();
		fflush(stdout);
	}
	return 0;
}
