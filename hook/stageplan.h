/*
 * stageplan.h: where a move out puts each allocation in the staging, and
 * which parts of which allocations each piece of the staging receives, so
 * that a piece is filled as soon as it is made (offload.c).  Pure: no
 * memory, no CUDA, no clock.
 *
 * The allocations lie end to end from offset 0, in the order given; the
 * staging is cut into pieces of chunk bytes, and no copy crosses a
 * piece's edge (each piece is page-locked on its own).
 */
#ifndef NVQ_STAGEPLAN_H
#define NVQ_STAGEPLAN_H

#include <stddef.h>

struct stageplan_part {
	size_t	item;		/* which allocation */
	size_t	from;		/* where in it the part begins */
	size_t	len;		/* bytes */
	size_t	at;		/* where in the piece it lands */
};

/*
 * Fills off[0..n] with where each of the n items of size[] begins
 * (off[n]: the end of the last) and returns that total.
 */
size_t	stageplan_layout(const size_t *size, size_t n, size_t *off);
/* The number of pieces of chunk bytes that total bytes take. */
size_t	stageplan_pieces(size_t total, size_t chunk);
/*
 * The parts piece c receives, one at a time: *cursor starts at 0 for each
 * piece; each call writes the next part to *p and returns 1, or returns 0
 * when the piece has no more.  off is stageplan_layout's.
 */
int	stageplan_next(const size_t *off, size_t n, size_t chunk, size_t c, size_t *cursor,
	    struct stageplan_part *p);

#endif
