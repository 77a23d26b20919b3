/*
 * websum.c: the dashboard's sums on libuv's thread pool (see websum.h).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "store.h"
#include "websum.h"

void
websum_init(struct websum *w, const char *path)
{
	memset(w, 0, sizeof(*w));
	storework_init(&w->sw, path);
}

void
websum_result_free(struct websum_result *r)
{
	free(r->users);
	memset(r, 0, sizeof(*r));
}

void
websum_close(struct websum *w)
{
	storework_close(&w->sw);
}
static int
websum_user_cb(void *arg, const struct store_col *c, int n)
{
	struct websum_result *r = arg;
	struct websum_user *u;
	int i;

	if ((u = realloc(r->users, (size_t)(r->nusers + 1) * sizeof(*u))) == NULL)
		return 1;
	r->users = u;
	u = &r->users[r->nusers++];
	memset(u, 0, sizeof(*u));
	for (i = 0; i < n; i++)
		if (strcmp(c[i].name, "user") == 0 && c[i].s != NULL)
			snprintf(u->user, sizeof(u->user), "%s", c[i].s);
		else if (strcmp(c[i].name, "gpu_hours") == 0)
			u->gpu_hours = c[i].r;
	return 0;
}

static int
websum_wait_cb(void *arg, const struct store_col *c, int n)
{
	struct websum_result *r = arg;
	int i;

	for (i = 0; i < n && r->nwait < WEBSUM_WAIT; i++, r->nwait++) {
		snprintf(r->wait_key[r->nwait], sizeof(r->wait_key[r->nwait]), "%s", c[i].name);
		r->wait[r->nwait] = c[i].r;
	}
	return 0;
}

/* On a thread of the pool (storework.h): the sums into w->next. */
static int
websum_sums_fn(struct store *rd, void *arg)
{
	struct websum *w = arg;

	websum_result_free(&w->next);
	if (store_stats(rd, STORE_STATS_USERS, w->now - 7 * 86400, NULL, websum_user_cb,
	    &w->next) == -1 || store_stats(rd, STORE_STATS_WAIT, w->now - 86400, NULL,
	    websum_wait_cb, &w->next) == -1)
		return -1;
	return 0;
}

static void
websum_done_cb(struct storework *sw, void *arg, int failed)
{
	struct websum *w = arg;
	struct websum_result r = w->next;

	(void)sw;
	memset(&w->next, 0, sizeof(w->next));
	w->busy = 0;
	if (failed) {
		websum_result_free(&r);
		w->cb(w, NULL, 1);
	} else
		w->cb(w, &r, 0);
}

int
websum_run(uv_loop_t *loop, struct websum *w, double now, websum_cb cb)
{
	if (w->busy)
		return -1;
	w->now = now;
	w->cb = cb;
	if (storework_run(loop, &w->sw, websum_sums_fn, websum_done_cb, w) != 0)
		return -1;
	w->busy = 1;
	return 0;
}
