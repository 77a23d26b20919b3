/*
 * store_int.h: what the files of the store share and nothing else sees
 * (as tmux's server-*.c share server.h): the struct behind store.h's
 * handle, its SQL fragments, and the calls every change is made of.
 * store.c opens the database and owns transactions, the reserve and
 * prepared statements; store_job.c changes a job's rows through its life;
 * store_query.c answers what the front ends read.
 */
#ifndef NVQ_STORE_INT_H
#define NVQ_STORE_INT_H

#include <limits.h>
#include <sqlite3.h>
#include <stdint.h>
#include <sys/types.h>

#include "store.h"

extern const char *const store_schema[];

#define STORE_CACHE	64	/* prepared statements kept, keyed by their SQL's address */
/*
 * Room kept on the database's file system for what must be recorded when
 * it is full (a job's end, a cancel): thousands of such commits.
 */
#define STORE_RESERVE	(4 << 20)
/*
 * What a submit sets of a job's row (the rest has its defaults), as jobs
 * and the private database's copies (store_jobs_insert) both have it.
 */
#define STORE_JOB_REST	"uid, gid, user, name, command, argv, cwd, gpus, mem_per_gpu, " \
	"priority, time_limit, after, stdout_path, stderr_path, submitted_at, groups, " \
	"requeue, preempt_signal, array_id, array_index, array_limit, held, gpus_allow, " \
	"gpus_deny, notify, mail_user, cpus, host_mem, mem_per_cpu, qos, lc, array_count, " \
	"array_min, array_max, array_step, warn_signal, warn_time, warn_batch, partition, account"
#define STORE_JOB_COLS	"id, " STORE_JOB_REST
#define STORE_JOB_ARGS	"?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, " \
	"?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?"

/* a dashboard token's random bytes (hex: twice as many characters) */
#define STORE_TOKEN_BYTES	24

/* columns of a query read through store_rows */
#define STORE_MAX_COLS		64

/* -m auto looks at this many of the last successful runs */
#define STORE_AUTO_RUNS		"5"
#define STORE_AUTO_JOBS		"1000"	/* of a name or command, the last: -m auto looks no further */

/*
 * A task of an array whose command is the array's keeps '' and x'' in
 * command and argv (schema/017_array_shared.sql): its first task's, read
 * here.  In a query of jobs, by its own name.
 */
#define STORE_COMMAND	"CASE WHEN jobs.array_id IS NOT NULL AND jobs.command = '' THEN " \
	"(SELECT a.command FROM jobs a WHERE a.id = jobs.array_id) ELSE jobs.command END"
#define STORE_ARGV	"CASE WHEN jobs.array_id IS NOT NULL AND length(jobs.argv) = 0 THEN " \
	"(SELECT a.argv FROM jobs a WHERE a.id = jobs.array_id) ELSE jobs.argv END"

/* freed pages of the private database given back once there are this many */
#define STORE_VACUUM_PAGES	64

struct store {
	sqlite3		*db;
	int		sync_full;
	int		depth;		/* of nested transactions */
	int		doomed;		/* an inner one failed */
	unsigned long	begins;		/* transactions begun, nested ones too */
	char		lasterr[128];	/* sqlite3_errmsg of the last failure */
	int		full;		/* the last failure was SQLITE_FULL */
	char		reserve[PATH_MAX + 16];	/* <database>.reserve */
	off_t		reserved;	/* the bytes it holds now */
	off_t		reserve_size;	/* what it holds when whole */
	int		vacuumed;	/* the private database shrank: checkpoint it */
	struct checkpoint *ckpt;	/* WAL checkpoints off the loop (checkpoint.h) */
	const char	*sql[STORE_CACHE];
	sqlite3_stmt	*stmt[STORE_CACHE];
};

/*
 * What one change of a job's row needs (each change reads the fields it
 * names), so that every change runs through store_tx.
 */
struct store_op {
	int64_t		id;
	const int64_t	*ids;		/* store_jobs_end: n of them */
	int		n;
	const struct store_end *e;
	const char	*state, *reason;
	double		now;
	int		held;
	const char	*sql;		/* store_switch_do */
	const struct store_switch *w;
};

typedef int (*store_op_fn)(struct store *, const struct store_op *);

int	store_begin(struct store *st);
int	store_commit(struct store *st);
int	store_done(struct store *st, sqlite3_stmt *s);
int	store_event(struct store *st, int64_t id, double now, const char *state, const char *reason);
int	store_exec(struct store *st, const char *sql);
sqlite3_stmt	*store_prepare(struct store *st, const char *sql);
void	store_release(struct store *st, sqlite3_stmt *s);
int	store_reserve_use(struct store *st);
void	store_rollback(struct store *st);
int	store_rows(struct store *st, sqlite3_stmt *s, store_row_cb cb, void *arg);
int	store_tx(struct store *st, store_op_fn fn, const struct store_op *op, int must);
void	store_warn(struct store *st, const char *what, const char *msg);
int	store_env_forget(struct store *st, int64_t id);
int	store_headroom(struct store *st, uint64_t need);
int	store_rows_of(struct store *st, const char *sql, int64_t id, store_row_cb cb, void *arg);

#endif
