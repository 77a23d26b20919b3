/*
 * test_esc.c: common/esc.c, row by row: each kind of character a user's
 * text may hold, as a terminal is shown it (esc_term) and as JSON writes
 * it (esc_json); what esc_char says of each; and the bounds on the
 * output's size, met by the worst input.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "esc.h"

static const struct {
	const char	*what, *in, *term, *json;
} rows[] = {
	{ "empty", "", "", "" },
	{ "plain ASCII", "train.py --lr 3e-4", "train.py --lr 3e-4", "train.py --lr 3e-4" },
	{ "JSON's own", "a\"b\\c/d", "a\"b\\c/d", "a\\\"b\\\\c/d" },
	{ "ESC and a CSI", "\x1b[2J", "\\e[2J", "\\u001b[2J" },
	{ "newline, tab, return", "a\nb\tc\rd", "a\\nb\\tc\\rd", "a\\nb\\tc\\rd" },
	{ "backspace, form feed", "\b\f", "\\x08\\x0c", "\\b\\f" },
	{ "other C0: BEL, NUL's neighbour, US", "\x07\x01\x1f", "\\x07\\x01\\x1f",
	  "\\u0007\\u0001\\u001f" },
	{ "DEL", "x\x7fy", "x\\x7fy", "x\\u007fy" },
	{ "C1 in UTF-8: U+009B (CSI), U+0080, U+009F", "\xc2\x9b" "2J\xc2\x80\xc2\x9f",
	  "\\u009b2J\\u0080\\u009f", "\\u009b2J\\u0080\\u009f" },
	{ "a raw 0x9b: not UTF-8, a CSI on 8-bit terminals", "a\x9b" "2Jb", "a\\x9b2Jb",
	  "a\\ufffd2Jb" },
	{ "raw bytes 0x80 and 0xff", "\x80\xff", "\\x80\\xff", "\\ufffd\\ufffd" },
	{ "U+202E, right-to-left override", "evil\xe2\x80\xaegnp.exe", "evil\\u202egnp.exe",
	  "evil\\u202egnp.exe" },
	{ "U+202A to U+202D", "\xe2\x80\xaa\xe2\x80\xab\xe2\x80\xac\xe2\x80\xad",
	  "\\u202a\\u202b\\u202c\\u202d", "\\u202a\\u202b\\u202c\\u202d" },
	{ "U+2066 to U+2069, isolates", "\xe2\x81\xa6\xe2\x81\xa7\xe2\x81\xa8\xe2\x81\xa9",
	  "\\u2066\\u2067\\u2068\\u2069", "\\u2066\\u2067\\u2068\\u2069" },
	{ "U+200E, U+200F, marks", "\xe2\x80\x8e\xe2\x80\x8f", "\\u200e\\u200f",
	  "\\u200e\\u200f" },
	{ "U+061C, U+2028, U+2029", "\xd8\x9c\xe2\x80\xa8\xe2\x80\xa9",
	  "\\u061c\\u2028\\u2029", "\\u061c\\u2028\\u2029" },
	{ "their neighbours are text: U+2030, U+2065, U+206A, U+00A0",
	  "\xe2\x80\xb0\xe2\x81\xa5\xe2\x81\xaa\xc2\xa0", "\xe2\x80\xb0\xe2\x81\xa5\xe2\x81\xaa\xc2\xa0",
	  "\xe2\x80\xb0\xe2\x81\xa5\xe2\x81\xaa\xc2\xa0" },
	{ "UTF-8 text: é, €, 𝄞, 漢", "\xc3\xa9\xe2\x82\xac\xf0\x9d\x84\x9e\xe6\xbc\xa2",
	  "\xc3\xa9\xe2\x82\xac\xf0\x9d\x84\x9e\xe6\xbc\xa2",
	  "\xc3\xa9\xe2\x82\xac\xf0\x9d\x84\x9e\xe6\xbc\xa2" },
	{ "overlong '/' (0xc0 0xaf)", "\xc0\xaf", "\\xc0\\xaf", "\\ufffd\\ufffd" },
	{ "overlong U+202E (0xe0 0x80 0xae)", "\xe0\x80\xae", "\\xe0\\x80\\xae",
	  "\\ufffd\\ufffd\\ufffd" },
	{ "a surrogate (0xed 0xa0 0x80)", "\xed\xa0\x80", "\\xed\\xa0\\x80",
	  "\\ufffd\\ufffd\\ufffd" },
	{ "past U+10FFFF (0xf4 0x90 0x80 0x80)", "\xf4\x90\x80\x80",
	  "\\xf4\\x90\\x80\\x80", "\\ufffd\\ufffd\\ufffd\\ufffd" },
	{ "a sequence cut by the end", "z\xe2\x80", "z\\xe2\\x80", "z\\ufffd\\ufffd" },
	{ "a lone lead before text", "\xc2z", "\\xc2z", "\\ufffdz" },
};

static void
test_rows(void **state)
{
	char term[256], json[256];
	size_t i, n;

	(void)state;
	for (i = 0; i < sizeof(rows) / sizeof(rows[0]); i++) {
		n = strlen(rows[i].in);
		assert_true(ESC_JSON_MAX(n) <= sizeof(json));
		if (esc_term(term, rows[i].in) != strlen(rows[i].term) ||
		    strcmp(term, rows[i].term) != 0)
			fail_msg("%s: terminal: got \"%s\", wanted \"%s\"", rows[i].what, term,
			    rows[i].term);
		if (esc_json(json, rows[i].in) != strlen(rows[i].json) ||
		    strcmp(json, rows[i].json) != 0)
			fail_msg("%s: JSON: got \"%s\", wanted \"%s\"", rows[i].what, json,
			    rows[i].json);
	}
}

/* Whatever the input, the output holds no byte a terminal acts on, nor any that is not UTF-8. */
static void
test_every_pair(void **state)
{
	char in[3], term[ESC_TERM_MAX(2)], json[ESC_JSON_MAX(2)];
	const unsigned char *p;
	uint32_t cp;
	int a, b, kind, n;

	(void)state;
	for (a = 1; a < 256; a++)
		for (b = 1; b < 256; b++) {
			in[0] = (char)a;
			in[1] = (char)b;
			in[2] = '\0';
			esc_term(term, in);
			esc_json(json, in);
			for (p = (const unsigned char *)term; *p; p += n) {
				n = esc_char(p, &kind, &cp);
				if (kind != ESC_TEXT)
					fail_msg("%02x %02x: terminal output has %02x", a, b, *p);
			}
			for (p = (const unsigned char *)json; *p; p += n) {
				n = esc_char(p, &kind, &cp);
				if (kind != ESC_TEXT)
					fail_msg("%02x %02x: JSON output has %02x", a, b, *p);
			}
		}
}

/* What esc_char says: length, kind, code point. */
static void
test_char(void **state)
{
	static const struct {
		const char *in;
		int	len, kind;
		uint32_t cp;
	} t[] = {
		{ "a", 1, ESC_TEXT, 'a' },
		{ "\x1b", 1, ESC_CONTROL, 0x1b },
		{ "\x7f", 1, ESC_CONTROL, 0x7f },
		{ "\x9b", 1, ESC_BYTE, 0x9b },
		{ "\xc2\x9b", 2, ESC_CONTROL, 0x9b },
		{ "\xc2\xa0", 2, ESC_TEXT, 0xa0 },
		{ "\xe2\x80\xae", 3, ESC_CONTROL, 0x202e },
		{ "\xf0\x9d\x84\x9e", 4, ESC_TEXT, 0x1d11e },
		{ "\xe2\x80", 1, ESC_BYTE, 0xe2 },
	};
	uint32_t cp;
	size_t i;
	int kind;

	(void)state;
	for (i = 0; i < sizeof(t) / sizeof(t[0]); i++) {
		assert_int_equal(esc_char((const unsigned char *)t[i].in, &kind, &cp), t[i].len);
		assert_int_equal(kind, t[i].kind);
		assert_int_equal(cp, t[i].cp);
	}
}

/* The worst inputs fill the bounds exactly: four bytes for a raw byte, six for a JSON one. */
static void
test_bounds(void **state)
{
	char in[101], term[ESC_TERM_MAX(100)], json[ESC_JSON_MAX(100)];

	(void)state;
	memset(in, 0x9b, 100);
	in[100] = '\0';
	assert_int_equal(esc_term(term, in) + 1, ESC_TERM_MAX(100));
	assert_int_equal(esc_json(json, in) + 1, ESC_JSON_MAX(100));
	memset(in, 0x01, 100);
	assert_int_equal(esc_term(term, in) + 1, ESC_TERM_MAX(100));
	assert_int_equal(esc_json(json, in) + 1, ESC_JSON_MAX(100));
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_rows),
		cmocka_unit_test(test_every_pair),
		cmocka_unit_test(test_char),
		cmocka_unit_test(test_bounds),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
