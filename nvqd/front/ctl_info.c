/*
 * ctl_info.c: the requests that show what nvqd knows: the queue and the
 * history (in pages, from the database), one job in full, the GPUs, the
 * users' fair shares, the history summed up (statq.h, off the loop), the
 * watch that nvq top keeps open, the dashboard's link, and ping.  Anyone
 * may send them (ctl.c's table); they change nothing.  Each returns 0 or
 * -1 with req->err set.
 */
#include <stdio.h>
#include <string.h>

#include "ctl_info.h"
#include "ctl_req.h"
#include "gpuctl.h"
#include "hooks.h"
#include "jobstate.h"
#include "lcbe.h"
#include "slurm.h"
#include "statq.h"
#include "watch.h"

/* s: NULL, or a comma-separated list of states, each nvqd's name, at most 8. */
static int
ctl_info_check_state(struct ctl_req *r, const char *s)
{
	unsigned mask;
	int n;

	if (s == NULL || ((n = jobstate_list(s, &mask)) > 0 && n <= 8))
		return 0;
	return ctl_req_error(r, "unknown state \"%.60s\" (PENDING, RUNNING, SUSPENDED, COMPLETED, "
	    "FAILED, CANCELLED, TIMEOUT or NODE_FAIL; up to 8, with commas)", s);
}

/*
 * Listings come in pages: a reply ends after CTL_PAGE_ROWS rows or
 * CTL_PAGE_BYTES bytes, with "more" and "next" (the cursor: the last id);
 * the client asks again with "after" = next.  So a list of any length
 * works, every reply stays far below a frame's limit, and the loop serves
 * other clients between pages.  Rows come from the database in id order;
 * each page is read as it stands then.
 */
#define CTL_PAGE_ROWS	1000
#define CTL_PAGE_BYTES	(512u << 10)
/*
 * Rows a page examines at most (store_jobs_bound): a filter that matches
 * few of a million finished jobs costs the loop a page's worth per request,
 * over as many requests as it takes, not a scan of the history in one.
 */
#define CTL_PAGE_SCAN	20000

struct ctl_info_rows {
	struct ctl_req		*r;
	struct proto_buf	*out;
	int			count;
	int			paged;		/* stop at a page's end */
	int			full;		/* it did */
	int64_t			last;		/* the last row's id */
};

/* nvq show of an active job: its user's fair-share priority, and why. */
static void
ctl_info_fair_share(struct engine *e, const struct job *j, struct proto_buf *out)
{
	const struct fairshare *f = engine_usage(e);
	const struct fs_user *u = fairshare_find(f, j->uid);
	char buf[256];

	if (u == NULL || !u->active)
		return;
	snprintf(buf, sizeof(buf), "+%.1f priority: %s used %.0f%% of the GPU time of the %d "
	    "user%s with jobs in the queue (a share is %.0f%%): %.2f GPU-hours, decayed",
	    u->bonus, j->user, 100 * u->frac, f->nactive, f->nactive == 1 ? "" : "s",
	    100.0 / (f->nactive ? f->nactive : 1), u->usage / 3600);
	proto_put_str(out, "fair_share", buf);
}

/* Copies a row into the reply; REAL columns go as "%.3f" strings. */
static int
ctl_info_row_cb(void *arg, const struct store_col *c, int n)
{
	struct ctl_info_rows *rows = arg;
	struct job *j = NULL;
	char buf[64];
	int i;

	for (i = 0; i < n; i++) {
		switch (c[i].type) {
		case STORE_INT:
			proto_put_int(rows->out, c[i].name, c[i].i);
			break;
		case STORE_REAL:
			snprintf(buf, sizeof(buf), "%.3f", c[i].r);
			proto_put_str(rows->out, c[i].name, buf);
			break;
		case STORE_TEXT:
			proto_put_str(rows->out, c[i].name, c[i].s);
			break;
		}
		if (strcmp(c[i].name, "id") == 0) {
			j = engine_find(rows->r->e, c[i].i);
			rows->last = c[i].i;
		}
	}
	if (j == NULL && rows->r->e->slurm != NULL) {
		char why[256];

		if (slurm_wait(rows->r->e->slurm, rows->last, why, sizeof(why)) == 0)
			proto_put_str(rows->out, "wait", why);
	}
	if (j != NULL && (j->state == JOB_PENDING || (j->state == JOB_SUSPENDED && !j->gc.phase))) {
		char why[256];
		engine_reason(rows->r->e, j, why, sizeof(why));
		proto_put_str(rows->out, "wait", why);
	}
	if (j != NULL && j->ending[0] != '\0')
		proto_put_str(rows->out, "ending", j->ending);
	if (j != NULL && j->gc.phase != GC_NONE)
		proto_put_str(rows->out, "switch", j->gc.phase == GC_RESTORE ||
		    j->gc.phase == GC_MOVE_IN ? "resuming" : "suspending");
	if (j != NULL && j->gc.error[0] != '\0')
		proto_put_str(rows->out, "switch_error", j->gc.error);
	if (j != NULL && (j->state == JOB_RUNNING || j->state == JOB_SUSPENDED)) {
		char pids[256];

		hooks_pids(rows->r->e, j, 0, pids, sizeof(pids));
		if (pids[0] != '\0')
			proto_put_str(rows->out, "hook_pids", pids);
	}
	if (j != NULL && j->state == JOB_RUNNING) {
		proto_put_int(rows->out, "granted", (int64_t)j->granted);
		proto_put_str(rows->out, "lock", gpuctl_lock_state(j));
		if (j->gc.cut_error[0] != '\0')
			proto_put_str(rows->out, "lock_error", j->gc.cut_error);
		if (j->gpu_used != NULL && (!rows->r->e->gpus.is_virtual ||
		    engine_job_peak(rows->r->e, j) > 0)) {
			proto_put_int(rows->out, "gpu_used", (int64_t)engine_job_used(rows->r->e, j));
			proto_put_int(rows->out, "gpu_peak", (int64_t)engine_job_peak(rows->r->e, j));
		}
	}
	if (j != NULL && (j->state == JOB_RUNNING || j->state == JOB_SUSPENDED))
		lcbe_put_live(j, rows->out);
	if (j != NULL && rows->r->e->cfg.fairshare && !rows->paged)
		ctl_info_fair_share(rows->r->e, j, rows->out);
	rows->count++;
	if (rows->paged && (rows->count >= CTL_PAGE_ROWS || rows->out->len >= CTL_PAGE_BYTES))
		rows->full = 1;
	return rows->out->failed || rows->full;
}

/* The daemon's clock, so that nvq computes elapsed times against it. */
static void
ctl_info_now(struct proto_buf *out)
{
	char buf[32];

	snprintf(buf, sizeof(buf), "%.3f", engine_now());
	proto_put_str(out, "now", buf);
}

/* A page of a listing: its rows, then "more" and "next" if it is full. */
static int
ctl_info_page(struct ctl_req *r, struct proto_buf *out, struct store_filter *f, const char *what)
{
	struct ctl_info_rows rows = { r, out, 0, 1, 0, 0 };

	f->after = proto_int(r->msg, "after", 0);
	if (f->after < 0)
		return ctl_req_error(r, "a page's cursor must be a job id");
	ctl_info_now(out);
	if (store_jobs_bound(r->e->store, f, CTL_PAGE_SCAN, &f->upto) == -1 ||
	    store_jobs(r->e->store, f, ctl_info_row_cb, &rows) == -1)
		return ctl_req_error(r, "the database could not be read (see nvqd's log)");
	if (out->failed)
		return ctl_req_error(r, "job %lld's row is too long for a reply of the %s",
		    (long long)rows.last, what);
	if (rows.full) {
		proto_put_int(out, "more", 1);
		proto_put_int(out, "next", rows.last);
	} else if (f->upto > 0) {
		/* CTL_PAGE_SCAN rows examined, fewer matched: the client asks on from there */
		proto_put_int(out, "more", 1);
		proto_put_int(out, "next", f->upto);
	}
	return 0;
}

static int
ctl_info_filter(struct ctl_req *r, struct store_filter *f)
{
	memset(f, 0, sizeof(*f));
	f->user = proto_str(r->msg, "user");
	f->state = proto_str(r->msg, "state");
	f->all = proto_int(r->msg, "all", 0) != 0;
	f->since = (double)proto_int(r->msg, "since", 0);
	return ctl_info_check_state(r, f->state);
}

int
ctl_info_list(struct ctl_req *r, struct proto_buf *out)
{
	struct store_filter f;

	if (ctl_info_filter(r, &f) == -1)
		return -1;
	return ctl_info_page(r, out, &f, "list");
}

int
ctl_info_history(struct ctl_req *r, struct proto_buf *out)
{
	struct store_filter f;

	if (ctl_info_filter(r, &f) == -1)
		return -1;
	f.finished = 1;
	f.all = 1;
	return ctl_info_page(r, out, &f, "history");
}

/*
 * nvq show: the -m a job's peak implies ([scheduler] auto_margin added), where
 * its runs' peak is known.  Not for a job that failed out of GPU memory: its
 * reason says what it needed, which its peak (what it was allowed) is not.
 */
static void
ctl_info_mem_advice(struct ctl_req *r, int64_t id, struct proto_buf *out)
{
	uint64_t peak, want, mib = 1ULL << 20;
	int64_t mem;
	int oom;
	char p[16], w[16], m[16], buf[160];

	if (store_job_peak(r->e->store, id, &peak, &mem, &oom) != 1 || oom)
		return;
	want = peak + (uint64_t)((double)peak * r->e->cfg.auto_margin);
	want = (want + mib - 1) / mib * mib;
	fmt_size(peak, p, sizeof(p));
	/* a size to type: whole MiB, not rounded down by fmt_size */
	if (want % (1ULL << 30) == 0)
		snprintf(w, sizeof(w), "%lluG", (unsigned long long)(want >> 30));
	else
		snprintf(w, sizeof(w), "%lluM", (unsigned long long)(want >> 20));
	if (mem > 0) {
		fmt_size((uint64_t)mem, m, sizeof(m));
		snprintf(buf, sizeof(buf), "-m %s: its peak %s + %.0f%% (it asked for %s)", w, p,
		    100 * r->e->cfg.auto_margin, m);
	} else
		snprintf(buf, sizeof(buf), "-m %s: its peak %s + %.0f%% (it took whole GPUs)", w,
		    p, 100 * r->e->cfg.auto_margin);
	proto_put_str(out, "mem_advice", buf);
}

/* A row of store_array_show, as it comes. */
static int
ctl_info_put_cb(void *arg, const struct store_col *c, int n)
{
	struct proto_buf *out = arg;
	int i;

	for (i = 0; i < n; i++)
		if (c[i].type == STORE_INT)
			proto_put_int(out, c[i].name, c[i].i);
		else if (c[i].type == STORE_TEXT)
			proto_put_str(out, c[i].name, c[i].s);
	return 0;
}

/*
 * nvq show A_ (and nvq wait A_'s look): the array summed up, by
 * store_array_show, under "array", with its "active" tasks (the engine's
 * count, O(1)); "brief" (nvq wait's look while some are active): that
 * count alone, so that waiting on a big array does not read it each time.
 */
static int
ctl_info_array(struct ctl_req *r, int64_t array, struct proto_buf *out)
{
	char state[16];
	int64_t of, active = (int64_t)deptab_count(&r->e->arrtab, array);

	proto_put_int(out, "active", active);
	if (active > 0 && proto_int(r->msg, "brief", 0) != 0)
		return 0;

	if (store_job_of_array(r->e->store, array, state, sizeof(state), &of) == -1)
		return ctl_req_error(r, "no such array %lld", (long long)array);
	if (of != array)
		return ctl_req_error(r, "job %lld is not an array's id (nvq show %lld shows the "
		    "job)", (long long)array, (long long)array);
	proto_put_int(out, "array", array);
	if (store_array_show(r->e->store, array, ctl_info_put_cb, out) == -1)
		return ctl_req_error(r, "the database could not be read (see nvqd's log)");
	return 0;
}

/*
 * nvq show ID, A_I ("array" and "index": the task's job, found by the
 * array_task index) or A_ ("array" alone: the array summed up).
 */
int
ctl_info_show(struct ctl_req *r, struct proto_buf *out)
{
	struct store_filter f;
	struct ctl_info_rows rows = { r, out, 0, 0, 0, 0 };
	int64_t id = proto_int(r->msg, "id", 0);
	int64_t array = proto_int(r->msg, "array", 0), index = proto_int(r->msg, "index", -1);

	memset(&f, 0, sizeof(f));
	ctl_info_now(out);
	if (array > 0 && index < 0)
		return ctl_info_array(r, array, out);
	if (array > 0 && store_array_task(r->e->store, array, index, &id) == -1)
		return ctl_req_error(r, "no task %lld_%lld: array %lld has no task of index %lld",
		    (long long)array, (long long)index, (long long)array, (long long)index);
	f.id = id;
	if (id <= 0)
		return ctl_req_error(r, "no job id given");
	if (store_jobs(r->e->store, &f, ctl_info_row_cb, &rows) == -1)
		return ctl_req_error(r, "the database could not be read (see nvqd's log)");
	if (rows.count == 0)
		return ctl_req_error(r, "no such job %lld", (long long)id);
	ctl_info_mem_advice(r, id, out);
	if (store_runs(r->e->store, id, ctl_info_row_cb, &rows) == -1 ||
	    store_events(r->e->store, id, ctl_info_row_cb, &rows) == -1 ||
	    store_switches(r->e->store, id, ctl_info_row_cb, &rows) == -1)
		return ctl_req_error(r, "the database could not be read (see nvqd's log)");
	return 0;
}

int
ctl_info_gpus(struct ctl_req *r, struct proto_buf *out)
{
	struct engine *e = r->e;
	char ids[1024], lc[1024];
	long long cpus;
	uint64_t mem;
	int i;

	proto_put_str(out, "source", e->gpus.source);
	/* the host's pool ([resources]), before the GPUs' rows */
	engine_host_used(e, &cpus, &mem);
	proto_put_int(out, "host_cpus", e->cfg.sched.cpus);
	proto_put_int(out, "host_cpus_used", cpus);
	proto_put_int(out, "host_mem", (int64_t)e->cfg.sched.host_mem);
	proto_put_int(out, "host_mem_used", (int64_t)mem);
	for (i = 0; i < e->gpus.n; i++) {
		const struct gpu *g = &e->gpus.gpus[i];
		proto_put_int(out, "index", g->index);
		proto_put_str(out, "uuid", g->uuid);
		proto_put_str(out, "name", g->name);
		proto_put_str(out, "mode", config_mode(&e->cfg, i) == SCHED_SERIAL ? "serial" :
		    config_mode(&e->cfg, i) == SCHED_TIMESLICE ? "timeslice" : "auto");
		if (config_mode(&e->cfg, i) == SCHED_TIMESLICE)
			proto_put_int(out, "turn_ms", (int64_t)(gpuctl_turn(e, i) * 1000));
		proto_put_str(out, "compute", config_compute(&e->cfg, i) == COMPUTE_TIMESLICE ?
		    "timeslice" : "shared");
		proto_put_int(out, "total", (int64_t)g->total);
		proto_put_int(out, "budget", (int64_t)engine_budget(e, i));
		proto_put_int(out, "demanded", (int64_t)engine_demanded(e, i, ids, sizeof(ids)));
		proto_put_int(out, "outside", (int64_t)g->outside);
		proto_put_int(out, "queue_used", (int64_t)engine_queue_used(e, i));
		proto_put_int(out, "outside_procs", g->nprocs_outside);
		proto_put_int(out, "used", (int64_t)g->used);
		proto_put_str(out, "jobs", ids);
		/* which of them are latency-critical, and whether one is at work now */
		proto_put_int(out, "lc_busy", lcbe_gpu(e, i, ids, lc, sizeof(lc)));
		proto_put_str(out, "lc_jobs", lc);
		proto_put_int(out, "drained", (int64_t)((e->drained >> i) & 1));
		if ((e->drained >> i) & 1)
			proto_put_str(out, "drain_reason", e->drain_why[i]);
		if (config_compute(&e->cfg, i) == COMPUTE_TIMESLICE)
			proto_put_int(out, "lock_holder", gpuctl_holder(e, i));
	}
	return 0;
}

/* nvq shares: every user's recent GPU use, and the priority it earns them. */
int
ctl_info_shares(struct ctl_req *r, struct proto_buf *out)
{
	const struct fairshare *f = engine_usage(r->e);
	char buf[32], name[64];
	int i;

	proto_put_int(out, "fairshare", r->e->cfg.fairshare);
	proto_put_int(out, "halflife", r->e->cfg.fs_halflife);
	snprintf(buf, sizeof(buf), "%g", r->e->cfg.fs_weight);
	proto_put_str(out, "weight", buf);
	proto_put_int(out, "active", f->nactive);
	for (i = 0; i < f->n; i++) {
		proto_put_int(out, "uid", f->u[i].uid);
		ctl_req_user(f->u[i].uid, name, sizeof(name));
		proto_put_str(out, "user", name);
		proto_put_int(out, "queued", f->u[i].active);
		snprintf(buf, sizeof(buf), "%.4f", f->u[i].usage / 3600);
		proto_put_str(out, "gpu_hours", buf);
		if (!f->u[i].active)
			continue;
		snprintf(buf, sizeof(buf), "%.4f", f->u[i].frac);
		proto_put_str(out, "use", buf);
		snprintf(buf, sizeof(buf), "%.4f", 1.0 / f->nactive);
		proto_put_str(out, "share", buf);
		snprintf(buf, sizeof(buf), "%.2f", r->e->cfg.fairshare ? f->u[i].bonus : 0);
		proto_put_str(out, "bonus", buf);
	}
	return 0;
}

/*
 * nvq stats [--since] [--user]: what the history says, summed up, read off
 * the loop (statq.h), so the reply comes later.
 */
int
ctl_info_stats(struct ctl_req *r, struct proto_buf *out)
{
	(void)out;
	if (statq_add(r->conn, (uint32_t)r->uid, (double)proto_int(r->msg, "since", 0),
	    proto_str(r->msg, "user"), engine_now(), r->err, sizeof(r->err)) == -1)
		return -1;
	r->deferred = 1;
	return 0;
}

/* nvq top: this connection gets a frame after each change (watch.h). */
int
ctl_info_watch(struct ctl_req *r, struct proto_buf *out)
{
	int yield = proto_int(r->msg, "yield", 0) != 0;

	if (watch_add(r->conn, (unsigned)r->uid, yield) == -1)
		return ctl_req_error(r, "nvqd has as many watchers as it takes (%d, %d per user%s)",
		    yield ? WATCH_YIELD_MAX : WATCH_MAX, yield ? WATCH_YIELD_MAX_UID : WATCH_MAX_UID,
		    yield ? ", of those that can do without" : "");
	proto_put_int(out, "watching", 1);
	return 0;
}

/* nvq web-token: the caller's link to the dashboard, with their token in it. */
int
ctl_info_web_token(struct ctl_req *r, struct proto_buf *out)
{
	char token[64];

	if (r->e->cfg.web_listen[0] == '\0')
		return ctl_req_error(r, "the dashboard is off: [web] listen is empty");
	if (store_web_token(r->e->store, r->uid, proto_int(r->msg, "new", 0) != 0, token,
	    sizeof(token)) == -1)
		return ctl_req_error(r, "cannot make a token (see nvqd's log)");
	proto_put_str(out, "listen", r->e->cfg.web_listen);
	proto_put_str(out, "token", token);
	return 0;
}

int
ctl_info_ping(struct ctl_req *r, struct proto_buf *out)
{
	proto_put_int(out, "version", PROTO_VERSION);
	proto_put_int(out, "uid", r->uid);
	proto_put_str(out, "database", r->e->cfg.database);
	return 0;
}
