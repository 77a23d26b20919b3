/*
 * hostres.c: the host's CPUs and memory (see hostres.h).  The defaults are
 * pure functions; hostres_detect reads sched_getaffinity and /proc/meminfo.
 */
#include <sched.h>
#include <stdio.h>
#include <string.h>

#include "hostres.h"

uint64_t
hostres_reserve(uint64_t memtotal)
{
	uint64_t r = memtotal / 20;

	return r < (1ULL << 30) ? 1ULL << 30 : r;
}

int
hostres_job_cpus(int asked, int ngpus, uint64_t mem, int cpus, int per_gpu, int machine_gpus,
    uint64_t gpu_total)
{
	long long n;

	if (asked > 0)
		return asked;
	if (ngpus <= 0)
		return 1;
	if (per_gpu <= 0)
		per_gpu = machine_gpus > 0 && cpus > 0 ? cpus / machine_gpus : 1;
	if (per_gpu < 1)
		per_gpu = 1;
	n = (long long)per_gpu * ngpus;
	if (mem > 0 && gpu_total > 0 && mem < gpu_total)
		n = (long long)((double)n * (double)mem / (double)gpu_total);
	if (n < 1)
		n = 1;
	if (cpus > 0 && n > cpus)
		n = cpus;
	return (int)n;
}

uint64_t
hostres_job_mem(uint64_t mem, uint64_t per_cpu, int cpus, uint64_t dflt)
{
	if (mem > 0)
		return mem;
	if (per_cpu > 0) {
		if (cpus < 1)
			cpus = 1;
		return per_cpu > UINT64_MAX / (uint64_t)cpus ? UINT64_MAX :
		    per_cpu * (uint64_t)cpus;
	}
	return dflt;
}

void
hostres_detect(int *cpus, uint64_t *mem)
{
	unsigned long long kb;
	char line[256];
	cpu_set_t set;
	FILE *fp;

	if (*cpus == 0 && sched_getaffinity(0, sizeof(set), &set) == 0)
		*cpus = CPU_COUNT(&set);
	if (*mem != 0 || (fp = fopen("/proc/meminfo", "r")) == NULL)
		return;
	while (fgets(line, sizeof(line), fp) != NULL)
		if (sscanf(line, "MemTotal: %llu kB", &kb) == 1) {
			kb *= 1024;
			*mem = kb > hostres_reserve(kb) ? kb - hostres_reserve(kb) : 0;
			break;
		}
	fclose(fp);
}
