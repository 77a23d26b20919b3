/*
 * shares.c: `nvq shares`: each user's recent GPU use and the fair-share
 * priority it earns them; and the line `nvq list` ends with when fair
 * share is on.
 */
#include <stdio.h>
#include <stdlib.h>

#include "json.h"

#include "nvq.h"
#include "table.h"

/*
 * The row's user, as nvqd names it (nvq links statically, without the
 * system's user databases), or the uid.
 */
static void
shares_user(const struct proto_msg *m, const struct nvq_row *r, char *buf, size_t len)
{
	if (row_str(m, r, "user") != NULL)
		snprintf(buf, len, "%s", fmt_safe(row_str(m, r, "user")));
	else
		snprintf(buf, len, "%lld", (long long)row_int(m, r, "uid", 0));
}

/* A span of seconds as the configuration would say it: 7d, 12h, 90s. */
static void
shares_span(int64_t s, char *buf, size_t len)
{
	if (s > 0 && s % 86400 == 0)
		snprintf(buf, len, "%lldd", (long long)(s / 86400));
	else if (s > 0 && s % 3600 == 0)
		snprintf(buf, len, "%lldh", (long long)(s / 3600));
	else if (s > 0 && s % 60 == 0)
		snprintf(buf, len, "%lldm", (long long)(s / 60));
	else
		snprintf(buf, len, "%llds", (long long)s);
}

/* nvqd's answer: 0, or -1 (said). */
static int
shares_fetch(struct nvq_args *a, struct proto_msg *m)
{
	struct proto_buf b = { 0 };
	int r;

	proto_begin(&b, MSG_SHARES);
	r = client_call(a->socket, &b, m);
	proto_buf_free(&b);
	return r;
}

enum { S_USER, S_HOURS, S_USE, S_SHARE, S_PRIO, S_NOTE, S_NCOLS };

static const struct table_col shares_cols[S_NCOLS] = {
	[S_USER] = { "user", 16, 0 }, [S_HOURS] = { "gpu-hours", 10, 1 },
	[S_USE] = { "use", 6, 1 }, [S_SHARE] = { "share", 6, 1 },
	[S_PRIO] = { "priority", 9, 1 }, [S_NOTE] = { "note", 22, 0 },
};

int
cmd_shares(struct nvq_args *a)
{
	struct proto_msg m;
	struct nvq_row *rows = NULL;
	struct table t;
	char hl[32], cell[S_NCOLS][64];
	const char *cells[S_NCOLS];
	int i, k, n;

	if (!a->json && table_init(&t, shares_cols, S_NCOLS, "user,gpu-hours,use,share,priority,note",
	    a->format) == -1)
		return 2;
	if (shares_fetch(a, &m) == -1) {
		if (!a->json)
			table_free(&t);
		return 1;
	}
	n = client_rows(&m, "uid", 0, &rows);
	if (a->json) {
		struct json *o = json_object(), *users;

		json_add(o, "fairshare", json_bool(proto_int(&m, "fairshare", 0) != 0));
		json_add(o, "halflife", json_number((double)proto_int(&m, "halflife", 0)));
		json_add(o, "weight", json_number(proto_str(&m, "weight") ?
		    strtod(proto_str(&m, "weight"), NULL) : 0));
		users = json_array();
		for (i = 0; i < n; i++)
			json_add(users, NULL, fmt_json_obj(&m, &rows[i], 0));
		json_add(o, "users", users);
		fmt_json_print(stdout, o);
		printf("\n");
	} else {
		shares_span(proto_int(&m, "halflife", 0), hl, sizeof(hl));
		printf("fair share %s (half-life %s, weight %s); %lld user%s with jobs in the "
		    "queue\n", proto_int(&m, "fairshare", 0) ? "on" : "off", hl,
		    proto_str(&m, "weight") ? fmt_safe(proto_str(&m, "weight")) : "?",
		    (long long)proto_int(&m, "active", 0), proto_int(&m, "active", 0) == 1 ? "" : "s");
		table_header(&t);
		for (i = 0; i < n; i++) {
			int queued = row_int(&m, &rows[i], "queued", 0) != 0;

			for (k = 0; k < S_NCOLS; k++)
				cells[k] = cell[k];
			shares_user(&m, &rows[i], cell[S_USER], 64);
			snprintf(cell[S_HOURS], 64, "%.2f", row_real(&m, &rows[i], "gpu_hours"));
			snprintf(cell[S_USE], 64, "%.0f%%", 100 * row_real(&m, &rows[i], "use"));
			snprintf(cell[S_SHARE], 64, "%.0f%%", 100 * row_real(&m, &rows[i], "share"));
			snprintf(cell[S_PRIO], 64, "%+.1f", row_real(&m, &rows[i], "bonus"));
			snprintf(cell[S_NOTE], 64, "%s", queued ? "" : "(no jobs in the queue)");
			if (!queued)
				cells[S_USE] = cells[S_SHARE] = cells[S_PRIO] = NULL;
			table_row(&t, cells);
		}
		table_free(&t);
	}
	free(rows);
	proto_msg_free(&m);
	return 0;
}

void
shares_footer(struct nvq_args *a)
{
	struct proto_msg m;
	struct nvq_row *rows = NULL;
	char user[64];
	int i, n, k = 0;

	if (shares_fetch(a, &m) == -1)
		return;
	if (proto_int(&m, "fairshare", 0)) {
		n = client_rows(&m, "uid", 0, &rows);
		for (i = 0; i < n; i++) {
			if (!row_int(&m, &rows[i], "queued", 0))
				continue;
			shares_user(&m, &rows[i], user, sizeof(user));
			if (k++ == 0)
				printf("fair share among %lld users with jobs (a share is %.0f%%): ",
				    (long long)proto_int(&m, "active", 0),
				    100 * row_real(&m, &rows[i], "share"));
			else
				printf("; ");
			printf("%s used %.0f%%, %+.1f", user, 100 * row_real(&m, &rows[i], "use"),
			    row_real(&m, &rows[i], "bonus"));
		}
		if (k > 0)
			printf("\n");
	}
	free(rows);
	proto_msg_free(&m);
}
