/*
 * deptab.c: who waits for whom (see deptab.h).  Groups of nodes by the id
 * waited for, in a chained hash of groups that doubles as it fills; nodes
 * are doubly linked in their group, so that taking one back costs O(1)
 * even when 100,000 jobs wait for the same one.
 */
#include <stdlib.h>

#include "deptab.h"

static size_t
deptab_hash(const struct deptab *t, int64_t id)
{
	return (size_t)(((uint64_t)id * 0x9e3779b97f4a7c15ULL) >> 20) & (t->nb - 1);
}

static struct deptab_group *
deptab_find(const struct deptab *t, int64_t id)
{
	struct deptab_group *g;

	if (t->nb == 0)
		return NULL;
	for (g = t->b[deptab_hash(t, id)]; g != NULL && g->id != id; g = g->hnext)
		;
	return g;
}

/* Doubles the buckets; -1 out of memory (the table stays as it was). */
static int
deptab_grow(struct deptab *t)
{
	struct deptab_group **ob = t->b, *g, *next;
	size_t onb = t->nb, i, h;

	t->nb = onb ? onb * 2 : 64;
	if ((t->b = calloc(t->nb, sizeof(*t->b))) == NULL) {
		t->b = ob;
		t->nb = onb;
		return -1;
	}
	for (i = 0; i < onb; i++)
		for (g = ob[i]; g != NULL; g = next) {
			next = g->hnext;
			h = deptab_hash(t, g->id);
			g->hnext = t->b[h];
			t->b[h] = g;
		}
	free(ob);
	return 0;
}

static struct deptab_group *
deptab_group(struct deptab *t, int64_t id)
{
	struct deptab_group *g;
	size_t h;

	if ((g = deptab_find(t, id)) != NULL)
		return g;
	if ((t->nb == 0 || t->ngroups >= t->nb) && deptab_grow(t) == -1 && t->nb == 0)
		return NULL;
	if ((g = calloc(1, sizeof(*g))) == NULL)
		return NULL;
	g->id = id;
	h = deptab_hash(t, id);
	g->hnext = t->b[h];
	t->b[h] = g;
	t->ngroups++;
	return g;
}

static void
deptab_unlink(struct deptab *t, struct deptab_node *n)
{
	struct deptab_group *g = n->g, **pg;

	*n->pprev = n->next;
	if (n->next != NULL)
		n->next->pprev = n->pprev;
	if (--g->n > 0)
		return;
	for (pg = &t->b[deptab_hash(t, g->id)]; *pg != g; pg = &(*pg)->hnext)
		;
	*pg = g->hnext;
	t->ngroups--;
	free(g);
}

int
deptab_add(struct deptab *t, void *owner, const int64_t *on, int n, struct deptab_node **nodes)
{
	struct deptab_node *a;
	struct deptab_group *g;
	int k;

	*nodes = NULL;
	if (n <= 0)
		return 0;
	if ((a = calloc((size_t)n, sizeof(*a))) == NULL)
		return -1;
	for (k = 0; k < n; k++) {
		if ((g = deptab_group(t, on[k])) == NULL) {
			while (--k >= 0)
				deptab_unlink(t, &a[k]);
			free(a);
			return -1;
		}
		a[k].owner = owner;
		a[k].g = g;
		a[k].next = g->head;
		a[k].pprev = &g->head;
		if (g->head != NULL)
			g->head->pprev = &a[k].next;
		g->head = &a[k];
		g->n++;
	}
	*nodes = a;
	return 0;
}

void
deptab_del(struct deptab *t, struct deptab_node *nodes, int n)
{
	int k;

	if (nodes == NULL)
		return;
	for (k = 0; k < n; k++)
		deptab_unlink(t, &nodes[k]);
	free(nodes);
}

size_t
deptab_count(const struct deptab *t, int64_t id)
{
	struct deptab_group *g = deptab_find(t, id);

	return g != NULL ? g->n : 0;
}

void
deptab_each(const struct deptab *t, int64_t id, void (*fn)(void *, void *), void *arg)
{
	struct deptab_group *g = deptab_find(t, id);
	struct deptab_node *n;

	for (n = g != NULL ? g->head : NULL; n != NULL; n = n->next)
		fn(n->owner, arg);
}

void
deptab_free(struct deptab *t)
{
	struct deptab_group *g, *next;
	size_t i;

	for (i = 0; i < t->nb; i++)
		for (g = t->b[i]; g != NULL; g = next) {
			next = g->hnext;
			free(g);
		}
	free(t->b);
	t->b = NULL;
	t->nb = t->ngroups = 0;
}
