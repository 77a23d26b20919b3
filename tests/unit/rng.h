/*
 * rng.h: the unit tests' random streams, a xorshift seeded by each test,
 * so that a failing seed reproduces.
 */
#ifndef NVQ_TEST_RNG_H
#define NVQ_TEST_RNG_H

#include <stdint.h>

static uint64_t rng_state;

static uint64_t
rng(void)
{
	rng_state ^= rng_state << 13;
	rng_state ^= rng_state >> 7;
	rng_state ^= rng_state << 17;
	return rng_state;
}

#endif
