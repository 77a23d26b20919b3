/*
 * hostres.h: the host's CPUs and memory as the scheduler's pool ([resources]
 * in nvq.ini): what the machine has when the INI says 0 (hostres_detect:
 * the CPUs nvqd may run on, MemTotal less a reserve), and what a job takes
 * unless it says (hostres_job_cpus, hostres_job_mem: pure, unit-tested).
 */
#ifndef NVQ_HOSTRES_H
#define NVQ_HOSTRES_H

#include <stdint.h>

/* The host memory kept for the system and nvqd: 5% of total, at least 1 GiB. */
uint64_t	hostres_reserve(uint64_t memtotal);

/*
 * The CPUs a job takes: asked (> 0) as asked; else 1 for a job of no GPU,
 * else per_gpu (0: cpus / machine_gpus, at least 1) times its GPUs, and
 * for a job of mem bytes per GPU (0: whole GPUs) that part of it, of GPUs
 * of gpu_total bytes (the largest), at least 1: jobs that share a GPU
 * share its CPUs, so that the CPUs hold as many as the GPU's memory does.
 * At most cpus (0: not counted).  Pure.
 */
int		hostres_job_cpus(int asked, int ngpus, uint64_t mem, int cpus, int per_gpu,
		    int machine_gpus, uint64_t gpu_total);

/*
 * The host memory a job takes, in bytes: mem (--mem) if given, else
 * per_cpu (--mem-per-cpu) times its CPUs, else dflt ([resources]
 * default_mem, 0: none).  Pure; saturates at UINT64_MAX.
 */
uint64_t	hostres_job_mem(uint64_t mem, uint64_t per_cpu, int cpus, uint64_t dflt);

/*
 * Fills *cpus and *mem where they are 0 from the machine: the CPUs of
 * nvqd's affinity mask and /proc/meminfo's MemTotal less hostres_reserve.
 * Either stays 0 where it cannot be read.
 */
void		hostres_detect(int *cpus, uint64_t *mem);

#endif
