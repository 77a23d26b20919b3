/*
 * fake_reuse.c: fake_job nccl-reuse BYTES SECONDS, handle values that the
 * driver hands out again after a suspend moved shared memory (run with
 * the fake's FAKE_VMM_REUSE=1, which gives a new handle the value freed
 * last).
 *
 * It makes A and B (cuMemCreate, POSIX descriptors requested), maps them,
 * writes A, exports both (their descriptors kept, as NCCL's proxy does)
 * and prints "made"; a suspend and resume move them out and back within
 * SECONDS (the driver's values come back swapped).  Then it frees B, whose
 * driver value is A's old one, makes D without descriptors and C with
 * them, maps, retains and releases each, writing them, and checks that no
 * value the job got is A's and that A still holds what was written:
 * "reuse ok", or what went wrong.
 */
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "fake_job.h"

static int
reuse_make(size_t bytes, int fds, CUmemGenericAllocationHandle *h, CUdeviceptr *p)
{
	struct nvq_cu_mem_allocation_prop prop;
	CUresult r;

	memset(&prop, 0, sizeof(prop));
	prop.type = NVQ_CU_MEM_ALLOCATION_TYPE_PINNED;
	prop.location.type = NVQ_CU_MEM_LOCATION_TYPE_DEVICE;
	prop.requestedHandleTypes = fds ? NVQ_CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR : 0;
	if ((r = ((create_fn)resolve("cuMemCreate"))(h, bytes, &prop, 0)) != CUDA_SUCCESS) {
		printf("cuMemCreate: CUDA error %d\n", (int)r);
		return -1;
	}
	return nccl_map(*h, bytes, p);
}

/* One made after the move: not A's value, its own memory, retained as itself, freed. */
static int
reuse_other(size_t bytes, int fds, CUmemGenericAllocationHandle ha, CUdeviceptr pa,
    const char *name)
{
	CUmemGenericAllocationHandle h, hr;
	CUdeviceptr p;

	if (reuse_make(bytes, fds, &h, &p) == -1)
		return -1;
	if (h == ha) {
		printf("%s got the value the job holds for A\n", name);
		return -1;
	}
	if (ipc_words(p, bytes, 3, 0) == -1 || ipc_words(pa, bytes, 0, 1) == -1) {
		printf("writing %s changed A\n", name);
		return -1;
	}
	if (((retain_fn)resolve("cuMemRetainAllocationHandle"))(&hr, (void *)(uintptr_t)p) !=
	    CUDA_SUCCESS || hr != h || ((release_fn)resolve("cuMemRelease"))(hr) != CUDA_SUCCESS) {
		printf("%s retained is not %s\n", name, name);
		return -1;
	}
	if (nccl_unmap(p, bytes) == -1 || ((release_fn)resolve("cuMemRelease"))(h) != CUDA_SUCCESS) {
		printf("freeing %s failed\n", name);
		return -1;
	}
	if (ipc_words(pa, bytes, 0, 1) == -1) {
		printf("freeing %s changed A\n", name);
		return -1;
	}
	return 0;
}

int
fake_reuse(size_t bytes, unsigned hold)
{
	CUmemGenericAllocationHandle ha, hb;
	CUdeviceptr pa, pb;
	export_fn export_ = (export_fn)resolve("cuMemExportToShareableHandle");
	int fa = -1, fb = -1;

	if (reuse_make(bytes, 1, &ha, &pa) == -1 || reuse_make(bytes, 1, &hb, &pb) == -1 ||
	    ipc_words(pa, bytes, 0, 0) == -1 || ipc_words(pb, bytes, 1, 0) == -1 ||
	    export_(&fa, ha, NVQ_CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR, 0) != CUDA_SUCCESS ||
	    export_(&fb, hb, NVQ_CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR, 0) != CUDA_SUCCESS) {
		printf("making A and B failed\n");
		return 1;
	}
	close(fa);
	close(fb);
	printf("made\n");
	fflush(stdout);
	sleep(hold);
	if (ipc_words(pa, bytes, 0, 1) == -1 || ipc_words(pb, bytes, 1, 1) == -1) {
		printf("A or B is not the same after the wait\n");
		return 1;
	}
	if (nccl_unmap(pb, bytes) == -1 || ((release_fn)resolve("cuMemRelease"))(hb) != CUDA_SUCCESS) {
		printf("freeing B failed\n");
		return 1;
	}
	if (reuse_other(bytes, 0, ha, pa, "D") == -1 || reuse_other(bytes, 1, ha, pa, "C") == -1)
		return 1;
	if (nccl_unmap(pa, bytes) == -1 || ((release_fn)resolve("cuMemRelease"))(ha) != CUDA_SUCCESS) {
		printf("freeing A failed\n");
		return 1;
	}
	printf("reuse ok\n");
	return 0;
}
