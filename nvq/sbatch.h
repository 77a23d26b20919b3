/*
 * sbatch.h: Slurm's sbatch options in nvq's words (sbatch.c): the table
 * that says, for each option a #SBATCH line may give, which nvq option
 * honours it, or that it means nothing on one server, or why it is
 * refused; and the values of the Slurm-named options nvq takes on its own
 * command line (--gres, --gpus, --mail-type, --export, --nodes...).  Pure
 * functions over strings: no I/O, no allocation.  Parsers return 0, or -1
 * with a sentence in why.
 */
#ifndef NVQ_SBATCH_H
#define NVQ_SBATCH_H

#include <stddef.h>

/* How a row is honoured */
enum sbatch_how {
	SBATCH_WORD,		/* its value goes to nvq's option `to` */
	SBATCH_FLAG,		/* no value: nvq's option `to` */
	SBATCH_MEANINGLESS,	/* accepted, nothing to do on one server (`to` says why) */
	SBATCH_REFUSE,		/* refused (`to` says why) */
};

/* An sbatch option: its long name, its letter (or 0), whether it takes a value. */
struct sbatch_row {
	const char	*name;
	char		letter;
	char		arg;		/* 0 none, 1 required, 2 optional (only as --name=VALUE) */
	enum sbatch_how	how;
	const char	*to;		/* nvq's option (long form), or the reason */
	const char	*dflt;		/* an optional value's default, for `to` */
	/* checks the value at once, so that a line is refused in one sentence; or NULL */
	int		(*check)(const char *name, const char *val, char *why, size_t whylen);
};

extern const struct sbatch_row sbatch_table[];
extern const int sbatch_nrows;

/* The row of a long name (without "--") or, where name is NULL, of a letter; or NULL. */
const struct sbatch_row *sbatch_find(const char *name, char letter);

#define SBATCH_MAX_OUT	128	/* nvq words out of one #SBATCH line */

/*
 * The words of one #SBATCH line (argv[0..argc-1], without "#SBATCH") as
 * nvq's option words, into out (at most max; they point into argv or into
 * the table): their count, or -1 with why ("--partition: partitions are
 * Slurm's ...", "unknown sbatch option --foo").
 */
int	sbatch_translate(int argc, char **argv, const char **out, int max, char *why,
	    size_t whylen);

/*
 * A count of GPUs in Slurm's words: opt is "gres" (gpu[:TYPE][:N], N
 * defaulting to 1; several GRES, comma-separated, allowed only if all are
 * gpu), "gpus", "gpus-per-node" or "gpus-per-task" ([TYPE:]N).  TYPE is
 * not checked against the GPUs (one server: any of its GPUs).
 */
int	sbatch_gpus(const char *opt, const char *val, int *n, char *why, size_t whylen);

/* -N/--nodes: "1", "1-1" or "1-N" (a range that 1 satisfies); anything else refused. */
int	sbatch_nodes(const char *val, char *why, size_t whylen);

/*
 * --mail-type: a comma list of Slurm's types; *mail is 1 if a mail is to
 * go at the job's end, 0 for NONE.  nvq mails once, at a job's end,
 * whatever its state: END (with FAIL or without) and ARRAY_TASKS are
 * honoured; BEGIN, REQUEUE, TIME_LIMIT*, ALL and FAIL alone refused.
 */
int	sbatch_mail_type(const char *val, int *mail, char *why, size_t whylen);

/*
 * --export: ALL (the submitting environment, the default), NONE (only its
 * SLURM_* variables), or names and NAME=VALUE, after ALL or alone (alone:
 * only those, and SLURM_*).  sbatch_export_check says whether spec is one
 * (0, or -1 with why); sbatch_export_keeps whether the submitting
 * environment's entry ("NAME=VALUE") goes with the job, and
 * sbatch_export_value the i-th NAME=VALUE the spec itself gives (NULL past
 * the last; copied into buf).
 */
int	sbatch_export_check(const char *spec, char *why, size_t whylen);
int	sbatch_export_keeps(const char *spec, const char *entry);
const char *sbatch_export_value(const char *spec, int i, char *buf, size_t len);

#endif
