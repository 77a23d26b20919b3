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

#include "engine.h"
#include "esc.h"
#include "gpuctl.h"
#include "log.h"
#include "store.h"
#include "web.h"

#define WEB_SAMPLE_MS	5000
#define WEB_SAMPLES	720		/* an hour of them */
#define WEB_PENDING	100		/* pending jobs in /api/state */
#define WEB_CONNS	64

/* The embedded files (web/gen.sh) */
struct web_file {
	const char	*path, *type, *data;
};
extern const struct web_file web_files[];

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
	uv_timer_t		timer, sampler;
	int			on;
	struct web_sample	*ring;
	int			head, n;
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
	int i;

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
		    strcmp(k, "priority") == 0)
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
	}
	cJSON_AddItemToArray(x->arr, o);
	return --x->left <= 0;
}

static enum MHD_Result
web_state(struct MHD_Connection *c, int viewer, uint32_t uid)
{
	static const char *const states[] = { "RUNNING", "SUSPENDED", "PENDING" };
	struct engine *e = W.e;
	cJSON *root = cJSON_CreateObject(), *gpus, *jobs, *counts, *g, *ids;
	struct web_jobs x = { NULL, viewer, uid, 0 };
	struct store_filter f;
	char idbuf[1024], *tok, *save;
	int i, k, count[3] = { 0, 0, 0 };
	struct job *j;

	if (root == NULL)
		return web_plain(c, 500, "out of memory\n");
	cJSON_AddNumberToObject(root, "now", engine_now());
	if (viewer) {
		char name[24];

		snprintf(name, sizeof(name), "%u", uid);
		cJSON_AddStringToObject(root, "viewer_uid", name);
	}
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
		ids = cJSON_AddArrayToObject(g, "jobs");
		for (tok = strtok_r(idbuf, ",", &save); tok; tok = strtok_r(NULL, ",", &save))
			cJSON_AddItemToArray(ids, cJSON_CreateNumber(strtod(tok, NULL)));
		cJSON_AddItemToArray(gpus, g);
	}
	for (j = e->jobs; j != NULL; j = j->next)
		count[j->state == JOB_RUNNING ? 0 : j->state == JOB_SUSPENDED ? 1 : 2]++;
	counts = cJSON_AddObjectToObject(root, "counts");
	for (k = 0; k < 3; k++)
		cJSON_AddNumberToObject(counts, states[k], count[k]);
	jobs = cJSON_AddArrayToObject(root, "jobs");
	x.arr = jobs;
	for (k = 0; k < 3; k++) {
		memset(&f, 0, sizeof(f));
		f.state = states[k];
		x.left = k == 2 ? WEB_PENDING : 1 << 30;
		if (store_jobs(e->store, &f, web_job_cb, &x) == -1) {
			cJSON_Delete(root);
			return web_plain(c, 500, "the database could not be read\n");
		}
	}
	return web_json(c, root);
}

static int
web_hours_cb(void *arg, const struct store_col *c, int n)
{
	struct web_jobs *x = arg;
	cJSON *o = cJSON_CreateObject();
	int i;

	for (i = 0; i < n; i++)
		if (strcmp(c[i].name, "user") == 0)
			web_add_text(o, "user", x->viewer ? c[i].s : "(a user)");
		else if (strcmp(c[i].name, "gpu_hours") == 0)
			cJSON_AddNumberToObject(o, "gpu_hours", c[i].type == STORE_REAL ? c[i].r :
			    (double)c[i].i);
	cJSON_AddItemToArray(x->arr, o);
	return 0;
}

static int
web_wait_cb(void *arg, const struct store_col *c, int n)
{
	struct web_jobs *x = arg;
	int i;

	for (i = 0; i < n; i++)
		cJSON_AddNumberToObject(x->arr, c[i].name, c[i].type == STORE_REAL ? c[i].r :
		    (double)c[i].i);
	return 0;
}

static enum MHD_Result
web_history(struct MHD_Connection *c, int viewer, uint32_t uid)
{
	cJSON *root = cJSON_CreateObject(), *arr, *s, *g;
	struct web_jobs x = { NULL, viewer, uid, 0 };
	double now = engine_now();
	int i, k, gi;

	if (root == NULL)
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
	x.arr = cJSON_AddArrayToObject(root, "gpu_hours");
	k = store_stats(W.e->store, STORE_STATS_USERS, now - 7 * 86400, NULL, web_hours_cb, &x);
	x.arr = cJSON_AddObjectToObject(root, "wait");
	if (k == -1 || store_stats(W.e->store, STORE_STATS_WAIT, now - 86400, NULL, web_wait_cb,
	    &x) == -1) {
		cJSON_Delete(root);
		return web_plain(c, 500, "the database could not be read\n");
	}
	return web_json(c, root);
}

/* A growing text buffer for /metrics */
struct web_text {
	char	*p;
	size_t	len, cap;
	int	failed;
};

static void __attribute__((format(printf, 2, 3)))
web_printf(struct web_text *t, const char *fmt, ...)
{
	va_list ap;
	int n;
	char *np;

	for (;;) {
		va_start(ap, fmt);
		n = vsnprintf(t->p ? t->p + t->len : NULL, t->p ? t->cap - t->len : 0, fmt, ap);
		va_end(ap);
		if (n < 0) {
			t->failed = 1;
			return;
		}
		if (t->p != NULL && t->len + (size_t)n < t->cap) {
			t->len += (size_t)n;
			return;
		}
		if ((np = realloc(t->p, t->cap * 2 + (size_t)n + 256)) == NULL) {
			t->failed = 1;
			return;
		}
		t->p = np;
		t->cap = t->cap * 2 + (size_t)n + 256;
	}
}

static int
web_count_cb(void *arg, const struct store_col *c, int n)
{
	struct web_text *t = arg;

	if (n >= 2 && c[0].s != NULL)
		web_printf(t, "nvq_jobs{state=\"%s\"} %lld\n", c[0].s, (long long)c[1].i);
	return 0;
}

static void
web_hist(struct web_text *t, const char *name, const char *help, int runs)
{
	static const double le[] = { 1, 10, 60, 300, 1800, 3600, 21600, 86400 };
	int64_t counts[8], count;
	double sum;
	size_t i;

	if (store_hist(W.e->store, runs, le, 8, counts, &count, &sum) == -1) {
		t->failed = 1;
		return;
	}
	web_printf(t, "# HELP %s %s\n# TYPE %s histogram\n", name, help, name);
	for (i = 0; i < 8; i++)
		web_printf(t, "%s_bucket{le=\"%g\"} %lld\n", name, le[i], (long long)counts[i]);
	web_printf(t, "%s_bucket{le=\"+Inf\"} %lld\n%s_sum %.3f\n%s_count %lld\n", name,
	    (long long)count, name, sum, name, (long long)count);
}

/* Suspends and resumes: their count (seconds 0) or the seconds they took (1) */
struct web_switches {
	struct web_text	*t;
	int		seconds;
};

static int
web_switch_cb(void *arg, const struct store_col *c, int n)
{
	struct web_switches *x = arg;
	struct web_text *t = x->t;
	int i;
	const char *kind = NULL;
	long long count = 0, ok = 0;
	double mean = 0;

	for (i = 0; i < n; i++)
		if (strcmp(c[i].name, "kind") == 0)
			kind = c[i].s;
		else if (strcmp(c[i].name, "count") == 0)
			count = c[i].i;
		else if (strcmp(c[i].name, "ok") == 0)
			ok = c[i].i;
		else if (strcmp(c[i].name, "mean_s") == 0)
			mean = c[i].r;
	if (kind != NULL && !x->seconds) {
		web_printf(t, "nvq_switches_total{kind=\"%s\",ok=\"1\"} %lld\n", kind, ok);
		web_printf(t, "nvq_switches_total{kind=\"%s\",ok=\"0\"} %lld\n", kind, count - ok);
	} else if (kind != NULL)
		web_printf(t, "nvq_switch_seconds_total{kind=\"%s\"} %.3f\n", kind,
		    mean * (double)count);
	return 0;
}

static enum MHD_Result
web_metrics(struct MHD_Connection *c)
{
	static const char *const kinds[] = { "total", "budget", "demanded", "used", "outside" };
	struct engine *e = W.e;
	struct web_text t = { NULL, 0, 0, 0 };
	struct web_switches sw;
	char ids[1024];
	uint64_t v[5];
	enum MHD_Result r;
	int i, k;

	web_printf(&t, "# HELP nvq_jobs Jobs by state.\n# TYPE nvq_jobs gauge\n");
	if (store_state_counts(e->store, web_count_cb, &t) == -1)
		t.failed = 1;
	web_printf(&t, "# HELP nvq_gpu_memory_bytes GPU memory: total, the queue's budget, "
	    "demanded by jobs, used by jobs, used outside the queue.\n"
	    "# TYPE nvq_gpu_memory_bytes gauge\n");
	for (i = 0; i < e->gpus.n; i++) {
		v[0] = e->gpus.gpus[i].total;
		v[1] = engine_budget(e, i);
		v[2] = engine_demanded(e, i, ids, sizeof(ids));
		v[3] = engine_queue_used(e, i);
		v[4] = e->gpus.gpus[i].outside;
		for (k = 0; k < 5; k++)
			web_printf(&t, "nvq_gpu_memory_bytes{gpu=\"%d\",uuid=\"%s\",kind=\"%s\"} "
			    "%llu\n", e->gpus.gpus[i].index, e->gpus.gpus[i].uuid, kinds[k],
			    (unsigned long long)v[k]);
	}
	web_printf(&t, "# HELP nvq_switches_total Suspends and resumes, done (ok=1) or "
	    "failed.\n# TYPE nvq_switches_total counter\n");
	sw.t = &t;
	sw.seconds = 0;
	if (store_stats(e->store, STORE_STATS_SWITCHES, 0, NULL, web_switch_cb, &sw) == -1)
		t.failed = 1;
	web_printf(&t, "# HELP nvq_switch_seconds_total Seconds spent suspending and "
	    "resuming.\n# TYPE nvq_switch_seconds_total counter\n");
	sw.seconds = 1;
	if (store_stats(e->store, STORE_STATS_SWITCHES, 0, NULL, web_switch_cb, &sw) == -1)
		t.failed = 1;
	web_hist(&t, "nvq_job_wait_seconds", "How long jobs waited for their first start.", 0);
	web_hist(&t, "nvq_job_run_seconds", "How long finished runs ran, not suspended.", 1);
	if (t.failed) {
		free(t.p);
		return web_plain(c, 500, "the database could not be read\n");
	}
	r = web_send(c, 200, "text/plain; version=0.0.4; charset=utf-8", t.p, t.len);
	free(t.p);
	return r;
}

static enum MHD_Result
web_request(void *cls, struct MHD_Connection *c, const char *url, const char *method,
    const char *version, const char *upload, size_t *upload_len, void **con_cls)
{
	const struct web_file *f;
	uint32_t uid = 0;
	int viewer;

	(void)cls; (void)version; (void)upload; (void)con_cls;
	if (strcmp(method, "GET") != 0 && strcmp(method, "HEAD") != 0)
		return web_plain(c, 405, "read-only: GET and HEAD\n");
	if (*upload_len != 0)
		return MHD_NO;
	if (strcmp(url, "/metrics") == 0)
		return web_metrics(c);
	if ((viewer = web_viewer(c, &uid)) == -1)
		return web_plain(c, 403, "no such token (nvq web-token gives yours)\n");
	if (strcmp(url, "/api/state") == 0)
		return web_state(c, viewer, uid);
	if (strcmp(url, "/api/history") == 0)
		return web_history(c, viewer, uid);
	for (f = web_files; f->path != NULL; f++)
		if (strcmp(url, f->path) == 0)
			return web_send(c, 200, f->type, f->data, strlen(f->data));
	return web_plain(c, 404, "not found\n");
}

/* MHD's timeouts, on the loop's timer */
static void web_arm(void);

static void
web_run(void)
{
	if (W.d != NULL) {
		MHD_run(W.d);
		web_arm();
	}
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
	W.d = MHD_start_daemon(MHD_USE_EPOLL | MHD_USE_SUPPRESS_DATE_NO_CLOCK, 0, NULL, NULL,
	    web_request, NULL, MHD_OPTION_SOCK_ADDR, (struct sockaddr *)&sa,
	    MHD_OPTION_CONNECTION_LIMIT, (unsigned)WEB_CONNS,
	    MHD_OPTION_CONNECTION_TIMEOUT, 30U, MHD_OPTION_END);
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
	uv_timer_start(&W.sampler, web_sample_cb, 0, WEB_SAMPLE_MS);
	W.on = 1;
	web_arm();
	log_info("web: the dashboard and /metrics on http://%s/", e->cfg.web_listen);
	return 0;
}

void
web_stop(void)
{
	if (!W.on)
		return;
	W.on = 0;
	uv_close((uv_handle_t *)&W.poll, NULL);
	uv_close((uv_handle_t *)&W.timer, NULL);
	uv_close((uv_handle_t *)&W.sampler, NULL);
	MHD_stop_daemon(W.d);
	W.d = NULL;
	free(W.ring);
	W.ring = NULL;
}
