/*
 * num.c: numbers to and from text without stdio (num.h says why).
 */
#include <stdlib.h>

#include "num.h"

/* 10^0 .. 10^22: each exact in a double */
static const double num_pow10[] = {
	1e0, 1e1, 1e2, 1e3, 1e4, 1e5, 1e6, 1e7, 1e8, 1e9, 1e10, 1e11, 1e12, 1e13, 1e14,
	1e15, 1e16, 1e17, 1e18, 1e19, 1e20, 1e21, 1e22,
};

double
num_real(const char *s)
{
	const char *p = s;
	uint64_t v = 0;
	int neg = 0, digits = 0, frac = 0;

	if (*p == '-') {
		neg = 1;
		p++;
	}
	if (*p < '0' || *p > '9')
		return strtod(s, NULL);
	for (; *p >= '0' && *p <= '9'; p++, digits++)
		v = v * 10 + (uint64_t)(*p - '0');
	if (*p == '.')
		for (p++; *p >= '0' && *p <= '9'; p++, digits++, frac++)
			v = v * 10 + (uint64_t)(*p - '0');
	/*
	 * the whole string, at most 15 digits (so v < 2^53, exact), frac <= 22:
	 * v / 10^frac is then the division of two exact doubles, rounded once
	 */
	if (*p != '\0' || digits > 15 || frac > 22)
		return strtod(s, NULL);
	return neg ? -((double)v / num_pow10[frac]) : (double)v / num_pow10[frac];
}

char *
num_int(int64_t v, char *buf)
{
	char tmp[NUM_INT_LEN];
	uint64_t u = v < 0 ? (uint64_t)0 - (uint64_t)v : (uint64_t)v;
	int n = 0, i = 0;

	do {
		tmp[n++] = (char)('0' + u % 10);
		u /= 10;
	} while (u > 0);
	if (v < 0)
		buf[i++] = '-';
	while (n > 0)
		buf[i++] = tmp[--n];
	buf[i] = '\0';
	return buf;
}
