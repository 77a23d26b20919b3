/*
 * xreg.h: the job's table of the device memory its processes export
 * NCCL's way (cuMemExportToShareableHandle to a POSIX descriptor, passed
 * to a peer over a Unix socket), so that the process that imports such a
 * descriptor can tell whose memory it is, and after a suspend take the new
 * descriptor from its maker (xmem.h).
 *
 * A file beside the job's account (NVQ_SHARE followed by
 * SHARE_XREG_SUFFIX, mode 0600), made by the first process that exports,
 * removed by nvq-shim with the account.  One row per export: the
 * exporter's pid, start time and the number of a descriptor of that same
 * open file that it keeps, and the file's device and inode.  An importer
 * finds its row by the open file itself (kcmp, KCMP_FILE: a descriptor
 * passed with SCM_RIGHTS is the same open file), or by device and inode
 * where kcmp is not allowed.  Rows are taken and dropped with atomic
 * operations; a row whose process ended is taken back by the next export
 * that finds the table full.  Everything in it is the job's own claim
 * about itself: nvqd never reads it.
 */
#ifndef NVQ_XREG_H
#define NVQ_XREG_H

#include <stdint.h>

#define XREG_ROWS	4096

enum { XREG_IN = 1, XREG_OUT = 2 };	/* where the memory is: on its device, moved out */

struct xreg_row {
	int32_t		pid;		/* 0: free; -1: being written */
	int32_t		fd;		/* the exporter's kept descriptor of the memory */
	int64_t		start;		/* its start time */
	uint64_t	dev, ino;	/* of the exported file */
	uint64_t	size;		/* of the allocation */
	uint32_t	gen;		/* bumped each time the row is taken */
	int32_t		state;		/* XREG_IN, XREG_OUT */
};

/* Maps the job's table beside its account at share_path (made if missing): 0, or -1. */
int	xreg_open(const char *share_path);
/* Whether xreg_open succeeded (in this process or its parent before a fork). */
int	xreg_active(void);
/* A row for this process's kept descriptor fd of size bytes: its index (*gen set), or -1. */
int	xreg_add(int fd, uint64_t size, uint32_t *gen);
/* Gives a row back, if it still is the one taken with gen. */
void	xreg_drop(int row, uint32_t gen);
/* Says where the memory of a row of this process is (XREG_IN, XREG_OUT). */
void	xreg_set(int row, uint32_t gen, int state);
/*
 * The row of the export that fd (this process's descriptor) is the same
 * open file as, its process alive: its index with *out and *gen filled,
 * or -1.
 */
int	xreg_find(int fd, struct xreg_row *out, uint32_t *gen);
/* Whether a row still is the one taken with gen (no look at its process: cheap). */
int	xreg_held(int row, uint32_t gen);
/* A row's state if it still is the one taken with gen and its process lives; 0 if not. */
int	xreg_state(int row, uint32_t gen);

#endif
