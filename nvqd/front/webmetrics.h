/*
 * webmetrics.h: what /metrics says, in Prometheus' text format: jobs by
 * state, the GPUs' memory, suspends and resumes, the queue-wait and
 * run-time histograms.  A few rows read, whatever the history.
 */
#ifndef NVQ_WEBMETRICS_H
#define NVQ_WEBMETRICS_H

#include <stddef.h>

struct engine;

/* The text, the caller's to free, its length in *len; NULL if the database failed. */
char	*webmetrics_render(struct engine *, size_t *len);

#endif
