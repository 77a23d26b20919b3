/*
 * sched.h: the admission policy as a pure function.
 *
 * sched_plan() takes a snapshot of the GPUs and of the active jobs (pending
 * and running), the settings and the current time, and says which pending
 * jobs start on which GPUs and why each other one waits.  It reads no clock,
 * does no I/O and allocates nothing: the caller provides the output arrays.
 * Memory sizes are bytes, times are seconds since the Unix epoch.
 */
#ifndef NVQ_SCHED_H
#define NVQ_SCHED_H

#include <stdint.h>

#define SCHED_MAX_GPUS		64	/* a job's GPUs are a uint64_t mask */
#define SCHED_MAX_CLAIMS	8	/* blocked jobs remembered per GPU */
#define SCHED_MAX_SUBSET	10	/* running jobs per GPU searched exactly */

enum sched_mode {
	SCHED_AUTO = 0,		/* share while the demands fit */
	SCHED_SERIAL = 1	/* one job at a time */
};

struct sched_gpu {
	uint64_t	total;		/* memory the GPU has */
	uint64_t	outside;	/* memory used by processes outside the queue */
	int		mode;		/* enum sched_mode */
};

struct sched_job {
	int64_t		id;
	uint32_t	uid;
	int		running;	/* holds gpumask */
	int		ngpus;
	uint64_t	mem;		/* per GPU; 0 means a whole GPU */
	int		priority;
	double		submitted_at;
	int		dep_wait;	/* waits for jobs it runs --after */
	uint64_t	gpumask;	/* running: the GPUs it holds */
};

struct sched_settings {
	uint64_t	reserve_bytes;	/* kept free on each GPU... */
	unsigned	reserve_pct;	/* ...or this percentage of it, if set */
	double		aging;		/* priority points gained per hour waited */
	int		max_running_jobs; /* per user, 0 for no limit */
	int		max_gpus;	/* GPUs held per user, 0 for no limit */
};

enum sched_why {
	SCHED_RUNNING = 0,	/* was running already */
	SCHED_START,		/* starts now on gpumask */
	SCHED_WAIT_DEP,		/* --after jobs not done */
	SCHED_WAIT_USER_JOBS,	/* [limits] max_running_jobs */
	SCHED_WAIT_USER_GPUS,	/* [limits] max_gpus */
	SCHED_WAIT_GPUS,	/* fewer GPUs exist than it needs */
	SCHED_WAIT_MEM,		/* not enough free memory on enough GPUs */
	SCHED_WAIT_PRIORITY	/* would fit, but could delay a higher one */
};

struct sched_decision {
	int		why;		/* enum sched_why */
	uint64_t	gpumask;	/* SCHED_START: where */
	uint64_t	largest_free;	/* SCHED_WAIT_MEM: the best GPU's room */
	int64_t		behind;		/* SCHED_WAIT_PRIORITY: the job it yields to */
};

struct sched_plan {
	struct sched_decision *dec;	/* njobs entries, same order as jobs */
	int		*order;		/* njobs entries of scratch */
	int		nstart;		/* how many SCHED_START */
	double		next_wake;	/* 0, or when to plan again */
};

/* The memory a job may be given on a GPU: total less reserve and outside use. */
uint64_t	sched_budget(const struct sched_gpu *, const struct sched_settings *);

/*
 * Whether a job of ngpus GPUs and mem bytes each (0: whole GPU) could ever
 * run on these GPUs, their outside use ignored.  Returns 0, or -1 with a
 * sentence in why (of whylen bytes).
 */
int		sched_could_fit(const struct sched_gpu *, int, const struct sched_settings *,
		    int ngpus, uint64_t mem, char *why, int whylen);

/* Plans one pass; returns the number of jobs to start. */
int		sched_plan(const struct sched_gpu *, int, const struct sched_job *, int,
		    const struct sched_settings *, double now, struct sched_plan *);

#endif
