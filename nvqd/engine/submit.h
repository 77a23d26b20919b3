/*
 * submit.h: the submits of one loop turn, stored in one pair of commits.
 *
 * A submit's reply carries its id, which it has only once it is on disk.
 * Each commit costs a flush (two per batch: the environments, then the
 * jobs, store.h), so when many clients submit at once, the requests read in
 * one turn of the loop wait for the end of that turn (a uv_check handle)
 * and are stored together; then each goes to the engine and gets its reply,
 * and an error, if the store fails, goes to each.  A client that hangs up
 * meanwhile is forgotten, not its job.  A submit is read in one place:
 * ctl_jobs.c hands the request over as it came, with who sent it
 * (submit_request), and this checks it, makes the job and queues it.
 * The checks that nvq restart, nvq modify and nvq drain share with it
 * are exported below.  Nothing here calls into ctl*.c.
 */
#ifndef NVQ_SUBMIT_H
#define NVQ_SUBMIT_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>
#include <uv.h>

#include "engine.h"
#include "proto.h"
#include "server.h"
#include "store.h"

#define SUBMIT_MAX_ARGS		4096
#define SUBMIT_MAX_PRIO		1000000	/* -p, either way (nvq modify's too) */
#define SUBMIT_MAX_NAME		128
#define SUBMIT_MAX_NOTIFY	4096	/* bytes of a --notify command */

/* Once, at start. */
void	submit_init(uv_loop_t *, struct engine *);

/* Who sends a submit (from the connection's credentials, never the message). */
struct submit_from {
	uint32_t	uid, gid;
	const gid_t	*groups;	/* NULL if unknown */
	int		ngroups;
	int		admin;		/* root, or of [security] admin_group */
	/* uid's login name into buf: asked only once the cheap checks pass (NSS may be slow) */
	void		(*user)(uid_t uid, char *buf, size_t len);
};

/*
 * A submit request m from conn: checked, made into its job (or an array's
 * tasks) and queued for conn's reply at the end of the turn; 0, or -1
 * with the refusal in err (errlen bytes) and nothing queued.
 */
int	submit_request(struct engine *, struct server_conn *conn, const struct submit_from *,
	    const struct proto_msg *m, char *err, size_t errlen);
/*
 * -p prio of a user who is not an admin, against [limits] max_priority
 * (submit and nvq modify): 0, or -1 with the refusal in err, which says
 * how a user orders their own jobs instead.
 */
int	submit_prio_over(struct engine *, int prio, char *err, size_t errlen);
/* Whether ngpus GPUs of mem each could ever fit here: 0, or -1 with why set. */
int	submit_could_fit(struct engine *, int ngpus, uint64_t mem, char *why, size_t len);
/* GPU spec (an index or a UUID, len bytes) as its index, or -1 with err set. */
int	submit_gpu_index(struct engine *, const char *spec, size_t len, char *err,
	    size_t errlen);
/* m's environment fields, NUL-separated in one buffer (the caller's to free), *lenp bytes. */
char	*submit_env(const struct proto_msg *m, int *lenp);
/*
 * m's environment against [limits] max_env: 0, or -1 with the refusal in
 * err, which names its size and its largest variable.
 */
int	submit_env_check(struct engine *, const struct proto_msg *m, char *err, size_t errlen);
/*
 * need bytes more for uid (user) against [limits] max_stored, with what
 * its active and queued jobs keep; what: "submit" or "restart".  Root is
 * exempt.  0, or -1 with the refusal in err.
 */
int	submit_stored_over(struct engine *, uint32_t uid, const char *user, uint64_t need,
	    const char *what, char *err, size_t errlen);
/*
 * The tasks of an array (--array, --stdin), all like the job given beside
 * it but for their index and, with --stdin, their command (argv[k] of
 * argv_len[k] bytes, shown as cmd[k]; NULL: the job's own).
 */
struct submit_array {
	int		n;
	const int64_t	*index;
	int		limit;		/* tasks at once; 0: any */
	const char *const *argv;
	const int	*argv_len;
	const char *const *cmd;
};

/*
 * Queues j (copied), or the tasks of arr (NULL: one job) made from it, for
 * conn's one reply (the id; for an array, its first task's, which is the
 * array's, and the count, and note if not NULL: a sentence for the user),
 * with its --after ids; 0, or -1 if out of memory (nothing queued).
 */
int	submit_queue(struct server_conn *conn, const struct store_job_new *j,
	    const int64_t *after, int nafter, const struct submit_array *arr,
	    const char *note);
/* How many of uid's submits wait for the end of the turn ([limits] max_pending). */
int	submit_queued(uint32_t uid);
/*
 * A restarted singleton's dependencies anew: what its stored text after
 * says, then afterany on uid's running and suspended jobs named name but
 * those in skip (sorted, nskip: itself and the restart's jobs after it),
 * into text (dep_format's).  Not pending ones: one of them may wait for
 * this job, and a cycle would never resolve.  0, or -1 (the database could not be
 * read, or too many).
 */
int	submit_singleton_again(struct engine *, uint32_t uid, const char *name,
	    const int64_t *skip, int nskip, const char *after, char *text, size_t len);
/* Whether a submit of uid named name waits in this turn's queue. */
int	submit_queued_named(uint32_t uid, const char *name);
/*
 * Stores this turn's queued submits now, as the turn's end would, and
 * answers them: a singleton then sees those of its name (submit.c).
 */
void	submit_flush_now(void);
/* The --class lc jobs of uid's among them ([class lc] max_jobs_per_user). */
int	submit_queued_lc(uint32_t uid);
/*
 * The bytes j (or arr's tasks made from it) will keep in nvqd's files
 * ([limits] max_stored): of their own, returned, and shared by arr's tasks,
 * into *shared (0 for one job).
 */
uint64_t submit_bytes(const struct store_job_new *j, const struct submit_array *arr,
	    uint64_t *shared);
/* What uid's submits waiting for the end of the turn will keep, likewise. */
uint64_t submit_queued_bytes(uint32_t uid);
/* conn closed: its job is still stored, with no one to tell. */
void	submit_forget(struct server_conn *conn);
/* Stores what waits, then closes the handle (nvqd is stopping). */
void	submit_stop(void);

#endif
