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
 * Locks and moves are gpuctl.c's to decide: gpuact.c has hooks.c tell the
 * processes what it decided (hooks_send_lock, hooks_move), signal them
 * through their pidfds (hooks_signal), and answer what gpuctl.c reads
 * (hooks_acked, hooks_cut_*, hooks_moving); hooks.c reports each fact to
 * GPU control through e->report: a process linked, went away, acknowledged
 * a lock, reported its NCCL counts for a cut, waits for one, is idle,
 * answered a move.  It calls none of gpuctl.c, gpuact.c and suspend.c.
 */
#ifndef NVQ_HOOKS_H
#define NVQ_HOOKS_H

#include <stddef.h>
#include <stdint.h>
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
/* The job is ending: its sessions no longer speak for it. */
void		 hooks_job_gone(struct engine *, struct job *);
/* Tells every process of j its lock: granted or not, as seq (gpuctl.c's LOCK). */
void		 hooks_send_lock(struct engine *, struct job *, int granted, int64_t seq);
/* Signals j's hooked processes (SIGSTOP, SIGCONT), through their pidfds. */
void		 hooks_signal(struct engine *, struct job *, int sig);
/* Whether every process of j acknowledged lock seq. */
int		 hooks_acked(struct engine *, const struct job *, int64_t seq);
/*
 * The cut (hook/cut.h) of revoke seq.  hooks_cut_ready: whether every
 * process of j that can stop at a cut has acknowledged seq or reported its
 * NCCL counts, and some that did not acknowledge launched collectives and
 * were not sent targets for seq yet.  hooks_cut_send: sends those the
 * targets, the largest count of each communicator (once per process and
 * revoke: a process that links again, or reports, after the others were
 * sent theirs gets them then).  hooks_cut_old: how many processes whose hook
 * cannot cut have not acknowledged seq.  hooks_cut_ranks: how many reported
 * NCCL counts for seq.  hooks_cut_why: which process did not reach the cut,
 * at which count of which target (or did not answer, or drain), into buf.
 */
int		 hooks_cut_ready(struct engine *, const struct job *, int64_t seq);
void		 hooks_cut_send(struct engine *, struct job *, int64_t seq);
int		 hooks_cut_old(struct engine *, const struct job *, int64_t seq);
int		 hooks_cut_ranks(struct engine *, const struct job *, int64_t seq);
void		 hooks_cut_why(struct engine *, const struct job *, int64_t seq, char *buf,
		    size_t len);
/*
 * Asks every process of j to move its memory out (1) or back (0), as move
 * seq; each answer is reported as GC_EV_MOVED.  Returns how many were asked.
 */
int		 hooks_move(struct engine *, struct job *, int64_t seq, int out);
/* Whether a process of j has not answered its move yet. */
int		 hooks_moving(struct engine *, const struct job *);
/*
 * The pids of the job's hooked processes, comma-separated; with starts, for
 * nvq-ckpt, those alive now, each PID@STARTTIME (see proc_start_time).
 */
void		 hooks_pids(struct engine *, const struct job *, int starts, char *, size_t);

#endif
