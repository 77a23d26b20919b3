/*
 * start.h: what a job's start needs besides the engine's bookkeeping: its
 * command, environment and groups from the store, nvq's variables added
 * (CUDA_VISIBLE_DEVICES, NVQ_JOB_ID, NVQ_GPU_MEM, the hook's socket), and
 * its supervisor spawned (runner.h).  It reads the job and what nvqd was
 * set up with (struct start_ctx) and writes neither: the engine commits the
 * start, records the pid and watches it (engine_launch.c).
 */
#ifndef NVQ_START_H
#define NVQ_START_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "config.h"
#include "job.h"
#include "store.h"

struct runner_standby;

/* What nvqd was set up with that a start needs (the engine's, borrowed). */
struct start_ctx {
	struct store	*store;
	const struct config *cfg;
	int		is_root;	/* drop to the job's user and groups */
	const char	*shim;		/* nvq-shim */
	const char	*hook;		/* libnvq-hook.so, or "" */
	const char	*srun;		/* the folder of nvq's srun, first on PATH; "": none */
	const char	*cgroup_base;	/* where job cgroups go; "": none */
};

/*
 * Spawns job j's supervisor for the GPUs of mask, uuids (comma-separated,
 * "" for none), granted bytes on each, recording into status_path: the standby
 * sb becomes it where sb is not NULL and still there (runner_spawn).
 * prepare: only the standby, before the start's commit, waiting for
 * runner_go (runner_spec.prepare).
 * Returns the supervisor's pid, or -1 with a sentence in err.
 */
pid_t	start_shim(const struct start_ctx *, const struct job *j, uint64_t mask, const char *uuids,
	    uint64_t granted, const char *status_path, struct runner_standby *sb, int prepare,
	    char *err, size_t errlen);

#endif
