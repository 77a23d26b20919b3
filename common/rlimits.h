/*
 * rlimits.h: the resource limits jobs run with, as the administrator's
 * policy ([limits] rlimits) writes them: "NAME=SOFT[:HARD],..." with NAME one
 * of the table in rlimits.c, and values whole numbers, sizes (4G) or
 * "unlimited".  nvqd checks the text when it reads its configuration and
 * passes it to each job's shim, which applies it before dropping
 * privileges.  Pure: no I/O but setrlimit in rlimits_apply.
 */
#ifndef NVQ_RLIMITS_H
#define NVQ_RLIMITS_H

#include <stddef.h>
#include <sys/resource.h>

#define RLIMITS_MAX	16

struct rlimits_entry {
	int		resource;	/* RLIMIT_* */
	struct rlimit	lim;
};

/*
 * Parses text into out (at most RLIMITS_MAX entries); returns the count,
 * or -1 with a sentence in err.  "" is no entries.
 */
int	rlimits_parse(const char *text, struct rlimits_entry *out, char *err, size_t errlen);
/* setrlimit for each entry; 0, or -1 with errno from the first that failed. */
int	rlimits_apply(const struct rlimits_entry *, int n);
/*
 * Lowers resource's soft and hard limits to max where they are higher
 * (a lower limit the administrator set stays); 0, or -1 with errno.
 */
int	rlimits_lower(int resource, rlim_t max);

#endif
