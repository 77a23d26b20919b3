/*
 * waitq.c: the waiting jobs per user, merged in order (see waitq.h).
 * Functions return 0 or -1 (out of memory), or a node.
 */
#include <stdlib.h>
#include <string.h>

#include "sched.h"
#include "waitq.h"

void
waitq_init(struct waitq *q)
{
	memset(q, 0, sizeof(*q));
}

void
waitq_free(struct waitq *q)
{
	free(q->u);
	free(q->mems);
	free(q->heap[0]);
	free(q->heap[1]);
	memset(q, 0, sizeof(*q));
}

/* uid's index in q->u, or -1; few users, a short array. */
static int
waitq_find(const struct waitq *q, uint32_t uid)
{
	int i;

	for (i = 0; i < q->nu; i++)
		if (q->u[i].uid == uid)
			return i;
	return -1;
}

/* Counts a job of mem in (d = 1) or out (-1); 0, or -1 out of memory. */
static int
waitq_count(struct waitq *q, uint64_t mem, int d)
{
	struct waitq_mem *m;
	int i;

	for (i = 0; i < q->nmems && q->mems[i].mem < mem; i++)
		;
	if (i < q->nmems && q->mems[i].mem == mem) {
		if ((q->mems[i].n += d) == 0) {
			memmove(&q->mems[i], &q->mems[i + 1],
			    (size_t)(q->nmems - i - 1) * sizeof(*q->mems));
			q->nmems--;
		}
		return 0;
	}
	if (d < 0)
		return 0;
	if (q->nmems == q->mcap) {
		if ((m = realloc(q->mems, (size_t)(q->mcap ? q->mcap * 2 : 8) *
		    sizeof(*m))) == NULL)
			return -1;
		q->mems = m;
		q->mcap = q->mcap ? q->mcap * 2 : 8;
	}
	memmove(&q->mems[i + 1], &q->mems[i], (size_t)(q->nmems - i) * sizeof(*q->mems));
	q->mems[i].mem = mem;
	q->mems[i].n = 1;
	q->nmems++;
	return 0;
}

uint64_t
waitq_min_mem(const struct waitq *q)
{
	int i;

	for (i = 0; i < q->nmems; i++)
		if (q->mems[i].mem > 0)
			return q->mems[i].mem;
	return UINT64_MAX;
}

int
waitq_whole(const struct waitq *q)
{
	return q->nmems > 0 && q->mems[0].mem == 0;
}

int
waitq_add(struct waitq *q, uint32_t uid, int kind, uint64_t mem, struct order_node *n)
{
	struct waitq_user *nu;
	int i;

	if (kind == WAITQ_GPU && waitq_count(q, mem, 1) == -1)
		return -1;

	if ((i = waitq_find(q, uid)) == -1) {
		if (q->nu == q->cap) {
			/* the lists' nodes never point at their heads: moving them is safe */
			if ((nu = realloc(q->u, (size_t)(q->cap ? q->cap * 2 : 8) *
			    sizeof(*q->u))) == NULL) {
				if (kind == WAITQ_GPU)
					waitq_count(q, mem, -1);
				return -1;
			}
			q->u = nu;
			q->cap = q->cap ? q->cap * 2 : 8;
		}
		i = q->nu++;
		memset(&q->u[i], 0, sizeof(q->u[i]));
		q->u[i].uid = uid;
		order_init(&q->u[i].list[0]);
		order_init(&q->u[i].list[1]);
	}
	order_insert(&q->u[i].list[kind], n);
	q->n++;
	return 0;
}

void
waitq_del(struct waitq *q, uint32_t uid, int kind, uint64_t mem, struct order_node *n)
{
	int i;

	if ((i = waitq_find(q, uid)) == -1)
		return;
	if (kind == WAITQ_GPU)
		waitq_count(q, mem, -1);
	order_remove(&q->u[i].list[kind], n);
	q->n--;
	if (q->u[i].list[0].n == 0 && q->u[i].list[1].n == 0)
		q->u[i] = q->u[--q->nu];
}

void
waitq_begin(struct waitq *q)
{
	int i;

	q->begun[0] = q->begun[1] = 0;
	for (i = 0; i < q->nu; i++)
		q->u[i].dropped[0] = q->u[i].dropped[1] = 0;
}

void
waitq_bonus(struct waitq *q, double (*f)(void *, uint32_t), void *arg)
{
	int i;

	for (i = 0; i < q->nu; i++)
		q->u[i].bonus = f != NULL ? f(arg, q->u[i].uid) : 0;
}

/* Whether user a's next node goes before user b's, their bonuses added. */
static int
waitq_before(const struct waitq *q, int kind, int a, int b)
{
	const struct order_node *x = q->u[a].cur[kind], *y = q->u[b].cur[kind];

	return sched_goes_before(x->key + q->u[a].bonus, x->at, x->id,
	    y->key + q->u[b].bonus, y->at, y->id);
}

static void
waitq_sift(struct waitq *q, int kind, int i)
{
	int *h = q->heap[kind], n = q->nheap[kind], c, t;

	while ((c = 2 * i + 1) < n) {
		if (c + 1 < n && waitq_before(q, kind, h[c + 1], h[c]))
			c++;
		if (!waitq_before(q, kind, h[c], h[i]))
			return;
		t = h[i];
		h[i] = h[c];
		h[c] = t;
		i = c;
	}
}

/* The heap of the users with a node of kind to read; -1 out of memory. */
static int
waitq_heap(struct waitq *q, int kind)
{
	int *h, i, n = 0;

	if (q->hcap < q->nu) {
		for (i = 0; i < 2; i++) {
			if ((h = realloc(q->heap[i], (size_t)q->nu * sizeof(*h))) == NULL)
				return -1;
			q->heap[i] = h;
		}
		q->hcap = q->nu;
	}
	for (i = 0; i < q->nu; i++) {
		q->u[i].cur[kind] = order_first(&q->u[i].list[kind]);
		if (q->u[i].cur[kind] != NULL && !q->u[i].dropped[kind])
			q->heap[kind][n++] = i;
	}
	q->nheap[kind] = n;
	for (i = n / 2 - 1; i >= 0; i--)
		waitq_sift(q, kind, i);
	return 0;
}

struct order_node *
waitq_next(struct waitq *q, int kind)
{
	struct order_node *n;
	struct waitq_user *u;

	if (!q->begun[kind]) {
		q->begun[kind] = 1;
		if (waitq_heap(q, kind) == -1)
			q->nheap[kind] = 0;	/* nothing read: nothing starts this pass */
	}
	while (q->nheap[kind] > 0) {
		u = &q->u[q->heap[kind][0]];
		n = u->dropped[kind] ? NULL : u->cur[kind];
		if (n != NULL)
			u->cur[kind] = order_next(n);
		/* a user with nothing more to read leaves the heap */
		if (n == NULL || u->cur[kind] == NULL)
			q->heap[kind][0] = q->heap[kind][--q->nheap[kind]];
		waitq_sift(q, kind, 0);
		if (n != NULL)
			return n;
	}
	return NULL;
}

struct order_node *
waitq_front(const struct waitq *q, uint32_t uid, int kind)
{
	int i;

	return (i = waitq_find(q, uid)) == -1 ? NULL : order_first(&q->u[i].list[kind]);
}

void
waitq_drop(struct waitq *q, uint32_t uid, int kind)
{
	int i;

	if ((i = waitq_find(q, uid)) != -1)
		q->u[i].dropped[kind] = 1;
}
