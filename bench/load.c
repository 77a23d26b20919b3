/*
 * load.c: many clients submitting at once to one nvqd, timing each
 * acknowledgement (connect, SUBMIT frame, reply with the committed id).
 *
 * Usage: load SOCKET CLIENTS SUBMITS IDS_FILE
 * Forks CLIENTS processes that each submit SUBMITS jobs (`true`, no GPU)
 * one after another through nvq's client_call (nvq/client.c): one
 * connection per request, as nvq does.  Every id
 * nvqd acknowledged is written to IDS_FILE; on stdout, the count, the
 * failures, the wall time and the latency percentiles in milliseconds.
 * Exits 1 if any submit failed.  LOAD_GPUS and LOAD_MEM (bytes per GPU)
 * make the jobs ask for GPUs (none by default, and such jobs start at once).
 */
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "clock.h"
#include "nvq.h"

/* Reads exactly len bytes from fd (the results pipe); 0 or -1 at its end. */
static int
load_read(int fd, void *buf, size_t len)
{
	uint8_t *p = buf;
	ssize_t n;

	while (len > 0) {
		if ((n = read(fd, p, len)) < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			return -1;
		p += n;
		len -= (size_t)n;
	}
	return 0;
}

/* One submit through nvq's own client_call; returns the id, or -1. */
static int64_t
load_submit(const char *sock, struct proto_buf *req)
{
	struct proto_msg m;
	int64_t id;

	if (client_call(sock, req, &m) == -1)
		return -1;
	id = proto_int(&m, "id", -1);
	proto_msg_free(&m);
	return id;
}

int
main(int argc, char **argv)
{
	struct proto_buf req = { 0 };
	double t0, t, *lat, *all;
	int clients, submits, c, i, k, n = 0, failed = 0, st, pfd[2];
	FILE *ids;

	if (argc != 5 || (clients = atoi(argv[2])) <= 0 || (submits = atoi(argv[3])) <= 0) {
		fprintf(stderr, "usage: load SOCKET CLIENTS SUBMITS IDS_FILE\n");
		return 2;
	}
	if ((ids = fopen(argv[4], "w")) == NULL || pipe(pfd) == -1) {
		perror(argv[4]);
		return 2;
	}
	proto_begin(&req, MSG_SUBMIT);
	proto_put_str(&req, "arg", "true");
	proto_put_str(&req, "env", "PATH=/usr/bin:/bin");
	proto_put_str(&req, "cwd", "/");
	proto_put_int(&req, "gpus", getenv("LOAD_GPUS") ? atoll(getenv("LOAD_GPUS")) : 0);
	proto_put_int(&req, "mem", getenv("LOAD_MEM") ? atoll(getenv("LOAD_MEM")) : 0);
	proto_put_int(&req, "priority", 0);
	proto_put_int(&req, "time", 0);
	if (proto_end(&req) == -1)
		return 2;
	t0 = bench_now();
	for (c = 0; c < clients; c++) {
		if (fork() != 0)
			continue;
		/* a client: id and latency per submit, down the pipe */
		close(pfd[0]);
		for (i = 0; i < submits; i++) {
			struct { int64_t id; double lat; } r;

			t = bench_now();
			r.id = load_submit(argv[1], &req);
			r.lat = bench_now() - t;
			if (write(pfd[1], &r, sizeof(r)) != sizeof(r))
				_exit(1);
		}
		_exit(0);
	}
	close(pfd[1]);
	lat = calloc((size_t)clients * (size_t)submits, sizeof(*lat));
	all = lat;
	for (;;) {
		struct { int64_t id; double lat; } r;

		if (load_read(pfd[0], &r, sizeof(r)) == -1)
			break;
		if (r.id <= 0) {
			failed++;
			continue;
		}
		fprintf(ids, "%lld\n", (long long)r.id);
		lat[n++] = r.lat * 1000;
	}
	t = bench_now() - t0;
	for (k = 0; k < clients; k++)
		wait(&st);
	fclose(ids);
	qsort(all, (size_t)n, sizeof(*all), bench_cmp);
	printf("clients %d\nsubmits %d\nacknowledged %d\nfailed %d\nseconds %.2f\n"
	    "per_second %.0f\n", clients, clients * submits, n, failed, t, n / t);
	if (n > 0)
		printf("p50_ms %.2f\np90_ms %.2f\np99_ms %.2f\nmax_ms %.2f\n", all[n / 2],
		    all[n * 90 / 100], all[n * 99 / 100], all[n - 1]);
	free(lat);
	return failed > 0;
}
