/*
 * webrate.h: how often each client address may ask the web listener for
 * something it computes (/metrics, /api/...): a token bucket per address,
 * `rate` requests a second with bursts of as many, in a table of fixed
 * size (the address least recently seen gives its place up).  Pure: the
 * time comes as an argument; no clock, no I/O, no allocation.
 */
#ifndef NVQ_WEBRATE_H
#define NVQ_WEBRATE_H

#include <stdint.h>

#define WEBRATE_SLOTS	256

struct webrate {
	double		rate;		/* tokens a second, and the most one holds */
	struct {
		uint32_t	addr;	/* IPv4, network order; 0: free */
		double		tokens, at;
	}		slot[WEBRATE_SLOTS];
};

/* A table where every address may ask rate times a second. */
void	webrate_init(struct webrate *, double rate);
/* 1 if addr may ask now (a token taken), 0 if it asks too often. */
int	webrate_take(struct webrate *, uint32_t addr, double now);

#endif
