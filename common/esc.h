/*
 * esc.h: other users' text made safe to show, in one place.  Names,
 * commands, paths and reasons that nvqd hands out are whatever their
 * submitter typed; on their way to a terminal, a JSON reader or the
 * dashboard, the characters that would act instead of being seen are
 * escaped here and nowhere else:
 *
 *   C0 controls and DEL           U+0000-U+001F, U+007F
 *   C1 controls, as UTF-8         U+0080-U+009F (U+009B is a CSI)
 *   bidi and format controls      U+061C, U+200E, U+200F, U+2028, U+2029,
 *                                 U+202A-U+202E, U+2066-U+2069
 *   bytes that are not UTF-8      a raw 0x9b among them (a CSI on 8-bit
 *                                 terminals), overlong forms, surrogates
 *
 * For a terminal (esc_term): \e, \n, \t, \r, \xHH for the other C0
 * controls, DEL and each byte that is not UTF-8, \u0080 to \u009f and
 * \u202e (four lowercase hex digits) for the others.  In JSON (esc_json):
 * what JSON requires (\" \\ \b \f \n \r \t, \u00XX), the controls above as
 * \u00XX and \u202e, and each byte that is not UTF-8 as \ufffd (U+FFFD,
 * the replacement character), so that the JSON is UTF-8 a parser reads.
 * The rest of UTF-8 goes through as it is.  Pure: no I/O, no allocation.
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

/* The most bytes esc_term and esc_json write for n bytes of text, NUL included. */
#define ESC_TERM_MAX(n)	((n) * 4 + 1)
#define ESC_JSON_MAX(n)	((n) * 6 + 1)

/*
 * The character at p (not at its NUL): its length in bytes (1 to 4); its
 * kind into *kind and its code point into *cp (ESC_BYTE: the byte).
 */
int	esc_char(const unsigned char *p, int *kind, uint32_t *cp);
/* s for a terminal into out, of ESC_TERM_MAX(strlen(s)) bytes; its length. */
size_t	esc_term(char *out, const char *s);
/* s as the inside of a JSON string (no quotes) into out, of ESC_JSON_MAX(strlen(s)) bytes; its length. */
size_t	esc_json(char *out, const char *s);

#endif
