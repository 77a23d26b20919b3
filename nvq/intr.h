/*
 * intr.h: the double Ctrl-C of nvq run on a terminal (intr.c): the first
 * reaches the job, a second within INTR_WINDOW seconds cancels it, as
 * srun's "one more within 1 sec to abort".
 */
#ifndef NVQ_INTR_H
#define NVQ_INTR_H

#include <stddef.h>

#define INTR_WINDOW	1.0	/* seconds */

/* What intr_scan remembers between reads: when the last Ctrl-C came. */
struct intr {
	double	last;		/* its time, seconds */
	int	seen;		/* one came (last is set) */
};

/*
 * Scans n bytes typed on the user's terminal, read at time now (seconds,
 * any clock that does not go back).  vintr is the byte the job's terminal
 * takes as an interrupt (its VINTR), or -1 where it takes none (ISIG off,
 * as an editor sets it; VINTR disabled): then no byte is a Ctrl-C and the
 * job gets them all.  Returns the offset of the Ctrl-C that came within
 * INTR_WINDOW of the one before (the caller passes the bytes before it to
 * the job and cancels the job), or n where none did.
 */
size_t	intr_scan(struct intr *, const unsigned char *buf, size_t n, double now, int vintr);

#endif
