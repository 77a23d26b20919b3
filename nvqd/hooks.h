/*
 * hooks.h: nvqd's side of the hook (hook/link.c): one session per CUDA
 * process of a running job, and the GPU locks.
 *
 * A process says hello with its job id; nvqd takes a pidfd of the peer of
 * the socket and accepts it only if that process runs as the job's user in
 * the job's session or cgroup.  The session lasts as long as that process:
 * when it ends, nvqd closes the connection, whoever holds it then, so a
 * pid that has gone to another process is never acted on.  Its reports
 * are claims: each figure counts for at most what the job may hold on that
 * GPU (hookmsg.h), and they add up, per GPU, into the job's use and peak;
 * when a job has several processes, each is told how much of the job's
 * budget the others leave it (MSG_HOOK_LIMIT).
 *
 * Locks: a job holds the locks of its GPUs unless it is held (nvq hold) or
 * one of its GPUs is a timeslice GPU that another job holds now.  Taking a
 * lock back sends granted=0 with a new seq; the job has it back in hand
 * when every process acknowledged that seq.  A job that does not answer
 * within [scheduler] revoke_timeout is stopped with SIGSTOP (SIGCONT when
 * it gets the lock again), sent through each process's pidfd.  The decisions are made in hooks_update(), after
 * every event that can change them, and by a timer for deadlines and
 * quanta.
 */
#ifndef NVQ_HOOKS_H
#define NVQ_HOOKS_H

#include <stddef.h>
#include <sys/types.h>

#include "engine.h"
#include "proto.h"
#include "server.h"

struct hook_sess;

/*
 * The first frame of a hook's connection (conn and p are the server's; the
 * process itself is taken by pidfd at hello): a hello, checked, makes the
 * process's session, which then answers the connection's frames until it
 * closes (server_handoff).  Returns SERVER_REPLY, or SERVER_ERROR_CLOSE
 * with a sentence in err.
 */
int		 hooks_accept(struct engine *, struct server_conn *conn,
		    const struct server_peer *p, const struct proto_msg *, char *err,
		    size_t errlen);
/*
 * The job is ending: its sessions no longer speak for it.  Returns 1 if
 * that can change another job's lock (it had processes or a timeslice GPU):
 * then call hooks_update().
 */
int		 hooks_job_gone(struct engine *, struct job *);
/* nvq hold (held 1) / nvq release (0) of a running job (ctl.c checks). */
void		 hooks_hold(struct engine *, struct job *, int held);
/* SIGCONT to a job's processes stopped for not acknowledging a revoke. */
void		 hooks_continue(struct engine *, struct job *);
/* Applies the lock decisions now (after a change of jobs or settings). */
void		 hooks_update(struct engine *);
/* What the job's lock is now: "granted", "held", "holding", "waiting", "stopped". */
const char	*hooks_lock_state(const struct job *);
/*
 * Asks every process of j to move its memory out (1) or back (0); their
 * answers add up in j->move_*, and suspend_moved() follows the last one.
 * Returns how many were asked.
 */
int		 hooks_move(struct engine *, struct job *, int out);
/* Whether a process of j has not answered its move yet. */
int		 hooks_moving(struct engine *, const struct job *);
/* Whether pid is one of the job's hooked processes. */
int		 hooks_linked(struct engine *, const struct job *, pid_t);
/*
 * The pids of the job's hooked processes, comma-separated; with starts, for
 * nvq-ckpt, those alive now, each PID@STARTTIME (see proc_start_time).
 */
void		 hooks_pids(struct engine *, const struct job *, int starts, char *, size_t);
/*
 * Whether pid is one of the job's processes now: in its supervisor's
 * session or its cgroup (not the supervisor itself).  Reads /proc: the
 * caller makes sure pid still names the process it means.
 */
int		 hooks_member(const struct job *, pid_t);
void		 hooks_init(struct engine *);
void		 hooks_shutdown(struct engine *);

#endif
