/*
 * test_preempt.c: who gives way (preempt.c), resume order (sched.c) and the
 * timeslice quantum, table-driven.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "sched.h"
#include "preempt.h"

#define G (1ULL << 30)
#define NOW 10000.0

struct pcase {
	const char	*name;
	int		ngpus;
	uint64_t	total[2];
	int		mode[2];
	double		quantum;
	int		preempt;
	double		min_runtime;
	int		njobs;
	struct sched_job jobs[6];
	int64_t		beneficiary;	/* its id, or 0: nobody */
	int64_t		victims[4];	/* ids, in any order; 0 ends */
	double		wake;		/* expected next_wake, or 0 */
	int		why[6];		/* expected plan decisions; -1: not checked */
	int		give[4];	/* how victims[k] gives way (enum sched_give);
					   SCHED_GIVE_NEVER: not checked */
};

#define X -1
/* running: id, mem, prio, GPU mask, slice start */
#define RUN(i, m, p, mask, t) { .id = i, .uid = 1, .running = 1, .ngpus = 1, .mem = m, \
	.priority = p, .gpumask = mask, .slice_start = t }
#define RUNQ(i, m, p, mask, t) { .id = i, .uid = 1, .running = 1, .ngpus = 1, .mem = m, \
	.priority = p, .gpumask = mask, .slice_start = t, .requeue = 1 }
#define BUSY(i, m, p, mask) { .id = i, .uid = 1, .running = 1, .ngpus = 1, .mem = m, \
	.priority = p, .gpumask = mask, .busy = 1 }
#define PINNED(i, m, p, mask) { .id = i, .uid = 1, .running = 1, .ngpus = 1, .mem = m, \
	.priority = p, .gpumask = mask, .pinned = 1 }
#define PEND(i, m, p, t) { .id = i, .uid = 1, .ngpus = 1, .mem = m, .priority = p, \
	.submitted_at = t }
/* cannot be suspended (memory shared through CUDA IPC); q: --requeue */
#define UNSUSP(i, m, p, mask, q) { .id = i, .uid = 1, .running = 1, .ngpus = 1, .mem = m, \
	.priority = p, .gpumask = mask, .unsuspendable = 1, .requeue = q }
/* the same, started (or resumed) at t, without --requeue */
#define UNSUSPT(i, m, p, mask, t) { .id = i, .uid = 1, .running = 1, .ngpus = 1, .mem = m, \
	.priority = p, .gpumask = mask, .unsuspendable = 1, .slice_start = t }
/*
 * running since 0 (RUNUT: since t, of class 0), of user u and class q;
 * pending, of user u and class q, its class preempting the classes of mask pm
 */
#define RUNU(i, m, p, mask, u, q) { .id = i, .uid = u, .running = 1, .ngpus = 1, .mem = m, \
	.priority = p, .gpumask = mask, .qos = q }
#define RUNUT(i, m, p, mask, u, t) { .id = i, .uid = u, .running = 1, .ngpus = 1, .mem = m, \
	.priority = p, .gpumask = mask, .slice_start = t }
#define PENDU(i, m, p, u, q, pm) { .id = i, .uid = u, .ngpus = 1, .mem = m, .priority = p, \
	.submitted_at = 1, .qos = q, .qos_preempts = pm }
/* suspended at t; r: it may resume */
#define SUSP(i, m, p, mask, t, r) { .id = i, .uid = 1, .ngpus = 1, .mem = m, .priority = p, \
	.submitted_at = t, .gpumask = mask, .suspended = 1, .may_resume = r }

static const struct pcase cases[] = {
	{ "preempt = off: a higher job waits", 1, { 80 * G }, { 0 }, 0, SCHED_PREEMPT_OFF, 0, 2,
	  { RUN(1, 50 * G, 0, 1, 0), PEND(2, 50 * G, 10, 1) }, 0, { 0 }, 0,
	  { SCHED_RUNNING, SCHED_WAIT_MEM } },
	{ "suspend: the lower job gives way", 1, { 80 * G }, { 0 }, 0, SCHED_PREEMPT_SUSPEND, 0, 2,
	  { RUN(1, 50 * G, 0, 1, 0), PEND(2, 50 * G, 10, 1) }, 2, { 1 }, 0,
	  { SCHED_RUNNING, SCHED_WAIT_MEM }, { SCHED_GIVE_SUSPEND } },
	{ "a job that cannot be suspended is chosen as any other (the lowest priority), "
	  "and cancelled without --requeue",
	  1, { 80 * G }, { 0 }, 0, SCHED_PREEMPT_SUSPEND, 0, 3,
	  { UNSUSP(1, 40 * G, 0, 1, 0), RUN(2, 40 * G, 1, 1, 0), PEND(3, 40 * G, 10, 1) },
	  3, { 1 }, 0, { X, X, X }, { SCHED_GIVE_CANCEL } },
	{ "... its claim pushes no suspend onto another's job of higher priority",
	  1, { 80 * G }, { 0 }, 0, SCHED_PREEMPT_SUSPEND, 0, 3,
	  { RUN(1, 40 * G, 5, 1, 0), UNSUSP(2, 40 * G, 0, 1, 1), PEND(3, 40 * G, 10, 1) },
	  3, { 2 }, 0, { X, X, X }, { SCHED_GIVE_REQUEUE } },
	{ "... the fewest jobs give way, however they go",
	  1, { 80 * G }, { 0 }, 0, SCHED_PREEMPT_SUSPEND, 0, 4,
	  { UNSUSP(1, 40 * G, 1, 1, 0), RUN(2, 20 * G, 0, 1, 0), RUN(3, 20 * G, 0, 1, 0),
	    PEND(4, 40 * G, 10, 1) }, 4, { 1 }, 0, { X, X, X, X }, { SCHED_GIVE_CANCEL } },
	{ "when it alone would make room, it is stopped and cancelled (a claim protects nothing)",
	  1, { 80 * G }, { 0 }, 0, SCHED_PREEMPT_SUSPEND, 0, 2,
	  { UNSUSP(1, 50 * G, 0, 1, 0), PEND(2, 50 * G, 10, 1) }, 2, { 1 }, 0, { X, X },
	  { SCHED_GIVE_CANCEL } },
	{ "... not before preempt_min_runtime; wake when it is over",
	  1, { 80 * G }, { 0 }, 0, SCHED_PREEMPT_SUSPEND, 60, 2,
	  { UNSUSPT(1, 50 * G, 0, 1, NOW - 10), PEND(2, 50 * G, 10, 1) }, 0, { 0 }, NOW + 50,
	  { X, X } },
	{ "... nor for a job of its own priority",
	  1, { 80 * G }, { 0 }, 0, SCHED_PREEMPT_SUSPEND, 0, 2,
	  { UNSUSP(1, 50 * G, 10, 1, 0), PEND(2, 50 * G, 10, 1) }, 0, { 0 }, 0, { X, X } },
	{ "with --requeue it gives way (it is stopped and queued again)",
	  1, { 80 * G }, { 0 }, 0, SCHED_PREEMPT_SUSPEND, 0, 2,
	  { UNSUSP(1, 50 * G, 0, 1, 1), PEND(2, 50 * G, 10, 1) }, 2, { 1 }, 0, { X, X },
	  { SCHED_GIVE_REQUEUE } },
	{ "requeue: one that cannot be suspended, without --requeue, is not stopped",
	  1, { 80 * G }, { 0 }, 0, SCHED_PREEMPT_REQUEUE, 0, 2,
	  { UNSUSP(1, 50 * G, 0, 1, 0), PEND(2, 50 * G, 10, 1) }, 0, { 0 }, 0, { X, X } },
	{ "preempt = off: nor is it", 1, { 80 * G }, { 0 }, 0, SCHED_PREEMPT_OFF, 0, 2,
	  { UNSUSP(1, 50 * G, 0, 1, 0), PEND(2, 50 * G, 10, 1) }, 0, { 0 }, 0, { X, X } },
	{ "on a timeslice GPU it takes no turns, with --requeue too (each turn's work lost)",
	  1, { 80 * G }, { SCHED_TIMESLICE }, 30, SCHED_PREEMPT_OFF, 0, 2,
	  { UNSUSP(1, 50 * G, 0, 1, 1), PEND(2, 50 * G, 0, 1) }, 0, { 0 }, 0, { X, X } },
	{ "... nor without, its turn long over (a claim buys no turns among equals)",
	  1, { 80 * G }, { SCHED_TIMESLICE }, 30, SCHED_PREEMPT_OFF, 0, 2,
	  { UNSUSPT(1, 50 * G, 0, 1, NOW - 40), PEND(2, 50 * G, 0, 1) }, 0, { 0 }, 0, { X, X } },
	{ "... and no wake at its turn's end",
	  1, { 80 * G }, { SCHED_TIMESLICE }, 30, SCHED_PREEMPT_OFF, 0, 2,
	  { UNSUSPT(1, 50 * G, 0, 1, NOW - 10), PEND(2, 50 * G, 0, 1) }, 0, { 0 }, 0,
	  { X, X } },
	{ "... but a higher job still stops it there, under preempt = suspend: cancelled",
	  1, { 80 * G }, { SCHED_TIMESLICE }, 30, SCHED_PREEMPT_SUSPEND, 0, 2,
	  { UNSUSPT(1, 50 * G, 0, 1, NOW - 40), PEND(2, 50 * G, 10, 1) }, 2, { 1 }, 0, { X, X },
	  { SCHED_GIVE_CANCEL } },
	{ "... nor for a job of higher priority than the waiting one",
	  1, { 80 * G }, { SCHED_TIMESLICE }, 30, SCHED_PREEMPT_OFF, 0, 2,
	  { UNSUSP(1, 50 * G, 5, 1, 1), PEND(2, 50 * G, 0, 1) }, 0, { 0 }, 0, { X, X } },
	{ "equal priorities never preempt", 1, { 80 * G }, { 0 }, 0, SCHED_PREEMPT_SUSPEND, 0, 2,
	  { RUN(1, 50 * G, 5, 1, 0), PEND(2, 50 * G, 5, 1) }, 0, { 0 }, 0, { X, X } },
	{ "preempt_min_runtime protects a job that just started; wake when it is over",
	  1, { 80 * G }, { 0 }, 0, SCHED_PREEMPT_SUSPEND, 60, 2,
	  { RUN(1, 50 * G, 0, 1, NOW - 10), PEND(2, 50 * G, 10, 1) }, 0, { 0 }, NOW + 50,
	  { X, X } },
	{ "the fewest jobs give way, before lower priorities",
	  1, { 80 * G }, { 0 }, 0, SCHED_PREEMPT_SUSPEND, 0, 4,
	  { RUN(1, 20 * G, 1, 1, 10), RUN(2, 20 * G, 1, 1, 20), RUN(3, 40 * G, 5, 1, 5),
	    PEND(4, 40 * G, 10, 1) }, 4, { 3 }, 0, { X, X, X, X } },
	{ "then the lowest priority", 1, { 80 * G }, { 0 }, 0, SCHED_PREEMPT_SUSPEND, 0, 3,
	  { RUN(1, 40 * G, 3, 1, 10), RUN(2, 40 * G, 1, 1, 10), PEND(3, 40 * G, 10, 1) },
	  3, { 2 }, 0, { X, X, X } },
	{ "then the most recently started", 1, { 80 * G }, { 0 }, 0, SCHED_PREEMPT_SUSPEND, 0, 3,
	  { RUN(1, 40 * G, 1, 1, 100), RUN(2, 40 * G, 1, 1, 200), PEND(3, 40 * G, 10, 1) },
	  3, { 2 }, 0, { X, X, X } },
	{ "a higher running job never gives way, so nobody does",
	  1, { 80 * G }, { 0 }, 0, SCHED_PREEMPT_SUSPEND, 0, 3,
	  { RUN(1, 40 * G, 20, 1, 0), RUN(2, 40 * G, 1, 1, 0), PEND(3, 60 * G, 10, 1) },
	  0, { 0 }, 0, { X, X, X } },
	{ "no more than it needs", 1, { 80 * G }, { 0 }, 0, SCHED_PREEMPT_SUSPEND, 0, 4,
	  { RUN(1, 30 * G, 0, 1, 0), RUN(2, 30 * G, 0, 1, 0), RUN(3, 10 * G, 0, 1, 5),
	    PEND(4, 20 * G, 10, 1) }, 4, { 3 }, 0, { X, X, X, X } },
	{ "a whole-GPU job needs every job there to give way",
	  1, { 80 * G }, { 0 }, 0, SCHED_PREEMPT_SUSPEND, 0, 3,
	  { RUN(1, 10 * G, 0, 1, 0), RUN(2, 10 * G, 20, 1, 0), PEND(3, 0, 10, 1) },
	  0, { 0 }, 0, { X, X, X } },
	{ "two GPUs: the one where fewer give way",
	  2, { 80 * G, 80 * G }, { 0 }, 0, SCHED_PREEMPT_SUSPEND, 0, 4,
	  { RUN(1, 40 * G, 0, 1, 0), RUN(2, 40 * G, 0, 1, 0), RUN(3, 70 * G, 0, 2, 0),
	    PEND(4, 60 * G, 10, 1) }, 4, { 3 }, 0, { X, X, X, X } },
	{ "two high jobs arrive together: one set gives way, for the first",
	  1, { 80 * G }, { 0 }, 0, SCHED_PREEMPT_SUSPEND, 0, 3,
	  { RUN(1, 50 * G, 0, 1, 0), PEND(2, 50 * G, 10, 1), PEND(3, 50 * G, 10, 2) },
	  2, { 1 }, 0, { SCHED_RUNNING, SCHED_WAIT_MEM, SCHED_WAIT_MEM } },
	{ "... while it is being suspended, nobody else is asked",
	  1, { 80 * G }, { 0 }, 0, SCHED_PREEMPT_SUSPEND, 0, 3,
	  { BUSY(1, 50 * G, 0, 1), PEND(2, 50 * G, 10, 1), PEND(3, 50 * G, 10, 2) },
	  0, { 0 }, 0, { SCHED_RUNNING, SCHED_WAIT_MEM, SCHED_WAIT_MEM } },
	{ "... once suspended, the first starts; the second does not preempt it",
	  1, { 80 * G }, { 0 }, 0, SCHED_PREEMPT_SUSPEND, 0, 3,
	  { SUSP(1, 50 * G, 0, 1, 50, 1), PEND(2, 50 * G, 10, 1), PEND(3, 50 * G, 10, 2) },
	  0, { 0 }, 0, { SCHED_WAIT_MEM, SCHED_START, SCHED_WAIT_MEM } },
	{ "... the first running: the second waits for it, not the suspended job",
	  1, { 80 * G }, { 0 }, 0, SCHED_PREEMPT_SUSPEND, 0, 3,
	  { SUSP(1, 50 * G, 0, 1, 50, 1), RUN(2, 50 * G, 10, 1, NOW - 1), PEND(3, 50 * G, 10, 2) },
	  0, { 0 }, 0, { SCHED_WAIT_MEM, SCHED_RUNNING, SCHED_WAIT_MEM } },
	{ "... the first done: the second starts before the suspended one resumes",
	  1, { 80 * G }, { 0 }, 0, SCHED_PREEMPT_SUSPEND, 0, 2,
	  { SUSP(1, 50 * G, 0, 1, 50, 1), PEND(3, 50 * G, 10, 2) },
	  0, { 0 }, 0, { SCHED_WAIT_MEM, SCHED_START } },
	{ "a job whose switch failed lately is passed over; the next one gives way",
	  1, { 80 * G }, { 0 }, 0, SCHED_PREEMPT_SUSPEND, 0, 3,
	  { PINNED(1, 40 * G, 0, 1), RUN(2, 40 * G, 1, 1, 0), PEND(3, 40 * G, 10, 1) },
	  3, { 2 }, 0, { X, X, X } },
	{ "requeue: only --requeue jobs are stopped",
	  1, { 80 * G }, { 0 }, 0, SCHED_PREEMPT_REQUEUE, 0, 3,
	  { RUN(1, 40 * G, 0, 1, 0), RUNQ(2, 40 * G, 0, 1, 0), PEND(3, 40 * G, 10, 1) },
	  3, { 2 }, 0, { X, X, X }, { SCHED_GIVE_REQUEUE } },
	{ "requeue: without --requeue jobs nothing is stopped",
	  1, { 80 * G }, { 0 }, 0, SCHED_PREEMPT_REQUEUE, 0, 2,
	  { RUN(1, 50 * G, 0, 1, 0), PEND(2, 50 * G, 10, 1) }, 0, { 0 }, 0, { X, X } },
	{ "suspended jobs resume in priority order when they fit",
	  1, { 80 * G }, { 0 }, 0, SCHED_PREEMPT_SUSPEND, 0, 3,
	  { RUN(1, 40 * G, 0, 1, 0), SUSP(2, 30 * G, 1, 1, 10, 1), SUSP(3, 30 * G, 5, 1, 20, 1) },
	  0, { 0 }, 0, { SCHED_RUNNING, SCHED_WAIT_MEM, SCHED_RESUME } },
	{ "suspended by nvq suspend: it waits for nvq resume",
	  1, { 80 * G }, { 0 }, 0, SCHED_PREEMPT_SUSPEND, 0, 1,
	  { SUSP(1, 30 * G, 0, 1, 10, 0) }, 0, { 0 }, 0, { SCHED_SUSPENDED } },
	{ "a suspended job resumes on its own GPU only",
	  2, { 80 * G, 80 * G }, { 0 }, 0, SCHED_PREEMPT_SUSPEND, 0, 2,
	  { RUN(1, 60 * G, 0, 2, 0), SUSP(2, 30 * G, 0, 2, 10, 1) }, 0, { 0 }, 0,
	  { SCHED_RUNNING, SCHED_WAIT_MEM } },
	{ "a resume never preempts", 1, { 80 * G }, { 0 }, 0, SCHED_PREEMPT_SUSPEND, 0, 2,
	  { RUN(1, 60 * G, 0, 1, 0), SUSP(2, 30 * G, 10, 1, 10, 1) }, 0, { 0 }, 0,
	  { SCHED_RUNNING, SCHED_WAIT_MEM } },
	{ "timeslice: when a turn is over, who waited longest goes next",
	  1, { 80 * G }, { SCHED_TIMESLICE }, 30, SCHED_PREEMPT_OFF, 0, 3,
	  { RUN(1, 45 * G, 0, 1, NOW - 40), SUSP(2, 45 * G, 0, 1, NOW - 50, 1),
	    PEND(3, 45 * G, 0, NOW - 100) }, 3, { 1 }, 0,
	  { SCHED_RUNNING, SCHED_WAIT_MEM, SCHED_WAIT_MEM }, { SCHED_GIVE_SUSPEND } },
	{ "timeslice: a suspended job's turn", 1, { 80 * G }, { SCHED_TIMESLICE }, 30,
	  SCHED_PREEMPT_OFF, 0, 2,
	  { RUN(1, 45 * G, 0, 1, NOW - 40), SUSP(2, 45 * G, 0, 1, NOW - 50, 1) }, 2, { 1 }, 0,
	  { SCHED_RUNNING, SCHED_WAIT_MEM } },
	{ "timeslice: within its turn nobody yields; wake at its end",
	  1, { 80 * G }, { SCHED_TIMESLICE }, 30, SCHED_PREEMPT_OFF, 0, 2,
	  { RUN(1, 45 * G, 0, 1, NOW - 10), PEND(2, 45 * G, 0, 1) }, 0, { 0 }, NOW + 20,
	  { X, X } },
	{ "timeslice: a job started in this pass has its turn; wake at its end",
	  1, { 80 * G }, { SCHED_TIMESLICE }, 30, SCHED_PREEMPT_OFF, 0, 2,
	  { PEND(1, 45 * G, 0, 1), PEND(2, 45 * G, 0, 2) }, 0, { 0 }, NOW + 30,
	  { SCHED_START, SCHED_WAIT_MEM } },
	{ "timeslice: a higher job does not take turns with a lower one",
	  1, { 80 * G }, { SCHED_TIMESLICE }, 30, SCHED_PREEMPT_OFF, 0, 2,
	  { RUN(1, 45 * G, 5, 1, NOW - 100), PEND(2, 45 * G, 0, 1) }, 0, { 0 }, 0, { X, X } },
	{ "timeslice: jobs that fit together share, no turns",
	  1, { 80 * G }, { SCHED_TIMESLICE }, 30, SCHED_PREEMPT_OFF, 0, 2,
	  { RUN(1, 30 * G, 0, 1, NOW - 100), PEND(2, 30 * G, 0, 1) }, 0, { 0 }, 0,
	  { SCHED_RUNNING, SCHED_START } },
	{ "not timeslice, preempt off: nobody takes turns",
	  1, { 80 * G }, { SCHED_AUTO }, 30, SCHED_PREEMPT_OFF, 0, 2,
	  { RUN(1, 45 * G, 0, 1, NOW - 100), PEND(2, 45 * G, 0, 1) }, 0, { 0 }, 0, { X, X } },
	/* who may pass whom (preempt_may): users 1 and 2, root 0, classes 0 and 1 */
	{ "another user's higher -p, no class: nobody gives way",
	  1, { 80 * G }, { 0 }, 0, SCHED_PREEMPT_SUSPEND, 0, 2,
	  { RUNU(1, 50 * G, 0, 1, 0, 0), PENDU(2, 50 * G, 100, 2, 0, 0) }, 0, { 0 }, 0, { X, X } },
	{ "... of the other's lowest job either, beside the user's own",
	  1, { 80 * G }, { 0 }, 0, SCHED_PREEMPT_SUSPEND, 0, 3,
	  { RUNU(1, 30 * G, -5, 1, 0, 0), RUNU(2, 30 * G, 0, 1, 2, 0),
	    PENDU(3, 40 * G, 100, 2, 0, 0) }, 3, { 2 }, 0, { X, X, X }, { SCHED_GIVE_SUSPEND } },
	{ "a class that preempts the victim's class: another user's job gives way, "
	  "whatever its -p",
	  1, { 80 * G }, { 0 }, 0, SCHED_PREEMPT_SUSPEND, 0, 2,
	  { RUNU(1, 50 * G, 50, 1, 1, 0), PENDU(2, 50 * G, 0, 2, 1, 1) }, 2, { 1 }, 0, { X, X },
	  { SCHED_GIVE_SUSPEND } },
	{ "a class's preemption waits preempt_min_runtime like any; wake then",
	  1, { 80 * G }, { 0 }, 0, SCHED_PREEMPT_SUSPEND, 60, 2,
	  { RUNUT(1, 50 * G, 0, 1, 1, NOW - 10), PENDU(2, 50 * G, 0, 2, 1, 1) }, 0, { 0 }, NOW + 50,
	  { X, X } },
	{ "preempt = off: a class preempts nobody either",
	  1, { 80 * G }, { 0 }, 0, SCHED_PREEMPT_OFF, 0, 2,
	  { RUNU(1, 50 * G, 0, 1, 1, 0), PENDU(2, 50 * G, 0, 2, 1, 1) }, 0, { 0 }, 0, { X, X } },
	{ "timeslice turns are taken among users as before (equal -p)",
	  1, { 80 * G }, { SCHED_TIMESLICE }, 30, SCHED_PREEMPT_OFF, 0, 2,
	  { RUNU(1, 45 * G, 0, 1, 1, 0), PENDU(2, 45 * G, 0, 2, 0, 0) }, 2, { 1 }, 0, { X, X },
	  { SCHED_GIVE_SUSPEND } },
};

static int
has(const int64_t *ids, int64_t id)
{
	int k;

	for (k = 0; k < 4 && ids[k] != 0; k++)
		if (ids[k] == id)
			return 1;
	return 0;
}

/* How the case wants victim id to give way; SCHED_GIVE_NEVER: not checked. */
static int
give_of(const struct pcase *t, int64_t id)
{
	int k;

	for (k = 0; k < 4 && t->victims[k] != 0; k++)
		if (t->victims[k] == id)
			return t->give[k];
	return SCHED_GIVE_NEVER;
}

/*
 * preempt_give, row by row: a job that cannot be suspended is stopped, never
 * passed over (unless preempt = requeue and it has no --requeue, as any job).
 */
/* preempt_may, row by row: whether pending j may take running v's place */
static void
test_may(void **state)
{
	static const struct {
		const char	*name;
		uint32_t	vuid;
		int		vprio, vqos;
		uint32_t	juid;
		int		jprio;
		uint32_t	jpreempts;
		int		want;
	} t[] = {
		{ "another user's higher -p, no class: never", 1, 0, 0, 2, 100, 0, 0 },
		{ "the same user's higher -p: yes", 2, 0, 0, 2, 10, 0, 1 },
		{ "the same user's equal -p: no", 2, 10, 0, 2, 10, 0, 0 },
		{ "the same user's lower -p: no", 2, 10, 0, 2, 5, 0, 0 },
		{ "root's higher -p: anyone's, yes", 1, 0, 0, 0, 10, 0, 1 },
		{ "root's equal -p: no", 1, 10, 0, 0, 10, 0, 0 },
		{ "a class that preempts the victim's: yes, whatever -p", 1, 50, 0, 2, 0, 1, 1 },
		{ "... and the victim's class among others", 1, 50, 3, 2, -5, 1U << 3 | 1, 1 },
		{ "a class that preempts another class: no", 1, 0, 1, 2, 10, 1, 0 },
		{ "root's job of a class: by -p still", 1, 0, 1, 0, 10, 1, 1 },
	};
	size_t i;

	(void)state;
	for (i = 0; i < sizeof(t) / sizeof(t[0]); i++) {
		const struct sched_job v = { .uid = t[i].vuid, .priority = t[i].vprio,
		    .qos = t[i].vqos, .running = 1 };
		const struct sched_job j = { .uid = t[i].juid, .priority = t[i].jprio,
		    .qos_preempts = t[i].jpreempts };

		if (preempt_may(&v, &j) != t[i].want) {
			print_error("%s: got %d\n", t[i].name, preempt_may(&v, &j));
			fail();
		}
	}
}

/* preempt_may between --class lc and be: class alone decides, whatever -p, user and qos */
static void
test_may_lcbe(void **state)
{
	static const struct {
		const char	*name;
		int		vlc, jlc;
		uint32_t	vuid, juid;
		int		vprio, jprio;
		uint32_t	jpreempts;
		int		want;
	} t[] = {
		{ "lc never gives way to be, even to root's higher -p", 1, 0, 1, 0, 0, 100, 0, 0 },
		{ "nor to be of a class that preempts its class", 1, 0, 1, 2, 0, 0, 1, 0 },
		{ "nor to the same user's higher -p be", 1, 0, 2, 2, 0, 10, 0, 0 },
		{ "be gives way to another user's lc", 0, 1, 1, 2, 50, 0, 0, 1 },
		{ "lc and lc: by -p as before (another user's: no)", 1, 1, 1, 2, 0, 100, 0, 0 },
		{ "lc and lc: the same user's higher -p: yes", 1, 1, 2, 2, 0, 10, 0, 1 },
		{ "be and be: by -p as before", 0, 0, 2, 2, 0, 10, 0, 1 },
	};
	size_t i;

	(void)state;
	for (i = 0; i < sizeof(t) / sizeof(t[0]); i++) {
		const struct sched_job v = { .uid = t[i].vuid, .priority = t[i].vprio,
		    .running = 1, .lc = t[i].vlc };
		const struct sched_job j = { .uid = t[i].juid, .priority = t[i].jprio,
		    .qos_preempts = t[i].jpreempts, .lc = t[i].jlc };

		if (preempt_may(&v, &j) != t[i].want) {
			print_error("%s: got %d\n", t[i].name, preempt_may(&v, &j));
			fail();
		}
	}
}

static void
test_give(void **state)
{
	static const struct {
		int	preempt, unsuspendable, requeue, want;
	} rows[] = {
		{ SCHED_PREEMPT_OFF, 0, 0, SCHED_GIVE_NEVER },
		{ SCHED_PREEMPT_OFF, 0, 1, SCHED_GIVE_NEVER },
		{ SCHED_PREEMPT_OFF, 1, 0, SCHED_GIVE_NEVER },
		{ SCHED_PREEMPT_OFF, 1, 1, SCHED_GIVE_NEVER },
		{ SCHED_PREEMPT_SUSPEND, 0, 0, SCHED_GIVE_SUSPEND },
		{ SCHED_PREEMPT_SUSPEND, 0, 1, SCHED_GIVE_SUSPEND },
		{ SCHED_PREEMPT_SUSPEND, 1, 0, SCHED_GIVE_CANCEL },
		{ SCHED_PREEMPT_SUSPEND, 1, 1, SCHED_GIVE_REQUEUE },
		{ SCHED_PREEMPT_REQUEUE, 0, 0, SCHED_GIVE_NEVER },
		{ SCHED_PREEMPT_REQUEUE, 0, 1, SCHED_GIVE_REQUEUE },
		{ SCHED_PREEMPT_REQUEUE, 1, 0, SCHED_GIVE_NEVER },
		{ SCHED_PREEMPT_REQUEUE, 1, 1, SCHED_GIVE_REQUEUE },
		{ 7, 1, 1, SCHED_GIVE_NEVER },		/* not a mode: nothing */
	};
	struct sched_settings set;
	struct sched_job v;
	size_t i;
	int got;

	(void)state;
	for (i = 0; i < sizeof(rows) / sizeof(rows[0]); i++) {
		memset(&set, 0, sizeof(set));
		memset(&v, 0, sizeof(v));
		set.preempt = rows[i].preempt;
		v.running = 1;
		v.unsuspendable = rows[i].unsuspendable;
		v.requeue = rows[i].requeue;
		if ((got = preempt_give(&v, &set)) != rows[i].want) {
			print_error("preempt %d, unsuspendable %d, requeue %d: %d, wanted %d\n",
			    rows[i].preempt, rows[i].unsuspendable, rows[i].requeue, got,
			    rows[i].want);
			fail();
		}
	}
}

/*
 * preempt_give_turn, row by row: at the end of a turn on a timeslice GPU a job
 * is suspended; one that cannot be is not stopped, whatever it asked.
 */
static void
test_give_turn(void **state)
{
	static const struct {
		int	unsuspendable, requeue, want;
	} rows[] = {
		{ 0, 0, SCHED_GIVE_SUSPEND },
		{ 0, 1, SCHED_GIVE_SUSPEND },
		{ 1, 0, SCHED_GIVE_NEVER },
		{ 1, 1, SCHED_GIVE_NEVER },
	};
	struct sched_job v;
	size_t i;
	int got;

	(void)state;
	for (i = 0; i < sizeof(rows) / sizeof(rows[0]); i++) {
		memset(&v, 0, sizeof(v));
		v.running = 1;
		v.unsuspendable = rows[i].unsuspendable;
		v.requeue = rows[i].requeue;
		if ((got = preempt_give_turn(&v)) != rows[i].want) {
			print_error("unsuspendable %d, requeue %d: %d, wanted %d\n",
			    rows[i].unsuspendable, rows[i].requeue, got, rows[i].want);
			fail();
		}
	}
}

static void
test_cases(void **state)
{
	struct sched_decision dec[6];
	struct sched_preemption out;
	struct sched_settings set;
	struct sched_gpu gpus[2] = { { 0 } };
	struct sched_plan plan;
	int order[6];
	size_t c;
	int i, k, nexp;

	(void)state;
	for (c = 0; c < sizeof(cases) / sizeof(cases[0]); c++) {
		const struct pcase *t = &cases[c];

		memset(&set, 0, sizeof(set));
		set.preempt = t->preempt;
		set.preempt_min_runtime = t->min_runtime;
		memset(gpus, 0, sizeof(gpus));
		for (i = 0; i < t->ngpus; i++) {
			gpus[i].total = t->total[i];
			gpus[i].mode = t->mode[i];
			gpus[i].quantum = t->quantum;
		}
		plan.dec = dec;
		plan.order = order;
		sched_plan(gpus, t->ngpus, t->jobs, t->njobs, &set, NOW, &plan);
		for (i = 0; i < t->njobs; i++)
			if (t->why[i] != X && dec[i].why != t->why[i]) {
				print_error("%s: job %lld: decision %d, wanted %d\n", t->name,
				    (long long)t->jobs[i].id, dec[i].why, t->why[i]);
				fail();
			}
		preempt_choose(gpus, t->ngpus, t->jobs, t->njobs, &set, NOW, &plan, &out);
		if (t->beneficiary == 0) {
			if (out.beneficiary != -1) {
				print_error("%s: job %lld was served, wanted nobody\n", t->name,
				    (long long)t->jobs[out.beneficiary].id);
				fail();
			}
		} else if (out.beneficiary == -1 ||
		    t->jobs[out.beneficiary].id != t->beneficiary) {
			print_error("%s: served %lld, wanted %lld\n", t->name,
			    out.beneficiary == -1 ? -1LL : (long long)t->jobs[out.beneficiary].id,
			    (long long)t->beneficiary);
			fail();
		}
		for (nexp = 0; nexp < 4 && t->victims[nexp] != 0; nexp++)
			;
		if (t->beneficiary != 0) {
			if (out.nvictims != nexp) {
				print_error("%s: %d give way, wanted %d\n", t->name, out.nvictims, nexp);
				fail();
			}
			for (k = 0; k < out.nvictims; k++)
				if (!has(t->victims, t->jobs[out.victims[k]].id)) {
					print_error("%s: job %lld gives way\n", t->name,
					    (long long)t->jobs[out.victims[k]].id);
					fail();
				}
			for (k = 0; k < out.nvictims; k++)
				if ((i = give_of(t, t->jobs[out.victims[k]].id)) != SCHED_GIVE_NEVER &&
				    out.give[k] != i) {
					print_error("%s: job %lld gives way by %d, wanted %d\n",
					    t->name, (long long)t->jobs[out.victims[k]].id,
					    out.give[k], i);
					fail();
				}
			assert_int_equal(out.rotation, t->mode[0] == SCHED_TIMESLICE);
		}
		if (t->beneficiary == 0 && out.next_wake != t->wake) {
			print_error("%s: wake at %.1f, wanted %.1f\n", t->name, out.next_wake, t->wake);
			fail();
		}
	}
}

struct qcase {
	double	cost, overhead, min, fixed, want;
};

static void
test_quantum(void **state)
{
	static const struct qcase q[] = {
		{ 2.0, 0.05, 1, 0, 38.0 },	/* 2 s switches: 38 s turns keep 5% */
		{ 10.0, 0.10, 1, 0, 90.0 },
		{ 0.0, 0.05, 5, 0, 5.0 },	/* nothing measured yet: the floor */
		{ 0.1, 0.05, 5, 0, 5.0 },
		{ 30.0, 0.05, 1, 3, 3.0 },	/* a fixed quantum wins */
		{ 1.0, 0.0, 1, 0, 19.0 },	/* a bad overhead is taken as 5% */
	};
	size_t i;

	(void)state;
	for (i = 0; i < sizeof(q) / sizeof(q[0]); i++) {
		double got = preempt_quantum(q[i].cost, q[i].overhead, q[i].min, q[i].fixed);

		if (got < q[i].want - 1e-9 || got > q[i].want + 1e-9) {
			print_error("quantum(%g, %g, %g, %g) = %g, wanted %g\n", q[i].cost,
			    q[i].overhead, q[i].min, q[i].fixed, got, q[i].want);
			fail();
		}
	}
}

/* Whatever the switch cost, the share lost to switching stays at most the overhead. */
static void
test_quantum_overhead(void **state)
{
	double cost, q;

	(void)state;
	for (cost = 0.01; cost < 100; cost *= 1.7) {
		q = preempt_quantum(cost, 0.05, 1, 0);
		assert_true(cost / (q + cost) <= 0.05 + 1e-9);
	}
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_cases),
		cmocka_unit_test(test_may),
		cmocka_unit_test(test_may_lcbe),
		cmocka_unit_test(test_give),
		cmocka_unit_test(test_give_turn),
		cmocka_unit_test(test_quantum),
		cmocka_unit_test(test_quantum_overhead),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
