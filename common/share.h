/*
 * share.h: one account of device memory for all the processes of a job.
 *
 * nvq-shim makes a file in /dev/shm for each job with the hook (its path in
 * NVQ_SHARE, owned by the job's user, mode 0600) and removes it when the
 * job ends.  Every process of the job maps it, whatever session it made
 * for itself and whatever descriptors it closed.  It holds one counter per
 * device, what the job's processes hold together, and one slot per
 * process, what that process holds: an allocation reserves its size from
 * the counter with a compare-and-swap against the job's limit, so two
 * processes allocating at the same instant can never together pass it,
 * and one that fits is never refused for another's stale figure.  A slot
 * whose process has ended (its pid gone, or another process's start time)
 * is taken back by the next process that needs room.  No round trip to
 * nvqd on the allocation path.
 *
 * Not the hook's enforcement of last resort: a process that leaves the
 * hook out is seen by NVML, and nvqd's figures are what it schedules by.
 */
#ifndef NVQ_SHARE_H
#define NVQ_SHARE_H

#include <stdint.h>
#include <sys/types.h>

#define SHARE_DEVS	64
#define SHARE_SLOTS	256
#define SHARE_MAGIC	0x6e76717368617232ULL	/* "nvqshar2" */
/* The job's table of exported memory beside it (hook/xreg.h): its path, this appended. */
#define SHARE_XREG_SUFFIX	"-x"

struct share_slot {
	int32_t		pid;		/* 0: free; -1: being taken back */
	int32_t		pad;
	int64_t		start;		/* its start time, in ticks since boot */
	uint64_t	held[SHARE_DEVS];
};

struct share_map {
	uint64_t	magic;
	uint64_t	reserved[SHARE_DEVS];	/* the job's processes together */
	uint64_t	peak[SHARE_DEVS];	/* the most reserved has been */
	struct share_slot slot[SHARE_SLOTS];
};

/*
 * Makes the file for a job (nvq-shim, before the job starts): path made
 * unique, created exclusively, owned by uid:gid, mode 0600.  0, or -1.
 */
int	share_create(char *path, size_t len, uid_t uid, gid_t gid);
/*
 * Maps the job's file and takes a slot for this process (with its start
 * time, to tell it from a later process with its pid).  0, or -1: then this
 * process counts alone (the hook's own budget still holds).
 */
int	share_open(const char *path);
/*
 * Maps size bytes of the file at path, shared, if it is a regular file of
 * this process's user (not a link: another user's would lie to the job);
 * with create, made (0600) or brought to size if need be.  NULL if not.
 */
void	*share_map_file(const char *path, size_t size, int create);
/* After fork, in the child: a slot of its own (it holds nothing yet). */
void	share_child(void);
/* Whether share_open succeeded. */
int	share_active(void);
/* Takes size from dev's account if the job stays within limit (0: none); 0, or -1. */
int	share_reserve(int dev, uint64_t size, uint64_t limit);
/* Gives size back (a failed allocation, a free). */
void	share_release(int dev, uint64_t size);
/* Takes back what processes that ended held (for a figure of what is free). */
void	share_tidy(void);
/* What the job's processes hold together on dev. */
uint64_t share_total(int dev);
/*
 * The most the processes of the job whose file path is held together, per
 * device, into peaks[SHARE_DEVS] (the SPANK plugin, at a step's end); 0, or
 * -1 if it is not such a file.
 */
int	share_peaks(const char *path, uint64_t *peaks);
/* Whether the process a slot names is gone; the test's, for a fake /proc. */
extern int (*share_gone)(pid_t, int64_t start);

#endif
