/*
 * slurmopt.h: the options of a submit that are Slurm's own and that nvqd
 * checks itself (slurmopt.c): --partition and --account, which only
 * [cluster] engine = slurm can honour (passed on to sbatch; refused with
 * the reason on one server, where only nvqd knows which it is), and
 * --signal [B:]SIG@TIME, Slurm's warning before the time limit.  Pure: a
 * decoded request in, the job's fields out.
 */
#ifndef NVQ_SLURMOPT_H
#define NVQ_SLURMOPT_H

#include <stddef.h>
#include <stdint.h>

#include "proto.h"
#include "store.h"

/*
 * m's "partition", "account", "warn_signal", "warn_time" and "warn_batch"
 * into j (its strings borrowed from m), for a job of time limit limit
 * (seconds; 0: none) on an nvqd of engine slurm (1) or local (0): 0, or
 * -1 with the refusal's sentence in err.
 */
int	slurmopt_take(const struct proto_msg *m, int slurm, int64_t limit,
	    struct store_job_new *j, char *err, size_t errlen);

#endif
