/*
 * webmetrics.c: /metrics' text (see webmetrics.h): the counters the
 * store's triggers keep (schema/018_metrics.sql) and the GPUs' figures in
 * memory, in Prometheus' text format.
 */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "engine.h"
#include "store.h"
#include "webmetrics.h"

/* A growing text buffer for /metrics */
struct webmetrics_buf {
	char	*p;
	size_t	len, cap;
	int	failed;
};

static void __attribute__((format(printf, 2, 3)))
webmetrics_printf(struct webmetrics_buf *t, const char *fmt, ...)
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
webmetrics_count_cb(void *arg, const struct store_col *c, int n)
{
	struct webmetrics_buf *t = arg;

	if (n >= 2 && c[0].s != NULL)
		webmetrics_printf(t, "nvq_jobs{state=\"%s\"} %lld\n", c[0].s, (long long)c[1].i);
	return 0;
}

/* A user's joules: the name as a label value, escaped as Prometheus' text asks. */
static int
webmetrics_energy_cb(void *arg, const struct store_col *c, int n)
{
	struct webmetrics_buf *t = arg;
	char user[256];
	size_t k = 0;
	const char *p;

	if (n < 2 || c[0].s == NULL)
		return 0;
	for (p = c[0].s; *p != '\0' && k + 3 < sizeof(user); p++) {
		if (*p == '"' || *p == '\\' || *p == '\n') {
			user[k++] = '\\';
			user[k++] = *p == '\n' ? 'n' : *p;
		} else
			user[k++] = *p;
	}
	user[k] = '\0';
	webmetrics_printf(t, "nvq_energy_joules_total{user=\"%s\"} %.3f\n", user, c[1].r);
	return 0;
}

/* A histogram's rows (store_hist) in Prometheus' text */
struct webmetrics_hist {
	struct webmetrics_buf	*t;
	const char	*name;
	long long	count;
	double		sum;
};

static int
webmetrics_hist_cb(void *arg, const struct store_col *c, int n)
{
	struct webmetrics_hist *h = arg;

	if (n < 3)
		return 1;
	if (c[0].type == STORE_TEXT)
		webmetrics_printf(h->t, "%s_bucket{le=\"%s\"} %lld\n", h->name, c[0].s,
		    (long long)c[1].i);
	else
		webmetrics_printf(h->t, "%s_bucket{le=\"%g\"} %lld\n", h->name, c[0].r,
		    (long long)c[1].i);
	h->count = (long long)c[1].i;	/* the last, +Inf: all of them */
	h->sum = c[2].r;
	return 0;
}

static void
webmetrics_hist(struct engine *e, struct webmetrics_buf *t, const char *name, const char *help,
    int runs)
{
	struct webmetrics_hist h = { t, name, 0, 0 };

	webmetrics_printf(t, "# HELP %s %s\n# TYPE %s histogram\n", name, help, name);
	if (store_hist(e->store, runs, webmetrics_hist_cb, &h) == -1) {
		t->failed = 1;
		return;
	}
	webmetrics_printf(t, "%s_sum %.3f\n%s_count %lld\n", name, h.sum, name, h.count);
}

/* Suspends and resumes: their count (seconds 0) or the seconds they took (1) */
struct webmetrics_switches {
	struct webmetrics_buf	*t;
	int		seconds;
	double		sum;		/* seconds: the kind's so far */
};

static int
webmetrics_switch_cb(void *arg, const struct store_col *c, int n)
{
	struct webmetrics_switches *x = arg;

	if (n < 4 || c[0].s == NULL)
		return 1;
	/* rows by kind, ok 1 then 0 */
	if (!x->seconds)
		webmetrics_printf(x->t, "nvq_switches_total{kind=\"%s\",ok=\"%d\"} %lld\n", c[0].s,
		    c[1].i != 0, (long long)c[2].i);
	else if (c[1].i != 0)
		x->sum = c[3].r;
	else
		webmetrics_printf(x->t, "nvq_switch_seconds_total{kind=\"%s\"} %.3f\n", c[0].s,
		    x->sum + c[3].r);
	return 0;
}

char *
webmetrics_render(struct engine *e, size_t *len)
{
	static const char *const kinds[] = { "total", "budget", "demanded", "used", "outside" };
	struct webmetrics_buf t = { NULL, 0, 0, 0 };
	struct webmetrics_switches sw;
	char ids[1024];
	uint64_t v[5];
	int i, k;

	webmetrics_printf(&t, "# HELP nvq_jobs Jobs by state.\n# TYPE nvq_jobs gauge\n");
	if (store_state_counts(e->store, webmetrics_count_cb, &t) == -1)
		t.failed = 1;
	webmetrics_printf(&t, "# HELP nvq_gpu_memory_bytes GPU memory: total, the queue's budget, "
	    "demanded by jobs, used by jobs, used outside the queue.\n"
	    "# TYPE nvq_gpu_memory_bytes gauge\n");
	for (i = 0; i < e->gpus.n; i++) {
		v[0] = e->gpus.gpus[i].total;
		v[1] = engine_budget(e, i);
		v[2] = engine_demanded(e, i, ids, sizeof(ids));
		v[3] = engine_queue_used(e, i);
		v[4] = e->gpus.gpus[i].outside;
		for (k = 0; k < 5; k++)
			webmetrics_printf(&t, "nvq_gpu_memory_bytes{gpu=\"%d\",uuid=\"%s\",kind=\"%s\"} "
			    "%llu\n", e->gpus.gpus[i].index, e->gpus.gpus[i].uuid, kinds[k],
			    (unsigned long long)v[k]);
	}
	webmetrics_printf(&t, "# HELP nvq_switches_total Suspends and resumes, done (ok=1) or "
	    "failed.\n# TYPE nvq_switches_total counter\n");
	sw.t = &t;
	sw.seconds = 0;
	sw.sum = 0;
	if (store_switch_counts(e->store, webmetrics_switch_cb, &sw) == -1)
		t.failed = 1;
	webmetrics_printf(&t, "# HELP nvq_switch_seconds_total Seconds spent suspending and "
	    "resuming.\n# TYPE nvq_switch_seconds_total counter\n");
	sw.seconds = 1;
	if (store_switch_counts(e->store, webmetrics_switch_cb, &sw) == -1)
		t.failed = 1;
	webmetrics_printf(&t, "# HELP nvq_energy_joules_total GPU energy of each user's runs, "
	    "from NVML's counters (runs whose energy is unknown add nothing).\n"
	    "# TYPE nvq_energy_joules_total counter\n");
	if (store_energy_counts(e->store, webmetrics_energy_cb, &t) == -1)
		t.failed = 1;
	webmetrics_hist(e, &t, "nvq_job_wait_seconds", "How long jobs waited for their first start.", 0);
	webmetrics_hist(e, &t, "nvq_job_run_seconds", "How long finished runs ran, not suspended.", 1);
	if (t.failed) {
		free(t.p);
		return NULL;
	}
	*len = t.len;
	return t.p;
}
