/*
 * fake_nccl.c: NCCL's kernels as the fake libcuda sees them.
 *
 * cuModuleGetFunction hands out function handles by name and
 * cuFuncGetName gives the name back, as the driver does (CUDA >= 12.3).
 * A launch of a kernel whose name holds "nccl" is a collective: its
 * communicator is the first 8 bytes of its argument block (extra's
 * CU_LAUNCH_PARAM_BUFFER_POINTER, or kernelParams[0]), numbered in the
 * order this process first launched on it, and the launch is counted in
 * FAKE_NCCL_FILE under this process's rank (FAKE_RANK, of FAKE_NRANKS).
 * A collective completes once every rank has launched it: until then a
 * synchronize or a synchronous copy waits, as on a GPU where the kernel
 * spins for its peers; after FAKE_NCCL_DEADLINE seconds (60) it says
 * "collective N never completed" on stderr and fails, so a test cannot
 * hang on it.
 */
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "cuda_decls.h"
#include "fake_nccl.h"

#define E	__attribute__((visibility("default")))
#define FAKE_FNS	32

static struct fake_fn {
	char	name[96];
} __attribute__((aligned(16))) fake_fns[FAKE_FNS];
static int fake_nfns;
static struct fake_nccl_file *fake_coll;
static int fake_rank = -1, fake_nranks;
static uint64_t fake_comm[FAKE_NCCL_COMMS];
static int fake_ncomm;

E CUresult cuModuleGetFunction(void **, void *, const char *);
E CUresult cuFuncGetName(const char **, void *);
int	fake_nccl_launch(void *, void **, void **);
int	fake_nccl_wait(void);

E CUresult
cuModuleGetFunction(void **f, void *mod, const char *name)
{
	int i;

	(void)mod;
	for (i = 0; i < fake_nfns; i++)
		if (strcmp(fake_fns[i].name, name) == 0)
			break;
	if (i == fake_nfns) {
		if (fake_nfns == FAKE_FNS)
			return 2;	/* out of memory */
		snprintf(fake_fns[fake_nfns++].name, sizeof(fake_fns[0].name), "%s", name);
	}
	*f = &fake_fns[i];
	return 0;
}

E CUresult
cuFuncGetName(const char **name, void *f)
{
	struct fake_fn *fn = f;

	if (fn < fake_fns || fn >= fake_fns + fake_nfns)
		return 1;	/* CUDA_ERROR_INVALID_VALUE */
	*name = fn->name;
	return 0;
}

/* The shared counts, mapped at the first collective. */
static int
fake_nccl_map(void)
{
	const char *path = getenv("FAKE_NCCL_FILE"), *r = getenv("FAKE_RANK");
	const char *n = getenv("FAKE_NRANKS");
	void *p;
	int fd;

	if (fake_coll != NULL)
		return 0;
	if (path == NULL || r == NULL || n == NULL)
		return -1;
	fake_rank = atoi(r);
	fake_nranks = atoi(n);
	if (fake_rank < 0 || fake_rank >= FAKE_NCCL_RANKS || fake_nranks <= 0 ||
	    fake_nranks > FAKE_NCCL_RANKS || (fd = open(path, O_RDWR)) == -1)
		return -1;
	p = mmap(NULL, sizeof(*fake_coll), PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	close(fd);
	if (p == MAP_FAILED)
		return -1;
	fake_coll = p;
	return 0;
}

int
fake_nccl_launch(void *f, void **p, void **x)
{
	struct fake_fn *fn = f;
	void *buf = NULL;
	uint64_t comm;
	int i, c;

	if (fn < fake_fns || fn >= fake_fns + fake_nfns || strstr(fn->name, "nccl") == NULL ||
	    fake_nccl_map() == -1)
		return 0;
	if (x != NULL) {
		for (i = 0; i < 16 && x[i] != NULL; i += 2)
			if (x[i] == (void *)(uintptr_t)1)
				buf = x[i + 1];
	} else if (p != NULL)
		buf = p[0];
	if (buf == NULL)
		return 0;
	memcpy(&comm, buf, sizeof(comm));
	for (c = 0; c < fake_ncomm && fake_comm[c] != comm; c++)
		;
	if (c == fake_ncomm) {
		if (fake_ncomm == FAKE_NCCL_COMMS)
			return 0;
		fake_comm[fake_ncomm++] = comm;
	}
	__atomic_fetch_add(&fake_coll->launched[fake_rank][c], 1, __ATOMIC_SEQ_CST);
	return 0;
}

int
fake_nccl_wait(void)
{
	const char *d = getenv("FAKE_NCCL_DEADLINE");
	uint64_t mine, theirs, missing = 0;
	long ms, waited;
	int c, r, done;

	if (fake_coll == NULL)
		return 0;
	/* counted in waits of a millisecond: longer on a loaded machine, never shorter */
	ms = (long)((d != NULL ? atof(d) : 60.0) * 1000);
	for (waited = 0;; waited++) {
		done = 1;
		for (c = 0; c < fake_ncomm; c++) {
			mine = __atomic_load_n(&fake_coll->launched[fake_rank][c], __ATOMIC_SEQ_CST);
			for (r = 0; r < fake_nranks; r++) {
				theirs = __atomic_load_n(&fake_coll->launched[r][c], __ATOMIC_SEQ_CST);
				if (theirs < mine) {
					done = 0;
					missing = theirs + 1;
				}
			}
		}
		if (done)
			return 0;
		if (waited >= ms) {
			fprintf(stderr, "fake libcuda: rank %d: collective %llu never completed\n",
			    fake_rank, (unsigned long long)missing);
			return 999;	/* CUDA_ERROR_UNKNOWN */
		}
		usleep(1000);
	}
}
