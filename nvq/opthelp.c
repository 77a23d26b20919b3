/*
 * opthelp.c: what each option of nvq's commands takes and means, one row
 * per long option, with Slurm's equivalent where there is one.  `nvq
 * COMMAND --help` prints the rows of the options COMMAND accepts (nvq.c's
 * table says which); nvq(1) prints them all, from the same rows.  An
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
	char		letter;		/* its short one, or 0 */
	const char	*arg;		/* what it takes, or NULL */
	const char	*help;		/* what it does, its units and formats */
	const char	*slurm;		/* Slurm's equivalent, or NULL; "differs: ..." where
					   the same letters mean something else there */
};

static const struct opthelp_row opthelp_rows[] = {
	{ "gpus", 'g', "N", "GPUs the job needs, 0 to 64 (default 1); 0 runs it without a GPU",
	  "--gpus=N, --gres=gpu:N" },
	{ "mem", 'm', "SIZE", "GPU memory per GPU (512M, 20G, 1.5T; auto: what its last run "
	  "used); without it the job takes whole GPUs", NULL },
	{ "priority", 'p', "N", "priority, a whole number: higher starts first among your "
	  "waiting jobs; users give -1000000 up to [limits] max_priority (0: they only "
	  "lower), root up to 1000000; across users fair share, aging and --qos order",
	  "--nice (differs: Slurm's -p is a partition)" },
	{ "name", 'n', "NAME", "the job's name (default: the command's)",
	  "-J, --job-name (differs: Slurm's -n is a number of tasks)" },
	{ "time", 't', "TIME", "time limit: minutes, MM:SS, HH:MM:SS, D-HH:MM:SS, or 45s, 30m, "
	  "2h, 1d; at the end the job gets SIGTERM, then SIGKILL", "-t, --time" },
	{ "output", 'o', "FILE", "the job's stdout (and stderr without -e); %j its id, %A its "
	  "array's, %a its index", "-o, --output" },
	{ "error", 'e', "FILE", "the job's stderr; the same %-patterns as -o", "-e, --error" },
	{ "after", 0, "ID[,ID...]", "start only after these jobs completed (exit 0); A_ for a "
	  "whole array", "--dependency=afterok:ID" },
	{ "parsable", 0, NULL, "print the job's id alone", "--parsable" },
	{ "requeue", 0, NULL, "queued again, not cancelled, when preempted or when its GPU "
	  "goes away", "--requeue" },
	{ "signal", 0, "SIG", "the signal that stops the job when it is preempted or "
	  "requeued, before SIGKILL (USR1, TERM, 12, ...)", "--signal (differs: Slurm's "
	  "[B:]SIG@TIME is sent before the time limit)" },
	{ "all", 'a', NULL, "finished jobs too", "squeue -t all" },
	{ "user", 'u', "USER", "only USER's jobs", "-u, --user" },
	{ "state", 0, "STATES", "only jobs in these states, a comma-separated list in any case: "
	  "PENDING, RUNNING, SUSPENDED, COMPLETED, FAILED, CANCELLED, TIMEOUT, ... or "
	  "Slurm's codes PD, R, S, CD, F, CA, TO", "-t, --states" },
	{ "json", 0, NULL, "JSON: sizes in bytes, times in seconds since 1970, as numbers",
	  "--json" },
	{ "follow", 'f', NULL, "go on printing what the job writes until it ends", NULL },
	{ "err", 0, NULL, "the job's stderr instead of its stdout", NULL },
	{ "since", 0, "WHEN", "from WHEN: a date (2026-11-28, 2026-11-28T09:30), a time today "
	  "(09:30), today, yesterday, midnight, now-2h, or a duration back (2h, 3d)",
	  "sacct -S" },
	{ "array", 0, "SPEC", "an array of tasks: 0-99, 1,3,5, 0-99:2; %N after it: at most N "
	  "running at once", "-a, --array" },
	{ "stdin", 0, NULL, "one task per line of standard input, run as an array (the "
	  "other options are each task's)", NULL },
	{ "expand", 'r', NULL, "every task of an array on its own line", "squeue -r" },
	{ "hold", 0, NULL, "queued held: it starts only after nvq release", "-H, --hold" },
	{ "gpu-list", 'w', "GPUS", "only these GPUs (indexes or UUIDs, comma-separated)",
	  "-w, --nodelist (of GPUs, not nodes)" },
	{ "exclude", 'x', "GPUS", "not these GPUs (indexes or UUIDs, comma-separated)",
	  "-x, --exclude (of GPUs, not nodes)" },
	{ "notify", 0, "COMMAND", "run COMMAND (as you, by sh -c) when the job ends; it gets "
	  "NVQ_JOB_ID, NVQ_JOB_STATE, NVQ_EXIT_CODE", NULL },
	{ "mail-user", 0, "ADDRESS", "mail ADDRESS when the job ends", "--mail-user" },
	{ "failed", 0, NULL, "the jobs that failed (FAILED, TIMEOUT, NODE_FAIL)", NULL },
	{ "format", 0, "COLUMNS", "the columns to show, comma-separated (an unknown one "
	  "lists them)", "-o, --format" },
	{ "new", 0, NULL, "a new link; the old one stops working", NULL },
	{ "qos", 0, "CLASS", "the job's class, one of nvq.ini's [qos NAME] sections (default: "
	  "[scheduler] default_qos, normal): its priority points, whom it may preempt, its "
	  "limits; refused if you may not use it", "--qos" },
};
#define OPTHELP_NROWS (sizeof(opthelp_rows) / sizeof(opthelp_rows[0]))

static const struct opthelp_row *
opthelp_find(const char *name)
{
	size_t i;

	for (i = 0; i < OPTHELP_NROWS; i++)
		if (strcmp(opthelp_rows[i].name, name) == 0)
			return &opthelp_rows[i];
	return NULL;
}

/* "-g, --gpus N" into buf. */
static void
opthelp_spelling(const struct opthelp_row *r, const char *name, char *buf, size_t len)
{
	char letter[8] = "";

	if (r != NULL && r->letter != 0)
		snprintf(letter, sizeof(letter), "-%c, ", r->letter);
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
opthelp_print(FILE *fp, const char *longs)
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
		r = opthelp_find(name);
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

void
opthelp_man(FILE *fp)
{
	char spelling[128], text[1024];
	size_t i;

	for (i = 0; i < OPTHELP_NROWS; i++) {
		opthelp_spelling(&opthelp_rows[i], opthelp_rows[i].name, spelling,
		    sizeof(spelling));
		snprintf(text, sizeof(text), "%s.%s%s%s", opthelp_rows[i].help,
		    opthelp_rows[i].slurm ? " Slurm: " : "",
		    opthelp_rows[i].slurm ? opthelp_rows[i].slurm : "",
		    opthelp_rows[i].slurm ? "." : "");
		roff_item(fp, spelling, NULL, text);
	}
}
