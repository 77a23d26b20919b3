/*
 * websum.c: the dashboard's sums on libuv's thread pool (see websum.h).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "log.h"
#include "store.h"
#include "websum.h"

void
websum_init(struct websum *w, const char *path)
{
	memset(w, 0, sizeof(*w));
	snprintf(w->path, sizeof(w->path), "%s", path);
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
	store_close(w->rd);
	w->rd = NULL;
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

/* On a thread of the pool: the sums into w->next. */
static void
websum_work_cb(uv_work_t *req)
{
	struct websum *w = req->data;
	char err[256];

	websum_result_free(&w->next);
	w->failed = 1;
	if (w->rd == NULL && (w->rd = store_open_reader(w->path, err, sizeof(err))) == NULL) {
		log_warnx("web: %s", err);
		return;
	}
	if (store_stats(w->rd, STORE_STATS_USERS, w->now - 7 * 86400, NULL, websum_user_cb,
	    &w->next) == -1 || store_stats(w->rd, STORE_STATS_WAIT, w->now - 86400, NULL,
	    websum_wait_cb, &w->next) == -1)
		return;
	w->failed = 0;
}

static void
websum_done_cb(uv_work_t *req, int status)
{
	struct websum *w = req->data;
	struct websum_result r = w->next;

	memset(&w->next, 0, sizeof(w->next));
	w->busy = 0;
	if (status != 0 || w->failed) {
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
	w->work.data = w;
	if (uv_queue_work(loop, &w->work, websum_work_cb, websum_done_cb) != 0)
		return -1;
	w->busy = 1;
	return 0;
}
