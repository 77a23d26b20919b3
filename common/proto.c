/*
 * proto.c: the frame codec (see proto.h for the layout).  The decoder
 * trusts nothing: every length is checked against what is left before it
 * is used, and a string must end with its only NUL.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "proto.h"

static const char *proto_names[MSG_MAX] = {
	NULL, "ok", "error", "submit", "list", "show", "cancel", "history",
	"gpus", "ping", "hold", "release", "hook-hello", "hook-state", "hook-ack",
	"hook-report", "hook-limit", "hook-want", "hook-idle", "suspend", "resume",
	"hook-move", "hook-moved", "top", "modify", "requeue", "drain", "undrain",
	"shares", "hook-oom", "restart", "attach", "stats",
	"watch", "changed", "web-token", "adopt", "hook-cut", "hook-cutat", "hook-lcbe"
};

const char *
proto_type_name(int t)
{
	if (t <= 0 || t >= MSG_MAX || proto_names[t] == NULL)
		return "unknown";
	return proto_names[t];
}

static void
proto_be32(uint8_t *p, uint32_t v)
{
	p[0] = (uint8_t)(v >> 24);
	p[1] = (uint8_t)(v >> 16);
	p[2] = (uint8_t)(v >> 8);
	p[3] = (uint8_t)v;
}

static uint32_t
proto_get32(const uint8_t *p)
{
	return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 | p[3];
}

static void
proto_grow(struct proto_buf *b, size_t more)
{
	size_t cap;
	uint8_t *n;

	if (b->failed)
		return;
	if (b->len + more > PROTO_HEADER + PROTO_MAX_BODY) {
		b->failed = 1;
		return;
	}
	if (b->len + more <= b->cap)
		return;
	cap = b->cap ? b->cap : 256;
	while (cap < b->len + more)
		cap *= 2;
	if ((n = realloc(b->data, cap)) == NULL) {
		b->failed = 1;
		return;
	}
	b->data = n;
	b->cap = cap;
}

static void
proto_append(struct proto_buf *b, const void *p, size_t n)
{
	proto_grow(b, n);
	if (b->failed)
		return;
	memcpy(b->data + b->len, p, n);
	b->len += n;
}

void
proto_begin(struct proto_buf *b, int type)
{
	uint8_t h[PROTO_HEADER] = { 0 };

	b->len = 0;
	b->failed = 0;
	h[4] = PROTO_VERSION >> 8;
	h[5] = PROTO_VERSION & 0xff;
	h[6] = (uint8_t)(type >> 8);
	h[7] = (uint8_t)type;
	proto_append(b, h, sizeof(h));
}

static void
proto_key(struct proto_buf *b, char kind, const char *key)
{
	size_t n = strlen(key);
	uint8_t h[2];

	if (n == 0 || n > PROTO_MAX_KEY) {
		b->failed = 1;
		return;
	}
	h[0] = (uint8_t)kind;
	h[1] = (uint8_t)n;
	proto_append(b, h, 2);
	proto_append(b, key, n);
}

void
proto_put_int(struct proto_buf *b, const char *key, int64_t v)
{
	uint8_t p[8];
	uint64_t u = (uint64_t)v;
	int i;

	for (i = 7; i >= 0; i--, u >>= 8)
		p[i] = (uint8_t)u;
	proto_key(b, 'i', key);
	proto_append(b, p, 8);
}

void
proto_put_str(struct proto_buf *b, const char *key, const char *s)
{
	uint8_t p[4];
	size_t n;

	if (s == NULL)
		s = "";
	n = strlen(s) + 1;
	if (n > PROTO_MAX_BODY) {
		b->failed = 1;
		return;
	}
	proto_be32(p, (uint32_t)n);
	proto_key(b, 's', key);
	proto_append(b, p, 4);
	proto_append(b, s, n);
}

int
proto_end(struct proto_buf *b)
{
	if (b->failed || b->len < PROTO_HEADER)
		return -1;
	proto_be32(b->data, (uint32_t)(b->len - PROTO_HEADER));
	return 0;
}

void
proto_buf_free(struct proto_buf *b)
{
	free(b->data);
	b->data = NULL;
	b->len = b->cap = 0;
}

int
proto_header(const uint8_t *h, int *type, uint32_t *len, char *err, size_t errlen)
{
	unsigned version = (unsigned)h[4] << 8 | h[5];

	*type = h[6] << 8 | h[7];
	*len = proto_get32(h);
	if (version != PROTO_VERSION) {
		snprintf(err, errlen, "protocol version %u, expected %u (nvq and nvqd differ?)",
		    version, PROTO_VERSION);
		return -1;
	}
	if (*len > PROTO_MAX_BODY) {
		snprintf(err, errlen, "frame of %u bytes is over the maximum of %u", *len,
		    PROTO_MAX_BODY);
		return -1;
	}
	if (*type <= 0 || *type >= MSG_MAX) {
		snprintf(err, errlen, "unknown message type %d", *type);
		return -1;
	}
	return 0;
}

/* The storage of the largest message freed since, with proto_reuse_storage */
static int proto_reuse;
static void *proto_spare_fields, *proto_spare_body;
static size_t proto_spare_fcap, proto_spare_bodycap;

/* The spare, if it has room for need: its room in *cap, and no spare left; else NULL. */
static void *
proto_take(void **spare, size_t *sparecap, size_t need, size_t *cap)
{
	void *p = *spare;

	if (p == NULL || *sparecap < need)
		return NULL;
	*cap = *sparecap;
	*spare = NULL;
	*sparecap = 0;
	return p;
}

/* Frees p (room for cap), or keeps it as the spare if it has more room. */
static void
proto_keep(void **spare, size_t *sparecap, void *p, size_t cap)
{
	if (proto_reuse && p != NULL && cap > *sparecap) {
		free(*spare);
		*spare = p;
		*sparecap = cap;
	} else
		free(p);
}

void
proto_reuse_storage(void)
{
	proto_reuse = 1;
}

int
proto_decode(int type, const uint8_t *body, uint32_t len, struct proto_msg *m,
    char *err, size_t errlen)
{
	struct proto_field *f, *nf;
	size_t pos = 0, klen;
	uint32_t slen;
	uint64_t u;
	int k;

	static unsigned serial;

	memset(m, 0, sizeof(*m));
	m->type = type;
	m->serial = __atomic_add_fetch(&serial, 1, __ATOMIC_RELAXED);
	if ((m->body = proto_take(&proto_spare_body, &proto_spare_bodycap, len ? len : 1,
	    &m->bodycap)) == NULL) {
		if ((m->body = malloc(len ? len : 1)) == NULL) {
			snprintf(err, errlen, "out of memory");
			return -1;
		}
		m->bodycap = len ? len : 1;
	}
	m->fields = proto_take(&proto_spare_fields, &proto_spare_fcap, 0, &m->fcap);
	memcpy(m->body, body, len);
	while (pos < len) {
		if (len - pos < 2)
			goto truncated;
		klen = m->body[pos + 1];
		if (klen == 0 || klen > PROTO_MAX_KEY || (m->body[pos] != 'i' && m->body[pos] != 's')) {
			snprintf(err, errlen, "malformed field at byte %zu", pos);
			goto fail;
		}
		if (len - pos - 2 < klen)
			goto truncated;
		if ((size_t)m->nfields == m->fcap) {
			if ((nf = realloc(m->fields, (m->fcap ? m->fcap * 2 : 16) * sizeof(*nf))) == NULL) {
				snprintf(err, errlen, "out of memory");
				goto fail;
			}
			m->fields = nf;
			m->fcap = m->fcap ? m->fcap * 2 : 16;
		}
		f = &m->fields[m->nfields];
		memset(f, 0, sizeof(*f));
		f->kind = (char)m->body[pos];
		memcpy(f->key, m->body + pos + 2, klen);
		f->key[klen] = '\0';
		if (strlen(f->key) != klen) {
			snprintf(err, errlen, "malformed key at byte %zu", pos);
			goto fail;
		}
		pos += 2 + klen;
		if (f->kind == 'i') {
			if (len - pos < 8)
				goto truncated;
			for (u = 0, k = 0; k < 8; k++)
				u = u << 8 | m->body[pos + k];
			f->i = (int64_t)u;
			pos += 8;
		} else {
			if (len - pos < 4)
				goto truncated;
			slen = proto_get32(m->body + pos);
			pos += 4;
			if (slen == 0 || len - pos < slen)
				goto truncated;
			if (m->body[pos + slen - 1] != '\0' ||
			    memchr(m->body + pos, '\0', slen - 1) != NULL) {
				snprintf(err, errlen, "malformed string in field \"%s\"", f->key);
				goto fail;
			}
			f->s = (const char *)m->body + pos;
			f->slen = slen - 1;
			pos += slen;
		}
		m->nfields++;
	}
	return 0;
truncated:
	snprintf(err, errlen, "truncated field at byte %zu", pos);
fail:
	proto_msg_free(m);
	return -1;
}

void
proto_msg_free(struct proto_msg *m)
{
	proto_keep(&proto_spare_fields, &proto_spare_fcap, m->fields, m->fcap);
	proto_keep(&proto_spare_body, &proto_spare_bodycap, m->body, m->bodycap);
	m->fcap = m->bodycap = 0;
	m->fields = NULL;
	m->body = NULL;
	m->nfields = 0;
}

const struct proto_field *
proto_get(const struct proto_msg *m, const char *key)
{
	int i;

	for (i = 0; i < m->nfields; i++)
		if (strcmp(m->fields[i].key, key) == 0)
			return &m->fields[i];
	return NULL;
}

int64_t
proto_int(const struct proto_msg *m, const char *key, int64_t dflt)
{
	const struct proto_field *f = proto_get(m, key);

	return f && f->kind == 'i' ? f->i : dflt;
}

const char *
proto_str(const struct proto_msg *m, const char *key)
{
	const struct proto_field *f = proto_get(m, key);

	return f && f->kind == 's' ? f->s : NULL;
}
