/*
 * recover.h: a restarted nvqd takes its jobs back, once, between
 * engine_init and engine_run.
 *
 * It loads the active jobs from the store.  A RUNNING job without a pid
 * (nvqd stopped between committing its start and recording its
 * supervisor's pid) is adopted if its supervisor runs, ended from its
 * status record if it wrote one, and put back to PENDING if it never took
 * its start ticket.  A running or suspended job whose supervisor is the
 * same process (a pidfd, then its start time) is reattached: followed,
 * its time limit or its kill grace armed again, and a switch that was
 * under way put back to running (GC_EV_RECOVER).  One whose supervisor is
 * gone is finalized; started before the machine's last boot, NODE_FAIL
 * (or back to PENDING with --requeue); what of it outlived its supervisor
 * in its cgroup is killed.
 */
#ifndef NVQ_RECOVER_H
#define NVQ_RECOVER_H

struct engine;
struct store_active_job;

void	recover_jobs(struct engine *);
/*
 * Adds a job as stored (at start-up, or a finished one nvq restart made
 * PENDING again) to the engine, with all it has: 0, or -1 (out of memory).
 */
int	recover_add(struct engine *, const struct store_active_job *);

#endif
