/*
 * budget.c: per-device counters and an open-addressing table of live
 * allocations (see budget.h).
 */
#include <stdlib.h>
#include <string.h>

#include "budget.h"

void
budget_init(struct budget *b, uint64_t limit)
{
	memset(b, 0, sizeof(*b));
	b->limit = limit;
}

void
budget_free(struct budget *b)
{
	free(b->table);
	b->table = NULL;
	b->cap = b->count = b->tombs = 0;
}

static int
budget_dev_ok(int dev)
{
	return dev >= 0 && dev < BUDGET_MAX_DEV;
}

int
budget_reserve(struct budget *b, int dev, uint64_t size)
{
	if (!budget_dev_ok(dev))
		dev = 0;
	if (size > budget_left(b, dev))
		return -1;
	b->used[dev] += size;
	if (b->used[dev] > b->peak[dev])
		b->peak[dev] = b->used[dev];
	return 0;
}

void
budget_unreserve(struct budget *b, int dev, uint64_t size)
{
	if (!budget_dev_ok(dev))
		dev = 0;
	b->used[dev] = b->used[dev] >= size ? b->used[dev] - size : 0;
}

static uint64_t
budget_hash(int kind, uint64_t key)
{
	uint64_t h = key ^ ((uint64_t)kind << 59);

	h ^= h >> 33;
	h *= 0xff51afd7ed558ccdULL;
	h ^= h >> 33;
	return h;
}

static int
budget_grow(struct budget *b)
{
	struct budget_entry *old = b->table, *e;
	uint64_t oldcap = b->cap, i, h;

	b->cap = oldcap ? oldcap * 2 : 1024;
	if ((b->table = calloc(b->cap, sizeof(*b->table))) == NULL) {
		b->table = old;
		b->cap = oldcap;
		return -1;
	}
	b->count = b->tombs = 0;
	for (i = 0; i < oldcap; i++) {
		if (old[i].kind <= 0)
			continue;
		for (h = budget_hash(old[i].kind, old[i].key) & (b->cap - 1);; h = (h + 1) & (b->cap - 1)) {
			e = &b->table[h];
			if (e->kind == 0) {
				*e = old[i];
				b->count++;
				break;
			}
		}
	}
	free(old);
	return 0;
}

int
budget_commit(struct budget *b, int kind, uint64_t key, int dev, uint64_t size)
{
	struct budget_entry *e;
	uint64_t h;

	if (!budget_dev_ok(dev))
		dev = 0;
	if ((b->count + b->tombs + 1) * 2 > b->cap && budget_grow(b) == -1)
		return -1;
	for (h = budget_hash(kind, key) & (b->cap - 1);; h = (h + 1) & (b->cap - 1)) {
		e = &b->table[h];
		if (e->kind > 0 && (e->kind != kind || e->key != key))
			continue;
		if (e->kind == -1)
			b->tombs--;
		if (e->kind <= 0)
			b->count++;
		else
			budget_unreserve(b, e->dev, e->size);	/* the same key again */
		if (e->kind > 0 && e->exported)
			b->exported -= e->size;
		e->exported = 0;
		e->kind = kind;
		e->key = key;
		e->dev = dev;
		e->size = size;
		return 0;
	}
}

int
budget_release(struct budget *b, int kind, uint64_t key)
{
	int dev;
	uint64_t size;

	return budget_take(b, kind, key, &dev, &size);
}

/* The live entry of (kind, key), or NULL. */
static struct budget_entry *
budget_find(struct budget *b, int kind, uint64_t key)
{
	struct budget_entry *e;
	uint64_t h;

	if (b->cap == 0)
		return NULL;
	for (h = budget_hash(kind, key) & (b->cap - 1);; h = (h + 1) & (b->cap - 1)) {
		e = &b->table[h];
		if (e->kind == 0)
			return NULL;
		if (e->kind == kind && e->key == key)
			return e;
	}
}

int
budget_take(struct budget *b, int kind, uint64_t key, int *dev, uint64_t *size)
{
	struct budget_entry *e = budget_find(b, kind, key);

	if (e == NULL)
		return -1;
	budget_unreserve(b, e->dev, e->size);
	*dev = e->dev;
	*size = e->size;
	if (e->exported)
		b->exported -= e->size;
	e->exported = 0;
	e->kind = -1;
	b->count--;
	b->tombs++;
	return 0;
}

int
budget_exported(struct budget *b, int kind, uint64_t key)
{
	struct budget_entry *e = budget_find(b, kind, key);

	if (e == NULL)
		return -1;
	if (!e->exported)
		b->exported += e->size;
	e->exported = 1;
	return 0;
}

uint64_t
budget_left(const struct budget *b, int dev)
{
	uint64_t lim;

	if (!budget_dev_ok(dev))
		dev = 0;
	lim = b->limit;
	if (b->ceiling[dev] > 0 && (lim == 0 || b->ceiling[dev] < lim))
		lim = b->ceiling[dev];
	if (lim == 0)
		return UINT64_MAX;
	return b->used[dev] >= lim ? 0 : lim - b->used[dev];
}
