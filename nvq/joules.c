/*
 * joules.c: energy in human units (joules.h).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "joules.h"

#define JOULES_WH	3600.0

void
joules_fmt(double j, char *buf, size_t len)
{
	if (j < 0)
		snprintf(buf, len, "unknown");
	else if (j < 10)
		snprintf(buf, len, "%.1f J", j);
	else if (j < JOULES_WH)
		snprintf(buf, len, "%.0f J", j);
	else if (j < 1000 * JOULES_WH)
		snprintf(buf, len, "%.2f Wh", j / JOULES_WH);
	else
		snprintf(buf, len, "%.3f kWh", j / (1000 * JOULES_WH));
}

void
joules_list(const char *list, char *buf, size_t len)
{
	char item[256], e[32];
	const char *p = list, *end, *eq, *colon;
	size_t off = 0, n;
	char *stop;
	double j;

	if (len == 0)
		return;
	buf[0] = '\0';
	while (p != NULL && *p != '\0' && off < len) {
		end = strchr(p, ',');
		n = end != NULL ? (size_t)(end - p) : strlen(p);
		if (n >= sizeof(item))
			n = sizeof(item) - 1;
		memcpy(item, p, n);
		item[n] = '\0';
		eq = strrchr(item, '=');
		colon = eq != NULL ? strchr(eq, ':') : NULL;
		if (eq != NULL && colon != NULL) {
			j = strncmp(eq + 1, "unknown", 7) == 0 ? -1 : strtod(eq + 1, &stop);
			if (j >= 0 && stop != colon)
				j = -1;
			joules_fmt(j, e, sizeof(e));
			off += (size_t)snprintf(buf + off, len - off, "%s%.*s %s %s",
			    off ? ", " : "", (int)(eq - item), item, e, colon + 1);
		} else
			off += (size_t)snprintf(buf + off, len - off, "%s%s", off ? ", " : "",
			    item);
		p = end != NULL ? end + 1 : NULL;
	}
}
