/*
 * fuzz_slurm.c: libFuzzer harness for what nvqd reads back from Slurm and
 * from the SPANK plugin's peak records (nvqd/engine/slurmjob.c).  A peak record's
 * numbers come from a file the job's user can write, so every line is a
 * claim.  Besides not crashing: a row that parses has an id and an
 * upper-case state; GPUs that parse are NODE or NODE:INDEX entries that fit
 * what they were given; a peak that parses names a NODE:INDEX.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "slurmjob.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct slurm_row r;
	char line[4096], out[64], gpu[96];
	uint64_t bytes;
	int final;

	if (size >= sizeof(line))
		return 0;
	memcpy(line, data, size);
	line[size] = '\0';
	if (slurmjob_parse_row(line, &r) == 0) {
		if (r.sid <= 0 || r.state[0] == '\0' ||
		    strspn(r.state, "ABCDEFGHIJKLMNOPQRSTUVWXYZ_") != strlen(r.state) ||
		    memchr(r.nodes, '\0', sizeof(r.nodes)) == NULL ||
		    memchr(r.reason, '\0', sizeof(r.reason)) == NULL)
			abort();
		(void)slurmjob_state(r.state, &final);
	}
	memset(out, 'x', sizeof(out));
	if (slurmjob_gpus(line, out, sizeof(out)) == 0 &&
	    (out[0] == '\0' || memchr(out, '\0', sizeof(out)) == NULL))
		abort();
	if (slurmjob_peak_line(line, gpu, sizeof(gpu), &bytes) == 0 &&
	    (strchr(gpu, ':') == NULL || strspn(gpu, "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnop"
	    "qrstuvwxyz0123456789-_.:") != strlen(gpu)))
		abort();
	return 0;
}
