/*
 * jobstate.h: the names of a job's states as nvqd stores them, and a
 * comma-separated list of them (nvq list --state, sent on by nvq in these
 * names).  Pure; shared by nvqd's request check and its listing query.
 */
#ifndef NVQ_JOBSTATE_H
#define NVQ_JOBSTATE_H

enum jobstate {
	JOBSTATE_PENDING,
	JOBSTATE_RUNNING,
	JOBSTATE_SUSPENDED,
	JOBSTATE_COMPLETED,
	JOBSTATE_FAILED,
	JOBSTATE_CANCELLED,
	JOBSTATE_TIMEOUT,
	JOBSTATE_NODE_FAIL,
	JOBSTATE_N
};

/* the states of a job still in the queue, as a jobstate_list mask */
#define JOBSTATE_ACTIVE	((1u << JOBSTATE_PENDING) | (1u << JOBSTATE_RUNNING) | \
			(1u << JOBSTATE_SUSPENDED))

extern const char *const jobstate_names[JOBSTATE_N];

/*
 * The items of list, each a name of jobstate_names exactly: how many
 * (repeats counted), with *mask the states named; -1 for an empty list, an
 * empty item or a name that is none of them.
 */
int	jobstate_list(const char *list, unsigned *mask);

#endif
