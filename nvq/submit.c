/*
 * submit.c: `nvq submit`: checks the sizes and times it is given, sends
 * the command, its working directory and its environment, and prints the
 * id nvqd committed.
 */
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "json.h"

#include "nvq.h"

extern char **environ;

/* Makes a relative path absolute against cwd. */
static void
submit_abs(const char *p, const char *cwd, char *buf, size_t len)
{
	if (*p == '/')
		snprintf(buf, len, "%s", p);
	else
		snprintf(buf, len, "%s/%s", cwd, p);
}

/* --stdin: one task per line (blank lines skipped); 0, or the exit status. */
static int
submit_lines(struct proto_buf *b)
{
	char *line = NULL;
	size_t cap = 0;
	ssize_t n;
	long count = 0;

	while ((n = getline(&line, &cap, stdin)) != -1) {
		while (n > 0 && (line[n - 1] == '\n' || line[n - 1] == '\r'))
			line[--n] = '\0';
		if (line[strspn(line, " \t")] == '\0')
			continue;
		if (++count > PARSE_MAX_TASKS) {
			nvq_err("--stdin: over %d lines", PARSE_MAX_TASKS);
			free(line);
			return 2;
		}
		proto_put_str(b, "line", line);
	}
	free(line);
	if (count == 0) {
		nvq_err("--stdin: no commands on standard input");
		return 2;
	}
	return 0;
}

int
submit_parse(const struct nvq_args *a, struct submit_values *v)
{
	memset(v, 0, sizeof(*v));
	v->gpus = a->gpus < 0 ? 1 : a->gpus;
	if (a->mem != NULL && strcmp(a->mem, "auto") == 0)
		v->mem_auto = 1;
	else if (a->mem != NULL && (parse_size(a->mem, &v->mem) == -1 || v->mem == 0)) {
		nvq_err("-m %s: not a memory size (e.g. 512M, 20G, 1.5T) nor auto", a->mem);
		return 2;
	}
	if (a->mem != NULL && v->gpus == 0) {
		nvq_err("-m is memory per GPU; it needs -g 1 or more");
		return 2;
	}
	if (a->time != NULL && (parse_duration(a->time, &v->secs) == -1 || v->secs == 0)) {
		nvq_err("-t %s: not a time limit (minutes, MM:SS, HH:MM:SS, D-HH:MM:SS, "
		    "or 45s, 30m, 2h, 1d)", a->time);
		return 2;
	}
	if (v->secs > PARSE_MAX_LIMIT) {
		nvq_err("-t %s: over the longest time limit, %lld days", a->time,
		    PARSE_MAX_LIMIT / 86400);
		return 2;
	}
	if (a->qos != NULL && (*a->qos == '\0' || strlen(a->qos) > 31)) {
		nvq_err("--qos %.40s: not a class's name (at most 31 characters; nvq.ini's "
		    "[qos NAME] sections name them)", a->qos);
		return 2;
	}
	if (a->prio != NULL && parse_int(a->prio, -1000000, 1000000, &v->prio) == -1) {
		nvq_err("-p %s: not a priority (a whole number, higher runs first)", a->prio);
		return 2;
	}
	if (a->signal != NULL && parse_signal(a->signal, &v->sig) == -1) {
		nvq_err("--signal %s: not a signal a job can act on (USR1, SIGTERM, 12, ...; "
		    "not KILL or STOP)", a->signal);
		return 2;
	}
	if (a->after != NULL &&
	    (v->nafter = parse_id_list(a->after, v->after, PARSE_MAX_IDS)) == -1) {
		nvq_err("--after %s: not a list of job ids (e.g. 12 or 12,13)", a->after);
		return 2;
	}
	if (a->array != NULL) {
		int64_t *idx = malloc(sizeof(*idx) * PARSE_MAX_TASKS);
		char why[128];
		int n, limit, r;

		if (idx == NULL) {
			nvq_err("out of memory");
			return 1;
		}
		r = parse_array(a->array, idx, PARSE_MAX_TASKS, &n, &limit, why, sizeof(why));
		free(idx);
		if (r == -1) {
			nvq_err("--array %s: %s", a->array, why);
			return 2;
		}
		if (n == 0 && !a->from_stdin) {
			nvq_err("--array %s: no indexes (only --stdin takes %%N alone)", a->array);
			return 2;
		}
		if (n > 0 && a->from_stdin) {
			nvq_err("--stdin numbers its tasks from 0: --array may only say how many "
			    "at once (%%N)");
			return 2;
		}
	}
	return 0;
}

int
cmd_submit(struct nvq_args *a)
{
	struct proto_buf b = { 0 };
	struct proto_msg rep;
	struct submit_values v;
	char cwd[PATH_MAX], out[PATH_MAX * 2], err[PATH_MAX * 2];
	int64_t id, tasks;
	int i, rc;

	if ((rc = submit_parse(a, &v)) != 0)
		return rc;
	if (a->from_stdin && a->argc > 0) {
		nvq_err("submit: --stdin reads the commands: give no command as well");
		return 2;
	}
	if (!a->from_stdin && a->argc == 0) {
		nvq_err("submit: missing arguments");
		fprintf(stderr, "usage: nvq submit [OPTIONS] [--] COMMAND [ARG...]\n");
		return 2;
	}
	if (getcwd(cwd, sizeof(cwd)) == NULL) {
		nvq_err("cannot tell the current directory");
		return 1;
	}
	proto_begin(&b, MSG_SUBMIT);
	for (i = 0; i < a->argc; i++)
		proto_put_str(&b, "arg", a->argv[i]);
	if (a->array != NULL)
		proto_put_str(&b, "array", a->array);
	if (a->from_stdin && (rc = submit_lines(&b)) != 0) {
		proto_buf_free(&b);
		return rc;
	}
	for (i = 0; environ[i] != NULL; i++)
		proto_put_str(&b, "env", environ[i]);
	proto_put_str(&b, "cwd", cwd);
	proto_put_int(&b, "gpus", v.gpus);
	proto_put_int(&b, "mem", (int64_t)v.mem);
	if (v.mem_auto)
		proto_put_int(&b, "mem_auto", 1);
	proto_put_int(&b, "priority", v.prio);
	if (a->qos != NULL)
		proto_put_str(&b, "qos", a->qos);
	proto_put_int(&b, "time", v.secs);
	if (a->requeue)
		proto_put_int(&b, "requeue", 1);
	if (a->hold)
		proto_put_int(&b, "hold", 1);
	if (a->attach)
		proto_put_int(&b, "attach", 1);	/* held until nvq run passes its terminal */
	if (a->allow != NULL)
		proto_put_str(&b, "allow", a->allow);
	if (a->deny != NULL)
		proto_put_str(&b, "deny", a->deny);
	if (v.sig > 0)
		proto_put_int(&b, "signal", v.sig);
	if (a->notify != NULL)
		proto_put_str(&b, "notify", a->notify);
	if (a->mail_user != NULL)
		proto_put_str(&b, "mail_user", a->mail_user);
	if (a->name != NULL)
		proto_put_str(&b, "name", a->name);
	for (i = 0; i < v.nafter; i++)
		proto_put_int(&b, "after", v.after[i]);
	if (a->out != NULL) {
		submit_abs(a->out, cwd, out, sizeof(out));
		proto_put_str(&b, "stdout", out);
	}
	if (a->err != NULL) {
		submit_abs(a->err, cwd, err, sizeof(err));
		proto_put_str(&b, "stderr", err);
	}
	if (client_call(a->socket, &b, &rep) == -1) {
		proto_buf_free(&b);
		return 1;
	}
	proto_buf_free(&b);
	id = proto_int(&rep, "id", 0);
	tasks = proto_int(&rep, "tasks", 0);
	if (a->attach)
		a->job_id = id;
	else if (a->json) {
		struct json *o = json_object();

		json_add(o, "id", json_number((double)id));
		json_add(o, "tasks", json_number((double)tasks));
		if (proto_str(&rep, "note") != NULL)
			json_add(o, "note", json_string(proto_str(&rep, "note")));
		fmt_json_print(stdout, o);
		printf("\n");
		proto_msg_free(&rep);
		return 0;
	} else if (a->parsable)
		printf("%lld\n", (long long)id);
	else if (tasks > 0)
		printf("Submitted array %lld: %lld task%s, jobs %lld to %lld\n", (long long)id,
		    (long long)tasks, tasks == 1 ? "" : "s", (long long)id,
		    (long long)(id + tasks - 1));
	else
		printf("Submitted job %lld\n", (long long)id);
	/* what nvqd chose for -m auto: beside the id, or on stderr under --parsable */
	if (proto_str(&rep, "note") != NULL && !a->attach)
		fprintf(a->parsable ? stderr : stdout, "%s\n", fmt_safe(proto_str(&rep, "note")));
	proto_msg_free(&rep);
	return 0;
}
