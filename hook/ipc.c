/*
 * ipc.c: the hook's own CUDA IPC handles for its VMM allocations (ipc.h).
 */
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <string.h>
#include <sys/types.h>
#include <unistd.h>

#include "ipc.h"
#include "offload.h"
#include "peerfd.h"
#include "proc.h"

#ifndef PR_SET_PTRACER
#define PR_SET_PTRACER	0x59616d61
#endif

#define IPC_MAGIC	"nvqipc1"	/* 8 bytes with its NUL */
#define IPC_MAX_OPEN	1024
#define CUDA_ERROR_INVALID_VALUE	1
#define CUDA_ERROR_INVALID_HANDLE	400

/* What the 64 bytes of a CUipcMemHandle carry when the hook made it. */
struct ipc_handle {
	char		magic[8];
	int32_t		pid;		/* the exporter */
	int32_t		fd;		/* its descriptor of the memory */
	int64_t		start;		/* its start time: tells a reused pid */
	uint64_t	size;		/* of the allocation */
	uint64_t	offset;		/* of the pointer exported, in it */
	int32_t		dev;
	int32_t		pad;
};
_Static_assert(sizeof(struct ipc_handle) <= NVQ_CU_IPC_HANDLE_SIZE, "an IPC handle holds it");

/* What this process opened: one mapping per handle, counted. */
struct ipc_open {
	int32_t		pid, fd;
	int64_t		start;
	uint64_t	offset;
	CUdeviceptr	base, p;
	int		refs;
};

static struct {
	pthread_mutex_t	mu;
	struct ipc_open	open[IPC_MAX_OPEN];
	int		nopen;
	struct { CUdeviceptr p; uint64_t size; int refs; } drv[IPC_MAX_OPEN];	/* the driver's */
	int		ndrv;
	uint64_t	drv_bytes;	/* of drv[] */
	void		(*log)(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
} I = { .mu = PTHREAD_MUTEX_INITIALIZER };

void
ipc_init(pid_t supervisor, void (*log)(const char *fmt, ...))
{
	peerfd_tracer(supervisor);
	I.log = log;
}


CUresult
ipc_get(struct nvq_cu_ipc_mem_handle *h, CUdeviceptr p)
{
	struct offload_export x;
	struct ipc_handle ih;
	CUresult r;

	if (h == NULL || !offload_export(p, &x, &r))
		return IPC_PASS;
	if (r != CUDA_SUCCESS)
		return r;
	/* let the job's processes (the supervisor's descendants) take the descriptor */
	if (peerfd_allow() == -1)
		I.log("ipc: PR_SET_PTRACER: %s", strerror(errno));
	memset(&ih, 0, sizeof(ih));
	memcpy(ih.magic, IPC_MAGIC, sizeof(ih.magic));
	ih.pid = (int32_t)getpid();
	ih.fd = x.fd;
	ih.start = proc_start_time(getpid());
	ih.size = x.size;
	ih.offset = p - x.base;
	ih.dev = x.dev;
	memset(h, 0, sizeof(*h));
	memcpy(h->reserved, &ih, sizeof(ih));
	return CUDA_SUCCESS;
}

/*
 * A copy of the exporter's descriptor, and a pidfd of the exporter in
 * *pidfd; or -1 with why in err.
 */
static int
ipc_take(const struct ipc_handle *ih, int *pidfdp, char *err, size_t errlen)
{
	int pidfd, fd;

	if ((pidfd = peerfd_pidfd((pid_t)ih->pid)) == -1) {
		snprintf(err, errlen, "process %d: %s", (int)ih->pid, strerror(errno));
		return -1;
	}
	/* the pidfd holds the pid: a start time that matches now stays true */
	if (proc_start_time((pid_t)ih->pid) != ih->start) {
		snprintf(err, errlen, "process %d has ended", (int)ih->pid);
		close(pidfd);
		return -1;
	}
	if ((fd = peerfd_take(pidfd, ih->fd)) == -1) {
		snprintf(err, errlen, "taking descriptor %d of process %d: %s", (int)ih->fd,
		    (int)ih->pid, strerror(errno));
		close(pidfd);
		return -1;
	}
	*pidfdp = pidfd;
	return fd;
}

CUresult
ipc_open(CUdeviceptr *p, const struct nvq_cu_ipc_mem_handle *h)
{
	struct ipc_handle ih;
	struct ipc_open *o;
	char err[160];
	CUdeviceptr base;
	CUresult r;
	int i, fd, pidfd = -1;

	memcpy(&ih, h->reserved, sizeof(ih));
	if (memcmp(ih.magic, IPC_MAGIC, sizeof(ih.magic)) != 0)
		return IPC_PASS;
	if (p == NULL || ih.offset >= ih.size)
		return CUDA_ERROR_INVALID_VALUE;
	pthread_mutex_lock(&I.mu);
	for (i = 0; i < I.nopen; i++) {
		o = &I.open[i];
		if (o->pid == ih.pid && o->fd == ih.fd && o->start == ih.start &&
		    o->offset == ih.offset) {
			o->refs++;
			*p = o->p;
			pthread_mutex_unlock(&I.mu);
			return CUDA_SUCCESS;
		}
	}
	if (I.nopen == IPC_MAX_OPEN) {
		pthread_mutex_unlock(&I.mu);
		I.log("ipc: %d handles open already", IPC_MAX_OPEN);
		return CUDA_ERROR_OUT_OF_MEMORY;
	}
	if ((fd = ipc_take(&ih, &pidfd, err, sizeof(err))) == -1) {
		pthread_mutex_unlock(&I.mu);
		I.log("ipc: cannot open a handle: %s", err);
		return CUDA_ERROR_INVALID_HANDLE;
	}
	r = offload_import(fd, ih.size, ih.dev, pidfd, ih.fd, &base);
	close(fd);	/* the imported handle holds the memory */
	if (r != CUDA_SUCCESS)
		close(pidfd);	/* else offload.c keeps it, for after a suspend */
	if (r == CUDA_SUCCESS) {
		o = &I.open[I.nopen++];
		o->pid = ih.pid;
		o->fd = ih.fd;
		o->start = ih.start;
		o->offset = ih.offset;
		o->base = base;
		o->p = *p = base + ih.offset;
		o->refs = 1;
	} else
		I.log("ipc: cannot map process %d's memory: CUDA error %d", (int)ih.pid, (int)r);
	pthread_mutex_unlock(&I.mu);
	return r;
}

CUresult
ipc_close(CUdeviceptr p)
{
	CUresult r = CUDA_SUCCESS;
	int i;

	pthread_mutex_lock(&I.mu);
	for (i = 0; i < I.nopen && I.open[i].p != p; i++)
		;
	if (i == I.nopen) {
		pthread_mutex_unlock(&I.mu);
		return IPC_PASS;
	}
	if (--I.open[i].refs == 0) {
		if (!offload_unimport(I.open[i].base, &r))
			r = CUDA_ERROR_INVALID_VALUE;
		if (r == CUDA_SUCCESS)
			I.open[i] = I.open[--I.nopen];
		else
			I.open[i].refs = 1;
	}
	pthread_mutex_unlock(&I.mu);
	return r;
}

void
ipc_driver_opened(CUdeviceptr p, uint64_t size)
{
	int i;

	pthread_mutex_lock(&I.mu);
	for (i = 0; i < I.ndrv && I.drv[i].p != p; i++)
		;
	if (i < I.ndrv)
		I.drv[i].refs++;	/* the same mapping again */
	else if (I.ndrv < IPC_MAX_OPEN) {
		I.drv[I.ndrv].p = p;
		I.drv[I.ndrv].refs = 1;
		I.drv[I.ndrv++].size = size;
		I.drv_bytes += size;
	}
	pthread_mutex_unlock(&I.mu);
}

void
ipc_driver_closed(CUdeviceptr p)
{
	int i;

	pthread_mutex_lock(&I.mu);
	for (i = 0; i < I.ndrv && I.drv[i].p != p; i++)
		;
	if (i < I.ndrv && --I.drv[i].refs == 0) {
		I.drv_bytes -= I.drv[i].size;
		I.drv[i] = I.drv[--I.ndrv];
	}
	pthread_mutex_unlock(&I.mu);
}

uint64_t
ipc_driver_bytes(void)
{
	uint64_t n;

	pthread_mutex_lock(&I.mu);
	n = I.drv_bytes;
	pthread_mutex_unlock(&I.mu);
	return n;
}

void
ipc_child(void)
{
	pthread_mutex_init(&I.mu, NULL);
	I.ndrv = 0;
	I.drv_bytes = 0;
	I.nopen = 0;
	peerfd_child();
}
