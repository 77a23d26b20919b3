/*
 * rlimits.c: parsing and applying the jobs' resource limits (see rlimits.h).
 * A hard limit above what the shim may set (no CAP_SYS_RESOURCE, as in a
 * container) is lowered to the highest it may.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "rlimits.h"

static const struct {
	const char	*name;
	int		resource;
	int		size;		/* takes sizes such as 4G */
} rlimits_names[] = {
	{ "as", RLIMIT_AS, 1 },
	{ "core", RLIMIT_CORE, 1 },
	{ "cpu", RLIMIT_CPU, 0 },
	{ "data", RLIMIT_DATA, 1 },
	{ "fsize", RLIMIT_FSIZE, 1 },
	{ "memlock", RLIMIT_MEMLOCK, 1 },
	{ "nofile", RLIMIT_NOFILE, 0 },
	{ "nproc", RLIMIT_NPROC, 0 },
	{ "stack", RLIMIT_STACK, 1 },
};
#define RLIMITS_NNAMES (sizeof(rlimits_names) / sizeof(rlimits_names[0]))

/* One value: a whole number, with a K/M/G/T suffix where size, or "unlimited". */
static int
rlimits_value(const char *s, size_t len, int size, rlim_t *v)
{
	unsigned long long n, mul = 1;
	char buf[32], *end;

	if (len == 0 || len >= sizeof(buf))
		return -1;
	memcpy(buf, s, len);
	buf[len] = '\0';
	if (strcmp(buf, "unlimited") == 0) {
		*v = RLIM_INFINITY;
		return 0;
	}
	if (buf[0] < '0' || buf[0] > '9')
		return -1;
	errno = 0;
	n = strtoull(buf, &end, 10);
	if (errno != 0)
		return -1;
	if (size && *end != '\0' && end[1] == '\0') {
		const char *u = strchr("KMGT", *end);

		if (u == NULL)
			return -1;
		mul = 1ULL << (10 * (u - "KMGT" + 1));
		end++;
	}
	if (*end != '\0' || n > (unsigned long long)RLIM_INFINITY / mul - 1)
		return -1;
	*v = (rlim_t)(n * mul);
	return 0;
}

int
rlimits_parse(const char *text, struct rlimits_entry *out, char *err, size_t errlen)
{
	const char *p = text, *item, *eq, *colon, *end;
	size_t i;
	int n = 0, k;

	while (*p != '\0') {
		while (*p == ' ' || *p == ',')
			p++;
		if (*p == '\0')
			break;
		item = p;
		end = item + strcspn(item, ", ");
		p = end;
		if ((eq = memchr(item, '=', (size_t)(end - item))) == NULL) {
			snprintf(err, errlen, "\"%.*s\" is not NAME=VALUE", (int)(end - item), item);
			return -1;
		}
		for (i = 0; i < RLIMITS_NNAMES; i++)
			if (strlen(rlimits_names[i].name) == (size_t)(eq - item) &&
			    memcmp(rlimits_names[i].name, item, (size_t)(eq - item)) == 0)
				break;
		if (i == RLIMITS_NNAMES) {
			snprintf(err, errlen, "unknown limit \"%.*s\" (as, core, cpu, data, fsize, "
			    "memlock, nofile, nproc, stack)", (int)(eq - item), item);
			return -1;
		}
		if (n == RLIMITS_MAX) {
			snprintf(err, errlen, "more than %d limits", RLIMITS_MAX);
			return -1;
		}
		for (k = 0; k < n; k++)
			if (out[k].resource == rlimits_names[i].resource) {
				snprintf(err, errlen, "%s is set twice", rlimits_names[i].name);
				return -1;
			}
		out[n].resource = rlimits_names[i].resource;
		colon = memchr(eq + 1, ':', (size_t)(end - eq - 1));
		if (rlimits_value(eq + 1, (size_t)((colon ? colon : end) - eq - 1),
		    rlimits_names[i].size, &out[n].lim.rlim_cur) == -1 ||
		    rlimits_value(colon ? colon + 1 : eq + 1, (size_t)(end - (colon ? colon + 1 :
		    eq + 1)), rlimits_names[i].size, &out[n].lim.rlim_max) == -1) {
			snprintf(err, errlen, "%s: \"%.*s\" is not a value or SOFT:HARD (numbers%s, "
			    "or unlimited)", rlimits_names[i].name, (int)(end - eq - 1), eq + 1,
			    rlimits_names[i].size ? " or sizes such as 4G" : "");
			return -1;
		}
		if (out[n].lim.rlim_cur > out[n].lim.rlim_max) {
			snprintf(err, errlen, "%s: the soft limit is above the hard one",
			    rlimits_names[i].name);
			return -1;
		}
		n++;
	}
	return n;
}

int
rlimits_apply(const struct rlimits_entry *r, int n)
{
	struct rlimit cur, want;
	int i;

	for (i = 0; i < n; i++) {
		if (setrlimit(r[i].resource, &r[i].lim) == 0)
			continue;
		/* a hard limit above what this process may raise it to: as high as it may go */
		if (errno != EPERM || getrlimit(r[i].resource, &cur) == -1 ||
		    r[i].lim.rlim_max <= cur.rlim_max)
			return -1;
		want.rlim_max = cur.rlim_max;
		want.rlim_cur = r[i].lim.rlim_cur < cur.rlim_max ? r[i].lim.rlim_cur : cur.rlim_max;
		if (setrlimit(r[i].resource, &want) == -1)
			return -1;
	}
	return 0;
}

int
rlimits_lower(int resource, rlim_t max)
{
	struct rlimit cur;

	if (getrlimit(resource, &cur) == -1)
		return -1;
	if (cur.rlim_cur > max)	/* RLIM_INFINITY is the highest of all */
		cur.rlim_cur = max;
	if (cur.rlim_max > max)
		cur.rlim_max = max;
	return setrlimit(resource, &cur);
}
