/*
 * parse.h: the strings users type, turned into numbers and back.
 *
 * Sizes ("512M", "20G", "1.5T"), durations in Slurm's forms and with units,
 * lists of job ids, and the formatting of sizes and elapsed times.  Shared
 * by nvq and nvqd; pure functions, no allocation.  Parsers return 0 or -1.
 */
#ifndef NVQ_PARSE_H
#define NVQ_PARSE_H

#include <stddef.h>
#include <stdint.h>

#define PARSE_MAX_IDS	64
/* The longest time limit a job may have (-t), checked by nvq and by nvqd: 365 days. */
#define PARSE_MAX_LIMIT	(365LL * 86400)

/* Bytes from "20G", "1.5T", "512MiB"; a bare number means MiB, as in Slurm. */
int	parse_size(const char *, uint64_t *);
/* Seconds from "90" (minutes), "MM:SS", "HH:MM:SS", "D-HH[:MM[:SS]]", "45s", "2h", "1d". */
int	parse_duration(const char *, int64_t *);
/* "5%" sets *pct, "2G" sets *bytes; the other is set to 0. */
int	parse_reserve(const char *, unsigned *pct, uint64_t *bytes);
/* A positive job id. */
int	parse_id(const char *, int64_t *);
/* "3,4,5" into ids (at most max); returns the count or -1. */
int	parse_id_list(const char *, int64_t *ids, int max);
#define PARSE_MAX_TASKS	100000		/* tasks of one array */
#define PARSE_MAX_INDEX	10000000	/* the largest index of an array's task */
/* qsort's and bsearch's order of int64_t ids, ascending. */
int	parse_cmp_i64(const void *, const void *);
/*
 * An array's indexes (--array): "0-99", "1,5,7", "0-20:2", mixed with
 * commas, then "%N" for at most N at once; or "%N" alone (no list: *n is
 * 0).  Indexes from 0 to PARSE_MAX_INDEX, at most max of them, none twice;
 * into idx (in the order given) and *limit (0: no %N).  0, or -1 with a
 * sentence in why.
 */
int	parse_array(const char *, int64_t *idx, int max, int *n, int *limit, char *why,
	    size_t whylen);
/* A decimal integer in [min, max]. */
int	parse_int(const char *, long long min, long long max, long long *);
/*
 * A signal a job may be sent first (--signal): "USR1", "SIGUSR1", "usr1" or
 * its number, 1 to 64, but never KILL or STOP (it could not act on them).
 */
int	parse_signal(const char *, int *);
/* SIG's name without SIG ("USR1"), or NULL for a real-time or unknown one. */
const char *parse_signame(int);

/* the longest Slurm partition (list) or account nvq passes on (--partition, --account) */
#define PARSE_MAX_SLURM_NAME	64
/* Whether s is such a name: 1 to PARSE_MAX_SLURM_NAME of A-Z a-z 0-9 _ . , - (1), or not (0). */
int	parse_slurm_name(const char *s);
#define PARSE_WARN_DEFAULT	60	/* sbatch's --signal TIME when none is given */
#define PARSE_WARN_MAX		65535	/* and the most it takes (seconds) */
/*
 * Slurm's --signal [{R|B}:]SIG[@TIME]: SIG (as parse_signal takes it)
 * sent TIME seconds (0 to PARSE_WARN_MAX, PARSE_WARN_DEFAULT without
 * @TIME) before the job's time limit, to its batch shell alone with B:
 * (*batch 1).  R: (a reservation's overlap) is refused: nvq has none.  0,
 * or -1 with a sentence in why.
 */
int	parse_warn(const char *, int *sig, int *secs, int *batch, char *why, size_t whylen);
/*
 * Whether a --signal on nvq's command line is written as Slurm's warning
 * (a B: or R: before it, or an @TIME after it): 1, else 0 (nvq's own
 * --signal SIG, the signal that stops a preempted job).
 */
int	parse_is_warn(const char *);

/* An array's shape as Slurm's variables say it (SLURM_ARRAY_TASK_COUNT, ...). */
struct parse_shape {
	int64_t		count, min, max;
	int64_t		step;	/* a spec of one range A-B:STEP: STEP; else 1 */
};
/*
 * The shape of the n (> 0) indexes idx that parse_array made of spec (NULL:
 * --stdin's tasks, 0 to n - 1) into *sh.
 */
void	parse_array_shape(const char *spec, const int64_t *idx, int n, struct parse_shape *sh);

/* "20G", "1.5G", "512M", "0"; buf of at least 16 bytes. */
void	fmt_size(uint64_t, char *buf, size_t len);
/* "MM:SS", "H:MM:SS" or "D-HH:MM:SS"; buf of at least 24 bytes. */
void	fmt_elapsed(int64_t secs, char *buf, size_t len);

#endif
