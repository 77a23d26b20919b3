/*
 * nvq.h: what the CLI's files share: the parsed arguments, the command
 * table's shape, the client call and the output helpers.
 */
#ifndef NVQ_NVQ_H
#define NVQ_NVQ_H

#include <stdint.h>
#include <stdio.h>

#include "parse.h"
#include "proto.h"

/* Every option of every command; each command accepts its own subset. */
struct nvq_args {
	const char	*cmd;		/* the command's name */
	const char	*socket;
	int		gpus;		/* -1: not given */
	const char	*mem, *prio, *name, *time, *after, *out, *err;
	const char	*dependency;	/* -d, --dependency LIST (Slurm's syntax) */
	int		parsable, all, json, follow, stderr_log, requeue;
	const char	*array;		/* --array SPEC */
	int		from_stdin;	/* --stdin: one task per line */
	int		expand;		/* -r: every task of an array on its line */
	const char	*user, *state, *since, *signal;
	int		hold;		/* --hold: queued held, until nvq release */
	int		attach;		/* nvq run: cmd_submit keeps the id in job_id, says nothing */
	int64_t		job_id;
	const char	*allow, *deny;	/* -w, -x: GPUs */
	const char	*notify;	/* --notify COMMAND, at the job's end */
	const char	*mail_user;	/* --mail-user ADDRESS */
	int		failed;		/* restart --failed */
	const char	*format;	/* --format COLUMNS of a listing */
	int		renew;		/* web-token --new */
	/* Slurm's names (sbatch.h): -D, --export, --nice, --mail-type, -n/--ntasks */
	const char	*chdir, *export_spec, *nice, *mail_type;
	int		ntasks;		/* tasks srun starts; 0: not given (1) */
	int		gpus_per_task;	/* the GPUs came from --gpus-per-task */
#define NVQ_MAX_TASKS	256	/* --ntasks: the copies srun starts */
	const char	*cpus;		/* -c, --cpus-per-task */
	const char	*host_mem, *mem_per_cpu;	/* --mem, --mem-per-cpu: host memory */
	const char	*qos;		/* --qos CLASS: the job's class ([qos NAME] in nvq.ini) */
	const char	*lcbe;		/* --class lc|be: who yields on a shared GPU */
	/*
	 * --signal in Slurm's words, [B:]SIG@TIME (a warning before the time
	 * limit): a B:, R: or @TIME on the command line, any --signal on a
	 * #SBATCH line (in_sbatch while one is read); else --signal is nvq's own
	 */
	const char	*warn;
	int		in_sbatch;
	const char	*partition, *account;	/* Slurm's: [cluster] engine = slurm only */
	int		argc;		/* positional arguments */
	char		**argv;
};

struct nvq_cmd {
	const char	*name;
	const char	*usage;
	const char	*opts;		/* getopt short options */
	const char	*longs;		/* long options accepted, space-separated */
	int		minargs, maxargs;	/* -1: no maximum */
	int		(*fn)(struct nvq_args *);
	const char	*help;
};

/* A row of a reply: fields [start, end) of the message. */
struct nvq_row {
	int	start, end;
};

/* Sends req to nvqd and reads the reply into rep; prints why and returns -1 on failure. */
int		client_call(const char *socket, struct proto_buf *req, struct proto_msg *rep);
/*
 * As client_call, then passes n (1 to 3) descriptors to nvqd once it said
 * it takes them, and reads its second reply into rep.
 */
int		client_pass_fds(const char *socket, struct proto_buf *req, const int *fds, int n,
		    struct proto_msg *rep);
/*
 * A connection that follows changes (nvq top, nvq wait): its fd, or -1
 * (said); yield (nvq wait, which can poll instead) asks nvqd to refuse it
 * rather than take the room nvq top needs.  client_next reads the next
 * frame nvqd pushes there (MSG_CHANGED): 0, or -1.
 */
int		client_watch(const char *socket, int yield);
int		client_next(int fd, struct proto_msg *m);
/* Splits a reply into rows, each starting at a field named key; returns the count. */
int		client_rows(const struct proto_msg *, const char *key, int from,
		    struct nvq_row **rows);
const char	*row_str(const struct proto_msg *, const struct nvq_row *, const char *key);
int64_t		row_int(const struct proto_msg *, const struct nvq_row *, const char *key,
		    int64_t dflt);
double		row_real(const struct proto_msg *, const struct nvq_row *, const char *key);

void		nvq_err(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
/* Set: nvq_err says nothing (nvq top's screen is its own). */
extern int	nvq_quiet;
/*
 * JSON (json.h): a row of a reply as an object (numbers as numbers; times,
 * and with numbers every numeric string, as numbers too), printed on one
 * line; fmt_json_print prints any JSON value and frees it.
 */
struct json;
struct json	*fmt_json_obj(const struct proto_msg *, const struct nvq_row *, int numbers);
void		fmt_json_print(FILE *, struct json *);
void		fmt_json_row(FILE *, const struct proto_msg *, const struct nvq_row *);
void		fmt_json_str(FILE *, const char *);
/*
 * s for a terminal (esc.h's esc_term): control characters, DEL, C1 and
 * format controls and bytes that are not UTF-8 become \e, \n, \t, \r, \xHH,
 * \u0080 to \u009f or \u202e, a backslash \\; past ASCII, every byte \xHH
 * where the locale is not UTF-8 (fmt_locale).  The text is borrowed, valid
 * for 8 more calls (enough for one printf); NULL gives "".
 */
const char	*fmt_safe(const char *s);
/*
 * Reads the charset of the locale (LC_ALL, LC_CTYPE, LANG) once, at start:
 * where it is not UTF-8, fmt_safe and JSON put out ASCII only.
 */
void		fmt_locale(void);
/* Whether the terminal's charset is not UTF-8 (fmt_locale). */
int		fmt_ascii(void);
/*
 * snprintf(buf, len, "%s", s) without printf: a listing copies some ten
 * strings a row, and musl's printf costs far more per call than glibc's.
 */
void		fmt_copy(char *buf, size_t len, const char *s);
/* s in at most cells characters, the last a \u2026 ("~" in ASCII) where it was cut. */
void		fmt_cut(char *buf, size_t len, const char *s, size_t cells);
/* Where text was cut: \u2026, or "~" where the charset has none. */
const char	*fmt_cut_mark(void);
void		fmt_time(double, char *, size_t);
/* A span for people: 45s, 12m05s, 3h07m, 2d04h (cut, not rounded). */
void		fmt_duration(int64_t secs, char *, size_t);
/* A state as given (any case, or Slurm's short code: PD, R, CD...): nvq's name, or NULL. */
const char	*fmt_state(const char *);
/*
 * A comma-separated list of states (any case, Slurm's codes) as nvqd's
 * names, each once ("r,PD,R" -> "RUNNING,PENDING"); -1 with the item not
 * understood in bad (or the whole list, if too long or empty).
 */
int		fmt_states(const char *list, char *out, size_t len, char *bad, size_t badlen);
/* Whether a job in this state has yet to end (PENDING, RUNNING, SUSPENDED). */
int		fmt_state_active(const char *);

int		cmd_submit(struct nvq_args *);
int		cmd_top(struct nvq_args *);
int		cmd_run(struct nvq_args *);
/* nvq wait's exit status for a job that ended in state with code, or killed by sig. */
int		wait_status(const char *state, int64_t code, int64_t sig);
int		cmd_modify(struct nvq_args *);
int		cmd_requeue(struct nvq_args *);
int		cmd_restart(struct nvq_args *);
int		cmd_stats(struct nvq_args *);
int		cmd_web_token(struct nvq_args *);
/* nvq top without ids: the live view (top.c) */
int		top_view(struct nvq_args *);
/* --since WHEN: a date or a span back from now, into seconds since the epoch; 0 or -1 (said). */
int		nvq_since(const char *since, int64_t *t);
int		cmd_drain(struct nvq_args *);
/* A submit's options, checked and parsed. */
struct submit_values {
	int		gpus;
	uint64_t	mem;
	int		mem_auto;	/* -m auto: nvqd chooses, from the job's history */
	int		cpus;		/* -c; 0: nvqd's default */
	uint64_t	host_mem;	/* --mem, bytes; 0: not given */
	uint64_t	mem_per_cpu;	/* --mem-per-cpu, bytes; 0: not given */
	int64_t		secs;
	long long	prio;
	int		sig;
	int		warn_sig, warn_time, warn_batch;	/* --signal [B:]SIG@TIME */
	/* --after's ids as afterok:ID:ID (dep.h's text), sent with -d's as "dep" */
	char		after[PARSE_MAX_IDS * 24 + 16];
};
/* 0, or 2 after saying what is wrong. */
int		submit_parse(const struct nvq_args *, struct submit_values *);
/* -c, --mem and --mem-per-cpu alone (Slurm's meanings), into v: 0, or 2 after saying why. */
int		submit_parse_host(const struct nvq_args *, struct submit_values *v);
int		cmd_list(struct nvq_args *);
int		cmd_show(struct nvq_args *);
int		cmd_history(struct nvq_args *);
int		cmd_cancel(struct nvq_args *);
int		cmd_hold(struct nvq_args *);
int		cmd_suspend(struct nvq_args *);
int		cmd_wait(struct nvq_args *);
int		cmd_log(struct nvq_args *);
int		cmd_gpus(struct nvq_args *);
/* A GPU row's jobs, with its lc jobs and whether one is busy (nvq gpus, nvq top). */
void		gpus_jobs_text(const struct proto_msg *, const struct nvq_row *, char *buf,
		    size_t len);
int		cmd_shares(struct nvq_args *);
/* After nvq list's table: each user's fair share, when it is on. */
void		shares_footer(struct nvq_args *);

/*
 * The #SBATCH lines, then the #NVQ lines, of the script at path
 * (script.c), each given to apply as an argument vector ("#SBATCH" or
 * "#NVQ" first) with where it is ("PATH, line N"): -1 if path is not a
 * script (a regular file starting with #!), 0 once every line was
 * applied, else what apply returned (it says why) or 1 or 2 (said).
 */
int		script_directives(const char *path,
		    int (*apply)(void *, const char *where, int, char **), void *arg);
/*
 * The command that runs the script path with argv[1..argc-1]: *out is NULL
 * if argv runs it as it is, else a new vector of *outc words (./path for a
 * bare name; through the interpreter of its #! line if it is not
 * executable).  0, or -1 with errno.
 */
int		script_command(const char *path, int argc, char **argv, char ***out, int *outc);

/* Fetches one job (MSG_SHOW); returns 0, or -1 after printing why. */
int		jobs_fetch(const char *socket, int64_t id, struct proto_msg *, struct nvq_row *);
/* task.c: ID, A_ and A_I */
#define TASK_JOB	0	/* a job: *id */
#define TASK_ARRAY	1	/* A_: every task of array *id */
#define TASK_FAILED	(-1)	/* said why: exit 1 */
#define TASK_BAD	(-2)	/* not a job id, said: exit 2 */
/* The job or array name names (asking nvqd for A_I's job): TASK_*. */
int		task_id(const char *socket, const char *name, int64_t *id);
/* nvq show A_: the array's tasks per state, then its first ones; 0 or 1. */
int		task_show_array(struct nvq_args *, int64_t array);
/*
 * nvq wait A_'s look: how many of array's tasks are active, and the state,
 * exit code and signal of its first that ended otherwise than COMPLETED
 * ("COMPLETED": none).  0, or -1.
 */
int		task_array_look(const char *socket, int64_t array, int64_t *active, char *failed,
		    size_t len, int64_t *code, int64_t *sig);

#endif
