/*
 * check_decls.c: the hook's own declarations (common/cuda_decls.h) against
 * the real cuda.h, where the CUDA toolkit is installed: it compiles only if
 * they agree.  Built by `make unit` when /usr/local/cuda/include/cuda.h
 * exists.
 */
#include <cuda.h>
#include <stddef.h>

/* cuda.h defines these too: check ours by value below, then take its types */
#define NVQ_CUDA_DECLS_ONLY_STRUCTS
#include "cuda_decls.h"

#define SAME(a, b) _Static_assert(sizeof(a) == sizeof(b), #a " and " #b " differ in size")
#define AT(a, b, f) _Static_assert(offsetof(a, f) == offsetof(b, f), #a "." #f " is misplaced")

SAME(nvq_CUdeviceptr, CUdeviceptr_v2);
SAME(nvq_CUmemGenericAllocationHandle, CUmemGenericAllocationHandle_v1);
SAME(struct nvq_cu_mem_allocation_prop, CUmemAllocationProp);
AT(struct nvq_cu_mem_allocation_prop, CUmemAllocationProp, location);
AT(struct nvq_cu_mem_allocation_prop, CUmemAllocationProp, allocFlags);
SAME(struct nvq_cu_mem_access_desc, CUmemAccessDesc);
AT(struct nvq_cu_mem_access_desc, CUmemAccessDesc, flags);
SAME(struct nvq_cu_array_descriptor, CUDA_ARRAY_DESCRIPTOR);
AT(struct nvq_cu_array_descriptor, CUDA_ARRAY_DESCRIPTOR, Format);
AT(struct nvq_cu_array_descriptor, CUDA_ARRAY_DESCRIPTOR, NumChannels);
SAME(struct nvq_cu_array3d_descriptor, CUDA_ARRAY3D_DESCRIPTOR);
AT(struct nvq_cu_array3d_descriptor, CUDA_ARRAY3D_DESCRIPTOR, Format);
AT(struct nvq_cu_array3d_descriptor, CUDA_ARRAY3D_DESCRIPTOR, Flags);
SAME(struct nvq_cu_checkpoint_lock_args, CUcheckpointLockArgs);
AT(struct nvq_cu_checkpoint_lock_args, CUcheckpointLockArgs, timeoutMs);
SAME(struct nvq_cu_checkpoint_args, CUcheckpointCheckpointArgs);
SAME(struct nvq_cu_checkpoint_args, CUcheckpointUnlockArgs);
SAME(struct nvq_cu_checkpoint_restore_args, CUcheckpointRestoreArgs);
AT(struct nvq_cu_checkpoint_restore_args, CUcheckpointRestoreArgs, gpuPairsCount);
AT(struct nvq_cu_checkpoint_restore_args, CUcheckpointRestoreArgs, reserved1);
_Static_assert(CU_PROCESS_STATE_CHECKPOINTED == NVQ_CU_PROCESS_STATE_CHECKPOINTED, "checkpointed");
_Static_assert(CU_PROCESS_STATE_LOCKED == NVQ_CU_PROCESS_STATE_LOCKED, "locked");
_Static_assert(CU_MEM_LOCATION_TYPE_DEVICE == NVQ_CU_MEM_LOCATION_TYPE_DEVICE, "device location");
_Static_assert(CU_MEM_ALLOCATION_TYPE_PINNED == NVQ_CU_MEM_ALLOCATION_TYPE_PINNED, "pinned");
_Static_assert(CU_MEM_ACCESS_FLAGS_PROT_READWRITE == NVQ_CU_MEM_ACCESS_FLAGS_PROT_READWRITE,
    "read-write access");
_Static_assert(CU_MEM_ALLOC_GRANULARITY_MINIMUM == NVQ_CU_MEM_ALLOC_GRANULARITY_MINIMUM,
    "minimum granularity");
_Static_assert(CU_MEMHOSTREGISTER_PORTABLE == NVQ_CU_MEMHOSTREGISTER_PORTABLE, "portable");
_Static_assert(CU_GET_PROC_ADDRESS_PER_THREAD_DEFAULT_STREAM == NVQ_CU_PER_THREAD, "per-thread flag");
SAME(struct nvq_cu_ipc_mem_handle, CUipcMemHandle);
_Static_assert(CU_IPC_HANDLE_SIZE == NVQ_CU_IPC_HANDLE_SIZE, "IPC handle size");
_Static_assert(CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR == NVQ_CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR,
    "POSIX file descriptor handles");
_Static_assert(CUDA_ERROR_OUT_OF_MEMORY == NVQ_CUDA_ERROR_OUT_OF_MEMORY, "out of memory");
_Static_assert(CUDA_ERROR_NOT_INITIALIZED == NVQ_CUDA_ERROR_NOT_INITIALIZED, "not initialized");

int main(void);
int
main(void)
{
	return 0;
}
