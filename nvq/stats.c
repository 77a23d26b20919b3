/*
 * stats.c: `nvq stats [--since WHEN] [-u USER] [--json]`: the history
 * summed up by nvqd: GPU-hours per user, how long jobs waited, how much
 * memory users asked for against what their jobs used at their peak, how
 * jobs failed, suspends and resumes, and the energy of GPU runs per user
 * and per job name (unknown where any run's is).  Since 7 days ago unless
 * told.
 */
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "json.h"
#include "joules.h"

#include "nvq.h"
#include "table.h"

#define STATS_DEFAULT_SINCE	"7d"

/* The rows of one kind, without their "stat", numbers as numbers. */
static struct json *
stats_json_rows(const struct proto_msg *m, const struct nvq_row *rows, int n, const char *kind)
{
	struct json *arr = json_array();
	struct nvq_row r;
	int i;

	for (i = 0; i < n; i++) {
		if (strcmp(row_str(m, &rows[i], "stat"), kind) != 0)
			continue;
		r.start = rows[i].start + 1;
		r.end = rows[i].end;
		json_add(arr, NULL, fmt_json_obj(m, &r, 1));
	}
	return arr;
}

/*
 * The energy of a row's GPU runs: "unknown" where any of them is (no
 * counter, or a run from before energy was counted), "-" with none.
 */
static void
stats_energy(const struct proto_msg *m, const struct nvq_row *r, char *buf, size_t len)
{
	if (row_int(m, r, "gpu_runs", 0) == 0)
		snprintf(buf, len, "-");
	else if (row_int(m, r, "energy_unknown", 0) > 0)
		snprintf(buf, len, "unknown");
	else
		joules_fmt(row_real(m, r, "energy"), buf, len);
}

enum { U_USER, U_JOBS, U_RUNS, U_HOURS, U_ENERGY, U_FAILED, U_ASKED, U_USED, U_OVER, U_NCOLS };
static const struct table_col stats_user_cols[U_NCOLS] = {
	[U_USER] = { "user", 16, 0 }, [U_JOBS] = { "jobs", 6, 1 }, [U_RUNS] = { "runs", 6, 1 },
	[U_HOURS] = { "gpu-hours", 10, 1 }, [U_ENERGY] = { "energy", 11, 1 },
	[U_FAILED] = { "failed", 6, 1 },
	[U_ASKED] = { "asked", 8, 1 }, [U_USED] = { "peak", 8, 1 },
	[U_OVER] = { "over-ask", 8, 1 },
};

static void
stats_users(const struct proto_msg *m, const struct nvq_row *rows, int n)
{
	struct table t;
	char cell[U_NCOLS][64];
	const char *cells[U_NCOLS];
	int i, k;

	if (table_init(&t, stats_user_cols, U_NCOLS,
	    "user,jobs,runs,gpu-hours,energy,failed,asked,peak,over-ask", NULL) == -1)
		return;
	printf("GPU time by user (ENERGY: of the GPU runs, unknown where any run's is; ASKED, "
	    "PEAK: -m and the peak on one GPU, summed over the runs where both are known)\n");
	table_header(&t);
	for (i = 0; i < n; i++) {
		const struct nvq_row *r = &rows[i];
		int64_t measured = row_int(m, r, "measured", 0);
		double asked = (double)row_int(m, r, "asked", 0), used = (double)row_int(m, r, "used", 0);

		if (strcmp(row_str(m, r, "stat"), "user") != 0)
			continue;
		for (k = 0; k < U_NCOLS; k++)
			cells[k] = cell[k];
		snprintf(cell[U_USER], 64, "%s", fmt_safe(row_str(m, r, "user")));
		snprintf(cell[U_JOBS], 64, "%lld", (long long)row_int(m, r, "jobs", 0));
		snprintf(cell[U_RUNS], 64, "%lld", (long long)row_int(m, r, "runs", 0));
		snprintf(cell[U_HOURS], 64, "%.2f", row_real(m, r, "gpu_hours"));
		stats_energy(m, r, cell[U_ENERGY], 64);
		snprintf(cell[U_FAILED], 64, "%lld", (long long)row_int(m, r, "failed", 0));
		fmt_size((uint64_t)asked, cell[U_ASKED], 64);
		fmt_size((uint64_t)used, cell[U_USED], 64);
		snprintf(cell[U_OVER], 64, "%.1fx", used > 0 ? asked / used : 0);
		if (measured == 0)
			cells[U_ASKED] = cells[U_USED] = cells[U_OVER] = NULL;
		table_row(&t, cells);
	}
	table_free(&t);
}

enum { N_USER, N_NAME, N_RUNS, N_HOURS, N_ENERGY, N_NCOLS };
static const struct table_col stats_name_cols[N_NCOLS] = {
	[N_USER] = { "user", 16, 0 }, [N_NAME] = { "name", 24, 0 }, [N_RUNS] = { "runs", 6, 1 },
	[N_HOURS] = { "gpu-hours", 10, 1 }, [N_ENERGY] = { "energy", 11, 1 },
};

static void
stats_names(const struct proto_msg *m, const struct nvq_row *rows, int n)
{
	struct table t;
	char cell[N_NCOLS][64];
	const char *cells[N_NCOLS];
	int i, k, any = 0;

	if (table_init(&t, stats_name_cols, N_NCOLS, "user,name,runs,gpu-hours,energy",
	    NULL) == -1)
		return;
	printf("\nEnergy by job name (GPU runs; the 20 names that used most)\n");
	table_header(&t);
	for (i = 0; i < n; i++) {
		const struct nvq_row *r = &rows[i];

		if (strcmp(row_str(m, r, "stat"), "name") != 0)
			continue;
		any = 1;
		for (k = 0; k < N_NCOLS; k++)
			cells[k] = cell[k];
		snprintf(cell[N_USER], 64, "%s", fmt_safe(row_str(m, r, "user")));
		snprintf(cell[N_NAME], 64, "%s", fmt_safe(row_str(m, r, "name")));
		snprintf(cell[N_RUNS], 64, "%lld", (long long)row_int(m, r, "runs", 0));
		snprintf(cell[N_HOURS], 64, "%.2f", row_real(m, r, "gpu_hours"));
		stats_energy(m, r, cell[N_ENERGY], 64);
		table_row(&t, cells);
	}
	table_free(&t);
	if (!any)
		printf("(none)\n");
}

static void
stats_rest(const struct proto_msg *m, const struct nvq_row *rows, int n)
{
	char a[24], b[24], c[24], d[24], e[24];
	int i, any = 0;

	for (i = 0; i < n; i++) {
		const struct nvq_row *r = &rows[i];

		if (strcmp(row_str(m, r, "stat"), "wait") != 0)
			continue;
		fmt_duration((int64_t)row_real(m, r, "p50"), a, sizeof(a));
		fmt_duration((int64_t)row_real(m, r, "p90"), b, sizeof(b));
		fmt_duration((int64_t)row_real(m, r, "p99"), c, sizeof(c));
		fmt_duration((int64_t)row_real(m, r, "max"), d, sizeof(d));
		fmt_duration((int64_t)row_real(m, r, "mean"), e, sizeof(e));
		printf("\nQueue wait of the %lld jobs that first started: median %s, p90 %s, "
		    "p99 %s, longest %s, mean %s\n", (long long)row_int(m, r, "started", 0), a, b,
		    c, d, e);
	}
	printf("\nFailures\n%-9s %6s  %s\n", "STATE", "COUNT", "REASON");
	for (i = 0; i < n; i++) {
		const struct nvq_row *r = &rows[i];

		if (strcmp(row_str(m, r, "stat"), "failure") != 0)
			continue;
		any = 1;
		printf("%-9s %6lld  %s\n", fmt_safe(row_str(m, r, "state")),
		    (long long)row_int(m, r, "count", 0), fmt_safe(row_str(m, r, "why")));
	}
	if (!any)
		printf("(none)\n");
	printf("\nSuspends and resumes\n%-8s %6s %6s %8s %8s %8s\n", "KIND", "COUNT", "OK",
	    "MEAN", "LONGEST", "MOVED");
	any = 0;
	for (i = 0; i < n; i++) {
		const struct nvq_row *r = &rows[i];

		if (strcmp(row_str(m, r, "stat"), "switch") != 0)
			continue;
		any = 1;
		fmt_size((uint64_t)row_int(m, r, "bytes", 0), a, sizeof(a));
		printf("%-8s %6lld %6lld %7.2fs %7.2fs %8s\n", fmt_safe(row_str(m, r, "kind")),
		    (long long)row_int(m, r, "count", 0), (long long)row_int(m, r, "ok", 0),
		    row_real(m, r, "mean_s"), row_real(m, r, "max_s"), a);
	}
	if (!any)
		printf("(none)\n");
}

int
cmd_stats(struct nvq_args *a)
{
	struct proto_buf b = { 0 };
	struct proto_msg m;
	struct nvq_row *rows = NULL;
	const char *since = a->since != NULL ? a->since : STATS_DEFAULT_SINCE;
	char when[32];
	int64_t t;
	int n;

	if (nvq_since(since, &t) == -1)
		return 2;
	proto_begin(&b, MSG_STATS);
	proto_put_int(&b, "since", t);
	if (a->user != NULL)
		proto_put_str(&b, "user", a->user);
	n = client_call(a->socket, &b, &m);
	proto_buf_free(&b);
	if (n == -1)
		return 1;
	n = client_rows(&m, "stat", 0, &rows);
	if (a->json) {
		struct json *o = json_object();

		json_add(o, "since", json_number((double)t));
		if (a->user != NULL)
			json_add(o, "user", json_string(a->user));
		else
			json_add(o, "user", json_null());
		json_add(o, "users", stats_json_rows(&m, rows, n, "user"));
		json_add(o, "wait", stats_json_rows(&m, rows, n, "wait"));
		json_add(o, "failures", stats_json_rows(&m, rows, n, "failure"));
		json_add(o, "switches", stats_json_rows(&m, rows, n, "switch"));
		json_add(o, "names", stats_json_rows(&m, rows, n, "name"));
		fmt_json_print(stdout, o);
		printf("\n");
	} else {
		fmt_time((double)t, when, sizeof(when));
		printf("Since %s (%s)%s%s\n\n", when, fmt_safe(since), a->user ? ", user " : "",
		    a->user ? fmt_safe(a->user) : "");
		stats_users(&m, rows, n);
		stats_names(&m, rows, n);
		stats_rest(&m, rows, n);
	}
	free(rows);
	proto_msg_free(&m);
	return 0;
}

/* nvq web-token [--new]: the caller's link to the dashboard. */
int
cmd_web_token(struct nvq_args *a)
{
	struct proto_buf b = { 0 };
	struct proto_msg m;
	int r;

	proto_begin(&b, MSG_WEB_TOKEN);
	if (a->renew)
		proto_put_int(&b, "new", 1);
	r = client_call(a->socket, &b, &m);
	proto_buf_free(&b);
	if (r == -1)
		return 1;
	printf("http://%s/?token=%s\n", fmt_safe(proto_str(&m, "listen")),
	    fmt_safe(proto_str(&m, "token")));
	proto_msg_free(&m);
	return 0;
}
