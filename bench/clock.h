/*
 * clock.h: what the C benchmarks in bench/ share: a monotonic clock in
 * seconds, and the comparison that sorts doubles (for medians).
 */
#ifndef NVQ_BENCH_CLOCK_H
#define NVQ_BENCH_CLOCK_H

#include <time.h>

static inline double
bench_now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + ts.tv_nsec / 1e9;
}

static inline int
bench_cmp(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

#endif
