/*
 * peerfd.c: descriptors handed between the job's processes (see peerfd.h).
 */
#include <errno.h>
#include <fcntl.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "peerfd.h"

#ifndef SYS_pidfd_open
#define SYS_pidfd_open	434
#endif
#ifndef SYS_pidfd_getfd
#define SYS_pidfd_getfd	438
#endif

static int peerfd_null_fd;	/* /dev/null + 1; 0: not opened yet */
static pid_t peerfd_super;	/* peerfd_tracer's */
static int peerfd_allowed;	/* PR_SET_PTRACER was asked */

int
peerfd_pidfd(pid_t pid)
{
	/* pidfd_open makes it close-on-exec */
	return (int)syscall(SYS_pidfd_open, pid, 0);
}

int
peerfd_take(int pidfd, int fd)
{
	/* the kernel makes the copy close-on-exec */
	return (int)syscall(SYS_pidfd_getfd, pidfd, fd, 0);
}

int
peerfd_null(void)
{
	int fd;

	if (__atomic_load_n(&peerfd_null_fd, __ATOMIC_ACQUIRE) == 0) {
		fd = open("/dev/null", O_RDONLY | O_CLOEXEC);
		/* two threads at once: one keeps its descriptor, the other closes its own */
		if (fd >= 0 && !__atomic_compare_exchange_n(&peerfd_null_fd, &(int){ 0 }, fd + 1, 0,
		    __ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE))
			close(fd);
	}
	return __atomic_load_n(&peerfd_null_fd, __ATOMIC_ACQUIRE) - 1;
}

void
peerfd_tracer(pid_t supervisor)
{
	peerfd_super = supervisor;
}

int
peerfd_allow(void)
{
	if (peerfd_super <= 0 || __atomic_exchange_n(&peerfd_allowed, 1, __ATOMIC_ACQ_REL))
		return 0;
	/* EINVAL: no Yama, where the same user may take them anyway */
	if (prctl(PR_SET_PTRACER, (unsigned long)peerfd_super, 0, 0, 0) == -1 && errno != EINVAL)
		return -1;
	return 0;
}

void
peerfd_child(void)
{
	__atomic_store_n(&peerfd_allowed, 0, __ATOMIC_RELEASE);
}
