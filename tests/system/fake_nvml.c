/*
 * fake_nvml.c: a stand-in libnvidia-ml.so.1 for tests on machines without
 * a GPU.  FAKE_NVML_GPUS="2x16G" sets the GPUs (sizes in GiB); the file
 * named by FAKE_NVML_PROCS, re-read on every call, lists processes using
 * them, one "INDEX PID BYTES" per line.  The file named by
 * FAKE_NVML_ENERGY, re-read on every call, holds each GPU's energy counter,
 * one "INDEX MILLIJOULES" per line (a GPU not there, or no such variable:
 * NVML_ERROR_NOT_SUPPORTED, as on boards before Volta); the file named by
 * FAKE_NVML_UTIL each process's SM utilisation, one "INDEX PID PERCENT" per
 * line, returned as a sample taken at the time of the call (no variable:
 * not supported).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/time.h>

struct mem { unsigned long long total, free, used; };
struct proc { unsigned int pid; unsigned long long used; unsigned int gi, ci; };
struct util { unsigned int pid; unsigned long long ts; unsigned int sm, mem, enc, dec; };
struct mem2 { unsigned int version; unsigned long long total, reserved, free, used; };

static int ngpus;
static unsigned long long gib;

int nvmlInit_v2(void);
int nvmlShutdown(void);
int nvmlDeviceGetCount_v2(unsigned int *);
int nvmlDeviceGetHandleByIndex_v2(unsigned int, void **);
int nvmlDeviceGetUUID(void *, char *, unsigned int);
int nvmlDeviceGetName(void *, char *, unsigned int);
int nvmlDeviceGetMemoryInfo(void *, struct mem *);
int nvmlDeviceGetMemoryInfo_v2(void *, struct mem2 *);
int nvmlDeviceGetComputeRunningProcesses_v3(void *, unsigned int *, struct proc *);
int nvmlSystemGetDriverVersion(char *, unsigned int);
const char *nvmlErrorString(int);
int nvmlDeviceGetTotalEnergyConsumption(void *, unsigned long long *);
int nvmlDeviceGetProcessUtilization(void *, struct util *, unsigned int *, unsigned long long);

int
nvmlInit_v2(void)
{
	const char *s = getenv("FAKE_NVML_GPUS");

	if (s == NULL || sscanf(s, "%dx%lluG", &ngpus, &gib) != 2)
		return 9;	/* NVML_ERROR_DRIVER_NOT_LOADED */
	return 0;
}

int nvmlShutdown(void) { return 0; }

int
nvmlDeviceGetCount_v2(unsigned int *n)
{
	*n = (unsigned int)ngpus;
	return 0;
}

int
nvmlDeviceGetHandleByIndex_v2(unsigned int i, void **h)
{
	if ((int)i >= ngpus)
		return 2;
	*h = (void *)(unsigned long)(i + 1);
	return 0;
}

int
nvmlDeviceGetUUID(void *h, char *buf, unsigned int len)
{
	snprintf(buf, len, "GPU-fa4e0000-0000-0000-0000-%012lu", (unsigned long)h - 1);
	return 0;
}

int
nvmlDeviceGetName(void *h, char *buf, unsigned int len)
{
	(void)h;
	snprintf(buf, len, "Fake GPU");
	return 0;
}

static int
procs(int gpu, struct proc *out, unsigned int max)
{
	const char *path = getenv("FAKE_NVML_PROCS");
	unsigned long long used;
	unsigned int pid, n = 0;
	FILE *fp;
	int g;

	if (path == NULL || (fp = fopen(path, "r")) == NULL)
		return 0;
	while (fscanf(fp, "%d %u %llu", &g, &pid, &used) == 3)
		if (g == gpu && n < max) {
			out[n].pid = pid;
			out[n].used = used;
			n++;
		}
	fclose(fp);
	return (int)n;
}

int
nvmlDeviceGetMemoryInfo(void *h, struct mem *m)
{
	struct proc p[64];
	int i, n = procs((int)((unsigned long)h - 1), p, 64);

	m->total = gib << 30;
	m->used = 0;
	for (i = 0; i < n; i++)
		m->used += p[i].used;
	m->free = m->total - m->used;
	return 0;
}

int
nvmlDeviceGetMemoryInfo_v2(void *h, struct mem2 *m)
{
	struct mem v1;

	nvmlDeviceGetMemoryInfo(h, &v1);
	m->total = v1.total;
	m->reserved = 0;
	m->free = v1.free;
	m->used = v1.used;
	return 0;
}

int
nvmlDeviceGetComputeRunningProcesses_v3(void *h, unsigned int *count, struct proc *out)
{
	int n = procs((int)((unsigned long)h - 1), out, *count);

	*count = (unsigned int)n;
	return 0;
}

int
nvmlSystemGetDriverVersion(char *buf, unsigned int len)
{
	snprintf(buf, len, "fake");
	return 0;
}

const char *
nvmlErrorString(int r)
{
	return r == 9 ? "Driver Not Loaded" : "fake error";
}

int
nvmlDeviceGetTotalEnergyConsumption(void *h, unsigned long long *mj)
{
	const char *path = getenv("FAKE_NVML_ENERGY");
	unsigned long long v;
	int g, found = 0;
	FILE *fp;

	if (path == NULL || (fp = fopen(path, "r")) == NULL)
		return 3;	/* NVML_ERROR_NOT_SUPPORTED */
	while (fscanf(fp, "%d %llu", &g, &v) == 2)
		if (g == (int)((unsigned long)h - 1)) {
			*mj = v;
			found = 1;
		}
	fclose(fp);
	return found ? 0 : 3;
}

int
nvmlDeviceGetProcessUtilization(void *h, struct util *out, unsigned int *count,
    unsigned long long since)
{
	const char *path = getenv("FAKE_NVML_UTIL");
	unsigned int pid, sm, n = 0;
	struct timeval tv;
	unsigned long long now;
	FILE *fp;
	int g;

	if (path == NULL)
		return 3;
	gettimeofday(&tv, NULL);
	now = (unsigned long long)tv.tv_sec * 1000000ULL + (unsigned long long)tv.tv_usec;
	if (now <= since || (fp = fopen(path, "r")) == NULL)
		return 6;	/* NVML_ERROR_NOT_FOUND: no sample since */
	while (fscanf(fp, "%d %u %u", &g, &pid, &sm) == 3) {
		if (g != (int)((unsigned long)h - 1))
			continue;
		if (out != NULL && n < *count) {
			memset(&out[n], 0, sizeof(out[n]));
			out[n].pid = pid;
			out[n].ts = now;
			out[n].sm = sm;
		}
		n++;
	}
	fclose(fp);
	if (n == 0)
		return 6;
	if (out == NULL || n > *count) {
		*count = n;
		return 7;	/* NVML_ERROR_INSUFFICIENT_SIZE */
	}
	*count = n;
	return 0;
}
