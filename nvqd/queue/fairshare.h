/*
 * fairshare.h: each user's recent use of the GPUs, decayed with a
 * half-life, and the priority it earns them ([scheduler] fairshare).
 *
 * Pure: no clock, no I/O; times are seconds since the epoch, passed in.
 *
 * Use is counted in GPU-seconds: a job that holds m bytes on each of n GPUs
 * of t bytes uses n * min(1, m / t) GPUs (a whole GPU counts 1) while it
 * runs, and nothing while it is suspended.  A user's usage u decays: over
 * d seconds at a rate of r GPUs,
 *
 *	u' = u 2^(-d/h) + r (h / ln 2) (1 - 2^(-d/h))
 *
 * so a GPU-second used h ago counts half.  The users with jobs in the
 * queue (active) share the GPUs equally: with N of them, a user whose usage
 * is the fraction U of theirs together earns weight * 2^(-U N) priority
 * points, Slurm's classic fair-share factor 2^(-usage / share): weight for
 * a user who used nothing lately, weight / 2 for one who used exactly a
 * share, weight / 4 for one who used twice a share.
 */
#ifndef NVQ_FAIRSHARE_H
#define NVQ_FAIRSHARE_H

#include <stdint.h>

struct fs_user {
	uint32_t	uid;
	double		usage;		/* GPU-seconds, decayed to the set's at */
	double		rate;		/* GPUs in use since at */
	int		active;		/* jobs in the queue at the last fairshare_rank */
	double		bonus;		/* priority points, from fairshare_rank */
	double		frac;		/* of the active users' usage, from fairshare_rank */
};

struct fairshare {
	struct fs_user	*u;		/* sorted by uid */
	int		n, cap;
	double		at;		/* when usage was last brought forward */
	int		nactive;	/* at the last fairshare_rank */
};

void		 fairshare_init(struct fairshare *, double now);
void		 fairshare_free(struct fairshare *);
/*
 * Counts a stretch of use that ended: gpus GPUs from start to end, decayed
 * to the set's at (a part after at is counted as of at).  0, or -1 out of
 * memory.
 */
int		 fairshare_add(struct fairshare *, uint32_t uid, double gpus, double start,
		    double end, double halflife);
/* Brings every user's usage forward to now, at the rates set since. */
void		 fairshare_advance(struct fairshare *, double now, double halflife);
/* Starts a new count of rates and active users: all 0. */
void		 fairshare_begin(struct fairshare *);
/* uid has jobs in the queue, gpus of them in use now; 0, or -1 out of memory. */
int		 fairshare_use(struct fairshare *, uint32_t uid, double gpus);
/* Sets the bonus and frac of each active user; drops forgotten users. */
void		 fairshare_rank(struct fairshare *, double weight);
/* uid's entry, or NULL. */
const struct fs_user *fairshare_find(const struct fairshare *, uint32_t uid);
/* uid's bonus from the last fairshare_rank; 0 for a user not active then. */
double		 fairshare_bonus(const struct fairshare *, uint32_t uid);

#endif
