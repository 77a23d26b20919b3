/*
 * hook.c: libnvq-hook.so, put into every job with LD_PRELOAD.
 *
 * It keeps the job's device memory under NVQ_GPU_MEM bytes per GPU and
 * makes the job see that budget as its GPU's memory.  Frameworks reach the
 * driver three ways, and all three lead here:
 *   - the driver's exported symbols (programs linked with -lcuda): the hook
 *     exports the same names;
 *   - dlsym (Triton, CuPy, ...): the hook's dlsym, exported under both glibc
 *     versions that callers bind to, asks the real dlsym;
 *   - cuGetProcAddress and cuGetProcAddress_v2 (libcudart, so PyTorch): the
 *     hook's versions ask the real resolver, honouring version and flags.
 * Whatever the resolver returns is looked up among the real functions the
 * hook wraps, by address, so each variant (legacy, _v2, per-thread-stream
 * _ptsz) gets its own wrapper calling exactly that variant.  Anything else
 * is passed through untouched.
 *
 * The hook never exits, aborts or writes to stdout: when something fails it
 * passes the call through or returns a CUDA error, and says why once on
 * stderr if NVQ_DEBUG is set.  The environment is read once.  Only the
 * CUDA, NVML and dl names are exported (-fvisibility=hidden, hook.map).
 */
#include <dlfcn.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "budget.h"
#include "cuda_decls.h"
#include "cut.h"
#include "gate.h"
#include "ipc.h"
#include "lcbe.h"
#include "link.h"
#include "share.h"
#include "offload.h"
#include "xmem.h"

#define EXPORT	__attribute__((visibility("default")))

static struct {
	pthread_mutex_t	lock;
	struct budget	budget;
	int		debug;
	void		*(*dlsym)(void *, const char *);
	void		*cuda;		/* the real libcuda */
	int		opening;
	void		*nvml;		/* the real NVML */
	int		nvml_opening;
	int		(*nvml_uuid)(void *, char *, unsigned int);
	char		visible[1024];	/* CUDA_VISIBLE_DEVICES */
	CUresult	(*ctx_get_device)(CUdevice *);
	/* for link.c: UUIDs, and draining the GPU on a revoke */
	CUresult	(*device_get)(CUdevice *, int);
	CUresult	(*device_uuid)(unsigned char *, CUdevice);
	CUresult	(*primary_state)(CUdevice, unsigned int *, int *);
	CUresult	(*primary_retain)(void **, CUdevice);
	CUresult	(*primary_release)(CUdevice);
	CUresult	(*ctx_push)(void *);
	CUresult	(*ctx_pop)(void **);
	CUresult	(*ctx_sync)(void);
	uint64_t	drv_exported;	/* the driver's IPC handles of memory not in budget */
} hook = { .lock = PTHREAD_MUTEX_INITIALIZER };

static pthread_once_t hook_once = PTHREAD_ONCE_INIT;

/* What link.c may ask of the hook (link.h). */
static void	hook_log(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static int	hook_usage(uint64_t *used, uint64_t *peak, int max);
static int	hook_uuid(int dev, char *buf, size_t len);
static void	hook_sync(int ndev);
static void	hook_set_cap(int dev, uint64_t cap);
static uint64_t	hook_unmovable(void);
static const struct link_ops hook_link_ops = {
	.log = hook_log, .usage = hook_usage, .uuid = hook_uuid, .sync = hook_sync,
	.set_cap = hook_set_cap, .unmovable = hook_unmovable,
};

static void
hook_log(const char *fmt, ...)
{
	va_list ap;

	if (!hook.debug)
		return;
	fprintf(stderr, "nvq-hook: ");
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
}

static void
hook_child_cb(void)
{
	/* a forked child holds none of its parent's device memory */
	pthread_mutex_init(&hook.lock, NULL);
	budget_free(&hook.budget);
	budget_init(&hook.budget, hook.budget.limit);
	hook.drv_exported = 0;
	share_child();
	offload_child();
	xmem_child();
	ipc_child();
	link_child();
}

/* Reads the environment, once. */
static void
hook_init_cb(void)
{
	const char *mem = getenv("NVQ_GPU_MEM"), *v = getenv("CUDA_VISIBLE_DEVICES"), *sup;
	unsigned long long limit = 0;

	hook.debug = getenv("NVQ_DEBUG") != NULL && *getenv("NVQ_DEBUG") != '\0';
	if (mem != NULL && sscanf(mem, "%llu", &limit) != 1)
		limit = 0;
	budget_init(&hook.budget, limit);
	/* the job's account, shared by all its processes */
	if (limit > 0 && share_open(getenv("NVQ_SHARE")) == 0)
		hook_log("one account with the job's other processes (%s)", getenv("NVQ_SHARE"));
	snprintf(hook.visible, sizeof(hook.visible), "%s", v ? v : "");
	sup = getenv("NVQ_SUPERVISOR");
	ipc_init(sup != NULL ? (pid_t)atoi(sup) : 0, hook_log);
	pthread_atfork(NULL, NULL, hook_child_cb);
	hook_log("budget %llu bytes per GPU", limit);
	link_start(&hook_link_ops);
}

static void
hook_init(void)
{
	pthread_once(&hook_once, hook_init_cb);
}

/* The real dlsym, found with dlvsym (which nobody interposes). */
static void *
hook_real_dlsym(void *handle, const char *name)
{
	if (hook.dlsym == NULL) {
		*(void **)&hook.dlsym = dlvsym(RTLD_NEXT, "dlsym", "GLIBC_2.34");
		if (hook.dlsym == NULL)
			*(void **)&hook.dlsym = dlvsym(RTLD_NEXT, "dlsym", "GLIBC_2.2.5");
	}
	if (hook.dlsym == NULL || name == NULL)
		return NULL;
	return hook.dlsym(handle, name);
}

static void *hook_cuda_opened;

/* A name in the real libcuda, for offload.c. */
static void *
hook_cuda_sym(const char *name)
{
	return hook_real_dlsym(hook_cuda_opened, name);
}

/* The real libcuda, or NULL (while it is being opened, too: no recursion). */
static void *
hook_cuda(void)
{
	const char *off;
	void *h;

	if (hook.cuda != NULL || __atomic_exchange_n(&hook.opening, 1, __ATOMIC_ACQ_REL))
		return hook.cuda;
	h = dlopen("libcuda.so.1", RTLD_NOW | RTLD_GLOBAL);
	if (h == NULL)
		hook_log("cannot open libcuda.so.1: %s", dlerror());
	else {
		*(void **)&hook.ctx_get_device = hook_real_dlsym(h, "cuCtxGetDevice");
		*(void **)&hook.device_get = hook_real_dlsym(h, "cuDeviceGet");
		*(void **)&hook.device_uuid = hook_real_dlsym(h, "cuDeviceGetUuid");
		*(void **)&hook.primary_state = hook_real_dlsym(h, "cuDevicePrimaryCtxGetState");
		*(void **)&hook.primary_retain = hook_real_dlsym(h, "cuDevicePrimaryCtxRetain");
		*(void **)&hook.primary_release = hook_real_dlsym(h,
		    "cuDevicePrimaryCtxRelease_v2");
		*(void **)&hook.ctx_push = hook_real_dlsym(h, "cuCtxPushCurrent_v2");
		*(void **)&hook.ctx_pop = hook_real_dlsym(h, "cuCtxPopCurrent_v2");
		*(void **)&hook.ctx_sync = hook_real_dlsym(h, "cuCtxSynchronize");
		/* CUDA >= 12.3; without it no kernel is known as NCCL's (cut.h) */
		cut_init((int (*)(const char **, void *))hook_real_dlsym(h, "cuFuncGetName"), -1);
		/* nvqd's [scheduler] offload; read here, once, as libcuda opens */
		off = getenv("NVQ_HOOK_OFFLOAD");
		hook_cuda_opened = h;
		offload_init(off != NULL && strcmp(off, "1") == 0, hook_cuda_sym, hook_log);
		/* NCCL's shared buffers move with the rest (xmem.h) */
		xmem_init(off != NULL && strcmp(off, "1") == 0, getenv("NVQ_SHARE"), hook_cuda_sym,
		    hook_log);
	}
	__atomic_store_n(&hook.cuda, h, __ATOMIC_RELEASE);
	return h;
}

/* The real NVML, opened like libcuda. */
static void *
hook_nvml(void)
{
	void *h;

	if (hook.nvml != NULL || __atomic_exchange_n(&hook.nvml_opening, 1, __ATOMIC_ACQ_REL))
		return hook.nvml;
	if ((h = dlopen("libnvidia-ml.so.1", RTLD_NOW | RTLD_GLOBAL)) != NULL)
		*(void **)&hook.nvml_uuid = hook_real_dlsym(h, "nvmlDeviceGetUUID");
	__atomic_store_n(&hook.nvml, h, __ATOMIC_RELEASE);
	return h;
}

/*
 * The launches and copies that pass through the gate (gate.h): each
 * variant its own wrapper, calling exactly that variant.  Pointer-typed
 * arguments whose structs the hook never reads are declared void *.
 */
#define LAUNCH_P	(void *f, unsigned gx, unsigned gy, unsigned gz, unsigned bx, unsigned by, \
			unsigned bz, unsigned sh, CUstream s, void **p, void **x)
#define LAUNCH_A	(f, gx, gy, gz, bx, by, bz, sh, s, p, x)
#define LAUNCH_EX_P	(const void *c, void *f, void **p, void **x)
#define LAUNCH_EX_A	(c, f, p, x)
#define COOP_P		(void *f, unsigned gx, unsigned gy, unsigned gz, unsigned bx, unsigned by, \
			unsigned bz, unsigned sh, CUstream s, void **p)
#define COOP_A		(f, gx, gy, gz, bx, by, bz, sh, s, p)
#define GRAPH_P		(void *g, CUstream s)
#define GRAPH_A		(g, s)
#define DD_P		(CUdeviceptr d, CUdeviceptr src, size_t n)
#define DD_A		(d, src, n)
#define DDS_P		(CUdeviceptr d, CUdeviceptr src, size_t n, CUstream s)
#define DDS_A		(d, src, n, s)
#define PEER_P		(CUdeviceptr d, void *dc, CUdeviceptr src, void *sc, size_t n)
#define PEER_A		(d, dc, src, sc, n)
#define PEERS_P		(CUdeviceptr d, void *dc, CUdeviceptr src, void *sc, size_t n, CUstream s)
#define PEERS_A		(d, dc, src, sc, n, s)
#define HD_P		(CUdeviceptr d, const void *h, size_t n)
#define HD_A		(d, h, n)
#define HDS_P		(CUdeviceptr d, const void *h, size_t n, CUstream s)
#define HDS_A		(d, h, n, s)
#define DH_P		(void *h, CUdeviceptr d, size_t n)
#define DH_A		(h, d, n)
#define DHS_P		(void *h, CUdeviceptr d, size_t n, CUstream s)
#define DHS_A		(h, d, n, s)
#define CP_P		(const void *c)
#define CP_A		(c)
#define CPS_P		(const void *c, CUstream s)
#define CPS_A		(c, s)
#define MS8_P		(CUdeviceptr d, unsigned char v, size_t n)
#define MS16_P		(CUdeviceptr d, unsigned short v, size_t n)
#define MS32_P		(CUdeviceptr d, unsigned int v, size_t n)
#define MS_A		(d, v, n)
#define MS8S_P		(CUdeviceptr d, unsigned char v, size_t n, CUstream s)
#define MS16S_P		(CUdeviceptr d, unsigned short v, size_t n, CUstream s)
#define MS32S_P		(CUdeviceptr d, unsigned int v, size_t n, CUstream s)
#define MSS_A		(d, v, n, s)
#define M2D8_P		(CUdeviceptr d, size_t pitch, unsigned char v, size_t w, size_t h)
#define M2D16_P		(CUdeviceptr d, size_t pitch, unsigned short v, size_t w, size_t h)
#define M2D32_P		(CUdeviceptr d, size_t pitch, unsigned int v, size_t w, size_t h)
#define M2D_A		(d, pitch, v, w, h)
#define M2D8S_P		(CUdeviceptr d, size_t pitch, unsigned char v, size_t w, size_t h, \
			CUstream s)
#define M2D16S_P	(CUdeviceptr d, size_t pitch, unsigned short v, size_t w, size_t h, \
			CUstream s)
#define M2D32S_P	(CUdeviceptr d, size_t pitch, unsigned int v, size_t w, size_t h, \
			CUstream s)
#define M2DS_A		(d, pitch, v, w, h, s)

/* the launches NCCL uses: counted per communicator when the kernel is NCCL's (cut.h) */
#define HOOK_COUNTED(X) \
	X(cuLaunchKernel, LAUNCH_P, LAUNCH_A) \
	X(cuLaunchKernel_ptsz, LAUNCH_P, LAUNCH_A) \
	X(cuLaunchKernelEx, LAUNCH_EX_P, LAUNCH_EX_A) \
	X(cuLaunchKernelEx_ptsz, LAUNCH_EX_P, LAUNCH_EX_A)

#define HOOK_GATED(X) \
	X(cuLaunchCooperativeKernel, COOP_P, COOP_A) \
	X(cuLaunchCooperativeKernel_ptsz, COOP_P, COOP_A) \
	X(cuGraphLaunch, GRAPH_P, GRAPH_A) \
	X(cuGraphLaunch_ptsz, GRAPH_P, GRAPH_A) \
	X(cuMemcpy, DD_P, DD_A) \
	X(cuMemcpy_ptds, DD_P, DD_A) \
	X(cuMemcpyAsync, DDS_P, DDS_A) \
	X(cuMemcpyAsync_ptsz, DDS_P, DDS_A) \
	X(cuMemcpyPeer, PEER_P, PEER_A) \
	X(cuMemcpyPeer_ptds, PEER_P, PEER_A) \
	X(cuMemcpyPeerAsync, PEERS_P, PEERS_A) \
	X(cuMemcpyPeerAsync_ptsz, PEERS_P, PEERS_A) \
	X(cuMemcpyHtoD_v2, HD_P, HD_A) \
	X(cuMemcpyHtoD_v2_ptds, HD_P, HD_A) \
	X(cuMemcpyDtoH_v2, DH_P, DH_A) \
	X(cuMemcpyDtoH_v2_ptds, DH_P, DH_A) \
	X(cuMemcpyDtoD_v2, DD_P, DD_A) \
	X(cuMemcpyDtoD_v2_ptds, DD_P, DD_A) \
	X(cuMemcpyHtoDAsync_v2, HDS_P, HDS_A) \
	X(cuMemcpyHtoDAsync_v2_ptsz, HDS_P, HDS_A) \
	X(cuMemcpyDtoHAsync_v2, DHS_P, DHS_A) \
	X(cuMemcpyDtoHAsync_v2_ptsz, DHS_P, DHS_A) \
	X(cuMemcpyDtoDAsync_v2, DDS_P, DDS_A) \
	X(cuMemcpyDtoDAsync_v2_ptsz, DDS_P, DDS_A) \
	X(cuMemcpy2D_v2, CP_P, CP_A) \
	X(cuMemcpy2D_v2_ptds, CP_P, CP_A) \
	X(cuMemcpy2DAsync_v2, CPS_P, CPS_A) \
	X(cuMemcpy2DAsync_v2_ptsz, CPS_P, CPS_A) \
	X(cuMemcpy3D_v2, CP_P, CP_A) \
	X(cuMemcpy3D_v2_ptds, CP_P, CP_A) \
	X(cuMemcpy3DAsync_v2, CPS_P, CPS_A) \
	X(cuMemcpy3DAsync_v2_ptsz, CPS_P, CPS_A) \
	X(cuMemsetD8_v2, MS8_P, MS_A) \
	X(cuMemsetD8_v2_ptds, MS8_P, MS_A) \
	X(cuMemsetD16_v2, MS16_P, MS_A) \
	X(cuMemsetD16_v2_ptds, MS16_P, MS_A) \
	X(cuMemsetD32_v2, MS32_P, MS_A) \
	X(cuMemsetD32_v2_ptds, MS32_P, MS_A) \
	X(cuMemsetD8Async, MS8S_P, MSS_A) \
	X(cuMemsetD8Async_ptsz, MS8S_P, MSS_A) \
	X(cuMemsetD16Async, MS16S_P, MSS_A) \
	X(cuMemsetD16Async_ptsz, MS16S_P, MSS_A) \
	X(cuMemsetD32Async, MS32S_P, MSS_A) \
	X(cuMemsetD32Async_ptsz, MS32S_P, MSS_A) \
	X(cuMemsetD2D8_v2, M2D8_P, M2D_A) \
	X(cuMemsetD2D8_v2_ptds, M2D8_P, M2D_A) \
	X(cuMemsetD2D16_v2, M2D16_P, M2D_A) \
	X(cuMemsetD2D16_v2_ptds, M2D16_P, M2D_A) \
	X(cuMemsetD2D32_v2, M2D32_P, M2D_A) \
	X(cuMemsetD2D32_v2_ptds, M2D32_P, M2D_A) \
	X(cuMemsetD2D8Async, M2D8S_P, M2DS_A) \
	X(cuMemsetD2D8Async_ptsz, M2D8S_P, M2DS_A) \
	X(cuMemsetD2D16Async, M2D16S_P, M2DS_A) \
	X(cuMemsetD2D16Async_ptsz, M2D16S_P, M2DS_A) \
	X(cuMemsetD2D32Async, M2D32S_P, M2DS_A) \
	X(cuMemsetD2D32Async_ptsz, M2D32S_P, M2DS_A)

/*
 * Stream capture (CUDA graphs): its beginnings and ends are told to lcbe.c,
 * so that an lc process's watcher never synchronizes while a capture is
 * under way (a synchronize from any thread invalidates a capture of the
 * global mode, PyTorch's default).
 */
#define CAP_P		(CUstream s)
#define CAP_A		(s)
#define CAP2_P		(CUstream s, int mode)
#define CAP2_A		(s, mode)
#define CAPG_P		(CUstream s, void *g, const void *deps, const void *data, size_t n, int mode)
#define CAPG_A		(s, g, deps, data, n, mode)
#define CAPEND_P	(CUstream s, void **g)
#define CAPEND_A	(s, g)
#define HOOK_CAPTURE_BEGIN(X) \
	X(cuStreamBeginCapture, CAP_P, CAP_A) \
	X(cuStreamBeginCapture_ptsz, CAP_P, CAP_A) \
	X(cuStreamBeginCapture_v2, CAP2_P, CAP2_A) \
	X(cuStreamBeginCapture_v2_ptsz, CAP2_P, CAP2_A) \
	X(cuStreamBeginCaptureToGraph, CAPG_P, CAPG_A) \
	X(cuStreamBeginCaptureToGraph_ptsz, CAPG_P, CAPG_A)
#define HOOK_CAPTURE_END(X) \
	X(cuStreamEndCapture, CAPEND_P, CAPEND_A) \
	X(cuStreamEndCapture_ptsz, CAPEND_P, CAPEND_A)

/* ---- the wrapped functions, and where their real counterparts are ---- */

enum hook_fn {
	F_MEM_ALLOC, F_MEM_ALLOC_PITCH, F_MEM_FREE,
	F_MEM_ALLOC_ASYNC, F_MEM_ALLOC_ASYNC_PTSZ,
	F_MEM_ALLOC_POOL, F_MEM_ALLOC_POOL_PTSZ,
	F_MEM_FREE_ASYNC, F_MEM_FREE_ASYNC_PTSZ,
	F_MEM_ALLOC_MANAGED, F_MEM_CREATE, F_MEM_RELEASE, F_MEM_EXPORT,
	F_ARRAY_CREATE, F_ARRAY3D_CREATE, F_ARRAY_DESTROY,
	F_MEM_GET_INFO, F_DEVICE_TOTAL_MEM,
	F_GET_PROC, F_GET_PROC_V2,
	F_IPC_GET, F_IPC_OPEN, F_IPC_OPEN_V2, F_IPC_CLOSE,
	F_MEM_MAP, F_MEM_UNMAP, F_MEM_SET_ACCESS, F_MEM_IMPORT, F_MEM_RETAIN, F_MEM_PROPS,
#define HOOK_ENUM(name, params, args) F_##name,
	HOOK_COUNTED(HOOK_ENUM)
	HOOK_GATED(HOOK_ENUM)
	HOOK_CAPTURE_BEGIN(HOOK_ENUM)
	HOOK_CAPTURE_END(HOOK_ENUM)
#undef HOOK_ENUM
	F_NVML_MEM, F_NVML_MEM_V2,	/* from here on, NVML's */
	F_NFUNCS
};

struct hook_entry {
	const char	*name;		/* as libcuda exports it */
	void		*wrapper;
	void		*real;		/* resolved on first use */
	int		tried;
};

static struct hook_entry hook_table[F_NFUNCS];

static void *
hook_real(enum hook_fn f)
{
	struct hook_entry *e = &hook_table[f];
	void *h;

	if (e->real == NULL && !e->tried &&
	    (h = f >= F_NVML_MEM ? hook_nvml() : hook_cuda()) != NULL) {
		e->real = hook_real_dlsym(h, e->name);
		e->tried = 1;
	}
	return e->real;
}

/* The wrapper for a real function pointer, or the pointer itself. */
static void *
hook_route(void *real)
{
	int f;

	if (real == NULL)
		return NULL;
	for (f = 0; f < F_NFUNCS; f++)
		if (hook_real((enum hook_fn)f) == real)
			return hook_table[f].wrapper;
	return real;
}

#define REAL(f, type) ((type)hook_real(f))
#define NOT_LOADED	NVQ_CUDA_ERROR_NOT_INITIALIZED

static int
hook_device(void)
{
	CUdevice d = 0;

	if (hook.ctx_get_device == NULL || hook.ctx_get_device(&d) != CUDA_SUCCESS)
		return 0;
	return d;
}

/* Takes size from the current device's budget; OOM if it does not fit. */
static CUresult
hook_reserve(size_t size, int dev)
{
	uint64_t used = 0;
	int r;

	hook_init();
	pthread_mutex_lock(&hook.lock);
	r = budget_reserve(&hook.budget, dev, size);
	/* then the job's: this and its other processes together stay within -m */
	if (r == 0 && share_reserve(dev, size, hook.budget.limit) == -1) {
		budget_unreserve(&hook.budget, dev, size);
		r = -1;
	}
	if (r == -1) {
		/* what the job holds there: this process's, or all of its processes' */
		used = hook.budget.used[dev >= 0 && dev < BUDGET_MAX_DEV ? dev : 0];
		if (share_active() && share_total(dev) > used)
			used = share_total(dev);
	}
	pthread_mutex_unlock(&hook.lock);
	if (r == -1) {
		hook_log("refused %zu bytes on device %d: over the budget of %llu", size, dev,
		    (unsigned long long)hook.budget.limit);
		link_refused(dev, size, used, hook.budget.limit);
		return CUDA_ERROR_OUT_OF_MEMORY;
	}
	return CUDA_SUCCESS;
}

/* After the driver's call: record what it gave, or give the size back. */
static CUresult
hook_settle(CUresult r, int kind, uint64_t key, int dev, size_t size)
{
	pthread_mutex_lock(&hook.lock);
	if (r != CUDA_SUCCESS || budget_commit(&hook.budget, kind, key, dev, size) == -1) {
		/* failed; or untracked, not charged */
		budget_unreserve(&hook.budget, dev, size);
		share_release(dev, size);
	}
	pthread_mutex_unlock(&hook.lock);
	return r;
}

static void
hook_forget(int kind, uint64_t key)
{
	hook_init();
	int dev;
	uint64_t size;

	pthread_mutex_lock(&hook.lock);
	if (budget_take(&hook.budget, kind, key, &dev, &size) == 0)
		share_release(dev, size);
	pthread_mutex_unlock(&hook.lock);
}

typedef CUresult (*alloc_fn)(CUdeviceptr *, size_t);
typedef CUresult (*alloc_async_fn)(CUdeviceptr *, size_t, CUstream);
typedef CUresult (*alloc_pool_fn)(CUdeviceptr *, size_t, CUmemoryPool, CUstream);
typedef CUresult (*free_fn)(CUdeviceptr);
typedef CUresult (*free_async_fn)(CUdeviceptr, CUstream);

EXPORT CUresult cuMemAlloc_v2(CUdeviceptr *, size_t);
EXPORT CUresult
cuMemAlloc_v2(CUdeviceptr *p, size_t n)
{
	alloc_fn real = REAL(F_MEM_ALLOC, alloc_fn);
	int dev = hook_device();
	size_t m;
	CUresult r;

	if (real == NULL)
		return NOT_LOADED;
	if ((m = offload_size(n)) > 0) {
		/* through the VMM API, so that a suspend can move it (offload.c) */
		if ((r = hook_reserve(m, dev)) != CUDA_SUCCESS)
			return r;
		if ((r = offload_alloc(p, m, dev)) != OFFLOAD_PASS)
			return hook_settle(r, BUDGET_PTR, r == CUDA_SUCCESS ? *p : 0, dev, m);
		hook_settle(OFFLOAD_PASS, BUDGET_PTR, 0, dev, m);	/* gives m back */
	}
	if ((r = hook_reserve(n, dev)) != CUDA_SUCCESS)
		return r;
	r = real(p, n);
	return hook_settle(r, BUDGET_PTR, r == CUDA_SUCCESS ? *p : 0, dev, n);
}

EXPORT CUresult cuMemAllocPitch_v2(CUdeviceptr *, size_t *, size_t, size_t, unsigned int);
EXPORT CUresult
cuMemAllocPitch_v2(CUdeviceptr *p, size_t *pitch, size_t w, size_t h, unsigned int elem)
{
	CUresult (*real)(CUdeviceptr *, size_t *, size_t, size_t, unsigned int) =
	    hook_real(F_MEM_ALLOC_PITCH);
	/* the pitch is only known after: charge the width rounded up to 512 */
	size_t n = ((w + 511) / 512) * 512 * h;
	int dev = hook_device();
	CUresult r;

	if (real == NULL)
		return NOT_LOADED;
	if ((r = hook_reserve(n, dev)) != CUDA_SUCCESS)
		return r;
	r = real(p, pitch, w, h, elem);
	return hook_settle(r, BUDGET_PTR, r == CUDA_SUCCESS ? *p : 0, dev, n);
}

EXPORT CUresult cuMemFree_v2(CUdeviceptr);
EXPORT CUresult
cuMemFree_v2(CUdeviceptr p)
{
	free_fn real = REAL(F_MEM_FREE, free_fn);
	CUresult r;

	if (real == NULL)
		return NOT_LOADED;
	if (offload_free(p, &r)) {
		if (r == CUDA_SUCCESS)
			hook_forget(BUDGET_PTR, p);
		return r;
	}
	if ((r = real(p)) == CUDA_SUCCESS)
		hook_forget(BUDGET_PTR, p);
	return r;
}

static CUresult
hook_alloc_async(enum hook_fn f, CUdeviceptr *p, size_t n, CUstream s)
{
	alloc_async_fn real = REAL(f, alloc_async_fn);
	int dev = hook_device();
	CUresult r;

	if (real == NULL)
		return NOT_LOADED;
	if ((r = hook_reserve(n, dev)) != CUDA_SUCCESS)
		return r;
	r = real(p, n, s);
	return hook_settle(r, BUDGET_PTR, r == CUDA_SUCCESS ? *p : 0, dev, n);
}

EXPORT CUresult cuMemAllocAsync(CUdeviceptr *, size_t, CUstream);
EXPORT CUresult
cuMemAllocAsync(CUdeviceptr *p, size_t n, CUstream s)
{
	return hook_alloc_async(F_MEM_ALLOC_ASYNC, p, n, s);
}

EXPORT CUresult cuMemAllocAsync_ptsz(CUdeviceptr *, size_t, CUstream);
EXPORT CUresult
cuMemAllocAsync_ptsz(CUdeviceptr *p, size_t n, CUstream s)
{
	return hook_alloc_async(F_MEM_ALLOC_ASYNC_PTSZ, p, n, s);
}

static CUresult
hook_alloc_pool(enum hook_fn f, CUdeviceptr *p, size_t n, CUmemoryPool pool, CUstream s)
{
	alloc_pool_fn real = REAL(f, alloc_pool_fn);
	int dev = hook_device();
	CUresult r;

	if (real == NULL)
		return NOT_LOADED;
	if ((r = hook_reserve(n, dev)) != CUDA_SUCCESS)
		return r;
	r = real(p, n, pool, s);
	return hook_settle(r, BUDGET_PTR, r == CUDA_SUCCESS ? *p : 0, dev, n);
}

EXPORT CUresult cuMemAllocFromPoolAsync(CUdeviceptr *, size_t, CUmemoryPool, CUstream);
EXPORT CUresult
cuMemAllocFromPoolAsync(CUdeviceptr *p, size_t n, CUmemoryPool pool, CUstream s)
{
	return hook_alloc_pool(F_MEM_ALLOC_POOL, p, n, pool, s);
}

EXPORT CUresult cuMemAllocFromPoolAsync_ptsz(CUdeviceptr *, size_t, CUmemoryPool, CUstream);
EXPORT CUresult
cuMemAllocFromPoolAsync_ptsz(CUdeviceptr *p, size_t n, CUmemoryPool pool, CUstream s)
{
	return hook_alloc_pool(F_MEM_ALLOC_POOL_PTSZ, p, n, pool, s);
}

static CUresult
hook_free_async(enum hook_fn f, CUdeviceptr p, CUstream s)
{
	free_async_fn real = REAL(f, free_async_fn);
	CUresult r;

	if (real == NULL)
		return NOT_LOADED;
	/* cuMemAlloc's memory may be freed here too: the VMM path waits for the device */
	if (offload_free(p, &r)) {
		if (r == CUDA_SUCCESS)
			hook_forget(BUDGET_PTR, p);
		return r;
	}
	if ((r = real(p, s)) == CUDA_SUCCESS)
		hook_forget(BUDGET_PTR, p);
	return r;
}

EXPORT CUresult cuMemFreeAsync(CUdeviceptr, CUstream);
EXPORT CUresult
cuMemFreeAsync(CUdeviceptr p, CUstream s)
{
	return hook_free_async(F_MEM_FREE_ASYNC, p, s);
}

EXPORT CUresult cuMemFreeAsync_ptsz(CUdeviceptr, CUstream);
EXPORT CUresult
cuMemFreeAsync_ptsz(CUdeviceptr p, CUstream s)
{
	return hook_free_async(F_MEM_FREE_ASYNC_PTSZ, p, s);
}

EXPORT CUresult cuMemAllocManaged(CUdeviceptr *, size_t, unsigned int);
EXPORT CUresult
cuMemAllocManaged(CUdeviceptr *p, size_t n, unsigned int flags)
{
	CUresult (*real)(CUdeviceptr *, size_t, unsigned int) = hook_real(F_MEM_ALLOC_MANAGED);
	int dev = hook_device();
	CUresult r;

	if (real == NULL)
		return NOT_LOADED;
	/* managed memory can spill past the GPU: counted, and refused beyond the budget */
	if ((r = hook_reserve(n, dev)) != CUDA_SUCCESS)
		return r;
	r = real(p, n, flags);
	return hook_settle(r, BUDGET_PTR, r == CUDA_SUCCESS ? *p : 0, dev, n);
}

EXPORT CUresult cuMemCreate(CUmemGenericAllocationHandle *, size_t,
    const struct nvq_cu_mem_allocation_prop *, unsigned long long);
EXPORT CUresult
cuMemCreate(CUmemGenericAllocationHandle *h, size_t n,
    const struct nvq_cu_mem_allocation_prop *prop, unsigned long long flags)
{
	CUresult (*real)(CUmemGenericAllocationHandle *, size_t,
	    const struct nvq_cu_mem_allocation_prop *, unsigned long long) = hook_real(F_MEM_CREATE);
	int dev;
	CUresult r;

	if (real == NULL)
		return NOT_LOADED;
	/* only device-located handles are device memory (NCCL makes host ones) */
	if (prop == NULL || prop->location.type != CU_MEM_LOCATION_TYPE_DEVICE) {
		/* *h: the job's value for the handle (xmem.h), as below */
		if ((r = real(h, n, prop, flags)) == CUDA_SUCCESS)
			r = xmem_created(h, n, prop);
		return r;
	}
	dev = prop->location.id;
	if ((r = hook_reserve(n, dev)) != CUDA_SUCCESS)
		return r;
	/* followed if another process may map it (NCCL's); charged under the job's value */
	if ((r = real(h, n, prop, flags)) == CUDA_SUCCESS)
		r = xmem_created(h, n, prop);
	return hook_settle(r, BUDGET_HANDLE, r == CUDA_SUCCESS ? *h : 0, dev, n);
}

EXPORT CUresult cuMemRelease(CUmemGenericAllocationHandle);
EXPORT CUresult
cuMemRelease(CUmemGenericAllocationHandle h)
{
	CUresult (*real)(CUmemGenericAllocationHandle) = hook_real(F_MEM_RELEASE);
	CUresult r;

	int last;

	if (real == NULL)
		return NOT_LOADED;
	if (xmem_release(h, &r, &last)) {
		if (last)
			hook_forget(BUDGET_HANDLE, h);
		return r;
	}
	if ((r = real(h)) == CUDA_SUCCESS)
		hook_forget(BUDGET_HANDLE, h);
	return r;
}

/*
 * The VMM calls on memory shared NCCL's way (xmem.h): followed, so that a
 * suspend can move it out of every process and back; the job's handle
 * values are translated to the driver's after a move.  Every other handle
 * and address goes to the driver as it is.
 */
EXPORT CUresult cuMemMap(CUdeviceptr, size_t, size_t, CUmemGenericAllocationHandle,
    unsigned long long);
EXPORT CUresult
cuMemMap(CUdeviceptr va, size_t n, size_t off, CUmemGenericAllocationHandle h,
    unsigned long long flags)
{
	CUresult (*real)(CUdeviceptr, size_t, size_t, CUmemGenericAllocationHandle,
	    unsigned long long) = hook_real(F_MEM_MAP);
	CUresult r;

	if (real == NULL)
		return NOT_LOADED;
	return xmem_map(va, n, off, h, flags, &r) ? r : real(va, n, off, h, flags);
}

EXPORT CUresult cuMemUnmap(CUdeviceptr, size_t);
EXPORT CUresult
cuMemUnmap(CUdeviceptr va, size_t n)
{
	CUresult (*real)(CUdeviceptr, size_t) = hook_real(F_MEM_UNMAP);
	CUresult r;

	if (real == NULL)
		return NOT_LOADED;
	return xmem_unmap(va, n, &r) ? r : real(va, n);
}

EXPORT CUresult cuMemSetAccess(CUdeviceptr, size_t, const struct nvq_cu_mem_access_desc *, size_t);
EXPORT CUresult
cuMemSetAccess(CUdeviceptr va, size_t n, const struct nvq_cu_mem_access_desc *d, size_t count)
{
	CUresult (*real)(CUdeviceptr, size_t, const struct nvq_cu_mem_access_desc *, size_t) =
	    hook_real(F_MEM_SET_ACCESS);
	CUresult r;

	if (real == NULL)
		return NOT_LOADED;
	return xmem_set_access(va, n, d, count, &r) ? r : real(va, n, d, count);
}

EXPORT CUresult cuMemImportFromShareableHandle(CUmemGenericAllocationHandle *, void *, int);
EXPORT CUresult
cuMemImportFromShareableHandle(CUmemGenericAllocationHandle *h, void *os, int type)
{
	CUresult (*real)(CUmemGenericAllocationHandle *, void *, int) = hook_real(F_MEM_IMPORT);
	CUresult r;

	if (real == NULL)
		return NOT_LOADED;
	hook_init();
	if ((r = real(h, os, type)) == CUDA_SUCCESS)
		r = xmem_imported(h, os, type);
	return r;
}

EXPORT CUresult cuMemRetainAllocationHandle(CUmemGenericAllocationHandle *, void *);
EXPORT CUresult
cuMemRetainAllocationHandle(CUmemGenericAllocationHandle *h, void *p)
{
	CUresult (*real)(CUmemGenericAllocationHandle *, void *) = hook_real(F_MEM_RETAIN);
	CUresult r;

	if (real == NULL)
		return NOT_LOADED;
	return xmem_retain(h, p, &r) ? r : real(h, p);
}

EXPORT CUresult cuMemGetAllocationPropertiesFromHandle(struct nvq_cu_mem_allocation_prop *,
    CUmemGenericAllocationHandle);
EXPORT CUresult
cuMemGetAllocationPropertiesFromHandle(struct nvq_cu_mem_allocation_prop *prop,
    CUmemGenericAllocationHandle h)
{
	CUresult (*real)(struct nvq_cu_mem_allocation_prop *, CUmemGenericAllocationHandle) =
	    hook_real(F_MEM_PROPS);

	if (real == NULL)
		return NOT_LOADED;
	return real(prop, xmem_real(h));
}

/* The allocation that holds p (cuMemGetAddressRange): 0, or -1. */
static int
hook_range(CUdeviceptr p, CUdeviceptr *base, size_t *size)
{
	static CUresult (*range)(CUdeviceptr *, size_t *, CUdeviceptr);

	if (range == NULL)
		*(void **)&range = hook_cuda_sym("cuMemGetAddressRange_v2");
	return range != NULL && range(base, size, p) == CUDA_SUCCESS ? 0 : -1;
}

/*
 * The job's own exports of VMM memory (NCCL shares its buffers between
 * ranks this way): other processes map that memory.  With offload on the
 * hook moves it itself (xmem.h); otherwise neither the hook nor the
 * driver's checkpoint can move it, so the process reports it and nvqd does
 * not suspend the job.  The hook's own exports (offload.c) call the driver
 * directly and do not come here.
 */
EXPORT CUresult cuMemExportToShareableHandle(void *, CUmemGenericAllocationHandle, int,
    unsigned long long);
EXPORT CUresult
cuMemExportToShareableHandle(void *out, CUmemGenericAllocationHandle h, int type,
    unsigned long long flags)
{
	CUresult (*real)(void *, CUmemGenericAllocationHandle, int, unsigned long long) =
	    hook_real(F_MEM_EXPORT);
	CUresult r;

	if (real == NULL)
		return NOT_LOADED;
	/* NCCL's buffers: moved with the job on a suspend (xmem.h), unless it says not */
	if (xmem_export(out, h, type, flags, &r))
		return r;
	if ((r = real(out, xmem_real(h), type, flags)) == CUDA_SUCCESS) {
		pthread_mutex_lock(&hook.lock);
		budget_exported(&hook.budget, BUDGET_HANDLE, h);	/* device memory only */
		pthread_mutex_unlock(&hook.lock);
	}
	return r;
}

/*
 * CUDA IPC: the hook's VMM allocations get handles of the hook's own
 * (ipc.h), which the driver could not make; every other handle and
 * pointer goes to the driver.
 */
typedef CUresult (*ipc_open_fn)(CUdeviceptr *, struct nvq_cu_ipc_mem_handle, unsigned int);

EXPORT CUresult cuIpcGetMemHandle(struct nvq_cu_ipc_mem_handle *, CUdeviceptr);
EXPORT CUresult
cuIpcGetMemHandle(struct nvq_cu_ipc_mem_handle *h, CUdeviceptr p)
{
	CUresult (*real)(struct nvq_cu_ipc_mem_handle *, CUdeviceptr) = hook_real(F_IPC_GET);
	CUdeviceptr base;
	size_t size;
	CUresult r;

	if (real == NULL)
		return NOT_LOADED;
	hook_init();
	if ((r = ipc_get(h, p)) != IPC_PASS || (r = real(h, p)) != CUDA_SUCCESS)
		return r;
	/* the driver's handle: this allocation is shared in a way nvq cannot move */
	if (hook_range(p, &base, &size) == 0) {
		pthread_mutex_lock(&hook.lock);
		if (budget_exported(&hook.budget, BUDGET_PTR, base) == -1)
			hook.drv_exported += size;	/* not the hook's to know when it goes */
		pthread_mutex_unlock(&hook.lock);
	}
	return r;
}

static CUresult
hook_ipc_open(enum hook_fn f, CUdeviceptr *p, struct nvq_cu_ipc_mem_handle h, unsigned int fl)
{
	ipc_open_fn real = REAL(f, ipc_open_fn);
	CUdeviceptr base;
	size_t size;
	CUresult r;

	if (real == NULL)
		return NOT_LOADED;
	hook_init();
	if ((r = ipc_open(p, &h)) != IPC_PASS || (r = real(p, h, fl)) != CUDA_SUCCESS)
		return r;
	if (hook_range(*p, &base, &size) == 0)
		ipc_driver_opened(*p, size);
	return r;
}

EXPORT CUresult cuIpcOpenMemHandle(CUdeviceptr *, struct nvq_cu_ipc_mem_handle, unsigned int);
EXPORT CUresult
cuIpcOpenMemHandle(CUdeviceptr *p, struct nvq_cu_ipc_mem_handle h, unsigned int flags)
{
	return hook_ipc_open(F_IPC_OPEN, p, h, flags);
}

EXPORT CUresult cuIpcOpenMemHandle_v2(CUdeviceptr *, struct nvq_cu_ipc_mem_handle, unsigned int);
EXPORT CUresult
cuIpcOpenMemHandle_v2(CUdeviceptr *p, struct nvq_cu_ipc_mem_handle h, unsigned int flags)
{
	return hook_ipc_open(F_IPC_OPEN_V2, p, h, flags);
}

EXPORT CUresult cuIpcCloseMemHandle(CUdeviceptr);
EXPORT CUresult
cuIpcCloseMemHandle(CUdeviceptr p)
{
	CUresult (*real)(CUdeviceptr) = hook_real(F_IPC_CLOSE);
	CUresult r;

	if (real == NULL)
		return NOT_LOADED;
	hook_init();
	if ((r = ipc_close(p)) != IPC_PASS || (r = real(p)) != CUDA_SUCCESS)
		return r;
	ipc_driver_closed(p);
	return r;
}

/* Bytes per element of an array format (its low nibble mostly tells). */
static size_t
hook_format_bytes(int format)
{
	switch (format) {
	case 0x01: case 0x08: case 0xc0: return 1;
	case 0x02: case 0x09: case 0x10: case 0xc1: case 0xc3: return 2;
	case 0x03: case 0x0a: case 0x20: case 0xc2: case 0xc4: return 4;
	default: return 16;	/* wide or block-compressed: count generously */
	}
}

/* An array's bytes; a zero dimension counts as 1, as the driver reads it. */
static size_t
hook_array_bytes(size_t w, size_t h, size_t d, int format, unsigned int channels)
{
	return w * (h ? h : 1) * (d ? d : 1) * hook_format_bytes(format) *
	    (channels ? channels : 1);
}

EXPORT CUresult cuArrayCreate_v2(CUarray *, const struct nvq_cu_array_descriptor *);
EXPORT CUresult
cuArrayCreate_v2(CUarray *a, const struct nvq_cu_array_descriptor *d)
{
	CUresult (*real)(CUarray *, const struct nvq_cu_array_descriptor *) =
	    hook_real(F_ARRAY_CREATE);
	size_t n;
	int dev = hook_device();
	CUresult r;

	if (real == NULL)
		return NOT_LOADED;
	if (d == NULL)
		return real(a, d);
	n = hook_array_bytes(d->Width, d->Height, 1, d->Format, d->NumChannels);
	if ((r = hook_reserve(n, dev)) != CUDA_SUCCESS)
		return r;
	r = real(a, d);
	return hook_settle(r, BUDGET_ARRAY, r == CUDA_SUCCESS ? (uint64_t)(uintptr_t)*a : 0,
	    dev, n);
}

EXPORT CUresult cuArray3DCreate_v2(CUarray *, const struct nvq_cu_array3d_descriptor *);
EXPORT CUresult
cuArray3DCreate_v2(CUarray *a, const struct nvq_cu_array3d_descriptor *d)
{
	CUresult (*real)(CUarray *, const struct nvq_cu_array3d_descriptor *) =
	    hook_real(F_ARRAY3D_CREATE);
	size_t n;
	int dev = hook_device();
	CUresult r;

	if (real == NULL)
		return NOT_LOADED;
	if (d == NULL)
		return real(a, d);
	n = hook_array_bytes(d->Width, d->Height, d->Depth, d->Format, d->NumChannels);
	if ((r = hook_reserve(n, dev)) != CUDA_SUCCESS)
		return r;
	r = real(a, d);
	return hook_settle(r, BUDGET_ARRAY, r == CUDA_SUCCESS ? (uint64_t)(uintptr_t)*a : 0,
	    dev, n);
}

EXPORT CUresult cuArrayDestroy(CUarray);
EXPORT CUresult
cuArrayDestroy(CUarray a)
{
	CUresult (*real)(CUarray) = hook_real(F_ARRAY_DESTROY);
	CUresult r;

	if (real == NULL)
		return NOT_LOADED;
	if ((r = real(a)) == CUDA_SUCCESS)
		hook_forget(BUDGET_ARRAY, (uint64_t)(uintptr_t)a);
	return r;
}

EXPORT CUresult cuMemGetInfo_v2(size_t *, size_t *);
EXPORT CUresult
cuMemGetInfo_v2(size_t *freep, size_t *totalp)
{
	CUresult (*real)(size_t *, size_t *) = hook_real(F_MEM_GET_INFO);
	size_t f = 0, t = 0;
	uint64_t left;
	int dev = hook_device();
	CUresult r;

	if (real == NULL)
		return NOT_LOADED;
	if ((r = real(&f, &t)) != CUDA_SUCCESS)
		return r;
	hook_init();
	if (hook.budget.limit > 0) {
		pthread_mutex_lock(&hook.lock);
		left = budget_left(&hook.budget, dev);
		pthread_mutex_unlock(&hook.lock);
		/* what the job's other processes hold counts too (those that ended, not) */
		share_tidy();
		if (share_active() && share_total(dev) < hook.budget.limit &&
		    hook.budget.limit - share_total(dev) < left)
			left = hook.budget.limit - share_total(dev);
		else if (share_active() && share_total(dev) >= hook.budget.limit)
			left = 0;
		t = hook.budget.limit;
		/* what is left of the budget, unless the GPU itself has less */
		f = left < f ? left : f;
	}
	if (freep != NULL)
		*freep = f;
	if (totalp != NULL)
		*totalp = t;
	return CUDA_SUCCESS;
}

EXPORT CUresult cuDeviceTotalMem_v2(size_t *, CUdevice);
EXPORT CUresult
cuDeviceTotalMem_v2(size_t *bytes, CUdevice dev)
{
	CUresult (*real)(size_t *, CUdevice) = hook_real(F_DEVICE_TOTAL_MEM);
	CUresult r;

	if (real == NULL)
		return NOT_LOADED;
	if ((r = real(bytes, dev)) != CUDA_SUCCESS)
		return r;
	hook_init();
	if (hook.budget.limit > 0 && bytes != NULL && *bytes > hook.budget.limit)
		*bytes = hook.budget.limit;
	return CUDA_SUCCESS;
}

EXPORT CUresult cuGetProcAddress(const char *, void **, int, cuuint64_t);
EXPORT CUresult
cuGetProcAddress(const char *sym, void **pfn, int version, cuuint64_t flags)
{
	CUresult (*real)(const char *, void **, int, cuuint64_t) = hook_real(F_GET_PROC);
	CUresult r;

	if (real == NULL)
		return NOT_LOADED;
	r = real(sym, pfn, version, flags);
	if (r == CUDA_SUCCESS && pfn != NULL)
		*pfn = hook_route(*pfn);
	return r;
}

EXPORT CUresult cuGetProcAddress_v2(const char *, void **, int, cuuint64_t,
    CUdriverProcAddressQueryResult *);
EXPORT CUresult
cuGetProcAddress_v2(const char *sym, void **pfn, int version, cuuint64_t flags,
    CUdriverProcAddressQueryResult *status)
{
	CUresult (*real)(const char *, void **, int, cuuint64_t,
	    CUdriverProcAddressQueryResult *) = hook_real(F_GET_PROC_V2);
	CUresult r;

	if (real == NULL)
		return NOT_LOADED;
	r = real(sym, pfn, version, flags, status);
	if (r == CUDA_SUCCESS && pfn != NULL)
		*pfn = hook_route(*pfn);
	return r;
}

/*
 * The CUDA ordinal of an NVML device, if it is one of the job's: its place
 * among the UUIDs in CUDA_VISIBLE_DEVICES (nvqd lists them by UUID, in
 * PCI bus order).  -1 for a GPU that is not the job's.
 */
static int
hook_nvml_ordinal(void *dev)
{
	char uuid[96], list[sizeof(hook.visible)], *tok, *save;
	int i = 0;

	hook_init();
	if (hook.nvml_uuid == NULL || hook.nvml_uuid(dev, uuid, sizeof(uuid)) != 0)
		return -1;
	snprintf(list, sizeof(list), "%s", hook.visible);
	for (tok = strtok_r(list, ",", &save); tok; tok = strtok_r(NULL, ",", &save), i++)
		if (strcmp(tok, uuid) == 0)
			return i;
	return -1;
}

/* total, free, used of an NVML device as the job may see them */
static int
hook_nvml_view(void *dev, unsigned long long *total, unsigned long long *freep,
    unsigned long long *used)
{
	int i = hook_nvml_ordinal(dev);
	uint64_t u;

	if (i < 0 || hook.budget.limit == 0)
		return -1;
	pthread_mutex_lock(&hook.lock);
	u = i < BUDGET_MAX_DEV ? hook.budget.used[i] : 0;
	pthread_mutex_unlock(&hook.lock);
	*total = hook.budget.limit;
	*used = u;
	*freep = u >= hook.budget.limit ? 0 : hook.budget.limit - u;
	return 0;
}

struct nvq_nvml_memory { unsigned long long total, free, used; };
struct nvq_nvml_memory_v2 {
	unsigned int version;
	unsigned long long total, reserved, free, used;
};

EXPORT int nvmlDeviceGetMemoryInfo(void *, struct nvq_nvml_memory *);
EXPORT int
nvmlDeviceGetMemoryInfo(void *dev, struct nvq_nvml_memory *m)
{
	int (*real)(void *, struct nvq_nvml_memory *) = hook_real(F_NVML_MEM);
	int r;

	if (real == NULL)
		return 12;	/* NVML_ERROR_FUNCTION_NOT_FOUND */
	if ((r = real(dev, m)) == 0 && m != NULL)
		hook_nvml_view(dev, &m->total, &m->free, &m->used);
	return r;
}

EXPORT int nvmlDeviceGetMemoryInfo_v2(void *, struct nvq_nvml_memory_v2 *);
EXPORT int
nvmlDeviceGetMemoryInfo_v2(void *dev, struct nvq_nvml_memory_v2 *m)
{
	int (*real)(void *, struct nvq_nvml_memory_v2 *) = hook_real(F_NVML_MEM_V2);
	int r;

	if (real == NULL)
		return 12;
	if ((r = real(dev, m)) == 0 && m != NULL &&
	    hook_nvml_view(dev, &m->total, &m->free, &m->used) == 0)
		m->reserved = 0;
	return r;
}

/* A launch through the gate; an NCCL kernel's counted on its communicator. */
static void
hook_launch_enter(void *f, void **p, void **x)
{
	int c = cut_comm(f, p, x);

	if (c < 0) {
		link_gate_enter();
		return;
	}
	while (cut_pass(c) == -1) {
		link_gate_enter();	/* waits for the gate to open */
		link_gate_leave();
	}
}

/* The gated wrappers: through the gate (enter), then exactly the real variant. */
#define HOOK_WRAP_FN(name, params, args, enter) \
	EXPORT CUresult name params; \
	EXPORT CUresult \
	name params \
	{ \
		CUresult (*real) params = hook_real(F_##name); \
		CUresult r; \
		uint64_t t0 = 0; \
		if (real == NULL) \
			return NOT_LOADED; \
		if (__builtin_expect(lcbe_role == LCBE_LC, 0)) \
			t0 = lcbe_now(); \
		enter; \
		lcbe_enter(); \
		r = real args; \
		link_gate_leave(); \
		if (__builtin_expect(t0 != 0, 0)) \
			lcbe_record(lcbe_now() - t0); \
		return r; \
	}
#define HOOK_GATE_FN(name, params, args)	HOOK_WRAP_FN(name, params, args, link_gate_enter())
#define HOOK_COUNT_FN(name, params, args) \
	HOOK_WRAP_FN(name, params, args, hook_launch_enter(f, p, x))
HOOK_GATED(HOOK_GATE_FN)
HOOK_COUNTED(HOOK_COUNT_FN)
#undef HOOK_COUNT_FN
#undef HOOK_GATE_FN
#undef HOOK_WRAP_FN

/*
 * A capture is counted from before it begins (undone if the begin fails)
 * until after it ended, whatever the end returns: the lc watcher, which
 * synchronizes only while none is counted, never does so inside one.
 */
#define HOOK_CAPTURE_FN(name, params, args, began) \
	EXPORT CUresult name params; \
	EXPORT CUresult \
	name params \
	{ \
		CUresult (*real) params = hook_real(F_##name); \
		CUresult r; \
		int added = 0; \
		if (real == NULL) \
			return NOT_LOADED; \
		if (began) \
			added = lcbe_capture(s, 1); \
		r = real args; \
		if (!(began) || (added && r != CUDA_SUCCESS)) \
			lcbe_capture(s, 0); \
		return r; \
	}
#define HOOK_CAPTURE_BEGIN_FN(name, params, args)	HOOK_CAPTURE_FN(name, params, args, 1)
#define HOOK_CAPTURE_END_FN(name, params, args)	HOOK_CAPTURE_FN(name, params, args, 0)
HOOK_CAPTURE_BEGIN(HOOK_CAPTURE_BEGIN_FN)
HOOK_CAPTURE_END(HOOK_CAPTURE_END_FN)
#undef HOOK_CAPTURE_BEGIN_FN
#undef HOOK_CAPTURE_END_FN
#undef HOOK_CAPTURE_FN

/* ---- for link.c ---- */

static int
hook_usage(uint64_t *used, uint64_t *peak, int max)
{
	int d, n = 0;

	pthread_mutex_lock(&hook.lock);
	for (d = 0; d < max && d < BUDGET_MAX_DEV; d++) {
		used[d] = hook.budget.used[d];
		peak[d] = hook.budget.peak[d];
		if (used[d] != 0 || peak[d] != 0)
			n = d + 1;
	}
	pthread_mutex_unlock(&hook.lock);
	return n;
}

/*
 * Shared device memory a suspend cannot move: the job's own exports, the
 * driver's IPC handles made or opened, imports whose exporter ended.
 */
static uint64_t
hook_unmovable(void)
{
	uint64_t n;

	pthread_mutex_lock(&hook.lock);
	n = hook.budget.exported + hook.drv_exported;
	pthread_mutex_unlock(&hook.lock);
	return n + ipc_driver_bytes() + offload_unmovable() + xmem_unmovable();
}

static int
hook_uuid(int dev, char *buf, size_t len)
{
	unsigned char u[16];
	CUdevice d;

	if (hook.device_get == NULL || hook.device_uuid == NULL ||
	    hook.device_get(&d, dev) != CUDA_SUCCESS || hook.device_uuid(u, d) != CUDA_SUCCESS)
		return -1;
	snprintf(buf, len, "GPU-%02x%02x%02x%02x-%02x%02x-%02x%02x-%02x%02x-"
	    "%02x%02x%02x%02x%02x%02x", u[0], u[1], u[2], u[3], u[4], u[5], u[6], u[7],
	    u[8], u[9], u[10], u[11], u[12], u[13], u[14], u[15]);
	return 0;
}

static void
hook_sync(int ndev)
{
	unsigned int flags;
	int dev, active;
	CUdevice d;
	void *ctx, *old;

	if (hook.primary_state == NULL || hook.primary_retain == NULL || hook.ctx_push == NULL ||
	    hook.ctx_pop == NULL || hook.ctx_sync == NULL || hook.primary_release == NULL ||
	    hook.device_get == NULL)
		return;
	for (dev = 0; dev < ndev; dev++) {
		active = 0;
		/* only a context that exists: retaining an inactive one would make one */
		if (hook.device_get(&d, dev) != CUDA_SUCCESS ||
		    hook.primary_state(d, &flags, &active) != CUDA_SUCCESS || !active)
			continue;
		if (hook.primary_retain(&ctx, d) != CUDA_SUCCESS)
			continue;
		if (hook.ctx_push(ctx) == CUDA_SUCCESS) {
			hook.ctx_sync();
			hook.ctx_pop(&old);
		}
		hook.primary_release(d);
	}
}

static void
hook_set_cap(int dev, uint64_t cap)
{
	/* the job's shared account is exact: nvqd's cap, from reports, would lag it */
	if (dev < 0 || dev >= BUDGET_MAX_DEV || share_active())
		return;
	pthread_mutex_lock(&hook.lock);
	hook.budget.ceiling[dev] = cap;
	pthread_mutex_unlock(&hook.lock);
}

static struct hook_entry hook_table[F_NFUNCS] = {
	[F_MEM_ALLOC] = { "cuMemAlloc_v2", (void *)cuMemAlloc_v2, NULL, 0 },
	[F_MEM_ALLOC_PITCH] = { "cuMemAllocPitch_v2", (void *)cuMemAllocPitch_v2, NULL, 0 },
	[F_MEM_FREE] = { "cuMemFree_v2", (void *)cuMemFree_v2, NULL, 0 },
	[F_MEM_ALLOC_ASYNC] = { "cuMemAllocAsync", (void *)cuMemAllocAsync, NULL, 0 },
	[F_MEM_ALLOC_ASYNC_PTSZ] = { "cuMemAllocAsync_ptsz", (void *)cuMemAllocAsync_ptsz,
	    NULL, 0 },
	[F_MEM_ALLOC_POOL] = { "cuMemAllocFromPoolAsync", (void *)cuMemAllocFromPoolAsync,
	    NULL, 0 },
	[F_MEM_ALLOC_POOL_PTSZ] = { "cuMemAllocFromPoolAsync_ptsz",
	    (void *)cuMemAllocFromPoolAsync_ptsz, NULL, 0 },
	[F_MEM_FREE_ASYNC] = { "cuMemFreeAsync", (void *)cuMemFreeAsync, NULL, 0 },
	[F_MEM_FREE_ASYNC_PTSZ] = { "cuMemFreeAsync_ptsz", (void *)cuMemFreeAsync_ptsz,
	    NULL, 0 },
	[F_MEM_ALLOC_MANAGED] = { "cuMemAllocManaged", (void *)cuMemAllocManaged, NULL, 0 },
	[F_MEM_CREATE] = { "cuMemCreate", (void *)cuMemCreate, NULL, 0 },
	[F_MEM_RELEASE] = { "cuMemRelease", (void *)cuMemRelease, NULL, 0 },
	[F_MEM_EXPORT] = { "cuMemExportToShareableHandle", (void *)cuMemExportToShareableHandle,
	    NULL, 0 },
	[F_ARRAY_CREATE] = { "cuArrayCreate_v2", (void *)cuArrayCreate_v2, NULL, 0 },
	[F_ARRAY3D_CREATE] = { "cuArray3DCreate_v2", (void *)cuArray3DCreate_v2, NULL, 0 },
	[F_ARRAY_DESTROY] = { "cuArrayDestroy", (void *)cuArrayDestroy, NULL, 0 },
	[F_MEM_GET_INFO] = { "cuMemGetInfo_v2", (void *)cuMemGetInfo_v2, NULL, 0 },
	[F_DEVICE_TOTAL_MEM] = { "cuDeviceTotalMem_v2", (void *)cuDeviceTotalMem_v2, NULL, 0 },
	[F_GET_PROC] = { "cuGetProcAddress", (void *)cuGetProcAddress, NULL, 0 },
	[F_GET_PROC_V2] = { "cuGetProcAddress_v2", (void *)cuGetProcAddress_v2, NULL, 0 },
	[F_IPC_GET] = { "cuIpcGetMemHandle", (void *)cuIpcGetMemHandle, NULL, 0 },
	[F_IPC_OPEN] = { "cuIpcOpenMemHandle", (void *)cuIpcOpenMemHandle, NULL, 0 },
	[F_IPC_OPEN_V2] = { "cuIpcOpenMemHandle_v2", (void *)cuIpcOpenMemHandle_v2, NULL, 0 },
	[F_IPC_CLOSE] = { "cuIpcCloseMemHandle", (void *)cuIpcCloseMemHandle, NULL, 0 },
	/* the VMM calls on shared memory (xmem.h) */
#define HOOK_NAMED(f, fn) [f] = { #fn, (void *)fn, NULL, 0 },
	HOOK_NAMED(F_MEM_MAP, cuMemMap) HOOK_NAMED(F_MEM_UNMAP, cuMemUnmap)
	HOOK_NAMED(F_MEM_SET_ACCESS, cuMemSetAccess)
	HOOK_NAMED(F_MEM_IMPORT, cuMemImportFromShareableHandle)
	HOOK_NAMED(F_MEM_RETAIN, cuMemRetainAllocationHandle)
	HOOK_NAMED(F_MEM_PROPS, cuMemGetAllocationPropertiesFromHandle)
#undef HOOK_NAMED
#define HOOK_ROW(name, params, args) [F_##name] = { #name, (void *)name, NULL, 0 },
	HOOK_COUNTED(HOOK_ROW)
	HOOK_GATED(HOOK_ROW)
	HOOK_CAPTURE_BEGIN(HOOK_ROW)
	HOOK_CAPTURE_END(HOOK_ROW)
#undef HOOK_ROW
	[F_NVML_MEM] = { "nvmlDeviceGetMemoryInfo", (void *)nvmlDeviceGetMemoryInfo, NULL, 0 },
	[F_NVML_MEM_V2] = { "nvmlDeviceGetMemoryInfo_v2", (void *)nvmlDeviceGetMemoryInfo_v2,
	    NULL, 0 },
};

/* ---- dlsym, under both glibc versions ---- */

/* the real dlsym, for the trampoline below; hidden, found at load time */
__attribute__((visibility("hidden"))) void *nvq_hook_next_dlsym;
__attribute__((visibility("hidden"))) void *nvq_hook_dlsym(void *, const char *);
__attribute__((visibility("hidden"))) void *nvq_hook_dlsym_early(void *, const char *);

__attribute__((constructor)) static void
hook_load_cb(void)
{
	hook_real_dlsym(NULL, NULL);	/* only resolves hook.dlsym */
	nvq_hook_next_dlsym = (void *)hook.dlsym;
}

/*
 * dlsym(RTLD_NEXT) before the constructor ran (another preloaded library's
 * constructor can get there first): resolve now.  This one lookup is then
 * relative to the hook rather than to its caller; better than a crash.
 */
void *
nvq_hook_dlsym_early(void *handle, const char *name)
{
	hook_load_cb();
	return hook_real_dlsym(handle, name);
}

void *
nvq_hook_dlsym(void *handle, const char *name)
{
	void *p = hook_real_dlsym(handle, name);

	/* only driver and NVML symbols can be ours; the rest is passed as it is */
	if (p != NULL && name != NULL && ((name[0] == 'c' && name[1] == 'u') ||
	    strncmp(name, "nvmlDeviceGetMemoryInfo", 23) == 0))
		p = hook_route(p);
	return p;
}

/*
 * dlsym itself.  dlsym(RTLD_NEXT, name) means "the next definition after
 * the caller", and glibc finds the caller from the return address: a C
 * wrapper would make the hook the caller, and an interposer looking for the
 * next malloc after itself could get itself back.  So for RTLD_NEXT the
 * trampoline jumps to the real dlsym with the caller's return address
 * untouched; any other handle goes through nvq_hook_dlsym.
 */
#if defined(__x86_64__)
__asm__(
	".text\n"
	".globl nvq_dlsym_234\n"
	".type nvq_dlsym_234, @function\n"
	".globl nvq_dlsym_225\n"
	".type nvq_dlsym_225, @function\n"
	"nvq_dlsym_234:\n"
	"nvq_dlsym_225:\n"
	"	cmpq $-1, %rdi\n"
	"	je 1f\n"
	"	jmp nvq_hook_dlsym\n"
	"1:	movq nvq_hook_next_dlsym(%rip), %rax\n"
	"	testq %rax, %rax\n"
	"	je nvq_hook_dlsym_early\n"
	"	jmp *%rax\n"
	".size nvq_dlsym_234, .-nvq_dlsym_234\n"
	".size nvq_dlsym_225, .-nvq_dlsym_225\n");
#else
#error "the dlsym trampoline is written for x86-64 only"
#endif

__asm__(".symver nvq_dlsym_234, dlsym@@GLIBC_2.34");
__asm__(".symver nvq_dlsym_225, dlsym@GLIBC_2.2.5");
