/*
 * share.c: one account of device memory for all the processes of a job
 * (see share.h).  Lock-free: every change is one atomic operation on the
 * mapped file, so a process killed at any instant leaves it consistent
 * (at worst a reservation not yet in its slot stays counted until the job
 * ends: counted too high, never too low).
 */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <unistd.h>

#include "proc.h"
#include "share.h"

static struct share_map *share_map;
static int share_me = -1;	/* this process's slot */

/* Whether pid is gone, or is a process other than the one that started at start. */
static int
share_gone_proc(pid_t pid, int64_t start)
{
	int64_t now = proc_start_time(pid);

	/* unreadable but there (another user's, hidepid): alive */
	return now == -1 ? kill(pid, 0) == -1 && errno == ESRCH : now != start;
}

int (*share_gone)(pid_t, int64_t) = share_gone_proc;

int
share_create(char *path, size_t len, uid_t uid, gid_t gid)
{
	unsigned long long r = 0;
	int fd;

	if (getrandom(&r, sizeof(r), 0) != sizeof(r))
		return -1;
	snprintf(path, len, "/dev/shm/nvq-share-%d-%016llx", (int)getpid(), r);
	if ((fd = open(path, O_RDWR | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600)) == -1)
		return -1;
	if (ftruncate(fd, sizeof(struct share_map)) == -1 || fchown(fd, uid, gid) == -1 ||
	    pwrite(fd, &(uint64_t){ SHARE_MAGIC }, sizeof(uint64_t), 0) != sizeof(uint64_t)) {
		close(fd);
		unlink(path);
		return -1;
	}
	close(fd);
	return 0;
}

/* Empties slot k, which the caller took (pid -1): its holdings leave the account. */
static void
share_empty(int k)
{
	struct share_slot *s = &share_map->slot[k];
	uint64_t h;
	int d;

	for (d = 0; d < SHARE_DEVS; d++)
		if ((h = __atomic_exchange_n(&s->held[d], 0, __ATOMIC_ACQ_REL)) != 0)
			__atomic_sub_fetch(&share_map->reserved[d], h, __ATOMIC_ACQ_REL);
	__atomic_store_n(&s->pid, 0, __ATOMIC_RELEASE);
}

/*
 * Takes back the slots of processes that ended, and with mine set, those of
 * pid mine other than this process's own (an earlier image of this process,
 * before its exec: the driver freed what it held).  Returns how many.
 */
static int
share_reclaim(pid_t mine)
{
	struct share_slot *s;
	int32_t pid;
	int k, n = 0;

	for (k = 0; k < SHARE_SLOTS; k++) {
		s = &share_map->slot[k];
		pid = __atomic_load_n(&s->pid, __ATOMIC_ACQUIRE);
		if (pid <= 0 || k == share_me)
			continue;
		if (pid != mine && !share_gone(pid, __atomic_load_n(&s->start, __ATOMIC_ACQUIRE)))
			continue;
		/* one process takes it back: the one whose swap succeeds */
		if (!__atomic_compare_exchange_n(&s->pid, &pid, -1, 0, __ATOMIC_ACQ_REL,
		    __ATOMIC_ACQUIRE))
			continue;
		share_empty(k);
		n++;
	}
	return n;
}

/* A free slot for self; -1 if none even after taking back the dead's. */
static int
share_claim(pid_t self, int64_t start)
{
	int32_t zero;
	int k, round;

	for (round = 0; round < 2; round++) {
		for (k = 0; k < SHARE_SLOTS; k++) {
			zero = 0;
			if (__atomic_compare_exchange_n(&share_map->slot[k].pid, &zero, (int32_t)self,
			    0, __ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE)) {
				__atomic_store_n(&share_map->slot[k].start, start, __ATOMIC_RELEASE);
				return k;
			}
		}
		if (share_reclaim(0) == 0)
			break;
	}
	return -1;
}

void *
share_map_file(const char *path, size_t size, int create)
{
	struct stat st;
	void *m;
	int fd;

	if ((fd = open(path, O_RDWR | O_NOFOLLOW | O_CLOEXEC | (create ? O_CREAT : 0), 0600)) ==
	    -1)
		return NULL;
	if (fstat(fd, &st) == -1 || !S_ISREG(st.st_mode) || st.st_uid != geteuid() ||
	    ((size_t)st.st_size != size && (!create || ftruncate(fd, (off_t)size) == -1))) {
		close(fd);
		return NULL;
	}
	m = mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	close(fd);
	return m == MAP_FAILED ? NULL : m;
}

int
share_open(const char *path)
{
	pid_t self = getpid();
	int64_t start = proc_start_time(getpid());
	void *m;

	share_map = NULL;	/* once per process; a failure leaves none */
	share_me = -1;
	if (path == NULL || *path == '\0')
		return -1;
	if ((m = share_map_file(path, sizeof(struct share_map), 0)) == NULL)
		return -1;
	share_map = m;
	share_me = -1;
	if (share_map->magic != SHARE_MAGIC) {
		munmap(m, sizeof(struct share_map));
		share_map = NULL;
		return -1;
	}
	share_reclaim(self);	/* what an earlier image of this process held */
	if ((share_me = share_claim(self, start)) == -1) {
		munmap(m, sizeof(struct share_map));
		share_map = NULL;
		return -1;
	}
	return 0;
}

void
share_child(void)
{
	if (share_map == NULL)
		return;
	share_me = -1;
	if ((share_me = share_claim(getpid(), proc_start_time(getpid()))) == -1) {
		munmap(share_map, sizeof(struct share_map));
		share_map = NULL;
	}
}

int
share_active(void)
{
	return share_map != NULL;
}

int
share_reserve(int dev, uint64_t size, uint64_t limit)
{
	uint64_t cur, peak;
	int tried = 0;

	if (share_map == NULL || dev < 0 || dev >= SHARE_DEVS)
		return 0;
	cur = __atomic_load_n(&share_map->reserved[dev], __ATOMIC_ACQUIRE);
	for (;;) {
		if (limit > 0 && (size > limit || cur > limit - size)) {
			/* a process that ended may still be counted: take it back, once */
			if (tried++ || share_reclaim(0) == 0)
				return -1;
			cur = __atomic_load_n(&share_map->reserved[dev], __ATOMIC_ACQUIRE);
			continue;
		}
		if (__atomic_compare_exchange_n(&share_map->reserved[dev], &cur, cur + size, 0,
		    __ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE))
			break;
	}
	for (cur += size, peak = __atomic_load_n(&share_map->peak[dev], __ATOMIC_RELAXED);
	    cur > peak && !__atomic_compare_exchange_n(&share_map->peak[dev], &peak, cur, 0,
	    __ATOMIC_RELAXED, __ATOMIC_RELAXED);)
		;
	/* then in our slot: killed in between, it stays counted (too high, never too low) */
	__atomic_add_fetch(&share_map->slot[share_me].held[dev], size, __ATOMIC_ACQ_REL);
	return 0;
}

void
share_release(int dev, uint64_t size)
{
	struct share_slot *s;
	uint64_t h;

	if (share_map == NULL || dev < 0 || dev >= SHARE_DEVS)
		return;
	s = &share_map->slot[share_me];
	/* never below zero: only what this slot holds leaves the account */
	h = __atomic_load_n(&s->held[dev], __ATOMIC_ACQUIRE);
	do {
		if (size > h)
			size = h;
	} while (!__atomic_compare_exchange_n(&s->held[dev], &h, h - size, 0, __ATOMIC_ACQ_REL,
	    __ATOMIC_ACQUIRE));
	if (size > 0)
		__atomic_sub_fetch(&share_map->reserved[dev], size, __ATOMIC_ACQ_REL);
}

void
share_tidy(void)
{
	if (share_map != NULL)
		share_reclaim(0);
}

uint64_t
share_total(int dev)
{
	if (share_map == NULL || dev < 0 || dev >= SHARE_DEVS)
		return 0;
	return __atomic_load_n(&share_map->reserved[dev], __ATOMIC_ACQUIRE);
}

int
share_peaks(const char *path, uint64_t *peaks)
{
	struct share_map m;
	ssize_t n;
	int fd;

	if ((fd = open(path, O_RDONLY | O_NOFOLLOW | O_CLOEXEC)) == -1)
		return -1;
	n = pread(fd, &m, offsetof(struct share_map, slot), 0);
	close(fd);
	if (n != (ssize_t)offsetof(struct share_map, slot) || m.magic != SHARE_MAGIC)
		return -1;
	memcpy(peaks, m.peak, sizeof(m.peak));
	return 0;
}
