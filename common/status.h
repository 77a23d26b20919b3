/*
 * status.h: the contract between nvqd and a job's supervisor (nvq-shim):
 * the record of how the job ended, in its status file.
 *
 * A record is fixed lines in a fixed order:
 *   exit N / signal N / cpu SECONDS / rss BYTES / ended EPOCH / reason TEXT / end
 * The reason (which may quote a user's path) has its control characters
 * escaped, so that nothing a user controls can add a line; a record without
 * its "end" line is torn or not written yet, and is no record.  The shim
 * makes the file and reserves STATUS_SIZE bytes for it when the job starts,
 * and writes the record in place with one pwrite when it ends: recording
 * the end needs no new blocks on a full disk.  Functions return 0 or -1.
 */
#ifndef NVQ_STATUS_H
#define NVQ_STATUS_H

#include <stddef.h>
#include <stdint.h>

/*
 * The reason of a job the kernel's OOM killer ended in its cgroup, over its
 * host memory limit (--mem): nvqd records it OUT_OF_MEMORY, not FAILED.
 */
#define STATUS_OOM	"oom-kill: over its host memory limit"

/* The bytes a status file reserves, and the most a record takes. */
#define STATUS_SIZE	4096

struct status_record {
	int		exit_code;	/* -1 if a signal ended it */
	int		signal;		/* 0 if it exited */
	double		cpu_time;
	int64_t		max_rss;	/* bytes */
	double		ended_at;
	char		reason[256];	/* why it could not start, or "" */
};

/* Reads a status file; 0, or -1 if there is none (yet), or it is not a whole record. */
int	status_read(const char *path, struct status_record *);
/*
 * Parses a record (len bytes, NUL bytes after it allowed: the rest of the
 * reserved space) into rs; 0, or -1 if it is not exactly the fields above,
 * in order, with values in range and an end line.  Pure.
 */
int	status_parse(const char *buf, size_t len, struct status_record *rs);
/*
 * Writes rs as a record into buf (len >= STATUS_SIZE), the reason escaped
 * and cut to fit; returns its length, or -1.  Pure.
 */
int	status_format(const struct status_record *rs, char *buf, size_t len);

#endif
