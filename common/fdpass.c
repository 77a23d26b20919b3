/*
 * fdpass.c: descriptors over a Unix socket (see fdpass.h).
 */
#include <errno.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "fdpass.h"

union fdpass_cmsg {
	struct cmsghdr	h;
	char		buf[CMSG_SPACE(sizeof(int) * FDPASS_MAX)];
};

/* A message of one byte, with room for n descriptors. */
static void
fdpass_msg(struct msghdr *mh, struct iovec *iov, char *byte, union fdpass_cmsg *u, int n)
{
	memset(mh, 0, sizeof(*mh));
	iov->iov_base = byte;
	iov->iov_len = 1;
	mh->msg_iov = iov;
	mh->msg_iovlen = 1;
	mh->msg_control = u->buf;
	mh->msg_controllen = CMSG_SPACE(sizeof(int) * (size_t)n);
}

int
fdpass_send(int sock, const int *fds, int n)
{
	union fdpass_cmsg u;
	struct msghdr mh;
	struct cmsghdr *cm;
	struct iovec iov;
	char byte = 0;
	ssize_t r;

	if (n < 1 || n > FDPASS_MAX) {
		errno = EINVAL;
		return -1;
	}
	memset(&u, 0, sizeof(u));
	fdpass_msg(&mh, &iov, &byte, &u, n);
	cm = CMSG_FIRSTHDR(&mh);
	cm->cmsg_level = SOL_SOCKET;
	cm->cmsg_type = SCM_RIGHTS;
	cm->cmsg_len = CMSG_LEN(sizeof(int) * (size_t)n);
	memcpy(CMSG_DATA(cm), fds, sizeof(int) * (size_t)n);
	while ((r = sendmsg(sock, &mh, MSG_NOSIGNAL)) == -1 && errno == EINTR)
		;
	return r == 1 ? 0 : -1;
}

int
fdpass_recv(int sock, int *fds, int max)
{
	union fdpass_cmsg u;
	struct msghdr mh;
	struct cmsghdr *cm;
	struct iovec iov;
	char byte;
	ssize_t r;
	size_t k, i;
	int fd, n = 0, bad = 0;

	if (max < 1 || max > FDPASS_MAX)
		return -1;
	fdpass_msg(&mh, &iov, &byte, &u, max);
	if ((r = recvmsg(sock, &mh, MSG_DONTWAIT | MSG_CMSG_CLOEXEC)) == -1)
		return errno == EAGAIN || errno == EINTR ? 0 : -1;
	for (cm = CMSG_FIRSTHDR(&mh); cm != NULL; cm = CMSG_NXTHDR(&mh, cm)) {
		if (cm->cmsg_level != SOL_SOCKET || cm->cmsg_type != SCM_RIGHTS) {
			bad = 1;
			continue;
		}
		k = (cm->cmsg_len - CMSG_LEN(0)) / sizeof(int);
		for (i = 0; i < k; i++) {
			memcpy(&fd, CMSG_DATA(cm) + i * sizeof(int), sizeof(int));
			if (n < max)
				fds[n++] = fd;
			else {
				close(fd);
				bad = 1;
			}
		}
	}
	/* the one byte and its descriptors, none cut off */
	if (r != 1 || (mh.msg_flags & MSG_CTRUNC) || bad || n == 0) {
		for (i = 0; i < (size_t)n; i++)
			close(fds[i]);
		return -1;
	}
	return n;
}
