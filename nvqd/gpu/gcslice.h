/*
 * gcslice.h: who holds each timeslice GPU (gpuctl_all.ts_holder), the part
 * of gpuctl.c's table that its lock pass consults: a free GPU goes to the
 * job that has waited longest for it; its holder yields at the end of its
 * quantum, or when idle, if another job waits; a job whose lock is
 * released or stopped gives its GPUs back.  Pure, like gpuctl.c: plain
 * structs in, the table (env->all) and the jobs' gc written, actions out.
 */
#ifndef NVQ_GCSLICE_H
#define NVQ_GCSLICE_H

#include "gpuctl.h"

/* Whether j should hold its lock now: running, no switch, not held, not
 * yielding, and holding every timeslice GPU it runs on. */
int		 gcslice_desired(const struct gc_env *, const struct gc_job *);
/* The pass's job of id among jobs[0..n); NULL: none. */
struct gc_job	*gcslice_find(struct gc_job *jobs, int n, int64_t id);
/* Frees the GPUs of holders that no longer run there, linked. */
void		 gcslice_tidy(struct gc_job *jobs, int n, const struct gc_env *);
/* Gives free GPUs to waiting jobs, longest waiting first. */
void		 gcslice_assign(struct gc_job *jobs, int n, const struct gc_env *, double now);
/* Holders whose quantum is over, or idle, yield if another job waits; the
 * next quantum's end into *next. */
void		 gcslice_yield(struct gc_job *jobs, int n, const struct gc_env *, double now,
		    struct gc_acts *, double *next);
/* j's lock is released or stopped: it holds none now. */
void		 gcslice_release(const struct gc_env *, struct gc_job *j, double now);
/* The job of id is gone: its GPUs are free. */
void		 gcslice_drop(const struct gc_env *, int64_t id);

#endif
