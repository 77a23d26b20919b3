/*
 * xmem.h: device memory the job's processes share NCCL's way, moved out of
 * every process on a suspend and back on resume.
 *
 * NCCL (cuMem path, its default) makes each buffer a peer reads or writes
 * with cuMemCreate (POSIX descriptors requested), maps it, and on a peer's
 * request its proxy thread exports a descriptor with
 * cuMemExportToShareableHandle, sends it over a Unix socket and closes it
 * (src/include/alloc.h ncclCuMemAlloc, src/proxy.cc proxyGetFd); the peer
 * imports it, maps it and sets its access (src/transport/p2p.cc
 * ncclP2pImportShareableBuffer).  The driver's checkpoint frees such
 * memory but cannot restore the importer (error 801), so the hook moves it
 * itself, as offload.c does for CUDA IPC:
 *   - it follows, in every process, the handles of device memory made with
 *     POSIX descriptors requested or imported from one, their mappings
 *     (address, size, offset) and the access set on them, and the job's
 *     references to each handle;
 *   - an export keeps a copy of the descriptor and writes a row in the
 *     job's table (xreg.h); an import finds its exporter's row;
 *   - on a suspend (offload_out) the exporter copies the memory to host
 *     memory, unmaps it, releases its handle and puts /dev/null under its
 *     kept descriptors; every importer unmaps it, keeping the address
 *     range.  No process holds it then, so the driver frees it, and its
 *     checkpoint sees no shared memory;
 *   - on resume (offload_in) the exporter makes it again (same size,
 *     properties, device and handle types), maps it where it was with the
 *     same access, copies it back and puts a new descriptor under the kept
 *     numbers; each importer waits for that, takes the descriptor with
 *     pidfd_getfd, imports it and maps it where it was.
 * The job keeps its handle values: after a move the hook translates them
 * to the driver's new ones (cuMemMap, cuMemRelease, cuMemExport...,
 * cuMemGetAllocationPropertiesFromHandle) and cuMemRetainAllocationHandle
 * gives the job's value back.  A value the driver hands out again while
 * the job holds it for moved memory is never given to the job: the new
 * handle (made, imported or retained, followed or not) gets another value,
 * translated the same way.  A thread that calls one of these while the
 * memory is out waits until it is back.
 * Memory that cannot be moved this way is counted (xmem_unmovable) and the
 * suspend refused: an import whose exporter has ended or is not in the
 * table, an export that found no row, an export of an imported handle.
 *
 * The entry points return 1 when the handle or address is one of these
 * (the result in *r), 0 when the caller should pass the call to the driver.
 */
#ifndef NVQ_XMEM_H
#define NVQ_XMEM_H

#include <stddef.h>
#include <stdint.h>

#include "cuda_decls.h"

/* Once, at init: on with offload; the job's account path; libcuda's lookup; the log. */
void	xmem_init(int on, const char *share_path, void *(*sym)(const char *),
	    void (*log)(const char *fmt, ...) __attribute__((format(printf, 1, 2))));
/*
 * After cuMemCreate made *h (any memory): *h becomes the job's value for
 * it.  CUDA_SUCCESS, or an error with the handle given back.
 */
CUresult xmem_created(CUmemGenericAllocationHandle *h, size_t size,
	    const struct nvq_cu_mem_allocation_prop *prop);
/* After cuMemImportFromShareableHandle made *h from os of type: the same. */
CUresult xmem_imported(CUmemGenericAllocationHandle *h, void *os, int type);
/* cuMemRelease of h; *last set when the job's last reference went (its charge goes). */
int	xmem_release(CUmemGenericAllocationHandle h, CUresult *r, int *last);
int	xmem_map(CUdeviceptr va, size_t size, size_t off, CUmemGenericAllocationHandle h,
	    unsigned long long flags, CUresult *r);
int	xmem_unmap(CUdeviceptr va, size_t size, CUresult *r);
int	xmem_set_access(CUdeviceptr va, size_t size, const struct nvq_cu_mem_access_desc *d,
	    size_t n, CUresult *r);
int	xmem_export(void *out, CUmemGenericAllocationHandle h, int type, unsigned long long flags,
	    CUresult *r);
int	xmem_retain(CUmemGenericAllocationHandle *h, void *p, CUresult *r);
/* The driver's handle for the job's h (h itself if not one of these). */
CUmemGenericAllocationHandle xmem_real(CUmemGenericAllocationHandle h);

/* Bytes of these a suspend cannot move (reported to nvqd, which refuses then). */
uint64_t xmem_unmovable(void);
/* Moves the shared memory out: 0, or -1 with err; *bytes what the exporters copied. */
int	xmem_out(uint64_t *bytes, uint64_t *left, char *err, size_t errlen);
/*
 * Brings it back: pass 0 this process's exports, pass 1 its imports (which
 * wait for their exporters' pass 0).  0, or -1 with err.
 */
int	xmem_in(int pass, uint64_t *bytes, uint64_t *left, char *err, size_t errlen);
/* Whether none of it is out. */
int	xmem_resident(void);
/* In a forked child: nothing of the parent's is its own. */
void	xmem_child(void);

#endif
