/*
 * suspend.h: the steps of a switch that run nvq-ckpt, for GPU control
 * (gpuctl.c decides them, gpuact.c calls here).
 *
 * A suspend (gpuctl.c's table) takes the job's GPU lock back (its launches
 * wait in the hook); with [scheduler] offload = on, asks each hooked
 * process to move its own large allocations to host memory
 * (hook/offload.c); then runs nvq-ckpt, which locks and checkpoints every
 * listed process of the job: the driver moves the rest of their GPU memory
 * to host memory.  Each process goes to nvq-ckpt as PID@START, checked to
 * be the job's when the list is made, so that nvq-ckpt (root) leaves alone
 * a pid reused since; the list is kept in jobs.ckpt_pids (bare PIDs of an
 * older nvqd are checked again before use).  The host memory a suspend
 * needs is NVML's figure where NVML sees the job, else its hooks' reports,
 * bounded.  A resume runs nvq-ckpt to restore and unlock them.
 *
 * This file runs nvq-ckpt and reads what it says; it decides nothing: when
 * nvq-ckpt ends it reports GC_EV_HELPER through e->report.  It calls none
 * of gpuctl.c, gpuact.c and hooks.c.
 */
#ifndef NVQ_SUSPEND_H
#define NVQ_SUSPEND_H

#include <stddef.h>
#include <stdint.h>

#include "engine.h"

/* Host memory free for what a suspend moves out, from /proc/meminfo; -1 if unknown. */
int64_t	suspend_host_available(void);
/*
 * What the job holds on its GPUs now; -1 if unknown.  Per GPU, NVML's figure
 * where NVML sees its processes there (a measure); else its hooks' reports,
 * claims that hooks.c counts as at most what the job may hold there.
 */
int64_t	suspend_bytes(struct engine *, const struct job *);
/*
 * The processes to checkpoint: buf holds the job's hooked ones, each
 * PID@START (hooks_pids); this adds, written ?PID@START, those that map
 * libcuda without the hook (the job cleared LD_PRELOAD, or a process that
 * has not called CUDA yet), checked to be the job's: nvq-ckpt leaves them
 * out if the driver finds no CUDA state in them.
 */
void	suspend_pids(const struct job *, char *buf, size_t len);
/*
 * Runs nvq-ckpt suspend (resume 0) or resume (1) on list, the job's
 * [?]PID@START,...; its end is reported as GC_EV_HELPER.  Returns its pid,
 * or -1 with a sentence in err (nothing runs, nothing is reported).
 */
int	suspend_spawn(struct engine *, const struct job *, int resume, const char *list,
	    char *err, size_t errlen);
/* Kills an nvq-ckpt that suspend_spawn started and whose end was not reported yet. */
void	suspend_kill(int helper);
/*
 * Starts an nvq-ckpt for the job's next switch ahead of it (nvq-ckpt wait):
 * it loads the driver now, while the job's processes hold their GPUs, and
 * waits for its order; suspend_spawn gives it the job's next resume
 * instead of starting one then.  A resume from it saves the driver's
 * start on a GPU no process uses (cuInit: 0.10 s on an H100, against
 * 0.01 s while the job ran; tests/gpu/ckpt_probe.sh).  One per job at most;
 * nothing if one is there or it cannot start.
 */
void	suspend_ready(struct engine *, const struct job *);
/* Lets go of the job's nvq-ckpt ready ahead, if any (it ends): the engine,
 * as it lets go of the job. */
void	suspend_unready(struct engine *, int64_t id);

#endif
