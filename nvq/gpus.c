/*
 * gpus.c: `nvq gpus`: each GPU's memory as nvqd accounts it.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "nvq.h"
#include "table.h"

enum { G_IDX, G_UUID, G_NAME, G_MODE, G_TOTAL, G_BUDGET, G_DEMANDED, G_USED, G_OUTSIDE,
	G_JOBS, G_NCOLS };

static const struct table_col gpus_cols[G_NCOLS] = {
	[G_IDX] = { "idx", 3, 0 }, [G_UUID] = { "uuid", 40, 0 }, [G_NAME] = { "name", 24, 0 },
	[G_MODE] = { "mode", 6, 0 }, [G_TOTAL] = { "total", 7, 1 },
	[G_BUDGET] = { "budget", 7, 1 }, [G_DEMANDED] = { "demanded", 8, 1 },
	[G_USED] = { "used", 7, 1 }, [G_OUTSIDE] = { "outside", 7, 1 },
	[G_JOBS] = { "jobs", 12, 0 },
};

/*
 * A GPU's jobs as nvq gpus and nvq top show them: the ids, then which are
 * latency-critical (--class lc; the others are best-effort) and whether
 * one is at work now (be launches wait then).
 */
void
gpus_jobs_text(const struct proto_msg *m, const struct nvq_row *r, char *buf, size_t len)
{
	const char *jobs = row_str(m, r, "jobs"), *lc = row_str(m, r, "lc_jobs");
	size_t n;

	snprintf(buf, len, "%s", jobs ? fmt_safe(jobs) : "");
	if (lc != NULL && *lc != '\0' && (n = strlen(buf)) < len)
		snprintf(buf + n, len - n, " (lc %s, %s)", fmt_safe(lc),
		    row_int(m, r, "lc_busy", 0) ? "busy: be waits" : "idle");
}

/* The host's line under the table: CPUs and memory the running jobs hold ([resources]). */
static void
gpus_host(const struct proto_msg *m)
{
	char used[16], total[16];

	if (proto_int(m, "host_cpus", 0) <= 0)
		return;		/* an older nvqd */
	fmt_size((uint64_t)proto_int(m, "host_mem_used", 0), used, sizeof(used));
	fmt_size((uint64_t)proto_int(m, "host_mem", 0), total, sizeof(total));
	printf("host: %lld of %lld CPUs, %s of %s memory held by jobs\n",
	    (long long)proto_int(m, "host_cpus_used", 0), (long long)proto_int(m, "host_cpus", 0),
	    used, total);
}

int
cmd_gpus(struct nvq_args *a)
{
	static const char *const sizes[] = { [G_TOTAL] = "total", [G_BUDGET] = "budget",
	    [G_DEMANDED] = "demanded", [G_USED] = "queue_used", [G_OUTSIDE] = "outside" };
	struct proto_buf b = { 0 };
	struct proto_msg m;
	struct nvq_row *rows = NULL;
	struct table t;
	char cell[G_NCOLS][64], jobs[1024];
	const char *cells[G_NCOLS];
	int i, k, n;

	if (!a->json && table_init(&t, gpus_cols, G_NCOLS,
	    "idx,uuid,name,mode,total,budget,demanded,used,outside,jobs", a->format) == -1)
		return 2;
	proto_begin(&b, MSG_GPUS);
	if (client_call(a->socket, &b, &m) == -1) {
		proto_buf_free(&b);
		if (!a->json)
			table_free(&t);
		return 1;
	}
	proto_buf_free(&b);
	n = client_rows(&m, "index", 0, &rows);
	if (a->json) {
		printf("[");
		for (i = 0; i < n; i++) {
			printf(i ? ",\n " : "\n ");
			fmt_json_row(stdout, &m, &rows[i]);
		}
		printf("%s]\n", n ? "\n" : "");
	} else {
		table_header(&t);
		for (i = 0; i < n; i++) {
			for (k = 0; k < G_NCOLS; k++)
				cells[k] = cell[k];
			snprintf(cell[G_IDX], 64, "%lld", (long long)row_int(&m, &rows[i], "index", 0));
			snprintf(cell[G_UUID], 64, "%s", fmt_safe(row_str(&m, &rows[i], "uuid")));
			snprintf(cell[G_NAME], 25, "%s", fmt_safe(row_str(&m, &rows[i], "name")));
			snprintf(cell[G_MODE], 64, "%s", fmt_safe(row_str(&m, &rows[i], "mode")));
			for (k = G_TOTAL; k <= G_OUTSIDE; k++)
				fmt_size((uint64_t)row_int(&m, &rows[i], sizes[k], 0), cell[k], 64);
			gpus_jobs_text(&m, &rows[i], jobs, sizeof(jobs));
			if (row_int(&m, &rows[i], "drained", 0))	/* fmt_safe's buffer is one */
				snprintf(jobs + strlen(jobs), sizeof(jobs) - strlen(jobs),
				    "%s(drained %s: no new jobs)", jobs[0] ? " " : "",
				    row_str(&m, &rows[i], "drain_reason") ?
				    fmt_safe(row_str(&m, &rows[i], "drain_reason")) : "");
			cells[G_JOBS] = jobs;
			table_row(&t, cells);
		}
		if (n == 0)
			printf("(no GPUs: %s)\n", proto_str(&m, "source") ?
			    fmt_safe(proto_str(&m, "source")) : "?");
		table_free(&t);
		if (a->format == NULL)
			gpus_host(&m);	/* not under a table of chosen columns */
	}
	free(rows);
	proto_msg_free(&m);
	return 0;
}
