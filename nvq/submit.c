/*
 * submit.c: `nvq submit`: checks the sizes and times it is given, sends
 * the command, its working directory and its environment, and prints the
 * id nvqd committed.
 */
#include <limits.h>
#include <pwd.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "dep.h"
#include "json.h"
#include "sbatch.h"

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

/* Whether path is a directory this user can enter. */
static int
submit_is_dir(const char *path)
{
	struct stat st;

	return stat(path, &st) == 0 && S_ISDIR(st.st_mode) && access(path, X_OK) == 0;
}

/* Whether an entry of the environment is one of those nvq sets here. */
static int
submit_sets(const char *entry)
{
	static const char *const names[] = { "SLURM_SUBMIT_DIR=", "SLURM_NTASKS=",
	    "SLURM_NPROCS=" };
	size_t i;

	for (i = 0; i < sizeof(names) / sizeof(names[0]); i++)
		if (strncmp(entry, names[i], strlen(names[i])) == 0)
			return 1;
	return 0;
}

/*
 * The job's environment: this one (what --export keeps of it, and the
 * values it gives), and Slurm's variables a submit knows: where it was
 * submitted from (a job's -D may be elsewhere) and srun's task count.
 */
static void
submit_env(struct proto_buf *b, const struct nvq_args *a, const char *cwd)
{
	char buf[8192], *dir;
	const char *v;
	int i;

	for (i = 0; environ[i] != NULL; i++)
		if (!submit_sets(environ[i]) && (a->export_spec == NULL ||
		    sbatch_export_keeps(a->export_spec, environ[i])))
			proto_put_str(b, "env", environ[i]);
	for (i = 0; a->export_spec != NULL &&
	    (v = sbatch_export_value(a->export_spec, i, buf, sizeof(buf))) != NULL; i++)
		if (!submit_sets(v))
			proto_put_str(b, "env", v);
	if ((dir = malloc(strlen(cwd) + 32)) != NULL) {
		sprintf(dir, "SLURM_SUBMIT_DIR=%s", cwd);
		proto_put_str(b, "env", dir);
		free(dir);
	}
	snprintf(buf, sizeof(buf), "SLURM_NTASKS=%d", a->ntasks > 0 ? a->ntasks : 1);
	proto_put_str(b, "env", buf);
	snprintf(buf, sizeof(buf), "SLURM_NPROCS=%d", a->ntasks > 0 ? a->ntasks : 1);
	proto_put_str(b, "env", buf);
}

/*
 * Where the mail at the job's end goes: --mail-user, or with --mail-type
 * END alone, the submitter (as Slurm does); none for --mail-type NONE.
 */
static const char *
submit_mail(const struct nvq_args *a)
{
	struct passwd *pw;
	char why[256];
	int mail = 1;

	if (a->mail_type != NULL && sbatch_mail_type(a->mail_type, &mail, why, sizeof(why)) == 0 &&
	    !mail)
		return NULL;
	if (a->mail_user != NULL || a->mail_type == NULL)
		return a->mail_user;
	return (pw = getpwuid(getuid())) != NULL ? pw->pw_name : NULL;
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

/* Slurm's names (sbatch.h) that need more than their own value: 0, or 2 (said). */
static int
submit_slurm(const struct nvq_args *a, struct submit_values *v)
{
	long long nice;

	if (a->nice != NULL && parse_int(a->nice, -10000, 10000, &nice) == -1) {
		nvq_err("--nice %s: not an adjustment (-10000 to 10000; higher runs later: "
		    "nvq's priority minus it)", a->nice);
		return 2;
	}
	if (a->nice != NULL)
		v->prio -= nice;
	if (a->gpus_per_task && a->ntasks > 1) {
		nvq_err("--gpus-per-task with --ntasks %d: srun's tasks share the job's GPUs "
		    "here; ask for them all (--gpus)", a->ntasks);
		return 2;
	}
	return 0;
}

int
submit_parse_host(const struct nvq_args *a, struct submit_values *v)
{
	long long n;

	if (a->cpus != NULL) {
		if (parse_int(a->cpus, 1, 65536, &n) == -1) {
			nvq_err("-c %s: not a number of CPUs (1 to 65536)", a->cpus);
			return 2;
		}
		v->cpus = (int)n;
	}
	if (a->host_mem != NULL && a->mem_per_cpu != NULL) {
		nvq_err("--mem and --mem-per-cpu: give one of them (as Slurm says)");
		return 2;
	}
	if (a->host_mem != NULL && (parse_size(a->host_mem, &v->host_mem) == -1 ||
	    v->host_mem == 0 || v->host_mem > INT64_MAX)) {
		nvq_err("--mem %s: not a size of host memory (e.g. 512M, 16G; a bare number is "
		    "MiB; 0, Slurm's whole node, is not taken here)", a->host_mem);
		return 2;
	}
	if (a->mem_per_cpu != NULL && (parse_size(a->mem_per_cpu, &v->mem_per_cpu) == -1 ||
	    v->mem_per_cpu == 0 || v->mem_per_cpu > INT64_MAX)) {
		nvq_err("--mem-per-cpu %s: not a size of host memory (e.g. 512M, 4G; a bare "
		    "number is MiB)", a->mem_per_cpu);
		return 2;
	}
	return 0;
}

/* A Slurm partition (or list of them) or account as Slurm writes it: 0, or -1 after saying why. */
static int
submit_slurm_name(const char *opt, const char *v)
{
	if (parse_slurm_name(v))
		return 0;
	nvq_err("%s %.40s%s: not a name (1 to %d letters, digits, _ . , -)", opt, v,
	    strlen(v) > 40 ? "..." : "", PARSE_MAX_SLURM_NAME);
	return -1;
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
	if (submit_parse_host(a, v) != 0)
		return 2;
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
	if (a->lcbe != NULL && strcmp(a->lcbe, "lc") != 0 && strcmp(a->lcbe, "be") != 0) {
		nvq_err("--class %.40s: not a class (lc: latency-critical, be: best-effort, the "
		    "default)", a->lcbe);
		return 2;
	}
	if (a->qos != NULL && (*a->qos == '\0' || strlen(a->qos) > 31)) {
		nvq_err("--qos %.40s: not a class's name (at most 31 characters; nvq.ini's "
		    "[qos NAME] sections name them)", a->qos);
		return 2;
	}
	if (a->prio != NULL && parse_int(a->prio, -1000000, 1000000, &v->prio) == -1) {
		nvq_err("-p %s: not a priority (a whole number, higher runs first)%s", a->prio,
		    a->prio[strspn(a->prio, "+-0123456789")] != '\0' ? "; -p is nvq's priority: "
		    "partitions are Slurm's (this is one server)" : "");
		return 2;
	}
	if (submit_slurm(a, v) != 0)
		return 2;
	if (a->signal != NULL && parse_signal(a->signal, &v->sig) == -1) {
		nvq_err("--signal %s: not a signal a job can act on (USR1, SIGTERM, 12, ...; "
		    "not KILL or STOP)", a->signal);
		return 2;
	}
	if ((a->partition != NULL && submit_slurm_name("--partition", a->partition) == -1) ||
	    (a->account != NULL && submit_slurm_name("--account", a->account) == -1))
		return 2;
	if (a->warn != NULL) {
		char why[160];

		if (parse_warn(a->warn, &v->warn_sig, &v->warn_time, &v->warn_batch, why,
		    sizeof(why)) == -1) {
			nvq_err("--signal %s: %s", a->warn, why);
			return 2;
		}
	}
	v->after[0] = '\0';
	if (a->after != NULL) {
		struct dep_list l = { .n = 0 };
		char why[160];
		size_t k;

		/* ids only (afterok, as before -d): 12,13 or A_ or A_I */
		if (strchr(a->after, ':') != NULL || strstr(a->after, "singleton") != NULL ||
		    dep_parse(a->after, DEP_AFTEROK, &l, why, sizeof(why)) == -1 ||
		    strlen(a->after) + 9 > sizeof(v->after)) {
			nvq_err("--after %s: not a list of job ids (e.g. 12, 12,13, 23_ for every "
			    "task of array 23, 23_7 for its task 7; other kinds: -d)", a->after);
			return 2;
		}
		snprintf(v->after, sizeof(v->after), "afterok:%s", a->after);
		for (k = 0; v->after[k] != '\0'; k++)
			if (v->after[k] == ',')
				v->after[k] = ':';
	}
	if (a->dependency != NULL) {
		struct dep_list l = { .n = 0 };
		char why[160];

		if (dep_parse(a->dependency, DEP_AFTERANY, &l, why, sizeof(why)) == -1) {
			nvq_err("--dependency %s: %s", a->dependency, why);
			return 2;
		}
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
	char cwd[PATH_MAX], wd[PATH_MAX * 2], out[PATH_MAX * 3], err[PATH_MAX * 3];
	int64_t id, tasks;
	int i, rc;

	if ((rc = submit_parse(a, &v)) != 0)
		return rc;
	/* here, not in submit_parse: a script's lines may give --time after --signal */
	if (v.warn_sig > 0 && v.secs == 0) {
		nvq_err("--signal %s: the job has no time limit (-t, --time) to be warned before",
		    a->warn);
		return 2;
	}
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
	/* -D/--chdir: where the job runs, and what its relative output paths start from */
	submit_abs(a->chdir != NULL ? a->chdir : cwd, cwd, wd, sizeof(wd));
	if (a->chdir != NULL && !submit_is_dir(wd)) {
		nvq_err("-D %s: not a directory you can reach", a->chdir);
		return 2;
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
	submit_env(&b, a, cwd);
	proto_put_str(&b, "cwd", wd);
	proto_put_int(&b, "gpus", v.gpus);
	proto_put_int(&b, "mem", (int64_t)v.mem);
	if (v.mem_auto)
		proto_put_int(&b, "mem_auto", 1);
	proto_put_int(&b, "priority", v.prio);
	if (v.cpus > 0)
		proto_put_int(&b, "cpus", v.cpus);
	if (v.host_mem > 0)
		proto_put_int(&b, "host_mem", (int64_t)v.host_mem);
	if (v.mem_per_cpu > 0)
		proto_put_int(&b, "mem_per_cpu", (int64_t)v.mem_per_cpu);
	if (a->qos != NULL)
		proto_put_str(&b, "qos", a->qos);
	if (a->lcbe != NULL)
		proto_put_str(&b, "class", a->lcbe);
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
	if (a->partition != NULL)
		proto_put_str(&b, "partition", a->partition);
	if (a->account != NULL)
		proto_put_str(&b, "account", a->account);
	if (v.warn_sig > 0) {
		proto_put_int(&b, "warn_signal", v.warn_sig);
		proto_put_int(&b, "warn_time", v.warn_time);
		if (v.warn_batch)
			proto_put_int(&b, "warn_batch", 1);
	}
	if (a->notify != NULL)
		proto_put_str(&b, "notify", a->notify);
	if (submit_mail(a) != NULL)
		proto_put_str(&b, "mail_user", submit_mail(a));
	if (a->name != NULL)
		proto_put_str(&b, "name", a->name);
	if (v.after[0] != '\0')
		proto_put_str(&b, "dep", v.after);
	if (a->dependency != NULL)
		proto_put_str(&b, "dep", a->dependency);
	if (a->out != NULL) {
		submit_abs(a->out, wd, out, sizeof(out));
		proto_put_str(&b, "stdout", out);
	}
	if (a->err != NULL) {
		submit_abs(a->err, wd, err, sizeof(err));
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
