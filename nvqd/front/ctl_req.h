/*
 * ctl_req.h: what the request rooms share (ctl_req.c), private to ctl*.c:
 * the error reply, the job a request names, a caller's login name, the
 * check of the request's table row against a job the handler found
 * itself, and the requests about jobs Slurm runs.  ctl.c's dispatcher and
 * the rooms (ctl_jobs.c, ctl_control.c, ctl_info.c) call these; they call
 * neither.  Functions return 0 or -1 with req->err set.
 */
#ifndef NVQ_CTL_REQ_H
#define NVQ_CTL_REQ_H

#include <stdint.h>
#include <sys/types.h>

#include "ctl.h"
#include "ctl_check.h"

/* Sets the error reply's sentence; returns -1, for `return ctl_req_error(...)`. */
int	ctl_req_error(struct ctl_req *, const char *, ...)
	    __attribute__((format(printf, 2, 3)));
/* The job a request is about: its "id", or the task the dispatcher gives it. */
int64_t	ctl_req_id(const struct ctl_req *);
/*
 * Whether the request's row (req->rule) lets its caller act on job j
 * (NULL: a row that names no job): 0, or -1 with the refusal set.
 */
int	ctl_req_may(struct ctl_req *, const struct ctl_owner *j);
/* The login name of uid; the last few are remembered. */
void	ctl_req_user(uid_t uid, char *buf, size_t len);
/* Forgets the names remembered (nvqd's SIGHUP). */
void	ctl_req_forget_names(void);
/*
 * [cluster] engine = slurm: nvq cancel, hold, release, suspend or resume
 * (verb) of a job Slurm runs (req->slurm, its caller checked): answered,
 * or -1 with the error set.
 */
int	ctl_req_slurm(struct ctl_req *, struct proto_buf *out, const char *verb);

#endif
