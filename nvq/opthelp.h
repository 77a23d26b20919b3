/*
 * opthelp.h: nvq's options, one row each (opthelp.c): the table getopt_long
 * parses with, `nvq COMMAND --help` prints and nvq(1) is made from.
 */
#ifndef NVQ_OPTHELP_H
#define NVQ_OPTHELP_H

#include <getopt.h>
#include <stdio.h>

/* What getopt_long gives for a long option without a letter of its own. */
enum { OPT_AFTER = 256, OPT_PARSABLE, OPT_REQUEUE, OPT_JSON, OPT_STATE, OPT_ERR, OPT_SINCE,
	OPT_SIGNAL, OPT_ARRAY, OPT_STDIN, OPT_HOLD, OPT_NOTIFY, OPT_MAIL, OPT_FAILED,
	OPT_FORMAT, OPT_NEW,
	/* Slurm's names (sbatch.h) */
	OPT_GRES, OPT_GPN, OPT_GPT, OPT_EXPORT, OPT_NICE, OPT_MAILTYPE, OPT_NTASKS, OPT_PARTITION,
	OPT_ACCOUNT,
	OPT_HOST_MEM, OPT_MEM_PER_CPU, OPT_QOS, OPT_CLASS };

/* Room for a command's struct option table (every option, --help and the end). */
#define OPTHELP_MAX	96

/*
 * getopt_long's table of the long options in longs (space-separated; each
 * must have a row) and --help, ended by a zeroed entry, in out (max
 * entries); returns how many options.
 */
size_t	opthelp_longopts(const char *longs, struct option *out, size_t max);

/* "usage: nvq NAME USAGE", wrapped at 80 columns. */
void	opthelp_usage(FILE *, const char *name, const char *usage);
/* text wrapped at 80 columns. */
void	opthelp_text(FILE *, const char *text);
/* The rows of the long options in longs (space-separated) for command cmd, as --help shows them. */
void	opthelp_print(FILE *, const char *cmd, const char *longs);
/* Every row, as nvq(1)'s items. */
void	opthelp_man(FILE *);

#endif
