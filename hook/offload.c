/*
 * offload.c: moving the job's own allocations to host memory and back,
 * keeping their device addresses (see offload.h).
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "budget.h"
#include "offload.h"
#include "peerfd.h"
#include "stageplan.h"
#include "xmem.h"

#define OFF_WORKERS	16	/* threads that make the staging and fill it */
#define OFF_PAGE	4096
#define OFF_IMPORT_WAIT	60.0	/* seconds an importer waits for the exporter's memory */

typedef void *CUcontext;

/*
 * REC_IMPORT: another process's allocation, mapped here (offload_import);
 * REC_UNMAPPED: one of those while a suspend has it out (its range kept).
 */
enum { REC_EMPTY = 0, REC_TOMB, REC_IN, REC_OUT, REC_IMPORT, REC_UNMAPPED };
#define REC_LIVE(st)	((st) >= REC_IN)

struct rec {
	CUdeviceptr	va;
	size_t		size;
	CUmemGenericAllocationHandle h;	/* valid while REC_IN */
	CUcontext	ctx;		/* the context it was made in */
	size_t		off;		/* in the staging area, while REC_OUT */
	int		dev;
	int		state;
	int		exported;	/* a descriptor of h was made (fd) */
	int		fd;		/* while exported, else -1; /dev/null's while out */
	int		pidfd;		/* an import: its exporter, else -1 */
	int		rfd;		/* an import: the exporter's fd */
};

static struct {
	pthread_mutex_t	mu;
	int		on;
	int		no_fd;		/* cuMemCreate refused exportable memory once */
	struct rec	*tab;
	size_t		cap, used, live;	/* slots, used (live + tombs), live */
	int		imports;	/* live REC_IMPORT and REC_UNMAPPED records */
	size_t		gran[BUDGET_MAX_DEV];
	CUresult (*ctx_get)(CUcontext *);
	CUresult (*ctx_push)(CUcontext);
	CUresult (*ctx_pop)(CUcontext *);
	CUresult (*ctx_sync)(void);
	CUresult (*reserve)(CUdeviceptr *, size_t, size_t, CUdeviceptr, unsigned long long);
	CUresult (*addr_free)(CUdeviceptr, size_t);
	CUresult (*create)(CUmemGenericAllocationHandle *, size_t,
			    const struct nvq_cu_mem_allocation_prop *, unsigned long long);
	CUresult (*release)(CUmemGenericAllocationHandle);
	CUresult (*map)(CUdeviceptr, size_t, size_t, CUmemGenericAllocationHandle,
			    unsigned long long);
	CUresult (*unmap)(CUdeviceptr, size_t);
	CUresult (*set_access)(CUdeviceptr, size_t, const struct nvq_cu_mem_access_desc *,
			    size_t);
	CUresult (*granularity)(size_t *, const struct nvq_cu_mem_allocation_prop *, int);
	CUresult (*dtoh)(void *, CUdeviceptr, size_t);
	CUresult (*htod)(CUdeviceptr, const void *, size_t);
	CUresult (*host_register)(void *, size_t, unsigned int);
	CUresult (*host_unregister)(void *);
	CUresult (*dev_count)(int *);
	CUresult (*can_peer)(int *, CUdevice, CUdevice);
	CUresult (*export)(void *, CUmemGenericAllocationHandle, int, unsigned long long);
	CUresult (*import)(CUmemGenericAllocationHandle *, void *, int);
	void	(*log)(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
} O = { .mu = PTHREAD_MUTEX_INITIALIZER };

static double
off_now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

void
offload_init(int on, void *(*sym)(const char *),
    void (*log)(const char *fmt, ...) __attribute__((format(printf, 1, 2))))
{
#define SYM(field, name) (*(void **)&O.field = sym(name)) != NULL
	O.log = log;
	if (!on)
		return;
	O.on = SYM(ctx_get, "cuCtxGetCurrent") && SYM(ctx_push, "cuCtxPushCurrent_v2") &&
	    SYM(ctx_pop, "cuCtxPopCurrent_v2") && SYM(ctx_sync, "cuCtxSynchronize") &&
	    SYM(reserve, "cuMemAddressReserve") && SYM(addr_free, "cuMemAddressFree") &&
	    SYM(create, "cuMemCreate") && SYM(release, "cuMemRelease") &&
	    SYM(map, "cuMemMap") && SYM(unmap, "cuMemUnmap") &&
	    SYM(set_access, "cuMemSetAccess") &&
	    SYM(granularity, "cuMemGetAllocationGranularity") &&
	    SYM(dtoh, "cuMemcpyDtoH_v2") && SYM(htod, "cuMemcpyHtoD_v2") &&
	    SYM(host_register, "cuMemHostRegister_v2") &&
	    SYM(host_unregister, "cuMemHostUnregister") &&
	    SYM(dev_count, "cuDeviceGetCount") && SYM(can_peer, "cuDeviceCanAccessPeer");
	/* CUDA IPC of these allocations (ipc.c) needs these two; the rest works without */
	if (!(SYM(export, "cuMemExportToShareableHandle")) ||
	    !(SYM(import, "cuMemImportFromShareableHandle")))
		O.export = NULL;
#undef SYM
	O.log("offload %s", O.on ? "on: large allocations through the VMM API" :
	    "off: this libcuda lacks the VMM API");
}

/* ---- the table of allocations, by address (open addressing) ---- */

static size_t
off_slot(CUdeviceptr va, size_t cap)
{
	uint64_t x = va >> 21;

	x ^= x >> 33;
	x *= 0xff51afd7ed558ccdULL;
	x ^= x >> 33;
	return (size_t)(x & (cap - 1));
}

static struct rec *
off_find(CUdeviceptr va)
{
	size_t i, n;

	if (O.cap == 0)
		return NULL;
	for (i = off_slot(va, O.cap), n = 0; n < O.cap; i = (i + 1) & (O.cap - 1), n++) {
		if (O.tab[i].state == REC_EMPTY)
			return NULL;
		if (O.tab[i].state != REC_TOMB && O.tab[i].va == va)
			return &O.tab[i];
	}
	return NULL;
}

static int
off_grow(void)
{
	struct rec *old = O.tab, *nt;
	size_t oc = O.cap, nc = O.cap ? O.cap * 2 : 64, i, k;

	if (O.live * 2 < oc)
		nc = oc;	/* mostly tombs: rebuild at the same size */
	if ((nt = calloc(nc, sizeof(*nt))) == NULL)
		return -1;
	for (i = 0; i < oc; i++)
		if (REC_LIVE(old[i].state)) {
			for (k = off_slot(old[i].va, nc); nt[k].state != REC_EMPTY;
			    k = (k + 1) & (nc - 1))
				;
			nt[k] = old[i];
		}
	free(old);
	O.tab = nt;
	O.cap = nc;
	O.used = O.live;
	return 0;
}

/* Counts r in O.imports (by +1) or takes it out (-1) if it is an import. */
static void
off_share(const struct rec *r, int sign)
{
	if (r->state >= REC_IMPORT)
		__atomic_store_n(&O.imports, O.imports + sign, __ATOMIC_RELAXED);
}

static int
off_insert(const struct rec *r)
{
	size_t k;

	if ((O.used + 1) * 2 > O.cap && off_grow() == -1)
		return -1;
	for (k = off_slot(r->va, O.cap); REC_LIVE(O.tab[k].state);
	    k = (k + 1) & (O.cap - 1))
		;
	if (O.tab[k].state == REC_EMPTY)
		O.used++;
	O.tab[k] = *r;
	O.live++;
	off_share(r, 1);	/* an import */
	return 0;
}

static void
off_remove(struct rec *r)
{
	off_share(r, -1);
	if (r->pidfd >= 0)
		close(r->pidfd);
	r->state = REC_TOMB;
	O.live--;
}

/* ---- allocation ---- */

static void
off_prop(struct nvq_cu_mem_allocation_prop *p, int dev)
{
	memset(p, 0, sizeof(*p));
	p->type = NVQ_CU_MEM_ALLOCATION_TYPE_PINNED;
	p->location.type = NVQ_CU_MEM_LOCATION_TYPE_DEVICE;
	p->location.id = dev;
	/* exportable, so that CUDA IPC works on it (offload_export) */
	if (!O.no_fd && O.export != NULL)
		p->requestedHandleTypes = NVQ_CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR;
}

/* cuMemCreate with prop; again without a shareable handle type if that was refused. */
static CUresult
off_create(CUmemGenericAllocationHandle *h, size_t size,
    struct nvq_cu_mem_allocation_prop *prop)
{
	CUresult r = O.create(h, size, prop, 0);

	if (r != CUDA_SUCCESS && r != CUDA_ERROR_OUT_OF_MEMORY && prop->requestedHandleTypes) {
		prop->requestedHandleTypes = 0;
		if ((r = O.create(h, size, prop, 0)) == CUDA_SUCCESS) {
			O.no_fd = 1;
			O.log("offload: this driver makes no exportable memory: CUDA IPC of "
			    "large allocations is off");
		}
	}
	return r;
}

size_t
offload_size(size_t n)
{
	size_t g = 2u << 20;	/* every GPU's granularity so far; checked per device below */

	if (!O.on || n < OFFLOAD_MIN)
		return 0;
	return (n + g - 1) / g * g;
}

/*
 * Maps h at va for dev and every device that can reach dev's memory, as
 * cuMemAlloc's memory is reachable by peers.
 */
static CUresult
off_map(CUdeviceptr va, size_t size, CUmemGenericAllocationHandle h, int dev)
{
	struct nvq_cu_mem_access_desc d[BUDGET_MAX_DEV];
	int n = 0, count = 0, i, can;
	CUresult r;

	if ((r = O.map(va, size, 0, h, 0)) != CUDA_SUCCESS)
		return r;
	if (O.dev_count(&count) != CUDA_SUCCESS || count < 1)
		count = 1;
	for (i = 0; i < count && i < BUDGET_MAX_DEV; i++) {
		can = i == dev;
		if (!can && O.can_peer(&can, dev, i) != CUDA_SUCCESS)
			can = 0;
		if (!can)
			continue;
		d[n].location.type = NVQ_CU_MEM_LOCATION_TYPE_DEVICE;
		d[n].location.id = i;
		d[n].flags = NVQ_CU_MEM_ACCESS_FLAGS_PROT_READWRITE;
		n++;
	}
	if ((r = O.set_access(va, size, d, (size_t)n)) != CUDA_SUCCESS)
		O.unmap(va, size);
	return r;
}

/*
 * Maps r's handle over its reserved range and records it; if either fails,
 * releases the handle and the range.  Under O.mu.
 */
static CUresult
off_place(struct rec *r)
{
	CUresult res;

	if ((res = off_map(r->va, r->size, r->h, r->dev)) == CUDA_SUCCESS && off_insert(r) == 0)
		return CUDA_SUCCESS;
	if (res == CUDA_SUCCESS) {
		O.unmap(r->va, r->size);
		res = CUDA_ERROR_OUT_OF_MEMORY;
	}
	O.release(r->h);
	O.addr_free(r->va, r->size);
	return res;
}

CUresult
offload_alloc(CUdeviceptr *p, size_t size, int dev)
{
	struct nvq_cu_mem_allocation_prop prop;
	struct rec r;
	size_t g;
	CUresult res;

	if (!O.on || dev < 0 || dev >= BUDGET_MAX_DEV)
		return OFFLOAD_PASS;
	off_prop(&prop, dev);
	pthread_mutex_lock(&O.mu);
	if (O.gran[dev] == 0) {
		if (O.granularity(&g, &prop, NVQ_CU_MEM_ALLOC_GRANULARITY_MINIMUM) !=
		    CUDA_SUCCESS || g == 0 || (2u << 20) % g != 0) {
			/* not a granularity offload_size rounds to: leave it to the driver */
			O.on = 0;
			pthread_mutex_unlock(&O.mu);
			O.log("offload off: device %d's allocation granularity does not divide "
			    "2 MiB", dev);
			return OFFLOAD_PASS;
		}
		O.gran[dev] = g;
	}
	memset(&r, 0, sizeof(r));
	r.size = size;
	r.dev = dev;
	r.state = REC_IN;
	r.fd = r.pidfd = -1;
	if (O.ctx_get(&r.ctx) != CUDA_SUCCESS || r.ctx == NULL) {
		pthread_mutex_unlock(&O.mu);
		return OFFLOAD_PASS;	/* no context: let the driver answer */
	}
	if ((res = O.reserve(&r.va, size, 0, 0, 0)) != CUDA_SUCCESS) {
		pthread_mutex_unlock(&O.mu);
		return res;
	}
	if ((res = off_create(&r.h, size, &prop)) != CUDA_SUCCESS) {
		O.addr_free(r.va, size);
		pthread_mutex_unlock(&O.mu);
		return res;
	}
	res = off_place(&r);
	pthread_mutex_unlock(&O.mu);
	if (res == CUDA_SUCCESS)
		*p = r.va;
	return res;
}

/* Waits for the work submitted in ctx. */
static void
off_sync(CUcontext ctx)
{
	CUcontext old;

	if (O.ctx_push(ctx) == CUDA_SUCCESS) {
		O.ctx_sync();
		O.ctx_pop(&old);
	}
}

int
offload_free(CUdeviceptr p, CUresult *res)
{
	struct rec *r;

	if (!O.on && O.live == 0)
		return 0;
	pthread_mutex_lock(&O.mu);
	if ((r = off_find(p)) == NULL || r->state >= REC_IMPORT) {
		/* an imported one is the driver's to refuse, as without the hook */
		pthread_mutex_unlock(&O.mu);
		return 0;
	}
	*res = CUDA_SUCCESS;
	if (r->state == REC_IN) {
		off_sync(r->ctx);	/* cuMemFree waits for the device; so does this */
		if ((*res = O.unmap(r->va, r->size)) == CUDA_SUCCESS)
			*res = O.release(r->h);
	}
	if (*res == CUDA_SUCCESS) {
		O.addr_free(r->va, r->size);
		if (r->exported)
			close(r->fd);
		off_remove(r);
	}
	pthread_mutex_unlock(&O.mu);
	return 1;
}

/* ---- staging ---- */

/*
 * The staging memory is a list of pieces of OFF_CHUNK, each mapped and
 * page-locked on its own: one registration of tens of GiB was refused on
 * the H100 machine (the copies then ran at the pageable rate), registrations
 * of 1 GiB were not.  A copy never crosses a piece's edge, so each one runs
 * from page-locked memory.  Getting the memory is what costs (30 GiB on the
 * H100, tests/gpu/staging_probe.sh: 1.1 s to fault in from 8 threads, 0.7 s
 * to page-lock, then 0.6 s to copy; on a fresh VM, memory the guest never
 * touched faults in at 5 to 10 GB/s however many threads touch it,
 * tests/gpu/host_probe.c), so a move out copies into each piece as soon as
 * it is made (off_move_run), and nvqd may let a process keep some
 * between switches (offload_keep): it is made ahead, in the background,
 * as the job's memory grows, and kept after a resume.  Pieces are never
 * inherited by a child (MADV_DONTFORK): a fork would copy page-locked
 * memory at once.
 */
#ifndef OFF_CHUNK
#define OFF_CHUNK	(1ull << 30)	/* test_offload makes it smaller */
#endif
#define OFF_ALIGN	(2ull << 20)	/* a huge page */

struct off_stage {
	char		**piece;
	unsigned char	*locked;	/* per piece: cuMemHostRegister took it */
	size_t		n, cap;		/* pieces made, room for */
	size_t		tail;		/* the last piece's length if shorter; 0: all whole */
};

static struct off_stage S;	/* the staging; under O.mu */

/* The background preparation (offload_keep); its fields under O.mu. */
static struct {
	size_t		keep;		/* bytes nvqd lets this process keep */
	int		running, stop;
	pthread_t	t;
} K;

/* One piece: mapped on a huge page's edge, faulted in, page-locked.  NULL: no memory. */
static char *
off_piece(CUcontext ctx, size_t size, unsigned char *locked)
{
	size_t len = size + OFF_ALIGN, i, lead;
	char *m, *p;
	CUcontext old;

	m = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (m == MAP_FAILED)
		return NULL;
	lead = (OFF_ALIGN - (uintptr_t)m % OFF_ALIGN) % OFF_ALIGN;
	p = m + lead;
	if (lead > 0)
		munmap(m, lead);
	munmap(p + size, OFF_ALIGN - lead);
	madvise(p, size, MADV_HUGEPAGE);
	madvise(p, size, MADV_DONTFORK);
	for (i = 0; i < size; i += OFF_PAGE)
		((volatile char *)p)[i] = 0;
	*locked = 0;
	if (O.ctx_push(ctx) == CUDA_SUCCESS) {
		/* portable: pinned for every context, so for each GPU's copies */
		*locked = O.host_register(p, size, NVQ_CU_MEMHOSTREGISTER_PORTABLE) ==
		    CUDA_SUCCESS;
		O.ctx_pop(&old);
	}
	return p;
}

static void
off_unpiece(char *p, size_t size, int locked)
{
	if (locked)
		O.host_unregister(p);
	munmap(p, size);
}

/* Bytes the staging holds. */
static size_t
off_held(void)
{
	return S.tail ? (S.n - 1) * OFF_CHUNK + S.tail : S.n * OFF_CHUNK;
}

/* Frees a last piece shorter than the others (pieces only grow after whole ones). */
static void
off_untail(void)
{
	if (S.tail == 0)
		return;
	S.n--;
	off_unpiece(S.piece[S.n], S.tail, S.locked[S.n]);
	S.tail = 0;
}

/* Room for n pieces in S.  -1: no memory. */
static int
off_room(size_t n)
{
	char **np;
	unsigned char *nl;
	size_t cap = S.cap ? S.cap : 16;

	while (cap < n)
		cap *= 2;
	if (cap == S.cap)
		return 0;
	if ((np = realloc(S.piece, cap * sizeof(*np))) == NULL)
		return -1;
	S.piece = np;
	if ((nl = realloc(S.locked, cap)) == NULL)
		return -1;
	S.locked = nl;
	S.cap = cap;
	return 0;
}

/*
 * A move out, shared by its threads: the allocations in staging order,
 * where each lands, and the pieces.  Workers take the missing pieces in
 * turn and make them (fault in, page-lock); the calling thread copies into
 * each piece as soon as it is ready, so that the copy (55 GB/s on the
 * H100) runs behind the preparation instead of after it.  The copies stay
 * on one thread: the link does not go faster for two, and a worker that
 * waited for its turn at the link would make no piece meanwhile.
 */
struct off_move {
	struct rec	**rec;		/* the allocations to move, in staging order */
	size_t		*size;		/* their sizes */
	size_t		*off;		/* where each lands (stageplan_layout) */
	CUresult	*res;		/* per allocation: the first copy that failed */
	size_t		n;
	size_t		pieces;		/* the staging's pieces this move uses */
	size_t		ready;		/* those that were there already */
	size_t		next;		/* the next piece to make */
	size_t		last;		/* the length of the last piece, if made now */
	int		nomem;		/* a piece could not be made */
	int		workers;	/* threads that made pieces */
	CUcontext	ctx;		/* one of the process's: page-locking needs one */
	pthread_mutex_t	mu;		/* over the queue and exited */
	pthread_cond_t	cv;
	size_t		*queue;		/* pieces made, not yet filled */
	size_t		qhead, qtail;
	int		exited;		/* workers done */
};

/* Copies into piece c the parts of the allocations that land there. */
static void
off_fill(struct off_move *m, size_t c)
{
	struct stageplan_part p;
	size_t cur = 0;
	struct rec *r;
	CUcontext old;
	CUresult res, ok;

	while (stageplan_next(m->off, m->n, OFF_CHUNK, c, &cur, &p)) {
		r = m->rec[p.item];
		if (__atomic_load_n(&m->res[p.item], __ATOMIC_RELAXED) != CUDA_SUCCESS)
			continue;	/* it stays on its device anyway */
		if ((res = O.ctx_push(r->ctx)) == CUDA_SUCCESS) {
			res = O.dtoh(S.piece[c] + p.at, r->va + p.from, p.len);
			O.ctx_pop(&old);
		}
		ok = CUDA_SUCCESS;
		if (res != CUDA_SUCCESS)
			__atomic_compare_exchange_n(&m->res[p.item], &ok, res, 0, __ATOMIC_RELAXED,
			    __ATOMIC_RELAXED);
	}
}

/* A worker: makes the pieces it takes and hands each to the copying thread. */
static void *
off_mover(void *arg)
{
	struct off_move *m = arg;
	size_t c;

	while (!__atomic_load_n(&m->nomem, __ATOMIC_RELAXED) &&
	    (c = __atomic_fetch_add(&m->next, 1, __ATOMIC_RELAXED)) < m->pieces) {
		S.piece[c] = off_piece(m->ctx, c + 1 == m->pieces ? m->last : OFF_CHUNK,
		    &S.locked[c]);
		pthread_mutex_lock(&m->mu);
		if (S.piece[c] == NULL)
			__atomic_store_n(&m->nomem, 1, __ATOMIC_RELAXED);
		else
			m->queue[m->qtail++] = c;
		pthread_cond_signal(&m->cv);
		pthread_mutex_unlock(&m->mu);
	}
	pthread_mutex_lock(&m->mu);
	m->exited++;
	pthread_cond_signal(&m->cv);
	pthread_mutex_unlock(&m->mu);
	return NULL;
}

/* Fills the pieces the workers hand over, as they come, until all n have exited. */
static void
off_copier(struct off_move *m, int n)
{
	size_t c;

	pthread_mutex_lock(&m->mu);
	for (;;) {
		while (m->qhead == m->qtail && m->exited < n)
			pthread_cond_wait(&m->cv, &m->mu);
		if (m->qhead == m->qtail)
			break;
		c = m->queue[m->qhead++];
		pthread_mutex_unlock(&m->mu);
		if (!__atomic_load_n(&m->nomem, __ATOMIC_RELAXED))
			off_fill(m, c);
		pthread_mutex_lock(&m->mu);
	}
	pthread_mutex_unlock(&m->mu);
}

/*
 * Copies the allocations of m into the staging, under O.mu: into the
 * pieces there are, and into the missing ones as soon as each is made by
 * one of up to OFF_WORKERS threads (fresh memory faults in at a few GB/s
 * from one thread).  A piece that cannot be locked still works, slower.
 * -1 if a piece could not be made: then nothing may leave its device.
 */
static int
off_move_run(struct off_move *m, size_t total)
{
	pthread_t t[OFF_WORKERS];
	long cpus = sysconf(_SC_NPROCESSORS_ONLN);
	size_t want = stageplan_pieces(total, OFF_CHUNK), c, unlocked = 0, make;
	int n = 0, i;

	m->pieces = want;
	m->last = total - (want - 1) * OFF_CHUNK;
	m->ready = want;
	if (total > off_held()) {
		/* what is made now ends where the need does: a small job pays for its size */
		off_untail();
		if (off_room(want) == -1)
			return -1;
		m->ready = S.n;
		for (c = S.n; c < want; c++)
			S.piece[c] = NULL;
	}
	make = want - m->ready;
	m->next = m->ready;
	if (make > 0) {
		if ((m->queue = calloc(make, sizeof(*m->queue))) == NULL)
			return -1;
		pthread_mutex_init(&m->mu, NULL);
		pthread_cond_init(&m->cv, NULL);
		n = cpus < 2 ? 1 : cpus < OFF_WORKERS ? (int)cpus : OFF_WORKERS;
		if ((size_t)n > make)
			n = (int)make;
		for (i = 0; i < n; i++)
			if (pthread_create(&t[i], NULL, off_mover, m) != 0)
				break;
		m->workers = n = i;
	}
	/* what was there already first, while the workers make the rest */
	for (c = 0; c < m->ready && c < want; c++)
		off_fill(m, c);
	if (make > 0) {
		if (n == 0)
			off_mover(m);	/* no thread: make them here, then fill them */
		off_copier(m, n == 0 ? 1 : n);
		for (i = 0; i < n; i++)
			pthread_join(t[i], NULL);
		pthread_cond_destroy(&m->cv);
		pthread_mutex_destroy(&m->mu);
	}
	for (c = m->ready; c < want; c++) {
		if (S.piece[c] == NULL) {
			/* keep what was made before the hole; give back the rest */
			S.n = c;
			for (; c < want; c++)
				if (S.piece[c] != NULL)
					off_unpiece(S.piece[c], c + 1 == want ? m->last : OFF_CHUNK,
					    S.locked[c]);
			return -1;
		}
		unlocked += !S.locked[c];
	}
	if (unlocked > 0)
		O.log("offload: cannot page-lock %zu of %zu pieces of staging memory: "
		    "copying through pageable memory there", unlocked, make);
	if (make > 0) {
		S.n = want;
		S.tail = m->last < OFF_CHUNK ? m->last : 0;
	}
	return 0;
}

/* Whether memory is out (the staging holds it). */
static int
off_any_out(void)
{
	size_t i;

	for (i = 0; i < O.cap; i++)
		if (O.tab[i].state == REC_OUT)
			return 1;
	return 0;
}

/*
 * Takes the pieces beyond keep bytes out of S, under O.mu: *n of them, to
 * free (a short last piece among them, *tail its length).
 */
static char **
off_detach(size_t keep, size_t *n, unsigned char **locked, size_t *tail)
{
	size_t k = keep / OFF_CHUNK;	/* whole pieces within the share */
	char **p;

	*n = 0;
	*tail = 0;
	if (S.tail && k >= S.n)
		k = S.n - 1;	/* a short piece is never kept */
	if (k >= S.n || (p = malloc((S.n - k) * sizeof(*p))) == NULL)
		return NULL;
	if ((*locked = malloc(S.n - k)) == NULL) {
		free(p);
		return NULL;
	}
	*n = S.n - k;
	memcpy(p, S.piece + k, *n * sizeof(*p));
	memcpy(*locked, S.locked + k, *n);
	*tail = S.tail;
	S.n = k;
	S.tail = 0;
	return p;
}

void
offload_drop_staging(void)
{
	unsigned char *locked = NULL;
	char **p = NULL;
	size_t n = 0, i, tail = 0;

	pthread_mutex_lock(&O.mu);
	if (!off_any_out())
		p = off_detach(K.keep, &n, &locked, &tail);
	pthread_mutex_unlock(&O.mu);
	/* outside the lock: 30 GiB take most of a second to let go of */
	for (i = 0; i < n; i++)
		off_unpiece(p[i], i + 1 == n && tail ? tail : OFF_CHUNK, locked[i]);
	free(p);
	free(locked);
}

/* MemAvailable of /proc/meminfo in bytes; 0 if unknown. */
static size_t
off_mem_available(void)
{
	char line[128];
	unsigned long long kb = 0;
	FILE *f = fopen("/proc/meminfo", "re");

	if (f == NULL)
		return 0;
	while (fgets(line, sizeof(line), f) != NULL)
		if (sscanf(line, "MemAvailable: %llu kB", &kb) == 1)
			break;
	fclose(f);
	return (size_t)kb * 1024;
}

/*
 * The preparer: while the staging is short of what the process's memory
 * would need (up to what it may keep), one more piece, made outside the
 * lock; it stops while memory is out, and when asked (at exit, before
 * libcuda goes).
 */
static void *
off_prepare(void *arg)
{
	size_t i, need, made = 0;
	int stop = 0;
	CUcontext ctx;
	unsigned char locked;
	char *p;

	(void)arg;
	while (!stop) {
		need = 0;
		ctx = NULL;
		pthread_mutex_lock(&O.mu);
		for (i = 0; i < O.cap; i++)
			if (O.tab[i].state == REC_IN) {
				need += O.tab[i].size;
				ctx = O.tab[i].ctx;
			}
		/* whole pieces within the share: never more than nvqd let it keep */
		if (need > K.keep / OFF_CHUNK * OFF_CHUNK)
			need = K.keep / OFF_CHUNK * OFF_CHUNK;
		stop = K.stop;
		/* after a short piece (a suspend's own) nothing is added: dropped first */
		if (stop || off_any_out() || ctx == NULL || S.tail || need <= off_held()) {
			if (made > 0 && !stop && ctx != NULL && need <= off_held())
				O.log("offload: staging ready: %zu bytes made ahead, %zu held",
				    made, off_held());
			if (need <= off_held())
				made = 0;
			pthread_mutex_unlock(&O.mu);
			for (i = 0; i < 10 && !stop; i++) {
				usleep(100000);
				stop = __atomic_load_n(&K.stop, __ATOMIC_RELAXED);
			}
			continue;
		}
		pthread_mutex_unlock(&O.mu);
		/* never at the cost of the host: a piece only with room for four more */
		if (off_mem_available() < 5 * OFF_CHUNK ||
		    (p = off_piece(ctx, OFF_CHUNK, &locked)) == NULL) {
			sleep(1);
			continue;
		}
		pthread_mutex_lock(&O.mu);
		if (S.tail == 0 && (S.n + 1) * OFF_CHUNK <= K.keep && off_room(S.n + 1) == 0) {
			S.piece[S.n] = p;
			S.locked[S.n++] = locked;
			made += OFF_CHUNK;
			p = NULL;
		}
		pthread_mutex_unlock(&O.mu);
		if (p != NULL)
			off_unpiece(p, OFF_CHUNK, locked);
	}
	return NULL;
}

static void
off_prepare_stop(void)
{
	pthread_mutex_lock(&O.mu);
	K.stop = 1;
	pthread_mutex_unlock(&O.mu);
	if (K.running)
		pthread_join(K.t, NULL);
	K.running = 0;
}

void
offload_keep(size_t bytes)
{
	int start;

	if (!O.on)
		return;
	pthread_mutex_lock(&O.mu);
	K.keep = bytes;
	start = bytes > 0 && !K.running && !K.stop;
	if (start)
		K.running = pthread_create(&K.t, NULL, off_prepare, NULL) == 0;
	pthread_mutex_unlock(&O.mu);
	/* registered now, after libcuda's own: run before libcuda is torn down */
	if (start && K.running)
		atexit(off_prepare_stop);
}

size_t
offload_staged(void)
{
	size_t n;

	pthread_mutex_lock(&O.mu);
	n = off_held();
	pthread_mutex_unlock(&O.mu);
	return n;
}

/*
 * Copies n bytes between a device allocation and the staging at off,
 * piece by piece (out: device to host).
 */
static CUresult
off_copy(int out, CUdeviceptr va, size_t off, size_t n)
{
	size_t done = 0, len, at;
	char *h;
	CUresult r = CUDA_SUCCESS;

	while (done < n && r == CUDA_SUCCESS) {
		at = off + done;
		len = OFF_CHUNK - at % OFF_CHUNK;
		if (len > n - done)
			len = n - done;
		h = S.piece[at / OFF_CHUNK] + at % OFF_CHUNK;
		r = out ? O.dtoh(h, va + done, len) : O.htod(va + done, h, len);
		done += len;
	}
	return r;
}

/* ---- moving ---- */

static void
off_error(struct offload_stats *st, const char *step, const struct rec *r, CUresult res)
{
	snprintf(st->error, sizeof(st->error), "%s of %zu bytes at 0x%llx on device %d: CUDA "
	    "error %d", step, r->size, (unsigned long long)r->va, r->dev, (int)res);
}

/* Waits for the work of every context that holds one of these allocations. */
static void
off_sync_all(void)
{
	CUcontext done[BUDGET_MAX_DEV];
	int n = 0, k;
	size_t i;

	for (i = 0; i < O.cap; i++) {
		if (O.tab[i].state != REC_IN)
			continue;
		for (k = 0; k < n && done[k] != O.tab[i].ctx; k++)
			;
		if (k < n || n == BUDGET_MAX_DEV)
			continue;
		done[n++] = O.tab[i].ctx;
		off_sync(O.tab[i].ctx);
	}
}

/* Whether the process that exported an import has ended (or is unknown). */
static int
off_orphan(const struct rec *r)
{
	struct pollfd p = { .fd = r->pidfd, .events = POLLIN };

	return r->pidfd < 0 || poll(&p, 1, 0) != 0;
}

/*
 * Checks, before anything moves, that all of it can: an import whose
 * exporter has ended is the last holder of that memory (it would be lost),
 * and an exported descriptor needs /dev/null to stand in for it.  The bytes
 * to stage (owned and resident), or -1 with st->error and st->left.
 */
static int64_t
off_movable(struct offload_stats *st)
{
	size_t i, total = 0;
	const struct rec *r;
	int exports = 0;

	for (i = 0; i < O.cap; i++) {
		r = &O.tab[i];
		if (r->state == REC_OUT || r->state == REC_UNMAPPED) {
			snprintf(st->error, sizeof(st->error), "memory is out already");
			return -1;
		}
		if (r->state == REC_IN) {
			total += r->size;
			exports += r->exported;
		}
	}
	for (i = 0; i < O.cap; i++) {
		r = &O.tab[i];
		if (r->state == REC_IMPORT && off_orphan(r)) {
			st->left += r->size;
			if (st->error[0] == '\0')
				snprintf(st->error, sizeof(st->error), "%zu bytes at 0x%llx are the "
				    "memory of a process that has ended, mapped here: it cannot be "
				    "moved", r->size, (unsigned long long)r->va);
		}
	}
	if (st->error[0] == '\0' && exports > 0 && peerfd_null() < 0)
		snprintf(st->error, sizeof(st->error), "cannot open /dev/null: %s",
		    strerror(errno));
	return st->error[0] == '\0' ? (int64_t)total : -1;
}

/*
 * Lets go of the device memory of one allocation of the process's own,
 * copied out already: the name of the step that failed.
 */
static const char *
off_out_one(struct rec *r, CUresult *res)
{
	CUcontext old;

	if ((*res = O.ctx_push(r->ctx)) != CUDA_SUCCESS)
		return "entering its context";
	*res = O.unmap(r->va, r->size);
	O.ctx_pop(&old);
	if (*res != CUDA_SUCCESS)
		return "unmapping";
	/* unmapped: the handle goes, and with it the device memory */
	if (O.release(r->h) != CUDA_SUCCESS)
		O.log("cannot release the handle of 0x%llx", (unsigned long long)r->va);
	/* and the descriptor other processes took it by: its number stays taken */
	if (r->exported && dup3(peerfd_null(), r->fd, O_CLOEXEC) == -1)
		O.log("offload: cannot put /dev/null in place of descriptor %d: %s", r->fd,
		    strerror(errno));
	return NULL;
}

/* Unmaps another process's memory mapped here; the exporter moves it. */
static const char *
off_unmap_import(struct rec *r, CUresult *res)
{
	off_sync(r->ctx);
	if ((*res = O.unmap(r->va, r->size)) != CUDA_SUCCESS)
		return "unmapping another process's memory";
	O.release(r->h);
	return NULL;
}

/* The allocations of the process's own that are resident, laid out in m; -1: no memory. */
static int
off_move_plan(struct off_move *m)
{
	size_t i;

	memset(m, 0, sizeof(*m));
	m->rec = calloc(O.live, sizeof(*m->rec));
	m->size = calloc(O.live, sizeof(*m->size));
	m->off = calloc(O.live + 1, sizeof(*m->off));
	m->res = calloc(O.live, sizeof(*m->res));
	if (m->rec == NULL || m->size == NULL || m->off == NULL || m->res == NULL)
		return -1;
	for (i = 0; i < O.cap; i++)
		if (O.tab[i].state == REC_IN) {
			m->rec[m->n] = &O.tab[i];
			m->size[m->n++] = O.tab[i].size;
		}
	stageplan_layout(m->size, m->n, m->off);
	m->ctx = m->n > 0 ? m->rec[0]->ctx : NULL;
	return 0;
}

static void
off_move_free(struct off_move *m)
{
	free(m->queue);
	free(m->rec);
	free(m->size);
	free(m->off);
	free(m->res);
}

/*
 * Then the memory the job's processes share NCCL's way (xmem.h), once this
 * process's own is out: rc is how that went (after a failure nothing more
 * moves).
 */
static int
off_out_shared(struct offload_stats *st, double t0, int rc)
{
	uint64_t bytes = 0, left = 0;

	if (rc == 0 && xmem_out(&bytes, &left, st->error, sizeof(st->error)) == -1)
		rc = -1;
	st->bytes += bytes;
	st->left += left;
	st->seconds = off_now() - t0;
	return rc;
}

int
offload_out(struct offload_stats *st)
{
	double t0 = off_now();
	struct off_move m;
	size_t i;
	int64_t total;
	struct rec *r;
	CUresult res = CUDA_SUCCESS;
	const char *step = NULL;

	memset(st, 0, sizeof(*st));
	memset(&m, 0, sizeof(m));
	pthread_mutex_lock(&O.mu);
	if ((total = off_movable(st)) == -1) {
		pthread_mutex_unlock(&O.mu);
		O.log("offload out refused: %s", st->error);
		return -1;
	}
	if (total == 0 && O.imports == 0) {
		pthread_mutex_unlock(&O.mu);
		return off_out_shared(st, t0, 0);
	}
	off_sync_all();
	/* copied into the pieces kept or made ahead, and into the missing ones as they come */
	if (total > 0 && (off_move_plan(&m) == -1 || off_move_run(&m, (size_t)total) == -1)) {
		snprintf(st->error, sizeof(st->error), "no host memory for %lld bytes of staging",
		    (long long)total);
		st->left = (uint64_t)total;
		pthread_mutex_unlock(&O.mu);
		off_move_free(&m);
		return -1;
	}
	/* what reached the staging leaves its device, up to the first failure */
	for (i = 0; i < m.n; i++) {
		r = m.rec[i];
		if (step != NULL) {
			st->left += r->size;
			continue;
		}
		if ((res = m.res[i]) != CUDA_SUCCESS)
			step = "copying out";
		else if ((step = off_out_one(r, &res)) == NULL) {
			r->off = m.off[i];
			r->state = REC_OUT;
			st->bytes += r->size;
			continue;
		}
		off_error(st, step, r, res);
		st->left += r->size;
	}
	for (i = 0; i < O.cap; i++) {
		r = &O.tab[i];
		if (r->state != REC_IMPORT)
			continue;
		if (step != NULL) {
			st->left += r->size;
			continue;
		}
		if ((step = off_unmap_import(r, &res)) == NULL)
			r->state = REC_UNMAPPED;
		else {
			off_error(st, step, r, res);
			st->left += r->size;
		}
	}
	pthread_mutex_unlock(&O.mu);
	off_move_free(&m);
	st->seconds = off_now() - t0;
	O.log("offload out: %llu bytes in %.3f s (%zu pieces of staging, %zu made now by %d "
	    "threads)%s%s", (unsigned long long)st->bytes, st->seconds, m.pieces,
	    m.pieces - m.ready, m.workers, step ? ": " : "", step ? st->error : "");
	return off_out_shared(st, t0, step == NULL ? 0 : -1);
}

/*
 * Brings one allocation of the process's own back; if other processes took
 * it, a new descriptor of it under the number they took the old one by.
 */
static const char *
off_in_one(struct rec *r, CUresult *res)
{
	struct nvq_cu_mem_allocation_prop prop;
	const char *step = NULL;
	CUcontext old;
	int fd = -1;

	off_prop(&prop, r->dev);
	if ((*res = O.ctx_push(r->ctx)) != CUDA_SUCCESS)
		return "entering its context";
	if ((*res = off_create(&r->h, r->size, &prop)) != CUDA_SUCCESS)
		step = "creating";
	else if ((*res = off_map(r->va, r->size, r->h, r->dev)) != CUDA_SUCCESS) {
		O.release(r->h);
		step = "mapping";
	} else {
		if ((*res = off_copy(0, r->va, r->off, r->size)) != CUDA_SUCCESS)
			step = "copying in";
		else if (r->exported && (*res = O.export(&fd, r->h,
		    NVQ_CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR, 0)) != CUDA_SUCCESS)
			step = "exporting";
		else if (r->exported && dup3(fd, r->fd, O_CLOEXEC) == -1) {
			*res = 304;	/* CUDA_ERROR_OPERATING_SYSTEM */
			step = "putting its new descriptor in place";
		}
		if (fd >= 0)
			close(fd);
		if (step != NULL) {
			O.unmap(r->va, r->size);
			O.release(r->h);
		}
	}
	O.ctx_pop(&old);
	return step;
}

/*
 * A descriptor of the memory an import maps, from its exporter, once the
 * exporter has brought it back (its descriptor is no longer /dev/null).
 * -1 with errno if it cannot be had within OFF_IMPORT_WAIT.
 */
static int
off_take(const struct rec *r)
{
	double until = off_now() + OFF_IMPORT_WAIT;
	struct stat st, nul;
	int fd;

	if (fstat(peerfd_null(), &nul) == -1)
		return -1;
	for (;;) {
		if ((fd = peerfd_take(r->pidfd, r->rfd)) == -1)
			return -1;
		if (fstat(fd, &st) == 0 && !(S_ISCHR(st.st_mode) && st.st_rdev == nul.st_rdev))
			return fd;
		close(fd);
		if (off_now() >= until) {
			errno = ETIMEDOUT;
			return -1;
		}
		usleep(2000);
	}
}

/* Maps an import again, once its exporter brought the memory back. */
static const char *
off_remap_import(struct rec *r, CUresult *res)
{
	int fd = off_take(r);

	if (fd == -1) {
		O.log("offload: the memory at 0x%llx, from another process: %s",
		    (unsigned long long)r->va, strerror(errno));
		*res = 304;	/* CUDA_ERROR_OPERATING_SYSTEM */
		return "taking another process's memory back";
	}
	*res = O.import(&r->h, (void *)(intptr_t)fd, NVQ_CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR);
	close(fd);
	if (*res != CUDA_SUCCESS)
		return "importing another process's memory";
	if ((*res = off_map(r->va, r->size, r->h, r->dev)) != CUDA_SUCCESS) {
		O.release(r->h);
		return "mapping another process's memory";
	}
	return NULL;
}

int
offload_in(struct offload_stats *st)
{
	double t0 = off_now();
	size_t i;
	int pass;
	struct rec *r;
	CUresult res = CUDA_SUCCESS;
	const char *step = NULL;

	memset(st, 0, sizeof(*st));
	pthread_mutex_lock(&O.mu);
	/* its own memory first: another process may be waiting to map it again */
	for (pass = 0; pass < 2; pass++) {
		if (step == NULL && xmem_in(pass, &st->bytes, &st->left, st->error,
		    sizeof(st->error)) == -1)
			step = "bringing shared memory back";
		for (i = 0; i < O.cap; i++) {
			r = &O.tab[i];
			if (r->state != (pass == 0 ? REC_OUT : REC_UNMAPPED))
				continue;
			if (step != NULL) {
				st->left += r->size;
				continue;
			}
			if (pass == 1 && (step = off_remap_import(r, &res)) == NULL)
				r->state = REC_IMPORT;
			else if (pass == 0 && (step = off_in_one(r, &res)) == NULL) {
				r->state = REC_IN;
				st->bytes += r->size;
			}
			if (step != NULL) {
				off_error(st, step, r, res);
				st->left += r->size;
			}
		}
	}
	pthread_mutex_unlock(&O.mu);
	st->seconds = off_now() - t0;
	if (st->bytes > 0 || step != NULL)
		O.log("offload in: %llu bytes in %.3f s%s%s", (unsigned long long)st->bytes,
		    st->seconds, step ? ": " : "", step ? st->error : "");
	return step == NULL ? 0 : -1;
}

int
offload_resident(void)
{
	size_t i;
	int out = 0;

	pthread_mutex_lock(&O.mu);
	for (i = 0; i < O.cap && !out; i++)
		out = O.tab[i].state == REC_OUT || O.tab[i].state == REC_UNMAPPED;
	pthread_mutex_unlock(&O.mu);
	return !out && xmem_resident();
}

void
offload_child(void)
{
	size_t i;

	/*
	 * The parent's descriptors of its exports and pidfds of its exporters
	 * are copies here, which would hold the memory after a suspend let go
	 * of it (forked DataLoader workers live on): closed.  The parent's table
	 * stays mapped in the child, unused; the staging is not there.
	 */
	for (i = 0; i < O.cap; i++) {
		if (!REC_LIVE(O.tab[i].state))
			continue;
		if (O.tab[i].exported && O.tab[i].fd >= 0)
			close(O.tab[i].fd);
		if (O.tab[i].pidfd >= 0)
			close(O.tab[i].pidfd);
	}
	pthread_mutex_init(&O.mu, NULL);
	O.tab = NULL;
	O.imports = 0;
	O.cap = O.used = O.live = 0;
	memset(&S, 0, sizeof(S));
	memset(&K, 0, sizeof(K));	/* no preparer thread in the child */
}

/* ---- CUDA IPC (ipc.c) ---- */

/* The allocation that holds p, or NULL; a scan, as exports are rare. */
static struct rec *
off_holding(CUdeviceptr p)
{
	struct rec *r = off_find(p);
	size_t i;

	for (i = 0; r == NULL && i < O.cap; i++)
		if (O.tab[i].state == REC_IN && p >= O.tab[i].va &&
		    p - O.tab[i].va < O.tab[i].size)
			r = &O.tab[i];
	return r;
}

int
offload_export(CUdeviceptr p, struct offload_export *x, CUresult *res)
{
	struct rec *r;
	int fd = -1;

	if (!O.on && O.live == 0)
		return 0;
	pthread_mutex_lock(&O.mu);
	if ((r = off_holding(p)) == NULL || r->state != REC_IN) {
		pthread_mutex_unlock(&O.mu);
		return 0;
	}
	*res = CUDA_SUCCESS;
	if (!r->exported) {
		if (O.export == NULL || O.no_fd)
			*res = 801;	/* CUDA_ERROR_NOT_SUPPORTED */
		else if ((*res = O.export(&fd, r->h, NVQ_CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR,
		    0)) == CUDA_SUCCESS) {
			fcntl(fd, F_SETFD, FD_CLOEXEC);
			r->fd = fd;
			r->exported = 1;
			O.log("offload: 0x%llx (%zu bytes) exported for CUDA IPC: it stays on its "
			    "device", (unsigned long long)r->va, r->size);
		}
	}
	if (*res == CUDA_SUCCESS) {
		x->fd = r->fd;
		x->base = r->va;
		x->size = r->size;
		x->dev = r->dev;
	}
	pthread_mutex_unlock(&O.mu);
	return 1;
}

CUresult
offload_import(int fd, size_t size, int dev, int pidfd, int rfd, CUdeviceptr *p)
{
	struct rec r;
	CUresult res;

	if (O.import == NULL || dev < 0 || dev >= BUDGET_MAX_DEV || size == 0 || pidfd < 0)
		return 1;	/* CUDA_ERROR_INVALID_VALUE */
	memset(&r, 0, sizeof(r));
	r.size = size;
	r.dev = dev;
	r.state = REC_IMPORT;
	r.fd = -1;
	r.pidfd = pidfd;
	r.rfd = rfd;
	if (O.ctx_get(&r.ctx) != CUDA_SUCCESS)
		r.ctx = NULL;
	pthread_mutex_lock(&O.mu);
	if ((res = O.import(&r.h, (void *)(intptr_t)fd,
	    NVQ_CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR)) != CUDA_SUCCESS) {
		pthread_mutex_unlock(&O.mu);
		return res;
	}
	if ((res = O.reserve(&r.va, size, 0, 0, 0)) != CUDA_SUCCESS) {
		O.release(r.h);
		pthread_mutex_unlock(&O.mu);
		return res;
	}
	res = off_place(&r);
	pthread_mutex_unlock(&O.mu);
	if (res == CUDA_SUCCESS)
		*p = r.va;
	return res;
}

int
offload_unimport(CUdeviceptr p, CUresult *res)
{
	struct rec *r;

	if (O.live == 0)
		return 0;
	pthread_mutex_lock(&O.mu);
	if ((r = off_find(p)) == NULL || r->state < REC_IMPORT) {
		pthread_mutex_unlock(&O.mu);
		return 0;
	}
	*res = CUDA_SUCCESS;
	if (r->state == REC_IMPORT) {
		O.ctx_sync();	/* its work on this memory first, as cuMemFree waits */
		if ((*res = O.unmap(r->va, r->size)) == CUDA_SUCCESS)
			O.release(r->h);
	}
	if (*res == CUDA_SUCCESS) {	/* (unmapped already while a suspend has it out) */
		O.addr_free(r->va, r->size);
		off_remove(r);
	}
	pthread_mutex_unlock(&O.mu);
	return 1;
}

uint64_t
offload_unmovable(void)
{
	uint64_t n = 0;
	size_t i;

	/* read by the link thread at every tick: no walk unless there are imports */
	if (__atomic_load_n(&O.imports, __ATOMIC_RELAXED) == 0)
		return 0;
	pthread_mutex_lock(&O.mu);
	for (i = 0; i < O.cap; i++)
		if (O.tab[i].state == REC_IMPORT && off_orphan(&O.tab[i]))
			n += O.tab[i].size;
	pthread_mutex_unlock(&O.mu);
	return n;
}
