/*
 * waitq.h: the jobs that may start, kept between passes in order per user,
 * and read in one order across users during a pass.
 *
 * Each user has two skip lists (order.h): jobs of one GPU or more
 * (WAITQ_GPU) and jobs of none (WAITQ_CPU).  A pass reads each kind in the
 * order they go in, merged across users by a heap of the users' fronts,
 * and may drop a user from a kind: the user's later jobs of that kind are
 * then skipped without being looked at (a user at a [limits] limit).  So a
 * pass costs O(jobs read + users), whatever the length of each user's list.
 * Nothing may be added or removed while a pass reads.
 *
 * nvq top reorders a user's own list only: a node moved up (order.h's
 * up_key, up_at) goes first among its owner's jobs, while the merge
 * compares each user's front by its own key and time, unmoved.  So a job
 * moved up passes no other user's job it would not pass where it was; its
 * owner's jobs behind it wait for it, as their owner asked.
 */
#ifndef NVQ_WAITQ_H
#define NVQ_WAITQ_H

#include <stdint.h>

#include "order.h"

enum { WAITQ_GPU, WAITQ_CPU };

struct waitq_user {
	uint32_t	uid;
	struct order	list[2];
	struct order_node *cur[2];	/* during a pass: the next one to read */
	int		dropped[2];
	double		bonus;		/* added to its jobs' keys across users (fair share) */
};

/* How many jobs of a GPU or more ask for each size: the smallest is known. */
struct waitq_mem {
	uint64_t	mem;		/* per GPU; 0: whole GPUs */
	int		n;
};

struct waitq {
	struct waitq_mem *mems;		/* sorted by mem */
	int		nmems, mcap;
	struct waitq_user *u;
	int		nu, cap;
	int		*heap[2];	/* indexes into u, by their cur[] */
	int		nheap[2];
	int		hcap;
	int		begun[2];
	int		n;		/* jobs in all lists */
};

void		 waitq_init(struct waitq *);
void		 waitq_free(struct waitq *);
/*
 * Adds a node (its key, at and id set) for uid, of a job asking mem bytes
 * per GPU (WAITQ_GPU; 0: whole GPUs); 0, or -1 out of memory.
 */
int		 waitq_add(struct waitq *, uint32_t uid, int kind, uint64_t mem,
		    struct order_node *);
/* Removes a node waitq_add added with the same uid, kind and mem. */
void		 waitq_del(struct waitq *, uint32_t uid, int kind, uint64_t mem,
		    struct order_node *);
/*
 * Of the jobs of a GPU or more: the smallest mem above 0 (UINT64_MAX if
 * none), and whether any asks for whole GPUs.
 */
uint64_t	 waitq_min_mem(const struct waitq *);
int		 waitq_whole(const struct waitq *);
/*
 * Sets each user's bonus (their jobs' sched_job.share) to f(arg, uid), or
 * 0 with f NULL: before waitq_begin.
 */
void		 waitq_bonus(struct waitq *, double (*f)(void *, uint32_t), void *arg);
/* Starts a pass: every user's lists read from their fronts, none dropped. */
void		 waitq_begin(struct waitq *);
/* The next node of kind in the order across users; NULL when none is left. */
struct order_node *waitq_next(struct waitq *, int kind);
/* The front of uid's list of kind (order_next walks it); NULL if empty. */
struct order_node *waitq_front(const struct waitq *, uint32_t uid, int kind);
/* Skips uid's later nodes of kind for the rest of the pass. */
void		 waitq_drop(struct waitq *, uint32_t uid, int kind);

#endif
