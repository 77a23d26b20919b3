/*
 * test_proto.c: the frame codec: round trips, and every way a frame can be
 * wrong (truncated, oversized, wrong version, unknown type, bad strings,
 * random garbage) rejected with a message, never a crash.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <stdio.h>
#include <string.h>
#include <cmocka.h>

#include "proto.h"

static void
encode_sample(struct proto_buf *b)
{
	proto_begin(b, MSG_SUBMIT);
	proto_put_str(b, "arg", "python3");
	proto_put_str(b, "arg", "train.py");
	proto_put_str(b, "arg", "");
	proto_put_int(b, "gpus", 2);
	proto_put_int(b, "mem", -5);
	proto_put_int(b, "big", INT64_MAX);
	assert_int_equal(proto_end(b), 0);
}

static void
test_roundtrip(void **state)
{
	struct proto_buf b = { 0 };
	struct proto_msg m;
	char err[128];
	uint32_t len;
	int type;

	(void)state;
	encode_sample(&b);
	assert_int_equal(proto_header(b.data, &type, &len, err, sizeof(err)), 0);
	assert_int_equal(type, MSG_SUBMIT);
	assert_int_equal(len, b.len - PROTO_HEADER);
	assert_int_equal(proto_decode(type, b.data + PROTO_HEADER, len, &m, err, sizeof(err)), 0);
	assert_int_equal(m.nfields, 6);
	assert_string_equal(m.fields[0].s, "python3");
	assert_string_equal(m.fields[1].s, "train.py");
	assert_string_equal(m.fields[2].s, "");
	assert_int_equal(proto_int(&m, "gpus", 0), 2);
	assert_int_equal(proto_int(&m, "mem", 0), -5);
	assert_true(proto_int(&m, "big", 0) == INT64_MAX);
	assert_int_equal(proto_int(&m, "missing", 42), 42);
	assert_null(proto_str(&m, "gpus"));
	proto_msg_free(&m);
	proto_buf_free(&b);
}

static void
test_header_errors(void **state)
{
	uint8_t h[PROTO_HEADER] = { 0, 0, 0, 4, 0, PROTO_VERSION, 0, MSG_LIST };
	char err[128];
	uint32_t len;
	int type;

	(void)state;
	assert_int_equal(proto_header(h, &type, &len, err, sizeof(err)), 0);
	h[5] = PROTO_VERSION + 1;
	assert_int_equal(proto_header(h, &type, &len, err, sizeof(err)), -1);
	assert_non_null(strstr(err, "version"));
	h[5] = PROTO_VERSION;
	h[0] = 0x7f;
	assert_int_equal(proto_header(h, &type, &len, err, sizeof(err)), -1);
	assert_non_null(strstr(err, "maximum"));
	h[0] = 0;
	h[7] = MSG_MAX;
	assert_int_equal(proto_header(h, &type, &len, err, sizeof(err)), -1);
	assert_non_null(strstr(err, "unknown message type"));
	h[7] = 0;
	assert_int_equal(proto_header(h, &type, &len, err, sizeof(err)), -1);
}

static void
test_truncated(void **state)
{
	struct proto_buf b = { 0 };
	struct proto_msg m;
	char err[128];
	size_t cut, body;

	(void)state;
	encode_sample(&b);
	body = b.len - PROTO_HEADER;
	/* every strict prefix that does not end on a field boundary fails */
	for (cut = 1; cut < body; cut++) {
		int r = proto_decode(MSG_SUBMIT, b.data + PROTO_HEADER, (uint32_t)cut, &m, err,
		    sizeof(err));
		if (r == 0)
			proto_msg_free(&m);
		else
			assert_true(strlen(err) > 0);
	}
	assert_int_equal(proto_decode(MSG_SUBMIT, b.data + PROTO_HEADER, 5, &m, err,
	    sizeof(err)), -1);
	proto_buf_free(&b);
}

static void
test_bad_strings(void **state)
{
	/* 's', key "k", length 3, "a\0b": an embedded NUL */
	const uint8_t nul[] = { 's', 1, 'k', 0, 0, 0, 3, 'a', 0, 'b' };
	/* 's', key "k", length 2, "ab": no terminating NUL */
	const uint8_t unterminated[] = { 's', 1, 'k', 0, 0, 0, 2, 'a', 'b' };
	/* kind 'x' */
	const uint8_t kind[] = { 'x', 1, 'k', 0, 0, 0, 0, 0, 0, 0, 1 };
	/* key length 0 */
	const uint8_t nokey[] = { 'i', 0, 0, 0, 0, 0, 0, 0, 0, 1 };
	/* a string claiming 4 GiB */
	const uint8_t huge[] = { 's', 1, 'k', 0xff, 0xff, 0xff, 0xff, 'a', 0 };
	struct proto_msg m;
	char err[128];

	(void)state;
	assert_int_equal(proto_decode(MSG_LIST, nul, sizeof(nul), &m, err, sizeof(err)), -1);
	assert_int_equal(proto_decode(MSG_LIST, unterminated, sizeof(unterminated), &m, err,
	    sizeof(err)), -1);
	assert_int_equal(proto_decode(MSG_LIST, kind, sizeof(kind), &m, err, sizeof(err)), -1);
	assert_int_equal(proto_decode(MSG_LIST, nokey, sizeof(nokey), &m, err, sizeof(err)), -1);
	assert_int_equal(proto_decode(MSG_LIST, huge, sizeof(huge), &m, err, sizeof(err)), -1);
}

static void
test_garbage(void **state)
{
	uint8_t buf[256];
	struct proto_msg m;
	char err[128];
	uint64_t x = 88172645463325252ULL;
	int i, k, ok = 0;

	(void)state;
	for (i = 0; i < 20000; i++) {
		size_t n = (size_t)(x % sizeof(buf));
		for (k = 0; k < (int)n; k++) {
			x ^= x << 13;
			x ^= x >> 7;
			x ^= x << 17;
			buf[k] = (uint8_t)x;
			/* bias towards valid kinds so that decoding gets deep */
			if (k == 0 && (x & 1))
				buf[k] = (x & 2) ? 'i' : 's';
		}
		if (proto_decode(MSG_LIST, buf, (uint32_t)n, &m, err, sizeof(err)) == 0) {
			ok++;
			proto_msg_free(&m);
		}
	}
	/* garbage rarely decodes, and never crashes (ASan watches this test) */
	assert_true(ok < 20000);
}

static void
test_too_large(void **state)
{
	struct proto_buf b = { 0 };
	char *big = malloc(PROTO_MAX_BODY);

	(void)state;
	assert_non_null(big);
	memset(big, 'x', PROTO_MAX_BODY - 1);
	big[PROTO_MAX_BODY - 1] = '\0';
	proto_begin(&b, MSG_SUBMIT);
	proto_put_str(&b, "arg", big);
	assert_int_equal(proto_end(&b), -1);
	proto_buf_free(&b);
	free(big);
}
/* every message type has its name, for the errors and logs that quote it */
static void
test_type_names(void **state)
{
	int t;

	(void)state;
	for (t = 1; t < MSG_MAX; t++)
		assert_string_not_equal(proto_type_name(t), "unknown");
	assert_string_equal(proto_type_name(MSG_MAX), "unknown");
	assert_string_equal(proto_type_name(MSG_RESTART), "restart");
}


/* n string fields "k" = "v<i>", encoded and decoded into m */
static void
decode_n(struct proto_msg *m, int n)
{
	struct proto_buf b = { 0 };
	char err[128], v[32];
	uint32_t len;
	int type, i;

	proto_begin(&b, MSG_LIST);
	for (i = 0; i < n; i++) {
		snprintf(v, sizeof(v), "v%d", i);
		proto_put_str(&b, "k", v);
	}
	assert_int_equal(proto_end(&b), 0);
	assert_int_equal(proto_header(b.data, &type, &len, err, sizeof(err)), 0);
	assert_int_equal(proto_decode(type, b.data + PROTO_HEADER, len, m, err, sizeof(err)), 0);
	proto_buf_free(&b);
	assert_int_equal(m->nfields, n);
	snprintf(v, sizeof(v), "v%d", n - 1);
	assert_string_equal(m->fields[n - 1].s, v);
	assert_string_equal(m->fields[0].s, "v0");
}

/* A message of big fields freed, then one of small: the second decodes into the first's storage. */
static void
spare_taken(int big, int small)
{
	struct proto_msg m;
	const void *fields, *body;

	decode_n(&m, big);
	fields = m.fields;
	body = m.body;
	proto_msg_free(&m);
	decode_n(&m, small);
	assert_ptr_equal(m.fields, fields);
	assert_ptr_equal(m.body, body);
	proto_msg_free(&m);
}

/* Last: it turns reuse on for the rest of this process. */
static void
test_reuse(void **state)
{
	(void)state;
	proto_reuse_storage();
	/* a smaller one takes the storage the larger one left */
	spare_taken(5000, 10);
	/* a larger one than that grows it, is decoded whole, and its storage is the spare then */
	spare_taken(20000, 3);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_roundtrip),
		cmocka_unit_test(test_type_names),
		cmocka_unit_test(test_header_errors),
		cmocka_unit_test(test_truncated),
		cmocka_unit_test(test_bad_strings),
		cmocka_unit_test(test_garbage),
		cmocka_unit_test(test_too_large),
		cmocka_unit_test(test_reuse),	/* last */
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
