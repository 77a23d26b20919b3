/*
 * jobs.c: `nvq list`, `nvq show` and `nvq history`: tables for people,
 * JSON for programs.  Every string from nvqd goes to people through fmt_safe().
 */
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>

#include "json.h"

#include "joules.h"
#include "num.h"
#include "nvq.h"
#include "table.h"

int
nvq_since(const char *since, int64_t *t)
{
	int64_t secs;
	struct tm tm;
	time_t now;
	char *end;

	/*
	 * A date (YYYY-MM-DD[THH:MM[:SS]]), a time today (HH:MM[:SS]), today,
	 * yesterday or midnight (local), or a span back from now (7d, 12h,
	 * now-7d: sacct's -S takes the same words).
	 */
	now = time(NULL);
	memset(&tm, 0, sizeof(tm));
	tm.tm_isdst = -1;
	if (strcasecmp(since, "today") == 0 || strcasecmp(since, "midnight") == 0 ||
	    strcasecmp(since, "yesterday") == 0) {
		localtime_r(&now, &tm);
		tm.tm_hour = tm.tm_min = tm.tm_sec = 0;
		tm.tm_mday -= strcasecmp(since, "yesterday") == 0;
		tm.tm_isdst = -1;
		*t = (int64_t)mktime(&tm);
	} else if (((end = strptime(since, "%Y-%m-%dT%H:%M:%S", &tm)) != NULL && !*end) ||
	    ((end = strptime(since, "%Y-%m-%dT%H:%M", &tm)) != NULL && !*end) ||
	    ((end = strptime(since, "%Y-%m-%d", &tm)) != NULL && !*end))
		*t = (int64_t)mktime(&tm);
	else if (((end = strptime(since, "%H:%M:%S", &tm)) != NULL && !*end) ||
	    ((end = strptime(since, "%H:%M", &tm)) != NULL && !*end)) {
		struct tm day;

		localtime_r(&now, &day);
		day.tm_hour = tm.tm_hour;
		day.tm_min = tm.tm_min;
		day.tm_sec = tm.tm_sec;
		day.tm_isdst = -1;
		*t = (int64_t)mktime(&day);
	} else if (parse_duration(strncasecmp(since, "now-", 4) == 0 ? since + 4 : since,
	    &secs) == 0)
		*t = (int64_t)now - secs;
	else {
		nvq_err("--since %s: not a date (2026-11-01, 2026-11-01T08:00), a time today "
		    "(08:00), today, yesterday, or a span back (7d, 12h, now-30m)", since);
		return -1;
	}
	return 0;
}

static int
jobs_filter(struct nvq_args *a, struct proto_buf *b, int type)
{
	int64_t t;

	proto_begin(b, type);
	if (a->user != NULL)
		proto_put_str(b, "user", a->user);
	if (a->state != NULL) {
		char st[128], bad[128];

		if (fmt_states(a->state, st, sizeof(st), bad, sizeof(bad)) == -1) {
			nvq_err("--state %s: \"%s\" is not one of PENDING, RUNNING, SUSPENDED, "
			    "COMPLETED, FAILED, CANCELLED, TIMEOUT, NODE_FAIL (any case; or Slurm's "
			    "PD, R, S, CD, F, CA, TO, NF; a list with commas)", a->state, bad);
			return -1;
		}
		proto_put_str(b, "state", st);
	}
	if (a->all)
		proto_put_int(b, "all", 1);
	if (a->since != NULL) {
		if (nvq_since(a->since, &t) == -1)
			return -1;
		proto_put_int(b, "since", t);
	}
	return 0;
}

/* "5G", "whole" or "-"; for a running job on real GPUs, "used/asked". */
static void
jobs_mem(const struct proto_msg *m, const struct nvq_row *r, char *buf, size_t len)
{
	char asked[16], used[16];
	int64_t u = row_int(m, r, "gpu_used", -1);

	if (row_int(m, r, "gpus", 0) == 0)
		snprintf(asked, sizeof(asked), "-");
	else if (row_int(m, r, "mem_per_gpu", 0) == 0)
		snprintf(asked, sizeof(asked), "whole");
	else
		fmt_size((uint64_t)row_int(m, r, "mem_per_gpu", 0), asked, sizeof(asked));
	if (u < 0) {
		snprintf(buf, len, "%s", asked);
		return;
	}
	fmt_size((uint64_t)u, used, sizeof(used));
	snprintf(buf, len, "%s/%s", used, asked);
}

static void
jobs_elapsed(const struct proto_msg *m, const struct nvq_row *r, double now, char *buf,
    size_t len)
{
	double start = row_real(m, r, "started_at"), end = row_real(m, r, "ended_at");

	if (start <= 0) {
		snprintf(buf, len, "-");
		return;
	}
	fmt_duration((int64_t)((end > 0 ? end : now) - start), buf, len);
}

/*
 * A running job's GPUs by index, as `nvq gpus` and CUDA_VISIBLE_DEVICES'
 * order number them, not by UUID: nvqd's GPU table is asked once, at the
 * first running job a listing shows.
 */
static struct {
	const char	*socket;
	int		asked, n;
	char		uuid[64][96];
	int		index[64];
} G;

static void
jobs_gpu_table(void)
{
	struct proto_buf b = { 0 };
	struct proto_msg m;
	struct nvq_row *rows = NULL;
	int i, n;

	G.asked = 1;
	proto_begin(&b, MSG_GPUS);
	if (client_call(G.socket, &b, &m) == -1) {
		proto_buf_free(&b);
		return;
	}
	proto_buf_free(&b);
	n = client_rows(&m, "index", 0, &rows);
	for (i = 0; i < n && G.n < 64; i++) {
		if (row_str(&m, &rows[i], "uuid") == NULL)
			continue;
		snprintf(G.uuid[G.n], sizeof(G.uuid[0]), "%s", row_str(&m, &rows[i], "uuid"));
		G.index[G.n++] = (int)row_int(&m, &rows[i], "index", -1);
	}
	free(rows);
	proto_msg_free(&m);
}

/* "GPU 0" or "GPUs 0,3" for a list of UUIDs; a UUID nvqd does not know stays as it is. */
static const char *
jobs_gpus(const char *uuids)
{
	static char buf[1024];
	char list[1000], one[100];
	const char *p, *comma;
	size_t at = 0;
	int k, count = 0;

	if (uuids == NULL || *uuids == '\0')
		return "";
	if (!G.asked)
		jobs_gpu_table();
	list[0] = '\0';
	for (p = uuids; *p != '\0' && at < sizeof(list); p = *comma ? comma + 1 : comma) {
		comma = p + strcspn(p, ",");
		snprintf(one, sizeof(one), "%.*s", (int)(comma - p), p);
		for (k = 0; k < G.n && strcmp(G.uuid[k], one) != 0; k++)
			;
		if (k < G.n)
			snprintf(one, sizeof(one), "%d", G.index[k]);
		at += (size_t)snprintf(list + at, sizeof(list) - at, "%s%s", count++ ? "," : "", one);
	}
	snprintf(buf, sizeof(buf), "GPU%s %s", count > 1 ? "s" : "", list);
	return buf;
}

static const char *
jobs_reason(const struct proto_msg *m, const struct nvq_row *r)
{
	const char *s = row_str(m, r, "state");

	if (row_str(m, r, "switch"))
		return row_str(m, r, "switch");
	if (s && (strcmp(s, "PENDING") == 0 || strcmp(s, "SUSPENDED") == 0) &&
	    row_str(m, r, "wait"))
		return row_str(m, r, "wait");
	if (row_str(m, r, "ending"))
		return row_str(m, r, "reason") ? row_str(m, r, "reason") : "stopping";
	if (s && strcmp(s, "RUNNING") == 0 && row_str(m, r, "lock") &&
	    strcmp(row_str(m, r, "lock"), "granted") != 0) {
		/* its launches wait: say why */
		static char buf[256];

		snprintf(buf, sizeof(buf), "lock %s; %s", row_str(m, r, "lock"),
		    jobs_gpus(row_str(m, r, "gpu_uuids")));
		return buf;
	}
	if (s && strcmp(s, "RUNNING") == 0)
		return jobs_gpus(row_str(m, r, "gpu_uuids"));
	return row_str(m, r, "reason") ? row_str(m, r, "reason") : "";
}

/* The columns of nvq list and nvq history (--format). */
enum { J_ID, J_USER, J_NAME, J_STATE, J_GPUS, J_MEM, J_ELAPSED, J_SUBMITTED, J_STARTED,
	J_ENDED, J_PRIORITY, J_LIMIT, J_EXIT, J_REASON, J_COMMAND, J_CWD, J_UUIDS, J_CPUS,
	J_HOST_MEM, J_QOS, J_NCOLS };

static const struct table_col jobs_cols[J_NCOLS] = {
	[J_ID] = { "id", 7, 0 }, [J_USER] = { "user", 10, 0 }, [J_NAME] = { "name", 20, 0 },
	[J_STATE] = { "state", 9, 0 }, [J_GPUS] = { "gpus", 4, 1 }, [J_MEM] = { "mem", 11, 1 },
	[J_ELAPSED] = { "elapsed", 8, 1 }, [J_SUBMITTED] = { "submitted", 19, 0 },
	[J_STARTED] = { "started", 19, 0 }, [J_ENDED] = { "ended", 19, 0 },
	[J_PRIORITY] = { "priority", 8, 1 }, [J_LIMIT] = { "limit", 7, 1 },
	[J_EXIT] = { "exit", 4, 1 }, [J_REASON] = { "reason", 40, 0 },
	[J_COMMAND] = { "command", 30, 0 }, [J_CWD] = { "cwd", 30, 0 },
	[J_UUIDS] = { "uuids", 40, 0 },
	[J_CPUS] = { "cpus", 4, 1 }, [J_HOST_MEM] = { "host_mem", 8, 1 },
	[J_QOS] = { "qos", 10, 0 },
};

#define JOBS_LIST_COLS		"id,user,name,state,gpus,mem,cpus,elapsed,reason"
#define JOBS_HISTORY_COLS	"id,user,name,state,gpus,mem,cpus,elapsed,ended,reason"

/* A row's cells, as text to show (every string through fmt_safe). */
struct jobs_cells {
	char		small[J_NCOLS][64];
	char		reason[512], command[4096], cwd[4096], uuids[2048];
	const char	*cell[J_NCOLS];
};

/*
 * The cells of a row that are shown (bit J_x of show), and its reason
 * always (folding compares it); the others are left empty.
 */
static void
jobs_cells(const struct proto_msg *m, const struct nvq_row *r, double now, int fold,
    uint32_t show, struct jobs_cells *c)
{
	const char *nm = row_str(m, r, "name"), *user = row_str(m, r, "user");
	int64_t arr = row_int(m, r, "array_id", 0), idx = row_int(m, r, "array_index", 0);
	int64_t lim, code;
	int i;

#define SHOWN(col)	(show & (1u << (col)))
	for (i = 0; i < J_NCOLS; i++) {
		c->small[i][0] = '\0';
		c->cell[i] = c->small[i];
	}
	if (SHOWN(J_ID))
		num_int(row_int(m, r, "id", 0), c->small[J_ID]);
	if (SHOWN(J_USER))
		fmt_copy(c->small[J_USER], 64, user ? fmt_safe(user) : "?");
	/* a task of an array: its index beside its name (a folded line: the name alone) */
	if (SHOWN(J_NAME) && arr != 0 && !fold) {
		char ix[24];
		size_t room;

		snprintf(ix, sizeof(ix), "[%lld]", (long long)idx);
		room = strlen(ix) < 18 ? 20 - strlen(ix) : 2;
		fmt_cut(c->small[J_NAME], 40, fmt_safe(nm), room);
		strncat(c->small[J_NAME], ix, 63 - strlen(c->small[J_NAME]));
	} else if (SHOWN(J_NAME))
		fmt_cut(c->small[J_NAME], 64, fmt_safe(nm), 20);
	if (SHOWN(J_STATE))
		fmt_copy(c->small[J_STATE], 64, fmt_safe(row_str(m, r, "state")));
	if (SHOWN(J_GPUS))
		num_int(row_int(m, r, "gpus", 0), c->small[J_GPUS]);
	if (SHOWN(J_MEM))
		jobs_mem(m, r, c->small[J_MEM], 64);
	/* -c and --mem; "-" where none was recorded or asked */
	if (SHOWN(J_CPUS) && row_int(m, r, "cpus", 0) > 0)
		num_int(row_int(m, r, "cpus", 0), c->small[J_CPUS]);
	else if (SHOWN(J_CPUS))
		fmt_copy(c->small[J_CPUS], 64, "-");
	if (SHOWN(J_HOST_MEM) && row_int(m, r, "host_mem", 0) > 0)
		fmt_size((uint64_t)row_int(m, r, "host_mem", 0), c->small[J_HOST_MEM], 64);
	else if (SHOWN(J_HOST_MEM))
		fmt_copy(c->small[J_HOST_MEM], 64, "-");
	if (SHOWN(J_ELAPSED))
		jobs_elapsed(m, r, now, c->small[J_ELAPSED], 64);
	if (SHOWN(J_SUBMITTED))
		fmt_time(row_real(m, r, "submitted_at"), c->small[J_SUBMITTED], 64);
	if (SHOWN(J_STARTED))
		fmt_time(row_real(m, r, "started_at"), c->small[J_STARTED], 64);
	if (SHOWN(J_ENDED))
		fmt_time(row_real(m, r, "ended_at"), c->small[J_ENDED], 64);
	if (SHOWN(J_PRIORITY))
		num_int(row_int(m, r, "priority", 0), c->small[J_PRIORITY]);
	if (SHOWN(J_QOS))
		fmt_copy(c->small[J_QOS], 64, row_str(m, r, "qos") ? fmt_safe(row_str(m, r, "qos")) :
		    "-");
	if (SHOWN(J_LIMIT) && (lim = row_int(m, r, "time_limit", 0)) > 0)
		fmt_duration(lim, c->small[J_LIMIT], 64);
	else if (SHOWN(J_LIMIT))
		fmt_copy(c->small[J_LIMIT], 64, "-");
	if (SHOWN(J_EXIT) && (code = row_int(m, r, "exit_code", -1)) >= 0)
		num_int(code, c->small[J_EXIT]);
	else if (SHOWN(J_EXIT) && row_int(m, r, "signal", 0) > 0)
		snprintf(c->small[J_EXIT], 64, "sig%lld", (long long)row_int(m, r, "signal", 0));
	else if (SHOWN(J_EXIT))
		fmt_copy(c->small[J_EXIT], 64, "-");
	fmt_copy(c->reason, sizeof(c->reason), fmt_safe(jobs_reason(m, r)));
	c->command[0] = c->cwd[0] = c->uuids[0] = '\0';
	if (SHOWN(J_COMMAND))
		fmt_copy(c->command, sizeof(c->command), fmt_safe(row_str(m, r, "command")));
	if (SHOWN(J_CWD))
		fmt_copy(c->cwd, sizeof(c->cwd), fmt_safe(row_str(m, r, "cwd")));
	if (SHOWN(J_UUIDS))
		fmt_copy(c->uuids, sizeof(c->uuids), row_str(m, r, "gpu_uuids") ?
		    fmt_safe(row_str(m, r, "gpu_uuids")) : "-");
#undef SHOWN
	c->cell[J_REASON] = c->reason;
	c->cell[J_COMMAND] = c->command;
	c->cell[J_CWD] = c->cwd;
	c->cell[J_UUIDS] = c->uuids;
}

/* The columns t shows, a bit each (J_x). */
static uint32_t
jobs_shown(const struct table *t)
{
	uint32_t show = 0;
	int k;

	for (k = 0; k < t->nsel; k++)
		show |= 1u << t->sel[k];
	return show;
}

/*
 * The pending tasks of an array in a row, folded into one line of the
 * table (unless -r): as Slurm's squeue shows them, 12_[3-99].
 */
static struct {
	int64_t			array, id, first, last;
	long			n;
	struct jobs_cells	c;	/* the first's */
} F;

static void
jobs_fold_flush(struct table *t)
{
	char why[600];

	if (F.n == 0)
		return;
	if (F.n > 1) {
		snprintf(F.c.small[J_ID], 64, "%lld_[%lld-%lld]", (long long)F.array,
		    (long long)F.first, (long long)F.last);
		snprintf(why, sizeof(why), "%ld tasks: %s", F.n, F.c.reason);
		snprintf(F.c.reason, sizeof(F.c.reason), "%s", why);
	}
	table_row(t, F.c.cell);
	F.n = 0;
}

/* One page's rows of a JSON array; *done counts the rows before them. */
static void
jobs_json(const struct proto_msg *m, struct nvq_row *rows, int n, long *done)
{
	int i;

	for (i = 0; i < n; i++) {
		printf(*done + i ? ",\n " : "\n ");
		fmt_json_row(stdout, m, &rows[i]);
	}
	*done += n;
}

/*
 * One page of the listing (nvqd's ctl.c says how they go), printed; *after
 * becomes the next page's cursor, 0 after the last.  0, or -1.
 */
static int
jobs_page(struct nvq_args *a, struct table *t, int type, int64_t *after, double *now, long *done)
{
	static struct jobs_cells c;
	struct proto_buf b = { 0 };
	struct proto_msg m;
	struct nvq_row *rows = NULL;
	int i, n;

	G.socket = a->socket;
	if (jobs_filter(a, &b, type) == -1) {
		proto_buf_free(&b);
		return -2;
	}
	if (*after > 0)
		proto_put_int(&b, "after", *after);
	if (client_call(a->socket, &b, &m) == -1) {
		proto_buf_free(&b);
		return -1;
	}
	proto_buf_free(&b);
	if (*done == 0 && *after == 0) {
		/* one clock for every page: the first's */
		*now = proto_str(&m, "now") ? strtod(proto_str(&m, "now"), NULL) :
		    (double)time(NULL);
		if (a->json)
			printf("[");
		else
			table_header(t);
	}
	n = client_rows(&m, "id", 0, &rows);
	if (a->json)
		jobs_json(&m, rows, n, done);
	else {
		uint32_t show = jobs_shown(t);

		*done += n;
		for (i = 0; i < n; i++) {
			int64_t arr = row_int(&m, &rows[i], "array_id", 0);
			int64_t idx = row_int(&m, &rows[i], "array_index", 0);
			const char *st = row_str(&m, &rows[i], "state");
			int fold = !a->expand && type == MSG_LIST && arr != 0 && st != NULL &&
			    strcmp(st, "PENDING") == 0;

			jobs_cells(&m, &rows[i], *now, fold, show, &c);
			if (fold && F.n > 0 && F.array == arr && strcmp(F.c.reason, c.reason) == 0) {
				F.last = idx;
				F.n++;
				continue;
			}
			jobs_fold_flush(t);
			if (fold) {
				F.array = arr;
				F.id = row_int(&m, &rows[i], "id", 0);
				F.first = F.last = idx;
				F.n = 1;
				F.c = c;
				for (int k = 0; k < J_NCOLS; k++)
					F.c.cell[k] = F.c.small[k];
				F.c.cell[J_REASON] = F.c.reason;
				F.c.cell[J_COMMAND] = F.c.command;
				F.c.cell[J_CWD] = F.c.cwd;
				F.c.cell[J_UUIDS] = F.c.uuids;
				continue;
			}
			table_row(t, c.cell);
		}
	}
	/* an nvqd without pages sends everything at once, and no "more" */
	*after = proto_int(&m, "more", 0) && proto_int(&m, "next", 0) > *after ?
	    proto_int(&m, "next", 0) : 0;
	free(rows);
	proto_msg_free(&m);
	fflush(stdout);
	return 0;
}

static int
jobs_table(struct nvq_args *a, int type)
{
	struct table t;
	int64_t after = 0;
	double now = 0;
	long done = 0;
	int r;

	if (!a->json && table_init(&t, jobs_cols, J_NCOLS, type == MSG_HISTORY ?
	    JOBS_HISTORY_COLS : JOBS_LIST_COLS, a->format) == -1)
		return 2;
	do {
		if ((r = jobs_page(a, &t, type, &after, &now, &done)) < 0) {
			if (a->json && done + after > 0)
				printf("\n]\n");	/* what came is still valid JSON */
			if (!a->json)
				table_free(&t);
			return r == -2 ? 2 : 1;
		}
	} while (after > 0);
	if (a->json)
		printf("%s]\n", done ? "\n" : "");
	else {
		jobs_fold_flush(&t);
		table_free(&t);
	}
	return 0;
}

int
cmd_list(struct nvq_args *a)
{
	int r = jobs_table(a, MSG_LIST);

	if (r == 0 && !a->json)
		shares_footer(a);
	return r;
}

int
cmd_history(struct nvq_args *a)
{
	return jobs_table(a, MSG_HISTORY);
}

int
jobs_fetch(const char *socket, int64_t id, struct proto_msg *m, struct nvq_row *job)
{
	struct proto_buf b = { 0 };
	struct nvq_row *rows = NULL;
	int n;

	proto_begin(&b, MSG_SHOW);
	proto_put_int(&b, "id", id);
	n = client_call(socket, &b, m);
	proto_buf_free(&b);
	if (n == -1)
		return -1;
	if ((n = client_rows(m, "id", 0, &rows)) < 1) {
		free(rows);
		proto_msg_free(m);
		nvq_err("no such job %lld", (long long)id);
		return -1;
	}
	*job = rows[0];
	/* the job's row ends where its runs begin */
	for (n = job->start + 1; n < job->end; n++)
		if (strcmp(m->fields[n].key, "run") == 0 || strcmp(m->fields[n].key, "at") == 0) {
			job->end = n;
			break;
		}
	free(rows);
	return 0;
}

/* A number of nvq show's for people: sizes (2G) and spans (1h30m); 0 if it is neither. */
static int
jobs_human(const struct proto_field *f, char *buf, size_t len)
{
	size_t n = strlen(f->key);

	if (strcmp(f->key, "mem_per_gpu") == 0 && f->i == 0)
		snprintf(buf, len, "whole GPUs");
	else if ((strcmp(f->key, "host_mem") == 0 || strcmp(f->key, "mem_per_cpu") == 0) &&
	    f->i == 0)
		snprintf(buf, len, "none");
	else if (strcmp(f->key, "mem_per_cpu") == 0)
		fmt_size((uint64_t)f->i, buf, len);
	else if (strcmp(f->key, "mem_per_gpu") == 0 || strcmp(f->key, "gpu_used") == 0 ||
	    strcmp(f->key, "gpu_peak") == 0 || strcmp(f->key, "granted") == 0 ||
	    strcmp(f->key, "max_rss") == 0 || (n >= 4 && strcmp(f->key + n - 4, "_mem") == 0) ||
	    (n >= 5 && strcmp(f->key + n - 5, "bytes") == 0)) {
		if (f->i < 0)
			return 0;
		fmt_size((uint64_t)f->i, buf, len);
	} else if (strcmp(f->key, "time_limit") == 0 && f->i > 0)
		fmt_duration(f->i, buf, len);
	else
		return 0;
	return 1;
}

/*
 * A field of nvq show as people read it: sizes and spans (jobs_human),
 * times (*_at) in the one time format of every table, seconds (*_time,
 * *seconds) as 1.50s; the rest as it came.
 */
static const char *
jobs_value(const struct proto_field *f, char *buf, size_t len)
{
	size_t n = strlen(f->key);

	if (f->kind == 'i') {
		if (!jobs_human(f, buf, len))
			snprintf(buf, len, "%lld", (long long)f->i);
		return buf;
	}
	if (n > 3 && strcmp(f->key + n - 3, "_at") == 0 && f->s[0] != '\0') {
		fmt_time(strtod(f->s, NULL), buf, len);
		return buf;
	}
	if (((n > 5 && strcmp(f->key + n - 5, "_time") == 0) ||
	    (n >= 7 && strcmp(f->key + n - 7, "seconds") == 0)) && f->s[0] != '\0' &&
	    strspn(f->s, "-0123456789.") == strlen(f->s)) {
		snprintf(buf, len, "%.2fs", strtod(f->s, NULL));
		return buf;
	}
	return fmt_safe(f->s);
}

/*
 * A run's field of nvq show: its energy in J, Wh or kWh ("unknown" as it
 * came), per GPU as UUID, energy, how; the rest as jobs_value says.
 */
static const char *
jobs_run_value(const struct proto_field *f, char *buf, size_t len)
{
	if (f->kind == 's' && strcmp(f->key, "energy") == 0) {
		joules_fmt(strcmp(f->s, "unknown") == 0 ? -1 : num_real(f->s), buf, len);
		return buf;
	}
	if (f->kind == 's' && strcmp(f->key, "gpu_energy") == 0) {
		joules_list(fmt_safe(f->s), buf, len);
		return buf;
	}
	return jobs_value(f, buf, len);
}

int
cmd_show(struct nvq_args *a)
{
	struct proto_msg m;
	struct nvq_row job, *runs = NULL, *events = NULL, *sws = NULL;
	int64_t id;
	int i, k, nruns, nevents, nsw;
	char t[32], rv[1024];

	switch (task_id(a->socket, a->argv[0], &id)) {
	case TASK_BAD:
		return 2;
	case TASK_FAILED:
		return 1;
	case TASK_ARRAY:
		return task_show_array(a, id);
	}
	if (jobs_fetch(a->socket, id, &m, &job) == -1)
		return 1;
	nruns = client_rows(&m, "run", job.end, &runs);
	nevents = client_rows(&m, "at", job.end, &events);
	nsw = client_rows(&m, "kind", job.end, &sws);
	if (nruns > 0 && nevents > 0)
		runs[nruns - 1].end = events[0].start;
	if (nevents > 0 && nsw > 0)
		events[nevents - 1].end = sws[0].start;
	if (a->json) {
		/* the job's fields alone on the first line (head -1 is the job) */
		struct json *arr;

		printf("{\"job\": ");
		fmt_json_row(stdout, &m, &job);
		arr = json_array();
		for (i = 0; i < nruns; i++)
			json_add(arr, NULL, fmt_json_obj(&m, &runs[i], 0));
		printf(",\n \"runs\": ");
		fmt_json_print(stdout, arr);
		arr = json_array();
		for (i = 0; i < nevents; i++)
			json_add(arr, NULL, fmt_json_obj(&m, &events[i], 0));
		printf(",\n \"events\": ");
		fmt_json_print(stdout, arr);
		arr = json_array();
		for (i = 0; i < nsw; i++)
			json_add(arr, NULL, fmt_json_obj(&m, &sws[i], 0));
		printf(",\n \"switches\": ");
		fmt_json_print(stdout, arr);
		printf("}\n");
	} else {
		for (i = job.start; i < job.end; i++) {
			const struct proto_field *f = &m.fields[i];
			if (strcmp(f->key, "now") == 0)
				continue;
			printf("%-13s %s\n", fmt_safe(f->key), jobs_value(f, t, sizeof(t)));
		}
		for (i = 0; i < nruns; i++) {
			printf("run %lld:", (long long)row_int(&m, &runs[i], "run", 0));
			for (k = runs[i].start + 1; k < runs[i].end; k++)
				printf(" %s=%s", fmt_safe(m.fields[k].key),
				    jobs_run_value(&m.fields[k], rv, sizeof(rv)));
			printf("\n");
		}
		for (i = 0; i < nevents; i++) {
			const char *r = row_str(&m, &events[i], "reason");
			fmt_time(row_real(&m, &events[i], "at"), t, sizeof(t));
			printf("event %s %-9s %s\n", t, fmt_safe(row_str(&m, &events[i], "state")),
			    fmt_safe(r));
		}
		for (i = 0; i < nsw; i++) {
			printf("switch %s:", fmt_safe(row_str(&m, &sws[i], "kind")));
			for (k = sws[i].start + 1; k < sws[i].end; k++)
				printf(" %s=%s", fmt_safe(m.fields[k].key),
				    jobs_value(&m.fields[k], t, sizeof(t)));
			printf("\n");
		}
	}
	free(runs);
	free(events);
	free(sws);
	proto_msg_free(&m);
	return 0;
}
