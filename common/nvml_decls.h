/*
 * nvml_decls.h: the few NVML types nvqd (gpu.c) and nvq-ckpt need, declared
 * here so that neither needs the CUDA toolkit to build: NVML is opened with
 * dlopen where there is one.
 */
#ifndef NVQ_NVML_DECLS_H
#define NVQ_NVML_DECLS_H

typedef int nvml_ret;
struct nvml_memory {
	unsigned long long total, free, used;
};
struct nvml_process {	/* nvmlProcessInfo_t as of the _v2/_v3 calls */
	unsigned int pid;
	unsigned long long used;
	unsigned int gpu_instance, compute_instance;
};
struct nvml_proc_util {	/* nvmlProcessUtilizationSample_t */
	unsigned int pid;
	unsigned long long timestamp;	/* CPU time, microseconds */
	unsigned int sm, mem, enc, dec;	/* percent over the sample's period */
};
#define NVML_SUCCESS			0
#define NVML_ERROR_NOT_FOUND		6
#define NVML_ERROR_INSUFFICIENT_SIZE	7
#define NVML_VALUE_NOT_AVAILABLE	(~0ULL)

#endif
