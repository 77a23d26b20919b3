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
#define SCHED_MAX_QOS		32	/* job classes (qos.h's QOS_MAX) */

enum sched_mode {
	SCHED_AUTO = 0,		/* share while the demands fit */
	SCHED_SERIAL = 1,	/* one job at a time */
	SCHED_TIMESLICE = 2	/* share while they fit; else take turns, by suspending */
};

enum sched_preempt_mode {
	SCHED_PREEMPT_OFF = 0,
	SCHED_PREEMPT_SUSPEND,	/* the lower jobs are suspended */
	SCHED_PREEMPT_REQUEUE	/* they are stopped and queued again (--requeue only) */
};

/* How a running job gives way (preempt_give, sched_preemption.give). */
enum sched_give {
	SCHED_GIVE_NEVER = 0,	/* it does not */
	SCHED_GIVE_SUSPEND,	/* suspended; it resumes when it fits again */
	SCHED_GIVE_REQUEUE,	/* stopped (its --signal, SIGKILL after kill_grace), queued again */
	SCHED_GIVE_CANCEL	/* stopped the same way and cancelled: it cannot be
				   suspended and has no --requeue (Slurm's PreemptMode=CANCEL) */
};

struct sched_gpu {
	uint64_t	total;		/* memory the GPU has */
	uint64_t	outside;	/* memory used by processes outside the queue */
	int		mode;		/* enum sched_mode */
	double		quantum;	/* SCHED_TIMESLICE: seconds a job runs before its turn ends */
	int		drained;	/* nvq drain: no job starts here; running ones finish */
};

struct sched_job {
	int64_t		id;
	uint32_t	uid;
	int		running;	/* holds gpumask */
	int		ngpus;
	uint64_t	mem;		/* per GPU; 0 means a whole GPU */
	int		priority;
	double		submitted_at;	/* suspended: when it was suspended (turns go to who waited longest) */
	int		dep_wait;	/* waits for jobs it runs --after */
	uint64_t	gpumask;	/* running: the GPUs it holds; suspended: its GPUs */
	int		restrict_gpus;	/* pending: it may start only on allowed (-w, -x) */
	uint64_t	allowed;
	/* suspend and resume (preempt.c) */
	int		suspended;	/* holds nothing; resumes on gpumask alone */
	int		may_resume;	/* suspended: it resumes when it fits (not by nvq suspend) */
	int		busy;		/* being suspended or resumed: holds its memory, stays */
	int		pinned;		/* may not give way now (a switch of it failed lately) */
	int		requeue;	/* --requeue: preempt = requeue may stop it */
	int		unsuspendable;	/* running, cannot be suspended now: gives way only by
					   being stopped (preempt_give, preempt_give_turn) */
	double		slice_start;	/* running: when it started or last resumed */
	double		share;		/* fair-share priority points: the same for all of
					   a user's jobs (fairshare.h), 0 when off */
	int		cpus;		/* CPUs it holds while running (-c); 0 counts as 1 */
	uint64_t	host_mem;	/* host memory it holds while running (--mem); 0: none */
	/* its class (qos.h): preempt.c and [qos NAME]'s limits read them */
	int		qos;		/* the class's index, below SCHED_MAX_QOS */
	uint32_t	qos_preempts;	/* bit k: it may preempt running jobs of class k */
	int		qos_prio;	/* the class's priority points, in sched_key */
	int		lc;		/* --class lc: never gives way to a be job (preempt.c) */
};

struct sched_settings {
	uint64_t	reserve_bytes;	/* kept free on each GPU... */
	unsigned	reserve_pct;	/* ...or this percentage of it, if set */
	double		aging;		/* priority points gained per hour waited */
	int		max_running_jobs; /* per user, 0 for no limit */
	int		max_gpus;	/* GPUs held per user, 0 for no limit */
	int		preempt;	/* enum sched_preempt_mode */
	double		preempt_min_runtime;	/* seconds a job runs before it may be preempted */
	int		spread;		/* placement = spread: the least loaded GPUs first */
	int		cpus;		/* [resources] cpus: the machine's; 0: not counted */
	uint64_t	host_mem;	/* [resources] memory: likewise, bytes */
	/* per class (sched_job.qos), per user: running jobs and GPUs; 0 for no limit */
	int		qos_max_jobs[SCHED_MAX_QOS];
	int		qos_max_gpus[SCHED_MAX_QOS];
};

enum sched_why {
	SCHED_RUNNING = 0,	/* was running already */
	SCHED_START,		/* starts now on gpumask */
	SCHED_WAIT_DEP,		/* --after jobs not done */
	SCHED_WAIT_USER_JOBS,	/* [limits] max_running_jobs */
	SCHED_WAIT_USER_GPUS,	/* [limits] max_gpus */
	SCHED_WAIT_GPUS,	/* fewer GPUs exist than it needs */
	SCHED_WAIT_MEM,		/* not enough free memory on enough GPUs */
	SCHED_WAIT_PRIORITY,	/* would fit, but could delay a higher one */
	SCHED_RESUME,		/* suspended: resumes now on its gpumask */
	SCHED_SUSPENDED,	/* suspended by nvq suspend: waits for nvq resume */
	SCHED_WAIT_PLACE,	/* fewer GPUs than it needs are allowed (-w, -x) and not drained */
	SCHED_WAIT_CPUS,	/* its CPUs (-c) do not fit beside the running jobs' */
	SCHED_WAIT_HOST_MEM,	/* nor its host memory (--mem) */
	SCHED_WAIT_QOS_JOBS,	/* its class's max_jobs_per_user */
	SCHED_WAIT_QOS_GPUS	/* its class's max_gpus_per_user */
};

struct sched_decision {
	int		why;		/* enum sched_why */
	uint64_t	gpumask;	/* SCHED_START: where */
	uint64_t	largest_free;	/* SCHED_WAIT_MEM: the best GPU's room */
	int64_t		behind;		/* SCHED_WAIT_PRIORITY: the job it yields to */
	uint64_t	host_used;	/* SCHED_WAIT_CPUS: CPUs in use; _HOST_MEM: bytes */
};

struct sched_plan {
	struct sched_decision *dec;	/* njobs entries, same order as jobs */
	int		*order;		/* njobs entries of scratch */
	int		nstart;		/* how many SCHED_START and SCHED_RESUME */
	int		nwaiting;	/* order[0..nwaiting-1]: pending and resumable, in turn */
	double		next_wake;	/* 0, or when to plan again */
};

#define SCHED_MAX_VICTIMS	32

/* Who gives way, for whom (preempt.c). */
struct sched_preemption {
	int		beneficiary;	/* index into jobs, or -1: nobody gives way */
	int		rotation;	/* 1: a timeslice turn; 0: priority */
	int		victims[SCHED_MAX_VICTIMS];	/* indexes into jobs */
	int		give[SCHED_MAX_VICTIMS];	/* how each gives way: enum sched_give */
	int		nvictims;
	double		next_wake;	/* 0, or when a turn ends or a job may be preempted */
};

#define SCHED_USERS	1024	/* users counted per pass for [limits] */

/*
 * One pass's state: what each GPU holds and who claims it, and the users'
 * counts.  The caller allocates it (it is large: keep it, do not put it on
 * a small stack); its fields are sched.c's.  After sched_walk it stays
 * valid for sched_explain until the next pass.
 */
struct sched_pass {
	struct sched_gpu gpus[SCHED_MAX_GPUS];
	int		ngpus;
	struct sched_settings s;
	double		now;
	int		limits;		/* max_running_jobs or max_gpus set */
	uint64_t	min_mem;	/* the least any waiting job asks (sched_source) */
	int		whole;		/* a waiting job asks for whole GPUs */
	int		nusers;
	struct {
		uint32_t uid;
		int	used;
		int	nrun;		/* running jobs, and those started this pass */
		int	ngpu;		/* GPUs they hold */
	}		users[SCHED_USERS];
	int		qlimits;	/* a class has a limit */
	struct {
		uint32_t uid;
		int	used;
		int	qos;
		int	nrun, ngpu;	/* of that class, as users[] counts */
	}		qusers[SCHED_USERS];
	int		nqusers;
	uint64_t	budget[SCHED_MAX_GPUS];
	uint64_t	demand[SCHED_MAX_GPUS];
	int		njobs[SCHED_MAX_GPUS];
	/* demands of the jobs holding each GPU, for the subset search */
	uint64_t	held[SCHED_MAX_GPUS][SCHED_MAX_SUBSET];
	/* claims left by blocked jobs: their demand and how much may go beside */
	uint64_t	claim[SCHED_MAX_GPUS][SCHED_MAX_CLAIMS];
	uint64_t	slack[SCHED_MAX_GPUS][SCHED_MAX_CLAIMS];
	int64_t		claimer[SCHED_MAX_GPUS];
	int		nclaims[SCHED_MAX_GPUS];
	int		closed[SCHED_MAX_GPUS];	/* claimed beyond what we can reason about */
	/* the host's CPUs and memory: held, and the first job that waits for them */
	int64_t		cpu_used;
	uint64_t	hmem_used;
	int		hblock;
	int64_t		hblocker;
};

/*
 * The waiting jobs of an incremental pass, in the order they go in (see
 * sched_goes_before), one at a time: next() fills *j with the next one of
 * the kind asked (SCHED_SRC_CPU: the next one of no GPU; SCHED_SRC_GPU:
 * the next one of one GPU or more) and returns 1, or 0 when there is none
 * left of that kind.  SCHED_SRC_ANY is only ever asked of drop().  The two kinds are two streams:
 * taking from one does not skip the other.  Jobs waiting for --after and
 * suspended jobs are not in them (sched_walk is given those).
 */
enum { SCHED_SRC_ANY, SCHED_SRC_CPU, SCHED_SRC_GPU };

struct sched_source {
	int		(*next)(void *arg, int kind, struct sched_job *j);
	/*
	 * NULL, or: the source may leave out the rest of uid's jobs of kind
	 * (SCHED_SRC_ANY: both kinds) for this pass; they would all wait for
	 * [limits], and sched_explain says so.
	 */
	void		(*drop)(void *arg, uint32_t uid, int kind);
	void		*arg;
	/*
	 * What the jobs of a GPU it holds ask, as bounds (0 and 0: unknown):
	 * no job asks less than min_mem bytes per GPU, other than jobs of whole
	 * GPUs, of which there are none unless whole is set.  A GPU with less
	 * room than min_mem is as good as full for the pass.
	 */
	uint64_t	min_mem;
	int		whole;
};

/*
 * A waiting job's place in the order: a higher key goes first, then the
 * one submitted (or suspended) first, then the lower id.  The key is its
 * priority plus its class's (qos_prio) less aging times its submit time in
 * hours: the same order as
 * priority plus aging times hours waited, at any time, so that an order
 * kept between passes stays right.  The fair-share term (share) is not in
 * it: jobs are compared by key + share, which orders each user's jobs as the
 * key alone does.
 */
double		sched_key(const struct sched_job *, const struct sched_settings *);
int		sched_goes_before(double ka, double ta, int64_t ia, double kb, double tb,
		    int64_t ib);

/* The memory a job may be given on a GPU: total less reserve and outside use. */
uint64_t	sched_budget(const struct sched_gpu *, const struct sched_settings *);

/*
 * Whether a job of ngpus GPUs and mem bytes each (0: whole GPU) could ever
 * run on these GPUs, their outside use ignored.  Returns 0, or -1 with a
 * sentence in why (of whylen bytes).
 */
int		sched_could_fit(const struct sched_gpu *, int, const struct sched_settings *,
		    int ngpus, uint64_t mem, char *why, int whylen);

/*
 * Plans one pass over every job given, in any order; returns the number of
 * jobs to start or resume.  The reference for sched_walk.
 */
int		sched_plan(const struct sched_gpu *, int, const struct sched_job *, int,
		    const struct sched_settings *, double now, struct sched_plan *);

/*
 * Plans one pass with the same decisions as sched_plan, looking only at
 * what can change: jobs[0..nheld) are the running and suspended jobs; the
 * waiting ones come from src in order, into jobs[nheld..], until no job of
 * a GPU can start or resume anywhere (then only jobs of no GPU, which start
 * whatever the GPUs hold; and, where jobs may give way, those that
 * preempt_choose would look at).  Returns n, the jobs now in jobs[] (at most
 * cap); plan->dec[0..n) and plan->order are filled as sched_plan fills
 * them, plan->order needing cap entries.  The jobs the source still holds
 * were not looked at: sched_explain says why each waits.
 */
int		sched_walk(struct sched_pass *, const struct sched_gpu *, int,
		    const struct sched_settings *, double now, struct sched_job *jobs, int nheld,
		    int cap, const struct sched_source *, struct sched_plan *);

/*
 * After sched_walk: the decision for a waiting job it did not reach (none
 * of them starts).  Its reason is the one sched_plan gives, except that a
 * user's count for [limits] (and for its class's) includes jobs of no GPU
 * started after it in the order.
 */
void		sched_explain(const struct sched_pass *, const struct sched_job *,
		    struct sched_decision *);

/* Whether job a goes before job b in the order (priority, aging, fair share). */
int		sched_before(const struct sched_job *a, const struct sched_job *b,
		    const struct sched_settings *);

/* The GPUs that could ever hold j (outside use counted), as preempt_choose sees them. */
uint64_t	sched_could(const struct sched_gpu *, int, const struct sched_settings *,
		    const struct sched_job *);

#endif
