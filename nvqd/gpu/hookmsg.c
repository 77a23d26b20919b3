/*
 * hookmsg.c: the hook's hello and reports, checked and bounded (see
 * hookmsg.h).  Shared by nvqd (hooks.c) and the fuzzer.
 */
#include <stdio.h>
#include <string.h>

#include "hookmsg.h"

/* Whether f is an integer above 0; if not, -1 with "a NAME needs WHAT" in err. */
static int
hookmsg_positive(const struct proto_field *f, const char *name, const char *what, char *err,
    size_t errlen)
{
	if (f != NULL && f->kind == 'i' && f->i > 0)
		return 0;
	snprintf(err, errlen, "a %s needs %s", name, what);
	return -1;
}

/* Whether m is of type t; if not, -1 with "TYPE is not WHAT" in err. */
static int
hookmsg_is(const struct proto_msg *m, int t, const char *what, char *err, size_t errlen)
{
	if (m->type == t)
		return 0;
	snprintf(err, errlen, "%s is not %s", proto_type_name(m->type), what);
	return -1;
}

int
hookmsg_hello(const struct proto_msg *m, struct hookmsg_hello *h, char *err, size_t errlen)
{
	const struct proto_field *job = proto_get(m, "job"), *pid = proto_get(m, "pid");

	memset(h, 0, sizeof(*h));
	if (hookmsg_is(m, MSG_HOOK_HELLO, "a hello", err, errlen) == -1)
		return -1;
	if (hookmsg_positive(job, "hello", "a job id", err, errlen) == -1)
		return -1;
	if (pid != NULL && (pid->kind != 'i' || pid->i <= 0 || pid->i > INT32_MAX)) {
		snprintf(err, errlen, "a hello's pid must be a positive integer");
		return -1;
	}
	h->job = job->i;
	h->pid = pid != NULL ? pid->i : 0;
	/* an older hook says neither: it is revoked as before */
	h->cut = proto_int(m, "cut", 0) == 1 && proto_int(m, "version", 2) >= 3;
	h->lcbe = proto_int(m, "version", 2) >= 4;
	h->live = proto_int(m, "version", 2) >= 5;
	return 0;
}

int
hookmsg_cut(const struct proto_msg *m, struct hookmsg_cut *c, char *err, size_t errlen)
{
	const struct proto_field *seq = proto_get(m, "seq");
	int i;

	memset(c, 0, sizeof(*c));
	if (hookmsg_is(m, MSG_HOOK_CUT, "a cut report", err, errlen) == -1)
		return -1;
	if (hookmsg_positive(seq, "cut report", "its revoke's seq", err, errlen) == -1)
		return -1;
	c->seq = seq->i;
	c->progress = proto_int(m, "progress", 0) != 0;
	for (i = 0; i < m->nfields; i++) {
		const struct proto_field *f = &m->fields[i];

		if (strcmp(f->key, "n") != 0)
			continue;
		if (f->kind != 'i' || f->i < 0) {
			snprintf(err, errlen, "a cut report's count must be an integer, 0 or more");
			return -1;
		}
		if (c->n == HOOKMSG_MAX_COMMS) {
			snprintf(err, errlen, "a cut report of more than %d communicators",
			    HOOKMSG_MAX_COMMS);
			return -1;
		}
		c->count[c->n++] = f->i;
	}
	return 0;
}

int
hookmsg_report(const struct proto_msg *m, struct hookmsg_row *rows, int max, int64_t *shared,
    int64_t *staged, char *err, size_t errlen)
{
	struct hookmsg_row *r = NULL;
	int i, k, n = 0;

	*shared = *staged = 0;
	if (hookmsg_is(m, MSG_HOOK_REPORT, "a report", err, errlen) == -1)
		return -1;
	for (i = 0; i < m->nfields; i++) {
		const struct proto_field *f = &m->fields[i];
		int64_t *v;

		if (strcmp(f->key, "uuid") == 0) {
			if (f->kind != 's' || f->slen == 0) {
				snprintf(err, errlen, "a report's uuid must be a string");
				return -1;
			}
			for (k = 0; k < n; k++)
				if (strcmp(rows[k].uuid, f->s) == 0) {
					snprintf(err, errlen, "a report names GPU %.64s twice", f->s);
					return -1;
				}
			if (n == max) {
				snprintf(err, errlen, "a report of more than %d GPUs", max);
				return -1;
			}
			r = &rows[n++];
			r->uuid = f->s;
			r->used = r->peak = -1;
			continue;
		}
		if (strcmp(f->key, "shared") == 0 || strcmp(f->key, "staged") == 0) {
			if (r != NULL || f->kind != 'i' || f->i < 0) {
				snprintf(err, errlen, "a report's %s must be a byte count, 0 or "
				    "more, before its rows", f->key);
				return -1;
			}
			*(strcmp(f->key, "shared") == 0 ? shared : staged) = f->i;
			continue;
		}
		if (strcmp(f->key, "used") == 0)
			v = r != NULL ? &r->used : NULL;
		else if (strcmp(f->key, "peak") == 0)
			v = r != NULL ? &r->peak : NULL;
		else
			continue;	/* "id", the hook's device number; or a newer hook's */
		if (v == NULL) {
			snprintf(err, errlen, "a report's %s before any uuid", f->key);
			return -1;
		}
		if (f->kind != 'i' || f->i < 0) {
			snprintf(err, errlen, "a report's %s must be a byte count, 0 or more", f->key);
			return -1;
		}
		if (*v != -1) {
			snprintf(err, errlen, "a report's row has %s twice", f->key);
			return -1;
		}
		*v = f->i;
	}
	return n;
}

uint64_t
hookmsg_bound(uint64_t claim, uint64_t bound, int *over)
{
	if (claim <= bound)
		return claim;
	*over = 1;
	return bound;
}

uint64_t
hookmsg_add(uint64_t sum, uint64_t claim, uint64_t bound)
{
	if (sum >= bound || claim >= bound - sum)
		return bound;
	return sum + claim;
}
