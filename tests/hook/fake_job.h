/*
 * fake_job.h: what fake_job.c's modes share with the modes in files of
 * their own (fake_ddp.c).
 */
#ifndef FAKE_JOB_H
#define FAKE_JOB_H

#include <stddef.h>
#include <stdint.h>

#include "cuda_decls.h"

/* A driver function as frameworks get it (cuGetProcAddress_v2); exits if missing. */
void	*resolve(const char *name);
/* CLOCK_MONOTONIC, in seconds. */
double	 now(void);
/* Writes n into file, whole (a temporary file renamed over it). */
void	 put_count(const char *file, long n);
/* fake_job ddp RANKS SECONDS FILE (fake_ddp.c). */
int	 fake_ddp(int ranks, double secs, const char *file);
/* fake_job nccl-reuse BYTES SECONDS (fake_reuse.c). */
int	 fake_reuse(size_t bytes, unsigned hold);

/* Writes (a pattern ^ flip) into bytes at p, or checks it there: -1 on a mismatch or error. */
int	 ipc_words(CUdeviceptr p, size_t bytes, uint64_t flip, int check);
/* Reserves a range, maps h there readable and writable from device 0: 0, or -1. */
int	 nccl_map(CUmemGenericAllocationHandle h, size_t bytes, CUdeviceptr *p);
/* Unmaps p and frees its range: 0, or -1. */
int	 nccl_unmap(CUdeviceptr p, size_t bytes);

typedef CUresult (*create_fn)(CUmemGenericAllocationHandle *, size_t,
    const struct nvq_cu_mem_allocation_prop *, unsigned long long);
typedef CUresult (*export_fn)(void *, CUmemGenericAllocationHandle, int, unsigned long long);
typedef CUresult (*release_fn)(CUmemGenericAllocationHandle);
typedef CUresult (*reserve_fn)(CUdeviceptr *, size_t, size_t, CUdeviceptr, unsigned long long);
typedef CUresult (*map_fn)(CUdeviceptr, size_t, size_t, CUmemGenericAllocationHandle,
    unsigned long long);
typedef CUresult (*access_fn)(CUdeviceptr, size_t, const struct nvq_cu_mem_access_desc *, size_t);
typedef CUresult (*unmap_fn)(CUdeviceptr, size_t);
typedef CUresult (*addr_free_fn)(CUdeviceptr, size_t);
typedef CUresult (*import_fn)(CUmemGenericAllocationHandle *, void *, int);
typedef CUresult (*retain_fn)(CUmemGenericAllocationHandle *, void *);

#endif
