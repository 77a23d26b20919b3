/*
 * slurm.h: [cluster] engine = slurm.  The jobs nvq submit stores go to
 * Slurm instead of nvqd's own scheduler: sbatch, run as the job's user
 * with its environment, takes each (slurmjob.h has its arguments); one
 * squeue every [cluster] poll seconds follows all of them; each change
 * lands in the database as a local job's would: RUNNING with a run on
 * NODE:INDEX GPUs (scontrol -d), then its end with its exit status and the
 * peak GPU memory per GPU that nvq's SPANK plugin recorded on the node.
 * Every Slurm command gets nvqd's own SLURM_CONF, if it has one, never the
 * user's; those run as the user get no other variable of nvqd's.
 *
 * A job's life here, as a table (state: what moves it on -> next):
 *   NEW      sbatch took it -> PENDING (its Slurm id stored);
 *            sbatch refused it -> ended FAILED, with sbatch's words;
 *            start-up found it so -> PENDING if squeue shows a job of its
 *            user with comment nvq:ID (sbatch took it before nvqd
 *            stopped), else sbatch again
 *   PENDING  squeue says running -> STARTING; says ended after it ran ->
 *            STARTING, then ENDED; says ended and it never ran -> ENDED;
 *            nvq cancel -> scancel (it ends CANCELLED)
 *   STARTING scontrol -d named its GPUs -> RUNNING (the run stored),
 *            or ENDED if squeue had already said so
 *   RUNNING  squeue says ended -> ENDED
 *   ENDED    its peaks are there (or it had no budget, or 5 s passed)
 *            -> its end stored, the job forgotten
 *   any      squeue does not know it, twice -> ended FAILED
 * One command about a job at a time; squeue one at a time.
 */
#ifndef NVQ_SLURM_H
#define NVQ_SLURM_H

#include <stddef.h>
#include <stdint.h>
#include <uv.h>

#include "config.h"
#include "store.h"

struct slurm;

struct slurm	*slurm_new(uv_loop_t *, struct store *, const struct config *);
/*
 * Follows a stored job: a new one (sid -1: sbatch takes it now) or one
 * read back at start-up (recovered: state as stored, its Slurm id if it
 * has one; without one, Slurm is asked first whether sbatch took it
 * before nvqd stopped).  0, or -1 (out of memory).
 */
int		 slurm_add(struct slurm *, int64_t id, uint32_t uid, uint32_t gid, int gpus,
		    uint64_t mem, const char *state, int64_t sid, int recovered);
/* Whether job id is one it follows; its owner in *uid. */
int		 slurm_has(struct slurm *, int64_t id, uint32_t *uid);
/* nvq cancel: scancel, as the job's user.  0, or -1 with a sentence in err. */
int		 slurm_cancel(struct slurm *, int64_t id, const char *by, char *err, size_t);
/* nvq hold (1) / release (0) of a pending job: scontrol hold / release. */
int		 slurm_hold(struct slurm *, int64_t id, int held, const char *by, char *err,
		    size_t);
/* Why a pending job waits, as Slurm says; 0, or -1 if it is not pending. */
int		 slurm_wait(struct slurm *, int64_t id, char *buf, size_t len);
/* nvqd is stopping: commands in flight are killed, the timer closed. */
void		 slurm_stop(struct slurm *);

#endif
