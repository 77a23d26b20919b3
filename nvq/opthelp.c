/*
 * opthelp.c: what each option of nvq's commands takes and means, one row
 * per long option, with Slurm's equivalent where there is one, and what
 * getopt_long gives for it.  nvq.c parses a command's options with the
 * rows of those it accepts (its command table says which), `nvq COMMAND
 * --help` prints them, nvq(1) prints them all: one row per option.  An
 * option a command accepts without a row here is printed as
 * "(undocumented)", which the tests look for.
 */
#include <stdio.h>
#include <string.h>

#include "nvq.h"
#include "opthelp.h"
#include "roff.h"

struct opthelp_row {
	const char	*name;		/* the long option */
	int		code;		/* its short letter, or what getopt_long gives (OPT_*) */
	const char	*arg;		/* what it takes, or NULL */
	const char	*help;		/* what it does, its units and formats */
	const char	*slurm;		/* Slurm's equivalent, or NULL; "differs: ..." where
					   the same letters mean something else there */
};
#define OPTHELP_LETTER(r)	((r)->code < 128 ? (r)->code : 0)

/* An option that means something else for one command: found before the general row. */
struct opthelp_cmd_row {
	const char		*cmd;
	struct opthelp_row	row;
};

static const struct opthelp_row opthelp_rows[] = {
	{ "gpus", 'g', "N", "GPUs the job needs, 0 to 64 (default 1); 0 runs it without a GPU",
	  "--gpus=N, --gres=gpu:N" },
	{ "gpu-mem", 'm', "SIZE", "GPU memory per GPU (512M, 20G, 1.5T; a bare number is MiB; "
	  "auto: what its last runs used); without it the job takes whole GPUs",
	  "--gpu-mem of nvq's SPANK plugin (differs: Slurm's --mem is host memory)" },
	{ "cpus-per-task", 'c', "N", "CPUs the job holds, 1 to 65536 (default: 1 without a "
	  "GPU, else its GPUs' share of [resources] cpus); a quota of N CPUs in its cgroup, no "
	  "pinning", "-c, --cpus-per-task" },
	{ "mem", OPT_HOST_MEM, "SIZE", "host memory of the job (512M, 16G; a bare number is MiB), its "
	  "cgroup's limit, no swap; over it the job is killed and FAILED (default: none asked, "
	  "no limit)", "--mem (differs: 0, the whole node, is refused)" },
	{ "mem-per-cpu", OPT_MEM_PER_CPU, "SIZE", "host memory per CPU, times -c (not with --mem)",
	  "--mem-per-cpu" },
	{ "priority", 'p', "N", "priority, a whole number: higher starts first among your "
	  "waiting jobs; users give -1000000 up to [limits] max_priority (0: they only "
	  "lower), root up to 1000000; across users fair share, aging and --qos order",
	  "--nice (differs: Slurm's -p is a partition)" },
	{ "name", 'n', "NAME", "the job's name (default: the command's)",
	  "-J, --job-name (differs: Slurm's -n is a number of tasks)" },
	{ "time", 't', "TIME", "time limit: minutes, MM:SS, HH:MM:SS, D-HH:MM:SS, or 45s, 30m, "
	  "2h, 1d; at the end the job gets SIGTERM, then SIGKILL", "-t, --time" },
	{ "output", 'o', "FILE", "the job's stdout (and stderr without -e); %j its id, %A its "
	  "array's, %a its index, %x its name, %u its user", "-o, --output" },
	{ "error", 'e', "FILE", "the job's stderr; the same %-patterns as -o", "-e, --error" },
	{ "after", OPT_AFTER, "ID[,ID...]", "start only after these jobs completed (exit 0); A_ for a "
	  "whole array", "--dependency=afterok:ID" },
	{ "dependency", 'd', "LIST", "start once LIST holds: afterok:ID[:ID...] (completed), "
	  "afterany: (ended), afternotok: (ended but not completed), after: (started), "
	  "singleton (your earlier jobs of this name ended); ',' joins them, all must hold; "
	  "an id may be A_ (every task) or A_I; one that can never hold cancels the job",
	  "-d, --dependency (differs: Slurm leaves such a job pending)" },
	{ "parsable", OPT_PARSABLE, NULL, "print the job's id alone", "--parsable" },
	{ "requeue", OPT_REQUEUE, NULL, "queued again, not cancelled, when preempted or when its GPU "
	  "goes away", "--requeue" },
	{ "signal", OPT_SIGNAL, "SIG|[B:]SIG@TIME", "SIG alone: the signal that stops the job when it "
	  "is preempted or requeued, before SIGKILL (USR1, TERM, 12, ...; nvq's own); "
	  "[B:]SIG@TIME (or B:SIG, TIME 60): Slurm's warning, SIG sent TIME seconds (0 to "
	  "65535) before the time limit (--time), to the batch shell alone with B:, else to "
	  "every process of the job; once a run, not counting time suspended; R: refused",
	  "--signal (differs: a bare SIG is Slurm's warning 60 s before the limit, nvq's "
	  "preemption signal here, but on a #SBATCH line; without B: Slurm spares the batch "
	  "shell, nvq signals it too)" },
	{ "all", 'a', NULL, "finished jobs too", "squeue -t all" },
	{ "user", 'u', "USER", "only USER's jobs", "-u, --user" },
	{ "state", OPT_STATE, "STATES", "only jobs in these states, a comma-separated list in any case: "
	  "PENDING, RUNNING, SUSPENDED, COMPLETED, FAILED, CANCELLED, TIMEOUT, ... or "
	  "Slurm's codes PD, R, S, CD, F, CA, TO", "-t, --states" },
	{ "json", OPT_JSON, NULL, "JSON: sizes in bytes, times in seconds since 1970, as numbers",
	  "--json" },
	{ "follow", 'f', NULL, "go on printing what the job writes until it ends", NULL },
	{ "err", OPT_ERR, NULL, "the job's stderr instead of its stdout", NULL },
	{ "since", OPT_SINCE, "WHEN", "from WHEN: a date (2026-11-28, 2026-11-28T09:30), a time today "
	  "(09:30), today, yesterday, midnight, now-2h, or a duration back (2h, 3d)",
	  "sacct -S" },
	{ "array", OPT_ARRAY, "SPEC", "an array of tasks: 0-99, 1,3,5, 0-99:2; %N after it: at most N "
	  "running at once", "-a, --array" },
	{ "stdin", OPT_STDIN, NULL, "one task per line of standard input, run as an array (the "
	  "other options are each task's)", NULL },
	{ "expand", 'r', NULL, "every task of an array on its own line", "squeue -r" },
	{ "hold", OPT_HOLD, NULL, "queued held: it starts only after nvq release", "-H, --hold" },
	{ "gpu-list", 'w', "GPUS", "only these GPUs (indexes or UUIDs, comma-separated)",
	  "-w, --nodelist (of GPUs, not nodes)" },
	{ "exclude", 'x', "GPUS", "not these GPUs (indexes or UUIDs, comma-separated)",
	  "-x, --exclude (of GPUs, not nodes)" },
	{ "notify", OPT_NOTIFY, "COMMAND", "run COMMAND (as you, by sh -c) when the job ends; it gets "
	  "NVQ_JOB_ID, NVQ_JOB_STATE, NVQ_EXIT_CODE", NULL },
	{ "mail-user", OPT_MAIL, "ADDRESS", "mail ADDRESS when the job ends", "--mail-user" },
	{ "failed", OPT_FAILED, NULL, "the jobs that failed (FAILED, TIMEOUT, NODE_FAIL)", NULL },
	{ "format", OPT_FORMAT, "COLUMNS", "the columns to show, comma-separated (an unknown one "
	  "lists them)", "-o, --format" },
	{ "new", OPT_NEW, NULL, "a new link; the old one stops working", NULL },
	/* Slurm's names (sbatch.h); a script's #SBATCH lines take them too */
	{ "job-name", 'J', "NAME", "the job's name, as -n (a script's: its file name)",
	  "-J, --job-name" },
	{ "gres", OPT_GRES, "gpu[:TYPE][:N]", "GPUs, as -g (none: 0; -G [TYPE:]N and --gpus [TYPE:]N "
	  "too); TYPE is not checked: any of this server's GPUs", "--gres, -G, --gpus" },
	{ "gpus-per-node", OPT_GPN, "[TYPE:]N", "GPUs, as -g (one node)", "--gpus-per-node" },
	{ "gpus-per-task", OPT_GPT, "[TYPE:]N", "GPUs, as -g, for one task only (srun's tasks "
	  "share the job's GPUs)", "--gpus-per-task" },
	{ "chdir", 'D', "DIR", "run in DIR (relative: to here), where relative -o and -e "
	  "start too; SLURM_SUBMIT_DIR stays here", "-D, --chdir" },
	{ "export", OPT_EXPORT, "ALL|NONE|NAMES", "the job's environment: ALL (this one, the default), "
	  "NONE (only its SLURM_* variables), or NAME and NAME=VALUE, comma-separated, after "
	  "ALL or alone (alone: those and SLURM_*)", "--export" },
	{ "nice", OPT_NICE, "N", "the priority lowered by N (-p minus N; -10000 to 10000)",
	  "--nice (differs: nvq needs the N)" },
	{ "mail-type", OPT_MAILTYPE, "TYPES", "END or END,FAIL: a mail at the job's end, whatever its "
	  "state, to --mail-user or you; NONE: none; BEGIN, REQUEUE, TIME_LIMIT, ALL and FAIL "
	  "alone are refused (nvq mails only at the end)", "--mail-type" },
	{ "nodes", 'N', "1", "one node; more are refused (this is one server)", "-N, --nodes" },
	{ "ntasks", OPT_NTASKS, "N", "tasks srun starts in the job, 1 to 256 (SLURM_NTASKS)",
	  "-n, --ntasks (differs: nvq's -n is the name)" },
	{ "ntasks-per-node", OPT_NTASKS, "N", "as --ntasks (one node)", "--ntasks-per-node" },
	{ "partition", OPT_PARTITION, "NAME", "the Slurm partition(s) the job goes to, passed on to sbatch "
	  "under nvqd's [cluster] engine = slurm (over [cluster] partition); refused on one "
	  "server", "-p, --partition (differs: nvq's -p is the priority; on a #SBATCH line -p "
	  "is the partition)" },
	{ "account", OPT_ACCOUNT, "NAME", "the Slurm account charged, passed on to sbatch under nvqd's "
	  "[cluster] engine = slurm; refused on one server (fair share is per user)",
	  "-A, --account (differs: -A only on a #SBATCH line)" },
	{ "qos", OPT_QOS, "CLASS", "the job's class, one of nvq.ini's [qos NAME] sections (default: "
	  "[scheduler] default_qos, normal): its priority points, whom it may preempt, its "
	  "limits; refused if you may not use it", "--qos" },
	{ "class", OPT_CLASS, "lc|be", "lc: latency-critical, best-effort jobs sharing its GPUs give "
	  "way to its launches (nvq.ini's [class lc] says who may); be: best-effort, the "
	  "default. Not --qos: that orders the queue, this decides who yields on a GPU",
	  "none (Slurm has no such class)" },
};
#define OPTHELP_NROWS (sizeof(opthelp_rows) / sizeof(opthelp_rows[0]))

static const struct opthelp_cmd_row opthelp_cmd_rows[] = {
	/* nvq cancel's filters: they narrow each other and the ids given, as scancel's */
	{ "cancel", { "all", 'a', NULL, "all your jobs (root and admins: with another filter)",
	  "scancel -u $USER" } },
	{ "cancel", { "user", 'u', "USER", "USER's jobs", "scancel -u" } },
	{ "cancel", { "state", 't', "STATES", "jobs in these states (PENDING, RUNNING, "
	  "SUSPENDED or PD, R, S, comma-separated, any case)", "scancel -t" } },
	{ "cancel", { "name", 'n', "NAME", "jobs named NAME", "scancel -n" } },
};
#define OPTHELP_NCMDROWS (sizeof(opthelp_cmd_rows) / sizeof(opthelp_cmd_rows[0]))

/* name's row for command cmd: its own if it has one, else the general one. */
static const struct opthelp_row *
opthelp_find(const char *cmd, const char *name)
{
	size_t i;

	for (i = 0; cmd != NULL && i < OPTHELP_NCMDROWS; i++)
		if (strcmp(opthelp_cmd_rows[i].cmd, cmd) == 0 &&
		    strcmp(opthelp_cmd_rows[i].row.name, name) == 0)
			return &opthelp_cmd_rows[i].row;
	for (i = 0; i < OPTHELP_NROWS; i++)
		if (strcmp(opthelp_rows[i].name, name) == 0)
			return &opthelp_rows[i];
	return NULL;
}

size_t
opthelp_longopts(const char *longs, struct option *out, size_t max)
{
	char name[64];
	const struct opthelp_row *r;
	const char *p = longs;
	size_t n = 0, len;

	while (p != NULL && *p != '\0' && n + 2 < max) {
		len = strcspn(p, " ");
		snprintf(name, sizeof(name), "%.*s", (int)len, p);
		p += len + (p[len] == ' ');
		if (name[0] == '\0' || (r = opthelp_find(NULL, name)) == NULL)
			continue;
		out[n++] = (struct option){ r->name, r->arg != NULL ? required_argument :
		    no_argument, NULL, r->code };
	}
	out[n] = (struct option){ "help", no_argument, NULL, 'h' };
	out[n + 1] = (struct option){ NULL, 0, NULL, 0 };
	return n;
}

/* "-g, --gpus N" into buf. */
static void
opthelp_spelling(const struct opthelp_row *r, const char *name, char *buf, size_t len)
{
	char letter[8] = "";

	if (r != NULL && OPTHELP_LETTER(r) != 0)
		snprintf(letter, sizeof(letter), "-%c, ", OPTHELP_LETTER(r));
	snprintf(buf, len, "%s--%s%s%s", letter, name, r != NULL && r->arg ? " " : "",
	    r != NULL && r->arg ? r->arg : "");
}

/*
 * text, its first line from column col (already there), the others
 * indented to it, wrapped at blanks before OPTHELP_WIDTH; where brackets
 * says so, at a blank before a '[' if there is one (a synopsis).
 */
#define OPTHELP_COL	28
#define OPTHELP_WIDTH	80

static void
opthelp_wrap(FILE *fp, const char *text, int col, int brackets)
{
	const char *p = text, *end, *cut, *c;
	int room = OPTHELP_WIDTH - col;	/* a line of its own (after a newline): 80 */

	while (*p != '\0') {
		end = p + strcspn(p, "\n");
		cut = end;
		if (end - p > room) {
			for (cut = p + room; cut > p && *cut != ' '; cut--)
				;
			for (c = cut; brackets && c > p && !(c[0] == ' ' && c[1] == '['); c--)
				;
			if (brackets && c > p)
				cut = c;
			if (cut == p)	/* one word longer than the room */
				cut = p + strcspn(p, " \n");
		}
		fprintf(fp, "%.*s\n", (int)(cut - p), p);
		p = cut;
		if (*p == '\n') {	/* a line of its own, indented as it says */
			p++;
			room = OPTHELP_WIDTH;
			continue;
		}
		room = OPTHELP_WIDTH - col;
		while (*p == ' ')
			p++;
		if (*p != '\0')
			fprintf(fp, "%*s", col, "");
	}
}

void
opthelp_usage(FILE *fp, const char *name, const char *usage)
{
	int n = fprintf(fp, "usage: nvq %s ", name);

	opthelp_wrap(fp, usage, n, 1);
}

void
opthelp_text(FILE *fp, const char *text)
{
	opthelp_wrap(fp, text, 0, 0);
}

void
opthelp_print(FILE *fp, const char *cmd, const char *longs)
{
	char name[64], spelling[128], text[1024];
	const struct opthelp_row *r;
	const char *p = longs;
	size_t n;

	fputs("\noptions:\n", fp);
	while (p != NULL && *p != '\0') {
		n = strcspn(p, " ");
		snprintf(name, sizeof(name), "%.*s", (int)n, p);
		p += n + (p[n] == ' ');
		if (name[0] == '\0')
			continue;
		r = opthelp_find(cmd, name);
		opthelp_spelling(r, name, spelling, sizeof(spelling));
		if (strlen(spelling) > OPTHELP_COL - 4)
			fprintf(fp, "  %s\n%*s", spelling, OPTHELP_COL, "");
		else
			fprintf(fp, "  %-*s", OPTHELP_COL - 2, spelling);
		snprintf(text, sizeof(text), "%s%s%s%s", r != NULL ? r->help : "(undocumented)",
		    r != NULL && r->slurm ? " [Slurm: " : "", r != NULL && r->slurm ? r->slurm : "",
		    r != NULL && r->slurm ? "]" : "");
		opthelp_wrap(fp, text, OPTHELP_COL, 0);
	}
	fprintf(fp, "  %-*s%s\n", OPTHELP_COL - 2, "-h, --help", "this help");
}

/* One row as an item of nvq(1); for, the command it is for, or NULL. */
static void
opthelp_man_row(FILE *fp, const struct opthelp_row *r, const char *for_cmd)
{
	char spelling[160], text[1024];

	opthelp_spelling(r, r->name, spelling, sizeof(spelling));
	if (for_cmd != NULL)
		snprintf(spelling + strlen(spelling), sizeof(spelling) - strlen(spelling),
		    " (nvq %s)", for_cmd);
	snprintf(text, sizeof(text), "%s.%s%s%s", r->help, r->slurm ? " Slurm: " : "",
	    r->slurm ? r->slurm : "", r->slurm ? "." : "");
	roff_item(fp, spelling, NULL, text);
}

void
opthelp_man(FILE *fp)
{
	size_t i;

	for (i = 0; i < OPTHELP_NROWS; i++)
		opthelp_man_row(fp, &opthelp_rows[i], NULL);
	for (i = 0; i < OPTHELP_NCMDROWS; i++)
		opthelp_man_row(fp, &opthelp_cmd_rows[i].row, opthelp_cmd_rows[i].cmd);
}
