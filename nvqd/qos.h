/*
 * qos.h: the job classes an admin defines in the INI (Slurm's QOS), as a
 * table read with the configuration (qos.c).
 *
 * A [qos NAME] section defines class NAME: priority points added to its
 * jobs' place in the order, the classes whose running jobs its jobs may
 * preempt, who may use it, and per-user limits.  A job names its class with
 * --qos; without one it gets [scheduler] default_qos ("normal", which exists
 * without a section: priority 0, preempts nothing, everyone).  Across users,
 * preemption comes only from here (or from root's jobs): preempt.c reads a
 * job's class index and the mask of classes it may preempt.
 * Functions return 0 or -1 with a message, or an index (-1: none).
 */
#ifndef NVQ_QOS_H
#define NVQ_QOS_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <sys/types.h>

#define QOS_MAX		32	/* classes: a job's preempts is a uint32_t mask */
#define QOS_NAME_MAX	32
#define QOS_MAX_MEMBERS	32	/* users, and groups, named per class */
#define QOS_MAX_PRIO	1000000

struct qos_class {
	char		name[QOS_NAME_MAX];
	int		priority;	/* points added to its jobs' order key */
	uint32_t	preempts;	/* bit k: may preempt running jobs of class k */
	char		preempts_list[256];	/* as written; qos_finish resolves it */
	int		max_gpus_per_user;	/* 0: no limit */
	int		max_jobs_per_user;	/* running jobs; 0: no limit */
	int		nusers, ngroups;	/* both 0: everyone may use it */
	uint32_t	uids[QOS_MAX_MEMBERS];
	uint32_t	gids[QOS_MAX_MEMBERS];
};

struct qos_table {
	struct qos_class c[QOS_MAX];
	int		n;
	int		dflt;		/* the default class's index (qos_finish) */
	char		default_name[QOS_NAME_MAX];	/* [scheduler] default_qos */
};

/*
 * key = value of section [qos NAME] (the section's name is given whole, as
 * "qos NAME"): the class is made on its first key.  Names of users and
 * groups are looked up now (NSS).  0, or -1 with msg set.
 */
int	qos_set(struct qos_table *, const char *section, const char *key, const char *value,
	    char *msg, size_t len);
/*
 * A line of the file as read: where it is a [qos NAME] header, the class is
 * made, so that a section without keys defines a class of the defaults
 * (inih calls no handler for it).  0, or -1 with msg set.
 */
int	qos_line(struct qos_table *, const char *line, char *msg, size_t len);
/* Whether section is a [qos NAME] section's name. */
int	qos_section(const char *section);
/*
 * After the file: the default class made if it has no section (only
 * "normal" may go without one), preempts resolved to indexes, and a class
 * that would preempt itself, or classes that preempt each other in a ring,
 * refused (a suspend would answer a suspend).  0, or -1 with msg set.
 */
int	qos_finish(struct qos_table *, char *msg, size_t len);
/* The index of class name, or -1. */
int	qos_find(const struct qos_table *, const char *name);
/* Whether uid, of gid and groups (n of them), may use class c; root always may. */
int	qos_may_use(const struct qos_class *c, uint32_t uid, uint32_t gid, const gid_t *groups,
	    int n);
/* The [qos NAME] keys, commented as in nvq.ini (print) and as nvq.ini(5) (man). */
void	qos_print(FILE *);
void	qos_print_man(FILE *);

#endif
