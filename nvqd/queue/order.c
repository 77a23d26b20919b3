/*
 * order.c: the skip list of waiting jobs (see order.h).
 */
#include <stddef.h>
#include <string.h>

#include "order.h"
#include "sched.h"

void
order_init(struct order *o)
{
	memset(o, 0, sizeof(*o));
	o->rng = 0x9e3779b97f4a7c15ULL;
}

int
order_before(const struct order_node *a, const struct order_node *b)
{
	return sched_goes_before(a->key + a->up_key, a->at - a->up_at, a->id,
	    b->key + b->up_key, b->at - b->up_at, b->id);
}

/* A level of 1 to ORDER_LEVELS, each one half as likely as the one below. */
static int
order_level(struct order *o)
{
	uint64_t x = o->rng;
	int level = 1;

	x ^= x << 13;
	x ^= x >> 7;
	x ^= x << 17;
	o->rng = x;
	while (level < ORDER_LEVELS && (x & 1)) {
		level++;
		x >>= 1;
	}
	return level;
}

/* The last node on each level that goes before n (the head where none does). */
static void
order_find(struct order *o, const struct order_node *n, struct order_node **upd)
{
	struct order_node *x = &o->head;
	int l;

	for (l = ORDER_LEVELS - 1; l >= 0; l--) {
		while (x->next[l] != NULL && x->next[l] != n && order_before(x->next[l], n))
			x = x->next[l];
		upd[l] = x;
	}
}

void
order_insert(struct order *o, struct order_node *n)
{
	struct order_node *upd[ORDER_LEVELS];
	int l;

	order_find(o, n, upd);
	n->level = order_level(o);
	for (l = 0; l < ORDER_LEVELS; l++)
		n->next[l] = NULL;
	for (l = 0; l < n->level; l++) {
		n->next[l] = upd[l]->next[l];
		upd[l]->next[l] = n;
	}
	o->n++;
}

void
order_remove(struct order *o, struct order_node *n)
{
	struct order_node *upd[ORDER_LEVELS];
	int l;

	order_find(o, n, upd);
	for (l = 0; l < n->level; l++)
		if (upd[l]->next[l] == n)
			upd[l]->next[l] = n->next[l];
	n->level = 0;
	o->n--;
}

struct order_node *
order_first(const struct order *o)
{
	return o->head.next[0];
}

struct order_node *
order_next(const struct order_node *n)
{
	return n->next[0];
}
