/*
 * attach.c: nvq run's attach, as a client that may lie.
 *
 *   attach SOCKET ID MASK N
 *	sends MSG_ATTACH for job ID announcing MASK (which of 0, 1, 2), then
 *	passes N descriptors of /dev/null, and says what nvqd answered.
 *   attach SOCKET ID MASK hold K SECONDS
 *	sends MSG_ATTACH for job ID on K connections at once and passes no
 *	descriptor on any: prints "ready R refused F" (how many nvqd said it
 *	would take, how many it refused), and the first refusal's text, then
 *	keeps the connections for SECONDS (the slots nvqd keeps for them).
 */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include "nvq.h"

static int
attach_full(int fd, uint8_t *p, size_t n)
{
	ssize_t r;

	while (n > 0) {
		if ((r = read(fd, p, n)) <= 0)
			return -1;
		p += r;
		n -= (size_t)r;
	}
	return 0;
}

/* One connection's attach: 1 ready, 0 refused (its text into err), -1 no answer. */
static int
attach_ask(const char *path, int64_t id, const char *mask, int *fdp, char *err, size_t len)
{
	struct sockaddr_un sa;
	struct proto_buf b = { 0 };
	struct proto_msg m;
	uint8_t h[PROTO_HEADER], *body = NULL;
	char why[128];
	uint32_t n;
	int fd, type, r = -1;

	memset(&sa, 0, sizeof(sa));
	sa.sun_family = AF_UNIX;
	snprintf(sa.sun_path, sizeof(sa.sun_path), "%s", path);
	if ((fd = socket(AF_UNIX, SOCK_STREAM, 0)) == -1)
		return -1;
	if (connect(fd, (struct sockaddr *)&sa, sizeof(sa)) == -1)
		goto out;
	proto_begin(&b, MSG_ATTACH);
	proto_put_int(&b, "id", id);
	proto_put_str(&b, "fds", mask);
	if (proto_end(&b) == -1 || write(fd, b.data, b.len) != (ssize_t)b.len ||
	    attach_full(fd, h, sizeof(h)) == -1 ||
	    proto_header(h, &type, &n, why, sizeof(why)) == -1 ||
	    (body = malloc(n + 1)) == NULL || attach_full(fd, body, n) == -1 ||
	    proto_decode(type, body, n, &m, why, sizeof(why)) == -1)
		goto out;
	r = type != MSG_ERROR;
	if (r == 0)
		snprintf(err, len, "%s", proto_str(&m, "error") ? proto_str(&m, "error") : "?");
	proto_msg_free(&m);
out:
	proto_buf_free(&b);
	free(body);
	if (r == 1)
		*fdp = fd;
	else
		close(fd);
	return r;
}

static int
attach_hold(const char *path, int64_t id, const char *mask, int k, int secs)
{
	char err[512] = "", e[512];
	int i, fd, ready = 0, refused = 0;

	for (i = 0; i < k; i++) {
		e[0] = '\0';
		switch (attach_ask(path, id, mask, &fd, e, sizeof(e))) {
		case 1:
			ready++;
			break;
		case 0:
			if (refused++ == 0)
				snprintf(err, sizeof(err), "%s", e);
			break;
		}
	}
	printf("ready %d refused %d\n%s\n", ready, refused, err);
	fflush(stdout);
	sleep((unsigned)secs);
	return 0;
}

int
main(int argc, char **argv)
{
	struct proto_buf b = { 0 };
	struct proto_msg m;
	int fds[3], i, n;

	if (argc == 7 && strcmp(argv[4], "hold") == 0)
		return attach_hold(argv[1], atoll(argv[2]), argv[3], atoi(argv[5]), atoi(argv[6]));
	if (argc != 5 || (n = atoi(argv[4])) < 1 || n > 3)
		return 2;
	for (i = 0; i < n; i++)
		if ((fds[i] = open("/dev/null", O_RDWR)) == -1)
			return 1;
	proto_begin(&b, MSG_ATTACH);
	proto_put_int(&b, "id", atoll(argv[2]));
	proto_put_str(&b, "fds", argv[3]);
	if (client_pass_fds(argv[1], &b, fds, n, &m) == -1)
		return 1;
	printf("attached %lld\n", (long long)proto_int(&m, "attached", 0));
	proto_msg_free(&m);
	return 0;
}
