/*
 * test_hook.c: the hook, preloaded, against the fake libcuda.
 *
 * Run as LD_PRELOAD=libnvq-hook.so NVQ_GPU_MEM=1073741824 test_hook, with
 * the fake libcuda.so.1 and libnvidia-ml.so.1 first on the library path,
 * FAKE_NVML_GPUS=2x16G and CUDA_VISIBLE_DEVICES set to the fake's GPU 1.  The binary is linked
 * with the fake libcuda, so it reaches the driver the three ways frameworks
 * do: exported symbols, dlsym, and cuGetProcAddress/_v2.
 */
#include <dlfcn.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>
#include <cmocka.h>

#include "cuda_decls.h"

#define M (1ULL << 20)
#define G (1ULL << 30)

/* linked directly: these calls bind to the hook's exported wrappers */
CUresult cuMemAlloc_v2(CUdeviceptr *, size_t);
CUresult cuMemFree_v2(CUdeviceptr);
int fake_calls(const char *);
void fake_set_device(int);

typedef CUresult (*alloc_fn)(CUdeviceptr *, size_t);
typedef CUresult (*free_fn)(CUdeviceptr);
typedef CUresult (*alloc_async_fn)(CUdeviceptr *, size_t, CUstream);
typedef CUresult (*free_async_fn)(CUdeviceptr, CUstream);
typedef CUresult (*gpa_fn)(const char *, void **, int, cuuint64_t);
typedef CUresult (*gpa2_fn)(const char *, void **, int, cuuint64_t,
    CUdriverProcAddressQueryResult *);
typedef CUresult (*meminfo_fn)(size_t *, size_t *);

static void *lib;

static void *
sym(const char *name)
{
	void *p = dlsym(lib, name);

	assert_non_null(p);
	return p;
}

static void *
gpa2(const char *name, int version, cuuint64_t flags)
{
	gpa2_fn g = (gpa2_fn)sym("cuGetProcAddress_v2");
	CUdriverProcAddressQueryResult st = -1;
	void *p = NULL;

	assert_int_equal(g(name, &p, version, flags, &st), CUDA_SUCCESS);
	assert_int_equal(st, 0);
	assert_non_null(p);
	return p;
}

/* Whether p lives in the hook (a wrapper) rather than in libcuda. */
static int
in_hook(void *p)
{
	Dl_info info;

	return dladdr(p, &info) != 0 && strstr(info.dli_fname, "libnvq-hook") != NULL;
}

static size_t
free_now(void)
{
	size_t f = 0, t = 0;

	assert_int_equal(((meminfo_fn)sym("cuMemGetInfo_v2"))(&f, &t), CUDA_SUCCESS);
	assert_int_equal(t, G);
	return f;
}

static void
test_exported(void **state)
{
	CUdeviceptr a, b;

	(void)state;
	assert_int_equal(cuMemAlloc_v2(&a, 768 * M), CUDA_SUCCESS);
	assert_int_equal(cuMemAlloc_v2(&b, 512 * M), CUDA_ERROR_OUT_OF_MEMORY);
	/* the refused one never reached the driver */
	assert_int_equal(fake_calls("cuMemAlloc_v2"), 1);
	assert_int_equal(free_now(), 256 * M);
	assert_int_equal(cuMemFree_v2(a), CUDA_SUCCESS);
	assert_int_equal(free_now(), G);
	assert_int_equal(cuMemAlloc_v2(&b, 512 * M), CUDA_SUCCESS);
	assert_int_equal(cuMemFree_v2(b), CUDA_SUCCESS);
}

static void
test_dlsym(void **state)
{
	alloc_fn alloc = (alloc_fn)sym("cuMemAlloc_v2");
	free_fn fr = (free_fn)sym("cuMemFree_v2");
	void *init = sym("cuInit");
	CUdeviceptr a, b;

	(void)state;
	assert_true(in_hook((void *)alloc));
	assert_false(in_hook(init));	/* not wrapped: passed through */
	assert_int_equal(alloc(&a, 900 * M), CUDA_SUCCESS);
	assert_int_equal(alloc(&b, 200 * M), CUDA_ERROR_OUT_OF_MEMORY);
	assert_int_equal(fr(a), CUDA_SUCCESS);
	/* a symbol that does not exist stays NULL */
	assert_null(dlsym(lib, "cuNoSuchFunction"));
	/*
	 * RTLD_NEXT is relative to the caller, not to the hook: from this
	 * executable the next dlsym is the preloaded hook's; a wrapper that
	 * called the real dlsym itself would answer libc's.
	 */
	assert_true(in_hook(dlsym(RTLD_NEXT, "dlsym")));
	assert_ptr_equal(dlsym(RTLD_NEXT, "fake_calls"), (void *)fake_calls);
	/* the old dlsym version reaches the hook too */
	{
		void *(*old)(void *, const char *) =
		    (void *(*)(void *, const char *))dlvsym(RTLD_DEFAULT, "dlsym", "GLIBC_2.2.5");
		assert_non_null(old);
		assert_true(in_hook(old(lib, "cuMemAlloc_v2")));
	}
}

static void
test_get_proc_address(void **state)
{
	alloc_async_fn legacy, ptsz;
	free_async_fn fl, fp;
	CUdeviceptr a, b, c;
	void *v1, *p;
	int before = fake_calls("cuMemAllocAsync_ptsz");

	(void)state;
	legacy = (alloc_async_fn)gpa2("cuMemAllocAsync", 12000, 0);
	ptsz = (alloc_async_fn)gpa2("cuMemAllocAsync", 12000,
	    CU_GET_PROC_ADDRESS_PER_THREAD_DEFAULT_STREAM);
	assert_true(in_hook((void *)legacy) && in_hook((void *)ptsz));
	assert_ptr_not_equal(legacy, ptsz);	/* one wrapper per variant */
	assert_int_equal(legacy(&a, 600 * M, NULL), CUDA_SUCCESS);
	assert_int_equal(ptsz(&b, 600 * M, NULL), CUDA_ERROR_OUT_OF_MEMORY);
	assert_int_equal(ptsz(&b, 300 * M, NULL), CUDA_SUCCESS);
	/* each wrapper called its own variant */
	assert_int_equal(fake_calls("cuMemAllocAsync_ptsz"), before + 1);
	fl = (free_async_fn)gpa2("cuMemFreeAsync", 12000, 0);
	fp = (free_async_fn)gpa2("cuMemFreeAsync", 12000,
	    CU_GET_PROC_ADDRESS_PER_THREAD_DEFAULT_STREAM);
	assert_int_equal(fl(a, NULL), CUDA_SUCCESS);
	assert_int_equal(fp(b, NULL), CUDA_SUCCESS);
	assert_int_equal(free_now(), G);
	/* version: before 3020 cuMemAlloc is the legacy 32-bit one, left alone */
	v1 = gpa2("cuMemAlloc", 3000, 0);
	assert_false(in_hook(v1));
	p = gpa2("cuMemAlloc", 3020, 0);
	assert_true(in_hook(p));
	/* the resolver hands out the hook's resolver, and the old one works */
	assert_true(in_hook(gpa2("cuGetProcAddress", 12000, 0)));
	{
		gpa_fn g = (gpa_fn)sym("cuGetProcAddress");
		assert_true(in_hook((void *)g));
		assert_int_equal(g("cuMemAllocFromPoolAsync", &p, 12000, 0), CUDA_SUCCESS);
		assert_true(in_hook(p));
		assert_int_equal(((CUresult (*)(CUdeviceptr *, size_t, CUmemoryPool, CUstream))p)(
		    &c, 2 * G, NULL, NULL), CUDA_ERROR_OUT_OF_MEMORY);
	}
}

static void
test_families(void **state)
{
	CUresult (*create)(CUmemGenericAllocationHandle *, size_t,
	    const struct nvq_cu_mem_allocation_prop *, unsigned long long) = sym("cuMemCreate");
	CUresult (*release)(CUmemGenericAllocationHandle) = sym("cuMemRelease");
	CUresult (*managed)(CUdeviceptr *, size_t, unsigned int) = sym("cuMemAllocManaged");
	CUresult (*pitch)(CUdeviceptr *, size_t *, size_t, size_t, unsigned int) =
	    sym("cuMemAllocPitch_v2");
	CUresult (*arr3)(CUarray *, const struct nvq_cu_array3d_descriptor *) =
	    sym("cuArray3DCreate_v2");
	CUresult (*destroy)(CUarray) = sym("cuArrayDestroy");
	CUresult (*total)(size_t *, CUdevice) = sym("cuDeviceTotalMem_v2");
	struct nvq_cu_mem_allocation_prop host, dev;
	struct nvq_cu_array3d_descriptor d3 = { 512, 512, 512, 0x20, 1, 0 };	/* 512 MiB */
	CUmemGenericAllocationHandle h1, h2;
	CUdeviceptr p;
	CUarray a, a2, a3;
	size_t n, pt;

	(void)state;
	memset(&host, 0, sizeof(host));
	memset(&dev, 0, sizeof(dev));
	host.location.type = 2;		/* host memory: not the GPU's */
	dev.location.type = CU_MEM_LOCATION_TYPE_DEVICE;
	dev.location.id = 0;
	assert_int_equal(create(&h1, 4 * G, &host, 0), CUDA_SUCCESS);
	assert_int_equal(free_now(), G);
	assert_int_equal(create(&h2, 2 * G, &dev, 0), CUDA_ERROR_OUT_OF_MEMORY);
	assert_int_equal(create(&h2, 700 * M, &dev, 0), CUDA_SUCCESS);
	assert_int_equal(free_now(), 324 * M);
	assert_int_equal(release(h2), CUDA_SUCCESS);
	assert_int_equal(release(h1), CUDA_SUCCESS);
	assert_int_equal(free_now(), G);
	assert_int_equal(managed(&p, 2 * G, 1), CUDA_ERROR_OUT_OF_MEMORY);
	assert_int_equal(pitch(&p, &pt, 1000, 1024 * 1024 + 1, 4), CUDA_ERROR_OUT_OF_MEMORY);
	assert_int_equal(pitch(&p, &pt, 1000, 1024, 4), CUDA_SUCCESS);
	assert_int_equal(((free_fn)sym("cuMemFree_v2"))(p), CUDA_SUCCESS);
	assert_int_equal(arr3(&a, &d3), CUDA_SUCCESS);
	assert_int_equal(free_now(), 512 * M);
	assert_int_equal(arr3(&a2, &d3), CUDA_SUCCESS);	/* exactly the budget */
	assert_int_equal(free_now(), 0);
	assert_int_equal(arr3(&a3, &d3), CUDA_ERROR_OUT_OF_MEMORY);
	assert_int_equal(destroy(a), CUDA_SUCCESS);
	assert_int_equal(destroy(a2), CUDA_SUCCESS);
	assert_int_equal(free_now(), G);
	assert_int_equal(total(&n, 0), CUDA_SUCCESS);
	assert_int_equal(n, G);
}

static void
test_per_device(void **state)
{
	alloc_fn alloc = (alloc_fn)sym("cuMemAlloc_v2");
	free_fn fr = (free_fn)sym("cuMemFree_v2");
	CUdeviceptr a, b;

	(void)state;
	fake_set_device(0);
	assert_int_equal(alloc(&a, 900 * M), CUDA_SUCCESS);
	fake_set_device(1);	/* another GPU of the job: a budget of its own */
	assert_int_equal(free_now(), G);
	assert_int_equal(alloc(&b, 900 * M), CUDA_SUCCESS);
	assert_int_equal(fr(b), CUDA_SUCCESS);
	fake_set_device(0);
	assert_int_equal(fr(a), CUDA_SUCCESS);
}

struct nvml_memory { unsigned long long total, free, used; };
struct nvml_memory_v2 { unsigned int version; unsigned long long total, reserved, free, used; };

/* NVML shows the job's GPU (the one CUDA_VISIBLE_DEVICES names) as its budget */
static void
test_nvml(void **state)
{
	void *nvml = dlopen("libnvidia-ml.so.1", RTLD_NOW);
	int (*init)(void), (*handle)(unsigned int, void **), (*uuid)(void *, char *, unsigned int);
	const char *visible = getenv("CUDA_VISIBLE_DEVICES");
	char u[96];
	void *d[2];
	int k;
	int (*info)(void *, struct nvml_memory *);
	int (*info2)(void *, struct nvml_memory_v2 *);
	struct nvml_memory m;
	struct nvml_memory_v2 m2;
	void *other, *mine;
	CUdeviceptr a;

	(void)state;
	assert_non_null(nvml);
	*(void **)&init = dlsym(nvml, "nvmlInit_v2");
	*(void **)&handle = dlsym(nvml, "nvmlDeviceGetHandleByIndex_v2");
	*(void **)&uuid = dlsym(nvml, "nvmlDeviceGetUUID");
	*(void **)&info = dlsym(nvml, "nvmlDeviceGetMemoryInfo");
	*(void **)&info2 = dlsym(nvml, "nvmlDeviceGetMemoryInfo_v2");
	assert_true(init && handle && uuid && info && info2 && visible);
	assert_true(in_hook((void *)info) && in_hook((void *)info2));
	assert_int_equal(init(), 0);
	assert_int_equal(handle(0, &d[0]), 0);
	assert_int_equal(handle(1, &d[1]), 0);
	assert_int_equal(uuid(d[0], u, sizeof(u)), 0);
	k = strcmp(u, visible) == 0 ? 0 : 1;
	mine = d[k];
	other = d[1 - k];
	assert_int_equal(uuid(mine, u, sizeof(u)), 0);
	assert_string_equal(u, visible);
	fake_set_device(0);
	assert_int_equal(cuMemAlloc_v2(&a, 300 * M), CUDA_SUCCESS);
	assert_int_equal(info(mine, &m), 0);
	assert_int_equal(m.total, G);
	assert_int_equal(m.used, 300 * M);
	assert_int_equal(m.free, G - 300 * M);
	assert_int_equal(info2(mine, &m2), 0);
	assert_int_equal(m2.total, G);
	assert_int_equal(m2.free, G - 300 * M);
	/* a GPU that is not the job's is shown as it is */
	assert_int_equal(info(other, &m), 0);
	assert_int_equal(m.total, 16 * G);
	assert_int_equal(cuMemFree_v2(a), CUDA_SUCCESS);
}

static void
test_fork(void **state)
{
	alloc_fn alloc = (alloc_fn)sym("cuMemAlloc_v2");
	CUdeviceptr a, b;
	pid_t pid;
	int st;

	(void)state;
	assert_int_equal(alloc(&a, 900 * M), CUDA_SUCCESS);
	if ((pid = fork()) == 0) {
		/* under nvq, one account for the job's processes: the parent's 900M count */
		if (getenv("NVQ_SHARE") != NULL)
			_exit(alloc(&b, 900 * M) == CUDA_ERROR_OUT_OF_MEMORY &&
			    free_now() == 124 * M && alloc(&b, 100 * M) == CUDA_SUCCESS &&
			    free_now() == 24 * M ? 0 : 1);
		/* alone, a child holds none of its parent's memory, and its lock works */
		_exit(alloc(&b, 900 * M) == CUDA_SUCCESS && free_now() == 124 * M ? 0 : 1);
	}
	assert_int_equal(waitpid(pid, &st, 0), pid);
	assert_true(WIFEXITED(st) && WEXITSTATUS(st) == 0);
	assert_int_equal(((free_fn)sym("cuMemFree_v2"))(a), CUDA_SUCCESS);
}

/*
 * Launches and copies through all three ways: each variant gets its own
 * wrapper, which calls exactly that variant.  Not run by nvqd, the hook's
 * gate is open: every call reaches the driver.
 */
typedef CUresult (*launch_fn)(void *, unsigned, unsigned, unsigned, unsigned, unsigned,
    unsigned, unsigned, CUstream, void **, void **);
typedef CUresult (*graph_fn)(void *, CUstream);
typedef CUresult (*htod_fn)(CUdeviceptr, const void *, size_t);

static void
test_launches(void **state)
{
	launch_fn legacy, ptsz, viadl;
	graph_fn g, gp;
	htod_fn h, hp;
	int l0 = fake_calls("cuLaunchKernel"), p0 = fake_calls("cuLaunchKernel_ptsz");
	int g0 = fake_calls("cuGraphLaunch_ptsz"), h0 = fake_calls("cuMemcpyHtoD_v2_ptds");
	char buf[8] = "x";

	(void)state;
	legacy = (launch_fn)gpa2("cuLaunchKernel", 12000, 0);
	ptsz = (launch_fn)gpa2("cuLaunchKernel", 12000, CU_GET_PROC_ADDRESS_PER_THREAD_DEFAULT_STREAM);
	viadl = (launch_fn)sym("cuLaunchKernel");
	assert_true(in_hook((void *)legacy) && in_hook((void *)ptsz) && in_hook((void *)viadl));
	assert_ptr_not_equal(legacy, ptsz);
	assert_ptr_equal(legacy, viadl);
	assert_int_equal(legacy(NULL, 1, 1, 1, 1, 1, 1, 0, NULL, NULL, NULL), CUDA_SUCCESS);
	assert_int_equal(viadl(NULL, 1, 1, 1, 1, 1, 1, 0, NULL, NULL, NULL), CUDA_SUCCESS);
	assert_int_equal(ptsz(NULL, 1, 1, 1, 1, 1, 1, 0, NULL, NULL, NULL), CUDA_SUCCESS);
	assert_int_equal(fake_calls("cuLaunchKernel"), l0 + 2);
	assert_int_equal(fake_calls("cuLaunchKernel_ptsz"), p0 + 1);
	g = (graph_fn)gpa2("cuGraphLaunch", 12000, 0);
	gp = (graph_fn)gpa2("cuGraphLaunch", 12000, CU_GET_PROC_ADDRESS_PER_THREAD_DEFAULT_STREAM);
	assert_true(in_hook((void *)g) && in_hook((void *)gp) && g != gp);
	assert_int_equal(gp(NULL, NULL), CUDA_SUCCESS);
	assert_int_equal(fake_calls("cuGraphLaunch_ptsz"), g0 + 1);
	/* a copy: the _v2 from 3020, the _ptds variant under the flag */
	h = (htod_fn)gpa2("cuMemcpyHtoD", 12000, 0);
	hp = (htod_fn)gpa2("cuMemcpyHtoD", 12000, CU_GET_PROC_ADDRESS_PER_THREAD_DEFAULT_STREAM);
	assert_true(in_hook((void *)h) && in_hook((void *)hp) && h != hp);
	assert_int_equal(hp(0, buf, 1), CUDA_SUCCESS);
	assert_int_equal(fake_calls("cuMemcpyHtoD_v2_ptds"), h0 + 1);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_exported),
		cmocka_unit_test(test_dlsym),
		cmocka_unit_test(test_get_proc_address),
		cmocka_unit_test(test_families),
		cmocka_unit_test(test_per_device),
		cmocka_unit_test(test_nvml),
		cmocka_unit_test(test_fork),
		cmocka_unit_test(test_launches),
	};

	if (getenv("LD_PRELOAD") == NULL || strstr(getenv("LD_PRELOAD"), "libnvq-hook") == NULL) {
		fprintf(stderr, "test_hook: run it with LD_PRELOAD=.../libnvq-hook.so\n");
		return 1;
	}
	if ((lib = dlopen("libcuda.so.1", RTLD_NOW)) == NULL) {
		fprintf(stderr, "test_hook: %s\n", dlerror());
		return 1;
	}
	return cmocka_run_group_tests(tests, NULL, NULL);
}
