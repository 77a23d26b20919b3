/*
 * stored.c: what jobs share in nvqd's files, counted once (see stored.h).
 */
#include <stdlib.h>

#include "stored.h"

static size_t
stored_home(const struct stored *t, int64_t key)
{
	return (size_t)(((uint64_t)key * 0x9e3779b97f4a7c15ULL) >> 32) & (t->cap - 1);
}

/* key's slot, or the empty one where it would go (the table is never full). */
static struct stored_share *
stored_slot(const struct stored *t, int64_t key)
{
	size_t i = stored_home(t, key);

	while (t->slot[i].key != 0 && t->slot[i].key != key)
		i = (i + 1) & (t->cap - 1);
	return &t->slot[i];
}

/* Twice the slots (64 at first), each share moved to its place among them. */
static int
stored_resize(struct stored *t)
{
	struct stored_share *old = t->slot;
	size_t i, ocap = t->cap;

	if ((t->slot = calloc(ocap ? ocap * 2 : 64, sizeof(*t->slot))) == NULL) {
		t->slot = old;
		return -1;
	}
	t->cap = ocap ? ocap * 2 : 64;
	for (i = 0; i < ocap; i++)
		if (old[i].key != 0)
			*stored_slot(t, old[i].key) = old[i];
	free(old);
	return 0;
}

int
stored_add(struct stored *t, int64_t key, uint64_t bytes, uint64_t *more)
{
	struct stored_share *s;

	*more = 0;
	if (2 * (t->n + 1) > t->cap && stored_resize(t) == -1)
		return -1;
	s = stored_slot(t, key);
	if (s->key == 0) {
		s->key = key;
		s->bytes = bytes;
		s->jobs = 1;
		t->n++;
		*more = bytes;
		return 0;
	}
	s->jobs++;
	if (bytes > s->bytes) {
		*more = bytes - s->bytes;
		s->bytes = bytes;
	}
	return 0;
}

/* Whether home h lies in the cyclic range (i, j]: an entry there must stay after i. */
static int
stored_between(size_t h, size_t i, size_t j)
{
	return i <= j ? h > i && h <= j : h > i || h <= j;
}

uint64_t
stored_drop(struct stored *t, int64_t key)
{
	struct stored_share *s;
	uint64_t gone;
	size_t i, j;

	if (t->cap == 0 || (s = stored_slot(t, key))->key == 0 || --s->jobs > 0)
		return 0;
	gone = s->bytes;
	/* the hole is filled from behind, so that no probe stops short at it */
	i = j = (size_t)(s - t->slot);
	for (;;) {
		j = (j + 1) & (t->cap - 1);
		if (t->slot[j].key == 0)
			break;
		if (!stored_between(stored_home(t, t->slot[j].key), i, j)) {
			t->slot[i] = t->slot[j];
			i = j;
		}
	}
	t->slot[i].key = 0;
	t->n--;
	return gone;
}

void
stored_free(struct stored *t)
{
	free(t->slot);
	t->slot = NULL;
	t->cap = t->n = 0;
}
