/*
 * reap.h: reaping supervisors that outlive their job's record.
 *
 * A shim that tells nvqd its job's end over its socket (runner.h) still
 * cleans up (its cgroup, the job's memory account) and exits after.  Its
 * job is recorded and dropped meanwhile; the shim is left here, its pidfd
 * watched, and reaped once it exits.  Uses libuv.
 */
#ifndef NVQ_REAP_H
#define NVQ_REAP_H

#include <sys/types.h>
#include <uv.h>

/* Reaps pid once pidfd (which this takes over and closes) says it exited. */
void	reap_later(uv_loop_t *loop, pid_t pid, int pidfd);
/* The same for pid alone (a called-off standby): its pidfd opened here. */
void	reap_pid(uv_loop_t *loop, pid_t pid);
/* Stops watching (nvqd stops): what is left is reaped by whoever inherits it. */
void	reap_stop(void);

#endif
