/*
 * offload.h: the job's device memory that the hook moves to host memory
 * and back itself, for a fast suspend.
 *
 * With NVQ_HOOK_OFFLOAD=1 (nvqd's [scheduler] offload = on), an allocation
 * of OFFLOAD_MIN bytes or more through cuMemAlloc is made with the VMM API:
 * an address range reserved, physical memory created and mapped there.
 * When nvqd suspends the job (its launches and copies already held at the
 * gate), offload_out copies each such allocation into pinned host staging
 * (pieces of 1 GiB: mmap with transparent huge pages, touched by several
 * threads, then cuMemHostRegister; or those made ahead, offload_keep) at
 * the link's full speed, each piece as soon as it is made, and unmaps and
 * releases its device memory; the
 * address range stays reserved.  Then the
 * driver's checkpoint moves what is left (the context, small allocations).
 * offload_in creates and maps the memory again at the same addresses and
 * copies it back, so that every pointer the job holds is valid and its
 * data bit-identical.  A step that fails stops there: what was not moved
 * stays where it is (the driver's checkpoint takes it), and what is out
 * comes back on the next offload_in.
 *
 * Thread safety: one mutex over the table; allocations and frees wait
 * while memory moves.
 */
#ifndef NVQ_OFFLOAD_H
#define NVQ_OFFLOAD_H

#include <stddef.h>
#include <stdint.h>

#include "cuda_decls.h"

#define OFFLOAD_MIN	(2u << 20)	/* smaller allocations are left to the driver */

struct offload_stats {
	uint64_t	bytes;		/* moved by this call */
	uint64_t	left;		/* still out (in) or not moved (out) */
	double		seconds;
	char		error[160];	/* "" when every step worked */
};

/*
 * Turns offloading on, with the real libcuda's lookup and the hook's log
 * (all offload.c needs of the rest of the hook); once, at init.
 */
void	offload_init(int on, void *(*sym)(const char *),
	    void (*log)(const char *fmt, ...) __attribute__((format(printf, 1, 2))));
/* Bytes an allocation of n takes through the VMM path; 0: not through it. */
size_t	offload_size(size_t n);
/*
 * Allocates size bytes (offload_size's) on device dev.  Returns the CUDA
 * result; OFFLOAD_PASS if the VMM API cannot serve it (the caller goes to
 * cuMemAlloc, and offloading stays off from then on).
 */
#define OFFLOAD_PASS	(-1)
CUresult offload_alloc(CUdeviceptr *, size_t size, int dev);
/* Frees p if it is one of these: 1 with *r the result; 0 if it is not. */
int	offload_free(CUdeviceptr p, CUresult *r);
/* Moves every resident allocation out.  0, or -1 with st->error. */
int	offload_out(struct offload_stats *);
/* Brings every allocation that is out back.  0, or -1 with st->error. */
int	offload_in(struct offload_stats *);
/* After offload_in brought all back: frees the staging memory beyond what it may keep. */
void	offload_drop_staging(void);
/*
 * The staging this process may keep between switches (nvqd's [scheduler]
 * staging, shared out among the job's processes): made ahead by a
 * background thread as the memory grows, up to bytes, and kept after a
 * resume.  0: made at each suspend and freed after.
 */
void	offload_keep(size_t bytes);
/* The staging held now (made ahead or kept), in bytes. */
size_t	offload_staged(void);
/* Whether every allocation is on its device (the gate may open). */
int	offload_resident(void);
/*
 * CUDA IPC (ipc.c).  The driver's legacy IPC handles cannot name VMM
 * memory, so these allocations are made exportable and shared as POSIX
 * descriptors.  A suspend moves shared memory too: the process that made
 * it (the exporter) copies it out like the rest, and in its place keeps
 * /dev/null under the descriptor's number; the others (importers) unmap it
 * and keep its address range.  On the way back the exporter makes it again,
 * copies it in and puts a new descriptor under the same number, so that
 * handles made before the suspend still open; each importer waits for that
 * (its exporter's descriptor no longer /dev/null), takes the descriptor
 * with its pidfd and maps it at the same address.  An import whose
 * exporter has ended holds the last reference to that memory: it cannot be
 * moved (offload_unmovable), and offload_out refuses before touching any.
 */
struct offload_export {
	int		fd;		/* the allocation's descriptor (offload.c keeps it) */
	CUdeviceptr	base;
	size_t		size;
	int		dev;
};
/* Exports the allocation holding p: 1 with *r the result, 0 if none holds p. */
int	offload_export(CUdeviceptr p, struct offload_export *, CUresult *r);
/*
 * Maps another process's allocation (fd, size, its device) here: CUDA
 * result.  pidfd is the exporter's, rfd its number of the descriptor; on
 * success offload.c keeps pidfd (to take the memory again after a suspend).
 */
CUresult offload_import(int fd, size_t size, int dev, int pidfd, int rfd, CUdeviceptr *p);
/* Unmaps what offload_import mapped at p: 1 with *r the result, 0 if not one. */
int	offload_unimport(CUdeviceptr p, CUresult *r);
/* Bytes of those a suspend cannot move: imports whose exporter has ended. */
uint64_t offload_unmovable(void);
/* In a forked child: the parent's allocations are not its own. */
void	offload_child(void);

#endif
