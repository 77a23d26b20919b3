/*
 * esc.c: other users' text escaped for a terminal and for JSON (esc.h):
 * one reader of UTF-8 that says what each character is, and the two ways
 * to write what it found.
 */
#include <string.h>

#include "esc.h"

static const char esc_hex[] = "0123456789abcdef";

/* Whether code point c is a bidi or format control (esc.h's list). */
static int
esc_is_format(uint32_t c)
{
	return c == 0x061c || c == 0x200e || c == 0x200f || c == 0x2028 || c == 0x2029 ||
	    (c >= 0x202a && c <= 0x202e) || (c >= 0x2066 && c <= 0x2069);
}

/* The length of the UTF-8 sequence at p (1 to 4), its code point in *cp; 0 if it is not one. */
static int
esc_utf8(const unsigned char *p, uint32_t *cp)
{
	uint32_t c;
	int i, n;

	if (*p < 0x80) {
		*cp = *p;
		return 1;
	}
	if (*p >= 0xc2 && *p <= 0xdf) {
		n = 2;
		c = *p & 0x1f;
	} else if (*p >= 0xe0 && *p <= 0xef) {
		n = 3;
		c = *p & 0x0f;
	} else if (*p >= 0xf0 && *p <= 0xf4) {
		n = 4;
		c = *p & 0x07;
	} else
		return 0;
	/* a NUL is no continuation byte: nothing is read past the end */
	for (i = 1; i < n; i++) {
		if ((p[i] & 0xc0) != 0x80)
			return 0;
		c = c << 6 | (p[i] & 0x3f);
	}
	/* overlong forms, surrogates, past U+10FFFF */
	if ((*p == 0xe0 && p[1] < 0xa0) || (*p == 0xed && p[1] > 0x9f) ||
	    (*p == 0xf0 && p[1] < 0x90) || (*p == 0xf4 && p[1] > 0x8f))
		return 0;
	*cp = c;
	return n;
}

int
esc_char(const unsigned char *p, int *kind, uint32_t *cp)
{
	int n;

	if ((n = esc_utf8(p, cp)) == 0) {
		*kind = ESC_BYTE;
		*cp = *p;
		return 1;
	}
	*kind = *cp < 0x20 || (*cp >= 0x7f && *cp <= 0x9f) || esc_is_format(*cp) ?
	    ESC_CONTROL : ESC_TEXT;
	return n;
}

/* \u and c in four hex digits (c below U+10000) at out; 6. */
static size_t
esc_u(char *out, uint32_t c)
{
	out[0] = '\\';
	out[1] = 'u';
	out[2] = esc_hex[c >> 12 & 0xf];
	out[3] = esc_hex[c >> 8 & 0xf];
	out[4] = esc_hex[c >> 4 & 0xf];
	out[5] = esc_hex[c & 0xf];
	return 6;
}

/* A backslash and c at out; 2. */
static size_t
esc_two(char *out, char c)
{
	out[0] = '\\';
	out[1] = c;
	return 2;
}

/* The letter a terminal's escape writes after a backslash for c, or 0 if it has none. */
static char
esc_term_named(uint32_t c)
{
	switch (c) {
	case 0x1b: return 'e';
	case '\n': return 'n';
	case '\t': return 't';
	case '\r': return 'r';
	default: return 0;
	}
}

/* The letter JSON writes after a backslash for c, or 0 if it has none. */
static char
esc_json_named(uint32_t c)
{
	switch (c) {
	case '"': return '"';
	case '\\': return '\\';
	case '\b': return 'b';
	case '\f': return 'f';
	case '\n': return 'n';
	case '\r': return 'r';
	case '\t': return 't';
	default: return 0;
	}
}

/* A character of kind and code point c, for a terminal, at out: its length; 0: as it is. */
static size_t
esc_one_term(char *out, int kind, uint32_t c)
{
	char l;

	if (kind == ESC_TEXT)
		return 0;
	if (kind == ESC_CONTROL && (l = esc_term_named(c)) != 0)
		return esc_two(out, l);
	if (kind == ESC_CONTROL && c >= 0x80)
		return esc_u(out, c);
	/* C0, DEL, or a byte that is not UTF-8 (c is the byte) */
	esc_two(out, 'x');
	out[2] = esc_hex[c >> 4];
	out[3] = esc_hex[c & 0xf];
	return 4;
}

/* The same in JSON. */
static size_t
esc_one_json(char *out, int kind, uint32_t c)
{
	char l;

	if (kind == ESC_BYTE)
		return esc_u(out, 0xfffd);
	if ((l = esc_json_named(c)) != 0)
		return esc_two(out, l);
	return kind == ESC_CONTROL ? esc_u(out, c) : 0;
}

/* s into out, each character as one() writes it; its length. */
static size_t
esc_write(char *out, const char *s, size_t (*one)(char *, int, uint32_t))
{
	const unsigned char *p = (const unsigned char *)s;
	size_t off = 0, k;
	uint32_t c;
	int kind, n;

	for (; *p != '\0'; p += n) {
		n = esc_char(p, &kind, &c);
		if ((k = one(out + off, kind, c)) == 0) {
			memcpy(out + off, p, (size_t)n);
			k = (size_t)n;
		}
		off += k;
	}
	out[off] = '\0';
	return off;
}

size_t
esc_term(char *out, const char *s)
{
	return esc_write(out, s, esc_one_term);
}

size_t
esc_json(char *out, const char *s)
{
	return esc_write(out, s, esc_one_json);
}
