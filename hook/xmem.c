/*
 * xmem.c: device memory shared NCCL's way, moved out and back (see xmem.h).
 *
 * Two tables under one mutex: allocations (a handle the job made or
 * imported, with what it takes to make it again) and mappings (an address
 * range of one allocation, with its access).  Linear scans: a job shares
 * tens to hundreds of buffers, and these calls are off its hot path.
 *
 * The job's handle values: the driver's at first.  Once a move released a
 * driver handle (X.moved), the driver may hand that value out again while
 * the job still holds it for the moved memory; then the job gets another
 * value for the new handle (top bit set, which the driver's do not have),
 * through *h, whether the memory is followed here or not (an alias row:
 * only the value, translated on every call), so that a value the job holds
 * names one allocation only.
 */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "peerfd.h"
#include "proc.h"
#include "xmem.h"
#include "xreg.h"

#define XMEM_ACC	16	/* access descriptors kept per mapping */
#define XMEM_FDS	32	/* kept descriptors per allocation: one per export */
#define XMEM_POLL_US	2000	/* an importer looks at its exporter's row this often, */
#define XMEM_POLLS	30000	/* this many times (60 s) at most */
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
	int		exported;	/* exported once at least, to whatever handle type */
	int		out;		/* a suspend has it out */
	int		alias;		/* not shared memory: only the job's value for a driver handle */
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
	int		gone;		/* unmapped by a move (its range kept) */
	int		nacc;
	struct nvq_cu_mem_access_desc acc[XMEM_ACC];
};

/* The driver's functions xmem.c calls: field, name, type. */
#define XMEM_DRIVER(F) \
	F(create, "cuMemCreate", CUresult (*)(CUmemGenericAllocationHandle *, size_t, \
	    const struct nvq_cu_mem_allocation_prop *, unsigned long long)) \
	F(release, "cuMemRelease", CUresult (*)(CUmemGenericAllocationHandle)) \
	F(map, "cuMemMap", CUresult (*)(CUdeviceptr, size_t, size_t, \
	    CUmemGenericAllocationHandle, unsigned long long)) \
	F(unmap, "cuMemUnmap", CUresult (*)(CUdeviceptr, size_t)) \
	F(set_access, "cuMemSetAccess", CUresult (*)(CUdeviceptr, size_t, \
	    const struct nvq_cu_mem_access_desc *, size_t)) \
	F(export, "cuMemExportToShareableHandle", CUresult (*)(void *, \
	    CUmemGenericAllocationHandle, int, unsigned long long)) \
	F(import, "cuMemImportFromShareableHandle", CUresult (*)( \
	    CUmemGenericAllocationHandle *, void *, int)) \
	F(retain, "cuMemRetainAllocationHandle", CUresult (*)(CUmemGenericAllocationHandle *, \
	    void *)) \
	F(props, "cuMemGetAllocationPropertiesFromHandle", CUresult (*)( \
	    struct nvq_cu_mem_allocation_prop *, CUmemGenericAllocationHandle)) \
	F(reserve, "cuMemAddressReserve", CUresult (*)(CUdeviceptr *, size_t, size_t, \
	    CUdeviceptr, unsigned long long)) \
	F(addr_free, "cuMemAddressFree", CUresult (*)(CUdeviceptr, size_t)) \
	F(dtoh, "cuMemcpyDtoH_v2", CUresult (*)(void *, CUdeviceptr, size_t)) \
	F(htod, "cuMemcpyHtoD_v2", CUresult (*)(CUdeviceptr, const void *, size_t)) \
	F(ctx_get, "cuCtxGetCurrent", CUresult (*)(CUcontext *)) \
	F(ctx_push, "cuCtxPushCurrent_v2", CUresult (*)(CUcontext)) \
	F(ctx_pop, "cuCtxPopCurrent_v2", CUresult (*)(CUcontext *)) \
	F(ctx_sync, "cuCtxSynchronize", CUresult (*)(void))

#define XMEM_FIELD(field, name, type) __typeof__(type) field;
struct xmem_driver {
	XMEM_DRIVER(XMEM_FIELD)
};
#undef XMEM_FIELD

static struct xmem_state {
	pthread_mutex_t	mu;
	pthread_cond_t	cv;
	int		on;
	int		out;		/* some of it is out: callers wait */
	int		shared;		/* something was exported or imported (never reset) */
	int		moved;		/* a move released a driver handle (never reset) */
	struct xmem_alloc *a;
	int		na, capa;
	struct xmem_map	*m;
	int		nm, capm;
	struct xmem_driver d;
	void	(*log)(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
} X = { .mu = PTHREAD_MUTEX_INITIALIZER, .cv = PTHREAD_COND_INITIALIZER };

#define XMEM_ROW(field, name, type) { name, offsetof(struct xmem_driver, field) },
static const struct { const char *name; size_t at; } xmem_fns[] = { XMEM_DRIVER(XMEM_ROW) };
#undef XMEM_ROW

void
xmem_init(int on, const char *share_path, void *(*sym)(const char *),
    void (*log)(const char *fmt, ...) __attribute__((format(printf, 1, 2))))
{
	size_t i;
	void *f;

	X.log = log;
	if (!on)
		return;
	for (i = 0; i < sizeof(xmem_fns) / sizeof(xmem_fns[0]); i++) {
		if ((f = sym(xmem_fns[i].name)) == NULL)
			return;	/* an older driver: its exports stay unmovable */
		memcpy((char *)&X.d + xmem_fns[i].at, &f, sizeof(f));
	}
	/* without the job's table an importer cannot find its exporter: nothing to follow */
	if (xreg_open(share_path) == -1) {
		log("shared memory: no table beside the job's account: NCCL's buffers stay "
		    "unmovable");
		return;
	}
	X.on = 1;
}

/* Waits, under X.mu, while a suspend has the memory out. */
static void
xmem_wait(void)
{
	while (X.out)
		pthread_cond_wait(&X.cv, &X.mu);
}

/* ---- the tables ---- */

static int xmem_by_handle(CUmemGenericAllocationHandle);

/*
 * The allocation the job knows as h, with X.mu held once the memory is in;
 * -1 with X.mu released if h is not one of these (or xmem is off).
 */
static int
xmem_lock_handle(CUmemGenericAllocationHandle h)
{
	int a;

	if (!X.on)
		return -1;
	pthread_mutex_lock(&X.mu);
	xmem_wait();
	if ((a = xmem_by_handle(h)) < 0)
		pthread_mutex_unlock(&X.mu);
	return a;
}

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

/*
 * A free slot of a table of rows of size bytes whose first member is an int
 * "used" (grown by doubling): its index, zeroed and marked used; -1.
 */
static int
xmem_slot(void **tab, int *n, int *cap, size_t size)
{
	char *nt;
	int i;

	for (i = 0; i < *n; i++)
		if (!*(int *)((char *)*tab + (size_t)i * size))
			break;
	if (i == *n && *n == *cap) {
		if ((nt = realloc(*tab, (size_t)(*cap ? 2 * *cap : 64) * size)) == NULL)
			return -1;
		*tab = nt;
		*cap = *cap ? 2 * *cap : 64;
	}
	if (i == *n)
		(*n)++;
	memset((char *)*tab + (size_t)i * size, 0, size);
	*(int *)((char *)*tab + (size_t)i * size) = 1;
	return i;
}

static int
xmem_new_alloc(void)
{
	int i = xmem_slot((void **)&X.a, &X.na, &X.capa, sizeof(*X.a));

	if (i >= 0) {
		X.a[i].pidfd = -1;
		X.a[i].row = -1;
	}
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

/*
 * A driver handle not followed here, new to the job (made, imported or
 * retained): *h becomes the job's value for it, another than the driver's
 * if the job holds that one for moved memory.  0, or -1 (no memory for
 * the row: the caller gives the handle back).  X.mu held.
 */
static int
xmem_value_locked(CUmemGenericAllocationHandle *h)
{
	int a;

	for (a = 0; a < X.na; a++)
		if (X.a[a].used && X.a[a].alias && X.a[a].refs > 0 && X.a[a].real == *h) {
			/* retained again: the job's references share the driver's one */
			X.d.release(*h);
			X.a[a].refs++;
			*h = X.a[a].app;
			return 0;
		}
	if (xmem_by_handle(*h) < 0)
		return 0;
	if ((a = xmem_new_alloc()) < 0)
		return -1;
	X.a[a].alias = 1;
	X.a[a].real = *h;
	X.a[a].app = xmem_app_value(*h);
	X.a[a].refs = 1;
	X.log("shared memory: the driver's handle %llx is the job's for moved memory: %llx "
	    "stands for it", (unsigned long long)*h, (unsigned long long)X.a[a].app);
	*h = X.a[a].app;
	return 0;
}

/* The same, taking X.mu; nothing to do before a move released a handle. */
static CUresult
xmem_value(CUmemGenericAllocationHandle *h)
{
	int rc;

	if (!__atomic_load_n(&X.moved, __ATOMIC_ACQUIRE))
		return CUDA_SUCCESS;
	pthread_mutex_lock(&X.mu);
	if ((rc = xmem_value_locked(h)) == -1)
		X.d.release(*h);
	pthread_mutex_unlock(&X.mu);
	return rc == 0 ? CUDA_SUCCESS : CUDA_ERROR_OUT_OF_MEMORY;
}

CUresult
xmem_created(CUmemGenericAllocationHandle *h, size_t size,
    const struct nvq_cu_mem_allocation_prop *prop)
{
	int a;

	if (!X.on)
		return CUDA_SUCCESS;
	if (prop == NULL || prop->location.type != NVQ_CU_MEM_LOCATION_TYPE_DEVICE ||
	    !(prop->requestedHandleTypes & NVQ_CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR))
		return xmem_value(h);	/* memory no other process can map */
	pthread_mutex_lock(&X.mu);
	if ((a = xmem_new_alloc()) >= 0) {
		X.a[a].app = xmem_app_value(*h);
		X.a[a].real = *h;
		X.a[a].prop = *prop;
		X.a[a].size = size;
		X.a[a].refs = 1;
		if (X.d.ctx_get(&X.a[a].ctx) != CUDA_SUCCESS)
			X.a[a].ctx = NULL;
		if (X.a[a].app != *h)
			X.log("shared memory: the driver's handle %llx is the job's for moved memory: "
			    "%llx stands for it", (unsigned long long)*h,
			    (unsigned long long)X.a[a].app);
		*h = X.a[a].app;
	} else if (xmem_value_locked(h) == -1) {
		pthread_mutex_unlock(&X.mu);
		X.d.release(*h);
		return CUDA_ERROR_OUT_OF_MEMORY;
	}
	pthread_mutex_unlock(&X.mu);
	return CUDA_SUCCESS;
}

CUresult
xmem_imported(CUmemGenericAllocationHandle *h, void *os, int type)
{
	struct nvq_cu_mem_allocation_prop prop;
	struct xreg_row row;
	uint32_t gen;
	int a, k, pidfd;

	memset(&row, 0, sizeof(row));
	if (!X.on)
		return CUDA_SUCCESS;
	if (type != NVQ_CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR ||
	    X.d.props(&prop, *h) != CUDA_SUCCESS ||
	    prop.location.type != NVQ_CU_MEM_LOCATION_TYPE_DEVICE)
		return xmem_value(h);	/* host memory (NCCL's proxy buffers): the driver's to keep */
	k = xreg_find((int)(intptr_t)os, &row, &gen);
	pidfd = k >= 0 ? peerfd_pidfd((pid_t)row.pid) : -1;
	pthread_mutex_lock(&X.mu);
	if ((a = xmem_new_alloc()) < 0) {
		a = xmem_value_locked(h);
		pthread_mutex_unlock(&X.mu);
		if (pidfd >= 0)
			close(pidfd);
		if (a == -1)
			X.d.release(*h);
		return a == -1 ? CUDA_ERROR_OUT_OF_MEMORY : CUDA_SUCCESS;
	}
	X.a[a].app = xmem_app_value(*h);
	X.a[a].real = *h;
	*h = X.a[a].app;
	X.a[a].prop = prop;
	X.a[a].refs = 1;
	X.a[a].imported = 1;
	__atomic_store_n(&X.shared, 1, __ATOMIC_RELEASE);
	if (X.d.ctx_get(&X.a[a].ctx) != CUDA_SUCCESS)
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
	return CUDA_SUCCESS;
}

int
xmem_release(CUmemGenericAllocationHandle h, CUresult *r, int *last)
{
	struct xmem_alloc *x;
	int a;

	if ((a = xmem_lock_handle(h)) < 0)
		return 0;
	x = &X.a[a];
	*r = CUDA_SUCCESS;
	/* the driver holds one reference for all of the job's: the last one gives it back */
	if ((*last = x->refs == 1) && (*r = X.d.release(x->real)) != CUDA_SUCCESS)
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

	if ((a = xmem_lock_handle(h)) < 0)
		return 0;
	if ((*r = X.d.map(va, size, off, X.a[a].real, flags)) == CUDA_SUCCESS) {
		if ((k = xmem_slot((void **)&X.m, &X.nm, &X.capm, sizeof(*X.m))) < 0)
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
	if ((*r = X.d.unmap(va, size)) == CUDA_SUCCESS)
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
	if ((*r = X.d.set_access(va, size, d, n)) == CUDA_SUCCESS)
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

	if ((a = xmem_lock_handle(h)) < 0)
		return 0;
	x = &X.a[a];
	if (x->alias) {
		/* not followed: the caller exports the driver's handle (xmem_real) */
		pthread_mutex_unlock(&X.mu);
		return 0;
	}
	if ((*r = X.d.export(out, x->real, type, flags)) == CUDA_SUCCESS) {
		x->exported = 1;
		__atomic_store_n(&X.shared, 1, __ATOMIC_RELEASE);
	}
	if (*r != CUDA_SUCCESS ||
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
	if (row >= 0 && peerfd_allow() == -1)
		X.log("shared memory: PR_SET_PTRACER: %s", strerror(errno));
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
		/* memory not followed: the driver's handle, under a value of the job's own */
		if ((*r = X.d.retain(h, p)) == CUDA_SUCCESS && X.moved &&
		    xmem_value_locked(h) == -1) {
			X.d.release(*h);
			*r = CUDA_ERROR_OUT_OF_MEMORY;
		}
		pthread_mutex_unlock(&X.mu);
		return 1;
	}
	x = &X.a[X.m[k].a];
	*r = CUDA_SUCCESS;
	if (x->refs == 0) {
		/* the job released every handle: the driver's new one is the job's again */
		if ((*r = X.d.retain(&x->real, p)) == CUDA_SUCCESS)
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

	if ((a = xmem_lock_handle(h)) < 0)
		return h;
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

/* Whether other processes map it (or may): exported or imported. */
static int
xmem_shared(const struct xmem_alloc *x)
{
	return x->used && (x->exported || x->imported);
}

/* Why it cannot be moved now, or NULL. */
static const char *
xmem_why_not(const struct xmem_alloc *x)
{
	if (x->bad != NULL)
		return x->bad;
	/* its exporter ended (its pidfd reads), or freed it (its row given back) */
	if (x->imported && (poll(&(struct pollfd){ .fd = x->pidfd, .events = POLLIN }, 1, 0) != 0 ||
	    !xreg_held(x->row, x->gen)))
		return "the memory of a process that has ended (or freed it), mapped here";
	return NULL;
}

uint64_t
xmem_unmovable(void)
{
	uint64_t n = 0;
	int a;

	/* read at every tick of the link: nothing to walk until something was shared */
	if (!__atomic_load_n(&X.shared, __ATOMIC_ACQUIRE))
		return 0;
	pthread_mutex_lock(&X.mu);
	for (a = 0; a < X.na; a++)
		if (xmem_shared(&X.a[a]) && !X.a[a].out && xmem_why_not(&X.a[a]) != NULL)
			n += xmem_bytes(a);
	pthread_mutex_unlock(&X.mu);
	return n;
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
		if (X.m[k].used && X.m[k].a == a && !X.m[k].gone && X.m[k].off == 0 &&
		    X.m[k].size >= x->size)
			va = X.m[k].va;
	if (va == 0) {
		/* mapped only in part here: a whole view of it, for the copy */
		memset(&d, 0, sizeof(d));
		d.location.type = NVQ_CU_MEM_LOCATION_TYPE_DEVICE;
		d.location.id = x->prop.location.id;
		d.flags = NVQ_CU_MEM_ACCESS_FLAGS_PROT_READWRITE;
		if ((r = X.d.reserve(&tmp, x->size, 0, 0, 0)) != CUDA_SUCCESS)
			return r;
		if ((r = X.d.map(tmp, x->size, 0, x->real, 0)) != CUDA_SUCCESS) {
			X.d.addr_free(tmp, x->size);
			return r;
		}
		if ((r = X.d.set_access(tmp, x->size, &d, 1)) != CUDA_SUCCESS) {
			X.d.unmap(tmp, x->size);
			X.d.addr_free(tmp, x->size);
			return r;
		}
		va = tmp;
	}
	if ((r = X.d.ctx_push(x->ctx)) == CUDA_SUCCESS) {
		r = out ? X.d.dtoh(x->stage, va, x->size) : X.d.htod(va, x->stage, x->size);
		X.d.ctx_pop(&old);
	}
	if (tmp != 0) {
		X.d.unmap(tmp, x->size);
		X.d.addr_free(tmp, x->size);
	}
	return r;
}

/*
 * Unmaps every mapping of a that is mapped, keeping the ranges; each one is
 * tried, and marked gone once unmapped.  The first failure, or success.
 */
static CUresult
xmem_unmap_all(int a)
{
	CUresult r = CUDA_SUCCESS, e;
	int k;

	for (k = 0; k < X.nm; k++) {
		if (!X.m[k].used || X.m[k].a != a || X.m[k].gone)
			continue;
		if ((e = X.d.unmap(X.m[k].va, X.m[k].size)) == CUDA_SUCCESS)
			X.m[k].gone = 1;
		else if (r == CUDA_SUCCESS)
			r = e;
	}
	return r;
}

/*
 * Maps a's new handle where a move unmapped it, with the access it had;
 * stops at the first failure (xmem_unmap_all then undoes the rest).
 */
static CUresult
xmem_map_all(int a)
{
	CUresult r = CUDA_SUCCESS;
	int k;

	for (k = 0; k < X.nm && r == CUDA_SUCCESS; k++) {
		if (!X.m[k].used || X.m[k].a != a || !X.m[k].gone)
			continue;
		if ((r = X.d.map(X.m[k].va, X.m[k].size, X.m[k].off, X.a[a].real, 0)) != CUDA_SUCCESS)
			break;
		X.m[k].gone = 0;
		if (X.m[k].nacc > 0)
			r = X.d.set_access(X.m[k].va, X.m[k].size, X.m[k].acc, (size_t)X.m[k].nacc);
	}
	return r;
}

static void
xmem_sync(CUcontext ctx)
{
	CUcontext old;

	if (ctx != NULL && X.d.ctx_push(ctx) == CUDA_SUCCESS) {
		X.d.ctx_sync();
		X.d.ctx_pop(&old);
	}
}

/*
 * Moves one allocation out: the step that failed, or NULL.  Until its
 * bytes are in host memory a failure changes nothing; from then on it goes
 * out whatever fails (x->out set, its rows XREG_OUT): a mapping that would
 * not unmap holds the old memory here until xmem_in unmaps it, and every
 * process takes the new memory then, so that it stays one memory.
 */
static const char *
xmem_out_one(int a, CUresult *r)
{
	struct xmem_alloc *x = &X.a[a];
	const char *step = NULL;
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
		if ((*r = xmem_copy(a, 1)) != CUDA_SUCCESS) {
			munmap(x->stage, x->size);
			x->stage = NULL;
			return "copying out";
		}
		for (k = 0; k < x->nfd; k++)
			xreg_set(x->fds[k].row, x->fds[k].gen, XREG_OUT);
	}
	x->out = 1;
	if ((*r = xmem_unmap_all(a)) != CUDA_SUCCESS)
		step = "unmapping";
	if (x->refs > 0 && X.d.release(x->real) != CUDA_SUCCESS)
		X.log("shared memory: cannot release the handle of %zu bytes", x->size);
	/* the descriptors peers took it by: the numbers stay taken, the memory goes */
	for (k = 0; k < x->nfd; k++)
		if (dup3(peerfd_null(), x->fds[k].fd, O_CLOEXEC) == -1)
			X.log("shared memory: cannot put /dev/null in place of descriptor %d: %s",
			    x->fds[k].fd, strerror(errno));
	return step;
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
		if (!xmem_shared(&X.a[a]))
			continue;
		if ((why = xmem_why_not(&X.a[a])) != NULL) {
			*left += xmem_bytes(a);
			if (err[0] == '\0')
				snprintf(err, errlen, "%llu bytes of shared memory cannot be moved: %s",
				    (unsigned long long)xmem_bytes(a), why);
		}
	}
	if (err[0] == '\0' && peerfd_null() < 0)
		snprintf(err, errlen, "cannot open /dev/null: %s", strerror(errno));
	if (err[0] != '\0') {
		pthread_mutex_unlock(&X.mu);
		return -1;
	}
	/* from here the driver may hand out a value the job holds (xmem_value) */
	__atomic_store_n(&X.moved, 1, __ATOMIC_RELEASE);
	for (a = 0; a < X.na; a++) {
		if (!xmem_moves(&X.a[a]) || X.a[a].out)
			continue;
		if (step != NULL) {
			*left += xmem_bytes(a);
			continue;
		}
		if ((step = xmem_out_one(a, &r)) != NULL) {
			snprintf(err, errlen, "%s %llu bytes of shared memory: CUDA error %d", step,
			    (unsigned long long)xmem_bytes(a), (int)r);
			*left += xmem_bytes(a);
		} else if (!X.a[a].imported)
			*bytes += X.a[a].size;
	}
	/* the job's calls on them wait while any is out (xmem_in brings it back) */
	for (a = 0, moved = 0; a < X.na; a++)
		moved |= X.a[a].used && X.a[a].out;
	__atomic_store_n(&X.out, moved, __ATOMIC_RELEASE);
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

	/* a mapping that would not unmap on the way out still holds the old memory */
	if ((*r = xmem_unmap_all(a)) != CUDA_SUCCESS)
		return "unmapping what stayed mapped of";
	if ((*r = X.d.create(&x->real, x->size, &x->prop, 0)) != CUDA_SUCCESS)
		return "making again";
	if ((*r = xmem_map_all(a)) != CUDA_SUCCESS) {
		xmem_unmap_all(a);
		X.d.release(x->real);
		return "mapping again";
	}
	if ((*r = xmem_copy(a, 0)) != CUDA_SUCCESS ||
	    (*r = X.d.export(&fd, x->real, NVQ_CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR, 0)) !=
	    CUDA_SUCCESS) {
		xmem_unmap_all(a);
		X.d.release(x->real);
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
		X.d.release(x->real);	/* the job had released it: its mappings hold it */
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
	int st, fd, polls = 0;

	if ((*r = xmem_unmap_all(a)) != CUDA_SUCCESS)
		return "unmapping what stayed mapped of";
	while ((st = xreg_state(x->row, x->gen)) == XREG_OUT && polls++ < XMEM_POLLS)
		usleep(XMEM_POLL_US);
	*r = XMEM_ERR_OS;
	if (st != XREG_IN)
		return st == 0 ? "waiting for its exporter, which has ended," :
		    "waiting for its exporter (60 s) for";
	if ((fd = peerfd_take(x->pidfd, x->rfd)) == -1)
		return "taking the exporter's descriptor of";
	*r = X.d.import(&x->real, (void *)(intptr_t)fd, NVQ_CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR);
	close(fd);
	if (*r != CUDA_SUCCESS)
		return "importing again";
	if ((*r = xmem_map_all(a)) != CUDA_SUCCESS) {
		xmem_unmap_all(a);
		X.d.release(x->real);
		return "mapping again";
	}
	if (x->refs == 0)
		X.d.release(x->real);
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
	int a, k;

	/*
	 * The parent's kept descriptors and pidfds are copies here: they would
	 * hold its memory after a suspend let go of it (forked DataLoader
	 * workers live on).  The tables are the parent's: dropped.
	 */
	for (a = 0; a < X.na; a++) {
		if (!X.a[a].used)
			continue;
		for (k = 0; k < X.a[a].nfd; k++)
			close(X.a[a].fds[k].fd);
		if (X.a[a].pidfd >= 0)
			close(X.a[a].pidfd);
		if (X.a[a].stage != NULL)
			munmap(X.a[a].stage, X.a[a].size);
	}
	free(X.a);
	free(X.m);
	pthread_mutex_init(&X.mu, NULL);
	pthread_cond_init(&X.cv, NULL);
	X.a = NULL;
	X.na = X.capa = 0;
	X.m = NULL;
	X.nm = X.capm = 0;
	X.out = 0;
}
