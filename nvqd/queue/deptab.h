/*
 * deptab.h: who waits for whom.  Each job waiting for --after has a node
 * per job it waits for, filed under that job's id, so that when a job ends
 * its dependents are found in O(their number), not by reading every job
 * that waits for anything.  A job's nodes are one array it owns through
 * deptab_add and gives back with deptab_del.
 */
#ifndef NVQ_DEPTAB_H
#define NVQ_DEPTAB_H

#include <stddef.h>
#include <stdint.h>

struct deptab_group;

struct deptab_node {
	struct deptab_node *next, **pprev;	/* in its group */
	struct deptab_group *g;
	void		*owner;
};

struct deptab_group {
	int64_t		id;
	struct deptab_node *head;
	size_t		n;
	struct deptab_group *hnext;
};

struct deptab {
	struct deptab_group **b;	/* buckets of groups, by id; a power of two */
	size_t		nb, ngroups;
};

/*
 * Files owner as waiting for each of on[0..n); *nodes gets the array to
 * give back to deptab_del.  0, or -1 out of memory (nothing filed).
 */
int		deptab_add(struct deptab *, void *owner, const int64_t *on, int n,
		    struct deptab_node **nodes);
/* Takes back what deptab_add filed (nodes may be NULL). */
void		deptab_del(struct deptab *, struct deptab_node *nodes, int n);
/* How many wait for id. */
size_t		deptab_count(const struct deptab *, int64_t id);
/* Calls fn(owner, arg) for each node waiting for id; fn must not change the table. */
void		deptab_each(const struct deptab *, int64_t id, void (*fn)(void *, void *),
		    void *arg);
void		deptab_free(struct deptab *);

#endif
