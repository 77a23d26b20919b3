/*
 * web.c: the dashboard and /metrics (see web.h).
 */
#include <arpa/inet.h>
#include <cjson/cJSON.h>
#include <microhttpd.h>
#include <netinet/in.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>

#include "energy.h"
#include "engine.h"
#include "esc.h"
#include "gpuctl.h"
#include "lcbe.h"
#include "log.h"
#include "parse.h"
#include "store.h"
#include "web.h"
#include "webmetrics.h"
#include "webrate.h"
#include "websum.h"

#define WEB_SAMPLE_MS	5000
#define WEB_SAMPLES	720		/* an hour of them */
#define WEB_PENDING	100		/* pending jobs in /api/state */
#define WEB_HISTORY_MS	30000		/* /api/history's sums: at most this often */
#define WEB_CONNS	128		/* connections in all ([web] per_address each) */

/* The embedded files (web/gen.sh) */
struct web_file {
	const char	*path, *type, *data;
};
extern const struct web_file web_files[];

/*
 * A connection from its accept to its close, for [web] timeout on a
 * request's head: MHD's own timeout counts idle time only, which a client
 * sending a byte now and then never reaches.
 */
struct web_conn {
	struct web_conn		*next, *prev;
	struct MHD_Connection	*c;
	uint64_t		since;		/* uv_now: accepted, or its last answer sent */
	int			headed;		/* its request's head came: the handler ran */
	int			cut;		/* shut down by web_sweep_cb */
};

/* What was sampled every WEB_SAMPLE_MS */
struct web_sample {
	double		t;
	int		pending, running, suspended;
	uint64_t	demanded[SCHED_MAX_GPUS], used[SCHED_MAX_GPUS], outside[SCHED_MAX_GPUS];
};

static struct {
	struct engine		*e;
	struct MHD_Daemon	*d;
	uv_poll_t		poll;
	uv_timer_t		timer, sampler, sweep;
	int			on;
	struct web_conn		*conns;
	struct web_sample	*ring;
	int			head, n;
	struct webrate		rate;		/* /metrics and /api/ per address */
	/*
	 * /api/history's GPU-hours per user and queue waits (websum.h): the
	 * last computed, asked for again at most every WEB_HISTORY_MS whatever
	 * the number of clients; the requests that came before the first one
	 * wait for it, suspended
	 */
	struct websum		sum;
	struct websum_result	sums;
	int			sums_ok;	/* sums holds a result */
	uint64_t		sums_at;	/* uv_now when the last was asked for */
	struct MHD_Connection	*waiting[WEB_CONNS];
	int			nwaiting;
} W;

/* Who asks: 1 with *uid for a known token, 0 for none, -1 for a wrong one. */
static int
web_viewer(struct MHD_Connection *c, uint32_t *uid)
{
	const char *t = MHD_lookup_connection_value(c, MHD_GET_ARGUMENT_KIND, "token");
	int r;

	if (t == NULL || *t == '\0')
		return 0;
	r = store_web_uid(W.e->store, t, uid);
	return r == 1 ? 1 : -1;
}

static enum MHD_Result
web_send(struct MHD_Connection *c, unsigned status, const char *type, const char *body,
    size_t len)
{
	struct MHD_Response *r = MHD_create_response_from_buffer(len, (void *)body,
	    MHD_RESPMEM_MUST_COPY);
	enum MHD_Result ret;

	if (r == NULL)
		return MHD_NO;
	MHD_add_response_header(r, "Content-Type", type);
	MHD_add_response_header(r, "Cache-Control", "no-store");
	MHD_add_response_header(r, "X-Content-Type-Options", "nosniff");
	/* the token is in the page's address: never sent on */
	MHD_add_response_header(r, "Referrer-Policy", "no-referrer");
	MHD_add_response_header(r, "Content-Security-Policy", "default-src 'self'; "
	    "img-src 'self' data:; frame-ancestors 'none'");
	ret = MHD_queue_response(c, status, r);
	MHD_destroy_response(r);
	return ret;
}

/* A line of plain text, an error's or a refusal's. */
static enum MHD_Result
web_plain(struct MHD_Connection *c, unsigned status, const char *msg)
{
	return web_send(c, status, "text/plain; charset=utf-8", msg, strlen(msg));
}

static enum MHD_Result
web_json(struct MHD_Connection *c, cJSON *j)
{
	char *s = cJSON_PrintUnformatted(j);
	enum MHD_Result r;

	cJSON_Delete(j);
	if (s == NULL)
		return web_plain(c, 500, "out of memory\n");
	r = web_send(c, 200, "application/json", s, strlen(s));
	free(s);
	return r;
}

/*
 * Users' text (names, commands, reasons) as the dashboard shows it: escaped
 * as nvq's tables escape it (esc.h), so that no control, bidi override or
 * byte that is not UTF-8 reaches the page, which inserts it as text.
 */
static void
web_add_text(cJSON *o, const char *key, const char *s)
{
	char small[512], *b = small;
	size_t need;

	s = s != NULL ? s : "";
	need = ESC_TERM_MAX(strlen(s));
	if (need > sizeof(small) && (b = malloc(need)) == NULL) {
		cJSON_AddStringToObject(o, key, "?");
		return;
	}
	esc_term(b, s, 0);	/* the page is UTF-8 */
	cJSON_AddStringToObject(o, key, b);
	if (b != small)
		free(b);
}

/* The rows of one state into an array: what the viewer may see of each. */
struct web_jobs {
	cJSON		*arr;
	int		viewer;		/* 1: uid is known */
	uint32_t	uid;
	int		left;		/* rows still wanted */
};

static int
web_job_cb(void *arg, const struct store_col *c, int n)
{
	struct web_jobs *x = arg;
	cJSON *o = cJSON_CreateObject();
	const char *name = NULL, *cmd = NULL, *user = NULL;
	int64_t id = 0, uid = -1;
	struct job *j;
	char why[256];
	double joules;
	int i, how;

	if (o == NULL)
		return 1;
	for (i = 0; i < n; i++) {
		const char *k = c[i].name;

		if (strcmp(k, "id") == 0)
			id = c[i].i;
		else if (strcmp(k, "uid") == 0)
			uid = c[i].i;
		else if (strcmp(k, "user") == 0)
			user = c[i].s;
		else if (strcmp(k, "name") == 0)
			name = c[i].s;
		else if (strcmp(k, "command") == 0)
			cmd = c[i].s;
		else if (strcmp(k, "state") == 0)
			cJSON_AddStringToObject(o, "state", c[i].s ? c[i].s : "");
		else if (strcmp(k, "gpus") == 0 || strcmp(k, "mem_per_gpu") == 0 ||
		    strcmp(k, "priority") == 0 || strcmp(k, "cpus") == 0 ||
		    strcmp(k, "host_mem") == 0)
			cJSON_AddNumberToObject(o, k, c[i].type == STORE_INT ? (double)c[i].i : 0);
		else if (strcmp(k, "submitted_at") == 0 || strcmp(k, "started_at") == 0)
			cJSON_AddNumberToObject(o, k, c[i].type == STORE_REAL ? c[i].r : 0);
	}
	cJSON_AddNumberToObject(o, "id", (double)id);
	/* names for those with a token; a job's own words for its owner (and root) */
	if (x->viewer && user != NULL)
		web_add_text(o, "user", user);
	if (x->viewer && (x->uid == 0 || (int64_t)x->uid == uid)) {
		web_add_text(o, "name", name);
		web_add_text(o, "command", cmd);
	}
	if ((j = engine_find(W.e, id)) != NULL) {
		if (j->state == JOB_PENDING) {
			engine_reason(W.e, j, why, sizeof(why));
			web_add_text(o, "reason", why);
		}
		if (j->state == JOB_RUNNING && j->gpu_used != NULL)
			cJSON_AddNumberToObject(o, "used", (double)engine_job_used(W.e, j));
		/* its GPUs' energy so far: joules, and how measured (none where unknown) */
		if (engine_job_energy(W.e, j, &joules, &how) == 0) {
			if (how != ENERGY_UNKNOWN)
				cJSON_AddNumberToObject(o, "energy", joules);
			cJSON_AddStringToObject(o, "energy_how", energy_how_name(how));
		}
	}
	cJSON_AddItemToArray(x->arr, o);
	return --x->left <= 0;
}

/* The active states' counts (store_state_counts) into int64_t[3]: RUNNING, SUSPENDED, PENDING. */
static int
web_state_count_cb(void *arg, const struct store_col *c, int n)
{
	static const char *const states[] = { "RUNNING", "SUSPENDED", "PENDING" };
	int64_t *count = arg;
	int k;

	for (k = 0; n >= 2 && c[0].s != NULL && k < 3; k++)
		if (strcmp(c[0].s, states[k]) == 0)
			count[k] = c[1].i;
	return 0;
}

/* The host's pool ([resources]): its CPUs and memory, and what the running jobs hold. */
static void
web_host(const struct engine *e, cJSON *root)
{
	cJSON *h = cJSON_AddObjectToObject(root, "host");
	long long cpus;
	uint64_t mem;

	if (h == NULL)
		return;
	engine_host_used(e, &cpus, &mem);
	cJSON_AddNumberToObject(h, "cpus", e->cfg.sched.cpus);
	cJSON_AddNumberToObject(h, "cpus_used", (double)cpus);
	cJSON_AddNumberToObject(h, "memory", (double)e->cfg.sched.host_mem);
	cJSON_AddNumberToObject(h, "memory_used", (double)mem);
}

static enum MHD_Result
web_state(struct MHD_Connection *c, int viewer, uint32_t uid)
{
	static const char *const states[] = { "RUNNING", "SUSPENDED", "PENDING" };
	struct engine *e = W.e;
	cJSON *root = cJSON_CreateObject(), *gpus, *jobs, *counts, *g, *ids, *lcj;
	struct web_jobs x = { NULL, viewer, uid, 0 };
	struct store_filter f;
	char idbuf[1024], lcbuf[1024], *tok, *save;
	int64_t count[3] = { 0, 0, 0 }, *held = NULL;
	int i, k, m, n;
	struct job *j;

	if (root == NULL)
		return web_plain(c, 500, "out of memory\n");
	cJSON_AddNumberToObject(root, "now", engine_now());
	if (viewer) {
		char name[24];

		snprintf(name, sizeof(name), "%u", uid);
		cJSON_AddStringToObject(root, "viewer_uid", name);
	}
	web_host(e, root);
	gpus = cJSON_AddArrayToObject(root, "gpus");
	for (i = 0; i < e->gpus.n; i++) {
		const struct gpu *gp = &e->gpus.gpus[i];

		g = cJSON_CreateObject();
		cJSON_AddNumberToObject(g, "index", gp->index);
		web_add_text(g, "uuid", gp->uuid);
		web_add_text(g, "name", gp->name);
		cJSON_AddStringToObject(g, "mode", config_mode(&e->cfg, i) == SCHED_SERIAL ? "serial" :
		    config_mode(&e->cfg, i) == SCHED_TIMESLICE ? "timeslice" : "auto");
		cJSON_AddNumberToObject(g, "total", (double)gp->total);
		cJSON_AddNumberToObject(g, "budget", (double)engine_budget(e, i));
		cJSON_AddNumberToObject(g, "demanded", (double)engine_demanded(e, i, idbuf,
		    sizeof(idbuf)));
		cJSON_AddNumberToObject(g, "used", (double)engine_queue_used(e, i));
		cJSON_AddNumberToObject(g, "outside", (double)gp->outside);
		cJSON_AddBoolToObject(g, "drained", (e->drained >> i) & 1);
		if (config_compute(&e->cfg, i) == COMPUTE_TIMESLICE)
			cJSON_AddNumberToObject(g, "lock_holder", (double)gpuctl_holder(e, i));
		/* latency-critical jobs among them (gpu/lcbe.c), and whether one is at work */
		cJSON_AddBoolToObject(g, "lc_busy", lcbe_gpu(e, i, idbuf, lcbuf, sizeof(lcbuf)));
		lcj = cJSON_AddArrayToObject(g, "lc_jobs");
		for (tok = strtok_r(lcbuf, ",", &save); tok; tok = strtok_r(NULL, ",", &save))
			cJSON_AddItemToArray(lcj, cJSON_CreateNumber(strtod(tok, NULL)));
		ids = cJSON_AddArrayToObject(g, "jobs");
		for (tok = strtok_r(idbuf, ",", &save); tok; tok = strtok_r(NULL, ",", &save))
			cJSON_AddItemToArray(ids, cJSON_CreateNumber(strtod(tok, NULL)));
		cJSON_AddItemToArray(gpus, g);
	}
	/* what the store's triggers counted, and the rows shown: none of the history */
	if (store_state_counts(e->store, web_state_count_cb, count) == -1)
		goto fail;
	counts = cJSON_AddObjectToObject(root, "counts");
	for (k = 0; k < 3; k++)
		cJSON_AddNumberToObject(counts, states[k], (double)count[k]);
	jobs = cJSON_AddArrayToObject(root, "jobs");
	x.arr = jobs;
	/* the running and the suspended: those nvqd holds, each found by id, in order */
	for (n = 0, j = e->held; j != NULL; j = j->lnext)
		n++;
	if (n > 0 && (held = malloc((size_t)n * sizeof(*held))) == NULL)
		goto fail;
	for (k = 0; k < 2; k++) {
		for (i = 0, j = e->held; j != NULL; j = j->lnext)
			if (j->state == (k == 0 ? JOB_RUNNING : JOB_SUSPENDED))
				held[i++] = j->id;
		if (i > 1)
			qsort(held, (size_t)i, sizeof(*held), parse_cmp_i64);
		for (m = 0; m < i; m++) {
			memset(&f, 0, sizeof(f));
			f.id = held[m];
			x.left = 1;
			if (store_jobs(e->store, &f, web_job_cb, &x) == -1)
				goto fail;
		}
	}
	free(held);
	held = NULL;
	/* the first pending ones, through the active jobs' index */
	memset(&f, 0, sizeof(f));
	f.state = states[2];
	x.left = WEB_PENDING;
	if (store_jobs(e->store, &f, web_job_cb, &x) == -1)
		goto fail;
	return web_json(c, root);
fail:
	free(held);
	cJSON_Delete(root);
	return web_plain(c, 500, "the database could not be read\n");
}

static void	web_run(void);

/* The sums came (websum.h): kept, and the requests waiting for them go on. */
static void
web_sums_cb(struct websum *w, struct websum_result *r, int failed)
{
	int i;

	if (!W.on) {
		if (r != NULL)
			websum_result_free(r);
		websum_close(w);
		return;
	}
	if (!failed) {
		websum_result_free(&W.sums);
		W.sums = *r;
		W.sums_ok = 1;
	}
	for (i = 0; i < W.nwaiting; i++)
		MHD_resume_connection(W.waiting[i]);
	W.nwaiting = 0;
	web_run();
}

/* Asks for the sums again if the last are WEB_HISTORY_MS old (or there are none). */
static void
web_sums_kick(void)
{
	uint64_t now = uv_now(W.e->loop);

	if (W.sum.busy || (W.sums_at != 0 && now - W.sums_at < WEB_HISTORY_MS))
		return;
	if (websum_run(W.e->loop, &W.sum, engine_now(), web_sums_cb) == 0)
		W.sums_at = now;
}

/* The sums as the viewer sees them: user names only with a token. */
static void
web_sums_json(cJSON *root, int viewer)
{
	cJSON *arr = cJSON_AddArrayToObject(root, "gpu_hours"), *o;
	cJSON *wait = cJSON_AddObjectToObject(root, "wait");
	int i;

	for (i = 0; arr != NULL && i < W.sums.nusers; i++) {
		if ((o = cJSON_CreateObject()) == NULL)
			break;
		web_add_text(o, "user", viewer ? W.sums.users[i].user : "(a user)");
		cJSON_AddNumberToObject(o, "gpu_hours", W.sums.users[i].gpu_hours);
		cJSON_AddItemToArray(arr, o);
	}
	for (i = 0; wait != NULL && i < W.sums.nwait; i++)
		cJSON_AddNumberToObject(wait, W.sums.wait_key[i], W.sums.wait[i]);
}

static enum MHD_Result
web_history(struct MHD_Connection *c, int viewer, void **con_cls)
{
	cJSON *root, *arr, *s, *g;
	int i, gi;

	web_sums_kick();
	/* none, and none coming: the last failed (asked again WEB_HISTORY_MS on) */
	if (!W.sums_ok && !W.sum.busy)
		return web_plain(c, 500, "the database could not be read\n");
	if (!W.sums_ok) {
		/* none yet: this request waits for the first (resumed by web_sums_cb) */
		if (W.nwaiting == WEB_CONNS)
			return web_plain(c, 503, "busy; try again\n");
		W.waiting[W.nwaiting++] = c;
		*con_cls = &W;
		MHD_suspend_connection(c);
		return MHD_YES;
	}
	if ((root = cJSON_CreateObject()) == NULL)
		return web_plain(c, 500, "out of memory\n");
	cJSON_AddNumberToObject(root, "interval", WEB_SAMPLE_MS / 1000.0);
	arr = cJSON_AddArrayToObject(root, "samples");
	for (i = 0; i < W.n; i++) {
		const struct web_sample *p = &W.ring[(W.head - W.n + i + WEB_SAMPLES) % WEB_SAMPLES];

		s = cJSON_CreateObject();
		cJSON_AddNumberToObject(s, "t", p->t);
		cJSON_AddNumberToObject(s, "pending", p->pending);
		cJSON_AddNumberToObject(s, "running", p->running);
		cJSON_AddNumberToObject(s, "suspended", p->suspended);
		g = cJSON_AddArrayToObject(s, "gpus");
		for (gi = 0; gi < W.e->gpus.n; gi++) {
			cJSON *v = cJSON_CreateArray();

			cJSON_AddItemToArray(v, cJSON_CreateNumber((double)p->demanded[gi]));
			cJSON_AddItemToArray(v, cJSON_CreateNumber((double)p->used[gi]));
			cJSON_AddItemToArray(v, cJSON_CreateNumber((double)p->outside[gi]));
			cJSON_AddItemToArray(g, v);
		}
		cJSON_AddItemToArray(arr, s);
	}
	web_sums_json(root, viewer);
	return web_json(c, root);
}

static enum MHD_Result
web_metrics(struct MHD_Connection *c)
{
	enum MHD_Result r;
	size_t len;
	char *t;

	if ((t = webmetrics_render(W.e, &len)) == NULL)
		return web_plain(c, 500, "the database could not be read\n");
	r = web_send(c, 200, "text/plain; version=0.0.4; charset=utf-8", t, len);
	free(t);
	return r;
}

/* 1 if the client's address may ask for something computed now, 0 if it asks too often. */
static int
web_rate(struct MHD_Connection *c)
{
	const union MHD_ConnectionInfo *ci = MHD_get_connection_info(c,
	    MHD_CONNECTION_INFO_CLIENT_ADDRESS);
	const struct sockaddr_in *sa;

	if (ci == NULL || ci->client_addr == NULL || ci->client_addr->sa_family != AF_INET)
		return 1;
	sa = (const struct sockaddr_in *)(const void *)ci->client_addr;
	W.rate.rate = W.e->cfg.web_rate;	/* a reload may change it */
	return webrate_take(&W.rate, sa->sin_addr.s_addr, (double)uv_now(W.e->loop) / 1000);
}

static struct web_conn *
web_conn_of(struct MHD_Connection *c)
{
	const union MHD_ConnectionInfo *ci = MHD_get_connection_info(c,
	    MHD_CONNECTION_INFO_SOCKET_CONTEXT);

	return ci != NULL ? ci->socket_context : NULL;
}

/* MHD accepted or closed a connection: kept in W.conns meanwhile. */
static void
web_conn_cb(void *cls, struct MHD_Connection *c, void **ctx,
    enum MHD_ConnectionNotificationCode toe)
{
	struct web_conn *k = *ctx;

	(void)cls;
	if (toe == MHD_CONNECTION_NOTIFY_STARTED) {
		/* out of memory: untracked, left to MHD's idle timeout */
		if ((k = calloc(1, sizeof(*k))) == NULL)
			return;
		k->c = c;
		k->since = uv_now(W.e->loop);
		if ((k->next = W.conns) != NULL)
			W.conns->prev = k;
		W.conns = k;
		*ctx = k;
	} else if (k != NULL) {
		if (k->prev != NULL)
			k->prev->next = k->next;
		else
			W.conns = k->next;
		if (k->next != NULL)
			k->next->prev = k->prev;
		free(k);
		*ctx = NULL;
	}
}

/* A request answered: the next one's head has [web] timeout from now. */
static void
web_done_cb(void *cls, struct MHD_Connection *c, void **con_cls,
    enum MHD_RequestTerminationCode toe)
{
	struct web_conn *k = web_conn_of(c);

	(void)cls; (void)con_cls; (void)toe;
	if (k != NULL) {
		k->headed = 0;
		k->since = uv_now(W.e->loop);
	}
}

static enum MHD_Result
web_request(void *cls, struct MHD_Connection *c, const char *url, const char *method,
    const char *version, const char *upload, size_t *upload_len, void **con_cls)
{
	const struct web_file *f;
	struct web_conn *k;
	uint32_t uid = 0;
	int viewer;

	(void)cls; (void)version; (void)upload;
	if ((k = web_conn_of(c)) != NULL)
		k->headed = 1;
	if (strcmp(method, "GET") != 0 && strcmp(method, "HEAD") != 0)
		return web_plain(c, 405, "read-only: GET and HEAD\n");
	if (*upload_len != 0)
		return MHD_NO;
	/* a request resumed (*con_cls set by web_history) was counted when it came */
	if ((strcmp(url, "/metrics") == 0 || strncmp(url, "/api/", 5) == 0) &&
	    *con_cls == NULL && !web_rate(c))
		return web_plain(c, 429, "too many requests from this address ([web] rate)\n");
	if (strcmp(url, "/metrics") == 0)
		return web_metrics(c);
	if ((viewer = web_viewer(c, &uid)) == -1)
		return web_plain(c, 403, "no such token (nvq web-token gives yours)\n");
	if (strcmp(url, "/api/state") == 0)
		return web_state(c, viewer, uid);
	if (strcmp(url, "/api/history") == 0)
		return web_history(c, viewer, con_cls);
	for (f = web_files; f->path != NULL; f++)
		if (strcmp(url, f->path) == 0)
			return web_send(c, 200, f->type, f->data, strlen(f->data));
	return web_plain(c, 404, "not found\n");
}

/* MHD's timeouts, on the loop's timer */
static void web_arm(void);

/* How many connections MHD holds. */
static unsigned
web_conns(void)
{
	const union MHD_DaemonInfo *i = MHD_get_daemon_info(W.d,
	    MHD_DAEMON_INFO_CURRENT_CONNECTIONS);

	return i != NULL ? i->num_connections : 0;
}

/*
 * MHD's work, then its next timeout on the timer.  At its connection limit
 * MHD takes the listening socket out of its epoll set, and puts it back only
 * at the start of a run once connections closed; when the last of those
 * closes in a run, nothing in that set is ready after it and no timeout is
 * due, so no further run would come and the backlog would never be
 * accepted (the listener seemed dead until nvqd restarted).  So a run that
 * closed connections is followed by another, which puts the socket back.
 */
static void
web_run(void)
{
	unsigned before;
	int i;

	if (W.d == NULL)
		return;
	for (i = 0; i < 4; i++) {
		before = web_conns();
		MHD_run(W.d);
		if (web_conns() >= before)
			break;
	}
	web_arm();
}

static void
web_timer_cb(uv_timer_t *t)
{
	(void)t;
	web_run();
}

static void
web_poll_cb(uv_poll_t *p, int status, int events)
{
	(void)p; (void)status; (void)events;
	web_run();
}

static void
web_arm(void)
{
	MHD_UNSIGNED_LONG_LONG ms;

	if (MHD_get_timeout(W.d, &ms) == MHD_YES)
		uv_timer_start(&W.timer, web_timer_cb, ms, 0);
	else
		uv_timer_stop(&W.timer);
}

/* Shuts the connections whose request's head is late: MHD then reads their end and closes them. */
static void
web_sweep_cb(uv_timer_t *t)
{
	uint64_t now = uv_now(W.e->loop), limit = (uint64_t)W.e->cfg.web_timeout * 1000;
	const union MHD_ConnectionInfo *ci;
	struct web_conn *k;
	int cut = 0;

	(void)t;
	for (k = W.conns; k != NULL; k = k->next) {
		if (k->headed || k->cut || now - k->since <= limit)
			continue;
		ci = MHD_get_connection_info(k->c, MHD_CONNECTION_INFO_CONNECTION_FD);
		if (ci != NULL && shutdown(ci->connect_fd, SHUT_RDWR) == 0) {
			k->cut = 1;
			cut++;
		}
	}
	if (cut > 0) {
		log_debug("web: %d connections closed: no request within [web] timeout", cut);
		web_run();
	}
}

static void
web_sample_cb(uv_timer_t *t)
{
	struct web_sample *s = &W.ring[W.head];
	struct engine *e = W.e;
	char ids[1024];
	struct job *j;
	int i;

	(void)t;
	memset(s, 0, sizeof(*s));
	s->t = engine_now();
	for (j = e->jobs; j != NULL; j = j->next)
		if (j->state == JOB_RUNNING)
			s->running++;
		else if (j->state == JOB_SUSPENDED)
			s->suspended++;
		else
			s->pending++;
	for (i = 0; i < e->gpus.n && i < SCHED_MAX_GPUS; i++) {
		s->demanded[i] = engine_demanded(e, i, ids, sizeof(ids));
		s->used[i] = engine_queue_used(e, i);
		s->outside[i] = e->gpus.gpus[i].outside;
	}
	W.head = (W.head + 1) % WEB_SAMPLES;
	if (W.n < WEB_SAMPLES)
		W.n++;
}

int
web_start(struct engine *e, char *err, size_t errlen)
{
	const union MHD_DaemonInfo *info;
	struct sockaddr_in sa;

	if (e->cfg.web_listen[0] == '\0')
		return 0;
	if (config_listen(e->cfg.web_listen, &sa) == -1) {
		snprintf(err, errlen, "[web] listen = %s: not ADDRESS:PORT", e->cfg.web_listen);
		return -1;
	}
	if ((W.ring = calloc(WEB_SAMPLES, sizeof(*W.ring))) == NULL) {
		snprintf(err, errlen, "out of memory");
		return -1;
	}
	W.e = e;
	webrate_init(&W.rate, e->cfg.web_rate);
	websum_init(&W.sum, e->cfg.database);
	W.d = MHD_start_daemon(MHD_USE_EPOLL | MHD_USE_SUPPRESS_DATE_NO_CLOCK |
	    MHD_ALLOW_SUSPEND_RESUME, 0, NULL, NULL,
	    web_request, NULL, MHD_OPTION_SOCK_ADDR, (struct sockaddr *)&sa,
	    MHD_OPTION_CONNECTION_LIMIT, (unsigned)WEB_CONNS,
	    MHD_OPTION_PER_IP_CONNECTION_LIMIT, (unsigned)e->cfg.web_per_address,
	    MHD_OPTION_CONNECTION_TIMEOUT, (unsigned)e->cfg.web_timeout,
	    MHD_OPTION_NOTIFY_CONNECTION, web_conn_cb, NULL,
	    MHD_OPTION_NOTIFY_COMPLETED, web_done_cb, NULL, MHD_OPTION_END);
	if (W.d == NULL) {
		snprintf(err, errlen, "[web] listen = %s: cannot listen there (in use?)",
		    e->cfg.web_listen);
		free(W.ring);
		W.ring = NULL;
		return -1;
	}
	info = MHD_get_daemon_info(W.d, MHD_DAEMON_INFO_EPOLL_FD);
	uv_poll_init(e->loop, &W.poll, info->epoll_fd);
	uv_poll_start(&W.poll, UV_READABLE, web_poll_cb);
	uv_timer_init(e->loop, &W.timer);
	uv_timer_init(e->loop, &W.sampler);
	uv_timer_init(e->loop, &W.sweep);
	uv_timer_start(&W.sweep, web_sweep_cb, 1000, 1000);
	uv_timer_start(&W.sampler, web_sample_cb, 0, WEB_SAMPLE_MS);
	W.on = 1;
	web_arm();
	log_info("web: the dashboard and /metrics on http://%s/", e->cfg.web_listen);
	return 0;
}

void
web_stop(void)
{
	int i;

	if (!W.on)
		return;
	W.on = 0;
	uv_close((uv_handle_t *)&W.poll, NULL);
	uv_close((uv_handle_t *)&W.timer, NULL);
	uv_close((uv_handle_t *)&W.sampler, NULL);
	uv_close((uv_handle_t *)&W.sweep, NULL);
	/* MHD stops no suspended connection */
	for (i = 0; i < W.nwaiting; i++)
		MHD_resume_connection(W.waiting[i]);
	W.nwaiting = 0;
	MHD_stop_daemon(W.d);
	W.d = NULL;
	websum_result_free(&W.sums);
	W.sums_ok = 0;
	if (!W.sum.busy)
		websum_close(&W.sum);	/* else once it is done (web_sums_cb) */
	free(W.ring);
	W.ring = NULL;
}
