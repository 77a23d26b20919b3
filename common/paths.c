/*
 * paths.c: default paths shared by nvq and nvqd (see paths.h).
 */
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include "paths.h"

void
paths_user_socket(char *buf, size_t len)
{
	const char *xdg = getenv("XDG_RUNTIME_DIR");

	if (xdg != NULL && *xdg == '/')
		snprintf(buf, len, "%s/nvq/nvqd.sock", xdg);
	else
		snprintf(buf, len, "/tmp/nvq-%u/nvqd.sock", (unsigned)geteuid());
}
