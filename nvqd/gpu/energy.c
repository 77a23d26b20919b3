/*
 * energy.c: the split of a GPU's energy among the jobs that held it (see
 * energy.h).  Pure: no NVML, no clock, no allocation; engine_energy.c reads
 * the counters and the samples and keeps each job's sums.
 */
#include <string.h>

#include "energy.h"

static const char *const energy_names[] = { "alone", "shared", "unknown" };

void
energy_split(double delta, int util_known, double outside, struct energy_part *p, int n)
{
	double total = outside > 0 ? outside : 0;
	int i;

	for (i = 0; i < n; i++)
		total += p[i].util > 0 ? p[i].util : 0;
	for (i = 0; i < n; i++) {
		p[i].joules = 0;
		if (delta < 0) {
			p[i].how = ENERGY_UNKNOWN;
		} else if (n == 1 && (!util_known || outside <= 0)) {
			/* the GPU's whole delta: no other job, and no other process measured */
			p[i].joules = delta;
			p[i].how = ENERGY_ALONE;
		} else if (!util_known) {
			p[i].how = ENERGY_UNKNOWN;	/* shared, with nothing to split by */
		} else if (total <= 0) {
			/* no process did any work that NVML saw: the idle GPU's energy evenly */
			p[i].joules = delta / n;
			p[i].how = ENERGY_SHARED;
		} else {
			p[i].joules = delta * (p[i].util > 0 ? p[i].util : 0) / total;
			p[i].how = ENERGY_SHARED;
		}
	}
}

double
energy_delta(uint64_t before_mj, uint64_t after_mj)
{
	if (after_mj < before_mj)
		return -1;	/* the driver was loaded again: the counter began anew */
	return (double)(after_mj - before_mj) / 1000.0;
}

int
energy_how_merge(int a, int b)
{
	return a > b ? a : b;
}

const char *
energy_how_name(int how)
{
	if (how < ENERGY_ALONE || how > ENERGY_UNKNOWN)
		return "unknown";
	return energy_names[how];
}

int
energy_how_parse(const char *s)
{
	int i;

	for (i = ENERGY_ALONE; s != NULL && i <= ENERGY_UNKNOWN; i++)
		if (strcmp(s, energy_names[i]) == 0)
			return i;
	return -1;
}
