/*
 * storework.c: a read of the database on libuv's thread pool (see storework.h).
 */
#include <stdio.h>
#include <string.h>

#include "log.h"
#include "storework.h"

void
storework_init(struct storework *w, const char *path)
{
	memset(w, 0, sizeof(*w));
	snprintf(w->path, sizeof(w->path), "%s", path);
}

void
storework_close(struct storework *w)
{
	store_close(w->rd);
	w->rd = NULL;
}

/* On a thread of the pool: the connection if need be, then the read. */
static void
storework_work_cb(uv_work_t *req)
{
	struct storework *w = req->data;
	char err[256];

	w->failed = 1;
	if (w->rd == NULL && (w->rd = store_open_reader(w->path, err, sizeof(err))) == NULL) {
		log_warnx("%s", err);
		return;
	}
	w->failed = w->fn(w->rd, w->arg) == -1;
}

static void
storework_done_cb(uv_work_t *req, int status)
{
	struct storework *w = req->data;

	w->busy = 0;
	w->cb(w, w->arg, status != 0 || w->failed);
}

int
storework_run(uv_loop_t *loop, struct storework *w, storework_fn fn, storework_cb cb,
    void *arg)
{
	if (w->busy)
		return -1;
	w->fn = fn;
	w->cb = cb;
	w->arg = arg;
	w->work.data = w;
	if (uv_queue_work(loop, &w->work, storework_work_cb, storework_done_cb) != 0)
		return -1;
	w->busy = 1;
	return 0;
}
