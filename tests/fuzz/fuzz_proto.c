/*
 * fuzz_proto.c: libFuzzer harness for the frame decoder that nvqd runs on
 * every byte a client or a job's hook sends (common/proto.c).
 *
 * The input is read as a stream of frames, as server.c reads a connection:
 * header first, the body only if the header passes.  Every message that
 * decodes is encoded again, and must decode to the same fields: the codec
 * agrees with itself on whatever it accepts.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "proto.h"

static void
fuzz_same(const struct proto_msg *a, const struct proto_msg *b)
{
	int i;

	if (a->type != b->type || a->nfields != b->nfields)
		abort();
	for (i = 0; i < a->nfields; i++) {
		const struct proto_field *x = &a->fields[i], *y = &b->fields[i];

		if (strcmp(x->key, y->key) != 0 || x->kind != y->kind)
			abort();
		if (x->kind == 'i' && x->i != y->i)
			abort();
		if (x->kind == 's' && (x->slen != y->slen || memcmp(x->s, y->s, x->slen) != 0))
			abort();
	}
}

/* Encodes m again and decodes the result. */
static void
fuzz_roundtrip(const struct proto_msg *m)
{
	struct proto_buf b = { 0 };
	struct proto_msg again;
	char err[128];
	uint32_t len;
	int type, i;

	proto_begin(&b, m->type);
	for (i = 0; i < m->nfields; i++) {
		if (m->fields[i].kind == 'i')
			proto_put_int(&b, m->fields[i].key, m->fields[i].i);
		else
			proto_put_str(&b, m->fields[i].key, m->fields[i].s);
	}
	if (proto_end(&b) == -1) {
		proto_buf_free(&b);
		return;		/* over the maximum once re-encoded: refused, not wrong */
	}
	if (proto_header(b.data, &type, &len, err, sizeof(err)) == -1 ||
	    len != b.len - PROTO_HEADER ||
	    proto_decode(type, b.data + PROTO_HEADER, len, &again, err, sizeof(err)) == -1)
		abort();
	fuzz_same(m, &again);
	proto_msg_free(&again);
	proto_buf_free(&b);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct proto_msg m;
	char err[128];
	uint32_t len;
	int type;

	while (size >= PROTO_HEADER) {
		if (proto_header(data, &type, &len, err, sizeof(err)) == -1)
			return 0;
		if (len > size - PROTO_HEADER)
			return 0;	/* the rest never came */
		err[0] = '\0';
		if (proto_decode(type, data + PROTO_HEADER, len, &m, err, sizeof(err)) == 0) {
			(void)proto_int(&m, "id", 0);
			(void)proto_str(&m, "arg");
			(void)proto_type_name(m.type);
			fuzz_roundtrip(&m);
			proto_msg_free(&m);
		} else if (err[0] == '\0')
			abort();	/* a refusal always says why */
		data += PROTO_HEADER + len;
		size -= PROTO_HEADER + len;
	}
	return 0;
}
