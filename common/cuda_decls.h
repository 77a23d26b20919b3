/*
 * cuda_decls.h: the few CUDA driver types and constants the hook needs,
 * declared here so that the hook builds without the CUDA toolkit.  They are
 * the driver's stable C ABI; tests/hook/check_decls.c compiles them against
 * the real cuda.h where there is one, to prove that they match.
 */
#ifndef NVQ_CUDA_DECLS_H
#define NVQ_CUDA_DECLS_H

#include <stddef.h>
#include <stdint.h>

/* the values, under names of our own (check_decls.c compares them) */
typedef unsigned long long nvq_CUdeviceptr;
typedef unsigned long long nvq_CUmemGenericAllocationHandle;
#define NVQ_CUDA_ERROR_OUT_OF_MEMORY	2
#define NVQ_CUDA_ERROR_NOT_INITIALIZED	3
#define NVQ_CU_PER_THREAD		2	/* CU_GET_PROC_ADDRESS_PER_THREAD_DEFAULT_STREAM */
#define NVQ_CU_MEM_LOCATION_TYPE_DEVICE	1
/* for the VMM path of offload.c */
#define NVQ_CU_MEM_ALLOCATION_TYPE_PINNED	1
#define NVQ_CU_MEM_ACCESS_FLAGS_PROT_READWRITE	3
#define NVQ_CU_MEM_ALLOC_GRANULARITY_MINIMUM	0
#define NVQ_CU_MEMHOSTREGISTER_PORTABLE		0x01
/* CUDA IPC of offload.c's allocations (ipc.c) */
#define NVQ_CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR	0x1
#define NVQ_CU_IPC_HANDLE_SIZE			64

#ifndef NVQ_CUDA_DECLS_ONLY_STRUCTS
typedef int CUresult;
typedef int CUdevice;
typedef nvq_CUdeviceptr CUdeviceptr;
typedef nvq_CUmemGenericAllocationHandle CUmemGenericAllocationHandle;
typedef unsigned long long cuuint64_t;
typedef struct CUstream_st *CUstream;
typedef struct CUmemPoolHandle_st *CUmemoryPool;
typedef struct CUarray_st *CUarray;
typedef int CUdriverProcAddressQueryResult;

#define CUDA_SUCCESS			0
#define CUDA_ERROR_OUT_OF_MEMORY	NVQ_CUDA_ERROR_OUT_OF_MEMORY
#define CU_GET_PROC_ADDRESS_PER_THREAD_DEFAULT_STREAM	NVQ_CU_PER_THREAD
#define CU_MEM_LOCATION_TYPE_DEVICE	NVQ_CU_MEM_LOCATION_TYPE_DEVICE
#endif

struct nvq_cu_ipc_mem_handle {
	char		reserved[NVQ_CU_IPC_HANDLE_SIZE];
};

struct nvq_cu_mem_location {
	int		type;
	int		id;
};

struct nvq_cu_mem_allocation_prop {
	int		type;
	int		requestedHandleTypes;
	struct nvq_cu_mem_location location;
	void		*win32HandleMetaData;
	struct {
		unsigned char	compressionType;
		unsigned char	gpuDirectRDMACapable;
		unsigned short	usage;
		unsigned char	reserved[4];
	} allocFlags;
};

struct nvq_cu_mem_access_desc {
	struct nvq_cu_mem_location location;
	int		flags;
};

struct nvq_cu_array_descriptor {
	size_t		Width;
	size_t		Height;
	int		Format;
	unsigned int	NumChannels;
};

struct nvq_cu_array3d_descriptor {
	size_t		Width;
	size_t		Height;
	size_t		Depth;
	int		Format;
	unsigned int	NumChannels;
	unsigned int	Flags;
};

/*
 * The checkpoint API (CUDA 12.8, driver 570): the arguments nvq-ckpt passes,
 * all zero but the lock's timeout, and CUprocessState's values.
 */
struct nvq_cu_checkpoint_lock_args {
	unsigned int	timeoutMs;
	unsigned int	reserved0;
	unsigned long long reserved1[7];
};

struct nvq_cu_checkpoint_args {
	unsigned long long reserved[8];
};

struct nvq_cu_checkpoint_restore_args {
	void		*gpuPairs;
	unsigned int	gpuPairsCount;
	char		reserved[52 - sizeof(void *)];
	unsigned long long reserved1;
};

#define NVQ_CU_PROCESS_STATE_RUNNING		0
#define NVQ_CU_PROCESS_STATE_LOCKED		1
#define NVQ_CU_PROCESS_STATE_CHECKPOINTED	2
#define NVQ_CU_PROCESS_STATE_FAILED		3

#endif
