/*
 * esc.h: other users' text made safe to show, in one place.  Names,
 * commands, paths and reasons that nvqd hands out are whatever their
 * submitter typed; on their way to a terminal, a JSON reader or the
 * dashboard, the characters that would act instead of being seen are
 * escaped here and nowhere else:
 *
 *   C0 controls and DEL           U+0000-U+001F, U+007F
 *   C1 controls, as UTF-8         U+0080-U+009F (U+009B is a CSI)
 *   format characters             Unicode's category Cf: bidi controls
 *                                 (U+061C, U+200E, U+200F, U+202A-U+202E,
 *                                 U+2066-U+2069), invisible ones (U+00AD,
 *                                 U+200B-U+200D, U+2060-U+2064, U+FEFF, the
 *                                 tags U+E0020-U+E007F), and the others;
 *                                 U+2028 and U+2029 besides
 *   bytes that are not UTF-8      a raw 0x9b among them (a CSI on 8-bit
 *                                 terminals), overlong forms, surrogates
 *
 * For a terminal (esc_term): \e, \n, \t, \r, \xHH for the other C0
 * controls, DEL and each byte that is not UTF-8, \u0080 to \u009f and
 * \u202e (four lowercase hex digits; \U000e0001, eight, past U+FFFF) for
 * the others.  A backslash goes out as it is: commands show as typed, and
 * text someone typed as "\u202e" shows as those six characters, which
 * move nothing on a terminal (nvqd's status reasons hold such escapes
 * already, from the supervisor).  In JSON (esc_json): what JSON
 * requires (\" \\ \b \f \n \r \t, \u00XX), the controls above as \u00XX
 * and \u202e (a pair of surrogates past U+FFFF), and each byte that is not
 * UTF-8 as \ufffd (U+FFFD, the replacement character), so that the JSON is
 * UTF-8 a parser reads.  The rest of UTF-8 goes through as it is, except
 * with ESC_ASCII, for a terminal whose charset is not UTF-8 (esc_locale_utf8
 * says): there a UTF-8 character may hold a byte that is a C1 control, such
 * as 0x9b in U+00DB (C3 9B), so nothing past ASCII goes out: for a terminal
 * each such byte is \xHH, in JSON each such character \uXXXX.  Pure: no
 * I/O, no allocation.
 */
#ifndef NVQ_ESC_H
#define NVQ_ESC_H

#include <stddef.h>
#include <stdint.h>

enum esc_kind {
	ESC_TEXT,		/* shown as it is */
	ESC_CONTROL,		/* a control character above */
	ESC_BYTE		/* a byte that starts no UTF-8 character */
};

/* esc_term's and esc_json's flags */
#define ESC_ASCII	0x1	/* nothing past ASCII: the terminal's charset is not UTF-8 */

/* The most bytes esc_term and esc_json write for n bytes of text, NUL included. */
#define ESC_TERM_MAX(n)	((n) * 4 + 1)
#define ESC_JSON_MAX(n)	((n) * 6 + 1)

/*
 * The character at p (not at its NUL): its length in bytes (1 to 4); its
 * kind into *kind and its code point into *cp (ESC_BYTE: the byte).
 */
int	esc_char(const unsigned char *p, int *kind, uint32_t *cp);
/* s for a terminal into out, of ESC_TERM_MAX(strlen(s)) bytes; its length.  flags: ESC_ASCII or 0. */
size_t	esc_term(char *out, const char *s, int flags);
/* s as the inside of a JSON string (no quotes) into out, of ESC_JSON_MAX(strlen(s)) bytes; its length. */
size_t	esc_json(char *out, const char *s, int flags);
/*
 * Whether the locale that LC_ALL, else LC_CTYPE, else LANG names (the
 * values of those variables; NULL or "" where unset) has UTF-8 for its
 * charset ("C.UTF-8", "en_US.utf8"); none set, "C", "POSIX" or an 8-bit
 * codeset ("de_DE.ISO-8859-1", "de_DE@euro"): 0.
 */
int	esc_locale_utf8(const char *lc_all, const char *lc_ctype, const char *lang);

#endif
