/*
 * task.c: the job ids users type, as Slurm's: ID, A_ (every task of array
 * A; A_* too) and A_I (A's task of index I, which nvqd finds by an index,
 * schema 020); and what the CLI does with a whole array on its own: nvq
 * show A_ (the array summed up) and the look of nvq wait A_.  The
 * commands that act on every task (cancel, hold, ...) send the array to
 * nvqd (control.c).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "json.h"

#include "nvq.h"

int
task_id(const char *socket, const char *name, int64_t *id)
{
	struct proto_buf b = { 0 };
	struct proto_msg m;
	struct nvq_row *rows = NULL;
	const char *us = strchr(name, '_');
	char buf[32];
	long long index;
	int n;

	if (us == NULL) {
		if (parse_id(name, id) == 0)
			return TASK_JOB;
		nvq_err("\"%s\" is not a job id (ID, A_ for every task of array A, A_I for its "
		    "task I)", name);
		return TASK_BAD;
	}
	if ((size_t)(us - name) >= sizeof(buf) || us == name)
		goto bad;
	memcpy(buf, name, (size_t)(us - name));
	buf[us - name] = '\0';
	if (parse_id(buf, id) == -1)
		goto bad;
	if (us[1] == '\0' || strcmp(us + 1, "*") == 0)
		return TASK_ARRAY;
	if (us[1] < '0' || us[1] > '9' || parse_int(us + 1, 0, PARSE_MAX_INDEX, &index) == -1)
		goto bad;
	proto_begin(&b, MSG_SHOW);
	proto_put_int(&b, "array", *id);
	proto_put_int(&b, "index", index);
	n = client_call(socket, &b, &m);
	proto_buf_free(&b);
	if (n == -1)
		return TASK_FAILED;
	n = client_rows(&m, "id", 0, &rows);
	if (n >= 1)
		*id = row_int(&m, &rows[0], "id", 0);
	free(rows);
	proto_msg_free(&m);
	if (n < 1) {
		nvq_err("no task %s", name);
		return TASK_FAILED;
	}
	return TASK_JOB;
bad:
	nvq_err("\"%s\" is not a job id (ID, A_ for every task of array A, A_I for its task I "
	    "from 0 to %d)", name, PARSE_MAX_INDEX);
	return TASK_BAD;
}

/*
 * Array's summary from nvqd (MSG_SHOW with "array"; brief: its count of
 * active tasks alone while there are some): 0, or -1 (said).
 */
static int
task_fetch(const char *socket, int64_t array, int brief, struct proto_msg *m)
{
	struct proto_buf b = { 0 };
	int r;

	proto_begin(&b, MSG_SHOW);
	proto_put_int(&b, "array", array);
	proto_put_int(&b, "brief", brief != 0);
	r = client_call(socket, &b, m);
	proto_buf_free(&b);
	return r;
}

int
task_array_look(const char *socket, int64_t array, int64_t *active, char *failed, size_t len,
    int64_t *code, int64_t *sig)
{
	struct proto_msg m;
	struct nvq_row *rows = NULL;

	if (task_fetch(socket, array, 1, &m) == -1)
		return -1;
	*active = proto_int(&m, "active", 0);
	snprintf(failed, len, "COMPLETED");
	if (client_rows(&m, "failed", 0, &rows) > 0) {
		snprintf(failed, len, "%s", row_str(&m, &rows[0], "failed_state") ?
		    row_str(&m, &rows[0], "failed_state") : "FAILED");
		*code = row_int(&m, &rows[0], "failed_code", -1);
		*sig = row_int(&m, &rows[0], "failed_signal", 0);
	}
	free(rows);
	proto_msg_free(&m);
	return 0;
}

int
task_show_array(struct nvq_args *a, int64_t array)
{
	struct proto_msg m;
	struct nvq_row *counts = NULL, *tasks = NULL;
	int64_t total = 0;
	int i, nc, nt;

	if (task_fetch(a->socket, array, 0, &m) == -1)
		return 1;
	nc = client_rows(&m, "tasks", 0, &counts);
	nt = client_rows(&m, "task", 0, &tasks);
	for (i = 0; i < nc; i++)
		total += row_int(&m, &counts[i], "tasks", 0);
	if (a->json) {
		struct json *o = json_object(), *arr = json_object();

		json_add(o, "array", json_number((double)array));
		json_add(o, "tasks", json_number((double)total));
		for (i = 0; i < nc; i++)
			json_add(arr, row_str(&m, &counts[i], "task_state"),
			    json_number((double)row_int(&m, &counts[i], "tasks", 0)));
		json_add(o, "states", arr);
		arr = json_array();
		for (i = 0; i < nt; i++) {
			struct json *t = json_object();

			json_add(t, "id", json_number((double)row_int(&m, &tasks[i], "task", 0)));
			json_add(t, "index", json_number((double)row_int(&m, &tasks[i],
			    "task_index", 0)));
			json_add(t, "state", json_string(row_str(&m, &tasks[i], "task_state")));
			json_add(arr, NULL, t);
		}
		json_add(o, "first_tasks", arr);
		fmt_json_print(stdout, o);
		printf("\n");
	} else {
		printf("array %lld: %lld task%s:", (long long)array, (long long)total,
		    total == 1 ? "" : "s");
		for (i = 0; i < nc; i++)
			printf("%s %lld %s", i ? "," : "", (long long)row_int(&m, &counts[i],
			    "tasks", 0), fmt_safe(row_str(&m, &counts[i], "task_state")));
		printf("\n");
		for (i = 0; i < nt; i++) {
			const char *why = row_str(&m, &tasks[i], "task_reason");

			printf("  %lld_%-6lld job %-8lld %-10s %s\n", (long long)array,
			    (long long)row_int(&m, &tasks[i], "task_index", 0),
			    (long long)row_int(&m, &tasks[i], "task", 0),
			    fmt_safe(row_str(&m, &tasks[i], "task_state")),
			    why != NULL ? fmt_safe(why) : "");
		}
		if (total > nt)
			printf("  ... the first %d of %lld tasks (nvq list -r -a: every one)\n", nt,
			    (long long)total);
	}
	free(counts);
	free(tasks);
	proto_msg_free(&m);
	return 0;
}
