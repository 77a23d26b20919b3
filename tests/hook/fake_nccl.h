/*
 * fake_nccl.h: what the fake libcuda's "collectives" (fake_nccl.c) and
 * fake_job's ddp mode share: a small file, FAKE_NCCL_FILE, mapped by every
 * rank, with each rank's launches of NCCL kernels per communicator.
 */
#ifndef FAKE_NCCL_H
#define FAKE_NCCL_H

#include <stdint.h>

#define FAKE_NCCL_RANKS	8
#define FAKE_NCCL_COMMS	4

struct fake_nccl_file {
	uint64_t	launched[FAKE_NCCL_RANKS][FAKE_NCCL_COMMS];
	uint64_t	stop;		/* ddp: the step every rank ends after; 0: not yet */
};

#endif
