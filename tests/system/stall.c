/*
 * stall.c: makes nvqd hold memory for a client that never finishes.
 *
 *   stall SOCKET frames N BYTES SECONDS
 *	opens N connections; on each sends the header of a submit frame of
 *	the largest size (4 MiB) and BYTES of its body, then goes silent.
 *   stall SOCKET pings N SECONDS
 *	sends N ping requests on one connection and never reads a reply.
 *
 * Either way it prints "sent", sleeps SECONDS, then prints how many
 * connections nvqd still held open ("open K") and how many it had closed
 * ("closed K"), and the error text nvqd sent on the first one it closed.
 * For checking that nvqd bounds what it buffers per user.
 */
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#define MAX_BODY	(4U << 20)

static int
stall_connect(const char *path)
{
	struct sockaddr_un sa;
	int fd;

	memset(&sa, 0, sizeof(sa));
	sa.sun_family = AF_UNIX;
	snprintf(sa.sun_path, sizeof(sa.sun_path), "%s", path);
	if ((fd = socket(AF_UNIX, SOCK_STREAM, 0)) == -1)
		return -1;
	if (connect(fd, (struct sockaddr *)&sa, sizeof(sa)) == -1) {
		close(fd);
		return -1;
	}
	return fd;
}

/* Writes all of b, or stops at the first error (nvqd closed it). */
static int
stall_write(int fd, const unsigned char *b, size_t n)
{
	ssize_t r;

	while (n > 0) {
		if ((r = write(fd, b, n)) <= 0)
			return -1;
		b += r;
		n -= (size_t)r;
	}
	return 0;
}

static void
stall_header(unsigned char *h, unsigned len, int type)
{
	h[0] = len >> 24;
	h[1] = len >> 16;
	h[2] = len >> 8;
	h[3] = len;
	h[4] = 0;
	h[5] = 2;		/* PROTO_VERSION */
	h[6] = 0;
	h[7] = type;
}

int
main(int argc, char **argv)
{
	static unsigned char body[MAX_BODY];
	unsigned char *pings, buf[4096];
	struct pollfd *p;
	char first[512] = "";
	int i, n, open_ = 0, closed = 0;
	long bytes = 0, secs;
	ssize_t r;

	if (argc < 5)
		return 2;
	n = atoi(argv[3]);
	if (strcmp(argv[2], "frames") == 0 && argc == 6) {
		bytes = atol(argv[4]);
		secs = atol(argv[5]);
	} else if (strcmp(argv[2], "pings") == 0 && argc == 5)
		secs = atol(argv[4]);
	else
		return 2;
	if (n <= 0 || bytes < 0 || bytes > (long)MAX_BODY || (p = calloc((size_t)n, sizeof(*p))) == NULL)
		return 2;
	signal(SIGPIPE, SIG_IGN);
	if (strcmp(argv[2], "frames") == 0) {
		stall_header(buf, MAX_BODY, 3);		/* MSG_SUBMIT */
		for (i = 0; i < n; i++) {
			if ((p[i].fd = stall_connect(argv[1])) == -1)
				continue;
			p[i].events = POLLIN;
			if (stall_write(p[i].fd, buf, 8) == 0)
				stall_write(p[i].fd, body, (size_t)bytes);
		}
	} else {
		if ((pings = calloc((size_t)n, 8)) == NULL)
			return 1;
		for (i = 0; i < n; i++)
			stall_header(pings + 8 * i, 0, 9);	/* MSG_PING */
		p[0].fd = stall_connect(argv[1]);
		p[0].events = POLLIN;
		if (p[0].fd != -1)
			stall_write(p[0].fd, pings, (size_t)n * 8);
		n = 1;
	}
	printf("sent\n");
	fflush(stdout);
	sleep((unsigned)secs);
	poll(p, (nfds_t)n, 0);
	for (i = 0; i < n; i++) {
		if (p[i].fd == -1)
			continue;
		/* closed by nvqd: an error frame then EOF, or a reset */
		if (p[i].revents & (POLLHUP | POLLERR)) {
			closed++;
			/* the last frame before EOF is the error (pings: after many replies) */
			if (first[0] == '\0') {
				size_t have = 0;

				while ((r = read(p[i].fd, buf + have, sizeof(buf) - have)) > 0) {
					have += (size_t)r;
					if (have == sizeof(buf)) {
						memmove(buf, buf + 2048, 2048);
						have = 2048;
					}
				}
				/* find "error" in what is left */
				for (size_t k = 0; k + 10 < have; k++)
					if (memcmp(buf + k, "\005error", 6) == 0) {
						snprintf(first, sizeof(first), "%.*s",
						    (int)(have - k - 10), (char *)buf + k + 10);
						break;
					}
			}
		} else
			open_++;
		close(p[i].fd);
	}
	printf("open %d\nclosed %d\nerror %s\n", open_, closed, first);
	return 0;
}
