/*
 * test_esc.c: common/esc.c, row by row: each kind of character a user's
 * text may hold, as a terminal is shown it (esc_term) and as JSON writes
 * it (esc_json), also in ASCII only (ESC_ASCII, for a terminal whose
 * charset is not UTF-8); what esc_char says of each; which locales are
 * UTF-8; and the bounds on the output's size, met by the worst input.
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
	{ "JSON's own; a backslash as it is for a terminal", "a\"b\\c/d", "a\"b\\c/d",
	  "a\\\"b\\\\c/d" },
	{ "a \\u202e typed is six characters", "x\\u202ey", "x\\u202ey", "x\\\\u202ey" },
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
	{ "invisible: U+200B to U+200D, U+2060, U+2064, U+00AD, U+FEFF",
	  "\xe2\x80\x8b\xe2\x80\x8c\xe2\x80\x8d\xe2\x81\xa0\xe2\x81\xa4\xc2\xad\xef\xbb\xbf",
	  "\\u200b\\u200c\\u200d\\u2060\\u2064\\u00ad\\ufeff",
	  "\\u200b\\u200c\\u200d\\u2060\\u2064\\u00ad\\ufeff" },
	{ "U+206A, U+206F, U+180E, U+0600, U+FFF9", "\xe2\x81\xaa\xe2\x81\xaf\xe1\xa0\x8e\xd8\x80\xef\xbf\xb9",
	  "\\u206a\\u206f\\u180e\\u0600\\ufff9", "\\u206a\\u206f\\u180e\\u0600\\ufff9" },
	{ "past U+FFFF: U+E0001, U+E007F (tags), U+1D173", "\xf3\xa0\x80\x81\xf3\xa0\x81\xbf\xf0\x9d\x85\xb3",
	  "\\U000e0001\\U000e007f\\U0001d173",
	  "\\udb40\\udc01\\udb40\\udc7f\\ud834\\udd73" },
	{ "their neighbours are text: U+2030, U+2065, U+2070, U+00A0, U+00AC, U+00AE, U+E0080",
	  "\xe2\x80\xb0\xe2\x81\xa5\xe2\x81\xb0\xc2\xa0\xc2\xac\xc2\xae\xf3\xa0\x82\x80",
	  "\xe2\x80\xb0\xe2\x81\xa5\xe2\x81\xb0\xc2\xa0\xc2\xac\xc2\xae\xf3\xa0\x82\x80",
	  "\xe2\x80\xb0\xe2\x81\xa5\xe2\x81\xb0\xc2\xa0\xc2\xac\xc2\xae\xf3\xa0\x82\x80" },
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

/* The same with ESC_ASCII: nothing past ASCII, whatever the text. */
static const struct {
	const char	*what, *in, *term, *json;
} ascii_rows[] = {
	{ "plain ASCII and its controls", "a\\b\x1b[2J\x7f", "a\\b\\e[2J\\x7f",
	  "a\\\\b\\u001b[2J\\u007f" },
	{ "U+00DB (C3 9B): a CSI on a Latin-1 terminal", "\xc3\x9b" "2J", "\\xc3\\x9b2J",
	  "\\u00db2J" },
	{ "UTF-8 text: é, €, 𝄞", "\xc3\xa9\xe2\x82\xac\xf0\x9d\x84\x9e", "\\xc3\\xa9\\xe2\\x82\\xac\\xf0\\x9d\\x84\\x9e",
	  "\\u00e9\\u20ac\\ud834\\udd1e" },
	{ "U+009B and U+202E", "\xc2\x9b\xe2\x80\xae", "\\xc2\\x9b\\xe2\\x80\\xae", "\\u009b\\u202e" },
	{ "a raw 0x9b, a cut sequence", "\x9b\xe2\x80", "\\x9b\\xe2\\x80", "\\ufffd\\ufffd\\ufffd" },
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
		if (esc_term(term, rows[i].in, 0) != strlen(rows[i].term) ||
		    strcmp(term, rows[i].term) != 0)
			fail_msg("%s: terminal: got \"%s\", wanted \"%s\"", rows[i].what, term,
			    rows[i].term);
		if (esc_json(json, rows[i].in, 0) != strlen(rows[i].json) ||
		    strcmp(json, rows[i].json) != 0)
			fail_msg("%s: JSON: got \"%s\", wanted \"%s\"", rows[i].what, json,
			    rows[i].json);
	}
	for (i = 0; i < sizeof(ascii_rows) / sizeof(ascii_rows[0]); i++) {
		n = strlen(ascii_rows[i].in);
		assert_true(ESC_JSON_MAX(n) <= sizeof(json));
		if (esc_term(term, ascii_rows[i].in, ESC_ASCII) != strlen(ascii_rows[i].term) ||
		    strcmp(term, ascii_rows[i].term) != 0)
			fail_msg("%s: ASCII terminal: got \"%s\", wanted \"%s\"", ascii_rows[i].what,
			    term, ascii_rows[i].term);
		if (esc_json(json, ascii_rows[i].in, ESC_ASCII) != strlen(ascii_rows[i].json) ||
		    strcmp(json, ascii_rows[i].json) != 0)
			fail_msg("%s: ASCII JSON: got \"%s\", wanted \"%s\"", ascii_rows[i].what,
			    json, ascii_rows[i].json);
	}
}

/* Which locales are UTF-8: LC_ALL's, else LC_CTYPE's, else LANG's. */
static void
test_locale(void **state)
{
	static const struct {
		const char *lc_all, *lc_ctype, *lang;
		int	utf8;
	} t[] = {
		{ NULL, NULL, "C.UTF-8", 1 },
		{ NULL, NULL, "en_US.utf8", 1 },
		{ NULL, NULL, "sr_RS.UTF-8@latin", 1 },
		{ NULL, "UTF-8", NULL, 1 },		/* macOS's LC_CTYPE */
		{ NULL, NULL, "en_US.ISO-8859-1", 0 },
		{ NULL, NULL, "de_DE@euro", 0 },
		{ NULL, NULL, "en_US.UTF-16", 0 },
		{ NULL, NULL, "en_US.utf88", 0 },
		{ NULL, NULL, "C", 0 },
		{ NULL, NULL, "POSIX", 0 },
		{ NULL, NULL, NULL, 0 },		/* nothing set: the C locale */
		{ "", "", "", 0 },
		{ "C", NULL, "C.UTF-8", 0 },		/* LC_ALL first */
		{ "", "POSIX", "C.UTF-8", 0 },		/* an empty one counts as unset */
		{ NULL, "en_GB.UTF-8", "en_GB.ISO-8859-15", 1 },
		{ "C.UTF-8", "C", "C", 1 },
	};
	size_t i;

	(void)state;
	for (i = 0; i < sizeof(t) / sizeof(t[0]); i++)
		if (esc_locale_utf8(t[i].lc_all, t[i].lc_ctype, t[i].lang) != t[i].utf8)
			fail_msg("LC_ALL=%s LC_CTYPE=%s LANG=%s: wanted %s", t[i].lc_all ? t[i].lc_all : "(unset)",
			    t[i].lc_ctype ? t[i].lc_ctype : "(unset)", t[i].lang ? t[i].lang : "(unset)",
			    t[i].utf8 ? "UTF-8" : "not UTF-8");
}

/*
 * Whatever the input, the output holds no byte a terminal acts on, nor any
 * that is not UTF-8; with ESC_ASCII, none past ASCII.
 */
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
			esc_term(term, in, ESC_ASCII);
			esc_json(json, in, ESC_ASCII);
			for (p = (const unsigned char *)term; *p; p++)
				if (*p >= 0x80 || *p < 0x20 || *p == 0x7f)
					fail_msg("%02x %02x: ASCII terminal output has %02x", a, b, *p);
			for (p = (const unsigned char *)json; *p; p++)
				if (*p >= 0x80 || *p < 0x20 || *p == 0x7f)
					fail_msg("%02x %02x: ASCII JSON output has %02x", a, b, *p);
			esc_term(term, in, 0);
			esc_json(json, in, 0);
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
	int n;
	int flags;

	(void)state;
	for (flags = 0; flags <= ESC_ASCII; flags += ESC_ASCII) {
		memset(in, 0x9b, 100);
		in[100] = '\0';
		assert_int_equal(esc_term(term, in, flags) + 1, ESC_TERM_MAX(100));
		assert_int_equal(esc_json(json, in, flags) + 1, ESC_JSON_MAX(100));
		memset(in, 0x01, 100);
		assert_int_equal(esc_term(term, in, flags) + 1, ESC_TERM_MAX(100));
		assert_int_equal(esc_json(json, in, flags) + 1, ESC_JSON_MAX(100));
		/* 25 tags (4 bytes each): \U000e0001 (10) and \udb40\udc01 (12), within */
		memset(in, 0, sizeof(in));
		for (n = 0; n < 25; n++)
			memcpy(in + 4 * n, "\xf3\xa0\x80\x81", 4);
		assert_true(esc_term(term, in, flags) + 1 <= ESC_TERM_MAX(100));
		assert_int_equal(esc_json(json, in, flags), 25 * 12);
	}
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_rows),
		cmocka_unit_test(test_every_pair),
		cmocka_unit_test(test_char),
		cmocka_unit_test(test_locale),
		cmocka_unit_test(test_bounds),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
