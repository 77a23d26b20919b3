/*
 * ipc.h: CUDA IPC between the processes of a job, for the memory the hook
 * makes with the VMM API (offload.h).
 *
 * The driver's legacy IPC handles (cuIpcGetMemHandle) cannot name VMM
 * memory, so with offload on, torch.multiprocessing and every other user
 * of cudaIpcGetMemHandle would fail inside nvq and work outside it.  For
 * those allocations the hook writes a handle of its own into the same 64
 * bytes: the exporting process's pid and start time, and the number of a
 * descriptor of the memory that it keeps open.  The process that opens
 * the handle takes a copy of that descriptor with pidfd_getfd and maps it.
 * The kernel allows that only to a process that may ptrace the exporter:
 * the same user and, under Yama's ptrace_scope 1, a descendant of the
 * process the exporter names with PR_SET_PTRACER, which is the job's
 * supervisor (NVQ_SUPERVISOR): the job's processes, and no others.
 * Any other handle, and any other pointer, goes to the driver as it is.
 */
#ifndef NVQ_IPC_H
#define NVQ_IPC_H

#include <sys/types.h>

#include "cuda_decls.h"

#define IPC_PASS	(-1)	/* not the hook's: call the driver */

/* Once, at init: the job's supervisor (0: none known) and the hook's log. */
void	ipc_init(pid_t supervisor,
	    void (*log)(const char *fmt, ...) __attribute__((format(printf, 1, 2))));
/* cuIpcGetMemHandle of p: the CUDA result, or IPC_PASS. */
CUresult ipc_get(struct nvq_cu_ipc_mem_handle *h, CUdeviceptr p);
/* cuIpcOpenMemHandle of h: the CUDA result, or IPC_PASS. */
CUresult ipc_open(CUdeviceptr *p, const struct nvq_cu_ipc_mem_handle *h);
/* cuIpcCloseMemHandle of p: the CUDA result, or IPC_PASS. */
CUresult ipc_close(CUdeviceptr p);
/*
 * The driver's own IPC handles, which the hook passes on: memory the
 * driver's checkpoint cannot restore in the process that opened it (error
 * 801 on the H100, tests/gpu/export_check.sh), so it is counted as memory
 * a suspend cannot move.  Opened at p with size bytes; closed; how many.
 */
void	ipc_driver_opened(CUdeviceptr p, uint64_t size);
void	ipc_driver_closed(CUdeviceptr p);
uint64_t ipc_driver_bytes(void);
/* In a forked child: what the parent opened is not mapped here. */
void	ipc_child(void);

#endif
