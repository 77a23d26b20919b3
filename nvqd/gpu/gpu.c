/*
 * gpu.c: GPU discovery through NVML, loaded at run time.  The few NVML
 * types used are in nvml_decls.h (stable C ABI), so building nvqd needs no
 * CUDA headers.
 */
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gpu.h"
#include "log.h"
#include "nvml_decls.h"

#define GPU_MAX_PROCS			256
#define GPU_MAX_SAMPLES			4096	/* per-process samples read per poll */

static struct {
	nvml_ret (*init)(void);
	nvml_ret (*shutdown)(void);
	nvml_ret (*count)(unsigned int *);
	nvml_ret (*handle)(unsigned int, void **);
	nvml_ret (*uuid)(void *, char *, unsigned int);
	nvml_ret (*name)(void *, char *, unsigned int);
	nvml_ret (*meminfo)(void *, struct nvml_memory *);
	nvml_ret (*procs)(void *, unsigned int *, struct nvml_process *);
	nvml_ret (*driver)(char *, unsigned int);
	nvml_ret (*energy)(void *, unsigned long long *);
	nvml_ret (*putil)(void *, struct nvml_proc_util *, unsigned int *, unsigned long long);
	const char *(*error)(nvml_ret);
} nvml;

static const char *
gpu_err(nvml_ret r)
{
	static char buf[32];

	if (nvml.error != NULL)
		return nvml.error(r);
	snprintf(buf, sizeof(buf), "NVML error %d", r);
	return buf;
}

static int
gpu_virtual(struct gpu_set *gs, const struct config *c)
{
	int i;

	gs->is_virtual = 1;
	gs->n = c->nvirtual;
	snprintf(gs->source, sizeof(gs->source), "virtual ([gpus] virtual)");
	for (i = 0; i < gs->n; i++) {
		gs->gpus[i].index = i;
		snprintf(gs->gpus[i].uuid, sizeof(gs->gpus[i].uuid),
		    "GPU-00000000-0000-0000-0000-%012d", i);
		snprintf(gs->gpus[i].name, sizeof(gs->gpus[i].name), "Virtual GPU");
		gs->gpus[i].total = c->virtual_mem[i];
	}
	return 0;
}

static void *
gpu_sym(void *lib, const char *a, const char *b)
{
	void *p = dlsym(lib, a);

	if (p == NULL && b != NULL)
		p = dlsym(lib, b);
	return p;
}

int
gpu_open(struct gpu_set *gs, const struct config *c)
{
	char ver[80] = "?";
	unsigned int n, i;
	nvml_ret r;

	memset(gs, 0, sizeof(*gs));
	if (c->nvirtual > 0)
		return gpu_virtual(gs, c);
	snprintf(gs->source, sizeof(gs->source), "none");
	if ((gs->lib = dlopen(c->nvml_library, RTLD_NOW | RTLD_LOCAL)) == NULL) {
		log_warnx("no GPUs: cannot load NVML (%s); set [gpus] virtual to use "
		    "virtual GPUs", dlerror());
		return 0;
	}
	*(void **)&nvml.init = gpu_sym(gs->lib, "nvmlInit_v2", "nvmlInit");
	*(void **)&nvml.shutdown = gpu_sym(gs->lib, "nvmlShutdown", NULL);
	*(void **)&nvml.count = gpu_sym(gs->lib, "nvmlDeviceGetCount_v2", "nvmlDeviceGetCount");
	*(void **)&nvml.handle = gpu_sym(gs->lib, "nvmlDeviceGetHandleByIndex_v2",
	    "nvmlDeviceGetHandleByIndex");
	*(void **)&nvml.uuid = gpu_sym(gs->lib, "nvmlDeviceGetUUID", NULL);
	*(void **)&nvml.name = gpu_sym(gs->lib, "nvmlDeviceGetName", NULL);
	*(void **)&nvml.meminfo = gpu_sym(gs->lib, "nvmlDeviceGetMemoryInfo", NULL);
	*(void **)&nvml.procs = gpu_sym(gs->lib, "nvmlDeviceGetComputeRunningProcesses_v3",
	    "nvmlDeviceGetComputeRunningProcesses_v2");
	*(void **)&nvml.driver = gpu_sym(gs->lib, "nvmlSystemGetDriverVersion", NULL);
	*(void **)&nvml.error = gpu_sym(gs->lib, "nvmlErrorString", NULL);
	*(void **)&nvml.energy = gpu_sym(gs->lib, "nvmlDeviceGetTotalEnergyConsumption", NULL);
	*(void **)&nvml.putil = gpu_sym(gs->lib, "nvmlDeviceGetProcessUtilization", NULL);
	if (!nvml.init || !nvml.count || !nvml.handle || !nvml.uuid || !nvml.name ||
	    !nvml.meminfo) {
		log_warnx("no GPUs: %s lacks the NVML functions nvqd needs", c->nvml_library);
		goto fail;
	}
	if ((r = nvml.init()) != NVML_SUCCESS) {
		log_warnx("no GPUs: nvmlInit: %s", gpu_err(r));
		goto fail;
	}
	if ((r = nvml.count(&n)) != NVML_SUCCESS) {
		log_warnx("no GPUs: nvmlDeviceGetCount: %s", gpu_err(r));
		goto fail;
	}
	if (n > SCHED_MAX_GPUS)
		n = SCHED_MAX_GPUS;
	if (nvml.driver != NULL)
		nvml.driver(ver, sizeof(ver));
	snprintf(gs->source, sizeof(gs->source), "NVML (driver %s)", ver);
	for (i = 0; i < n; i++) {
		struct gpu *g = &gs->gpus[gs->n];
		struct nvml_memory m;

		if ((r = nvml.handle(i, &gs->dev[gs->n])) != NVML_SUCCESS ||
		    (r = nvml.uuid(gs->dev[gs->n], g->uuid, sizeof(g->uuid))) != NVML_SUCCESS ||
		    (r = nvml.name(gs->dev[gs->n], g->name, sizeof(g->name))) != NVML_SUCCESS ||
		    (r = nvml.meminfo(gs->dev[gs->n], &m)) != NVML_SUCCESS) {
			log_warnx("GPU %u left out: %s", i, gpu_err(r));
			continue;
		}
		g->index = (int)i;
		g->total = m.total;
		g->used = m.used;
		gs->n++;
		g->has_energy = 1;
		if (gpu_energy(gs, gs->n - 1, &g->energy_mj) == -1) {
			g->has_energy = 0;
			log_info("GPU %u has no energy counter: its jobs' energy is unknown", i);
		}
		gpu_util(gs, gs->n - 1, NULL, NULL);	/* samples from before are not ours */
	}
	return 0;
fail:
	dlclose(gs->lib);
	gs->lib = NULL;
	return 0;
}

/* Adds the use of compute processes that are not the queue's (graphics ones
 * are left out: a server's GPUs run none, and C+G processes would count twice). */
static void
gpu_procs(nvml_ret (*fn)(void *, unsigned int *, struct nvml_process *), void *dev, int gpu,
    gpu_owner_cb owner, void *arg, uint64_t *outside, int *nprocs)
{
	struct nvml_process p[GPU_MAX_PROCS];
	unsigned int n = GPU_MAX_PROCS, i;

	if (fn == NULL || fn(dev, &n, p) != NVML_SUCCESS)
		return;
	for (i = 0; i < n && i < GPU_MAX_PROCS; i++) {
		uint64_t used = p[i].used != NVML_VALUE_NOT_AVAILABLE ? p[i].used : 0;

		if (owner != NULL && owner((pid_t)p[i].pid, gpu, used, arg))
			continue;
		*outside += used;
		(*nprocs)++;
	}
}

int
gpu_refresh(struct gpu_set *gs, gpu_owner_cb owner, void *arg)
{
	struct nvml_memory m;
	uint64_t outside;
	int i, changed = 0, nprocs;

	if (gs->is_virtual || gs->lib == NULL)
		return 0;
	for (i = 0; i < gs->n; i++) {
		if (nvml.meminfo(gs->dev[i], &m) == NVML_SUCCESS)
			gs->gpus[i].used = m.used;
		outside = 0;
		nprocs = 0;
		gpu_procs(nvml.procs, gs->dev[i], i, owner, arg, &outside, &nprocs);
		if (outside != gs->gpus[i].outside)
			changed = 1;
		gs->gpus[i].outside = outside;
		gs->gpus[i].nprocs_outside = nprocs;
	}
	return changed;
}

int
gpu_energy(struct gpu_set *gs, int g, uint64_t *mj)
{
	unsigned long long v;

	if (gs->is_virtual || gs->lib == NULL || nvml.energy == NULL || g < 0 || g >= gs->n ||
	    !gs->gpus[g].has_energy || nvml.energy(gs->dev[g], &v) != NVML_SUCCESS)
		return -1;
	*mj = v;
	return 0;
}

int
gpu_util(struct gpu_set *gs, int g, gpu_util_cb cb, void *arg)
{
	struct nvml_proc_util *p;
	unsigned int n = 0, i;
	nvml_ret r;

	if (gs->is_virtual || gs->lib == NULL || nvml.putil == NULL || g < 0 || g >= gs->n)
		return -1;
	/* how many there are first, as NVML asks */
	r = nvml.putil(gs->dev[g], NULL, &n, gs->gpus[g].util_seen);
	if (r == NVML_ERROR_NOT_FOUND || (r == NVML_SUCCESS && n == 0))
		return 0;
	if (r != NVML_SUCCESS && r != NVML_ERROR_INSUFFICIENT_SIZE)
		return -1;
	n += 16;	/* room for a process that came between the two calls */
	if (n > GPU_MAX_SAMPLES)
		n = GPU_MAX_SAMPLES;
	if ((p = calloc(n, sizeof(*p))) == NULL)
		return -1;
	r = nvml.putil(gs->dev[g], p, &n, gs->gpus[g].util_seen);
	if (r == NVML_ERROR_NOT_FOUND) {
		free(p);
		return 0;
	}
	if (r != NVML_SUCCESS) {
		free(p);
		return -1;
	}
	for (i = 0; i < n && i < GPU_MAX_SAMPLES; i++) {
		if (p[i].timestamp > gs->gpus[g].util_seen)
			gs->gpus[g].util_seen = p[i].timestamp;
		if (cb != NULL)
			cb((pid_t)p[i].pid, p[i].sm, arg);
	}
	free(p);
	return (int)n;
}

void
gpu_uuids(const struct gpu_set *gs, uint64_t mask, char *uuids, size_t len)
{
	size_t off = 0;
	int g;

	uuids[0] = '\0';
	for (g = 0; g < gs->n && off < len; g++)
		if (mask & (1ULL << g))
			off += (size_t)snprintf(uuids + off, len - off, "%s%s", off ? "," : "",
			    gs->gpus[g].uuid);
}

void
gpu_close(struct gpu_set *gs)
{
	if (gs->lib != NULL) {
		if (nvml.shutdown != NULL)
			nvml.shutdown();
		dlclose(gs->lib);
	}
	gs->lib = NULL;
}
