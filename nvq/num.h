/*
 * num.h: numbers to and from text without stdio.  A listing reads some
 * three times and prints some five integers per row, and musl's strtod and
 * printf (nvq is built with musl) cost several times glibc's per call.
 */
#ifndef NVQ_NUM_H
#define NVQ_NUM_H

#include <stdint.h>

#define NUM_INT_LEN	21	/* "-9223372036854775808" and its NUL */

/*
 * strtod(s, NULL), bit for bit: nvqd's reals ("%.3f", "%.4f", "-2") are
 * read here without strtod (an integer of their digits, exact in a double,
 * over an exact power of ten: one correctly rounded division, as strtod's
 * result is); anything else goes to strtod.
 */
double	num_real(const char *s);
/* v in decimal into buf (NUM_INT_LEN bytes at least); buf. */
char	*num_int(int64_t v, char *buf);

#endif
