/*
 * fuzz_hook.c: libFuzzer harness for what nvqd takes from a job's hook
 * (nvqd/gpu/hookmsg.c): the bytes a process of a user's job sends as the body
 * of a hook frame.
 *
 * The input is 8 bytes of a bound (big-endian: what the job may hold on a
 * GPU), then a body.  The body is decoded as each message type of the
 * hook's link; a hello or a report that decodes is checked as nvqd checks
 * it, and what the checks accept must hold: a hello names a job, a report's
 * rows are distinct GPUs with byte counts of 0 or more, and its figures,
 * bounded and summed as hooks.c sums them, never exceed the bound; a cut
 * report has a seq and at most HOOKMSG_MAX_COMMS counts of 0 or more; a
 * report's lc/be claims (nvqd/gpu/lcbestat.c) are buckets in range with
 * counts of 0 or more, at most LCBESTAT_PAIRS of them.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "hookmsg.h"
#include "lcbestat.h"
#include "proto.h"

static const int fuzz_types[] = {
	MSG_HOOK_HELLO, MSG_HOOK_REPORT, MSG_HOOK_ACK, MSG_HOOK_WANT, MSG_HOOK_IDLE,
	MSG_HOOK_MOVED, MSG_HOOK_CUT
};

static void
fuzz_hello(const struct proto_msg *m)
{
	struct hookmsg_hello h;
	char err[128] = "";

	if (hookmsg_hello(m, &h, err, sizeof(err)) == -1) {
		if (err[0] == '\0')
			abort();	/* a refusal always says why */
		return;
	}
	if (h.job <= 0 || h.pid < 0 || h.pid > INT32_MAX)
		abort();
}

static void
fuzz_report(const struct proto_msg *m, uint64_t bound)
{
	struct hookmsg_row rows[HOOKMSG_MAX_ROWS];
	uint64_t sum = 0, v;
	int64_t shared = -1, staged = -1;
	char err[128] = "";
	int n, k, i, over;

	if ((n = hookmsg_report(m, rows, HOOKMSG_MAX_ROWS, &shared, &staged, err, sizeof(err))) == -1) {
		if (err[0] == '\0')
			abort();
		return;
	}
	if (shared < 0 || staged < 0)
		abort();	/* byte counts, 0 when not said */
	if (n < 0 || n > HOOKMSG_MAX_ROWS)
		abort();
	for (k = 0; k < n; k++) {
		/* a uuid is a string of the message, each GPU once */
		if (rows[k].uuid == NULL || rows[k].used < -1 || rows[k].peak < -1)
			abort();
		for (i = 0; i < k; i++)
			if (strcmp(rows[i].uuid, rows[k].uuid) == 0)
				abort();
		over = 0;
		v = rows[k].used >= 0 ? (uint64_t)rows[k].used : 0;
		v = hookmsg_bound(v, bound, &over);
		if (v > bound || (over && rows[k].used >= 0 && (uint64_t)rows[k].used <= bound) ||
		    (!over && rows[k].used >= 0 && v != (uint64_t)rows[k].used))
			abort();
		/* the job's sum, a process at a time, as hooks_sum adds them */
		sum = hookmsg_add(sum, v, bound);
		if (sum > bound)
			abort();
	}
}

static void
fuzz_lcbe(const struct proto_msg *m)
{
	struct lcbestat_claims c;
	uint64_t hist[LCBE_HIST];
	char err[128] = "";
	int k;

	if (lcbestat_parse(m, &c, err, sizeof(err)) == -1) {
		if (err[0] == '\0')
			abort();
		return;
	}
	if (c.n < 0 || c.n > LCBESTAT_PAIRS)
		abort();
	memset(hist, 0, sizeof(hist));
	for (k = 0; k < c.n; k++) {
		if (c.bucket[k] < 0 || c.bucket[k] >= LCBE_HIST)
			abort();
		hist[c.bucket[k]] += c.count[k];
	}
	/* a percentile is a bucket's edge, and they come in order */
	if (lcbestat_quantile(hist, 0.5) > lcbestat_quantile(hist, 0.99) ||
	    lcbestat_quantile(hist, 0.99) > lcbestat_quantile(hist, 0.999))
		abort();
}

static void
fuzz_cut(const struct proto_msg *m)
{
	struct hookmsg_cut c;
	char err[128] = "";
	int k;

	if (hookmsg_cut(m, &c, err, sizeof(err)) == -1) {
		if (err[0] == '\0')
			abort();
		return;
	}
	if (m->type != MSG_HOOK_CUT || c.seq <= 0 || c.n < 0 || c.n > HOOKMSG_MAX_COMMS)
		abort();
	for (k = 0; k < c.n; k++)
		if (c.count[k] < 0)
			abort();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct proto_msg m;
	uint64_t bound = 0;
	char err[128];
	size_t t;
	int i;

	if (size < 8)
		return 0;
	for (i = 0; i < 8; i++)
		bound = bound << 8 | data[i];
	data += 8;
	size -= 8;
	if (size > PROTO_MAX_BODY)
		return 0;
	for (t = 0; t < sizeof(fuzz_types) / sizeof(fuzz_types[0]); t++) {
		err[0] = '\0';
		if (proto_decode(fuzz_types[t], data, (uint32_t)size, &m, err, sizeof(err)) == -1) {
			if (err[0] == '\0')
				abort();
			continue;
		}
		fuzz_hello(&m);
		fuzz_report(&m, bound);
		fuzz_lcbe(&m);
		fuzz_cut(&m);
		proto_msg_free(&m);
	}
	return 0;
}
