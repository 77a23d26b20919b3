/*
 * attach.c: nvq run's attach, as a client that may lie: sends MSG_ATTACH
 * for job ID announcing MASK (which of 0, 1, 2), then passes N descriptors
 * of /dev/null, and says what nvqd answered.
 * Usage: attach SOCKET ID MASK N
 */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>

#include "nvq.h"

int
main(int argc, char **argv)
{
	struct proto_buf b = { 0 };
	struct proto_msg m;
	int fds[3], i, n;

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
