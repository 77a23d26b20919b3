/*
 * adopt.h: a Slurm step on this node becomes one of nvqd's running jobs.
 *
 * nvq's SPANK plugin asks for it from slurmstepd (root, its pid the step's
 * supervisor, as nvq-shim is a local job's) when the step has --gpu-mem and
 * the plugin was given nvqd=SOCKET.  nvqd checks that the step's GPUs have
 * room for it beside its own jobs (it never oversubscribes them; a step
 * that does not fit is refused, and the plugin fails it before it runs),
 * then stores it as a job that started now, with Slurm's job id and step,
 * and follows it as it follows a job it reattached at start-up: the step's
 * processes link to nvqd (they descend from slurmstepd), nvq gpus, top,
 * list and history show it, nvq hold and suspend act on its processes, and
 * its end, which the plugin writes to its status file as nvq-shim would,
 * is recorded when slurmstepd exits.  nvqd never signals slurmstepd: nvq
 * cancel and requeue of such a job are refused (scancel is Slurm's), and
 * the scheduler never preempts it.
 */
#ifndef NVQ_ADOPT_H
#define NVQ_ADOPT_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "engine.h"

struct adopt_req {
	int64_t		slurm_job;
	const char	*step;		/* "batch", "extern" or a number */
	uint32_t	uid, gid;
	const char	*user;		/* uid's login name */
	const char	*gpus;		/* the node's GPU indexes, "0,2" (SLURM_JOB_GPUS) */
	uint64_t	mem;		/* per GPU; 0: whole GPUs */
};

/*
 * Adopts the step whose slurmstepd is pid: its new job's id in *id, its
 * GPUs' UUIDs (for CUDA_VISIBLE_DEVICES) in uuids.  0, or -1 with a
 * sentence in err (nothing stored).
 */
int	adopt_step(struct engine *, const struct adopt_req *, pid_t pid, int64_t *id,
	    char *uuids, size_t ulen, char *err, size_t errlen);

#endif
