/*
 * flood.c: opens N connections to a Unix socket, sends two bytes of a
 * frame header on each and goes silent for SECONDS, then prints how many
 * nvqd still held open ("open K") and how many it had closed ("closed K").
 * For checking that one client who does this does not stop nvqd from
 * serving others.  Usage: flood SOCKET N SECONDS
 */
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

int
main(int argc, char **argv)
{
	struct sockaddr_un sa;
	struct pollfd *p;
	char c;
	int i, n, open_ = 0, closed = 0, failed = 0;

	if (argc != 4 || (n = atoi(argv[2])) <= 0)
		return 2;
	if ((p = calloc((size_t)n, sizeof(*p))) == NULL)
		return 1;
	memset(&sa, 0, sizeof(sa));
	sa.sun_family = AF_UNIX;
	snprintf(sa.sun_path, sizeof(sa.sun_path), "%s", argv[1]);
	/* nvqd may close a refused connection before the write: EPIPE, not death */
	signal(SIGPIPE, SIG_IGN);
	for (i = 0; i < n; i++) {
		p[i].fd = socket(AF_UNIX, SOCK_STREAM, 0);
		if (p[i].fd == -1 || connect(p[i].fd, (struct sockaddr *)&sa, sizeof(sa)) == -1) {
			if (p[i].fd != -1)
				close(p[i].fd);
			p[i].fd = -1;
			failed++;
			continue;
		}
		if (write(p[i].fd, "\0\0", 2) != 2) {
			/* refused and closed by nvqd already */
			close(p[i].fd);
			p[i].fd = -1;
			closed++;
			continue;
		}
		p[i].events = POLLIN;
	}
	printf("connected %d\n", n - failed - closed);
	fflush(stdout);
	sleep((unsigned)atoi(argv[3]));
	poll(p, (nfds_t)n, 0);
	for (i = 0; i < n; i++) {
		if (p[i].fd == -1)
			continue;
		/* closed by nvqd: an error frame then EOF, or a reset */
		if ((p[i].revents & (POLLIN | POLLHUP | POLLERR)) &&
		    (recv(p[i].fd, &c, 1, MSG_PEEK | MSG_DONTWAIT) >= 0 ||
		    (p[i].revents & (POLLHUP | POLLERR))))
			closed++;
		else
			open_++;
		close(p[i].fd);
	}
	printf("open %d\nclosed %d\nfailed %d\n", open_, closed, failed);
	return 0;
}
