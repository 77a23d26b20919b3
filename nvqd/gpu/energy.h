/*
 * energy.h: a job's energy on a GPU, from the GPU's counter (pure).  Each
 * interval between two reads of a GPU's counter is split among the jobs
 * that held the GPU in it: all of it to a job that had the GPU alone, else
 * by the SM utilisation NVML sampled for each job's processes (processes
 * outside the queue take their part, which no job is given).  How each
 * job's figure was measured goes with it, the least sure of its intervals.
 */
#ifndef NVQ_ENERGY_H
#define NVQ_ENERGY_H

#include <stdint.h>

/* How a figure was measured, in order of how sure it is (merge: the larger). */
enum energy_how {
	ENERGY_ALONE = 0,	/* the GPU's whole delta, the job alone on it */
	ENERGY_SHARED,		/* split by utilisation (evenly where none measured) */
	ENERGY_UNKNOWN		/* no counter, a failed read, or no utilisation to split by */
};

/* One job holding the GPU in an interval. */
struct energy_part {
	double		util;		/* in: its processes' SM utilisation, summed */
	double		joules;		/* out: its part of the interval's delta */
	int		how;		/* out: how that part was measured */
};

/*
 * Splits an interval's delta (joules; negative: unknown) among the n jobs
 * that held the GPU.  util_known says whether NVML gave per-process
 * utilisation for the interval; outside is the utilisation of processes
 * that are no job's.  Each part's joules and how are set.
 */
void	energy_split(double delta, int util_known, double outside, struct energy_part *p,
	    int n);
/* The counter's delta in joules from two reads in millijoules; -1 if it went back. */
double	energy_delta(uint64_t before_mj, uint64_t after_mj);
/* The less sure of two ways a figure was measured. */
int	energy_how_merge(int a, int b);
/* "alone", "shared", "unknown"; and back (-1: none of them). */
const char *energy_how_name(int how);
int	energy_how_parse(const char *s);

#endif
