/*
 * web_off.c: nvqd built without the dashboard (make WEB=0): [web] listen
 * is refused with the reason, not ignored.
 */
#include <stdio.h>

#include "engine.h"
#include "web.h"

int
web_start(struct engine *e, char *err, size_t errlen)
{
	if (e->cfg.web_listen[0] == '\0')
		return 0;
	snprintf(err, errlen, "[web] listen = %s: this nvqd was built without the dashboard "
	    "(make WEB=0)", e->cfg.web_listen);
	return -1;
}

void
web_stop(void)
{
}
