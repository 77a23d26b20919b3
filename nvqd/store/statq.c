/*
 * statq.c: nvq stats read off the loop, one at a time, in order (see statq.h).
 */
#include <stdio.h>
#include <string.h>

#include "log.h"
#include "proto.h"
#include "statq.h"
#include "store.h"
#include "storework.h"

struct statq_item {
	struct server_conn	*conn;		/* NULL once it closed */
	uint32_t		uid;
	double			since;
	double			now;
	int			has_user;
	char			user[256];
};

static struct {
	uv_loop_t		*loop;
	struct storework	sw;
	struct statq_item	items[STATQ_MAX];	/* a ring: head, then n */
	int			head, n;
	struct proto_buf	reply;		/* the head's, being made while busy */
	int			stopping;
} Q;

void
statq_init(uv_loop_t *loop, const char *database)
{
	memset(&Q, 0, sizeof(Q));
	Q.loop = loop;
	storework_init(&Q.sw, database);
}

/* A row of nvq stats: "stat" (its kind), then its columns; REAL as "%.4f". */
static int
statq_row_cb(void *arg, const struct store_col *c, int n)
{
	struct proto_buf *out = arg;
	char buf[32];
	int i;

	for (i = 0; i < n; i++)
		if (c[i].type == STORE_INT)
			proto_put_int(out, c[i].name, c[i].i);
		else if (c[i].type == STORE_REAL) {
			snprintf(buf, sizeof(buf), "%.4f", c[i].r);
			proto_put_str(out, c[i].name, buf);
		} else if (c[i].type == STORE_TEXT)
			proto_put_str(out, c[i].name, c[i].s);
	return out->failed;
}

struct statq_kind {
	struct proto_buf	*out;
	const char		*kind;
};

static int
statq_kind_cb(void *arg, const struct store_col *c, int n)
{
	struct statq_kind *k = arg;

	proto_put_str(k->out, "stat", k->kind);
	return statq_row_cb(k->out, c, n);
}

/* On a thread of the pool (storework.h): the head's reply, its rows after "now". */
static int
statq_read_fn(struct store *rd, void *arg)
{
	static const char *const kinds[STORE_STATS_N] = { "user", "wait", "failure", "switch",
	    "name" };
	const struct statq_item *it = arg;
	struct statq_kind k = { &Q.reply, NULL };
	char buf[32];
	int i;

	proto_begin(&Q.reply, MSG_OK);
	snprintf(buf, sizeof(buf), "%.3f", it->now);
	proto_put_str(&Q.reply, "now", buf);
	for (i = 0; i < STORE_STATS_N; i++) {
		k.kind = kinds[i];
		if (store_stats(rd, i, it->since, it->has_user ? it->user : NULL, statq_kind_cb,
		    &k) == -1)
			return -1;
	}
	return 0;
}

static void	statq_next(void);

static void
statq_done_cb(struct storework *sw, void *arg, int failed)
{
	struct statq_item *it = arg;
	struct server_conn *conn = it->conn;

	(void)sw;
	Q.head = (Q.head + 1) % STATQ_MAX;
	Q.n--;
	if (Q.stopping) {
		proto_buf_free(&Q.reply);
		storework_close(&Q.sw);
		return;
	}
	if (conn == NULL)
		proto_buf_free(&Q.reply);
	else if (failed) {
		proto_buf_free(&Q.reply);
		server_push_error(conn, "the database could not be read (see nvqd's log)");
	} else if (Q.reply.failed || proto_end(&Q.reply) == -1) {
		proto_buf_free(&Q.reply);
		server_push_error(conn, "the statistics are too long for a reply");
	} else
		server_push(conn, &Q.reply);	/* its bytes are taken */
	memset(&Q.reply, 0, sizeof(Q.reply));
	statq_next();
}

/* The head's read, if none is under way; those whose client went are skipped. */
static void
statq_next(void)
{
	while (Q.n > 0 && !Q.sw.busy && !Q.stopping) {
		struct statq_item *it = &Q.items[Q.head];

		if (it->conn == NULL) {
			Q.head = (Q.head + 1) % STATQ_MAX;
			Q.n--;
			continue;
		}
		if (storework_run(Q.loop, &Q.sw, statq_read_fn, statq_done_cb, it) == 0)
			return;
		server_push_error(it->conn, "nvqd cannot read the statistics now (see its log)");
		log_warnx("stats: cannot queue a read on the thread pool");
		Q.head = (Q.head + 1) % STATQ_MAX;
		Q.n--;
	}
}

int
statq_add(struct server_conn *conn, uint32_t uid, double since, const char *user, double now,
    char *err, size_t errlen)
{
	struct statq_item *it;
	int i, mine = 0;

	if (user != NULL && strlen(user) >= sizeof(it->user)) {
		snprintf(err, errlen, "a user name is at most %zu bytes", sizeof(it->user) - 1);
		return -1;
	}
	for (i = 0; i < Q.n; i++)
		if (Q.items[(Q.head + i) % STATQ_MAX].uid == uid &&
		    Q.items[(Q.head + i) % STATQ_MAX].conn != NULL)
			mine++;
	if (Q.stopping || Q.n == STATQ_MAX || mine >= STATQ_MAX_UID) {
		snprintf(err, errlen, "nvqd is busy summing the history (%d request%s waiting%s); "
		    "try again later", Q.n, Q.n == 1 ? "" : "s",
		    mine >= STATQ_MAX_UID ? ", as many of yours as it takes" : "");
		return -1;
	}
	it = &Q.items[(Q.head + Q.n) % STATQ_MAX];
	memset(it, 0, sizeof(*it));
	it->conn = conn;
	it->uid = uid;
	it->since = since;
	it->now = now;
	if (user != NULL) {
		it->has_user = 1;
		snprintf(it->user, sizeof(it->user), "%s", user);
	}
	Q.n++;
	statq_next();
	return 0;
}

void
statq_forget(struct server_conn *conn)
{
	int i;

	for (i = 0; i < Q.n; i++)
		if (Q.items[(Q.head + i) % STATQ_MAX].conn == conn)
			Q.items[(Q.head + i) % STATQ_MAX].conn = NULL;
}

void
statq_stop(void)
{
	Q.stopping = 1;
	if (!Q.sw.busy) {
		Q.n = 0;
		storework_close(&Q.sw);
	}
}
