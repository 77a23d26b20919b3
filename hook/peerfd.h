/*
 * peerfd.h: descriptors the hook hands between the job's processes (CUDA
 * IPC in ipc.c and offload.c, NCCL's buffers in xmem.c): another process's
 * descriptor taken through its pidfd, and /dev/null, which stands under an
 * exported descriptor's number while a suspend has its memory out (so that
 * the number is not given to another file meanwhile).
 */
#ifndef NVQ_PEERFD_H
#define NVQ_PEERFD_H

#include <sys/types.h>

/* A pidfd of pid (close-on-exec), or -1 with errno. */
int	peerfd_pidfd(pid_t pid);
/* A copy of descriptor fd of the process behind pidfd, or -1 with errno. */
int	peerfd_take(int pidfd, int fd);
/* /dev/null, opened once for the process; -1 if it cannot be. */
int	peerfd_null(void);
/* Once, at init: the job's supervisor, whose descendants may take ours (0: none known). */
void	peerfd_tracer(pid_t supervisor);
/*
 * Lets the job's processes take this process's descriptors with
 * pidfd_getfd (PR_SET_PTRACER to the supervisor, where Yama asks); once.
 * 0, or -1 with errno (the first time only).
 */
int	peerfd_allow(void);
/* In a forked child: the permission is the parent's, to be given again. */
void	peerfd_child(void);

#endif
