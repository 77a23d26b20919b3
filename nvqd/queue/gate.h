/*
 * gate.h: the limits of arrays (--array ...%N): how many of an array's
 * tasks hold a place (waiting in the scheduler's queue, running or
 * suspended) and, in order, those that wait for one outside it.
 *
 * A task takes a place before it may be scheduled; while its array has
 * none free it waits in its gate's list, where no pass sees it, so that a
 * pass costs the same with a 100,000-task array throttled to 8 as with 8
 * jobs.  A place is given back when the task ends; the first task waiting
 * takes it.  Nodes are embedded in the jobs (intrusive lists); gates exist
 * only for arrays with tasks in them, in a hash table by array id.
 */
#ifndef NVQ_NVQD_GATE_H
#define NVQ_NVQD_GATE_H

#include <stddef.h>
#include <stdint.h>

struct gate;

struct gate_node {
	struct gate_node *next, *prev;	/* in its gate's list, while waiting */
	int		slot;		/* holds a place */
	int		waiting;	/* in the list */
};

struct gates {
	struct gate	**b;		/* buckets; NULL until the first gate */
	size_t		nb;		/* a power of two */
	size_t		n;
};

/*
 * n, of array (whose limit is limit), asks for a place: 1 if it holds one
 * (took it now, had it, or force: a task that runs already), 0 if it waits
 * in the list.  Out of memory, it is let through (1) and logged.
 */
int		 gates_enter(struct gates *, int64_t array, int limit, struct gate_node *n,
		    int force);
/* A waiting n leaves the list (its task is cancelled). */
void		 gates_cancel(struct gates *, int64_t array, struct gate_node *n);
/*
 * n gives its place back: the first waiting task, out of the list (to
 * enter again, which now finds room), or NULL.
 */
struct gate_node *gates_leave(struct gates *, int64_t array, struct gate_node *n);
void		 gates_free(struct gates *);

#endif
