/*
 * gate.c: the limits of arrays (see gate.h).
 */
#include <stdlib.h>

#include "gate.h"
#include "log.h"

struct gate {
	struct gate	*hnext;
	int64_t		array;
	int		limit;
	int		held;		/* places held */
	int		nwait;
	struct gate_node *head, *tail;	/* waiting, first come first */
};

static size_t
gates_hash(const struct gates *t, int64_t array)
{
	return ((uint64_t)array * 0x9e3779b97f4a7c15ULL >> 20) & (t->nb - 1);
}

static struct gate *
gates_find(const struct gates *t, int64_t array)
{
	struct gate *g;

	if (t->nb == 0)
		return NULL;
	for (g = t->b[gates_hash(t, array)]; g != NULL; g = g->hnext)
		if (g->array == array)
			return g;
	return NULL;
}

static int
gates_grow(struct gates *t)
{
	struct gate **nb, *g, *next;
	size_t i, n = t->nb ? t->nb * 2 : 64, old = t->nb;
	struct gate **ob = t->b;

	if ((nb = calloc(n, sizeof(*nb))) == NULL)
		return -1;
	t->b = nb;
	t->nb = n;
	for (i = 0; i < old; i++)
		for (g = ob[i]; g != NULL; g = next) {
			next = g->hnext;
			g->hnext = t->b[gates_hash(t, g->array)];
			t->b[gates_hash(t, g->array)] = g;
		}
	free(ob);
	return 0;
}

/* Frees g once nothing holds or waits on it. */
static void
gates_done(struct gates *t, struct gate *g)
{
	struct gate **p;

	if (g->held > 0 || g->nwait > 0)
		return;
	for (p = &t->b[gates_hash(t, g->array)]; *p != NULL; p = &(*p)->hnext)
		if (*p == g) {
			*p = g->hnext;
			break;
		}
	t->n--;
	free(g);
}

int
gates_enter(struct gates *t, int64_t array, int limit, struct gate_node *n, int force)
{
	struct gate *g;

	if (n->slot)
		return 1;
	if ((g = gates_find(t, array)) == NULL) {
		if ((t->n + 1 > t->nb && gates_grow(t) == -1) ||
		    (g = calloc(1, sizeof(*g))) == NULL) {
			log_warnx("array %lld: out of memory: its limit does not hold",
			    (long long)array);
			return 1;
		}
		g->array = array;
		g->hnext = t->b[gates_hash(t, array)];
		t->b[gates_hash(t, array)] = g;
		t->n++;
	}
	g->limit = limit;
	if (force || g->held < limit) {
		g->held++;
		n->slot = 1;
		return 1;
	}
	n->next = NULL;
	n->prev = g->tail;
	if (g->tail != NULL)
		g->tail->next = n;
	else
		g->head = n;
	g->tail = n;
	n->waiting = 1;
	g->nwait++;
	return 0;
}

static void
gates_unlink(struct gate *g, struct gate_node *n)
{
	if (n->prev != NULL)
		n->prev->next = n->next;
	else
		g->head = n->next;
	if (n->next != NULL)
		n->next->prev = n->prev;
	else
		g->tail = n->prev;
	n->next = n->prev = NULL;
	n->waiting = 0;
	g->nwait--;
}

void
gates_cancel(struct gates *t, int64_t array, struct gate_node *n)
{
	struct gate *g;

	if (!n->waiting || (g = gates_find(t, array)) == NULL)
		return;
	gates_unlink(g, n);
	gates_done(t, g);
}

struct gate_node *
gates_leave(struct gates *t, int64_t array, struct gate_node *n)
{
	struct gate_node *first = NULL;
	struct gate *g;

	if (!n->slot || (g = gates_find(t, array)) == NULL)
		return NULL;
	n->slot = 0;
	g->held--;
	if (g->held < g->limit && (first = g->head) != NULL)
		gates_unlink(g, first);
	gates_done(t, g);
	return first;
}

void
gates_free(struct gates *t)
{
	struct gate *g, *next;
	size_t i;

	for (i = 0; i < t->nb; i++)
		for (g = t->b[i]; g != NULL; g = next) {
			next = g->hnext;
			free(g);
		}
	free(t->b);
	t->b = NULL;
	t->nb = t->n = 0;
}
