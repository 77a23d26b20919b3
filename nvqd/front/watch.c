/*
 * watch.c: clients that follow the queue as it changes (see watch.h).
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#include "proto.h"
#include "server.h"
#include "watch.h"

struct watcher {
	struct server_conn	*conn;
	unsigned		uid;
};

static struct {
	uv_timer_t	timer;
	int		ready, armed;
	struct watcher	w[WATCH_MAX];
	int		n;
	int64_t		seq;
	uint64_t	pushed;	/* uv_now of the last push, or 0 */
} W;

static void
watch_push_cb(uv_timer_t *t)
{
	struct proto_buf b = { 0 };
	int i;

	W.armed = 0;
	W.pushed = uv_now(t->loop);
	W.seq++;
	/* backwards: a watcher that reads nothing is dropped from the list in the push */
	for (i = W.n - 1; i >= 0; i--) {
		proto_begin(&b, MSG_CHANGED);
		proto_put_int(&b, "seq", W.seq);
		if (proto_end(&b) == -1) {
			proto_buf_free(&b);
			return;
		}
		server_push(W.w[i].conn, &b);
	}
}

static void
watch_closed(void *arg, struct server_conn *conn)
{
	int i;

	(void)arg;
	for (i = 0; i < W.n; i++)
		if (W.w[i].conn == conn) {
			W.w[i] = W.w[--W.n];
			return;
		}
}

/* A watcher sends nothing; what it sends anyway ends it. */
static int
watch_frame(void *arg, struct server_conn *conn, const struct server_peer *p,
    const struct proto_msg *m, struct proto_buf *out, char *err, size_t errlen)
{
	(void)arg; (void)conn; (void)p; (void)m; (void)out;
	snprintf(err, errlen, "a watcher sends nothing");
	return SERVER_ERROR_CLOSE;
}

static const struct server_handler watch_handler = {
	.frame = watch_frame, .closed = watch_closed, .lasting = 1
};

void
watch_init(uv_loop_t *loop)
{
	uv_timer_init(loop, &W.timer);
	W.ready = 1;
}

int
watch_add(struct server_conn *conn, unsigned uid, int yield)
{
	int i, mine = 0;

	for (i = 0; i < W.n; i++)
		mine += W.w[i].uid == uid;
	if (W.n == WATCH_MAX || mine >= WATCH_MAX_UID)
		return -1;
	if (yield && (W.n >= WATCH_YIELD_MAX || mine >= WATCH_YIELD_MAX_UID))
		return -1;
	W.w[W.n].conn = conn;
	W.w[W.n].uid = uid;
	W.n++;
	server_handoff(conn, &watch_handler, NULL);
	return 0;
}

/*
 * At once after a quiet WATCH_MS (a job's end reaches nvq wait without a
 * wait), else WATCH_MS after the last push: never more than one a WATCH_MS.
 */
void
watch_changed(void *unused)
{
	uint64_t now, due;

	(void)unused;
	if (!W.ready || W.armed || W.n == 0)
		return;
	W.armed = 1;
	now = uv_now(W.timer.loop);
	due = W.pushed == 0 ? now : W.pushed + WATCH_MS;
	uv_timer_start(&W.timer, watch_push_cb, due > now ? due - now : 0, 0);
}

void
watch_stop(void)
{
	if (W.ready) {
		W.ready = 0;
		uv_close((uv_handle_t *)&W.timer, NULL);
	}
}
