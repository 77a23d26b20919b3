/*
 * parse.c: sizes, durations and job ids as users type them, and their
 * formatting.  Every parser rejects trailing garbage, empty strings,
 * negative numbers and values that would overflow.
 */
#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "parse.h"

static int
parse_unit(const char *u, uint64_t *mul)
{
	static const struct { const char *name; uint64_t mul; } units[] = {
		{ "", 1ULL << 20 }, { "b", 1 },
		{ "k", 1ULL << 10 }, { "kb", 1ULL << 10 }, { "kib", 1ULL << 10 },
		{ "m", 1ULL << 20 }, { "mb", 1ULL << 20 }, { "mib", 1ULL << 20 },
		{ "g", 1ULL << 30 }, { "gb", 1ULL << 30 }, { "gib", 1ULL << 30 },
		{ "t", 1ULL << 40 }, { "tb", 1ULL << 40 }, { "tib", 1ULL << 40 },
	};
	size_t i;

	for (i = 0; i < sizeof(units) / sizeof(units[0]); i++) {
		if (strcasecmp(u, units[i].name) == 0) {
			*mul = units[i].mul;
			return 0;
		}
	}
	return -1;
}

int
parse_size(const char *s, uint64_t *out)
{
	char *end;
	double v;
	uint64_t mul;

	if (s == NULL || !isdigit((unsigned char)s[0]))
		return -1;
	errno = 0;
	v = strtod(s, &end);
	if (errno != 0 || end == s || !isfinite(v) || v < 0)
		return -1;
	if (parse_unit(end, &mul) == -1)
		return -1;
	v *= (double)mul;
	if (v >= 18446744073709551615.0)
		return -1;
	*out = (uint64_t)(v + 0.5);
	return 0;
}

static int
parse_digits(const char *s, size_t n, int64_t *out)
{
	int64_t v = 0;
	size_t i;

	if (n == 0 || n > 12)
		return -1;
	for (i = 0; i < n; i++) {
		if (!isdigit((unsigned char)s[i]))
			return -1;
		v = v * 10 + (s[i] - '0');
	}
	*out = v;
	return 0;
}

/* Splits "a:b:c" into up to three numbers; returns how many, or -1. */
static int
parse_colons(const char *s, int64_t f[3])
{
	int n = 0;
	const char *p = s, *c;

	for (;;) {
		if (n == 3)
			return -1;
		c = strchr(p, ':');
		if (parse_digits(p, c ? (size_t)(c - p) : strlen(p), &f[n]) == -1)
			return -1;
		n++;
		if (c == NULL)
			return n;
		p = c + 1;
	}
}

int
parse_duration(const char *s, int64_t *out)
{
	int64_t f[3], days = 0, v;
	const char *dash;
	size_t len;
	int n;

	if (s == NULL || *s == '\0')
		return -1;
	len = strlen(s);
	/* "45s", "30m", "2h", "1d" */
	if (strchr("smhd", s[len - 1]) != NULL && len > 1) {
		static const int64_t mul[] = { 1, 60, 3600, 86400 };
		if (parse_digits(s, len - 1, &v) == -1)
			return -1;
		*out = v * mul[strchr("smhd", s[len - 1]) - "smhd"];
		return 0;
	}
	if ((dash = strchr(s, '-')) != NULL) {
		if (parse_digits(s, (size_t)(dash - s), &days) == -1)
			return -1;
		n = parse_colons(dash + 1, f);
		if (n == -1)
			return -1;
		/* D-HH, D-HH:MM, D-HH:MM:SS */
		v = f[0] * 3600 + (n > 1 ? f[1] * 60 : 0) + (n > 2 ? f[2] : 0);
		if ((n > 1 && f[1] > 59) || (n > 2 && f[2] > 59))
			return -1;
		*out = days * 86400 + v;
		return 0;
	}
	n = parse_colons(s, f);
	if (n == 1)
		*out = f[0] * 60;			/* minutes */
	else if (n == 2 && f[1] < 60)
		*out = f[0] * 60 + f[1];		/* MM:SS */
	else if (n == 3 && f[1] < 60 && f[2] < 60)
		*out = f[0] * 3600 + f[1] * 60 + f[2];	/* HH:MM:SS */
	else
		return -1;
	return 0;
}

int
parse_reserve(const char *s, unsigned *pct, uint64_t *bytes)
{
	size_t len;
	int64_t v;

	if (s == NULL || (len = strlen(s)) == 0)
		return -1;
	if (s[len - 1] == '%') {
		if (parse_digits(s, len - 1, &v) == -1 || v > 99)
			return -1;
		*pct = (unsigned)v;
		*bytes = 0;
		return 0;
	}
	if (parse_size(s, bytes) == -1)
		return -1;
	*pct = 0;
	return 0;
}

int
parse_int(const char *s, long long min, long long max, long long *out)
{
	char *end;
	long long v;

	if (s == NULL || *s == '\0' || isspace((unsigned char)*s))
		return -1;
	errno = 0;
	v = strtoll(s, &end, 10);
	if (errno != 0 || *end != '\0' || v < min || v > max)
		return -1;
	*out = v;
	return 0;
}

int
parse_id(const char *s, int64_t *out)
{
	long long v;

	if (s == NULL || !isdigit((unsigned char)*s))
		return -1;
	if (parse_int(s, 1, INT64_MAX, &v) == -1)
		return -1;
	*out = v;
	return 0;
}

int
parse_id_list(const char *s, int64_t *ids, int max)
{
	char buf[32];
	const char *p = s, *c;
	size_t n;
	int count = 0;

	if (s == NULL || *s == '\0')
		return -1;
	for (;;) {
		c = strchr(p, ',');
		n = c ? (size_t)(c - p) : strlen(p);
		if (n == 0 || n >= sizeof(buf) || count == max)
			return -1;
		memcpy(buf, p, n);
		buf[n] = '\0';
		if (parse_id(buf, &ids[count]) == -1)
			return -1;
		count++;
		if (c == NULL)
			return count;
		p = c + 1;
	}
}

int
parse_cmp_i64(const void *a, const void *b)
{
	int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;

	return (x > y) - (x < y);
}

int
parse_array(const char *s, int64_t *idx, int max, int *n, int *limit, char *why,
    size_t whylen)
{
	long long a, b, step, lim;
	const char *p = s, *pct;
	char item[64], *dash, *colon;
	int64_t *sorted, i;
	size_t len;
	int k;

	*n = 0;
	*limit = 0;
	if (s == NULL || *s == '\0') {
		snprintf(why, whylen, "empty");
		return -1;
	}
	if ((pct = strchr(s, '%')) != NULL) {
		if (parse_int(pct + 1, 1, PARSE_MAX_TASKS, &lim) == -1) {
			snprintf(why, whylen, "%%%s: not a number of tasks at once (1 to %d)",
			    pct + 1, PARSE_MAX_TASKS);
			return -1;
		}
		*limit = (int)lim;
	}
	len = pct ? (size_t)(pct - s) : strlen(s);
	while (p < s + len) {
		size_t il = strcspn(p, ",");

		if (p + il > s + len)
			il = (size_t)(s + len - p);
		if (il == 0 || il >= sizeof(item)) {
			snprintf(why, whylen, "not a list of indexes (e.g. 0-99, 1,5,7, 0-20:2, "
			    "then %%8 for at most 8 at once)");
			return -1;
		}
		memcpy(item, p, il);
		item[il] = '\0';
		step = 1;
		if ((colon = strchr(item, ':')) != NULL) {
			*colon = '\0';
			if (parse_int(colon + 1, 1, PARSE_MAX_INDEX, &step) == -1) {
				snprintf(why, whylen, "%s: not a step", colon + 1);
				return -1;
			}
		}
		if ((dash = strchr(item, '-')) != NULL)
			*dash = '\0';
		if (parse_int(item, 0, PARSE_MAX_INDEX, &a) == -1 ||
		    (dash != NULL && parse_int(dash + 1, 0, PARSE_MAX_INDEX, &b) == -1)) {
			snprintf(why, whylen, "\"%.*s\": indexes are whole numbers from 0 to %d",
			    (int)il, p, PARSE_MAX_INDEX);
			return -1;
		}
		if (dash == NULL)
			b = a;
		if (b < a || (colon != NULL && dash == NULL)) {
			snprintf(why, whylen, "\"%.*s\": not a range (A-B with A <= B, or "
			    "A-B:STEP)", (int)il, p);
			return -1;
		}
		for (i = a; i <= b; i += step) {
			if (*n == max) {
				snprintf(why, whylen, "over %d tasks", max);
				return -1;
			}
			idx[(*n)++] = i;
		}
		p += il + (p[il] == ',' ? 1 : 0);
		if (p == s + len && p[-1] == ',') {
			snprintf(why, whylen, "a list may not end with a comma");
			return -1;
		}
	}
	if (*n > 1) {
		if ((sorted = malloc(sizeof(*sorted) * (size_t)*n)) == NULL) {
			snprintf(why, whylen, "out of memory");
			return -1;
		}
		memcpy(sorted, idx, sizeof(*sorted) * (size_t)*n);
		qsort(sorted, (size_t)*n, sizeof(*sorted), parse_cmp_i64);
		for (k = 1; k < *n && sorted[k] != sorted[k - 1]; k++)
			;
		if (k < *n) {
			snprintf(why, whylen, "index %lld is given twice", (long long)sorted[k]);
			free(sorted);
			return -1;
		}
		free(sorted);
	}
	return 0;
}

void
parse_array_shape(const char *spec, const int64_t *idx, int n, struct parse_shape *sh)
{
	const char *colon;
	size_t len;
	long long step;
	char buf[32];
	int i;

	sh->count = n;
	sh->min = sh->max = n > 0 ? idx[0] : 0;
	for (i = 1; i < n; i++) {
		if (idx[i] < sh->min)
			sh->min = idx[i];
		if (idx[i] > sh->max)
			sh->max = idx[i];
	}
	sh->step = 1;
	/* a list (or a mix) has no one stride: 1, as Slurm says for a list */
	if (spec == NULL || (len = strcspn(spec, "%")) == 0 || memchr(spec, ',', len) != NULL ||
	    (colon = memchr(spec, ':', len)) == NULL || (size_t)(spec + len - colon) > sizeof(buf))
		return;
	memcpy(buf, colon + 1, (size_t)(spec + len - colon - 1));
	buf[spec + len - colon - 1] = '\0';
	if (parse_int(buf, 1, PARSE_MAX_INDEX, &step) == 0)
		sh->step = step;
}

int
parse_slurm_name(const char *s)
{
	return *s != '\0' && strlen(s) <= PARSE_MAX_SLURM_NAME && strspn(s,
	    "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_.,-") == strlen(s);
}

int
parse_is_warn(const char *s)
{
	return strchr(s, '@') != NULL || strncasecmp(s, "B:", 2) == 0 ||
	    strncasecmp(s, "R:", 2) == 0;
}

int
parse_warn(const char *s, int *sig, int *secs, int *batch, char *why, size_t whylen)
{
	char buf[32];
	const char *at;
	long long t = PARSE_WARN_DEFAULT;
	size_t len;

	*batch = 0;
	if (strncasecmp(s, "R:", 2) == 0) {
		snprintf(why, whylen, "R: lets a job overlap a reservation; nvq has no "
		    "reservations (leave R: out)");
		return -1;
	}
	if (strncasecmp(s, "B:", 2) == 0) {
		*batch = 1;
		s += 2;
	}
	at = strchr(s, '@');
	len = at != NULL ? (size_t)(at - s) : strlen(s);
	if (len == 0 || len >= sizeof(buf)) {
		snprintf(why, whylen, "not [B:]SIG[@TIME] (USR1@60, B:TERM@300, 10@30)");
		return -1;
	}
	memcpy(buf, s, len);
	buf[len] = '\0';
	if (parse_signal(buf, sig) == -1) {
		snprintf(why, whylen, "%s: not a signal a job can act on (USR1, SIGTERM, 12, ...; "
		    "not KILL or STOP)", buf);
		return -1;
	}
	if (at != NULL && parse_int(at + 1, 0, PARSE_WARN_MAX, &t) == -1) {
		snprintf(why, whylen, "@%s: not a number of seconds before the time limit "
		    "(0 to %d)", at + 1, PARSE_WARN_MAX);
		return -1;
	}
	*secs = (int)t;
	return 0;
}

void
fmt_size(uint64_t v, char *buf, size_t len)
{
	static const char units[] = "KMGT";
	double d = (double)v;
	int u = -1;

	if (v < 1024) {
		snprintf(buf, len, "%lluB", (unsigned long long)v);
		return;
	}
	while (d >= 1024 && u < 3) {
		d /= 1024;
		u++;
	}
	if (d == floor(d))	/* as %.0f prints it, without a float conversion */
		snprintf(buf, len, "%llu%c", (unsigned long long)d, units[u]);
	else if (d >= 100)
		snprintf(buf, len, "%.0f%c", d, units[u]);
	else if (d >= 10)
		snprintf(buf, len, "%.1f%c", floor(d * 10) / 10, units[u]);
	else
		snprintf(buf, len, "%.2g%c", floor(d * 10) / 10, units[u]);
}

void
fmt_elapsed(int64_t s, char *buf, size_t len)
{
	if (s < 0)
		s = 0;
	if (s >= 86400)
		snprintf(buf, len, "%lld-%02lld:%02lld:%02lld", (long long)(s / 86400),
		    (long long)(s % 86400 / 3600), (long long)(s % 3600 / 60),
		    (long long)(s % 60));
	else if (s >= 3600)
		snprintf(buf, len, "%lld:%02lld:%02lld", (long long)(s / 3600),
		    (long long)(s % 3600 / 60), (long long)(s % 60));
	else
		snprintf(buf, len, "%02lld:%02lld", (long long)(s / 60), (long long)(s % 60));
}

/*
 * Signal names without SIG, those glibc's sigabbrev_np gives (1 to 31 on
 * Linux x86-64), here because nvq may be built with musl, which has none.
 */
static const char *const parse_signames[32] = {
	NULL, "HUP", "INT", "QUIT", "ILL", "TRAP", "ABRT", "BUS", "FPE", "KILL", "USR1",
	"SEGV", "USR2", "PIPE", "ALRM", "TERM", "STKFLT", "CHLD", "CONT", "STOP", "TSTP",
	"TTIN", "TTOU", "URG", "XCPU", "XFSZ", "VTALRM", "PROF", "WINCH", "POLL", "PWR", "SYS",
};

const char *
parse_signame(int sig)
{
	return sig > 0 && sig < 32 ? parse_signames[sig] : NULL;
}

int
parse_signal(const char *s, int *out)
{
	long long n;
	const char *name;
	int sig;

	if (s == NULL)
		return -1;
	if (parse_int(s, 1, 64, &n) == 0)
		sig = (int)n;
	else {
		if (strncasecmp(s, "SIG", 3) == 0)
			s += 3;
		for (sig = 1; sig <= 64; sig++)
			if ((name = parse_signame(sig)) != NULL && strcasecmp(name, s) == 0)
				break;
		if (sig > 64)
			return -1;
	}
	if (sig == SIGKILL || sig == SIGSTOP)
		return -1;
	*out = sig;
	return 0;
}
