/*
 * dep.c: job dependencies in Slurm's syntax, parsed, packed and written
 * back (see dep.h).
 */
#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "dep.h"

#define DEP_ID_BITS	48
#define DEP_ID_MASK	((INT64_C(1) << DEP_ID_BITS) - 1)
#define DEP_WHOLE_BIT	(INT64_C(1) << 52)

static const char *const dep_names[] = {
	[DEP_AFTEROK] = "afterok",
	[DEP_AFTERANY] = "afterany",
	[DEP_AFTERNOTOK] = "afternotok",
	[DEP_AFTER] = "after",
};

const char *
dep_kind_name(int kind)
{
	return kind >= 0 && kind <= DEP_AFTER ? dep_names[kind] : "?";
}

int
dep_holds(int kind, const char *state)
{
	int ok = strcmp(state, "COMPLETED") == 0;

	if (strcmp(state, "PENDING") == 0)
		return DEP_WAIT;
	if (strcmp(state, "RUNNING") == 0 || strcmp(state, "SUSPENDED") == 0)
		return kind == DEP_AFTER ? DEP_MET : DEP_WAIT;
	switch (kind) {
	case DEP_AFTEROK:
		return ok ? DEP_MET : DEP_NEVER;
	case DEP_AFTERNOTOK:
		return ok ? DEP_NEVER : DEP_MET;
	default:	/* afterany, after: it ended */
		return DEP_MET;
	}
}

int
dep_array_holds(int kind, int64_t active, int64_t unfinished)
{
	if (active > 0)
		return DEP_WAIT;
	if (kind == DEP_AFTEROK && unfinished > 0)
		return DEP_NEVER;
	if (kind == DEP_AFTERNOTOK && unfinished == 0)
		return DEP_NEVER;
	return DEP_MET;
}

int64_t
dep_pack(int kind, int whole, int64_t id)
{
	return (id & DEP_ID_MASK) | ((int64_t)kind << DEP_ID_BITS) | (whole ? DEP_WHOLE_BIT : 0);
}

int64_t
dep_id(int64_t v)
{
	return v & DEP_ID_MASK;
}

int
dep_kind(int64_t v)
{
	return (int)((v >> DEP_ID_BITS) & 0xf);
}

int
dep_whole(int64_t v)
{
	return (v & DEP_WHOLE_BIT) != 0;
}

static int
dep_err(char *why, size_t len, const char *fmt, const char *s, size_t n)
{
	char item[64];

	snprintf(item, sizeof(item), "%.*s", (int)(n < 60 ? n : 60), s);
	snprintf(why, len, fmt, item);
	return -1;
}

/* One id of s[0..n): "12", "12_", "12_*" or "12_3" into *d. */
static int
dep_one(const char *s, size_t n, int kind, struct dep_item *d, char *why, size_t len)
{
	char buf[48], *us;
	long long idx;

	if (n == 0 || n >= sizeof(buf))
		return dep_err(why, len, "\"%s\" is not a job id (ID, A_ or A_I)", s, n);
	memcpy(buf, s, n);
	buf[n] = '\0';
	d->kind = kind;
	d->index = DEP_JOB;
	if ((us = strchr(buf, '_')) != NULL) {
		*us++ = '\0';
		if (*us == '\0' || strcmp(us, "*") == 0)
			d->index = DEP_WHOLE;
		else if (!isdigit((unsigned char)*us) ||
		    parse_int(us, 0, PARSE_MAX_INDEX, &idx) == -1)
			return dep_err(why, len, "\"%s\" is not a job id (ID, A_ or A_I with I "
			    "from 0 to 10000000)", s, n);
		else
			d->index = idx;
	}
	if (parse_id(buf, &d->id) == -1 || d->id > DEP_ID_MASK)
		return dep_err(why, len, "\"%s\" is not a job id (ID, A_ or A_I)", s, n);
	return 0;
}

int
dep_parse(const char *s, int bare, struct dep_list *l, char *why, size_t len)
{
	const char *p = s, *end, *c, *q;
	size_t n, k;
	int kind;

	if (strchr(s, '?') != NULL) {
		snprintf(why, len, "'?' (any one of them) is not supported: give ',' (all of "
		    "them)");
		return -1;
	}
	if (*s == '\0') {
		snprintf(why, len, "no dependency given");
		return -1;
	}
	for (;; p = end + 1) {
		end = p + strcspn(p, ",");
		n = (size_t)(end - p);
		if (n == 9 && strncmp(p, "singleton", 9) == 0)
			l->singleton = 1;
		else {
			kind = bare;
			q = p;
			if ((c = memchr(p, ':', n)) != NULL) {
				for (kind = 0; kind <= DEP_AFTER; kind++)
					if (strlen(dep_names[kind]) == (size_t)(c - p) &&
					    strncmp(p, dep_names[kind], (size_t)(c - p)) == 0)
						break;
				if (kind > DEP_AFTER)
					return dep_err(why, len, "\"%s\": not a dependency nvq knows "
					    "(afterok, afterany, afternotok, after, singleton)", p,
					    (size_t)(c - p));
				q = c + 1;
			} else if (n == 0 || p[0] < '0' || p[0] > '9')
				return dep_err(why, len, "\"%s\": not a dependency nvq knows "
				    "(afterok:ID, afterany:ID, afternotok:ID, after:ID, singleton)",
				    p, n);
			for (;;) {
				k = strcspn(q, ":,");
				if (memchr(q, '+', k) != NULL)
					return dep_err(why, len, "\"%s\": a delay (+MINUTES) is not "
					    "supported", q, k);
				if (l->n == PARSE_MAX_IDS) {
					snprintf(why, len, "at most %d jobs to depend on",
					    PARSE_MAX_IDS);
					return -1;
				}
				if (dep_one(q, k, kind, &l->d[l->n], why, len) == -1)
					return -1;
				l->n++;
				if (q[k] != ':')
					break;
				q += k + 1;
			}
		}
		if (*end == '\0')
			break;
	}
	return 0;
}

int
dep_format(const int64_t *v, int n, int singleton, char *buf, size_t len)
{
	size_t off = 0;
	int i, k, r, done[PARSE_MAX_IDS] = { 0 };

	if (len == 0)
		return -1;
	buf[0] = '\0';
	for (i = 0; i < n && i < PARSE_MAX_IDS; i++) {
		if (done[i])
			continue;
		r = snprintf(buf + off, len - off, "%s%s", off ? "," : "",
		    dep_kind_name(dep_kind(v[i])));
		if (r < 0 || (size_t)r >= len - off)
			return -1;
		off += (size_t)r;
		for (k = i; k < n && k < PARSE_MAX_IDS; k++) {
			if (done[k] || dep_kind(v[k]) != dep_kind(v[i]))
				continue;
			done[k] = 1;
			r = snprintf(buf + off, len - off, ":%lld%s", (long long)dep_id(v[k]),
			    dep_whole(v[k]) ? "_" : "");
			if (r < 0 || (size_t)r >= len - off)
				return -1;
			off += (size_t)r;
		}
	}
	if (singleton) {
		r = snprintf(buf + off, len - off, "%ssingleton", off ? "," : "");
		if (r < 0 || (size_t)r >= len - off)
			return -1;
		off += (size_t)r;
	}
	return (int)off;
}

int
dep_unformat(const char *text, int64_t *v, int *singleton)
{
	struct dep_list l;
	char why[160];
	int i;

	memset(&l, 0, sizeof(l));
	*singleton = 0;
	if (text == NULL || *text == '\0' || dep_parse(text, DEP_AFTEROK, &l, why, sizeof(why)) == -1)
		return 0;
	for (i = 0; i < l.n; i++)
		v[i] = dep_pack(l.d[i].kind, l.d[i].index == DEP_WHOLE, l.d[i].id);
	*singleton = l.singleton;
	return l.n;
}
