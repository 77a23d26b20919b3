/*
 * hookpeer.c: a job's process that speaks the hook's link to nvqd by hand
 * (NVQ_HOOK_SOCKET, NVQ_JOB_ID), for the tests of what nvqd believes of it.
 *
 *   hookpeer handoff PIDFILE EOFFILE
 *	a child connects and says hello, hands the socket to its parent
 *	(SCM_RIGHTS) and exits; the parent writes the child's pid to PIDFILE
 *	once it is reaped, reads the socket without ever answering, writes
 *	"eof" to EOFFILE if nvqd closes it, and sleeps on.
 *   hookpeer claim BYTES SECONDS [SHARED]
 *	says hello, reports BYTES used (and peak) on the job's first GPU,
 *	and SHARED bytes shared in a way nvq cannot move (0 if not given),
 *	then answers like a hook (acknowledges revokes, moves nothing) for
 *	SECONDS.
 *   hookpeer gate BYTES SECONDS DIR
 *	as claim, but a revoke is acknowledged only once DIR/go exists; it
 *	writes DIR/asked when one comes (for stalling nvqd in between).
 *   hookpeer cutter BYTES SECONDS
 *	as claim, but its hello says it can cut, and it answers every revoke
 *	with NCCL counts (one communicator, one launch) and never
 *	acknowledges: a rank that never reaches any cut, or a hostile one.
 */
#include <errno.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "proto.h"

static int
peer_connect(void)
{
	const char *path = getenv("NVQ_HOOK_SOCKET");
	struct sockaddr_un sa;
	int fd;

	if (path == NULL || getenv("NVQ_JOB_ID") == NULL) {
		fprintf(stderr, "hookpeer: not in a job\n");
		exit(2);
	}
	memset(&sa, 0, sizeof(sa));
	sa.sun_family = AF_UNIX;
	snprintf(sa.sun_path, sizeof(sa.sun_path), "%s", path);
	if ((fd = socket(AF_UNIX, SOCK_STREAM, 0)) == -1 ||
	    connect(fd, (struct sockaddr *)&sa, sizeof(sa)) == -1) {
		perror("hookpeer: connect");
		exit(1);
	}
	return fd;
}

static void
peer_send(int fd, struct proto_buf *b)
{
	if (proto_end(b) == -1 || write(fd, b->data, b->len) != (ssize_t)b->len)
		fprintf(stderr, "hookpeer: cannot send\n");
	proto_buf_free(b);
}

static void
peer_hello(int fd, int cut)
{
	struct proto_buf b = { 0 };

	proto_begin(&b, MSG_HOOK_HELLO);
	proto_put_int(&b, "job", atoll(getenv("NVQ_JOB_ID")));
	proto_put_int(&b, "pid", getpid());
	if (cut) {
		proto_put_int(&b, "version", PROTO_HOOK_VERSION);
		proto_put_int(&b, "cut", 1);
	}
	peer_send(fd, &b);
}

static int
peer_full(int fd, uint8_t *p, size_t n)
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

/* Reads one frame into m; -1 at EOF or on a bad frame. */
static int
peer_read(int fd, struct proto_msg *m)
{
	uint8_t h[PROTO_HEADER], *body;
	char err[128];
	uint32_t len;
	int type, r;

	if (peer_full(fd, h, sizeof(h)) == -1 ||
	    proto_header(h, &type, &len, err, sizeof(err)) == -1 ||
	    (body = malloc(len + 1)) == NULL)
		return -1;
	if (peer_full(fd, body, len) == -1) {
		free(body);
		return -1;
	}
	r = proto_decode(type, body, len, m, err, sizeof(err));
	free(body);
	return r;
}

static void
peer_put(const char *file, const char *text)
{
	char tmp[4096];
	FILE *fp;

	snprintf(tmp, sizeof(tmp), "%s.tmp", file);
	if ((fp = fopen(tmp, "w")) == NULL)
		return;
	fprintf(fp, "%s\n", text);
	fclose(fp);
	rename(tmp, file);
}

static int
peer_handoff(const char *pidfile, const char *eoffile)
{
	struct proto_msg m;
	struct msghdr mh;
	struct iovec iov;
	union { struct cmsghdr h; char buf[CMSG_SPACE(sizeof(int))]; } cm;
	char c = 0, pid[32];
	int sp[2], fd = -1, st;
	pid_t child;

	if (socketpair(AF_UNIX, SOCK_STREAM, 0, sp) == -1 || (child = fork()) == -1)
		return 1;
	memset(&mh, 0, sizeof(mh));
	memset(&cm, 0, sizeof(cm));
	iov.iov_base = &c;
	iov.iov_len = 1;
	mh.msg_iov = &iov;
	mh.msg_iovlen = 1;
	mh.msg_control = cm.buf;
	mh.msg_controllen = sizeof(cm.buf);
	if (child == 0) {
		fd = peer_connect();
		peer_hello(fd, 0);
		/* nvqd's first word: the hello was taken */
		if (peer_read(fd, &m) == 0)
			proto_msg_free(&m);
		cm.h.cmsg_level = SOL_SOCKET;
		cm.h.cmsg_type = SCM_RIGHTS;
		cm.h.cmsg_len = CMSG_LEN(sizeof(int));
		memcpy(CMSG_DATA(&cm.h), &fd, sizeof(int));
		_exit(sendmsg(sp[1], &mh, 0) == 1 ? 0 : 1);
	}
	if (recvmsg(sp[0], &mh, 0) != 1 || mh.msg_controllen < CMSG_LEN(sizeof(int))) {
		fprintf(stderr, "hookpeer: no socket from the child\n");
		return 1;
	}
	memcpy(&fd, CMSG_DATA(&cm.h), sizeof(int));
	waitpid(child, &st, 0);
	snprintf(pid, sizeof(pid), "%d", (int)child);
	peer_put(pidfile, pid);
	while (peer_read(fd, &m) == 0)
		proto_msg_free(&m);
	peer_put(eoffile, "eof");
	sleep(300);
	return 0;
}

/* Waits until GATE exists (NULL: no gate), or until until. */
static void
peer_gate(const char *gate, time_t until)
{
	char go[4096];

	if (gate == NULL)
		return;
	snprintf(go, sizeof(go), "%s/asked", gate);
	peer_put(go, "asked");
	snprintf(go, sizeof(go), "%s/go", gate);
	while (access(go, F_OK) == -1 && time(NULL) < until)
		usleep(20000);
}

static int
peer_claim(long long bytes, int seconds, long long shared, const char *gate, int cutter)
{
	struct proto_buf b = { 0 };
	struct proto_msg m;
	struct pollfd p;
	char uuid[128], *cvd = getenv("CUDA_VISIBLE_DEVICES");
	time_t until = time(NULL) + seconds;
	int fd = peer_connect();

	snprintf(uuid, sizeof(uuid), "%s", cvd != NULL ? cvd : "");
	uuid[strcspn(uuid, ",")] = '\0';
	peer_hello(fd, cutter);
	proto_begin(&b, MSG_HOOK_REPORT);
	if (shared > 0)
		proto_put_int(&b, "shared", shared);
	proto_put_int(&b, "id", 0);
	proto_put_str(&b, "uuid", uuid);
	proto_put_int(&b, "used", bytes);
	proto_put_int(&b, "peak", bytes);
	peer_send(fd, &b);
	p.fd = fd;
	p.events = POLLIN;
	while (time(NULL) < until) {
		if (poll(&p, 1, 200) <= 0)
			continue;
		if (peer_read(fd, &m) == -1) {
			fprintf(stderr, "hookpeer: nvqd closed the link\n");
			sleep((unsigned)(until - time(NULL)));
			return 0;
		}
		memset(&b, 0, sizeof(b));
		if (cutter && m.type == MSG_HOOK_STATE && proto_int(&m, "granted", 1) == 0 &&
		    proto_int(&m, "cut", 0) == 1) {
			proto_begin(&b, MSG_HOOK_CUT);
			proto_put_int(&b, "seq", proto_int(&m, "seq", 0));
			proto_put_int(&b, "n", 1);
			peer_send(fd, &b);
		} else if (m.type == MSG_HOOK_STATE && proto_int(&m, "granted", 1) == 0) {
			peer_gate(gate, until);
			proto_begin(&b, MSG_HOOK_ACK);
			proto_put_int(&b, "seq", proto_int(&m, "seq", 0));
			peer_send(fd, &b);
		} else if (m.type == MSG_HOOK_MOVE) {
			proto_begin(&b, MSG_HOOK_MOVED);
			proto_put_int(&b, "seq", proto_int(&m, "seq", 0));
			proto_put_int(&b, "out", proto_int(&m, "out", 1));
			proto_put_int(&b, "bytes", 0);
			proto_put_int(&b, "left", 0);
			proto_put_int(&b, "us", 0);
			peer_send(fd, &b);
		}
		proto_msg_free(&m);
	}
	return 0;
}

int
main(int argc, char **argv)
{
	if (argc == 4 && strcmp(argv[1], "handoff") == 0)
		return peer_handoff(argv[2], argv[3]);
	if ((argc == 4 || argc == 5) && strcmp(argv[1], "claim") == 0)
		return peer_claim(atoll(argv[2]), atoi(argv[3]), argc == 5 ? atoll(argv[4]) : 0, NULL,
		    0);
	if (argc == 5 && strcmp(argv[1], "gate") == 0)
		return peer_claim(atoll(argv[2]), atoi(argv[3]), 0, argv[4], 0);
	if (argc == 4 && strcmp(argv[1], "cutter") == 0)
		return peer_claim(atoll(argv[2]), atoi(argv[3]), 0, NULL, 1);
	fprintf(stderr, "usage: hookpeer handoff PIDFILE EOFFILE | claim BYTES SECONDS [SHARED] | "
	    "gate BYTES SECONDS DIR | cutter BYTES SECONDS\n");
	return 2;
}
