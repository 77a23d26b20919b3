/*
 * xmem.c: device memory shared NCCL's way, moved out and back (see xmem.h).
 *
 * Two tables under one mutex: allocations (a handle the job made or
 * imported, with what it takes to make it again) and mappings (an address
 * range of one allocation, with its access).  Linear scans: a job shares
 * tens to hundreds of buffers, and these calls are off its hot path.
 */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "ipc.h"
#include "proc.h"
#include "xmem.h"
#include "xreg.h"

#ifndef SYS_pidfd_open
#define SYS_pidfd_open	434
#endif
#ifndef SYS_pidfd_getfd
#define SYS_pidfd_getfd	438
#endif
#define XMEM_ACC	16	/* access descriptors kept per mapping */
#define XMEM_FDS	32	/* kept descriptors per allocation: one per export */
#define XMEM_WAIT	60.0	/* seconds an importer waits for its exporter's memory */
#define XMEM_ERR_INVALID	1
#define XMEM_ERR_OS		304

typedef void *CUcontext;

struct xmem_alloc {
	int		used;
	CUmemGenericAllocationHandle app;	/* the job's value for it */
	CUmemGenericAllocationHandle real;	/* the driver's, while refs > 0 and in */
	struct nvq_cu_mem_allocation_prop prop;
	size_t		size;		/* 0: not known (an import from outside the table) */
	int		refs;		/* the job's references to its handle */
	int		imported;
	int		out;		/* a suspend has it out */
	const char	*bad;		/* why it cannot be moved; NULL if it can */
	CUcontext	ctx;		/* where it was made or imported */
	int		nfd;		/* an export: descriptors kept, one per export */
	struct { int fd, row; uint32_t gen; } fds[XMEM_FDS];
	int		row;		/* an import: its exporter's row */
	uint32_t	gen;
	int32_t		rfd;		/* the exporter's kept descriptor */
	int		pidfd;		/* of the exporter, -1 if none */
	void		*stage;		/* its bytes while out (an export) */
};

struct xmem_map {
	int		used;
	CUdeviceptr	va;
	size_t		size, off;
	int		a;		/* its allocation's index */
	int		nacc;
	struct nvq_cu_mem_access_desc acc[XMEM_ACC];
};

static struct {
	pthread_mutex_t	mu;
	pthread_cond_t	cv;
	int		on;
	int		out;		/* some of it is out: callers wait */
	int		null_fd;	/* /dev/null + 1 */
	struct xmem_alloc *a;
	int		na, capa;
	struct xmem_map	*m;
	int		nm, capm;
	CUresult (*create)(CUmemGenericAllocationHandle *, size_t,
			    const struct nvq_cu_mem_allocation_prop *, unsigned long long);
	CUresult (*release)(CUmemGenericAllocationHandle);
	CUresult (*map)(CUdeviceptr, size_t, size_t, CUmemGenericAllocationHandle,
			    unsigned long long);
	CUresult (*unmap)(CUdeviceptr, size_t);
	CUresult (*set_access)(CUdeviceptr, size_t, const struct nvq_cu_mem_access_desc *,
			    size_t);
	CUresult (*export)(void *, CUmemGenericAllocationHandle, int, unsigned long long);
	CUresult (*import)(CUmemGenericAllocationHandle *, void *, int);
	CUresult (*retain)(CUmemGenericAllocationHandle *, void *);
	CUresult (*props)(struct nvq_cu_mem_allocation_prop *, CUmemGenericAllocationHandle);
	CUresult (*reserve)(CUdeviceptr *, size_t, size_t, CUdeviceptr, unsigned long long);
	CUresult (*addr_free)(CUdeviceptr, size_t);
	CUresult (*dtoh)(void *, CUdeviceptr, size_t);
	CUresult (*htod)(CUdeviceptr, const void *, size_t);
	CUresult (*ctx_get)(CUcontext *);
	CUresult (*ctx_push)(CUcontext);
	CUresult (*ctx_pop)(CUcontext *);
	CUresult (*ctx_sync)(void);
	void	(*log)(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
} X = { .mu = PTHREAD_MUTEX_INITIALIZER, .cv = PTHREAD_COND_INITIALIZER };

void
xmem_init(int on, const char *share_path, void *(*sym)(const char *),
    void (*log)(const char *fmt, ...) __attribute__((format(printf, 1, 2))))
{
#define SYM(field, name) (*(void **)&X.field = sym(name)) != NULL
	X.log = log;
	if (!on)
		return;
	X.on = SYM(create, "cuMemCreate") && SYM(release, "cuMemRelease") &&
	    SYM(map, "cuMemMap") && SYM(unmap, "cuMemUnmap") &&
	    SYM(set_access, "cuMemSetAccess") && SYM(export, "cuMemExportToShareableHandle") &&
	    SYM(import, "cuMemImportFromShareableHandle") &&
	    SYM(retain, "cuMemRetainAllocationHandle") &&
	    SYM(props, "cuMemGetAllocationPropertiesFromHandle") &&
	    SYM(reserve, "cuMemAddressReserve") && SYM(addr_free, "cuMemAddressFree") &&
	    SYM(dtoh, "cuMemcpyDtoH_v2") && SYM(htod, "cuMemcpyHtoD_v2") &&
	    SYM(ctx_get, "cuCtxGetCurrent") && SYM(ctx_push, "cuCtxPushCurrent_v2") &&
	    SYM(ctx_pop, "cuCtxPopCurrent_v2") && SYM(ctx_sync, "cuCtxSynchronize");
#undef SYM
	/* without the job's table an importer cannot find its exporter: nothing to follow */
	if (X.on && xreg_open(share_path) == -1) {
		X.on = 0;
		log("shared memory: no table beside the job's account: NCCL's buffers stay "
		    "unmovable");
	}
}

static double
xmem_now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* Waits, under X.mu, while a suspend has the memory out. */
static void
xmem_wait(void)
{
	while (X.out)
		pthread_cond_wait(&X.cv, &X.mu);
}

/* ---- the tables ---- */

/* The allocation the job knows as h (refs > 0), or -1. */
static int
xmem_by_handle(CUmemGenericAllocationHandle h)
{
	int i;

	for (i = 0; i < X.na; i++)
		if (X.a[i].used && X.a[i].refs > 0 && X.a[i].app == h)
			return i;
	return -1;
}

/* The mapping that holds p, or -1. */
static int
xmem_by_addr(CUdeviceptr p)
{
	int i;

	for (i = 0; i < X.nm; i++)
		if (X.m[i].used && p >= X.m[i].va && p - X.m[i].va < X.m[i].size)
			return i;
	return -1;
}

static int
xmem_new_alloc(void)
{
	struct xmem_alloc *na;
	int i;

	for (i = 0; i < X.na; i++)
		if (!X.a[i].used)
			break;
	if (i == X.na && X.na == X.capa) {
		if ((na = realloc(X.a, (size_t)(X.capa ? 2 * X.capa : 64) * sizeof(*na))) == NULL)
			return -1;
		X.a = na;
		X.capa = X.capa ? 2 * X.capa : 64;
	}
	if (i == X.na)
		X.na++;
	memset(&X.a[i], 0, sizeof(X.a[i]));
	X.a[i].used = 1;
	X.a[i].pidfd = -1;
	X.a[i].row = -1;
	return i;
}

static int
xmem_new_map(void)
{
	struct xmem_map *nm;
	int i;

	for (i = 0; i < X.nm; i++)
		if (!X.m[i].used)
			break;
	if (i == X.nm && X.nm == X.capm) {
		if ((nm = realloc(X.m, (size_t)(X.capm ? 2 * X.capm : 64) * sizeof(*nm))) == NULL)
			return -1;
		X.m = nm;
		X.capm = X.capm ? 2 * X.capm : 64;
	}
	if (i == X.nm)
		X.nm++;
	memset(&X.m[i], 0, sizeof(X.m[i]));
	X.m[i].used = 1;
	return i;
}

static int
xmem_mapped(int a)
{
	int i, n = 0;

	for (i = 0; i < X.nm; i++)
		n += X.m[i].used && X.m[i].a == a;
	return n;
}

/* An allocation the job holds no handle to and maps nowhere is gone: so is its share. */
static void
xmem_forget_if_done(int a)
{
	struct xmem_alloc *x = &X.a[a];
	int k;

	if (x->refs > 0 || xmem_mapped(a) > 0)
		return;
	for (k = 0; k < x->nfd; k++) {
		xreg_drop(x->fds[k].row, x->fds[k].gen);
		close(x->fds[k].fd);
	}
	if (x->pidfd >= 0)
		close(x->pidfd);
	if (x->stage != NULL)
		munmap(x->stage, x->size);
	x->used = 0;
}

/* A handle value for the job that no allocation it holds has: the driver's if free. */
static CUmemGenericAllocationHandle
xmem_app_value(CUmemGenericAllocationHandle real)
{
	CUmemGenericAllocationHandle v = real;

	/* a value the driver reused after a move released it: another, never the driver's */
	while (xmem_by_handle(v) >= 0)
		v = (v | (1ull << 63)) + 1;
	return v;
}

void
xmem_created(CUmemGenericAllocationHandle h, size_t size,
    const struct nvq_cu_mem_allocation_prop *prop)
{
	int a;

	if (!X.on || !(prop->requestedHandleTypes & NVQ_CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR))
		return;	/* memory no other process can map */
	pthread_mutex_lock(&X.mu);
	if ((a = xmem_new_alloc()) >= 0) {
		X.a[a].app = xmem_app_value(h);
		X.a[a].real = h;
		X.a[a].prop = *prop;
		X.a[a].size = size;
		X.a[a].refs = 1;
		if (X.ctx_get(&X.a[a].ctx) != CUDA_SUCCESS)
			X.a[a].ctx = NULL;
		if (X.a[a].app != h)
			X.log("shared memory: the driver's handle %llx is the job's for moved memory",
			    (unsigned long long)h);
	}
	pthread_mutex_unlock(&X.mu);
}

void
xmem_imported(CUmemGenericAllocationHandle h, int fd)
{
	struct nvq_cu_mem_allocation_prop prop;
	struct xreg_row row;
	uint32_t gen;
	int a, k, pidfd;

	memset(&row, 0, sizeof(row));
	if (!X.on || X.props(&prop, h) != CUDA_SUCCESS ||
	    prop.location.type != NVQ_CU_MEM_LOCATION_TYPE_DEVICE)
		return;	/* host memory (NCCL's proxy buffers): the driver's to keep */
	k = xreg_find(fd, &row, &gen);
	pidfd = k >= 0 ? (int)syscall(SYS_pidfd_open, (pid_t)row.pid, 0) : -1;
	if (pidfd >= 0)
		fcntl(pidfd, F_SETFD, FD_CLOEXEC);
	pthread_mutex_lock(&X.mu);
	if ((a = xmem_new_alloc()) < 0) {
		pthread_mutex_unlock(&X.mu);
		if (pidfd >= 0)
			close(pidfd);
		return;
	}
	X.a[a].app = xmem_app_value(h);
	X.a[a].real = h;
	X.a[a].prop = prop;
	X.a[a].refs = 1;
	X.a[a].imported = 1;
	if (X.ctx_get(&X.a[a].ctx) != CUDA_SUCCESS)
		X.a[a].ctx = NULL;
	if (k < 0 || pidfd < 0 || proc_start_time(row.pid) != row.start) {
		X.a[a].bad = "imported from a process not in the job's table";
		if (pidfd >= 0)
			close(pidfd);
	} else {
		X.a[a].size = row.size;
		X.a[a].row = k;
		X.a[a].gen = gen;
		X.a[a].rfd = row.fd;
		X.a[a].pidfd = pidfd;
	}
	pthread_mutex_unlock(&X.mu);
	X.log("shared memory: imported %llu bytes from process %d%s", (unsigned long long)row.size,
	    k >= 0 ? (int)row.pid : -1, k >= 0 ? "" : " (unknown: it cannot be moved)");
}

int
xmem_release(CUmemGenericAllocationHandle h, CUresult *r, int *last)
{
	struct xmem_alloc *x;
	int a;

	if (!X.on)
		return 0;
	pthread_mutex_lock(&X.mu);
	xmem_wait();
	if ((a = xmem_by_handle(h)) < 0) {
		pthread_mutex_unlock(&X.mu);
		return 0;
	}
	x = &X.a[a];
	*r = CUDA_SUCCESS;
	/* the driver holds one reference for all of the job's: the last one gives it back */
	if ((*last = x->refs == 1) && (*r = X.release(x->real)) != CUDA_SUCCESS)
		*last = 0;
	else {
		x->refs--;
		xmem_forget_if_done(a);
	}
	pthread_mutex_unlock(&X.mu);
	return 1;
}

int
xmem_map(CUdeviceptr va, size_t size, size_t off, CUmemGenericAllocationHandle h,
    unsigned long long flags, CUresult *r)
{
	int a, k;

	if (!X.on)
		return 0;
	pthread_mutex_lock(&X.mu);
	xmem_wait();
	if ((a = xmem_by_handle(h)) < 0) {
		pthread_mutex_unlock(&X.mu);
		return 0;
	}
	if ((*r = X.map(va, size, off, X.a[a].real, flags)) == CUDA_SUCCESS) {
		if ((k = xmem_new_map()) < 0)
			X.a[a].bad = "no memory to follow its mappings";
		else {
			X.m[k].va = va;
			X.m[k].size = size;
			X.m[k].off = off;
			X.m[k].a = a;
		}
	}
	pthread_mutex_unlock(&X.mu);
	return 1;
}

int
xmem_unmap(CUdeviceptr va, size_t size, CUresult *r)
{
	int k, a, any = 0;

	if (!X.on)
		return 0;
	pthread_mutex_lock(&X.mu);
	xmem_wait();
	for (k = 0; k < X.nm && !any; k++)
		any = X.m[k].used && X.m[k].va >= va && X.m[k].va - va < size;
	if (!any) {
		pthread_mutex_unlock(&X.mu);
		return 0;
	}
	if ((*r = X.unmap(va, size)) == CUDA_SUCCESS)
		for (k = 0; k < X.nm; k++)
			if (X.m[k].used && X.m[k].va >= va && X.m[k].va - va < size) {
				X.m[k].used = 0;
				a = X.m[k].a;
				xmem_forget_if_done(a);
			}
	pthread_mutex_unlock(&X.mu);
	return 1;
}

int
xmem_set_access(CUdeviceptr va, size_t size, const struct nvq_cu_mem_access_desc *d, size_t n,
    CUresult *r)
{
	struct xmem_map *m;
	int k, any = 0;

	if (!X.on)
		return 0;
	pthread_mutex_lock(&X.mu);
	xmem_wait();
	for (k = 0; k < X.nm && !any; k++)
		any = X.m[k].used && X.m[k].va < va + size && va < X.m[k].va + X.m[k].size;
	if (!any) {
		pthread_mutex_unlock(&X.mu);
		return 0;
	}
	if ((*r = X.set_access(va, size, d, n)) == CUDA_SUCCESS)
		for (k = 0; k < X.nm; k++) {
			m = &X.m[k];
			if (!m->used || !(m->va < va + size && va < m->va + m->size))
				continue;
			/* what it grants now, per location, replacing what it granted there before */
			for (size_t i = 0; i < n; i++) {
				int j;

				for (j = 0; j < m->nacc && (m->acc[j].location.type !=
				    d[i].location.type || m->acc[j].location.id != d[i].location.id); j++)
					;
				if (j == m->nacc && m->nacc == XMEM_ACC) {
					X.a[m->a].bad = "more access descriptors than the hook keeps";
					continue;
				}
				m->acc[j] = d[i];
				if (j == m->nacc)
					m->nacc++;
			}
		}
	pthread_mutex_unlock(&X.mu);
	return 1;
}

int
xmem_export(void *out, CUmemGenericAllocationHandle h, int type, unsigned long long flags,
    CUresult *r)
{
	struct xmem_alloc *x;
	const char *why;
	size_t size;
	int a, fd, keep, row = -1;
	uint32_t gen = 0;

	if (!X.on)
		return 0;
	pthread_mutex_lock(&X.mu);
	xmem_wait();
	if ((a = xmem_by_handle(h)) < 0) {
		pthread_mutex_unlock(&X.mu);
		return 0;
	}
	x = &X.a[a];
	if ((*r = X.export(out, x->real, type, flags)) != CUDA_SUCCESS ||
	    type != NVQ_CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR) {
		if (*r == CUDA_SUCCESS)
			x->bad = "exported to a handle type other than a POSIX descriptor";
		pthread_mutex_unlock(&X.mu);
		return 1;
	}
	fd = *(int *)out;
	if (x->imported)
		x->bad = "another process's memory, exported again";
	else if (x->nfd == XMEM_FDS)
		x->bad = "exported more times than the hook keeps descriptors for";
	else if ((keep = fcntl(fd, F_DUPFD_CLOEXEC, 0)) == -1)
		x->bad = "no descriptor to keep";
	else if ((row = xreg_add(keep, x->size, &gen)) < 0) {
		close(keep);
		x->bad = "the job's table of exports is full";
	} else {
		x->fds[x->nfd].fd = keep;
		x->fds[x->nfd].row = row;
		x->fds[x->nfd++].gen = gen;
	}
	size = x->size;
	why = x->bad;
	pthread_mutex_unlock(&X.mu);
	/* the importer takes the new memory from this process after a suspend */
	if (row >= 0)
		ipc_allow_peers();
	X.log("shared memory: %zu bytes exported%s%s", size, row >= 0 ? "" : ": cannot be "
	    "moved: ", row >= 0 || why == NULL ? "" : why);
	return 1;
}

int
xmem_retain(CUmemGenericAllocationHandle *h, void *p, CUresult *r)
{
	struct xmem_alloc *x;
	int k;

	if (!X.on)
		return 0;
	pthread_mutex_lock(&X.mu);
	xmem_wait();
	if ((k = xmem_by_addr((CUdeviceptr)(uintptr_t)p)) < 0) {
		pthread_mutex_unlock(&X.mu);
		return 0;
	}
	x = &X.a[X.m[k].a];
	*r = CUDA_SUCCESS;
	if (x->refs == 0) {
		/* the job released every handle: the driver's new one is the job's again */
		if ((*r = X.retain(&x->real, p)) == CUDA_SUCCESS)
			x->app = xmem_app_value(x->real);
	}
	if (*r == CUDA_SUCCESS) {
		x->refs++;
		*h = x->app;
	}
	pthread_mutex_unlock(&X.mu);
	return 1;
}

CUmemGenericAllocationHandle
xmem_real(CUmemGenericAllocationHandle h)
{
	int a;

	if (!X.on)
		return h;
	pthread_mutex_lock(&X.mu);
	xmem_wait();
	if ((a = xmem_by_handle(h)) >= 0)
		h = X.a[a].real;
	pthread_mutex_unlock(&X.mu);
	return h;
}

/* ---- moving ---- */

/* Bytes of an allocation: known, or what it maps here. */
static uint64_t
xmem_bytes(int a)
{
	uint64_t n = 0;
	int k;

	if (X.a[a].size > 0)
		return X.a[a].size;
	for (k = 0; k < X.nm; k++)
		if (X.m[k].used && X.m[k].a == a)
			n += X.m[k].size;
	return n;
}

/* Whether a suspend moves it: exported to the table, or imported from it. */
static int
xmem_moves(const struct xmem_alloc *x)
{
	return x->used && (x->nfd > 0 || x->imported);
}

/* Why it cannot be moved now, or NULL. */
static const char *
xmem_why_not(const struct xmem_alloc *x)
{
	if (x->bad != NULL)
		return x->bad;
	if (x->imported && xreg_state(x->row, x->gen) == 0)
		return "the memory of a process that has ended (or freed it), mapped here";
	return NULL;
}

uint64_t
xmem_unmovable(void)
{
	uint64_t n = 0;
	int a;

	if (!X.on)
		return 0;
	pthread_mutex_lock(&X.mu);
	for (a = 0; a < X.na; a++)
		if (xmem_moves(&X.a[a]) || X.a[a].bad != NULL)
			if (!X.a[a].out && xmem_why_not(&X.a[a]) != NULL)
				n += xmem_bytes(a);
	pthread_mutex_unlock(&X.mu);
	return n;
}

static int
xmem_null(void)
{
	if (X.null_fd == 0)
		X.null_fd = 1 + open("/dev/null", O_RDONLY | O_CLOEXEC);
	return X.null_fd - 1;
}

/* Copies an allocation between host and device through a mapping of all of it here. */
static CUresult
xmem_copy(int a, int out)
{
	struct xmem_alloc *x = &X.a[a];
	struct nvq_cu_mem_access_desc d;
	CUdeviceptr va = 0, tmp = 0;
	CUcontext old;
	CUresult r;
	int k;

	for (k = 0; k < X.nm && va == 0; k++)
		if (X.m[k].used && X.m[k].a == a && X.m[k].off == 0 && X.m[k].size >= x->size)
			va = X.m[k].va;
	if (va == 0) {
		/* mapped only in part here: a whole view of it, for the copy */
		memset(&d, 0, sizeof(d));
		d.location.type = NVQ_CU_MEM_LOCATION_TYPE_DEVICE;
		d.location.id = x->prop.location.id;
		d.flags = NVQ_CU_MEM_ACCESS_FLAGS_PROT_READWRITE;
		if ((r = X.reserve(&tmp, x->size, 0, 0, 0)) != CUDA_SUCCESS)
			return r;
		if ((r = X.map(tmp, x->size, 0, x->real, 0)) != CUDA_SUCCESS) {
			X.addr_free(tmp, x->size);
			return r;
		}
		if ((r = X.set_access(tmp, x->size, &d, 1)) != CUDA_SUCCESS) {
			X.unmap(tmp, x->size);
			X.addr_free(tmp, x->size);
			return r;
		}
		va = tmp;
	}
	if ((r = X.ctx_push(x->ctx)) == CUDA_SUCCESS) {
		r = out ? X.dtoh(x->stage, va, x->size) : X.htod(va, x->stage, x->size);
		X.ctx_pop(&old);
	}
	if (tmp != 0) {
		X.unmap(tmp, x->size);
		X.addr_free(tmp, x->size);
	}
	return r;
}

/* Unmaps every mapping of a here, keeping the ranges. */
static CUresult
xmem_unmap_all(int a)
{
	CUresult r = CUDA_SUCCESS;
	int k;

	for (k = 0; k < X.nm && r == CUDA_SUCCESS; k++)
		if (X.m[k].used && X.m[k].a == a)
			r = X.unmap(X.m[k].va, X.m[k].size);
	return r;
}

/* Maps a's new handle where it was mapped, with the access it had. */
static CUresult
xmem_map_all(int a)
{
	CUresult r = CUDA_SUCCESS;
	int k;

	for (k = 0; k < X.nm && r == CUDA_SUCCESS; k++) {
		if (!X.m[k].used || X.m[k].a != a)
			continue;
		r = X.map(X.m[k].va, X.m[k].size, X.m[k].off, X.a[a].real, 0);
		if (r == CUDA_SUCCESS && X.m[k].nacc > 0)
			r = X.set_access(X.m[k].va, X.m[k].size, X.m[k].acc, (size_t)X.m[k].nacc);
	}
	return r;
}

static void
xmem_sync(CUcontext ctx)
{
	CUcontext old;

	if (ctx != NULL && X.ctx_push(ctx) == CUDA_SUCCESS) {
		X.ctx_sync();
		X.ctx_pop(&old);
	}
}

/* Moves one allocation out: the step that failed, or NULL. */
static const char *
xmem_out_one(int a, CUresult *r)
{
	struct xmem_alloc *x = &X.a[a];
	int k;

	xmem_sync(x->ctx);
	if (!x->imported) {
		x->stage = mmap(NULL, x->size, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS,
		    -1, 0);
		if (x->stage == MAP_FAILED) {
			x->stage = NULL;
			*r = XMEM_ERR_OS;
			return "getting host memory";
		}
		if ((*r = xmem_copy(a, 1)) != CUDA_SUCCESS)
			return "copying out";
		for (k = 0; k < x->nfd; k++)
			xreg_set(x->fds[k].row, x->fds[k].gen, XREG_OUT);
	}
	if ((*r = xmem_unmap_all(a)) != CUDA_SUCCESS)
		return "unmapping";
	if (x->refs > 0 && X.release(x->real) != CUDA_SUCCESS)
		X.log("shared memory: cannot release the handle of %zu bytes", x->size);
	/* the descriptors peers took it by: the numbers stay taken, the memory goes */
	for (k = 0; k < x->nfd; k++)
		if (dup3(xmem_null(), x->fds[k].fd, O_CLOEXEC) == -1)
			X.log("shared memory: cannot put /dev/null in place of descriptor %d: %s",
			    x->fds[k].fd, strerror(errno));
	x->out = 1;
	return NULL;
}

int
xmem_out(uint64_t *bytes, uint64_t *left, char *err, size_t errlen)
{
	const char *why, *step = NULL;
	CUresult r = CUDA_SUCCESS;
	int a, moved;

	if (!X.on)
		return 0;
	pthread_mutex_lock(&X.mu);
	/* all of it can move, or none of it does */
	for (a = 0; a < X.na; a++) {
		if (!X.a[a].used || !(xmem_moves(&X.a[a]) || X.a[a].bad))
			continue;
		if ((why = xmem_why_not(&X.a[a])) != NULL) {
			*left += xmem_bytes(a);
			if (err[0] == '\0')
				snprintf(err, errlen, "%llu bytes of shared memory cannot be moved: %s",
				    (unsigned long long)xmem_bytes(a), why);
		}
	}
	if (err[0] == '\0' && xmem_null() < 0)
		snprintf(err, errlen, "cannot open /dev/null: %s", strerror(errno));
	if (err[0] != '\0') {
		pthread_mutex_unlock(&X.mu);
		return -1;
	}
	for (a = 0; a < X.na; a++) {
		if (!xmem_moves(&X.a[a]) || X.a[a].out)
			continue;
		if (step != NULL) {
			*left += xmem_bytes(a);
			continue;
		}
		/* from the first one out, the job's calls on them wait */
		__atomic_store_n(&X.out, 1, __ATOMIC_RELEASE);
		if ((step = xmem_out_one(a, &r)) != NULL) {
			snprintf(err, errlen, "%s %llu bytes of shared memory: CUDA error %d", step,
			    (unsigned long long)xmem_bytes(a), (int)r);
			*left += xmem_bytes(a);
		} else if (!X.a[a].imported)
			*bytes += X.a[a].size;
	}
	moved = X.out;
	pthread_mutex_unlock(&X.mu);
	if (moved)
		X.log("shared memory out: %llu bytes%s%s", (unsigned long long)*bytes,
		    step ? ": " : "", step ? err : "");
	return step == NULL ? 0 : -1;
}

/* Makes an export of this process again and puts its new descriptor in place. */
static const char *
xmem_in_own(int a, CUresult *r)
{
	struct xmem_alloc *x = &X.a[a];
	int k, fd = -1;

	if ((*r = X.create(&x->real, x->size, &x->prop, 0)) != CUDA_SUCCESS)
		return "making again";
	if ((*r = xmem_map_all(a)) != CUDA_SUCCESS) {
		xmem_unmap_all(a);
		X.release(x->real);
		return "mapping again";
	}
	if ((*r = xmem_copy(a, 0)) != CUDA_SUCCESS ||
	    (*r = X.export(&fd, x->real, NVQ_CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR, 0)) !=
	    CUDA_SUCCESS) {
		xmem_unmap_all(a);
		X.release(x->real);
		return "copying in or exporting";
	}
	for (k = 0; k < x->nfd; k++) {
		if (dup3(fd, x->fds[k].fd, O_CLOEXEC) == -1)
			X.log("shared memory: cannot put descriptor %d back: %s", x->fds[k].fd,
			    strerror(errno));
		xreg_set(x->fds[k].row, x->fds[k].gen, XREG_IN);
	}
	close(fd);
	if (x->refs == 0)
		X.release(x->real);	/* the job had released it: its mappings hold it */
	munmap(x->stage, x->size);
	x->stage = NULL;
	x->out = 0;
	return NULL;
}

/* Imports another process's memory again, once its exporter has made it again. */
static const char *
xmem_in_import(int a, CUresult *r)
{
	struct xmem_alloc *x = &X.a[a];
	double until = xmem_now() + XMEM_WAIT;
	int st, fd;

	while ((st = xreg_state(x->row, x->gen)) == XREG_OUT && xmem_now() < until)
		usleep(2000);
	*r = XMEM_ERR_OS;
	if (st != XREG_IN)
		return st == 0 ? "waiting for its exporter, which has ended," :
		    "waiting for its exporter (60 s) for";
	if ((fd = (int)syscall(SYS_pidfd_getfd, x->pidfd, x->rfd, 0)) == -1)
		return "taking the exporter's descriptor of";
	*r = X.import(&x->real, (void *)(intptr_t)fd, NVQ_CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR);
	close(fd);
	if (*r != CUDA_SUCCESS)
		return "importing again";
	if ((*r = xmem_map_all(a)) != CUDA_SUCCESS) {
		xmem_unmap_all(a);
		X.release(x->real);
		return "mapping again";
	}
	if (x->refs == 0)
		X.release(x->real);
	x->out = 0;
	return NULL;
}

int
xmem_in(int pass, uint64_t *bytes, uint64_t *left, char *err, size_t errlen)
{
	const char *step = NULL;
	CUresult r = CUDA_SUCCESS;
	int a, still = 0;

	if (!X.on)
		return 0;
	pthread_mutex_lock(&X.mu);
	for (a = 0; a < X.na; a++) {
		if (!X.a[a].used || !X.a[a].out || X.a[a].imported != (pass == 1))
			continue;
		if (step == NULL && (step = pass == 0 ? xmem_in_own(a, &r) :
		    xmem_in_import(a, &r)) != NULL)
			snprintf(err, errlen, "%s %llu bytes of shared memory: CUDA error %d", step,
			    (unsigned long long)xmem_bytes(a), (int)r);
		if (X.a[a].out)
			*left += xmem_bytes(a);
		else if (pass == 0)
			*bytes += X.a[a].size;
	}
	for (a = 0; a < X.na; a++)
		still += X.a[a].used && X.a[a].out;
	if (still == 0 && X.out) {
		__atomic_store_n(&X.out, 0, __ATOMIC_RELEASE);
		pthread_cond_broadcast(&X.cv);
	}
	pthread_mutex_unlock(&X.mu);
	if (step != NULL)
		X.log("shared memory in: %s", err);
	return step == NULL ? 0 : -1;
}

int
xmem_resident(void)
{
	return !__atomic_load_n(&X.out, __ATOMIC_ACQUIRE);
}

void
xmem_child(void)
{
	pthread_mutex_init(&X.mu, NULL);
	pthread_cond_init(&X.cv, NULL);
	X.a = NULL;
	X.na = X.capa = 0;
	X.m = NULL;
	X.nm = X.capm = 0;
	X.out = 0;
}
