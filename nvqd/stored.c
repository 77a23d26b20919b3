/*
 * stored.c: the bytes users' active jobs keep in nvqd's files (see
 * stored.h).
 */
#include <stdlib.h>

#include "stored.h"

struct stored_array {
	struct stored_array *hnext;
	int64_t		id;
	uint32_t	uid;
	uint64_t	bytes;		/* counted once for all its tasks */
	int		tasks;		/* active */
};

static size_t
stored_hash(const struct stored *t, int64_t id)
{
	return ((uint64_t)id * 0x9e3779b97f4a7c15ULL >> 20) & (t->nb - 1);
}

static struct stored_array **
stored_slot(const struct stored *t, int64_t id)
{
	struct stored_array **p;

	if (t->nb == 0)
		return NULL;
	for (p = &t->b[stored_hash(t, id)]; *p != NULL; p = &(*p)->hnext)
		if ((*p)->id == id)
			return p;
	return NULL;
}

static int
stored_grow(struct stored *t)
{
	struct stored_array **nb, **ob = t->b, *a, *next;
	size_t i, old = t->nb, n = t->nb ? t->nb * 2 : 64;

	if ((nb = calloc(n, sizeof(*nb))) == NULL)
		return -1;
	t->b = nb;
	t->nb = n;
	for (i = 0; i < old; i++)
		for (a = ob[i]; a != NULL; a = next) {
			next = a->hnext;
			a->hnext = t->b[stored_hash(t, a->id)];
			t->b[stored_hash(t, a->id)] = a;
		}
	free(ob);
	return 0;
}

/* uid's count, made if it has none; NULL out of memory. */
static uint64_t *
stored_user(struct stored *t, uint32_t uid)
{
	void *n;
	int i;

	for (i = 0; i < t->nusers; i++)
		if (t->users[i].uid == uid)
			return &t->users[i].bytes;
	if ((n = realloc(t->users, (size_t)(t->nusers + 1) * sizeof(*t->users))) == NULL)
		return NULL;
	t->users = n;
	t->users[t->nusers].uid = uid;
	t->users[t->nusers].bytes = 0;
	return &t->users[t->nusers++].bytes;
}

/* Takes n from *v, stopping at 0 (a count made from estimates never wraps). */
static void
stored_sub(uint64_t *v, uint64_t n)
{
	*v = *v > n ? *v - n : 0;
}

int
stored_add(struct stored *t, uint32_t uid, uint64_t own, int64_t array, uint64_t shared)
{
	struct stored_array **p, *a;
	uint64_t *u;

	if ((u = stored_user(t, uid)) == NULL)
		return -1;
	*u += own;
	if (array == 0)
		return 0;
	if ((p = stored_slot(t, array)) != NULL) {
		a = *p;
		a->tasks++;
		/* a task restarted alone may have brought less: the most is kept */
		if (shared > a->bytes) {
			*u += shared - a->bytes;
			a->bytes = shared;
		}
		return 0;
	}
	if ((t->n >= t->nb && stored_grow(t) == -1) || (a = calloc(1, sizeof(*a))) == NULL) {
		stored_sub(u, own);
		return -1;
	}
	a->id = array;
	a->uid = uid;
	a->bytes = shared;
	a->tasks = 1;
	a->hnext = t->b[stored_hash(t, array)];
	t->b[stored_hash(t, array)] = a;
	t->n++;
	*u += shared;
	return 0;
}

void
stored_drop(struct stored *t, uint32_t uid, uint64_t own, int64_t array)
{
	struct stored_array **p, *a;
	uint64_t *u = stored_user(t, uid);

	if (u != NULL)
		stored_sub(u, own);
	if (array == 0 || (p = stored_slot(t, array)) == NULL)
		return;
	a = *p;
	if (--a->tasks > 0)
		return;
	if ((u = stored_user(t, a->uid)) != NULL)
		stored_sub(u, a->bytes);
	*p = a->hnext;
	t->n--;
	free(a);
}

uint64_t
stored_bytes(const struct stored *t, uint32_t uid)
{
	int i;

	for (i = 0; i < t->nusers; i++)
		if (t->users[i].uid == uid)
			return t->users[i].bytes;
	return 0;
}

void
stored_free(struct stored *t)
{
	struct stored_array *a, *next;
	size_t i;

	for (i = 0; i < t->nb; i++)
		for (a = t->b[i]; a != NULL; a = next) {
			next = a->hnext;
			free(a);
		}
	free(t->b);
	free(t->users);
	t->b = NULL;
	t->users = NULL;
	t->nb = t->n = 0;
	t->nusers = 0;
}
