/*
 * cmdq.h: outside commands (Slurm's sbatch, squeue, scontrol, scancel) run
 * off nvqd's loop, a few at a time and the rest in order: each with its
 * arguments, the user it runs as (privileges dropped in the child before
 * exec: setgroups, setgid, setuid), its environment, what it reads on
 * stdin, and a time limit; then one callback with how it ended and what it
 * printed.  nvqd's own environment goes only to the commands it runs as
 * itself.
 */
#ifndef NVQ_CMDQ_H
#define NVQ_CMDQ_H

#include <stddef.h>
#include <stdint.h>
#include <uv.h>

struct cmdq;

struct cmd_spec {
	char *const	*argv;		/* argv[0]: an absolute path */
	char *const	*env;		/* NULL: nvqd's own (not with as_user) */
	int		as_user;	/* run as uid:gid, with no other groups */
	uint32_t	uid, gid;
	const char	*in;		/* stdin's bytes; NULL: /dev/null's */
	size_t		inlen;
	double		timeout;	/* seconds, then SIGKILL */
};

/*
 * status: its exit code, 128 + the signal that ended it, -1 when it could
 * not be started (err then says why), or CMDQ_STOPPED: nvqd is stopping,
 * free arg and touch nothing else.  out and err NUL-terminated, each cut
 * at CMDQ_MAX_OUT bytes.
 */
#define CMDQ_STOPPED	(-2)
typedef void (*cmdq_cb)(void *arg, int status, const char *out, const char *err);

#define CMDQ_MAX_OUT	(8 << 20)

struct cmdq	*cmdq_new(uv_loop_t *, int parallel);
/* Runs (or queues) a command; what spec points to is copied.  0, or -1 (no memory). */
int		 cmdq_run(struct cmdq *, const struct cmd_spec *, cmdq_cb, void *arg);
/* Commands waiting or running. */
int		 cmdq_busy(const struct cmdq *);
/*
 * nvqd is stopping: the queued commands are dropped and the running ones
 * killed, each callback told so (CMDQ_STOPPED).  The queue frees itself once their
 * handles have closed.
 */
void		 cmdq_stop(struct cmdq *);

#endif
