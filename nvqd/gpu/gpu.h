/*
 * gpu.h: the GPUs nvqd schedules, from NVML (opened with dlopen, so that
 * nvqd needs no CUDA to build or run) or from [gpus] virtual.
 *
 * For each GPU: index, UUID, name, total memory, and the memory used by
 * processes outside the queue, re-read by gpu_refresh().  Functions return
 * 0 or -1.
 */
#ifndef NVQ_GPU_H
#define NVQ_GPU_H

#include <stdint.h>
#include <sys/types.h>

#include "config.h"

struct gpu {
	int		index;
	char		uuid[96];
	char		name[96];
	uint64_t	total;
	uint64_t	used;		/* all use NVML sees (0 for virtual GPUs) */
	uint64_t	outside;	/* by processes that are not the queue's */
	int		nprocs_outside;
};

struct gpu_set {
	int		n;
	int		is_virtual;
	struct gpu	gpus[SCHED_MAX_GPUS];
	void		*lib;		/* dlopen handle of NVML */
	void		*dev[SCHED_MAX_GPUS];
	char		source[128];	/* "NVML (driver 580.1)" or "virtual" */
};

/*
 * Whether a process using GPU index gpu (bytes of it) belongs to a job of
 * the queue; the callback may account the use to that job.
 */
typedef int (*gpu_owner_cb)(pid_t, int gpu, uint64_t bytes, void *);

/* Opens NVML or sets up virtual GPUs; where neither is possible, no GPUs. */
int	gpu_open(struct gpu_set *, const struct config *);
/* Reads memory use again; returns 1 if any GPU's outside use changed, else 0. */
int	gpu_refresh(struct gpu_set *, gpu_owner_cb, void *);
/* The UUIDs of the GPUs in mask, comma-separated. */
void	gpu_uuids(const struct gpu_set *, uint64_t mask, char *uuids, size_t len);
void	gpu_close(struct gpu_set *);

#endif
