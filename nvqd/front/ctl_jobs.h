/*
 * ctl_jobs.h: the handlers of the requests about a job's life (ctl_jobs.c),
 * for ctl.c's table.  Each runs once the dispatcher has checked its row:
 * req->job (or req->slurm) is the job it names, which the caller may act
 * on.  Each returns 0 or -1 with req->err set.
 */
#ifndef NVQ_CTL_JOBS_H
#define NVQ_CTL_JOBS_H

#include "ctl.h"

/* nvq submit: handed to submit.c, which checks it; the reply comes once it is stored. */
int	ctl_jobs_submit(struct ctl_req *, struct proto_buf *);
/* nvq cancel: the job ended; in its first round ("pending_only"), pending jobs only. */
int	ctl_jobs_cancel(struct ctl_req *, struct proto_buf *);
/*
 * An array's cancel: its k active tasks js[] (each checked) in one commit;
 * their ids in out.  Returns how many were cancelled, with *skipped the
 * others and req->err the first one's error, or -1 if out of memory.
 */
int	ctl_jobs_cancel_tasks(struct ctl_req *, struct job **js, int k, struct proto_buf *out,
	    int *skipped);
/* nvq hold and nvq release: a pending job kept from starting, a running one's GPU locks. */
int	ctl_jobs_hold(struct ctl_req *, struct proto_buf *);
/* nvq top: a pending job first among its owner's of its priority. */
int	ctl_jobs_top(struct ctl_req *, struct proto_buf *);
/* nvq modify: a pending job's priority, memory or time limit. */
int	ctl_jobs_modify(struct ctl_req *, struct proto_buf *);
/* nvq requeue: a running or suspended job stopped and queued again. */
int	ctl_jobs_requeue(struct ctl_req *, struct proto_buf *);
/* nvq restart: finished jobs, by id or --failed; it checks each against its row itself. */
int	ctl_jobs_restart(struct ctl_req *, struct proto_buf *);
/* nvq run: the job's owner's descriptors, taken on this connection after the reply. */
int	ctl_jobs_attach(struct ctl_req *, struct proto_buf *);

#endif
