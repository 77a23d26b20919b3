/*
 * engine_rooms.h: the engine's rooms, private to them and engine.c (as
 * tmux's server-*.c share theirs).  Each room owns one stage of a job's
 * life (job.h has the table); the calls run one way only, down this list
 * from engine.c, never back up:
 *
 *	engine.c	init, reload, shutdown, the pass, the GPU-event dispatcher
 *	engine_launch.c	the start: commit, hand over, spawn
 *	engine_deps.c	--after resolved before the plan
 *	engine_finish.c	the end: recorded, requeued or dropped; cancels
 *	engine_ahead.c	standby shims and the start prepared ahead
 *	engine_supervise.c  the supervisor watched, time limits, stops
 *	engine_admit.c	admission, per-user counts, the queues
 *	engine_energy.c	each running job's energy per GPU, from NVML's counters
 *	engine_usage.c	GPU usage accounting, budgets, fair share's use
 *	engine_base.c	clock, lookup, paths, the kick
 *
 * What a room needs of engine.c it asks through struct engine: a pass by
 * engine_kick (its callback set by engine_init), a GPU-control event for
 * a job that is going by e->gpu_job.  The public functions are in
 * engine.h; here are those the rooms share with each other.
 */
#ifndef NVQ_ENGINE_ROOMS_H
#define NVQ_ENGINE_ROOMS_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>
#include <uv.h>

#include "engine.h"
#include "start.h"

/* the clock, lookup, paths, the kick (engine_base.c) */
void	engine_handle_closed_cb(uv_handle_t *h);

/* GPU usage accounting (engine_usage.c) */
void	engine_untrack(struct job *j);
uint64_t	engine_gpu_peak(const struct job *j, int g);
uint64_t	engine_gpus_of(struct engine *e, const struct job *j, uint64_t mask,
	    char *uuids, size_t len);
double	engine_gpu_share(const struct engine *e, const struct job *j, uint64_t mask);
void	engine_shares(struct engine *e, double now);
int	engine_refresh(struct engine *e);
/* The running jobs' supervisors by pid, to find whose a process is. */
struct engine_owners {
	struct engine	*e;
	pid_t		*pids;		/* sorted */
	struct job	**jobs;		/* in the same order */
	int		n;
};
void	engine_owners_make(struct engine *e, struct engine_owners *o);
struct job *engine_owner_job(const struct engine_owners *o, pid_t pid);
void	engine_owners_free(struct engine_owners *o);

/* each running job's energy per GPU (engine_energy.c) */
void	engine_energy_start(struct engine *e, struct job *j);
void	engine_energy_end(struct engine *e, struct job *j);
void	engine_energy_poll(struct engine *e);

/* admission and the queues (engine_admit.c) */
void	engine_count_pending(struct engine *e, const struct job *j, int d);
void	engine_sj(const struct engine *e, const struct job *j, double now,
	    struct sched_job *sj);
void	engine_queue_in(struct engine *e, struct job *j);
void	engine_queue_out(struct engine *e, struct job *j);
void	engine_dep_note(struct engine *e, int64_t id);
void	engine_gate_leave(struct engine *e, struct job *j);
void	engine_close_stdio(struct engine *, struct job *j);
void	engine_uncharge(struct engine *e, struct job *j);

/* supervision and time limits (engine_supervise.c) */
void	engine_end_unwatch(struct job *j);
int	engine_stop_as(struct engine *e, struct job *j, const char *state, const char *reason,
	    int preempt);
int	engine_stop(struct engine *e, struct job *j, const char *state, const char *reason);

/* standby shims and the start prepared ahead (engine_ahead.c) */
const struct start_ctx *engine_start_ctx(const struct engine *e, struct start_ctx *c);
void	engine_new_ticket(struct engine *e, struct job *j);
pid_t	engine_hand(struct engine *e, struct job *j, uint64_t mask, int *fd);
void	engine_ahead_drop(struct engine *e, const char *why);
void	engine_standby_kick(struct engine *e);
void	engine_ahead(struct engine *e);
void	engine_ahead_plan(struct engine *e, double now);

/* the end of a job (engine_finish.c) */
void	engine_drop(struct engine *e, struct job *j);
void	engine_notice(struct engine *e, const struct job *j);
void	engine_fail(struct engine *e, struct job *j, const char *why);
void	engine_recycle(struct engine *e);
int	engine_ends_close(struct engine *e);
void	engine_finish(struct engine *e);

/* --after (engine_deps.c) */
void	engine_resolve(struct engine *e, double now);

/* the launch (engine_launch.c) */
int	engine_commit_start(struct engine *e, struct job *j, uint64_t mask, double now);
void	engine_prepare(struct engine *e, struct job *j, uint64_t mask);
void	engine_unprepare(struct engine *e, struct job *j);
int	engine_spawn(struct engine *e, struct job *j, uint64_t mask, double now);

#endif
