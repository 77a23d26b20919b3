/*
 * fuzz_status.c: libFuzzer harness for the status record a job's shim
 * writes and nvqd reads back (nvqd/runner.c).
 *
 * The input is tried two ways.  As a record: besides not crashing, what
 * parses has its values in range and a reason without control characters,
 * and formatted again it parses to the same.  As a reason (what a user's
 * path can put there): the record made with it parses, with the fixed
 * values it was made with, whatever the bytes: no reason adds a field.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/types.h>

#include "status.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* Values a parsed record may hold, and no control character in its reason. */
static void
fuzz_check(const struct status_record *rs)
{
	const unsigned char *c;

	if (rs->exit_code < -1 || rs->exit_code > 255 || rs->signal < 0 || rs->signal > 127 ||
	    (rs->exit_code == -1) != (rs->signal > 0) || rs->max_rss < -1 ||
	    !(rs->ended_at > 0) || !(rs->cpu_time >= 0 || rs->cpu_time == -1))
		abort();
	if (memchr(rs->reason, '\0', sizeof(rs->reason)) == NULL)
		abort();
	for (c = (const unsigned char *)rs->reason; *c != '\0'; c++)
		if (*c < 0x20 || *c == 0x7f)
			abort();
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char buf[STATUS_SIZE];
	struct status_record rs, back;
	size_t n;
	int len;

	if (status_parse((const char *)data, size, &rs) == 0) {
		fuzz_check(&rs);
		if ((len = status_format(&rs, buf, sizeof(buf))) <= 0 ||
		    status_parse(buf, (size_t)len, &back) == -1 ||
		    back.exit_code != rs.exit_code || back.signal != rs.signal ||
		    back.max_rss != rs.max_rss || strcmp(back.reason, rs.reason) != 0)
			abort();
	}
	memset(&rs, 0, sizeof(rs));
	rs.exit_code = 126;
	rs.cpu_time = -1;
	rs.max_rss = -1;
	rs.ended_at = 1700000000.5;
	n = size < sizeof(rs.reason) - 1 ? size : sizeof(rs.reason) - 1;
	memcpy(rs.reason, data, n);
	if ((len = status_format(&rs, buf, sizeof(buf))) <= 0 ||
	    status_parse(buf, (size_t)len, &back) == -1)
		abort();
	fuzz_check(&back);
	if (back.exit_code != 126 || back.signal != 0 || back.cpu_time != -1 ||
	    back.max_rss != -1 || back.ended_at != 1700000000.5)
		abort();
	return 0;
}
