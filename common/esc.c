/*
 * esc.c: other users' text escaped for a terminal and for JSON (esc.h):
 * one reader of UTF-8 that says what each character is, the two ways to
 * write what it found (each also in ASCII only, for a terminal whose
 * charset is not UTF-8), and what the locale says that charset is.
 */
#include <string.h>

#include "esc.h"

static const char esc_hex[] = "0123456789abcdef";

/*
 * Unicode's format characters (general category Cf, Unicode 15), bidi
 * controls among them, and the line and paragraph separators: first and
 * last code point of each range, in order.
 */
static const uint32_t esc_format[][2] = {
	{ 0x00ad, 0x00ad }, { 0x0600, 0x0605 }, { 0x061c, 0x061c }, { 0x06dd, 0x06dd },
	{ 0x070f, 0x070f }, { 0x0890, 0x0891 }, { 0x08e2, 0x08e2 }, { 0x180e, 0x180e },
	{ 0x200b, 0x200f }, { 0x2028, 0x202e }, { 0x2060, 0x2064 }, { 0x2066, 0x206f },
	{ 0xfeff, 0xfeff }, { 0xfff9, 0xfffb }, { 0x110bd, 0x110bd }, { 0x110cd, 0x110cd },
	{ 0x13430, 0x1343f }, { 0x1bca0, 0x1bca3 }, { 0x1d173, 0x1d17a },
	{ 0xe0001, 0xe0001 }, { 0xe0020, 0xe007f },
};

/* Whether code point c is one of esc_format's. */
static int
esc_is_format(uint32_t c)
{
	size_t i;

	for (i = 0; i < sizeof(esc_format) / sizeof(esc_format[0]) && c >= esc_format[i][0]; i++)
		if (c <= esc_format[i][1])
			return 1;
	return 0;
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
	/* ASCII, most of what nvq shows, asks no table */
	if (*cp < 0x80)
		*kind = *cp < 0x20 || *cp == 0x7f ? ESC_CONTROL : ESC_TEXT;
	else
		*kind = *cp <= 0x9f || esc_is_format(*cp) ? ESC_CONTROL : ESC_TEXT;
	return n;
}

/* What esc_char found at p. */
struct esc_ch {
	const unsigned char *p;
	int		n;		/* its length in bytes */
	int		kind;		/* enum esc_kind */
	uint32_t	c;		/* its code point; ESC_BYTE: the byte */
};

/* A backslash, l and c in digits hex digits at out; 2 + digits. */
static size_t
esc_hex_n(char *out, char l, uint32_t c, int digits)
{
	int i;

	out[0] = '\\';
	out[1] = l;
	for (i = 0; i < digits; i++)
		out[2 + i] = esc_hex[c >> 4 * (digits - 1 - i) & 0xf];
	return 2 + (size_t)digits;
}

/* c as \uXXXX, or past U+FFFF as JSON's pair of surrogates; 6 or 12. */
static size_t
esc_u(char *out, uint32_t c)
{
	if (c < 0x10000)
		return esc_hex_n(out, 'u', c, 4);
	c -= 0x10000;
	esc_hex_n(out, 'u', 0xd800 | c >> 10, 4);
	return 6 + esc_hex_n(out + 6, 'u', 0xdc00 | (c & 0x3ff), 4);
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

/* A character for a terminal, at out: its length; 0: as it is. */
static size_t
esc_one_term(char *out, const struct esc_ch *ch)
{
	char l;

	if (ch->kind == ESC_TEXT)
		return 0;
	if (ch->kind == ESC_CONTROL && (l = esc_term_named(ch->c)) != 0)
		return esc_two(out, l);
	if (ch->kind == ESC_CONTROL && ch->c >= 0x10000)
		return esc_hex_n(out, 'U', ch->c, 8);
	if (ch->kind == ESC_CONTROL && ch->c >= 0x80)
		return esc_hex_n(out, 'u', ch->c, 4);
	/* C0, DEL, or a byte that is not UTF-8 (c is the byte) */
	return esc_hex_n(out, 'x', ch->c, 2);
}

/* The same for a terminal whose charset is not UTF-8: each byte past ASCII as \xHH. */
static size_t
esc_one_term_ascii(char *out, const struct esc_ch *ch)
{
	size_t off = 0;
	int i;

	if (ch->p[0] < 0x80)
		return esc_one_term(out, ch);
	for (i = 0; i < ch->n; i++)
		off += esc_hex_n(out + off, 'x', ch->p[i], 2);
	return off;
}

/* The same in JSON. */
static size_t
esc_one_json(char *out, const struct esc_ch *ch)
{
	char l;

	if (ch->kind == ESC_BYTE)
		return esc_u(out, 0xfffd);
	if ((l = esc_json_named(ch->c)) != 0)
		return esc_two(out, l);
	return ch->kind == ESC_CONTROL ? esc_u(out, ch->c) : 0;
}

/* The same in JSON in ASCII only: each character past ASCII as \uXXXX. */
static size_t
esc_one_json_ascii(char *out, const struct esc_ch *ch)
{
	if (ch->kind == ESC_TEXT && ch->c >= 0x80)
		return esc_u(out, ch->c);
	return esc_one_json(out, ch);
}

/* s into out, each character as one() writes it; its length. */
static size_t
esc_write(char *out, const char *s, size_t (*one)(char *, const struct esc_ch *))
{
	struct esc_ch ch;
	size_t off = 0, k;

	for (ch.p = (const unsigned char *)s; *ch.p != '\0'; ch.p += ch.n) {
		/* printable ASCII but for the two that JSON escapes: as it is in every form */
		if (*ch.p >= 0x20 && *ch.p < 0x7f && *ch.p != '\\' && *ch.p != '"') {
			out[off++] = (char)*ch.p;
			ch.n = 1;
			continue;
		}
		ch.n = esc_char(ch.p, &ch.kind, &ch.c);
		if ((k = one(out + off, &ch)) == 0) {
			memcpy(out + off, ch.p, (size_t)ch.n);
			k = (size_t)ch.n;
		}
		off += k;
	}
	out[off] = '\0';
	return off;
}

size_t
esc_term(char *out, const char *s, int flags)
{
	return esc_write(out, s, flags & ESC_ASCII ? esc_one_term_ascii : esc_one_term);
}

size_t
esc_json(char *out, const char *s, int flags)
{
	return esc_write(out, s, flags & ESC_ASCII ? esc_one_json_ascii : esc_one_json);
}

/* Whether codeset, up to its end or an '@', names UTF-8 ("UTF-8", "utf8"). */
static int
esc_codeset_utf8(const char *codeset)
{
	static const char want[] = "utf8";
	size_t k = 0;

	char c;

	for (; *codeset != '\0' && *codeset != '@'; codeset++) {
		if (*codeset == '-' || *codeset == '_')
			continue;
		c = *codeset >= 'A' && *codeset <= 'Z' ? (char)(*codeset - 'A' + 'a') : *codeset;
		if (k == sizeof(want) - 1 || c != want[k])
			return 0;
		k++;
	}
	return k == sizeof(want) - 1;
}

int
esc_locale_utf8(const char *lc_all, const char *lc_ctype, const char *lang)
{
	const char *l, *dot;

	if (lc_all != NULL && *lc_all != '\0')
		l = lc_all;
	else if (lc_ctype != NULL && *lc_ctype != '\0')
		l = lc_ctype;
	else if (lang != NULL)
		l = lang;
	else
		return 0;
	/* language_territory.codeset@modifier, or a codeset alone ("UTF-8", as macOS sets) */
	dot = strchr(l, '.');
	return esc_codeset_utf8(dot != NULL ? dot + 1 : l);
}
