/*
 * tty.h: nvq run's pseudo-terminal (tty.c), as srun --pty and ssh -t make
 * one: the job's terminal, nvq's own raw meanwhile, bytes relayed both ways.
 */
#ifndef NVQ_TTY_H
#define NVQ_TTY_H

#include <stddef.h>

#include "intr.h"

#define TTY_PEND	4096	/* typed bytes the job's terminal has not taken yet */

/* The pseudo-terminal of one nvq run; tty_open fills it. */
struct tty {
	int		master;		/* nvq's side; -1 once closed */
	int		slave;		/* the job's side, until passed to nvqd; then -1 */
	int		hup;		/* no process holds the job's side any more */
	int		in_eof;		/* nvq's stdin ended (its terminal went away) */
	int		live;		/* the job runs: bytes go both ways (tty_start) */
	unsigned char	pend[TTY_PEND];	/* typed, not yet written to the master */
	size_t		npend, off;
	struct intr	intr;
};

enum { TTY_GOING, TTY_CANCEL };

/*
 * Opens a pseudo-terminal as the calling user, with the modes and size of
 * nvq's terminal (stdin's modes, stdout's size, as srun reads it), and
 * follows SIGWINCH.  0, or -1 (said).
 */
int	tty_open(struct tty *);
/* Closes the job's side, once nvqd has it. */
void	tty_passed(struct tty *);
/*
 * The job runs: what is typed is the job's from now on, nvq's terminal raw
 * until tty_restore (also at exit and on a fatal signal).
 */
void	tty_start(struct tty *);
/* nvq's terminal as it was before tty_start; nothing if it is not raw. */
void	tty_restore(void);
/*
 * Relays for up to ms milliseconds (less on a signal), once started: what
 * the job writes to stdout, what is typed to the job.  TTY_CANCEL where a
 * second Ctrl-C came within a second (intr.h), else TTY_GOING.
 */
int	tty_relay(struct tty *, int ms);
/*
 * Copies what the job still writes until no process holds its side, or
 * quiet_ms pass with nothing, or max_ms in all; then closes nvq's side,
 * which hangs up the job's terminal (SIGHUP for what is left of its session).
 */
void	tty_finish(struct tty *, int quiet_ms, int max_ms);

#endif
