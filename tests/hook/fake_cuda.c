/*
 * fake_cuda.c: a stand-in libcuda.so.1 for testing the hook without a GPU.
 * Device memory is host memory; every function counts its calls
 * (fake_calls(name)), and cuGetProcAddress/_v2 resolve names the way the
 * driver does: the _v2 variant from version 3020 on, the _ptsz variant
 * when the per-thread-default-stream flag is set.  A device has 80 GiB.
 * The VMM API is real memory: a reserved range is an inaccessible mapping,
 * a handle a memfd (sparse: untouched bytes take no RAM), cuMemMap maps it
 * there and cuMemSetAccess makes it readable, so that a job touching memory
 * that is not mapped faults as on a GPU.  Copies to and from a reserved
 * range copy for real (CUDA_ERROR_ILLEGAL_ADDRESS where nothing is mapped);
 * FAKE_VMM_FAIL=create|map|unmap|dtoh (or that word in the file
 * FAKE_CKPT_DIR/vmmfail, there followed by a pid, to fail in that process
 * only, and a count of its calls of the step that still succeed) makes
 * that step fail.  FAKE_VMM_REUSE=1 hands out the value of the handle
 * freed last to the next one made or imported, as a driver may.  A forked
 * child has none of its parent's device memory (as with the real driver):
 * its mappings and the driver's descriptors of it are gone there.
 * NCCL's kernels and their collectives are fake_nccl.c's: a synchronize or
 * a synchronous copy waits there for every rank's launch of each
 * collective this process launched.
 * It defines the driver's ABI, not ours: built without -Wmissing-prototypes.
 */
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <signal.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "cuda_decls.h"

#define FAKE_TOTAL	(80ULL << 30)
#define E	__attribute__((visibility("default")))

int	fake_nccl_launch(void *, void **, void **);
int	fake_nccl_wait(void);
E CUresult cuModuleGetFunction(void **, void *, const char *);
E CUresult cuFuncGetName(const char **, void *);

static struct { const char *name; int calls; } counts[256];
static pthread_mutex_t counts_mu = PTHREAD_MUTEX_INITIALIZER;	/* the hook calls from several threads */
static int current_dev;
static uint64_t allocated;

E int fake_calls(const char *);
E void fake_set_device(int);

static void
count(const char *name)
{
	int i;

	pthread_mutex_lock(&counts_mu);
	for (i = 0; i < 256 && counts[i].name; i++)
		if (strcmp(counts[i].name, name) == 0) {
			counts[i].calls++;
			pthread_mutex_unlock(&counts_mu);
			return;
		}
	if (i < 256) {
		counts[i].name = name;
		counts[i].calls = 1;
	}
	pthread_mutex_unlock(&counts_mu);
}

int
fake_calls(const char *name)
{
	int i, n = 0;

	pthread_mutex_lock(&counts_mu);
	for (i = 0; i < 256 && counts[i].name; i++)
		if (strcmp(counts[i].name, name) == 0)
			n = counts[i].calls;
	pthread_mutex_unlock(&counts_mu);
	return n;
}

void
fake_set_device(int d)
{
	current_dev = d;
}

static CUresult
fake_alloc(const char *fn, CUdeviceptr *p, size_t n)
{
	void *m;

	count(fn);
	if (n > FAKE_TOTAL - allocated || (m = malloc(n ? 16 : 16)) == NULL)
		return CUDA_ERROR_OUT_OF_MEMORY;
	allocated += n;
	/* remember the size in the block, so that free can give it back */
	memcpy(m, &n, sizeof(n));
	*p = (CUdeviceptr)(uintptr_t)m;
	return CUDA_SUCCESS;
}

static CUresult
fake_free(const char *fn, CUdeviceptr p)
{
	size_t n;

	count(fn);
	if (p == 0)
		return 1;	/* CUDA_ERROR_INVALID_VALUE */
	memcpy(&n, (void *)(uintptr_t)p, sizeof(n));
	allocated -= n;
	free((void *)(uintptr_t)p);
	return CUDA_SUCCESS;
}

/* ---- the VMM API ---- */
#define FAKE_MAX_RANGES	4096
#define FAKE_HANDLE_MAGIC 0xfa4e4d4d
/*
 * fdok: made exportable (POSIX descriptors); imported: another's memory;
 * refs: the handle's references and its mappings, as the driver keeps the
 * memory while it is mapped after its handle was released.
 */
struct fake_handle { uint32_t magic; int fd; size_t size; int fdok, imported, refs, dev; };
static struct { uintptr_t va; size_t size; int mapped; struct fake_handle *fh; } ranges[FAKE_MAX_RANGES];
static size_t mapped_bytes;

E size_t fake_mapped_bytes(void);
size_t fake_mapped_bytes(void) { return mapped_bytes; }

/* Calls of a step so far in this process (counted before it is asked whether it fails). */
static int
fake_vmm_calls(const char *step)
{
	return fake_calls(strcmp(step, "create") == 0 ? "cuMemCreate" : strcmp(step, "map") == 0 ?
	    "cuMemMap" : strcmp(step, "unmap") == 0 ? "cuMemUnmap" : "cuMemcpyDtoH_v2");
}

/* FAKE_VMM_FAIL, or the file FAKE_CKPT_DIR/vmmfail, names the step that fails */
static int
fake_vmm_fail(const char *step)
{
	const char *f = getenv("FAKE_VMM_FAIL"), *dir = getenv("FAKE_CKPT_DIR");
	char path[4096], what[32] = "";
	long pid = 0, skip = 0;
	FILE *fp;

	if (f != NULL)
		return strcmp(f, step) == 0;
	if (dir == NULL)
		return 0;
	snprintf(path, sizeof(path), "%s/vmmfail", dir);
	if ((fp = fopen(path, "r")) == NULL)
		return 0;
	if (fscanf(fp, "%31s %ld %ld", what, &pid, &skip) < 1)
		what[0] = '\0';
	fclose(fp);
	return strcmp(what, step) == 0 && (pid == 0 || pid == (long)getpid()) &&
	    fake_vmm_calls(step) > skip;
}

/*
 * The handles alive (a forked child drops them), and under FAKE_VMM_REUSE
 * the freed ones, whose values the next handles take, the last freed first.
 */
static struct fake_handle *live[FAKE_MAX_RANGES], *freed[FAKE_MAX_RANGES];
static int nfreed;
static pthread_mutex_t vmm_mu = PTHREAD_MUTEX_INITIALIZER;

static struct fake_handle *
fake_vmm_new(void)
{
	struct fake_handle *fh = NULL;
	int i;

	pthread_mutex_lock(&vmm_mu);
	for (i = 0; i < FAKE_MAX_RANGES && live[i] != NULL; i++)
		;
	if (i < FAKE_MAX_RANGES) {
		if (nfreed > 0)
			fh = freed[--nfreed];
		else
			fh = malloc(sizeof(*fh));
		if (fh != NULL) {
			memset(fh, 0, sizeof(*fh));
			live[i] = fh;
		}
	}
	pthread_mutex_unlock(&vmm_mu);
	return fh;
}

static void
fake_vmm_gone(struct fake_handle *fh)
{
	const char *reuse = getenv("FAKE_VMM_REUSE");
	int i;

	pthread_mutex_lock(&vmm_mu);
	for (i = 0; i < FAKE_MAX_RANGES && live[i] != fh; i++)
		;
	if (i < FAKE_MAX_RANGES)
		live[i] = NULL;
	if (reuse != NULL && *reuse == '1' && nfreed < FAKE_MAX_RANGES)
		freed[nfreed++] = fh;
	else
		free(fh);
	pthread_mutex_unlock(&vmm_mu);
}

/* In a forked child: the parent's device memory is not here. */
static void
fake_vmm_child(void)
{
	int i;

	pthread_mutex_init(&vmm_mu, NULL);
	for (i = 0; i < FAKE_MAX_RANGES; i++) {
		if (ranges[i].size != 0 && ranges[i].mapped)
			mmap((void *)ranges[i].va, ranges[i].size, PROT_NONE, MAP_PRIVATE |
			    MAP_ANONYMOUS | MAP_FIXED | MAP_NORESERVE, -1, 0);
		if (live[i] != NULL) {
			close(live[i]->fd);
			live[i]->magic = 0;
			live[i] = NULL;
		}
	}
	memset(ranges, 0, sizeof(ranges));
	mapped_bytes = 0;
}

__attribute__((constructor)) static void
fake_vmm_init(void)
{
	pthread_atfork(NULL, NULL, fake_vmm_child);
}

static CUresult
fake_vmm_create(CUmemGenericAllocationHandle *h, size_t n, int fdok)
{
	struct fake_handle *fh;

	count("cuMemCreate");
	if (fake_vmm_fail("create") || n > FAKE_TOTAL - allocated ||
	    (fh = fake_vmm_new()) == NULL)
		return CUDA_ERROR_OUT_OF_MEMORY;
	fh->magic = FAKE_HANDLE_MAGIC;
	fh->size = n;
	fh->fdok = fdok;
	fh->refs = 1;
	fh->dev = current_dev;
	if ((fh->fd = memfd_create("fake-vmm", MFD_CLOEXEC)) == -1 ||
	    ftruncate(fh->fd, (off_t)n) == -1) {
		fake_vmm_gone(fh);
		return CUDA_ERROR_OUT_OF_MEMORY;
	}
	allocated += n;
	*h = (CUmemGenericAllocationHandle)(uintptr_t)fh;
	return CUDA_SUCCESS;
}

/* Drops a reference (a handle's or a mapping's); the last frees the memory. */
static void
fake_vmm_unref(struct fake_handle *fh)
{
	if (--fh->refs > 0)
		return;
	fh->magic = 0;
	close(fh->fd);
	if (!fh->imported)
		allocated -= fh->size;
	fake_vmm_gone(fh);
}

/* 1 if h was a VMM handle (released), 0 if it is another kind */
static int
fake_vmm_release(CUmemGenericAllocationHandle h)
{
	struct fake_handle *fh = (struct fake_handle *)(uintptr_t)h;

	if (fh == NULL || fh->magic != FAKE_HANDLE_MAGIC)
		return 0;
	count("cuMemRelease");
	fake_vmm_unref(fh);
	return 1;
}

/*
 * Sharing: a handle made with POSIX descriptors requested exports a
 * descriptor of its memfd; an import maps the same memory.  Legacy IPC
 * handles cannot name VMM memory, as with the real driver; the fake makes
 * them for cuMemAlloc's memory (its pointer, in the handle), but opens
 * none: another process's memory is not in this one.
 */
E CUresult
cuMemExportToShareableHandle(void *out, CUmemGenericAllocationHandle h, int type,
    unsigned long long f)
{
	struct fake_handle *fh = (struct fake_handle *)(uintptr_t)h;

	(void)f;
	count("cuMemExportToShareableHandle");
	if (fh == NULL || fh->magic != FAKE_HANDLE_MAGIC || type != 1 || !fh->fdok)
		return 1;	/* CUDA_ERROR_INVALID_VALUE */
	*(int *)out = dup(fh->fd);
	return *(int *)out == -1 ? 304 : 0;
}

E CUresult
cuMemImportFromShareableHandle(CUmemGenericAllocationHandle *h, void *os, int type)
{
	struct fake_handle *fh;
	struct stat st;
	int fd = (int)(intptr_t)os;

	count("cuMemImportFromShareableHandle");
	if (type != 1 || fstat(fd, &st) == -1 || (fh = fake_vmm_new()) == NULL)
		return 1;
	fh->magic = FAKE_HANDLE_MAGIC;
	fh->size = (size_t)st.st_size;
	fh->imported = 1;
	fh->refs = 1;
	if ((fh->fd = dup(fd)) == -1) {
		fake_vmm_gone(fh);
		return 304;
	}
	*h = (CUmemGenericAllocationHandle)(uintptr_t)fh;
	return 0;
}

E CUresult cuIpcGetMemHandle(void *, CUdeviceptr);
static int fake_range(uintptr_t p, size_t n);
E CUresult
cuIpcGetMemHandle(void *h, CUdeviceptr p)
{
	count("cuIpcGetMemHandle");
	if (h == NULL || p == 0 || fake_range((uintptr_t)p, 1) >= 0)
		return 1;	/* CUDA_ERROR_INVALID_VALUE: VMM memory */
	memset(h, 0, NVQ_CU_IPC_HANDLE_SIZE);
	memcpy(h, &p, sizeof(p));
	return 0;
}

/* A VMM range, or (anything else) a block of fake_alloc's with its size in it. */
E CUresult cuMemGetAddressRange_v2(CUdeviceptr *, size_t *, CUdeviceptr);
E CUresult
cuMemGetAddressRange_v2(CUdeviceptr *base, size_t *size, CUdeviceptr p)
{
	int i = fake_range((uintptr_t)p, 1);

	count("cuMemGetAddressRange_v2");
	if (p == 0)
		return 1;
	if (i >= 0) {
		*base = (CUdeviceptr)ranges[i].va;
		*size = ranges[i].size;
	} else {
		*base = p;
		memcpy(size, (void *)(uintptr_t)p, sizeof(*size));
	}
	return 0;
}
E CUresult cuIpcOpenMemHandle_v2(CUdeviceptr *, struct nvq_cu_ipc_mem_handle, unsigned int);
E CUresult cuIpcOpenMemHandle_v2(CUdeviceptr *p, struct nvq_cu_ipc_mem_handle h, unsigned int f) { (void)p; (void)h; (void)f; count("cuIpcOpenMemHandle_v2"); return 400; }
E CUresult cuIpcCloseMemHandle(CUdeviceptr);
E CUresult cuIpcCloseMemHandle(CUdeviceptr p) { (void)p; count("cuIpcCloseMemHandle"); return 1; }

static int
fake_range(uintptr_t p, size_t n)
{
	int i;

	for (i = 0; i < FAKE_MAX_RANGES; i++)
		if (ranges[i].size != 0 && p >= ranges[i].va &&
		    p + n <= ranges[i].va + ranges[i].size)
			return i;
	return -1;
}

E CUresult
cuMemAddressReserve(CUdeviceptr *p, size_t n, size_t align, CUdeviceptr addr,
    unsigned long long f)
{
	void *m;
	int i;

	(void)align; (void)addr; (void)f;
	count("cuMemAddressReserve");
	for (i = 0; i < FAKE_MAX_RANGES && ranges[i].size != 0; i++)
		;
	if (i == FAKE_MAX_RANGES)
		return CUDA_ERROR_OUT_OF_MEMORY;
	m = mmap(NULL, n, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
	if (m == MAP_FAILED)
		return CUDA_ERROR_OUT_OF_MEMORY;
	ranges[i].va = (uintptr_t)m;
	ranges[i].size = n;
	ranges[i].mapped = 0;
	*p = (CUdeviceptr)(uintptr_t)m;
	return CUDA_SUCCESS;
}

E CUresult
cuMemAddressFree(CUdeviceptr p, size_t n)
{
	int i = fake_range((uintptr_t)p, n);

	count("cuMemAddressFree");
	if (i < 0 || ranges[i].mapped)
		return 1;
	munmap((void *)(uintptr_t)p, n);
	ranges[i].size = 0;
	return CUDA_SUCCESS;
}

E CUresult
cuMemMap(CUdeviceptr p, size_t n, size_t off, CUmemGenericAllocationHandle h,
    unsigned long long f)
{
	struct fake_handle *fh = (struct fake_handle *)(uintptr_t)h;
	int i = fake_range((uintptr_t)p, n);

	(void)f;
	count("cuMemMap");
	if (fake_vmm_fail("map"))
		return CUDA_ERROR_OUT_OF_MEMORY;
	if (i < 0 || ranges[i].mapped || fh == NULL || fh->magic != FAKE_HANDLE_MAGIC ||
	    mmap((void *)(uintptr_t)p, n, PROT_NONE, MAP_SHARED | MAP_FIXED, fh->fd,
	    (off_t)off) == MAP_FAILED)
		return 1;
	ranges[i].mapped = 1;
	ranges[i].fh = fh;
	fh->refs++;
	mapped_bytes += n;
	return CUDA_SUCCESS;
}

E CUresult
cuMemSetAccess(CUdeviceptr p, size_t n, const struct nvq_cu_mem_access_desc *d, size_t count_)
{
	int i = fake_range((uintptr_t)p, n);

	count("cuMemSetAccess");
	if (i < 0 || !ranges[i].mapped || d == NULL || count_ == 0 || d[0].flags != 3)
		return 1;
	return mprotect((void *)(uintptr_t)p, n, PROT_READ | PROT_WRITE) == 0 ? 0 : 1;
}

E CUresult
cuMemUnmap(CUdeviceptr p, size_t n)
{
	int i = fake_range((uintptr_t)p, n);

	count("cuMemUnmap");
	if (fake_vmm_fail("unmap"))
		return 2;	/* CUDA_ERROR_OUT_OF_MEMORY */
	if (i < 0 || !ranges[i].mapped)
		return 1;
	if (mmap((void *)(uintptr_t)p, n, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED |
	    MAP_NORESERVE, -1, 0) == MAP_FAILED)
		return 1;
	ranges[i].mapped = 0;
	mapped_bytes -= n;
	fake_vmm_unref(ranges[i].fh);
	ranges[i].fh = NULL;
	return CUDA_SUCCESS;
}

/* ---- NCCL's calls on shared memory (issue 40 item 3): retain, properties ---- */

/* The handle of the memory mapped at p, one more reference to it (NCCL's free path). */
E CUresult cuMemRetainAllocationHandle(CUmemGenericAllocationHandle *, void *);
E CUresult
cuMemRetainAllocationHandle(CUmemGenericAllocationHandle *h, void *p)
{
	int i = fake_range((uintptr_t)p, 1);

	count("cuMemRetainAllocationHandle");
	if (h == NULL || i < 0 || !ranges[i].mapped)
		return 1;
	ranges[i].fh->refs++;
	*h = (CUmemGenericAllocationHandle)(uintptr_t)ranges[i].fh;
	return 0;
}

/* What it was made with: pinned device memory, its device, its handle types. */
E CUresult cuMemGetAllocationPropertiesFromHandle(struct nvq_cu_mem_allocation_prop *,
    CUmemGenericAllocationHandle);
E CUresult
cuMemGetAllocationPropertiesFromHandle(struct nvq_cu_mem_allocation_prop *prop,
    CUmemGenericAllocationHandle h)
{
	struct fake_handle *fh = (struct fake_handle *)(uintptr_t)h;

	count("cuMemGetAllocationPropertiesFromHandle");
	if (prop == NULL || fh == NULL || fh->magic != FAKE_HANDLE_MAGIC)
		return 1;
	memset(prop, 0, sizeof(*prop));
	prop->type = 1;
	prop->location.type = 1;
	prop->location.id = fh->dev;
	prop->requestedHandleTypes = fh->fdok || fh->imported ? 1 : 0;
	return 0;
}

/* ---- end of NCCL's calls ---- */

E CUresult cuMemGetAllocationGranularity(size_t *g, const void *prop, int opt) { (void)prop; (void)opt; *g = 2 << 20; return 0; }
/* a context current on the calling thread, as cuMemHostRegister needs one */
static __thread void *fake_tls_ctx;
/* FAKE_REGISTER_US: each registration takes that long, as page-locking a GiB does */
E CUresult cuMemHostRegister_v2(void *p, size_t n, unsigned int f) { const char *us = getenv("FAKE_REGISTER_US"); (void)p; (void)n; if (us != NULL) usleep((useconds_t)atoi(us)); count("cuMemHostRegister_v2"); if (f & 1) count("fake_register_portable"); return fake_tls_ctx != NULL ? 0 : 201; }
E CUresult cuMemHostUnregister(void *p) { (void)p; count("cuMemHostUnregister"); return 0; }
E CUresult cuCtxGetCurrent(void **c) { *c = (void *)(uintptr_t)(current_dev + 1); return 0; }
E CUresult cuDeviceCanAccessPeer(int *can, CUdevice a, CUdevice b) { (void)a; (void)b; *can = 1; return 0; }
E CUresult
cuDeviceGetCount(int *n)
{
	const char *v = getenv("CUDA_VISIBLE_DEVICES");

	*n = 1;
	for (; v != NULL && *v; v++)
		*n += *v == ',';
	return 0;
}

/*
 * A copy that touches a reserved range copies for real, or fails as a GPU
 * would where nothing is mapped; other device pointers are not memory.
 */
static CUresult
fake_copy(void *dst, const void *src, uintptr_t dev, size_t n)
{
	int i;

	if (n == 0 || (i = fake_range(dev, n)) < 0)
		return CUDA_SUCCESS;
	if (!ranges[i].mapped) {
		count("fake_fault");
		return 700;	/* CUDA_ERROR_ILLEGAL_ADDRESS */
	}
	memcpy(dst, src, n);
	return CUDA_SUCCESS;
}

E CUresult cuInit(unsigned int f) { (void)f; count("cuInit"); return 0; }
E CUresult cuCtxGetDevice(CUdevice *d) { *d = current_dev; return 0; }
E CUresult cuMemAlloc(CUdeviceptr *p, unsigned int n) { return fake_alloc("cuMemAlloc", p, n); }
E CUresult cuMemAlloc_v2(CUdeviceptr *p, size_t n) { return fake_alloc("cuMemAlloc_v2", p, n); }
E CUresult cuMemFree_v2(CUdeviceptr p) { return fake_free("cuMemFree_v2", p); }
E CUresult
cuMemAllocPitch_v2(CUdeviceptr *p, size_t *pitch, size_t w, size_t h, unsigned int e)
{
	(void)e;
	*pitch = (w + 511) / 512 * 512;
	return fake_alloc("cuMemAllocPitch_v2", p, *pitch * h);
}
E CUresult cuMemAllocAsync(CUdeviceptr *p, size_t n, CUstream s) { (void)s; return fake_alloc("cuMemAllocAsync", p, n); }
E CUresult cuMemAllocAsync_ptsz(CUdeviceptr *p, size_t n, CUstream s) { (void)s; return fake_alloc("cuMemAllocAsync_ptsz", p, n); }
E CUresult cuMemAllocFromPoolAsync(CUdeviceptr *p, size_t n, CUmemoryPool m, CUstream s) { (void)m; (void)s; return fake_alloc("cuMemAllocFromPoolAsync", p, n); }
E CUresult cuMemAllocFromPoolAsync_ptsz(CUdeviceptr *p, size_t n, CUmemoryPool m, CUstream s) { (void)m; (void)s; return fake_alloc("cuMemAllocFromPoolAsync_ptsz", p, n); }
E CUresult cuMemFreeAsync(CUdeviceptr p, CUstream s) { (void)s; return fake_free("cuMemFreeAsync", p); }
E CUresult cuMemFreeAsync_ptsz(CUdeviceptr p, CUstream s) { (void)s; return fake_free("cuMemFreeAsync_ptsz", p); }
E CUresult cuMemAllocManaged(CUdeviceptr *p, size_t n, unsigned int f) { (void)f; return fake_alloc("cuMemAllocManaged", p, n); }
E CUresult
cuMemCreate(CUmemGenericAllocationHandle *h, size_t n, const struct nvq_cu_mem_allocation_prop *prop,
    unsigned long long f)
{
	CUdeviceptr p;
	CUresult r;

	(void)f;
	if (prop != NULL && prop->type == 1)	/* CU_MEM_ALLOCATION_TYPE_PINNED */
		return fake_vmm_create(h, n, (prop->requestedHandleTypes & 1) != 0);
	if ((r = fake_alloc("cuMemCreate", &p, n)) == 0)
		*h = p;
	return r;
}
E CUresult
cuMemRelease(CUmemGenericAllocationHandle h)
{
	return fake_vmm_release(h) ? 0 : fake_free("cuMemRelease", h);
}
E CUresult
cuArrayCreate_v2(CUarray *a, const struct nvq_cu_array_descriptor *d)
{
	CUdeviceptr p = 0;
	CUresult r = fake_alloc("cuArrayCreate_v2", &p, d->Width * d->Height * 4 * d->NumChannels);

	*a = (CUarray)(uintptr_t)p;
	return r;
}
E CUresult
cuArray3DCreate_v2(CUarray *a, const struct nvq_cu_array3d_descriptor *d)
{
	CUdeviceptr p = 0;
	CUresult r = fake_alloc("cuArray3DCreate_v2", &p,
	    d->Width * d->Height * d->Depth * 4 * d->NumChannels);

	*a = (CUarray)(uintptr_t)p;
	return r;
}
E CUresult cuArrayDestroy(CUarray a) { return fake_free("cuArrayDestroy", (CUdeviceptr)(uintptr_t)a); }
E CUresult
cuMemGetInfo_v2(size_t *f, size_t *t)
{
	count("cuMemGetInfo_v2");
	*f = FAKE_TOTAL - allocated;
	*t = FAKE_TOTAL;
	return 0;
}
E CUresult cuDeviceTotalMem_v2(size_t *b, CUdevice d) { (void)d; *b = FAKE_TOTAL; return 0; }

/*
 * The checkpoint API, for nvq-ckpt: a process's state (CUprocessState) is a
 * file FAKE_CKPT_DIR/PID holding its number; none means running.  A step
 * sleeps FAKE_CKPT_DELAY_MS, and the step named in the file FAKE_CKPT_DIR/fail
 * (lock, checkpoint, restore, unlock) fails with CUDA_ERROR_UNKNOWN (999).
 * Only live processes can be checkpointed, as with the driver.  A process
 * that checkpointed another takes FAKE_CKPT_DIR/enddelay milliseconds to
 * end, as the driver's teardown does on an H100 (0.05 to 0.11 s).
 */
static int fake_ckpt_done;	/* this process checkpointed one */

__attribute__((destructor)) static void
fake_ckpt_end(void)
{
	const char *dir = getenv("FAKE_CKPT_DIR");
	char path[4096];
	int ms = 0;
	FILE *fp;

	if (!fake_ckpt_done || dir == NULL)
		return;
	snprintf(path, sizeof(path), "%s/enddelay", dir);
	if ((fp = fopen(path, "r")) != NULL) {
		if (fscanf(fp, "%d", &ms) == 1 && ms > 0)
			usleep((useconds_t)ms * 1000);
		fclose(fp);
	}
}
static int
fake_ckpt_state(int pid)
{
	const char *dir = getenv("FAKE_CKPT_DIR");
	char path[4096];
	int st = 0;
	FILE *fp;

	if (dir == NULL)
		return 0;
	snprintf(path, sizeof(path), "%s/%d", dir, pid);
	if ((fp = fopen(path, "r")) != NULL) {
		if (fscanf(fp, "%d", &st) != 1)
			st = 0;
		fclose(fp);
	}
	return st;
}

static CUresult
fake_ckpt_step(const char *fn, const char *step, int pid, int from, int to)
{
	const char *dir = getenv("FAKE_CKPT_DIR"), *delay = getenv("FAKE_CKPT_DELAY_MS");
	char path[4096], tmp[4200], fail[32] = "";
	FILE *fp;

	count(fn);
	if (dir == NULL || kill(pid, 0) == -1)
		return 1;	/* CUDA_ERROR_INVALID_VALUE */
	if (fake_ckpt_state(pid) != from)
		return 401;	/* CUDA_ERROR_ILLEGAL_STATE */
	if (delay != NULL)
		usleep((useconds_t)atoi(delay) * 1000);
	snprintf(path, sizeof(path), "%s/fail", dir);
	if ((fp = fopen(path, "r")) != NULL) {
		if (fscanf(fp, "%31s", fail) != 1)
			fail[0] = '\0';
		fclose(fp);
	}
	if (strcmp(step, fail) == 0)
		return 999;
	/* FAKE_CKPT_DIR/hang names a step that never returns (a driver that hangs) */
	snprintf(path, sizeof(path), "%s/hang", dir);
	if ((fp = fopen(path, "r")) != NULL) {
		if (fscanf(fp, "%31s", fail) == 1 && strcmp(step, fail) == 0)
			for (;;)
				pause();
		fclose(fp);
	}
	snprintf(path, sizeof(path), "%s/%d", dir, pid);
	snprintf(tmp, sizeof(tmp), "%s.tmp", path);
	if ((fp = fopen(tmp, "w")) == NULL)
		return 999;
	fprintf(fp, "%d\n", to);
	fclose(fp);
	if (to == 2)
		fake_ckpt_done = 1;
	return rename(tmp, path) == 0 ? 0 : 999;
}

E CUresult cuCheckpointProcessGetState(int pid, int *st) { count("cuCheckpointProcessGetState"); if (kill(pid, 0) == -1) return 1; *st = fake_ckpt_state(pid); return 0; }
/* FAKE_CKPT_DIR/nocuda.PID: a process the driver has no CUDA state of: it cannot be locked */
static int
fake_nocuda(int pid)
{
	const char *dir = getenv("FAKE_CKPT_DIR");
	char path[4096];

	snprintf(path, sizeof(path), "%s/nocuda.%d", dir ? dir : ".", pid);
	return dir != NULL && access(path, F_OK) == 0;
}
E CUresult cuCheckpointProcessLock(int pid, void *a) { (void)a; if (fake_nocuda(pid)) return 3; return fake_ckpt_step("cuCheckpointProcessLock", "lock", pid, 0, 1); }
E CUresult cuCheckpointProcessCheckpoint(int pid, void *a) { (void)a; return fake_ckpt_step("cuCheckpointProcessCheckpoint", "checkpoint", pid, 1, 2); }
E CUresult cuCheckpointProcessRestore(int pid, void *a) { (void)a; return fake_ckpt_step("cuCheckpointProcessRestore", "restore", pid, 2, 1); }
E CUresult cuCheckpointProcessUnlock(int pid, void *a) { (void)a; return fake_ckpt_step("cuCheckpointProcessUnlock", "unlock", pid, 1, 0); }

/*
 * FAKE_KERNEL_US: each launch's "kernel" runs that long on the GPU, from
 * its launch (they overlap: the GPU is busy until the last one's end), and
 * a synchronize waits for it, so that the hook's lc/be watcher sees work.
 */
static uint64_t fake_busy_until;

static uint64_t
fake_now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ULL + (uint64_t)ts.tv_nsec;
}

static void
fake_kernel(void)
{
	static long us = -1;
	const char *k;

	if (us < 0)
		us = (k = getenv("FAKE_KERNEL_US")) != NULL ? atol(k) : 0;
	if (us > 0)
		__atomic_store_n(&fake_busy_until, fake_now_ns() + (uint64_t)us * 1000,
		    __ATOMIC_SEQ_CST);
}

static void
fake_kernel_wait(void)
{
	uint64_t until = __atomic_load_n(&fake_busy_until, __ATOMIC_SEQ_CST), now;

	while ((now = fake_now_ns()) < until)
		usleep((useconds_t)((until - now) / 1000 + 1));
}

/* launches and copies: counted; FAKE_LAUNCH_HANG names a file that, while
 * it exists, keeps a launch inside the driver (work that never drains);
 * a process the checkpoint API locked waits until it is unlocked */
static CUresult
fake_launch(const char *fn)
{
	const char *hang = getenv("FAKE_LAUNCH_HANG");

	count(fn);
	fake_kernel();
	while (hang != NULL && access(hang, F_OK) == 0)
		usleep(10000);
	while (fake_ckpt_state(getpid()) != 0)
		usleep(10000);
	return 0;
}
E CUresult cuLaunchKernel(void *f, unsigned a, unsigned b, unsigned c, unsigned d, unsigned e, unsigned g, unsigned sh, CUstream s, void **p, void **x) { (void)a; (void)b; (void)c; (void)d; (void)e; (void)g; (void)sh; (void)s; return fake_launch("cuLaunchKernel") ? 1 : fake_nccl_launch(f, p, x); }
E CUresult cuLaunchKernel_ptsz(void *f, unsigned a, unsigned b, unsigned c, unsigned d, unsigned e, unsigned g, unsigned sh, CUstream s, void **p, void **x) { (void)a; (void)b; (void)c; (void)d; (void)e; (void)g; (void)sh; (void)s; return fake_launch("cuLaunchKernel_ptsz") ? 1 : fake_nccl_launch(f, p, x); }
E CUresult cuLaunchKernelEx(const void *cfg, void *f, void **p, void **x) { (void)cfg; return fake_launch("cuLaunchKernelEx") ? 1 : fake_nccl_launch(f, p, x); }
E CUresult cuLaunchKernelEx_ptsz(const void *cfg, void *f, void **p, void **x) { (void)cfg; return fake_launch("cuLaunchKernelEx_ptsz") ? 1 : fake_nccl_launch(f, p, x); }
E CUresult cuGraphLaunch(void *g, CUstream s) { (void)g; (void)s; return fake_launch("cuGraphLaunch"); }
E CUresult cuGraphLaunch_ptsz(void *g, CUstream s) { (void)g; (void)s; return fake_launch("cuGraphLaunch_ptsz"); }
E CUresult cuMemcpyHtoD_v2(CUdeviceptr d, const void *h, size_t n) { CUresult r = fake_launch("cuMemcpyHtoD_v2"); if (!r) r = fake_nccl_wait(); return r ? r : fake_copy((void *)(uintptr_t)d, h, d, n); }
E CUresult cuMemcpyHtoD_v2_ptds(CUdeviceptr d, const void *h, size_t n) { (void)d; (void)h; (void)n; return fake_launch("cuMemcpyHtoD_v2_ptds"); }
/* registrations made when the first copy to the host since the last call began; -1: none */
static int regs_at_copy = -1;
E int fake_first_copy_regs(void);
int fake_first_copy_regs(void) { return __atomic_exchange_n(&regs_at_copy, -1, __ATOMIC_SEQ_CST); }
E CUresult cuMemcpyDtoH_v2(void *h, CUdeviceptr d, size_t n) { int none = -1; CUresult r = fake_launch("cuMemcpyDtoH_v2"); if (!r && fake_vmm_fail("dtoh")) r = 2; __atomic_compare_exchange_n(&regs_at_copy, &none, fake_calls("cuMemHostRegister_v2"), 0, __ATOMIC_SEQ_CST, __ATOMIC_SEQ_CST); if (!r) r = fake_nccl_wait(); return r ? r : fake_copy(h, (void *)(uintptr_t)d, d, n); }
/* devices, their UUIDs (from CUDA_VISIBLE_DEVICES, as the driver maps
 * them) and primary contexts, for the hook's link */
E CUresult cuDeviceGet(CUdevice *d, int ordinal) { *d = ordinal; return 0; }
E CUresult
cuDeviceGetUuid(unsigned char *u, CUdevice d)
{
	const char *v = getenv("CUDA_VISIBLE_DEVICES");
	char list[1024], *tok, *save, hex[33];
	int i = 0, k = 0;
	unsigned x;

	snprintf(hex, sizeof(hex), "fa4e00000000000000000000%08x", d);
	if (v != NULL) {
		snprintf(list, sizeof(list), "%s", v);
		for (tok = strtok_r(list, ",", &save); tok; tok = strtok_r(NULL, ",", &save), i++)
			if (i == d && strncmp(tok, "GPU-", 4) == 0) {
				for (tok += 4; *tok && k < 32; tok++)
					if (*tok != '-')
						hex[k++] = *tok;
				break;
			}
	}
	for (i = 0; i < 16; i++) {
		sscanf(hex + 2 * i, "%2x", &x);
		u[i] = (unsigned char)x;
	}
	return 0;
}
E CUresult cuDevicePrimaryCtxGetState(CUdevice d, unsigned int *f, int *active) { (void)d; *f = 0; *active = 1; return 0; }
E CUresult cuDevicePrimaryCtxRetain(void **c, CUdevice d) { *c = (void *)(uintptr_t)(d + 1); return 0; }
E CUresult cuDevicePrimaryCtxRelease_v2(CUdevice d) { (void)d; return 0; }
E CUresult cuCtxPushCurrent_v2(void *c) { fake_tls_ctx = c; return 0; }
E CUresult cuCtxPopCurrent_v2(void **c) { *c = fake_tls_ctx; fake_tls_ctx = NULL; return 0; }
/*
 * Stream capture, the global mode's rule: a synchronize from any thread
 * while a capture is under way invalidates it (the synchronize fails with
 * CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED, the end with _INVALIDATED).
 */
static int fake_capturing, fake_capture_broken;
E CUresult cuStreamBeginCapture_v2(CUstream s, int mode) { (void)s; (void)mode; count("cuStreamBeginCapture_v2"); __atomic_store_n(&fake_capture_broken, 0, __ATOMIC_SEQ_CST); __atomic_store_n(&fake_capturing, 1, __ATOMIC_SEQ_CST); return 0; }
E CUresult cuStreamEndCapture(CUstream s, void **g) { (void)s; count("cuStreamEndCapture"); if (g) *g = NULL; __atomic_store_n(&fake_capturing, 0, __ATOMIC_SEQ_CST); return __atomic_load_n(&fake_capture_broken, __ATOMIC_SEQ_CST) ? 901 : 0; }

/* FAKE_SYNC_HANG names a file that, while it exists, keeps a synchronize
 * waiting (work that waits on another process, as an NCCL kernel waits for
 * its peer's) */
E CUresult
cuCtxSynchronize(void)
{
	const char *hang = getenv("FAKE_SYNC_HANG");

	count("cuCtxSynchronize");
	if (__atomic_load_n(&fake_capturing, __ATOMIC_SEQ_CST)) {
		__atomic_store_n(&fake_capture_broken, 1, __ATOMIC_SEQ_CST);
		return 900;	/* CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED */
	}
	while (hang != NULL && access(hang, F_OK) == 0)
		usleep(10000);
	fake_kernel_wait();
	return fake_nccl_wait();
}
E CUresult cuGetProcAddress_v2(const char *, void **, int, cuuint64_t, CUdriverProcAddressQueryResult *);

static const struct { const char *name; void *fn; } fake_syms[] = {
	{ "cuInit", (void *)cuInit }, { "cuCtxGetDevice", (void *)cuCtxGetDevice },
	{ "cuMemAlloc", (void *)cuMemAlloc }, { "cuMemAlloc_v2", (void *)cuMemAlloc_v2 },
	{ "cuMemFree_v2", (void *)cuMemFree_v2 }, { "cuMemAllocPitch_v2", (void *)cuMemAllocPitch_v2 },
	{ "cuMemAllocAsync", (void *)cuMemAllocAsync },
	{ "cuMemAllocAsync_ptsz", (void *)cuMemAllocAsync_ptsz },
	{ "cuMemAllocFromPoolAsync", (void *)cuMemAllocFromPoolAsync },
	{ "cuMemAllocFromPoolAsync_ptsz", (void *)cuMemAllocFromPoolAsync_ptsz },
	{ "cuMemFreeAsync", (void *)cuMemFreeAsync }, { "cuMemFreeAsync_ptsz", (void *)cuMemFreeAsync_ptsz },
	{ "cuMemAllocManaged", (void *)cuMemAllocManaged }, { "cuMemCreate", (void *)cuMemCreate },
	{ "cuMemRelease", (void *)cuMemRelease }, { "cuArrayCreate_v2", (void *)cuArrayCreate_v2 },
	{ "cuArray3DCreate_v2", (void *)cuArray3DCreate_v2 }, { "cuArrayDestroy", (void *)cuArrayDestroy },
	{ "cuMemGetInfo_v2", (void *)cuMemGetInfo_v2 }, { "cuDeviceTotalMem_v2", (void *)cuDeviceTotalMem_v2 },
	{ "cuGetProcAddress_v2", (void *)cuGetProcAddress_v2 },
	{ "cuLaunchKernel", (void *)cuLaunchKernel }, { "cuLaunchKernel_ptsz", (void *)cuLaunchKernel_ptsz },
	{ "cuLaunchKernelEx", (void *)cuLaunchKernelEx },
	{ "cuLaunchKernelEx_ptsz", (void *)cuLaunchKernelEx_ptsz },
	{ "cuModuleGetFunction", (void *)cuModuleGetFunction },
	{ "cuFuncGetName", (void *)cuFuncGetName },
	{ "cuGraphLaunch", (void *)cuGraphLaunch }, { "cuGraphLaunch_ptsz", (void *)cuGraphLaunch_ptsz },
	{ "cuStreamBeginCapture_v2", (void *)cuStreamBeginCapture_v2 },
	{ "cuStreamEndCapture", (void *)cuStreamEndCapture },
	{ "cuMemcpyHtoD_v2", (void *)cuMemcpyHtoD_v2 }, { "cuMemcpyHtoD_v2_ptds", (void *)cuMemcpyHtoD_v2_ptds },
	{ "cuMemcpyDtoH_v2", (void *)cuMemcpyDtoH_v2 },
	{ "cuMemAddressReserve", (void *)cuMemAddressReserve },
	{ "cuMemAddressFree", (void *)cuMemAddressFree }, { "cuMemMap", (void *)cuMemMap },
	{ "cuMemUnmap", (void *)cuMemUnmap }, { "cuMemSetAccess", (void *)cuMemSetAccess },
	{ "cuMemGetAllocationGranularity", (void *)cuMemGetAllocationGranularity },
	{ "cuCtxGetCurrent", (void *)cuCtxGetCurrent },
	{ "cuMemGetAddressRange_v2", (void *)cuMemGetAddressRange_v2 },
	{ "cuIpcGetMemHandle", (void *)cuIpcGetMemHandle },
	{ "cuIpcOpenMemHandle_v2", (void *)cuIpcOpenMemHandle_v2 },
	{ "cuIpcCloseMemHandle", (void *)cuIpcCloseMemHandle },
	{ "cuMemExportToShareableHandle", (void *)cuMemExportToShareableHandle },
	{ "cuMemImportFromShareableHandle", (void *)cuMemImportFromShareableHandle },
	/* NCCL's calls on shared memory */
	{ "cuMemRetainAllocationHandle", (void *)cuMemRetainAllocationHandle },
	{ "cuMemGetAllocationPropertiesFromHandle",
	    (void *)cuMemGetAllocationPropertiesFromHandle },
};

static void *
fake_lookup(const char *name)
{
	size_t i;

	for (i = 0; i < sizeof(fake_syms) / sizeof(fake_syms[0]); i++)
		if (strcmp(fake_syms[i].name, name) == 0)
			return fake_syms[i].fn;
	return NULL;
}

/* The driver's resolution: versioned names from 3020, _ptsz on request. */
static CUresult
fake_resolve(const char *sym, void **pfn, int version, cuuint64_t flags)
{
	static const char *const v2[] = { "cuMemAlloc", "cuMemFree", "cuMemAllocPitch",
	    "cuMemGetInfo", "cuDeviceTotalMem", "cuArrayCreate", "cuArray3DCreate",
	    "cuGetProcAddress", "cuMemcpyHtoD", "cuMemcpyDtoH", "cuIpcOpenMemHandle",
	    "cuStreamBeginCapture", NULL };
	static const char *const ptsz[] = { "cuMemAllocAsync", "cuMemAllocFromPoolAsync",
	    "cuMemFreeAsync", "cuLaunchKernel", "cuLaunchKernelEx", "cuGraphLaunch", NULL };
	static const char *const ptds[] = { "cuMemcpyHtoD", NULL };
	char name[128];
	int i;

	count("cuGetProcAddress");
	strncpy(name, sym, sizeof(name) - 16);
	name[sizeof(name) - 16] = '\0';
	for (i = 0; v2[i]; i++)
		if (strcmp(sym, v2[i]) == 0 && version >= (strcmp(sym, "cuGetProcAddress") == 0 ?
		    12000 : strcmp(sym, "cuIpcOpenMemHandle") == 0 ? 11000 :
		    strcmp(sym, "cuStreamBeginCapture") == 0 ? 10010 : 3020))
			strcat(name, "_v2");
	for (i = 0; ptsz[i]; i++)
		if (strcmp(sym, ptsz[i]) == 0 && (flags & CU_GET_PROC_ADDRESS_PER_THREAD_DEFAULT_STREAM))
			strcat(name, "_ptsz");
	for (i = 0; ptds[i]; i++)
		if (strcmp(sym, ptds[i]) == 0 && (flags & CU_GET_PROC_ADDRESS_PER_THREAD_DEFAULT_STREAM))
			strcat(name, "_ptds");
	if ((*pfn = fake_lookup(name)) == NULL)
		return 500;	/* CUDA_ERROR_NOT_FOUND */
	return CUDA_SUCCESS;
}

E CUresult cuGetProcAddress(const char *, void **, int, cuuint64_t);
E CUresult
cuGetProcAddress(const char *sym, void **pfn, int version, cuuint64_t flags)
{
	return fake_resolve(sym, pfn, version, flags);
}

E CUresult
cuGetProcAddress_v2(const char *sym, void **pfn, int version, cuuint64_t flags,
    CUdriverProcAddressQueryResult *st)
{
	CUresult r = fake_resolve(sym, pfn, version, flags);

	if (st != NULL)
		*st = r == CUDA_SUCCESS ? 0 : 1;
	return r;
}
