/*
 * xreg.c: the job's table of exported device memory (see xreg.h).
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "proc.h"
#include "share.h"
#include "xreg.h"

#ifndef SYS_kcmp
#define SYS_kcmp	312
#endif
#define XREG_KCMP_FILE	0

static struct xreg_row *xreg_tab;	/* XREG_ROWS of them, mapped */

int
xreg_open(const char *share_path)
{
	char path[4096];

	if (share_path == NULL || *share_path == '\0' ||
	    snprintf(path, sizeof(path), "%s%s", share_path, SHARE_XREG_SUFFIX) >=
	    (int)sizeof(path))
		return -1;
	xreg_tab = share_map_file(path, XREG_ROWS * sizeof(struct xreg_row), 1);
	return xreg_tab != NULL ? 0 : -1;
}

int
xreg_active(void)
{
	return xreg_tab != NULL;
}

/* Whether the process a row names has ended (or the pid is another's now). */
static int
xreg_gone(int32_t pid, int64_t start)
{
	return pid <= 0 || proc_start_time(pid) != start;
}

/* Takes row k if it is free (or, with reclaim, its process ended): 1 if taken. */
static int
xreg_take(int k, int reclaim)
{
	struct xreg_row *r = &xreg_tab[k];
	int32_t pid = __atomic_load_n(&r->pid, __ATOMIC_ACQUIRE);

	if (pid < 0 || (pid > 0 && (!reclaim || !xreg_gone(pid, r->start))))
		return 0;
	return __atomic_compare_exchange_n(&r->pid, &pid, -1, 0, __ATOMIC_ACQ_REL,
	    __ATOMIC_RELAXED);
}

int
xreg_add(int fd, uint64_t size, uint32_t *gen)
{
	struct xreg_row *r;
	struct stat st;
	int k, pass;

	if (xreg_tab == NULL || fstat(fd, &st) == -1)
		return -1;
	for (pass = 0; pass < 2; pass++)
		for (k = 0; k < XREG_ROWS; k++) {
			if (!xreg_take(k, pass))
				continue;
			r = &xreg_tab[k];
			r->fd = fd;
			r->start = proc_start_time(getpid());
			r->dev = (uint64_t)st.st_dev;
			r->ino = (uint64_t)st.st_ino;
			r->size = size;
			r->state = XREG_IN;
			*gen = __atomic_add_fetch(&r->gen, 1, __ATOMIC_ACQ_REL);
			__atomic_store_n(&r->pid, (int32_t)getpid(), __ATOMIC_RELEASE);
			return k;
		}
	return -1;
}

void
xreg_drop(int row, uint32_t gen)
{
	struct xreg_row *r;

	if (xreg_tab == NULL || row < 0 || row >= XREG_ROWS)
		return;
	r = &xreg_tab[row];
	if (__atomic_load_n(&r->gen, __ATOMIC_ACQUIRE) == gen &&
	    __atomic_load_n(&r->pid, __ATOMIC_ACQUIRE) == (int32_t)getpid())
		__atomic_store_n(&r->pid, 0, __ATOMIC_RELEASE);
}

void
xreg_set(int row, uint32_t gen, int state)
{
	if (xreg_tab != NULL && row >= 0 && row < XREG_ROWS &&
	    __atomic_load_n(&xreg_tab[row].gen, __ATOMIC_ACQUIRE) == gen)
		__atomic_store_n(&xreg_tab[row].state, state, __ATOMIC_RELEASE);
}

int
xreg_find(int fd, struct xreg_row *out, uint32_t *gen)
{
	struct xreg_row r;
	struct stat st;
	int k, c, found = -1, candidates = 0, cmp;
	long same;

	if (xreg_tab == NULL || fstat(fd, &st) == -1)
		return -1;
	for (k = 0; k < XREG_ROWS; k++) {
		if (__atomic_load_n(&xreg_tab[k].pid, __ATOMIC_ACQUIRE) <= 0)
			continue;
		c = (int)__atomic_load_n(&xreg_tab[k].gen, __ATOMIC_ACQUIRE);
		memcpy(&r, &xreg_tab[k], sizeof(r));
		if (r.pid <= 0 || r.dev != (uint64_t)st.st_dev || r.ino != (uint64_t)st.st_ino ||
		    xreg_gone(r.pid, r.start))
			continue;
		/* the same open file, passed over a socket: certain, where the kernel tells */
		same = syscall(SYS_kcmp, (pid_t)getpid(), (pid_t)r.pid, XREG_KCMP_FILE,
		    (unsigned long)fd, (unsigned long)r.fd);
		cmp = same == 0 ? 1 : same > 0 ? 0 : -1;
		if (cmp == 0)
			continue;
		if (cmp == 1 || candidates++ == 0) {
			*out = r;
			*gen = (uint32_t)c;
			found = k;
		}
		if (cmp == 1)
			return k;
	}
	/* without kcmp, only an inode that names one export */
	return candidates == 1 ? found : -1;
}

int
xreg_held(int row, uint32_t gen)
{
	return xreg_tab != NULL && row >= 0 && row < XREG_ROWS &&
	    __atomic_load_n(&xreg_tab[row].gen, __ATOMIC_ACQUIRE) == gen &&
	    __atomic_load_n(&xreg_tab[row].pid, __ATOMIC_ACQUIRE) > 0;
}

int
xreg_state(int row, uint32_t gen)
{
	struct xreg_row *r;

	if (xreg_tab == NULL || row < 0 || row >= XREG_ROWS)
		return 0;
	r = &xreg_tab[row];
	if (__atomic_load_n(&r->gen, __ATOMIC_ACQUIRE) != gen ||
	    xreg_gone(__atomic_load_n(&r->pid, __ATOMIC_ACQUIRE), r->start))
		return 0;
	return __atomic_load_n(&r->state, __ATOMIC_ACQUIRE);
}
