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
	/* its energy counter (nvmlDeviceGetTotalEnergyConsumption), when it has one */
	int		has_energy;
	uint64_t	energy_mj;	/* millijoules at the last read */
	unsigned long long util_seen;	/* newest per-process sample read (NVML's us) */
	/* engine_energy.c's: the last poll's samples and whether the last read failed */
	int		util_ok;	/* NVML gave per-process utilisation */
	double		util_outside;	/* of processes no job holding it owns */
	int		energy_lost;	/* a read failed: the next one starts again */
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
/*
 * Reads GPU g's energy counter into *mj (millijoules since its driver
 * loaded); -1 where it has none (virtual GPUs, boards before Volta) or the
 * read failed.
 */
int	gpu_energy(struct gpu_set *, int g, uint64_t *mj);
/* A process's SM utilisation (percent) in one of NVML's samples. */
typedef void (*gpu_util_cb)(pid_t, unsigned int sm, void *);
/*
 * Calls cb for each per-process utilisation sample of GPU g newer than the
 * last read (nvmlDeviceGetProcessUtilization); returns the number of
 * samples (0: none since), or -1 where NVML gives none on this GPU.
 */
int	gpu_util(struct gpu_set *, int g, gpu_util_cb cb, void *arg);
/* The UUIDs of the GPUs in mask, comma-separated. */
void	gpu_uuids(const struct gpu_set *, uint64_t mask, char *uuids, size_t len);
void	gpu_close(struct gpu_set *);

#endif
