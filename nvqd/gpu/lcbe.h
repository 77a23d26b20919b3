/*
 * lcbe.h: nvqd's side of latency-critical (lc) and best-effort (be) jobs on
 * a shared GPU (issue 43): the page (common/lcbe_page.h) made once, handed
 * to each hook at hello, the lc processes' slots given and taken back, and
 * what hooks report of it (a be job's time yielding, an lc job's launch
 * latencies) summed per job.  hooks.c calls it; it calls nothing of hooks.c.
 */
#ifndef NVQ_NVQD_LCBE_H
#define NVQ_NVQD_LCBE_H

#include <stddef.h>
#include <stdint.h>

#include "engine.h"
#include "proto.h"
#include "server.h"

#define LCBE_MAX_FDS	16	/* GPUs of a job whose pages its processes get */


/*
 * A hello of a process of j (hook version 4 on): sends it the page with
 * its role, j's GPUs and the bound of a be wait, and to a be process with
 * live (hook version 5 on) the live page after them.  Returns the lc slot
 * it was given, -1 where none (a be process, or nothing could be sent: it
 * then neither yields nor is yielded to, and the log says why).
 */
int	lcbe_hello(struct engine *, struct server_conn *, struct job *, int live);
/* The slot's process is gone (its connection closed, or its job ended): its bits cleared. */
void	lcbe_release(struct engine *, int slot);
/*
 * A report's lc/be fields (lcbestat_parse): "yield_us" (the process's
 * total), then pairs "lb" (bucket) and "ln" (count since its last
 * report), into j's lc_yield_us and lc_hist.  *last is the
 * process's total as last reported; j's sums grow by what is new.
 * 0, or -1 with err set (a bad claim: the connection closes).
 */
int	lcbe_report(struct job *, const struct proto_msg *, uint64_t *last, char *err,
	    size_t errlen);
/*
 * A running job's figures so far, as its row has them once it ends:
 * "lc_p50_ns", "lc_p99_ns", "lc_p999_ns" (lc), "be_yield_us" (be).
 */
void	lcbe_put_live(const struct job *, struct proto_buf *out);
/*
 * GPU g's lc jobs among ids (its running jobs, "3,4", as engine_demanded
 * writes them) into lc ("" if none; len bytes); returns whether an lc
 * process there has work queued or running now (its bit is up).
 */
int	lcbe_gpu(struct engine *, int g, const char *ids, char *lc, size_t len);
/* Frees the page (nvqd's end). */
void	lcbe_free(struct engine *);

#endif
