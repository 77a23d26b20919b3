/*
 * nvq.c: the CLI's entry point and command table.  Options of every
 * command are parsed here, in one place, against what the command accepts;
 * argument counts are checked here too; then the command's function runs.
 * Exit status: 0 done, 1 failed (the reason on stderr), 2 bad usage.
 */
#include <errno.h>
#include <getopt.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "nvq.h"
#include "opthelp.h"
#include "parse.h"
#include "proto.h"
#include "roff.h"
#include "sbatch.h"
#include "version.h"



/* Slurm's names that nvq submit and nvq run take (sbatch.h) */
#define NVQ_SLURM_USAGE "       Slurm's names: [-J NAME] [-G [TYPE:]N] [--gres gpu[:TYPE][:N]] " \
	"[--gpus-per-node N] [--gpus-per-task N] [-D DIR] [--export ALL|NONE|NAME[=V],...] " \
	"[--nice N] [--mail-type END[,FAIL]|NONE] [-N 1] [--ntasks N]"
#define NVQ_SLURM_OPTS "G:J:D:N:"
#define NVQ_SLURM_LONGS "job-name gres gpus-per-node gpus-per-task chdir export nice " \
	"mail-type nodes ntasks ntasks-per-node partition account qos"

static const struct nvq_cmd nvq_cmds[] = {
	{ "submit", "[-g GPUS] [-m GPU_MEM] [-c CPUS] [--mem SIZE|--mem-per-cpu SIZE] [-p PRIORITY] [-n NAME] [-t TIME] [--after ID[,ID...]] "
	  "[-d LIST] [-o FILE] [-e FILE] [-w GPUS] [-x GPUS] [--hold] [--requeue] [--signal [B:]SIG[@TIME]] "
	  "[--notify COMMAND] [--mail-user ADDRESS] [--array SPEC] [--parsable] [--json] "
	  "[--qos CLASS] [--class lc|be] [--] COMMAND [ARG...]\n"
	  "       nvq submit [OPTIONS] --stdin   (one task per line: an array)\n"
	  "       (a script's #SBATCH lines, then its #NVQ lines; the command line wins)\n"
	  NVQ_SLURM_USAGE,
	  "+g:m:c:p:n:t:o:e:w:x:d:" NVQ_SLURM_OPTS, "gpus gpu-mem priority name time output error "
	  "after parsable requeue signal array stdin hold gpu-list exclude notify mail-user json "
	  "cpus-per-task mem mem-per-cpu dependency class " NVQ_SLURM_LONGS,
	  0, -1, cmd_submit, "queue a command (1 GPU, the whole GPU, unless told)" },
	{ "run", "[-g GPUS] [-m GPU_MEM] [-c CPUS] [--mem SIZE|--mem-per-cpu SIZE] [-p PRIORITY] [-n NAME] [-t TIME] [--after ID[,ID...]] "
	  "[-d LIST] [-o FILE] [-e FILE] [-w GPUS] [-x GPUS] [--requeue] [--signal [B:]SIG[@TIME]] [--qos CLASS] [--class lc|be] [--] "
	  "COMMAND [ARG...]\n" NVQ_SLURM_USAGE,
	  "+g:m:c:p:n:t:o:e:w:x:d:" NVQ_SLURM_OPTS, "gpus gpu-mem priority name time output error "
	  "after requeue signal gpu-list exclude cpus-per-task mem mem-per-cpu dependency class "
	  NVQ_SLURM_LONGS,
	  1, -1, cmd_run, "queue a command and stay: its output here, its exit status nvq's; on a "
	  "terminal, one of its own (srun --pty): Ctrl-C is its SIGINT, twice in 1 s cancels it" },
	{ "list", "[-a] [-r] [-u USER] [--state STATE] [--format COLUMNS] [--json]", "aru:",
	  "all expand user state json format",
	  0, 0, cmd_list, "pending and running jobs; -a adds finished ones" },
	{ "show", "[--json] ID   (A_: array A summed up; A_I: its task I)", "", "json", 1, 1,
	  cmd_show, "one job, its runs and events" },
	{ "cancel", "[--all] [-u USER] [-t STATES] [-n NAME] [ID...]   (A_: every task of "
	  "array A; A_I: its task I; the filters narrow each other and the ids given)",
	  "au:t:n:", "all user state name", 0, -1, cmd_cancel,
	  "cancel jobs (your own; root: any), by id or by filter" },
	{ "hold", "ID...   (A_: every task of array A; A_I: its task I)", "", "", 1, -1, cmd_hold,
	  "pending jobs: not started until released; running ones: their GPU locks "
	  "taken back" },
	{ "release", "ID...   (A_: every task of array A; A_I: its task I)", "", "", 1, -1, cmd_hold,
	  "let held pending jobs start; give running ones their GPU locks back" },
	{ "top", "[ID...]   (A_: every task of array A; A_I: its task I)", "", "", 0, -1, cmd_top,
	  "a live view of the GPUs and the queue (q quits); with ids: move pending jobs to "
	  "the front of their owner's jobs of their priority" },
	{ "modify", "[-p PRIORITY] [-m GPU_MEM] [-c CPUS] [--mem SIZE] [-t TIME] ID   (A_: every "
	  "pending task of array A; A_I: its task I)", "m:c:p:t:",
	  "gpu-mem priority time cpus-per-task mem",
	  1, 1, cmd_modify, "change a pending job's priority, GPU memory, CPUs, host memory or "
	  "time limit" },
	{ "requeue", "ID...   (A_: every running task of array A; A_I: its task I)", "", "", 1,
	  -1, cmd_requeue,
	  "stop running jobs and queue them again (a new run, the same job)" },
	{ "restart", "[--failed [--since WHEN]] [--json] [ID...]   (A_I: task I of array A)", "",
	  "failed since json", 0, -1,
	  cmd_restart,
	  "finished jobs queued again (a new run, the same job); --failed: those that failed" },
	{ "drain", "GPU [REASON...]", "", "", 1, -1, cmd_drain,
	  "no new jobs on a GPU (index or UUID); its running jobs finish (admins)" },
	{ "undrain", "GPU", "", "", 1, 1, cmd_drain, "let new jobs start on a drained GPU" },
	{ "suspend", "ID...   (A_: every task of array A; A_I: its task I)", "", "", 1, -1, cmd_suspend,
	  "move running jobs' GPU memory to host memory; their processes live on" },
	{ "resume", "ID...   (A_: every task of array A; A_I: its task I)", "", "", 1, -1, cmd_suspend,
	  "let suspended jobs resume, on their GPUs, once their memory fits" },
	{ "log", "[-f] [--err] ID   (A_I: task I of array A)", "f", "follow err", 1, 1, cmd_log,
	  "print a job's stdout (--err: stderr); -f follows it" },
	{ "wait", "ID...   (A_: every task of array A; A_I: its task I)", "", "", 1, -1, cmd_wait,
	  "wait for jobs to end; exit with the first failure's status" },
	{ "history", "[--since WHEN] [-u USER] [--state STATE] [--format COLUMNS] [--json]", "u:",
	  "since user state json format", 0, 0, cmd_history, "finished jobs" },
	{ "gpus", "[--format COLUMNS] [--json]", "", "json format", 0, 0, cmd_gpus,
	  "GPUs: total, budget, demanded, used outside the queue" },
	{ "stats", "[--since WHEN] [-u USER] [--json]", "u:", "since user json", 0, 0, cmd_stats,
	  "the history summed up: GPU-hours and energy (per user, per job name), "
	  "waits, memory asked vs used, failures" },
	{ "web-token", "[--new]", "", "new", 0, 0, cmd_web_token,
	  "your link to the dashboard ([web] listen); --new: a new one, the old one void" },
	{ "shares", "[--format COLUMNS] [--json]", "", "json format", 0, 0, cmd_shares,
	  "users' recent GPU-hours and the fair-share priority they earn" },
};
#define NVQ_NCMDS (sizeof(nvq_cmds) / sizeof(nvq_cmds[0]))

static void
nvq_usage(FILE *fp)
{
	size_t i;

	fprintf(fp, "usage: nvq [-s SOCKET] COMMAND [ARGS]\n       nvq --version\n\ncommands:\n");
	for (i = 0; i < NVQ_NCMDS; i++)
		fprintf(fp, "  %-8s %s\n", nvq_cmds[i].name, nvq_cmds[i].help);
	fprintf(fp, "\n`nvq COMMAND --help` for a command's options. The socket: -s, else "
	    "$NVQ_SOCKET,\nelse [daemon] socket in $NVQ_CONFIG or /etc/nvq/nvq.ini, else the "
	    "per-user nvqd's,\nelse /run/nvq/nvqd.sock.\n");
}

/* nvq(1), from the command table: each command's usage and what it does. */
static void
nvq_man(FILE *fp)
{
	size_t i;

	roff_head(fp, "nvq", 1, "submit and follow GPU jobs in nvqd's queue");
	fputs(".SH SYNOPSIS\n.B nvq\n[\\-s SOCKET] COMMAND [ARGS]\n.SH DESCRIPTION\n", fp);
	roff_text(fp, "nvq talks to nvqd(8), the queue of a shared GPU server: a job asks for "
	    "GPUs (-g, default 1) and GPU memory per GPU (-m, --gpu-mem; without it, whole GPUs), "
	    "CPUs (-c, --cpus-per-task) and host memory (--mem, --mem-per-cpu: Slurm's "
	    "meanings, a bare number is MiB), waits until they fit, and runs as its owner, in the directory and with the environment "
	    "it was submitted from, its output in files (-o, -e). Its runs and every state "
	    "it went through stay in the database, which the sqlite3 shell reads.\n");
	fputs(".SH COMMANDS\n", fp);
	for (i = 0; i < NVQ_NCMDS; i++) {
		char name[64];

		snprintf(name, sizeof(name), "nvq %s", nvq_cmds[i].name);
		roff_item(fp, name, nvq_cmds[i].usage, nvq_cmds[i].help);
	}
	fputs(".SH OPTIONS\n.TP\n.B \\-s SOCKET\n", fp);
	roff_text(fp, "nvqd's socket; else $NVQ_SOCKET, else [daemon] socket in $NVQ_CONFIG or "
	    "/etc/nvq/nvq.ini, else the per-user nvqd's, else /run/nvq/nvqd.sock.\n");
	fputs(".TP\n.B \\-V, \\-\\-version\n", fp);
	roff_text(fp, "nvq's version and its protocol's.\n");
	fputs(".PP\n`nvq COMMAND \\-\\-help' prints a command's options.\n", fp);
	fputs(".SH COMMAND OPTIONS\n", fp);
	roff_text(fp, "Each command takes those its synopsis above lists. Where Slurm has "
	    "the same option it is named; where the same letters mean something else in "
	    "Slurm, it says so.\n");
	opthelp_man(fp);
	fputs(".SH ENVIRONMENT\n.TP\n.B NVQ_SOCKET, NVQ_CONFIG\nwhere nvqd is (above).\n"
	    ".TP\n.B NO_COLOR\nno colour in tables, even on a terminal.\n"
	    ".TP\n.B LC_ALL, LC_CTYPE, LANG\nthe terminal's charset, from the first one set: where it "
	    "is not UTF-8 (C, POSIX, none set), other users' text comes out in ASCII only, each byte "
	    "past it as \\exHH (\\euXXXX in \\-\\-json).\n"
	    ".TP\n.B NVQ_JOB_ID, NVQ_ARRAY_ID, NVQ_ARRAY_INDEX, NVQ_GPU_MEM, "
	    "CUDA_VISIBLE_DEVICES\nset in every job.\n"
	    ".TP\n.B SLURM_JOB_ID, SLURM_JOB_NAME, SLURM_ARRAY_JOB_ID, SLURM_ARRAY_TASK_ID, "
	    "SLURM_SUBMIT_DIR, SLURM_NTASKS, SLURM_JOB_GPUS, ...\nset in every job as Slurm "
	    "sets them for a one-node job (not under [cluster] engine = slurm, where Slurm "
	    "does); srun, first on the job's PATH, runs --ntasks copies of a command as a step "
	    "of the job.\n"
	    ".TP\n.B NVQ_CPUS, SLURM_CPUS_PER_TASK\nthe job's CPUs (-c).\n"
	    ".TP\n.B SLURM_MEM_PER_NODE, SLURM_MEM_PER_CPU\nits host memory in MiB "
	    "(--mem, --mem-per-cpu), where it asked some.\n", fp);
	fputs(".SH EXIT STATUS\n", fp);
	roff_text(fp, "0 done, 1 failed (the reason on stderr), 2 bad usage. nvq wait and nvq "
	    "run exit with the job's status: its exit code, 128 + the signal that ended it, "
	    "124 for TIMEOUT, 125 for CANCELLED.\n");
	fputs(".SH SEE ALSO\n.BR nvqd (8),\n.BR nvq.ini (5),\n.BR sqlite3 (1)\n", fp);
}

/*
 * One of Slurm's names on nvq submit or nvq run (ch, as word gave it, with
 * val) into a: 0, or -1 after saying what is wrong.
 */
static int
nvq_slurm_option(struct nvq_args *a, int ch, const char *word, const char *val)
{
	const char *opt = ch == OPT_GRES ? "gres" : ch == OPT_GPN ? "gpus-per-node" :
	    ch == OPT_GPT ? "gpus-per-task" : "gpus";
	char why[256];
	long long n;
	int gpus, mail;

	switch (ch) {
	case 'g': case 'G': case OPT_GRES: case OPT_GPN: case OPT_GPT:
		if (sbatch_gpus(opt, val, &gpus, why, sizeof(why)) == -1)
			break;
		a->gpus = gpus;
		a->gpus_per_task = ch == OPT_GPT;
		return 0;
	case 'J': a->name = val; return 0;
	case 'D': a->chdir = val; return 0;
	case OPT_NICE: a->nice = val; return 0;
	case OPT_EXPORT:
		if (sbatch_export_check(val, why, sizeof(why)) == -1)
			break;
		a->export_spec = val;
		return 0;
	case OPT_MAILTYPE:
		if (sbatch_mail_type(val, &mail, why, sizeof(why)) == -1)
			break;
		a->mail_type = val;
		return 0;
	case 'N':
		if (sbatch_nodes(val, why, sizeof(why)) == -1)
			break;
		return 0;
	case OPT_NTASKS:
		if (parse_int(val, 1, NVQ_MAX_TASKS, &n) == 0) {
			a->ntasks = (int)n;
			return 0;
		}
		snprintf(why, sizeof(why), "--ntasks %s: not a number of tasks (1 to %d, "
		    "which srun starts on this server)", val, NVQ_MAX_TASKS);
		break;
	/* Slurm's own: nvqd passes them on under [cluster] engine = slurm, else refuses them */
	case OPT_PARTITION: a->partition = val; return 0;
	case OPT_ACCOUNT: a->account = val; return 0;
	default:
		snprintf(why, sizeof(why), "%s: not taken here", word);
		break;
	}
	nvq_err("%s", why);
	return -1;
}

/*
 * Parses c's options in argv into a; *first is the first operand.  0, 2
 * for bad usage (said), or -1 once --help was printed.
 */
static int
nvq_options(const struct nvq_cmd *c, struct nvq_args *a, int argc, char **argv, int *first)
{
	struct option longs[OPTHELP_MAX];
	long long g;
	int ch;

	opthelp_longopts(c->longs, longs, OPTHELP_MAX);
	optind = 0;	/* a new vector each time: getopt starts over */
	opterr = 0;
	while ((ch = getopt_long(argc, argv, c->opts, longs, NULL)) != -1) {
		switch (ch) {
		case 'g':
			if (strchr(optarg, ':') != NULL)
				goto slurm;	/* Slurm's --gpus TYPE:N */
			if (parse_int(optarg, 0, 64, &g) == -1) {
				nvq_err("-g %s: not a number of GPUs (0 to 64)", optarg);
				return 2;
			}
			a->gpus = (int)g;
			break;
		case 'm': a->mem = optarg; break;
		case 'c': a->cpus = optarg; break;
		case OPT_HOST_MEM: a->host_mem = optarg; break;
		case OPT_MEM_PER_CPU: a->mem_per_cpu = optarg; break;
		case 'p': a->prio = optarg; break;
		case 'n': a->name = optarg; break;
		case 't': a->time = optarg; break;
		case 'o': a->out = optarg; break;
		case 'e': a->err = optarg; break;
		case 'a': a->all = 1; break;
		case 'u': a->user = optarg; break;
		case 'f': a->follow = 1; break;
		case OPT_AFTER: a->after = optarg; break;
		case 'd': a->dependency = optarg; break;
		case OPT_PARSABLE: a->parsable = 1; break;
		case OPT_REQUEUE: a->requeue = 1; break;
		case OPT_FAILED: a->failed = 1; break;
		case OPT_FORMAT: a->format = optarg; break;
		case OPT_NEW: a->renew = 1; break;
		case OPT_QOS: a->qos = optarg; break;
		case OPT_CLASS: a->lcbe = optarg; break;
		case OPT_SIGNAL:
			/* Slurm's warning where it is written so, or on a #SBATCH line */
			if (a->in_sbatch || parse_is_warn(optarg))
				a->warn = optarg;
			else
				a->signal = optarg;
			break;
		case OPT_NOTIFY: a->notify = optarg; break;
		case OPT_MAIL: a->mail_user = optarg; break;
		case OPT_JSON: a->json = 1; break;
		case OPT_STATE: a->state = optarg; break;
		case OPT_ERR: a->stderr_log = 1; break;
		case OPT_SINCE: a->since = optarg; break;
		case OPT_ARRAY: a->array = optarg; break;
		case OPT_STDIN: a->from_stdin = 1; break;
		case OPT_HOLD: a->hold = 1; break;
		case 'w': a->allow = optarg; break;
		case 'x': a->deny = optarg; break;
		case 'r': a->expand = 1; break;
		case 'h':
			opthelp_usage(stdout, c->name, c->usage);
			printf("\n");
			opthelp_text(stdout, c->help);
			opthelp_print(stdout, c->name, c->longs);
			return -1;
		case 'G': case 'J': case 'D': case 'N': case OPT_GRES: case OPT_GPN: case OPT_GPT:
		case OPT_EXPORT: case OPT_NICE: case OPT_MAILTYPE: case OPT_NTASKS: case OPT_PARTITION:
		case OPT_ACCOUNT:
		slurm:
			if (nvq_slurm_option(a, ch, argv[optind - 1], optarg) != 0)
				return 2;
			break;
		default:
			if (optopt != 0 && strchr(c->opts, optopt) != NULL)
				nvq_err("%s: option -%c needs a value", c->name, optopt);
			else if (optopt != 0)
				nvq_err("%s: unknown option -%c", c->name, optopt);
			else
				nvq_err("%s: unknown or incomplete option %s", c->name,
				    argv[optind - 1]);
			fprintf(stderr, "usage: nvq %s %s\n", c->name, c->usage);
			return 2;
		}
	}
	*first = optind;
	return 0;
}

struct nvq_directive {
	const struct nvq_cmd *c;
	struct nvq_args	*a;
};

/* One #SBATCH or #NVQ line's words (at where) into the options. */
static int
nvq_directive(void *arg, const char *where, int argc, char **argv)
{
	struct nvq_directive *d = arg;
	struct submit_values v;
	const char *w[SBATCH_MAX_OUT + 2];
	char why[512];
	int first, rc, n;

	if (strcmp(argv[0], "#SBATCH") == 0) {
		/* sbatch's options in nvq's words; refused ones on one line */
		if ((n = sbatch_translate(argc - 1, argv + 1, w + 1, SBATCH_MAX_OUT, why,
		    sizeof(why))) == -1) {
			nvq_err("%s: %s", where, why);
			return 2;
		}
		w[0] = argv[0];
		w[n + 1] = NULL;
		argc = n + 1;
		argv = (char **)w;	/* getopt permutes nothing: '+' leads the options */
	}
	d->a->in_sbatch = strcmp(argv[0], "#SBATCH") == 0;
	rc = nvq_options(d->c, d->a, argc, argv, &first);
	d->a->in_sbatch = 0;
	if (rc != 0) {
		nvq_err("in %s", where);
		return rc == -1 ? 2 : rc;
	}
	if (first < argc) {
		nvq_err("#NVQ lines take options only, not \"%s\" (%s)", argv[first], where);
		return 2;
	}
	/* the values too, so that the line at fault is named */
	if ((rc = submit_parse(d->a, &v)) != 0)
		nvq_err("in %s", where);
	return rc;
}

/* *path made absolute, in memory nvq keeps until it exits; 0 or -1. */
static int
nvq_script_abs(char **path)
{
	static char abs[PATH_MAX * 2];
	char cwd[PATH_MAX];

	if (getcwd(cwd, sizeof(cwd)) == NULL)
		return -1;
	snprintf(abs, sizeof(abs), "%s/%s", cwd, *path);
	*path = abs;
	return 0;
}

/*
 * nvq submit SCRIPT: the script's #NVQ lines into d (a's state before its
 * options), then the command line's options over them, and the command
 * that runs the script, into a.  Nothing changes if argv[first] is not a
 * script.
 */
static int
nvq_script(const struct nvq_cmd *c, struct nvq_args *a, struct nvq_args d, int argc,
    char **argv, int first)
{
	struct nvq_directive dir = { c, &d };
	char **v;
	int rc, n;

	if ((rc = script_directives(argv[first], nvq_directive, &dir)) == -1)
		return 0;
	if (rc != 0 || (rc = nvq_options(c, &d, argc, argv, &first)) != 0)
		return rc;
	/* run elsewhere (-D): the script by its whole path */
	if (d.chdir != NULL && argv[first][0] != '/' && nvq_script_abs(&argv[first]) == -1) {
		nvq_err("cannot tell the current directory");
		return 1;
	}
	if (script_command(argv[first], argc - first, argv + first, &v, &n) == -1) {
		nvq_err("%s: cannot run it: %s", argv[first], strerror(errno));
		return 1;
	}
	*a = d;
	if (a->name == NULL)	/* as sbatch names a job: after its script */
		a->name = strrchr(argv[first], '/') != NULL ? strrchr(argv[first], '/') + 1 :
		    argv[first];
	a->cmd = c->name;
	a->argc = v != NULL ? n : argc - first;
	a->argv = v != NULL ? v : argv + first;	/* v lives as long as nvq */
	return 0;
}

static int
nvq_run(const struct nvq_cmd *c, struct nvq_args *a, int argc, char **argv)
{
	struct nvq_args before = *a;
	int rc, first;

	if ((rc = nvq_options(c, a, argc, argv, &first)) != 0)
		return rc == -1 ? 0 : rc;
	a->cmd = c->name;
	a->argc = argc - first;
	a->argv = argv + first;
	if (a->argc < c->minargs || (c->maxargs >= 0 && a->argc > c->maxargs)) {
		nvq_err("%s: %s", c->name, a->argc < c->minargs ? "missing arguments" :
		    "too many arguments");
		fprintf(stderr, "usage: nvq %s %s\n", c->name, c->usage);
		return 2;
	}
	if ((c->fn == cmd_submit || c->fn == cmd_run) && a->argc > 0 &&
	    (rc = nvq_script(c, a, before, argc, argv, first)) != 0)
		return rc == -1 ? 0 : rc;
	return c->fn(a);
}

/* The edit distance of a and b, past 3 counted as 3 (names are short). */
static int
nvq_distance(const char *a, const char *b)
{
	size_t la = strlen(a), lb = strlen(b), i, j;
	int d[17][17];

	if (la > 16 || lb > 16)
		return 3;
	for (i = 0; i <= la; i++)
		d[i][0] = (int)i;
	for (j = 0; j <= lb; j++)
		d[0][j] = (int)j;
	for (i = 1; i <= la; i++)
		for (j = 1; j <= lb; j++) {
			int sub = d[i - 1][j - 1] + (a[i - 1] != b[j - 1]);
			int del = d[i - 1][j] + 1, ins = d[i][j - 1] + 1;

			d[i][j] = sub < del ? (sub < ins ? sub : ins) : (del < ins ? del : ins);
			/* two letters swapped: one edit */
			if (i > 1 && j > 1 && a[i - 1] == b[j - 2] && a[i - 2] == b[j - 1] &&
			    d[i - 2][j - 2] + 1 < d[i][j])
				d[i][j] = d[i - 2][j - 2] + 1;
		}
	return d[la][lb] < 3 ? d[la][lb] : 3;
}

/* The command a mistyped name most likely meant (2 edits at most, or a prefix), or NULL. */
static const char *
nvq_like(const char *name)
{
	const char *best = NULL;
	int bestd = 3, d;
	size_t i;

	for (i = 0; i < NVQ_NCMDS; i++) {
		d = strncmp(nvq_cmds[i].name, name, strlen(name)) == 0 && strlen(name) >= 2 ? 0 :
		    nvq_distance(name, nvq_cmds[i].name);
		if (d < bestd) {
			bestd = d;
			best = nvq_cmds[i].name;
		}
	}
	return best;
}

int
main(int argc, char **argv)
{
	struct nvq_args a;
	const char *like;
	size_t i;
	int k = 1;

	/*
	 * To a file or a pipe, output goes in 64 KiB writes: musl's stdio
	 * buffers 1 KiB (glibc's 4), and nvq list of 100,000 jobs is 8.7 MB.
	 * A terminal keeps its line buffering; what follows output flushes it.
	 */
	static char outbuf[65536];

	if (!isatty(STDOUT_FILENO))
		setvbuf(stdout, outbuf, _IOFBF, sizeof(outbuf));
	proto_reuse_storage();	/* nvq is one thread */
	fmt_locale();
	memset(&a, 0, sizeof(a));
	a.gpus = -1;
	while (k < argc && argv[k][0] == '-') {
		if (strcmp(argv[k], "-s") == 0 && k + 1 < argc) {
			a.socket = argv[k + 1];
			k += 2;
		} else if (strcmp(argv[k], "-h") == 0 || strcmp(argv[k], "--help") == 0) {
			nvq_usage(stdout);
			return 0;
		} else if (strcmp(argv[k], "--man") == 0) {
			nvq_man(stdout);
			return 0;
		} else if (strcmp(argv[k], "-V") == 0 || strcmp(argv[k], "--version") == 0) {
			printf("nvq %s (protocol %d)\n", NVQ_VERSION, PROTO_VERSION);
			return 0;
		} else {
			nvq_err("unknown option %s (nvq --help lists them)", argv[k]);
			return 2;
		}
	}
	if (k == argc) {
		nvq_usage(stderr);
		return 2;
	}
	for (i = 0; i < NVQ_NCMDS; i++)
		if (strcmp(nvq_cmds[i].name, argv[k]) == 0)
			return nvq_run(&nvq_cmds[i], &a, argc - k, argv + k);
	like = nvq_like(argv[k]);
	if (like != NULL)
		nvq_err("unknown command \"%s\": did you mean \"%s\"? (nvq --help lists them)",
		    argv[k], like);
	else
		nvq_err("unknown command \"%s\" (nvq --help lists them)", argv[k]);
	return 2;
}
