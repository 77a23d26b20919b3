/*
 * gpus.c: `nvq gpus`: each GPU's memory as nvqd accounts it.
 */
#include <stdlib.h>

#include "nvq.h"

int
cmd_gpus(struct nvq_args *a)
{
	struct proto_buf b = { 0 };
	struct proto_msg m;
	struct nvq_row *rows = NULL;
	char t[16], bu[16], d[16], o[16], u[16];
	int i, n;

	proto_begin(&b, MSG_GPUS);
	if (client_call(a->socket, &b, &m) == -1) {
		proto_buf_free(&b);
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
		printf("%-3s %-40s %-24s %-6s %7s %7s %8s %7s %7s  %s\n", "IDX", "UUID", "NAME",
		    "MODE", "TOTAL", "BUDGET", "DEMANDED", "USED", "OUTSIDE", "JOBS");
		for (i = 0; i < n; i++) {
			fmt_size((uint64_t)row_int(&m, &rows[i], "total", 0), t, sizeof(t));
			fmt_size((uint64_t)row_int(&m, &rows[i], "budget", 0), bu, sizeof(bu));
			fmt_size((uint64_t)row_int(&m, &rows[i], "demanded", 0), d, sizeof(d));
			fmt_size((uint64_t)row_int(&m, &rows[i], "outside", 0), o, sizeof(o));
			fmt_size((uint64_t)row_int(&m, &rows[i], "queue_used", 0), u, sizeof(u));
			printf("%-3lld %-40s %-24.24s %-6s %7s %7s %8s %7s %7s  %s%s\n",
			    (long long)row_int(&m, &rows[i], "index", 0),
			    fmt_safe(row_str(&m, &rows[i], "uuid")),
			    fmt_safe(row_str(&m, &rows[i], "name")),
			    fmt_safe(row_str(&m, &rows[i], "mode")), t, bu, d, u, o,
			    fmt_safe(row_str(&m, &rows[i], "jobs")),
			    row_int(&m, &rows[i], "drained", 0) ? " (drained: no new jobs)" : "");
		}
		if (n == 0)
			printf("(no GPUs: %s)\n", proto_str(&m, "source") ?
			    fmt_safe(proto_str(&m, "source")) : "?");
	}
	free(rows);
	proto_msg_free(&m);
	return 0;
}
