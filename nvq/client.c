/*
 * client.c: nvq's side of the socket: a blocking connect, one request,
 * one reply.  The socket is -s, else NVQ_SOCKET, else [daemon] socket
 * in the configuration ($NVQ_CONFIG, else /etc/nvq/nvq.ini), else the
 * per-user daemon's if it exists, else the system one.
 */
#include <errno.h>
#include <ini.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include "fdpass.h"
#include "num.h"
#include "nvq.h"
#include "paths.h"

int nvq_quiet;

void
nvq_err(const char *fmt, ...)
{
	va_list ap;

	if (nvq_quiet)
		return;
	fprintf(stderr, "nvq: ");
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
}

struct client_ini {
	char	*buf;
	size_t	len;
};

static int
client_ini_cb(void *arg, const char *section, const char *name, const char *value)
{
	struct client_ini *c = arg;

	if (strcmp(section, "daemon") == 0 && strcmp(name, "socket") == 0 && *value == '/')
		snprintf(c->buf, c->len, "%s", value);
	return 1;
}

static const char *
client_socket(const char *given, char *buf, size_t len)
{
	const char *env = getenv("NVQ_SOCKET");
	const char *cfg = getenv("NVQ_CONFIG");
	struct client_ini c = { buf, len };

	if (given != NULL)
		return given;
	if (env != NULL && *env != '\0')
		return env;
	buf[0] = '\0';
	/* errors in the file are nvqd's to report; here only the socket matters */
	ini_parse(cfg && *cfg ? cfg : "/etc/nvq/nvq.ini", client_ini_cb, &c);
	if (buf[0] != '\0')
		return buf;
	if (geteuid() != 0) {
		paths_user_socket(buf, len);
		if (access(buf, F_OK) == 0)
			return buf;
	}
	return PATHS_SYSTEM_SOCKET;
}

static int
client_io(int fd, void *p, size_t n, int writing)
{
	uint8_t *b = p;
	ssize_t r;

	while (n > 0) {
		/* no SIGPIPE: nvqd may refuse a frame before its end, with a reply */
		r = writing ? send(fd, b, n, MSG_NOSIGNAL) : read(fd, b, n);
		if (r == -1 && errno == EINTR)
			continue;
		if (r <= 0)
			return -1;
		b += r;
		n -= (size_t)r;
	}
	return 0;
}

/* A connection to nvqd (path set to its socket's), or -1 (said). */
static int
client_open(const char *given, char *path, size_t len)
{
	struct sockaddr_un sa;
	char buf[PATH_MAX];
	int fd;

	snprintf(path, len, "%s", client_socket(given, buf, sizeof(buf)));
	memset(&sa, 0, sizeof(sa));
	sa.sun_family = AF_UNIX;
	if (strlen(path) >= sizeof(sa.sun_path)) {
		nvq_err("socket path too long: %s", path);
		return -1;
	}
	strcpy(sa.sun_path, path);
	if ((fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0)) == -1) {
		nvq_err("socket: %s", strerror(errno));
		return -1;
	}
	if (connect(fd, (struct sockaddr *)&sa, sizeof(sa)) == -1) {
		nvq_err("cannot reach nvqd at %s: %s\n"
		    "  is it running? start it with `nvqd &` (or `systemctl start nvqd`),\n"
		    "  or point nvq at it with -s SOCKET or NVQ_SOCKET", path, strerror(errno));
		close(fd);
		return -1;
	}
	return fd;
}

/* Reads one reply into rep: 0, or -1 (said; an error reply's error too). */
static int
client_reply(int fd, const char *path, struct proto_msg *rep)
{
	/* one buffer for every reply, kept: a listing's pages are large */
	static uint8_t *body;
	static size_t cap;
	uint8_t hdr[PROTO_HEADER], *nb;
	char err[256];
	uint32_t len;
	int type;

	if (client_io(fd, hdr, sizeof(hdr), 0) == -1) {
		nvq_err("nvqd at %s closed the connection", path);
		return -1;
	}
	if (proto_header(hdr, &type, &len, err, sizeof(err)) == -1) {
		nvq_err("bad reply from nvqd: %s", err);
		return -1;
	}
	if (body == NULL || len > cap) {
		if ((nb = realloc(body, len ? len : 1)) == NULL) {
			nvq_err("out of memory for a reply of %u bytes", len);
			return -1;
		}
		body = nb;
		cap = len ? len : 1;
	}
	if (client_io(fd, body, len, 0) == -1) {
		nvq_err("nvqd at %s closed the connection", path);
		return -1;
	}
	if (proto_decode(type, body, len, rep, err, sizeof(err)) == -1) {
		nvq_err("bad reply from nvqd: %s", err);
		return -1;
	}
	if (type == MSG_ERROR) {
		nvq_err("%s", proto_str(rep, "error") ? fmt_safe(proto_str(rep, "error")) : "error");
		proto_msg_free(rep);
		return -1;
	}
	return 0;
}

/* Sends req and reads its reply on fd: 0, or -1 (said). */
static int
client_exchange(int fd, const char *path, struct proto_buf *req, struct proto_msg *rep)
{
	memset(rep, 0, sizeof(*rep));
	if (proto_end(req) == -1) {
		nvq_err("the request is too large (over %u bytes)", PROTO_MAX_BODY);
		return -1;
	}
	/* a request cut short may still have its refusal to read */
	if (client_io(fd, req->data, req->len, 1) == -1 && errno != EPIPE && errno != ECONNRESET) {
		nvq_err("nvqd at %s closed the connection", path);
		return -1;
	}
	return client_reply(fd, path, rep);
}

int
client_call(const char *given, struct proto_buf *req, struct proto_msg *rep)
{
	char path[PATH_MAX];
	int fd, rc;

	memset(rep, 0, sizeof(*rep));
	if ((fd = client_open(given, path, sizeof(path))) == -1)
		return -1;
	rc = client_exchange(fd, path, req, rep);
	close(fd);
	return rc;
}

int
client_pass_fds(const char *given, struct proto_buf *req, const int *fds, int n,
    struct proto_msg *rep)
{
	char path[PATH_MAX];
	int fd, rc = -1;

	memset(rep, 0, sizeof(*rep));
	if (n < 1 || n > 3 || (fd = client_open(given, path, sizeof(path))) == -1)
		return -1;
	if (client_exchange(fd, path, req, rep) == -1)
		goto out;
	proto_msg_free(rep);
	/* nvqd reads no more frames here: the byte that carries the descriptors */
	if (fdpass_send(fd, fds, n) == -1) {
		nvq_err("cannot pass the terminal to nvqd at %s: %s", path, strerror(errno));
		goto out;
	}
	rc = client_reply(fd, path, rep);
out:
	close(fd);
	return rc;
}

int
client_rows(const struct proto_msg *m, const char *key, int from, struct nvq_row **rows)
{
	int i, n = 0, cap = 0;
	struct nvq_row *r = NULL, *nr;

	for (i = from; i < m->nfields; i++) {
		if (strcmp(m->fields[i].key, key) == 0) {
			if (n == cap) {
				cap = cap ? cap * 2 : 16;
				if ((nr = realloc(r, (size_t)cap * sizeof(*r))) == NULL)
					break;
				r = nr;
			}
			r[n].start = i;
			r[n].end = m->nfields;
			if (n > 0)
				r[n - 1].end = i;
			n++;
		}
	}
	*rows = r;
	return n;
}

/*
 * A row's fields by key: a table of the last row asked about, made once
 * for it, so that a listing of N rows of F fields, each asked for F keys
 * (some of which a row leaves out), costs N x F and not N x F x F.
 */
#define ROW_SLOTS	256	/* a power of two; rows of more fields than half are scanned */
static struct {
	const struct proto_msg	*m;
	unsigned		serial;		/* m may be decoded again in place */
	int			start, end;
	short			slot[ROW_SLOTS];	/* field index - start, or -1 */
} row_index = { NULL, 0, -1, -1, { 0 } };

static unsigned
row_hash(const char *key)
{
	unsigned h = 2166136261u;

	while (*key)
		h = (h ^ (unsigned char)*key++) * 16777619u;
	return h;
}

static const struct proto_field *
row_get(const struct proto_msg *m, const struct nvq_row *r, const char *key)
{
	unsigned h;
	int i;

	if (r->end - r->start > ROW_SLOTS / 2) {
		for (i = r->start; i < r->end; i++)
			if (strcmp(m->fields[i].key, key) == 0)
				return &m->fields[i];
		return NULL;
	}
	if (row_index.m != m || row_index.serial != m->serial || row_index.start != r->start ||
	    row_index.end != r->end) {
		row_index.m = m;
		row_index.serial = m->serial;
		row_index.start = r->start;
		row_index.end = r->end;
		memset(row_index.slot, 0xff, sizeof(row_index.slot));
		/* backwards: where a key comes twice, the first one wins, as before */
		for (i = r->end - 1; i >= r->start; i--) {
			for (h = row_hash(m->fields[i].key) & (ROW_SLOTS - 1);
			    row_index.slot[h] != -1 &&
			    strcmp(m->fields[r->start + row_index.slot[h]].key, m->fields[i].key) != 0;
			    h = (h + 1) & (ROW_SLOTS - 1))
				;
			row_index.slot[h] = (short)(i - r->start);
		}
	}
	for (h = row_hash(key) & (ROW_SLOTS - 1); row_index.slot[h] != -1; h = (h + 1) & (ROW_SLOTS - 1))
		if (strcmp(m->fields[r->start + row_index.slot[h]].key, key) == 0)
			return &m->fields[r->start + row_index.slot[h]];
	return NULL;
}

const char *
row_str(const struct proto_msg *m, const struct nvq_row *r, const char *key)
{
	const struct proto_field *f = row_get(m, r, key);

	return f && f->kind == 's' ? f->s : NULL;
}

int64_t
row_int(const struct proto_msg *m, const struct nvq_row *r, const char *key, int64_t dflt)
{
	const struct proto_field *f = row_get(m, r, key);

	return f && f->kind == 'i' ? f->i : dflt;
}

double
row_real(const struct proto_msg *m, const struct nvq_row *r, const char *key)
{
	const char *s = row_str(m, r, key);

	return s ? num_real(s) : 0;
}

int
client_watch(const char *given, int yield)
{
	struct proto_buf b = { 0 };
	struct proto_msg m;
	char path[PATH_MAX];
	int fd, r;

	if ((fd = client_open(given, path, sizeof(path))) == -1)
		return -1;
	proto_begin(&b, MSG_WATCH);
	if (yield)
		proto_put_int(&b, "yield", 1);
	r = client_exchange(fd, path, &b, &m);
	proto_buf_free(&b);
	if (r == -1) {
		close(fd);
		return -1;
	}
	proto_msg_free(&m);
	return fd;
}

int
client_next(int fd, struct proto_msg *m)
{
	uint8_t c;

	/* nvqd went away: no frame, and nothing to say */
	if (recv(fd, &c, 1, MSG_PEEK) != 1)
		return -1;
	return client_reply(fd, "nvqd", m);
}
