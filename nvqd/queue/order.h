/*
 * order.h: waiting jobs kept in the order they go in, between passes.
 *
 * An intrusive skip list of order_node (embedded in struct job): a node is
 * placed by its key, its time and its id, compared as sched_goes_before
 * compares them, so that a pass reads the queue's front without sorting
 * it.  A node moved up by nvq top is placed as if its key were up_key
 * higher and its time up_at earlier: that is its place in its owner's own
 * list (waitq.h), and lends it nothing across users, who compare key and
 * at alone.  Insert and remove cost O(log n) expected, the first node and the
 * next one O(1).  Levels come from a generator seeded per list: no clock,
 * no allocation.
 */
#ifndef NVQ_ORDER_H
#define NVQ_ORDER_H

#include <stdint.h>

#define ORDER_LEVELS	24	/* enough for 2^24 nodes at p = 1/2 */

struct order_node {
	struct order_node *next[ORDER_LEVELS];
	double		key;		/* set by the caller before order_insert */
	double		at;
	int64_t		id;
	double		up_key, up_at;	/* nvq top: how far it goes up in its list; 0, 0: not */
	int		level;		/* levels it is on; 0: in no list */
};

struct order {
	struct order_node head;		/* its next[] are the list's fronts */
	uint64_t	rng;
	int		n;
};

void		 order_init(struct order *);
/* Adds a node not in any list, by its key, at and id (not changed while it is in). */
void		 order_insert(struct order *, struct order_node *);
/* Removes a node that is in this list. */
void		 order_remove(struct order *, struct order_node *);
/* The first node, the next one; NULL at the end. */
struct order_node *order_first(const struct order *);
struct order_node *order_next(const struct order_node *);
/* Whether a goes before b in a list (up_key and up_at counted). */
int		 order_before(const struct order_node *, const struct order_node *);

#endif
