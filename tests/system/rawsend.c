/*
 * rawsend.c: sends the bytes on stdin to a Unix socket as they are, closes
 * its writing side, and prints what comes back: the header's type and the
 * reply's "error" text, if any.  For feeding nvqd garbage.
 * Usage: rawsend SOCKET [hold-seconds]
 */
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
	unsigned char buf[1 << 16];
	ssize_t n, total = 0;
	int fd;

	if (argc < 2)
		return 2;
	memset(&sa, 0, sizeof(sa));
	sa.sun_family = AF_UNIX;
	snprintf(sa.sun_path, sizeof(sa.sun_path), "%s", argv[1]);
	if ((fd = socket(AF_UNIX, SOCK_STREAM, 0)) == -1 ||
	    connect(fd, (struct sockaddr *)&sa, sizeof(sa)) == -1) {
		perror("connect");
		return 1;
	}
	while ((n = read(0, buf, sizeof(buf))) > 0)
		if (write(fd, buf, (size_t)n) != n)
			break;
	if (argc > 2)
		sleep((unsigned)atoi(argv[2]));
	shutdown(fd, SHUT_WR);
	while ((n = read(fd, buf + total, sizeof(buf) - 1 - (size_t)total)) > 0)
		total += n;
	if (total < 8) {
		printf("no reply (%zd bytes)\n", total);
		return 0;
	}
	buf[total] = '\0';
	printf("type %d", buf[6] << 8 | buf[7]);
	/* the error field's text: after 's', 5, "error", a 4-byte length */
	if (total > 8 + 11 && memcmp(buf + 9, "\005error", 6) == 0)
		printf(" error: %s", (char *)buf + 8 + 11);
	printf("\n");
	return 0;
}
