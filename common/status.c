/*
 * status.c: the record a job's supervisor writes when the job ends, and
 * reads back by nvqd (see status.h): its format and its parser together.
 */
#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "status.h"

/* The fields of a record, in the order they must come. */
enum {
	STATUS_F_EXIT, STATUS_F_SIGNAL, STATUS_F_CPU, STATUS_F_RSS, STATUS_F_ENDED,
	STATUS_F_REASON, STATUS_F_END, STATUS_NFIELDS
};
static const char *const status_fields[STATUS_NFIELDS] = {
	"exit", "signal", "cpu", "rss", "ended", "reason", "end"
};

/* Whether c may stand in a reason as it is: no control character. */
static int
status_printable(unsigned char c)
{
	return c >= 0x20 && c != 0x7f;
}

/*
 * A number of a record: -?DIGITS, with .DIGITS where frac, nothing else
 * (no blanks, signs, exponents, hex, inf or nan that strtod would take).
 */
static int
status_number(const char *v, size_t len, int frac, double *d, long long *ll)
{
	char buf[40], *end;
	size_t i = 0, digits = 0;

	if (len == 0 || len >= sizeof(buf))
		return -1;
	if (v[0] == '-')
		i++;
	for (; i < len && v[i] >= '0' && v[i] <= '9'; i++)
		digits++;
	if (digits == 0)
		return -1;
	if (frac && i < len && v[i] == '.') {
		for (digits = 0, i++; i < len && v[i] >= '0' && v[i] <= '9'; i++)
			digits++;
		if (digits == 0)
			return -1;
	}
	if (i != len)
		return -1;
	memcpy(buf, v, len);
	buf[len] = '\0';
	errno = 0;
	if (frac) {
		*d = strtod(buf, &end);
		return errno != 0 || !isfinite(*d) ? -1 : 0;
	}
	*ll = strtoll(buf, &end, 10);
	return errno != 0 ? -1 : 0;
}

/* One field's value (v, len bytes, no newline) into rs; 0 or -1 if out of range. */
static int
status_field(int f, const char *v, size_t len, struct status_record *rs)
{
	long long ll = 0;
	double d = 0;
	size_t i;

	switch (f) {
	case STATUS_F_EXIT:
		if (status_number(v, len, 0, &d, &ll) == -1 || ll < -1 || ll > 255)
			return -1;
		rs->exit_code = (int)ll;
		return 0;
	case STATUS_F_SIGNAL:
		if (status_number(v, len, 0, &d, &ll) == -1 || ll < 0 || ll > 127)
			return -1;
		rs->signal = (int)ll;
		return 0;
	case STATUS_F_CPU:
		/* -1: not known (it never started) */
		if (status_number(v, len, 1, &d, &ll) == -1 || (d < 0 && d != -1) || d > 1e12)
			return -1;
		rs->cpu_time = d;
		return 0;
	case STATUS_F_RSS:
		if (status_number(v, len, 0, &d, &ll) == -1 || ll < -1)
			return -1;
		rs->max_rss = (int64_t)ll;
		return 0;
	case STATUS_F_ENDED:
		/*
		 * An epoch time: under 1 s is none, and would not survive being
		 * written again with three decimals (0.0004 becomes 0.000)
		 */
		if (status_number(v, len, 1, &d, &ll) == -1 || d < 1 || d > 1e11)
			return -1;
		rs->ended_at = d;
		return 0;
	case STATUS_F_REASON:
		if (len >= sizeof(rs->reason))
			return -1;
		for (i = 0; i < len; i++)
			if (!status_printable((unsigned char)v[i]))
				return -1;
		memcpy(rs->reason, v, len);
		rs->reason[len] = '\0';
		return 0;
	default:	/* "end" has no value */
		return len == 0 ? 0 : -1;
	}
}

/* An rs that says nothing is known; returns -1, for the callers' returns. */
static int
status_none(struct status_record *rs)
{
	memset(rs, 0, sizeof(*rs));
	rs->exit_code = -1;
	rs->cpu_time = -1;
	rs->max_rss = -1;
	return -1;
}

int
status_parse(const char *buf, size_t len, struct status_record *rs)
{
	const char *p = buf, *end = buf + len, *nl, *v;
	size_t klen;
	int f;

	memset(rs, 0, sizeof(*rs));
	if (buf == NULL || len == 0)
		goto bad;
	for (f = 0; f < STATUS_NFIELDS; f++) {
		klen = strlen(status_fields[f]);
		if ((nl = memchr(p, '\n', (size_t)(end - p))) == NULL ||
		    (size_t)(nl - p) < klen || memcmp(p, status_fields[f], klen) != 0)
			goto bad;
		/* "KEY VALUE", or "end" alone */
		v = p + klen;
		if (f == STATUS_F_END ? v != nl : *v != ' ')
			goto bad;
		if (v < nl)
			v++;
		if (status_field(f, v, (size_t)(nl - v), rs) == -1)
			goto bad;
		p = nl + 1;
	}
	/* the rest of the reserved space is as fallocate left it */
	for (; p < end; p++)
		if (*p != '\0')
			goto bad;
	/* an exit status or a signal, never both */
	if ((rs->exit_code == -1) != (rs->signal > 0))
		goto bad;
	return 0;
bad:
	return status_none(rs);
}

int
status_format(const struct status_record *rs, char *buf, size_t len)
{
	char reason[sizeof(rs->reason)], esc[8];
	const unsigned char *c;
	size_t r = 0, k;
	int n;

	/*
	 * Control characters as \n, \t, \r or \xHH, so that the reason stays
	 * on its line; cut where the next would not fit, as the parser takes
	 * no longer reason than struct status_record holds.  It is shown to
	 * people, never read back into bytes: a backslash stays as it is.
	 */
	for (c = (const unsigned char *)rs->reason; c < (const unsigned char *)rs->reason +
	    sizeof(rs->reason) && *c != '\0'; c++) {
		if (status_printable(*c)) {
			esc[0] = (char)*c;
			esc[1] = '\0';
		} else if (*c == '\n' || *c == '\t' || *c == '\r')
			snprintf(esc, sizeof(esc), "\\%c", *c == '\n' ? 'n' : *c == '\t' ? 't' : 'r');
		else
			snprintf(esc, sizeof(esc), "\\x%02x", *c);
		if (r + (k = strlen(esc)) >= sizeof(reason))
			break;
		memcpy(reason + r, esc, k);
		r += k;
	}
	reason[r] = '\0';
	n = snprintf(buf, len, "exit %d\nsignal %d\ncpu %.3f\nrss %lld\nended %.3f\nreason %s\nend\n",
	    rs->exit_code, rs->signal, rs->cpu_time, (long long)rs->max_rss, rs->ended_at, reason);
	return n < 0 || (size_t)n >= len ? -1 : n;
}

int
status_read(const char *path, struct status_record *rs)
{
	char buf[STATUS_SIZE * 2];
	size_t len = 0;
	ssize_t n;
	int fd;

	if ((fd = open(path, O_RDONLY | O_NOFOLLOW | O_CLOEXEC)) == -1)
		return status_none(rs);
	while (len < sizeof(buf) && ((n = read(fd, buf + len, sizeof(buf) - len)) > 0 ||
	    (n == -1 && errno == EINTR)))
		len += n > 0 ? (size_t)n : 0;
	close(fd);
	/* a file that fills the buffer is no record of ours */
	if (len == sizeof(buf))
		return status_none(rs);
	return status_parse(buf, len, rs);
}

