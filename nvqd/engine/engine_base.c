/*
 * engine_base.c: what every room of the engine uses (engine_rooms.h): the
 * clock, a job found by id, the spool's paths, the kick that asks for a
 * scheduling pass in this loop turn (its callback, engine.c's, set by
 * engine_init: the pass is never called from here), and the close callback
 * that frees a job once its last libuv handle is closed.  It calls no
 * other room.
 */
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include "engine_rooms.h"

double
engine_now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_REALTIME, &ts);
	return (double)ts.tv_sec + ts.tv_nsec / 1e9;
}

void
engine_user_dir(struct engine *e, uint32_t uid, char *buf, size_t len)
{
	snprintf(buf, len, "%s/%u", e->cfg.spool, (unsigned)uid);
}

void
engine_status_path(struct engine *e, int64_t id, char *buf, size_t len)
{
	snprintf(buf, len, "%s/.status/%lld", e->cfg.spool, (long long)id);
}

struct job *
engine_find(struct engine *e, int64_t id)
{
	return jobtab_find(&e->jobtab, id);
}

void
engine_handle_closed_cb(uv_handle_t *h)
{
	struct job *j = h->data;

	free(h);
	if (--j->handles == 0 && j->gone)
		free(j);
}

void
engine_kick(struct engine *e)
{
	if (e->on_change != NULL)
		e->on_change(NULL);
	if (e->stopping || e->kicked)
		return;
	e->kicked = 1;
	uv_idle_start(&e->kick, e->kick_cb);
}
