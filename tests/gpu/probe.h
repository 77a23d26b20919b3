/*
 * probe.h: what the GPU probes (staging_probe.c, offload_probe.c,
 * host_probe.c) share: a monotonic clock in seconds.
 */
#ifndef NVQ_PROBE_H
#define NVQ_PROBE_H

#include <time.h>

static inline double
now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

#endif
