/*
 * jobtab.h: the active jobs by id, a hash table of pointers to struct job
 * (chained through job->hnext), so that finding a job costs the same with
 * ten jobs in the queue as with a hundred thousand.
 */
#ifndef NVQ_JOBTAB_H
#define NVQ_JOBTAB_H

#include <stddef.h>
#include <stdint.h>

struct job;

struct jobtab {
	struct job	**b;		/* buckets; NULL until the first put */
	size_t		nb;		/* a power of two */
	size_t		n;
};

/* Adds j (its id not in the table); grows as needed.  0, or -1 out of memory. */
int		 jobtab_put(struct jobtab *, struct job *);
/* Removes j, if it is in the table. */
void		 jobtab_del(struct jobtab *, struct job *);
struct job	*jobtab_find(const struct jobtab *, int64_t id);
void		 jobtab_free(struct jobtab *);

#endif
