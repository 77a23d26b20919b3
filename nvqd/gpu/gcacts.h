/*
 * gcacts.h: what GPU control decides is to be done, as data: the actions
 * gpuctl.c returns and gpuact.c carries out, in order, and the list that
 * holds them.  The list owns the texts its actions point at.
 */
#ifndef NVQ_GCACTS_H
#define NVQ_GCACTS_H

#include <stdint.h>

/* What is to be done (struct gc_action's kind); args say n, m, x, text. */
enum gc_act {
	GC_ACT_LOG,		/* log text at level n (GC_LOG_*) */
	GC_ACT_LOCK,		/* tell its processes their lock: n granted, m seq (hooks_send_lock) */
	GC_ACT_SIGNAL,		/* signal its processes: n SIGSTOP or SIGCONT (hooks_signal) */
	GC_ACT_CUT,		/* send the cut of revoke seq n (hooks_cut_send) */
	GC_ACT_MOVE,		/* ask its hooks to move, seq n, m out (hooks_move); with nobody
				   asked after all, the dispatcher reports a MOVED of seq n */
	GC_ACT_READY,		/* an nvq-ckpt ready ahead for its resume (suspend_ready) */
	GC_ACT_SPAWN,		/* run nvq-ckpt on list text, m resume (suspend_spawn): its pid
				   to gpuctl_spawned, or it is reported as NOSPAWN */
	GC_ACT_KILL,		/* kill its nvq-ckpt, pid n (suspend_kill) */
	GC_ACT_PIDS,		/* record the pids it checkpoints: text if n, else none */
	GC_ACT_SUSPENDED,	/* record RUNNING -> SUSPENDED: sw, reason text, n hold */
	GC_ACT_RESUMED,		/* record SUSPENDED -> RUNNING: sw */
	GC_ACT_SWITCH,		/* record a switch that left its state: sw, n hold */
	GC_ACT_UNHOLD,		/* record nvq resume at x: reason text */
	GC_ACT_UNHELD,		/* record that its hold failed, at x: reason text */
	GC_ACT_COST,		/* GPU gpu's switch_cost = x */
	GC_ACT_FX		/* the engine's part after the dispatch: n GC_FX_* */
};

enum gc_log { GC_LOG_DEBUG, GC_LOG_INFO, GC_LOG_WARN };

/* A switch to record (struct store_switch, less the GPUs: the dispatcher's). */
struct gc_switch {
	const char	*kind;		/* "suspend", "resume" */
	const char	*why;		/* "user", "preempt", "timeslice", "restart" */
	int64_t		by_job;
	double		started_at, ended_at;
	double		driver_seconds;
	int64_t		bytes;
	char		*pids;		/* the list's */
	int		ok;
	char		*error;		/* the list's */
	double		hook_seconds;
	int64_t		hook_bytes;
};

struct gc_action {
	int		kind;		/* enum gc_act */
	int64_t		job;
	int		gpu;		/* GC_ACT_COST; else -1 */
	int64_t		n, m;
	double		x;
	char		*text;		/* the list's; NULL: none (or no memory) */
	struct gc_switch sw;
};

/* The actions of a decision, in the order they are to be carried out. */
struct gc_acts {
	struct gc_action *a;
	int		n, cap;
	int		lost;		/* dropped for want of memory */
	int		quiet;		/* debug lines are not written: none is made */
	struct gc_action spare;
};

/* A new action of job's of kind, zeroed but for those; for want of memory,
 * one that is dropped (lost counts them): never NULL. */
struct gc_action *gcacts_add(struct gc_acts *, int64_t job, int kind);
/* LOG: a line for nvqd's log at level (enum gc_log). */
void		 gcacts_log(struct gc_acts *, int64_t job, int level, const char *fmt, ...)
		    __attribute__((format(printf, 4, 5)));
/* Empties the list (its texts freed), keeping its room; _free lets go of it. */
void		 gcacts_reset(struct gc_acts *);
void		 gcacts_free(struct gc_acts *);

#endif
