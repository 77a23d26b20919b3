/*
 * fairshare.c: users' decayed GPU use and their fair-share priority (see
 * fairshare.h).  Functions return 0 or -1 (out of memory).
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "fairshare.h"

/* An inactive user whose usage fell below this many GPU-seconds is forgotten. */
#define FS_FORGET	1.0

void
fairshare_init(struct fairshare *f, double now)
{
	memset(f, 0, sizeof(*f));
	f->at = now;
}

void
fairshare_free(struct fairshare *f)
{
	free(f->u);
	memset(f, 0, sizeof(*f));
}

/* uid's index, or where it would go (*found 0). */
static int
fairshare_index(const struct fairshare *f, uint32_t uid, int *found)
{
	int lo = 0, hi = f->n, mid;

	while (lo < hi) {
		mid = lo + (hi - lo) / 2;
		if (f->u[mid].uid < uid)
			lo = mid + 1;
		else
			hi = mid;
	}
	*found = lo < f->n && f->u[lo].uid == uid;
	return lo;
}

/* uid's entry, made if new; NULL out of memory. */
static struct fs_user *
fairshare_get(struct fairshare *f, uint32_t uid)
{
	struct fs_user *nu;
	int found, i = fairshare_index(f, uid, &found);

	if (found)
		return &f->u[i];
	if (f->n == f->cap) {
		if ((nu = realloc(f->u, (size_t)(f->cap ? f->cap * 2 : 16) * sizeof(*nu))) == NULL)
			return NULL;
		f->u = nu;
		f->cap = f->cap ? f->cap * 2 : 16;
	}
	memmove(&f->u[i + 1], &f->u[i], (size_t)(f->n - i) * sizeof(*f->u));
	memset(&f->u[i], 0, sizeof(f->u[i]));
	f->u[i].uid = uid;
	f->n++;
	return &f->u[i];
}

const struct fs_user *
fairshare_find(const struct fairshare *f, uint32_t uid)
{
	int found, i = fairshare_index(f, uid, &found);

	return found ? &f->u[i] : NULL;
}

double
fairshare_bonus(const struct fairshare *f, uint32_t uid)
{
	const struct fs_user *u = fairshare_find(f, uid);

	return u != NULL && u->active ? u->bonus : 0;
}

/* 2^(-d/h): what a GPU-second counts d seconds later. */
static double
fairshare_decay(double d, double halflife)
{
	if (d <= 0)
		return 1;
	return exp2(-d / halflife);
}

int
fairshare_add(struct fairshare *f, uint32_t uid, double gpus, double start, double end,
    double halflife)
{
	struct fs_user *u;

	if (end > f->at)
		end = f->at;
	if (start > end)
		start = end;
	if (gpus <= 0 || end <= start || halflife <= 0)
		return 0;
	if ((u = fairshare_get(f, uid)) == NULL)
		return -1;
	/* the integral of gpus 2^(-(at - t)/h) dt from start to end */
	u->usage += gpus * halflife / M_LN2 *
	    (fairshare_decay(f->at - end, halflife) - fairshare_decay(f->at - start, halflife));
	return 0;
}

void
fairshare_advance(struct fairshare *f, double now, double halflife)
{
	double d = now - f->at, k;
	int i;

	if (d <= 0 || halflife <= 0)
		return;
	k = fairshare_decay(d, halflife);
	for (i = 0; i < f->n; i++)
		f->u[i].usage = f->u[i].usage * k + f->u[i].rate * halflife / M_LN2 * (1 - k);
	f->at = now;
}

void
fairshare_begin(struct fairshare *f)
{
	int i;

	for (i = 0; i < f->n; i++) {
		f->u[i].rate = 0;
		f->u[i].active = 0;
	}
}

int
fairshare_use(struct fairshare *f, uint32_t uid, double gpus)
{
	struct fs_user *u;

	if ((u = fairshare_get(f, uid)) == NULL)
		return -1;
	u->active = 1;
	if (gpus > 0)
		u->rate += gpus;
	return 0;
}

void
fairshare_rank(struct fairshare *f, double weight)
{
	double total = 0;
	int i, k, n = 0;

	for (i = 0, k = 0; i < f->n; i++) {
		if (!f->u[i].active && f->u[i].rate == 0 && f->u[i].usage < FS_FORGET)
			continue;
		f->u[k++] = f->u[i];
	}
	f->n = k;
	for (i = 0; i < f->n; i++)
		if (f->u[i].active) {
			total += f->u[i].usage;
			n++;
		}
	f->nactive = n;
	for (i = 0; i < f->n; i++) {
		f->u[i].frac = f->u[i].active && total > 0 ? f->u[i].usage / total : 0;
		f->u[i].bonus = f->u[i].active ? weight * exp2(-f->u[i].frac * n) : 0;
	}
}
