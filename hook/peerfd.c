/*
 * peerfd.c: descriptors handed between the job's processes (see peerfd.h).
 */
#include <fcntl.h>
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
