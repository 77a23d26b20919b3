/*
 * fuzz_config.c: libFuzzer harness for nvqd's configuration parser
 * (nvqd/config.c through inih, and the rlimits policy in common/rlimits.c).
 *
 * The input is the INI file, handed to config_load through a memfd.  A
 * file is either loaded or refused with "FILE:LINE: message" (or
 * "FILE: message"); a loaded one holds only values its keys allow.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "config.h"
#include "rlimits.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static struct config c;
	struct rlimits_entry r[RLIMITS_MAX];
	char path[64], err[1024], *text;
	int fd, rc;

	if ((fd = memfd_create("nvq.ini", 0)) == -1)
		abort();
	if (size > 0 && write(fd, data, size) != (ssize_t)size)
		abort();
	snprintf(path, sizeof(path), "/proc/self/fd/%d", fd);
	err[0] = '\0';
	rc = config_load(&c, path, err, sizeof(err));
	close(fd);
	if (rc == -1 && strncmp(err, path, strlen(path)) != 0)
		abort();	/* every refusal names the file */
	if (rc == 0) {
		if (c.nvirtual < 0 || c.nvirtual > CONFIG_MAX_VIRTUAL ||
		    c.sched.reserve_pct >= 100 || c.job_umask > 0777 ||
		    rlimits_parse(c.rlimits, r, err, sizeof(err)) < 0 ||
		    c.socket[0] != '/' || c.database[0] != '/')
			abort();
		(void)config_mode(&c, 3);
		(void)config_compute(&c, 70);
	}
	/* and the rlimits text on its own */
	if ((text = malloc(size + 1)) == NULL)
		return 0;
	memcpy(text, data, size);
	text[size] = '\0';
	(void)rlimits_parse(text, r, err, sizeof(err));
	free(text);
	return 0;
}
