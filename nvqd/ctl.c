/*
 * ctl.c: the request handlers and their table.  Argument shapes and
 * permissions are checked here, in one place per message; the engine and
 * the store do the work.  Each handler returns 0 or -1 with req->err set.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <pwd.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "adopt.h"
#include "ctl.h"
#include "hooks.h"
#include "log.h"
#include "parse.h"
#include "recover.h"
#include "gpuctl.h"
#include "slurm.h"
#include "statq.h"
#include "submit.h"
#include "watch.h"

#define CTL_MAX_ARGS	4096
#define CTL_MAX_PRIO	1000000
#define CTL_MAX_NAME	128
#define CTL_MAX_NOTIFY	4096	/* bytes of a --notify command */

static int ctl_names_epoch = 1;

struct ctl_entry {
	int	type;
	int	(*fn)(struct ctl_req *, struct proto_buf *);
	int	flags;		/* CTL_* */
};
/*
 * A change a user asks for that must not spend the reserve kept for ends
 * and cancels (store_room): refused while it is in use, as submits are.
 */
#define CTL_ROOM	0x1

static int ctl_error(struct ctl_req *, const char *, ...)
    __attribute__((format(printf, 2, 3)));

/* Sets the error reply's sentence; returns -1, for `return ctl_error(...)`. */
static int
ctl_error(struct ctl_req *r, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(r->err, sizeof(r->err), fmt, ap);
	va_end(ap);
	return -1;
}

static const char *ctl_states[] = {
	"PENDING", "RUNNING", "COMPLETED", "FAILED", "CANCELLED", "TIMEOUT", "NODE_FAIL",
	"SUSPENDED", NULL
};

static int
ctl_check_state(struct ctl_req *r, const char *s)
{
	int i;

	if (s == NULL)
		return 0;
	for (i = 0; ctl_states[i] != NULL; i++)
		if (strcmp(ctl_states[i], s) == 0)
			return 0;
	return ctl_error(r, "unknown state \"%s\" (PENDING, RUNNING, SUSPENDED, COMPLETED, "
	    "FAILED, CANCELLED, TIMEOUT or NODE_FAIL)", s);
}

/* Root, and members of [security] admin_group (by the caller's groups as it connected). */
static int
ctl_is_admin(const struct ctl_req *r)
{
	int i;

	if (r->uid == 0)
		return 1;
	if (!r->e->cfg.has_admin_gid)
		return 0;
	if (r->gid == r->e->cfg.admin_gid)
		return 1;
	for (i = 0; r->groups != NULL && i < r->ngroups; i++)
		if (r->groups[i] == r->e->cfg.admin_gid)
			return 1;
	return 0;
}

/*
 * Who may cancel, hold, release, suspend or resume a job: its owner and the
 * admins.  Else an error reply naming the owner and who may; returns 0 or -1.
 */
static int
ctl_may_act(struct ctl_req *r, const struct job *j, const char *verb)
{
	if (r->uid == j->uid || ctl_is_admin(r))
		return 0;
	if (r->e->cfg.has_admin_gid)
		return ctl_error(r, "job %lld belongs to %s; only its owner, root or members of "
		    "%s may %s it", (long long)j->id, j->user, r->e->cfg.admin_group, verb);
	return ctl_error(r, "job %lld belongs to %s; only its owner or root may %s it",
	    (long long)j->id, j->user, verb);
}

/* The login name of uid; the last few are remembered (nvqd forgets them on SIGHUP). */
static void
ctl_user_name(uid_t uid, char *buf, size_t len)
{
	static struct { uid_t uid; char name[64]; int used; } cache[16];
	static unsigned next;
	struct passwd *pw;
	unsigned i;

	for (i = 0; i < 16; i++)
		if (cache[i].used && cache[i].uid == uid && ctl_names_epoch == cache[i].used) {
			snprintf(buf, len, "%s", cache[i].name);
			return;
		}
	if ((pw = getpwuid(uid)) != NULL)
		snprintf(buf, len, "%s", pw->pw_name);
	else
		snprintf(buf, len, "%u", (unsigned)uid);
	i = next++ % 16;
	cache[i].uid = uid;
	cache[i].used = ctl_names_epoch;
	snprintf(cache[i].name, sizeof(cache[i].name), "%s", buf);
}

void
ctl_forget_names(void)
{
	ctl_names_epoch++;
}

/* Appends s to buf quoted for a shell where it needs to be. */
static void
ctl_quote(char *buf, size_t len, size_t *off, const char *s)
{
	const char *p;
	int plain = *s != '\0';

	for (p = s; *p && plain; p++)
		if (!((*p >= 'a' && *p <= 'z') || (*p >= 'A' && *p <= 'Z') || (*p >= '0' && *p <= '9') || strchr("-_./=:,+@%", *p)))
			plain = 0;
	if (*off > 0 && *off < len)
		buf[(*off)++] = ' ';
	if (plain) {
		for (p = s; *p && *off < len; p++)
			buf[(*off)++] = *p;
		return;
	}
	if (*off < len)
		buf[(*off)++] = '\'';
	for (p = s; *p && *off + 4 < len; p++) {
		if (*p == '\'') {
			memcpy(buf + *off, "'\\''", 4);
			*off += 4;
		} else
			buf[(*off)++] = *p;
	}
	if (*off < len)
		buf[(*off)++] = '\'';
}

/* Makes the user's spool folder (0700, the user's), for default output files. */
static int
ctl_user_dir(struct ctl_req *r)
{
	char dir[PATH_MAX];
	struct stat sb;

	engine_user_dir(r->e, r->uid, dir, sizeof(dir));
	if (stat(dir, &sb) == 0)
		return 0;
	if (mkdir(dir, 0700) == -1 && errno != EEXIST)
		return -1;
	if (r->e->is_root && chown(dir, r->uid, r->gid) == -1)
		return -1;
	return 0;
}

/* The environment fields, NUL-separated in one buffer (the caller's to free). */
static char *
ctl_env(const struct proto_msg *m, int *lenp)
{
	size_t len = 0;
	char *buf, *p;
	int i;

	for (i = 0; i < m->nfields; i++)
		if (strcmp(m->fields[i].key, "env") == 0 && m->fields[i].kind == 's')
			len += m->fields[i].slen + 1;
	if ((buf = malloc(len + 1)) == NULL)
		return NULL;
	for (i = 0, p = buf; i < m->nfields; i++)
		if (strcmp(m->fields[i].key, "env") == 0 && m->fields[i].kind == 's') {
			memcpy(p, m->fields[i].s, m->fields[i].slen + 1);
			p += m->fields[i].slen + 1;
		}
	*lenp = (int)len;
	return buf;
}

/*
 * The request's environment against [limits] max_env: 0, or -1 with the
 * refusal set, which names its size and its largest variable.
 */
static int
ctl_env_check(struct ctl_req *r)
{
	const struct proto_msg *m = r->msg;
	char total[16], max[16], bigsz[16];
	const char *big = NULL, *eq;
	size_t len = 0, biglen = 0;
	int i, namelen;

	for (i = 0; i < m->nfields; i++)
		if (strcmp(m->fields[i].key, "env") == 0 && m->fields[i].kind == 's') {
			len += m->fields[i].slen + 1;
			if (m->fields[i].slen >= biglen) {
				biglen = m->fields[i].slen;
				big = m->fields[i].s;
			}
		}
	if (r->e->cfg.max_env == 0 || len <= r->e->cfg.max_env)
		return 0;
	eq = big != NULL ? strchr(big, '=') : NULL;
	namelen = big == NULL ? 0 : eq != NULL ? (int)(eq - big) : (int)biglen;
	fmt_size(len, total, sizeof(total));
	fmt_size(r->e->cfg.max_env, max, sizeof(max));
	fmt_size(biglen, bigsz, sizeof(bigsz));
	return ctl_error(r, "the environment is %s (%zu bytes; the largest variable, %.*s%s, is "
	    "%s), over [limits] max_env (%s); nothing was queued", total, len,
	    namelen > 40 ? 40 : namelen, big != NULL ? big : "", namelen > 40 ? "..." : "",
	    bigsz, max);
}

/*
 * What the submit of j (or arr's tasks) would keep in nvqd's files, against
 * [limits] max_stored with what its user's active and queued jobs keep
 * (counts kept as jobs come and go: no scan).  Root is exempt, as from
 * max_pending.  0, or -1 with the refusal set.
 */
static int
ctl_stored_over(struct ctl_req *r, const char *user, uint64_t need, const char *what)
{
	uint64_t have, max = r->e->cfg.max_stored;
	char hs[16], ns[16], ms[16];

	if (r->uid == 0 || max == 0)
		return 0;
	have = engine_stored(r->e, r->uid) + submit_queued_bytes(r->uid);
	if (have + need <= max)
		return 0;
	fmt_size(have, hs, sizeof(hs));
	fmt_size(need, ns, sizeof(ns));
	fmt_size(max, ms, sizeof(ms));
	return ctl_error(r, "%s's jobs keep %s in nvqd's files and this %s would add %s, "
	    "over [limits] max_stored (%s); nothing was %s", user, hs, what, ns, ms,
	    strcmp(what, "submit") == 0 ? "queued" : "restarted");
}

static int
ctl_stored_check(struct ctl_req *r, const struct store_job_new *j,
    const struct submit_array *arr)
{
	uint64_t shared, own = submit_bytes(j, arr, &shared);

	return ctl_stored_over(r, j->user, own + shared, "submit");
}

/*
 * --stdin's lines, each a task run as /bin/sh -c LINE: their argument
 * vectors and lengths, and the commands shown (the lines, borrowed from m).
 */
static int
ctl_lines(const struct proto_msg *m, int n, char ***argv, int **len, const char ***cmd)
{
	static const char sh[] = "/bin/sh\0-c";
	int i, k = 0;

	if ((*argv = calloc((size_t)n, sizeof(**argv))) == NULL ||
	    (*len = malloc(sizeof(**len) * (size_t)n)) == NULL ||
	    (*cmd = malloc(sizeof(**cmd) * (size_t)n)) == NULL)
		return -1;
	for (i = 0; i < m->nfields && k < n; i++) {
		if (strcmp(m->fields[i].key, "line") != 0 || m->fields[i].kind != 's')
			continue;
		(*len)[k] = (int)(sizeof(sh) + m->fields[i].slen + 1);
		if (((*argv)[k] = malloc((size_t)(*len)[k])) == NULL)
			return -1;
		memcpy((*argv)[k], sh, sizeof(sh));
		memcpy((*argv)[k] + sizeof(sh), m->fields[i].s, m->fields[i].slen + 1);
		(*cmd)[k++] = m->fields[i].s;
	}
	return 0;
}

/* Whether ngpus GPUs of mem each could ever fit here (sched_could_fit). */
static int
ctl_could_fit(struct ctl_req *r, int ngpus, uint64_t mem, char *why, size_t len)
{
	struct sched_gpu g[SCHED_MAX_GPUS] = { { 0 } };
	int i;

	if (r->e->slurm != NULL)
		return 0;	/* Slurm's to say, at sbatch */
	for (i = 0; i < r->e->gpus.n; i++) {
		g[i].total = r->e->gpus.gpus[i].total;
		g[i].mode = config_mode(&r->e->cfg, i);
	}
	return sched_could_fit(g, r->e->gpus.n, &r->e->cfg.sched, ngpus, mem, why, len);
}

/* GPU spec (an index or a UUID) as its index, or -1 with the error set. */
static int
ctl_gpu_index(struct ctl_req *r, const char *spec, size_t len)
{
	const struct gpu_set *gs = &r->e->gpus;
	long long v;
	char buf[128];
	int g;

	snprintf(buf, sizeof(buf), "%.*s", (int)(len < sizeof(buf) ? len : sizeof(buf) - 1),
	    spec);
	if (parse_int(buf, 0, SCHED_MAX_GPUS - 1, &v) == 0) {
		if (v < gs->n)
			return (int)v;
		return ctl_error(r, "there is no GPU %lld (%d GPUs: 0 to %d)", v, gs->n, gs->n - 1);
	}
	for (g = 0; g < gs->n; g++)
		if (strcmp(gs->gpus[g].uuid, buf) == 0)
			return g;
	return ctl_error(r, "there is no GPU \"%s\" (an index or a UUID from nvq gpus)", buf);
}

/*
 * -w / -x: "0,2" or UUIDs into their UUIDs, comma-separated, in out (len
 * bytes) and their mask; 0, or -1 with the error set.
 */
static int
ctl_gpu_list(struct ctl_req *r, const char *opt, const char *list, char *out, size_t len,
    uint64_t *mask)
{
	const char *p = list, *end;
	size_t off = 0, n;
	int g;

	*mask = 0;
	out[0] = '\0';
	if (*list == '\0')
		return ctl_error(r, "%s: no GPUs", opt);
	while (p != NULL) {
		end = strchr(p, ',');
		n = end ? (size_t)(end - p) : strlen(p);
		if ((g = ctl_gpu_index(r, p, n)) == -1) {
			char why[sizeof(r->err)];

			snprintf(why, sizeof(why), "%s", r->err);
			return ctl_error(r, "%s: %s", opt, why);
		}
		if (!(*mask & (1ULL << g)))
			off += (size_t)snprintf(out + off, len - off, "%s%s", off ? "," : "",
			    r->e->gpus.gpus[g].uuid);
		*mask |= 1ULL << g;
		p = end ? end + 1 : NULL;
	}
	return 0;
}

/*
 * -m auto: the memory from the peak of the user's last successful runs of
 * this name (else of this command), [scheduler] auto_margin added; what it
 * chose in note.  0, or -1 with the error set.
 */
static int
ctl_auto_mem(struct ctl_req *r, const char *name, const char *cmd, int gpus, int64_t *mem,
    char *note, size_t len)
{
	uint64_t peak, want, mib = 1ULL << 20;
	int64_t from;
	char why[256], p[16], w[16];
	int k = store_auto_peak(r->e->store, r->uid, name, cmd, &peak, &from);

	if (k == -1)
		return ctl_error(r, "-m auto: the database could not be read (see nvqd's log); "
		    "nothing was queued");
	if (k == 0)
		return ctl_error(r, "-m auto: no job of yours named \"%s\", nor of this command, "
		    "has completed with its GPU memory known; give -m; nothing was queued", name);
	want = peak + (uint64_t)((double)peak * r->e->cfg.auto_margin);
	want = (want + mib - 1) / mib * mib;
	fmt_size(peak, p, sizeof(p));
	fmt_size(want, w, sizeof(w));
	if (ctl_could_fit(r, gpus, want, why, sizeof(why)) == -1)
		return ctl_error(r, "-m auto would take %s (the peak of job %lld, %s, + %.0f%%), and "
		    "this job could never run: %s", w, (long long)from, p,
		    100 * r->e->cfg.auto_margin, why);
	*mem = (int64_t)want;
	snprintf(note, len, "-m auto: %s, the peak of job %lld (%s) + %.0f%%", w,
	    (long long)from, p, 100 * r->e->cfg.auto_margin);
	return 0;
}

/*
 * [cluster] engine = slurm: what a submit may not ask of Slurm through nvq
 * (yet); 0, or -1 with the error set.
 */
static int
ctl_slurm_submit(struct ctl_req *r, int nafter, int nlines)
{
	static const char *const no[][2] = {
		{ "array", "--array" }, { "allow", "-w" }, { "deny", "-x" },
		{ "hold", "--hold" }, { "attach", "nvq run" }, { "requeue", "--requeue" },
		{ "notify", "--notify" }, { "mail_user", "--mail-user" }, { "signal", "--signal" },
	};
	size_t i;

	for (i = 0; i < sizeof(no) / sizeof(no[0]); i++)
		if (proto_str(r->msg, no[i][0]) != NULL || proto_int(r->msg, no[i][0], 0) != 0)
			break;
	if (i < sizeof(no) / sizeof(no[0]) || nafter > 0 || nlines > 0)
		return ctl_error(r, "%s does not work with [cluster] engine = slurm (give Slurm's "
		    "own options to sbatch); nothing was queued", i < sizeof(no) / sizeof(no[0]) ?
		    no[i][1] : nafter > 0 ? "--after" : "--stdin");
	if (proto_int(r->msg, "priority", 0) != 0)
		return ctl_error(r, "-p does not work with [cluster] engine = slurm: Slurm orders "
		    "its jobs itself; nothing was queued");
	return 0;
}

static int
ctl_submit(struct ctl_req *r, struct proto_buf *out)
{
	const struct proto_msg *m = r->msg;
	struct store_job_new j;
	int64_t after[PARSE_MAX_IDS];
	char user[64], name[CTL_MAX_NAME + 1], state[16], why[256], *argv = NULL, *cmd = NULL;
	char note[160] = "";
	char afterbuf[PARSE_MAX_IDS * 21], *env = NULL, *groups = NULL;
	char allow[SCHED_MAX_GPUS * 97], deny[SCHED_MAX_GPUS * 97];
	uint64_t amask = 0, dmask = 0;
	const char *s;
	size_t argvlen = 0, off = 0, cmdlen = 8192;
	int i, nargs = 0, nafter = 0, rc = -1, npending, nlines = 0;
	struct submit_array arr = { 0 }, *arrp = NULL;
	int64_t *index = NULL;
	char **targv = NULL;
	const char **tcmd = NULL;
	int *targv_len = NULL;
	int64_t gpus = proto_int(m, "gpus", 1), prio = proto_int(m, "priority", 0), sig;
	int64_t limit = proto_int(m, "time", 0), mem = proto_int(m, "mem", 0);

	(void)out;	/* answered once stored (submit.c) */
	memset(&j, 0, sizeof(j));
	afterbuf[0] = '\0';
	for (i = 0; i < m->nfields; i++) {
		if (strcmp(m->fields[i].key, "arg") == 0 && m->fields[i].kind == 's') {
			nargs++;
			argvlen += m->fields[i].slen + 1;
		} else if (strcmp(m->fields[i].key, "after") == 0 && m->fields[i].kind == 'i') {
			if (nafter == PARSE_MAX_IDS)
				return ctl_error(r, "at most %d --after jobs", PARSE_MAX_IDS);
			after[nafter++] = m->fields[i].i;
		} else if (strcmp(m->fields[i].key, "line") == 0 && m->fields[i].kind == 's') {
			nlines++;
		}
	}
	if (nargs == 0 && nlines == 0)
		return ctl_error(r, "no command to run");
	if (nargs > 0 && nlines > 0)
		return ctl_error(r, "a command and --stdin's lines: give one or the other");
	if (nlines > PARSE_MAX_TASKS)
		return ctl_error(r, "%d lines: at most %d tasks in one array", nlines,
		    PARSE_MAX_TASKS);
	if (nargs > CTL_MAX_ARGS)
		return ctl_error(r, "too many arguments (at most %d)", CTL_MAX_ARGS);
	if ((s = proto_str(m, "cwd")) == NULL || *s != '/')
		return ctl_error(r, "the working directory must be an absolute path");
	/* each task of an array keeps its own copy: no longer than a path can be */
	if (strlen(s) >= PATH_MAX)
		return ctl_error(r, "the working directory is longer than %d bytes; nothing was "
		    "queued", PATH_MAX - 1);
	if (gpus < 0 || gpus > SCHED_MAX_GPUS)
		return ctl_error(r, "GPUs must be from 0 to %d", SCHED_MAX_GPUS);
	/* the scheduler holds everyone to it, root too: such a job would wait for ever */
	if (r->e->cfg.sched.max_gpus > 0 && gpus > r->e->cfg.sched.max_gpus)
		return ctl_error(r, "this job could never run: it asks for %lld GPUs and "
		    "[limits] max_gpus is %d per user", (long long)gpus, r->e->cfg.sched.max_gpus);
	if (mem < 0)
		return ctl_error(r, "memory must not be negative");
	if (prio < -CTL_MAX_PRIO || prio > CTL_MAX_PRIO)
		return ctl_error(r, "priority must be from -%d to %d", CTL_MAX_PRIO,
		    CTL_MAX_PRIO);
	if (prio > r->e->cfg.max_priority && !ctl_is_admin(r))
		return ctl_error(r, "priority %lld is above [limits] max_priority (%d); only root%s%s "
		    "may go higher", (long long)prio, r->e->cfg.max_priority,
		    r->e->cfg.has_admin_gid ? " and members of " : "", r->e->cfg.admin_group);
	if (limit < 0)
		return ctl_error(r, "the time limit must not be negative");
	if (limit > PARSE_MAX_LIMIT)
		return ctl_error(r, "the time limit (%lld seconds) is over the longest, %lld days",
		    (long long)limit, PARSE_MAX_LIMIT / 86400);
	if (ctl_env_check(r) == -1)
		return -1;
	if (r->e->slurm != NULL && ctl_slurm_submit(r, nafter, nlines) == -1)
		return -1;
	if ((s = proto_str(m, "stdout")) != NULL && *s != '/')
		return ctl_error(r, "the output file \"%s\" is not an absolute path", s);
	if ((s = proto_str(m, "stderr")) != NULL && *s != '/')
		return ctl_error(r, "the error file \"%s\" is not an absolute path", s);
	if (proto_int(m, "mem_auto", 0) && gpus == 0)
		return ctl_error(r, "-m auto is memory per GPU; it needs -g 1 or more");
	if (gpus > 0 && !proto_int(m, "mem_auto", 0)) {
		if (ctl_could_fit(r, (int)gpus, (uint64_t)mem, why, sizeof(why)) == -1)
			return ctl_error(r, "this job could never run: %s", why);
	}
	for (i = 0; i < nafter; i++) {
		if (store_job_state(r->e->store, after[i], state, sizeof(state)) == -1)
			return ctl_error(r, "--after: no such job %lld", (long long)after[i]);
		off += (size_t)snprintf(afterbuf + off, sizeof(afterbuf) - off, "%s%lld",
		    i ? "," : "", (long long)after[i]);
	}
	if ((s = proto_str(m, "allow")) != NULL &&
	    ctl_gpu_list(r, "-w", s, allow, sizeof(allow), &amask) == -1)
		return -1;
	if ((s = proto_str(m, "deny")) != NULL &&
	    ctl_gpu_list(r, "-x", s, deny, sizeof(deny), &dmask) == -1)
		return -1;
	if (proto_str(m, "allow") != NULL || proto_str(m, "deny") != NULL) {
		uint64_t left = (amask ? amask : (r->e->gpus.n >= 64 ? ~0ULL :
		    (1ULL << r->e->gpus.n) - 1)) & ~dmask;

		if (__builtin_popcountll(left) < gpus)
			return ctl_error(r, "this job could never run: it asks for %lld GPU%s and "
			    "-w and -x leave %d", (long long)gpus, gpus == 1 ? "" : "s",
			    __builtin_popcountll(left));
	}
	sig = proto_int(m, "signal", 0);
	if (sig != 0 && (sig < 1 || sig > 64 || sig == SIGKILL || sig == SIGSTOP))
		return ctl_error(r, "--signal must be a signal from 1 to 64 other than KILL and "
		    "STOP; nothing was queued");
	if ((s = proto_str(m, "notify")) != NULL && (*s == '\0' || strlen(s) > CTL_MAX_NOTIFY))
		return ctl_error(r, "--notify: a command of 1 to %d bytes; nothing was queued",
		    CTL_MAX_NOTIFY);
	if ((s = proto_str(m, "mail_user")) != NULL) {
		if (!notify_mail_ok(s))
			return ctl_error(r, "--mail-user: \"%s\" is not a plain mail address "
			    "(user@host); nothing was queued", s);
		if (access(r->e->cfg.sendmail, X_OK) == -1)
			return ctl_error(r, "--mail-user: this server has no %s to mail with "
			    "([daemon] sendmail); nothing was queued", r->e->cfg.sendmail);
	}
	if ((s = proto_str(m, "name")) != NULL && *s != '\0') {
		if (strlen(s) > CTL_MAX_NAME)
			return ctl_error(r, "the name is longer than %d characters", CTL_MAX_NAME);
		for (i = 0; s[i]; i++)
			if ((unsigned char)s[i] < 0x20 || s[i] == 0x7f)
				return ctl_error(r, "the name has control characters");
		snprintf(name, sizeof(name), "%s", s);
	} else if (nargs == 0)
		snprintf(name, sizeof(name), "stdin");	/* --stdin: commands of their own */
	else {
		const char *a = proto_str(m, "arg"), *base = strrchr(a, '/');
		snprintf(name, sizeof(name), "%s", base ? base + 1 : a);
	}
	if ((s = proto_str(m, "array")) != NULL || nlines > 0) {
		if ((index = malloc(sizeof(*index) * (size_t)(nlines > 0 ? nlines :
		    PARSE_MAX_TASKS))) == NULL) {
			snprintf(r->err, sizeof(r->err), "out of memory");
			goto out;
		}
		if (s != NULL && parse_array(s, index, PARSE_MAX_TASKS, &arr.n, &arr.limit, why,
		    sizeof(why)) == -1) {
			rc = ctl_error(r, "--array %s: %s", s, why);
			goto out;
		}
		if (nlines > 0 && arr.n > 0) {
			rc = ctl_error(r, "--stdin numbers its tasks from 0: --array may only say "
			    "how many at once (%%N)");
			goto out;
		}
		if (nlines == 0 && arr.n == 0) {
			rc = ctl_error(r, "--array %s: no indexes", s);
			goto out;
		}
		if (nlines > 0)
			for (arr.n = 0; arr.n < nlines; arr.n++)
				index[arr.n] = arr.n;
		arr.index = index;
		arrp = &arr;
	}
	ctl_user_name(r->uid, user, sizeof(user));
	/* root is exempt: whoever cleans up after a flood must still be able to queue */
	if (r->uid != 0 && r->e->cfg.max_pending > 0 && (npending = engine_pending(r->e, r->uid) +
	    submit_queued(r->uid)) + (arrp ? arr.n - 1 : 0) >= r->e->cfg.max_pending) {
		rc = ctl_error(r, "%s has %d pending jobs%s: [limits] max_pending is %lld; "
		    "nothing was queued", user, npending, arrp ? " and asks for more" : "",
		    r->e->cfg.max_pending);
		goto out;
	}
	if (nlines > 0 && ctl_lines(m, nlines, &targv, &targv_len, &tcmd) == -1) {
		snprintf(r->err, sizeof(r->err), "out of memory");
		goto out;
	}
	if (nlines > 0) {
		arr.argv = (const char *const *)targv;
		arr.argv_len = targv_len;
		arr.cmd = tcmd;
	}

	if (ctl_user_dir(r) == -1) {
		log_warn("%s/%u", r->e->cfg.spool, (unsigned)r->uid);
		snprintf(r->err, sizeof(r->err), "cannot make your folder in the spool (see "
		    "nvqd's log); nothing was queued");
		goto out;
	}
	if ((argv = malloc(argvlen + 1)) == NULL || (cmd = malloc(cmdlen + 1)) == NULL ||
	    (j.env = env = ctl_env(m, &j.env_len)) == NULL) {
		snprintf(r->err, sizeof(r->err), "out of memory");
		goto out;
	}
	for (i = 0, argvlen = 0, off = 0; i < m->nfields; i++) {
		if (strcmp(m->fields[i].key, "arg") != 0 || m->fields[i].kind != 's')
			continue;
		memcpy(argv + argvlen, m->fields[i].s, m->fields[i].slen + 1);
		argvlen += m->fields[i].slen + 1;
		ctl_quote(cmd, cmdlen, &off, m->fields[i].s);
	}
	cmd[off] = '\0';
	if (proto_int(m, "mem_auto", 0)) {
		if ((rc = ctl_auto_mem(r, name, cmd, (int)gpus, &mem, note, sizeof(note))) != 0)
			goto out;
		rc = -1;
	}
	j.uid = r->uid;
	j.gid = r->gid;
	j.user = user;
	j.name = name;
	j.command = cmd;
	j.cwd = proto_str(m, "cwd");
	j.argv = argv;
	j.argv_len = (int)argvlen;
	j.gpus = (int)gpus;
	j.mem = (uint64_t)mem;
	j.priority = (int)prio;
	j.time_limit = limit;
	j.after = nafter ? afterbuf : NULL;
	j.stdout_path = proto_str(m, "stdout");
	j.stderr_path = proto_str(m, "stderr");
	if (j.stdout_path != NULL && j.stderr_path == NULL)
		j.stderr_path = j.stdout_path;
	j.spool = r->e->cfg.spool;
	j.requeue = proto_int(m, "requeue", 0) != 0;
	j.preempt_signal = (int)sig;
	j.held = proto_int(m, "attach", 0) ? 2 : proto_int(m, "hold", 0) != 0;
	j.gpus_allow = amask ? allow : NULL;
	j.gpus_deny = dmask ? deny : NULL;
	j.notify = proto_str(m, "notify");
	j.mail_user = proto_str(m, "mail_user");
	j.now = engine_now();
	if (r->groups != NULL && (groups = malloc((size_t)r->ngroups * 12 + 1)) != NULL) {
		for (i = 0, off = 0, groups[0] = '\0'; i < r->ngroups; i++)
			off += (size_t)sprintf(groups + off, "%s%u", i ? "," : "",
			    (unsigned)r->groups[i]);
		j.groups = groups;
	}
	if (ctl_stored_check(r, &j, arrp) == -1)
		goto out;
	/* stored with the other submits of this loop turn, then answered (submit.c) */
	if (submit_queue(r->conn, &j, after, nafter, arrp, note[0] ? note : NULL) == -1) {
		snprintf(r->err, sizeof(r->err), "out of memory");
		goto out;
	}
	r->deferred = 1;
	rc = 0;
out:
	free(argv);
	free(cmd);
	free(env);
	free(groups);
	free(index);
	for (i = 0; targv != NULL && i < nlines; i++)
		free(targv[i]);
	free(targv);
	free(targv_len);
	free(tcmd);
	return rc;
}

/*
 * Listings come in pages: a reply ends after CTL_PAGE_ROWS rows or
 * CTL_PAGE_BYTES bytes, with "more" and "next" (the cursor: the last id);
 * the client asks again with "after" = next.  So a list of any length
 * works, every reply stays far below a frame's limit, and the loop serves
 * other clients between pages.  Rows come from the database in id order;
 * each page is read as it stands then.
 */
#define CTL_PAGE_ROWS	1000
#define CTL_PAGE_BYTES	(512u << 10)
/*
 * Rows a page examines at most (store_jobs_bound): a filter that matches
 * few of a million finished jobs costs the loop a page's worth per request,
 * over as many requests as it takes, not a scan of the history in one.
 */
#define CTL_PAGE_SCAN	20000

struct ctl_rows {
	struct ctl_req		*r;
	struct proto_buf	*out;
	int			count;
	int			paged;		/* stop at a page's end */
	int			full;		/* it did */
	int64_t			last;		/* the last row's id */
};

/* Copies a row into the reply; REAL columns go as "%.3f" strings. */
/* nvq show of an active job: its user's fair-share priority, and why. */
static void
ctl_fair_share(struct engine *e, const struct job *j, struct proto_buf *out)
{
	const struct fairshare *f = engine_usage(e);
	const struct fs_user *u = fs_find(f, j->uid);
	char buf[256];

	if (u == NULL || !u->active)
		return;
	snprintf(buf, sizeof(buf), "+%.1f priority: %s used %.0f%% of the GPU time of the %d "
	    "user%s with jobs in the queue (a share is %.0f%%): %.2f GPU-hours, decayed",
	    u->bonus, j->user, 100 * u->frac, f->nactive, f->nactive == 1 ? "" : "s",
	    100.0 / (f->nactive ? f->nactive : 1), u->usage / 3600);
	proto_put_str(out, "fair_share", buf);
}

static int
ctl_row_cb(void *arg, const struct store_col *c, int n)
{
	struct ctl_rows *rows = arg;
	struct job *j = NULL;
	char buf[64];
	int i;

	for (i = 0; i < n; i++) {
		switch (c[i].type) {
		case STORE_INT:
			proto_put_int(rows->out, c[i].name, c[i].i);
			break;
		case STORE_REAL:
			snprintf(buf, sizeof(buf), "%.3f", c[i].r);
			proto_put_str(rows->out, c[i].name, buf);
			break;
		case STORE_TEXT:
			proto_put_str(rows->out, c[i].name, c[i].s);
			break;
		}
		if (strcmp(c[i].name, "id") == 0) {
			j = engine_find(rows->r->e, c[i].i);
			rows->last = c[i].i;
		}
	}
	if (j == NULL && rows->r->e->slurm != NULL) {
		char why[256];

		if (slurm_wait(rows->r->e->slurm, rows->last, why, sizeof(why)) == 0)
			proto_put_str(rows->out, "wait", why);
	}
	if (j != NULL && (j->state == JOB_PENDING || (j->state == JOB_SUSPENDED && !j->gc.phase))) {
		char why[256];
		engine_reason(rows->r->e, j, why, sizeof(why));
		proto_put_str(rows->out, "wait", why);
	}
	if (j != NULL && j->ending[0] != '\0')
		proto_put_str(rows->out, "ending", j->ending);
	if (j != NULL && j->gc.phase != GC_NONE)
		proto_put_str(rows->out, "switch", j->gc.phase == GC_RESTORE ||
		    j->gc.phase == GC_MOVE_IN ? "resuming" : "suspending");
	if (j != NULL && j->gc.error[0] != '\0')
		proto_put_str(rows->out, "switch_error", j->gc.error);
	if (j != NULL && (j->state == JOB_RUNNING || j->state == JOB_SUSPENDED)) {
		char pids[256];

		hooks_pids(rows->r->e, j, 0, pids, sizeof(pids));
		if (pids[0] != '\0')
			proto_put_str(rows->out, "hook_pids", pids);
	}
	if (j != NULL && j->state == JOB_RUNNING) {
		proto_put_int(rows->out, "granted", (int64_t)j->granted);
		proto_put_str(rows->out, "lock", gpuctl_lock_state(j));
		if (j->gc.cut_error[0] != '\0')
			proto_put_str(rows->out, "lock_error", j->gc.cut_error);
		if (j->gpu_used != NULL && (!rows->r->e->gpus.is_virtual ||
		    engine_job_peak(rows->r->e, j) > 0)) {
			proto_put_int(rows->out, "gpu_used", (int64_t)engine_job_used(rows->r->e, j));
			proto_put_int(rows->out, "gpu_peak", (int64_t)engine_job_peak(rows->r->e, j));
		}
	}
	if (j != NULL && rows->r->e->cfg.fairshare && !rows->paged)
		ctl_fair_share(rows->r->e, j, rows->out);
	rows->count++;
	if (rows->paged && (rows->count >= CTL_PAGE_ROWS || rows->out->len >= CTL_PAGE_BYTES))
		rows->full = 1;
	return rows->out->failed || rows->full;
}

/* The daemon's clock, so that nvq computes elapsed times against it. */
static void
ctl_now(struct proto_buf *out)
{
	char buf[32];

	snprintf(buf, sizeof(buf), "%.3f", engine_now());
	proto_put_str(out, "now", buf);
}

/* A page of a listing: its rows, then "more" and "next" if it is full. */
static int
ctl_page(struct ctl_req *r, struct proto_buf *out, struct store_filter *f, const char *what)
{
	struct ctl_rows rows = { r, out, 0, 1, 0, 0 };

	f->after = proto_int(r->msg, "after", 0);
	if (f->after < 0)
		return ctl_error(r, "a page's cursor must be a job id");
	ctl_now(out);
	if (store_jobs_bound(r->e->store, f, CTL_PAGE_SCAN, &f->upto) == -1 ||
	    store_jobs(r->e->store, f, ctl_row_cb, &rows) == -1)
		return ctl_error(r, "the database could not be read (see nvqd's log)");
	if (out->failed)
		return ctl_error(r, "job %lld's row is too long for a reply of the %s",
		    (long long)rows.last, what);
	if (rows.full) {
		proto_put_int(out, "more", 1);
		proto_put_int(out, "next", rows.last);
	} else if (f->upto > 0) {
		/* CTL_PAGE_SCAN rows examined, fewer matched: the client asks on from there */
		proto_put_int(out, "more", 1);
		proto_put_int(out, "next", f->upto);
	}
	return 0;
}

static int
ctl_filter(struct ctl_req *r, struct store_filter *f)
{
	memset(f, 0, sizeof(*f));
	f->user = proto_str(r->msg, "user");
	f->state = proto_str(r->msg, "state");
	f->all = proto_int(r->msg, "all", 0) != 0;
	f->since = (double)proto_int(r->msg, "since", 0);
	return ctl_check_state(r, f->state);
}

static int
ctl_list(struct ctl_req *r, struct proto_buf *out)
{
	struct store_filter f;

	if (ctl_filter(r, &f) == -1)
		return -1;
	return ctl_page(r, out, &f, "list");
}

static int
ctl_history(struct ctl_req *r, struct proto_buf *out)
{
	struct store_filter f;

	if (ctl_filter(r, &f) == -1)
		return -1;
	f.finished = 1;
	f.all = 1;
	return ctl_page(r, out, &f, "history");
}

/*
 * nvq show: the -m a job's peak implies ([scheduler] auto_margin added), where
 * its runs' peak is known.  Not for a job that failed out of GPU memory: its
 * reason says what it needed, which its peak (what it was allowed) is not.
 */
static void
ctl_mem_advice(struct ctl_req *r, int64_t id, struct proto_buf *out)
{
	uint64_t peak, want, mib = 1ULL << 20;
	int64_t mem;
	int oom;
	char p[16], w[16], m[16], buf[160];

	if (store_job_peak(r->e->store, id, &peak, &mem, &oom) != 1 || oom)
		return;
	want = peak + (uint64_t)((double)peak * r->e->cfg.auto_margin);
	want = (want + mib - 1) / mib * mib;
	fmt_size(peak, p, sizeof(p));
	/* a size to type: whole MiB, not rounded down by fmt_size */
	if (want % (1ULL << 30) == 0)
		snprintf(w, sizeof(w), "%lluG", (unsigned long long)(want >> 30));
	else
		snprintf(w, sizeof(w), "%lluM", (unsigned long long)(want >> 20));
	if (mem > 0) {
		fmt_size((uint64_t)mem, m, sizeof(m));
		snprintf(buf, sizeof(buf), "-m %s: its peak %s + %.0f%% (it asked for %s)", w, p,
		    100 * r->e->cfg.auto_margin, m);
	} else
		snprintf(buf, sizeof(buf), "-m %s: its peak %s + %.0f%% (it took whole GPUs)", w,
		    p, 100 * r->e->cfg.auto_margin);
	proto_put_str(out, "mem_advice", buf);
}

static int
ctl_show(struct ctl_req *r, struct proto_buf *out)
{
	struct store_filter f;
	struct ctl_rows rows = { r, out, 0, 0, 0, 0 };
	int64_t id = proto_int(r->msg, "id", 0);

	memset(&f, 0, sizeof(f));
	f.id = id;
	ctl_now(out);
	if (id <= 0)
		return ctl_error(r, "no job id given");
	if (store_jobs(r->e->store, &f, ctl_row_cb, &rows) == -1)
		return ctl_error(r, "the database could not be read (see nvqd's log)");
	if (rows.count == 0)
		return ctl_error(r, "no such job %lld", (long long)id);
	ctl_mem_advice(r, id, out);
	if (store_runs(r->e->store, id, ctl_row_cb, &rows) == -1 ||
	    store_events(r->e->store, id, ctl_row_cb, &rows) == -1 ||
	    store_switches(r->e->store, id, ctl_row_cb, &rows) == -1)
		return ctl_error(r, "the database could not be read (see nvqd's log)");
	return 0;
}

/* The job a request is about: its "id", or the task ctl_array_each gives it. */
static int64_t
ctl_id(const struct ctl_req *r)
{
	return r->id != 0 ? r->id : proto_int(r->msg, "id", 0);
}

/* The active job a request names, if the caller may VERB it; else NULL, with the error set. */
static struct job *
ctl_job_to(struct ctl_req *r, const char *verb)
{
	int64_t id = ctl_id(r);
	struct job *j;
	char state[16];

	if ((j = engine_find(r->e, id)) == NULL) {
		if (r->e->slurm != NULL && slurm_has(r->e->slurm, id, NULL))
			ctl_error(r, "job %lld is Slurm's: nvq %s does not work on it with "
			    "[cluster] engine = slurm", (long long)id, verb);
		else if (store_job_state(r->e->store, id, state, sizeof(state)) == -1)
			ctl_error(r, "no such job %lld", (long long)id);
		else
			ctl_error(r, "job %lld has already ended (%s)", (long long)id, state);
		return NULL;
	}
	if (ctl_may_act(r, j, verb) == -1)
		return NULL;
	return j;
}

/*
 * [cluster] engine = slurm: nvq cancel, hold, release, suspend or resume
 * (verb) of a job Slurm runs.  1 if the request was about one (answered,
 * or the error set; *rc what to return), 0 if not.
 */
static int
ctl_slurm_job(struct ctl_req *r, struct proto_buf *out, const char *verb, int *rc)
{
	int64_t id = ctl_id(r);
	uint32_t uid;
	char by[64], err[320];
	int k;

	if (r->e->slurm == NULL || !slurm_has(r->e->slurm, id, &uid))
		return 0;
	*rc = -1;
	if (r->uid != uid && !ctl_is_admin(r)) {
		ctl_error(r, "job %lld belongs to another user; only its owner, root%s may %s it",
		    (long long)id, r->e->cfg.has_admin_gid ? " or members of [security] "
		    "admin_group" : "", verb);
		return 1;
	}
	ctl_user_name(r->uid, by, sizeof(by));
	if (strcmp(verb, "cancel") == 0)
		k = slurm_cancel(r->e->slurm, id, by, err, sizeof(err));
	else if (strcmp(verb, "hold") == 0 || strcmp(verb, "release") == 0)
		k = slurm_hold(r->e->slurm, id, strcmp(verb, "hold") == 0, by, err, sizeof(err));
	else {
		snprintf(err, sizeof(err), "job %lld runs under Slurm: nvq %s does not work on "
		    "Slurm's jobs (Slurm's own suspend leaves their GPU memory in place)",
		    (long long)id, verb);
		k = -1;
	}
	if (k == -1) {
		ctl_error(r, "%s", err);
		return 1;
	}
	proto_put_int(out, "id", id);
	if (strcmp(verb, "hold") == 0 || strcmp(verb, "release") == 0)
		proto_put_str(out, "state", "PENDING");	/* Slurm's hold is of pending jobs */
	*rc = 0;
	return 1;
}

/* A Slurm step this node follows (adopt.h) is Slurm's to stop: -1 with the error set. */
static int
ctl_slurm_step(struct ctl_req *r, const struct job *j, const char *verb)
{
	if (j->slurm_id == 0)
		return 0;
	return ctl_error(r, "job %lld is a step of Slurm job %lld on this node: nvqd does not "
	    "%s Slurm's steps (scancel %lld does)", (long long)j->id, (long long)j->slurm_id, verb,
	    (long long)j->slurm_id);
}

/*
 * nvq's SPANK plugin in slurmstepd, as root: the step becomes a running job
 * (adopt.h), the peer's pid its supervisor.
 */
static int
ctl_adopt(struct ctl_req *r, struct proto_buf *out)
{
	struct adopt_req a;
	char uuids[SCHED_MAX_GPUS * 97], status[PATH_MAX], user[64];
	int64_t id;

	if (r->uid != 0)
		return ctl_error(r, "only root (slurmstepd's SPANK plugin) may hand nvqd a Slurm "
		    "step");
	if (r->e->slurm != NULL)
		return ctl_error(r, "this nvqd is in front of Slurm ([cluster] engine = slurm); "
		    "the plugin's nvqd= must name a node's own nvqd");
	memset(&a, 0, sizeof(a));
	a.slurm_job = proto_int(r->msg, "slurm_job", 0);
	a.step = proto_str(r->msg, "step");
	a.uid = (uint32_t)proto_int(r->msg, "uid", -1);
	a.gid = (uint32_t)proto_int(r->msg, "gid", -1);
	a.gpus = proto_str(r->msg, "gpus");
	a.mem = (uint64_t)proto_int(r->msg, "mem", 0);
	if (proto_int(r->msg, "uid", -1) < 0 || proto_int(r->msg, "gid", -1) < 0 ||
	    proto_int(r->msg, "mem", 0) < 0)
		return ctl_error(r, "a step needs its uid, gid and memory");
	ctl_user_name(a.uid, user, sizeof(user));
	a.user = user;
	if (adopt_step(r->e, &a, r->pid, &id, uuids, sizeof(uuids), r->err, sizeof(r->err)) == -1)
		return -1;
	engine_status_path(r->e, id, status, sizeof(status));
	proto_put_int(out, "id", id);
	proto_put_str(out, "uuids", uuids);
	proto_put_str(out, "status", status);
	return 0;
}

static int
ctl_cancel(struct ctl_req *r, struct proto_buf *out)
{
	char by[64];
	struct job *j;
	int64_t id = ctl_id(r);
	int rc;

	/*
	 * pending_only: nvq cancel's first round over the jobs it names.  A job
	 * still pending is cancelled; anything else is answered "skipped", not
	 * refused, and comes again in the second round, which says what is
	 * wrong.  So none of the named jobs starts in between: a running one
	 * cancelled first could free its GPU for a pending one named after it.
	 */
	if (proto_int(r->msg, "pending_only", 0) != 0 &&
	    ((j = engine_find(r->e, id)) == NULL || j->state != JOB_PENDING ||
	    j->slurm_id != 0 || (r->uid != j->uid && !ctl_is_admin(r)) ||
	    (r->e->slurm != NULL && slurm_has(r->e->slurm, id, NULL)))) {
		proto_put_int(out, "skipped", 1);
		return 0;
	}
	if (ctl_slurm_job(r, out, "cancel", &rc))
		return rc;
	if ((j = ctl_job_to(r, "cancel")) == NULL || ctl_slurm_step(r, j, "cancel") == -1)
		return -1;
	ctl_user_name(r->uid, by, sizeof(by));
	if (engine_cancel(r->e, j, by) == -1)
		return ctl_error(r, "cannot record the cancel of job %lld (see nvqd's log)",
		    (long long)id);
	return 0;
}

/* nvq hold / nvq release: the job's GPU locks, taken back or given again. */
static int
ctl_hold(struct ctl_req *r, struct proto_buf *out)
{
	int held = r->msg->type == MSG_HOLD;
	struct gc_event ev = { .type = GC_EV_HOLD };
	const char *verb = held ? "hold" : "release";
	char by[64], why[128];
	struct job *j;
	int64_t id = ctl_id(r);
	int rc;

	if (ctl_slurm_job(r, out, verb, &rc))
		return rc;
	if ((j = ctl_job_to(r, verb)) == NULL)
		return -1;
	if (j->state == JOB_PENDING) {
		/* held while pending: it does not start until released */
		if (j->parked == held)
			return ctl_error(r, "job %lld is %s", (long long)id,
			    held ? "held already" : "not held");
		ctl_user_name(r->uid, by, sizeof(by));
		snprintf(why, sizeof(why), "%s by %s", held ? "held" : "released", by);
		if (engine_park(r->e, j, held, why) == -1)
			return ctl_error(r, "cannot record the %s of job %lld (see nvqd's log)",
			    verb, (long long)id);
		proto_put_int(out, "id", id);
		proto_put_str(out, "state", "PENDING");
		return 0;
	}
	if (j->state != JOB_RUNNING)
		return ctl_error(r, "job %lld is suspended; nvq resume %lld first", (long long)id,
		    (long long)id);
	if (j->gc.held == held)
		return ctl_error(r, "job %lld is %s", (long long)id,
		    held ? "held already" : "not held");
	ctl_user_name(r->uid, by, sizeof(by));
	snprintf(why, sizeof(why), "%s by %s", held ? "held" : "released", by);
	if (store_job_held(r->e->store, id, held, engine_now(), why) == -1)
		return ctl_error(r, "cannot record the %s of job %lld (see nvqd's log)", verb,
		    (long long)id);
	ev.job = id;
	ev.n = held;
	engine_gpu(r->e, &ev, NULL, 0);
	log_info("job %lld %s", (long long)id, why);
	proto_put_int(out, "id", id);
	proto_put_str(out, "lock", gpuctl_lock_state(j));
	return 0;
}

/* nvq suspend / nvq resume: the job's GPU memory out to host memory, and back. */
static int
ctl_suspend(struct ctl_req *r, struct proto_buf *out)
{
	int suspend = r->msg->type == MSG_SUSPEND;
	struct gc_event ev = { 0 };
	char by[64], err[896];
	struct job *j;
	int64_t id = ctl_id(r);
	int rc;

	if (ctl_slurm_job(r, out, suspend ? "suspend" : "resume", &rc))
		return rc;
	if ((j = ctl_job_to(r, suspend ? "suspend" : "resume")) == NULL)
		return -1;
	ctl_user_name(r->uid, by, sizeof(by));
	ev.type = suspend ? GC_EV_SUSPEND : GC_EV_RELEASE;
	ev.job = id;
	ev.n = GC_USER;
	snprintf(ev.by, sizeof(ev.by), "%s", by);
	if (engine_gpu(r->e, &ev, err, sizeof(err)) == -1)
		return ctl_error(r, "cannot %s job %lld: %s", suspend ? "suspend" : "resume",
		    (long long)id, err);
	proto_put_int(out, "id", id);
	return 0;
}

/*
 * A request about every active task of an array ("array": its id, nvq's
 * A_): a cancel, its pending tasks' ends in one commit; hold and release in
 * one transaction; suspend and resume task by task.  Tasks it does not
 * apply to (suspend of a pending one, release of one not held) are
 * skipped.  The reply: a row ("id", "state") per task done, "skipped" and
 * the first skip's "error"; an error if none was done.  A task of another
 * user's: the whole request is refused, as for a job of theirs.
 */
static int
ctl_array_each(struct ctl_req *r, struct proto_buf *out,
    int (*fn)(struct ctl_req *, struct proto_buf *))
{
	static const char *const names[] = { "PENDING", "RUNNING", "SUSPENDED" };
	int64_t array = proto_int(r->msg, "array", 0), *ids = NULL, *failed = NULL;
	struct proto_buf scratch = { 0 };
	struct job **js = NULL, *j;
	char first[768] = "", by[64], state[16];
	int i, n, k = 0, done = 0, skipped = 0, nf, rc = -1;
	int cancel = r->msg->type == MSG_CANCEL, hold = r->msg->type == MSG_HOLD ||
	    r->msg->type == MSG_RELEASE;

	if (array <= 0)
		return ctl_error(r, "an array is named by its first task's id");
	if (store_array_active(r->e->store, array, &ids, &n) == -1)
		return ctl_error(r, "the database could not be read (see nvqd's log)");
	if (n == 0) {
		if (store_job_state(r->e->store, array, state, sizeof(state)) == -1)
			return ctl_error(r, "no such array %lld", (long long)array);
		return ctl_error(r, "array %lld has no pending or running task", (long long)array);
	}
	if ((js = calloc((size_t)n, sizeof(*js))) == NULL ||
	    (failed = calloc((size_t)n, sizeof(*failed))) == NULL) {
		snprintf(r->err, sizeof(r->err), "out of memory");
		goto out;
	}
	for (i = 0; i < n; i++) {
		if ((j = engine_find(r->e, ids[i])) == NULL)
			continue;
		if (ctl_may_act(r, j, cancel ? "cancel" : "act on") == -1)
			goto out;
		js[k++] = j;
	}
	if (cancel) {
		/* ids[] again: a cancelled pending job is freed */
		for (i = 0; i < k; i++)
			ids[i] = js[i]->id;
		ctl_user_name(r->uid, by, sizeof(by));
		nf = engine_cancel_many(r->e, js, k, by, failed);
		for (i = 0; i < k; i++) {
			for (n = 0; n < nf && failed[n] != ids[i]; n++)
				;
			if (n == nf)
				proto_put_int(out, "id", ids[i]);
		}
		done = k - nf;
		skipped = nf;
		if (nf > 0)
			snprintf(first, sizeof(first), "cannot record the cancel of job %lld (see "
			    "nvqd's log)", (long long)failed[0]);
	} else {
		/* hold and release: a commit for them all (engine_park's nest in it) */
		if (hold && store_tx_begin(r->e->store) == -1) {
			ctl_error(r, "cannot record it (see nvqd's log)");
			goto out;
		}
		for (i = 0; i < k; i++) {
			r->id = js[i]->id;
			r->err[0] = '\0';
			proto_begin(&scratch, MSG_OK);
			if (fn(r, &scratch) == -1) {
				if (first[0] == '\0')
					snprintf(first, sizeof(first), "%s", r->err);
				skipped++;
				continue;
			}
			proto_put_int(out, "id", r->id);
			if ((j = engine_find(r->e, r->id)) != NULL && j->state <= JOB_SUSPENDED)
				proto_put_str(out, "state", names[j->state]);
			done++;
		}
		r->id = 0;
		if (hold && store_tx_commit(r->e->store) == -1)
			log_warnx("array %lld: the commit of its tasks' holds failed; they are "
			    "held until nvqd restarts", (long long)array);
	}
	if (done == 0) {
		ctl_error(r, "no task of array %lld was done: %s", (long long)array, first);
		goto out;
	}
	proto_put_int(out, "skipped", skipped);
	if (skipped > 0)
		proto_put_str(out, "error", first);
	rc = 0;
out:
	proto_buf_free(&scratch);
	free(ids);
	free(failed);
	free(js);
	return rc;
}

/* The pending job a request names, for verb; NULL with the error set. */
static struct job *
ctl_pending_to(struct ctl_req *r, const char *verb)
{
	struct job *j;

	if ((j = ctl_job_to(r, verb)) == NULL)
		return NULL;
	if (j->state != JOB_PENDING) {
		ctl_error(r, "job %lld is %s; only a pending job can be %s", (long long)j->id,
		    j->state == JOB_RUNNING ? "running" : "suspended",
		    strcmp(verb, "top") == 0 ? "moved to the top" : "modified");
		return NULL;
	}
	return j;
}

/* nvq top and nvq modify: the change committed and done, or the error. */
static int
ctl_change(struct ctl_req *r, struct proto_buf *out, struct job *j,
    const struct store_change *c, const char *why)
{
	if (engine_modify(r->e, j, c, why) == -1)
		return ctl_error(r, "cannot record the change of job %lld (see nvqd's log)",
		    (long long)j->id);
	proto_put_int(out, "id", j->id);
	return 0;
}

/*
 * nvq top: the job goes first among its owner's waiting jobs of its
 * priority.  Other users' jobs see it where they saw it: its aging counts
 * from its own submission, never from another job's (engine_top_at).
 */
static int
ctl_top(struct ctl_req *r, struct proto_buf *out)
{
	struct store_change c = { 0 };
	struct job *j;
	char by[64], why[128];

	if ((j = ctl_pending_to(r, "top")) == NULL)
		return -1;
	if ((c.top_at = engine_top_at(r->e, j)) == 0) {
		proto_put_int(out, "id", j->id);	/* first among them already */
		return 0;
	}
	ctl_user_name(r->uid, by, sizeof(by));
	snprintf(why, sizeof(why), "moved to the top of priority %d by %s", j->priority, by);
	return ctl_change(r, out, j, &c, why);
}

/* nvq modify ID [-p PRIORITY] [-m MEM] [-t TIME]: a pending job's demands. */
static int
ctl_modify(struct ctl_req *r, struct proto_buf *out)
{
	const struct proto_msg *m = r->msg;
	struct store_change c = { 0 };
	struct job *j;
	char by[64], why[256], a[24];
	size_t off;
	int i;

	if ((j = ctl_pending_to(r, "modify")) == NULL)
		return -1;
	for (i = 0; i < m->nfields; i++) {
		if (m->fields[i].kind != 'i')
			continue;
		if (strcmp(m->fields[i].key, "priority") == 0) {
			c.has_priority = 1;
			if (m->fields[i].i < -CTL_MAX_PRIO || m->fields[i].i > CTL_MAX_PRIO)
				return ctl_error(r, "priority must be from -%d to %d", CTL_MAX_PRIO,
				    CTL_MAX_PRIO);
			c.priority = (int)m->fields[i].i;
		} else if (strcmp(m->fields[i].key, "mem") == 0) {
			c.has_mem = 1;
			if (m->fields[i].i < 0)
				return ctl_error(r, "memory must not be negative");
			c.mem = (uint64_t)m->fields[i].i;
		} else if (strcmp(m->fields[i].key, "time") == 0) {
			c.has_time = 1;
			if (m->fields[i].i < 0 || m->fields[i].i > PARSE_MAX_LIMIT)
				return ctl_error(r, "the time limit must be from 0 to %lld days",
				    PARSE_MAX_LIMIT / 86400);
			c.time_limit = m->fields[i].i;
		}
	}
	if (!c.has_priority && !c.has_mem && !c.has_time)
		return ctl_error(r, "nothing to change: give -p, -m or -t");
	if (c.has_priority && c.priority > r->e->cfg.max_priority && c.priority > j->priority &&
	    !ctl_is_admin(r))
		return ctl_error(r, "priority %d is above [limits] max_priority (%d); only root%s%s "
		    "may go higher", c.priority, r->e->cfg.max_priority,
		    r->e->cfg.has_admin_gid ? " and members of " : "", r->e->cfg.admin_group);
	if (c.has_mem && j->ngpus == 0)
		return ctl_error(r, "job %lld uses no GPU: -m is memory per GPU", (long long)j->id);
	if (c.has_mem) {
		char fit[256];

		if (ctl_could_fit(r, j->ngpus, c.mem, fit, sizeof(fit)) == -1)
			return ctl_error(r, "job %lld could never run so: %s; it is unchanged",
			    (long long)j->id, fit);
	}
	ctl_user_name(r->uid, by, sizeof(by));
	off = (size_t)snprintf(why, sizeof(why), "modified by %s:", by);
	if (c.has_priority)
		off += (size_t)snprintf(why + off, sizeof(why) - off, " priority %d -> %d",
		    j->priority, c.priority);
	if (c.has_mem) {
		fmt_size(c.mem, a, sizeof(a));
		off += (size_t)snprintf(why + off, sizeof(why) - off, " mem %s",
		    c.mem ? a : "whole GPU");
	}
	if (c.has_time) {
		fmt_elapsed(c.time_limit, a, sizeof(a));
		snprintf(why + off, sizeof(why) - off, " time %s", c.time_limit ? a : "none");
	}
	return ctl_change(r, out, j, &c, why);
}

/* nvq requeue: a running (or suspended) job is stopped and queued again. */
static int
ctl_requeue(struct ctl_req *r, struct proto_buf *out)
{
	struct job *j;
	char by[64];

	if ((j = ctl_job_to(r, "requeue")) == NULL || ctl_slurm_step(r, j, "requeue") == -1)
		return -1;
	if (j->state == JOB_PENDING)
		return ctl_error(r, "job %lld is pending already", (long long)j->id);
	if (j->ending[0] != '\0')
		return ctl_error(r, "job %lld is ending already (%s)", (long long)j->id,
		    j->ending);
	ctl_user_name(r->uid, by, sizeof(by));
	if (engine_requeue_job(r->e, j, by) == -1)
		return ctl_error(r, "cannot record the requeue of job %lld (see nvqd's log)",
		    (long long)j->id);
	proto_put_int(out, "id", j->id);
	return 0;
}

static int
ctl_restart_add_cb(void *arg, const struct store_active_job *a)
{
	return recover_add(arg, a) == -1 ? 1 : 0;
}

/* What nvq restart checks of a job before it restarts it. */
struct ctl_restart_row {
	uint32_t	uid;
	int		gpus;
	uint64_t	mem;
	char		state[16];
	int		found;
	int		slurm;		/* it ran under Slurm */
	uint64_t	row;		/* store_active_job's stored_row */
};

static int
ctl_restart_row_cb(void *arg, const struct store_active_job *a)
{
	struct ctl_restart_row *x = arg;

	x->uid = a->uid;
	x->gpus = a->gpus;
	x->mem = a->mem_per_gpu;
	snprintf(x->state, sizeof(x->state), "%s", a->state ? a->state : "?");
	x->found = 1;
	x->slurm = a->slurm_id >= 0;
	x->row = a->stored_row;
	return 0;
}

/*
 * Whether finished job id may be restarted by the caller: 0, with the
 * bytes its row keeps added to *bytes, or -1 with the error set.
 */
static int
ctl_restart_check(struct ctl_req *r, int64_t id, uint64_t *bytes)
{
	struct ctl_restart_row x = { 0 };
	char why[256];

	if (store_active_one(r->e->store, id, ctl_restart_row_cb, &x) == -1)
		return ctl_error(r, "the database could not be read (see nvqd's log)");
	if (!x.found)
		return ctl_error(r, "no such job %lld", (long long)id);
	if (x.uid != r->uid)
		return ctl_error(r, "job %lld is not yours: only its owner may restart it (it runs "
		    "again with the environment of who restarts it)", (long long)id);
	if (strcmp(x.state, "PENDING") == 0 || strcmp(x.state, "RUNNING") == 0 ||
	    strcmp(x.state, "SUSPENDED") == 0)
		return ctl_error(r, "job %lld is %s: only a finished job can be restarted%s",
		    (long long)id, x.state, strcmp(x.state, "PENDING") == 0 ? "" :
		    " (nvq requeue stops a running one and queues it again)");
	if (x.slurm)
		return ctl_error(r, "job %lld ran under Slurm: submit it again", (long long)id);
	if (x.gpus > 0 && ctl_could_fit(r, x.gpus, x.mem, why, sizeof(why)) == -1)
		return ctl_error(r, "job %lld could never run now: %s", (long long)id, why);
	*bytes += x.row;
	return 0;
}

static int
ctl_id_cmp(const void *a, const void *b)
{
	int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;

	return x < y ? -1 : x > y;
}

/*
 * nvq restart ID... / --failed [--since]: finished jobs PENDING again, the
 * same jobs with a new run to come, with the caller's environment (a job's
 * own is deleted when it ends).  All or none.
 */
static int
ctl_restart(struct ctl_req *r, struct proto_buf *out)
{
	const struct proto_msg *m = r->msg;
	int64_t *ids = NULL, *p;
	char by[64], why[128], *env = NULL;
	uint64_t rows = 0;
	int i, n = 0, cap = 0, envn, npending, rc = -1;

	if (r->e->slurm != NULL)
		return ctl_error(r, "nvq restart does not work with [cluster] engine = slurm yet: "
		    "submit the job again");
	if (ctl_env_check(r) == -1)
		return -1;
	if (proto_int(m, "failed", 0)) {
		if (store_restartable(r->e->store, r->uid, (double)proto_int(m, "since", 0),
		    &ids, &n) == -1)
			return ctl_error(r, "the database could not be read (see nvqd's log)");
		if (n == 0)
			return ctl_error(r, "no job of yours ended FAILED, TIMEOUT or NODE_FAIL%s",
			    proto_int(m, "since", 0) ? " since then" : "");
	} else {
		for (i = 0; i < m->nfields; i++) {
			if (strcmp(m->fields[i].key, "id") != 0 || m->fields[i].kind != 'i')
				continue;
			if (n == cap) {
				cap = cap ? cap * 2 : 16;
				if ((p = realloc(ids, sizeof(*p) * (size_t)cap)) == NULL) {
					snprintf(r->err, sizeof(r->err), "out of memory");
					goto out;
				}
				ids = p;
			}
			ids[n++] = m->fields[i].i;
		}
		if (n == 0)
			return ctl_error(r, "no job id given");
	}
	/* an id given twice is one restart */
	qsort(ids, (size_t)n, sizeof(*ids), ctl_id_cmp);
	for (i = 1, cap = 1; i < n; i++)
		if (ids[i] != ids[cap - 1])
			ids[cap++] = ids[i];
	n = cap;
	for (i = 0; i < n; i++)
		if (ctl_restart_check(r, ids[i], &rows) == -1)
			goto out;
	if (r->uid != 0 && r->e->cfg.max_pending > 0 && (npending = engine_pending(r->e, r->uid) +
	    submit_queued(r->uid)) + n > r->e->cfg.max_pending) {
		ctl_error(r, "%d pending jobs and %d more would be over [limits] max_pending "
		    "(%lld); nothing was restarted", npending, n, r->e->cfg.max_pending);
		goto out;
	}
	if ((env = ctl_env(m, &envn)) == NULL) {
		snprintf(r->err, sizeof(r->err), "out of memory");
		goto out;
	}
	ctl_user_name(r->uid, by, sizeof(by));
	/* the environment is stored once for all n, beside their rows */
	if (ctl_stored_over(r, by, (uint64_t)envn + rows, "restart") == -1)
		goto out;
	snprintf(why, sizeof(why), "restarted by %s", by);
	if (store_jobs_restart(r->e->store, ids, n, env, envn, engine_now(), why) == -1) {
		ctl_error(r, "cannot record the restart (see nvqd's log); nothing was restarted");
		goto out;
	}
	for (i = 0; i < n; i++) {
		/* what the restart committed, as a restarted nvqd would load it */
		if (store_active_one(r->e->store, ids[i], ctl_restart_add_cb, r->e) == -1)
			log_warnx("job %lld: restarted, but not read back; it starts once "
			    "nvqd restarts", (long long)ids[i]);
		log_info("job %lld PENDING: %s", (long long)ids[i], why);
		proto_put_int(out, "id", ids[i]);
	}
	engine_kick(r->e);
	rc = 0;
out:
	free(ids);
	free(env);
	return rc;
}

/*
 * nvq run's descriptors in flight: at most this many attaches wait for
 * theirs, and a user's at most a 32nd of them, so that it takes 32
 * accounts, not two, to keep nvq run from everyone
 */
#define CTL_MAX_ATTACHED	512
#define CTL_MAX_ATTACHED_UID	(CTL_MAX_ATTACHED / 32)
/* and this long to get them after saying it takes them */
#define CTL_ATTACH_MS		5000

struct ctl_attach {
	struct engine	*e;
	int64_t		id;
	uid_t		uid;
	char		mask[4];	/* which of the job's 0, 1, 2 they are, in order */
};

/* whose they are: one uid per attach in flight, in no order */
static uid_t ctl_attached[CTL_MAX_ATTACHED];
static int ctl_nattached;

static int
ctl_attached_by(uid_t uid)
{
	int i, n = 0;

	for (i = 0; i < ctl_nattached; i++)
		n += ctl_attached[i] == uid;
	return n;
}

static void
ctl_attached_drop(uid_t uid)
{
	int i;

	for (i = 0; i < ctl_nattached; i++)
		if (ctl_attached[i] == uid) {
			ctl_attached[i] = ctl_attached[--ctl_nattached];
			return;
		}
}

/* The end of an attach: a reply, or an error, then the connection closes. */
static void
ctl_attach_end(struct server_conn *conn, const char *error)
{
	struct proto_buf b = { 0 };

	proto_begin(&b, error ? MSG_ERROR : MSG_OK);
	if (error != NULL)
		proto_put_str(&b, "error", error);
	else
		proto_put_int(&b, "attached", 1);
	server_reply_close(conn, &b);
}

static void
ctl_attach_fds_cb(void *arg, struct server_conn *conn, int *fds, int n)
{
	struct ctl_attach *a = arg;
	struct job *j = engine_find(a->e, a->id);
	int slots[3] = { -1, -1, -1 }, i;

	ctl_attached_drop(a->uid);
	if (n != (int)strlen(a->mask)) {
		for (i = 0; i < n; i++)
			close(fds[i]);
		ctl_attach_end(conn, n < 0 ? "no descriptors came in time, or not those announced" :
		    "not the descriptors announced");
	} else if (j == NULL || j->uid != a->uid || j->state != JOB_PENDING || !j->parked) {
		for (i = 0; i < n; i++)
			close(fds[i]);
		ctl_attach_end(conn, "the job is no longer waiting for nvq run");
	} else {
		for (i = 0; i < n; i++)
			slots[a->mask[i] - '0'] = fds[i];
		if (engine_attach(a->e, j, slots) == -1)
			ctl_attach_end(conn, "cannot record the job's release (see nvqd's log)");
		else
			ctl_attach_end(conn, NULL);
	}
	free(a);
}

/*
 * nvq run: its standard input (and its output where a terminal) become
 * the job's.  The job, submitted held for it ("attach"), is released once
 * the descriptors came, on this connection, after this reply.  Only the
 * job's owner passes them: they are the owner's own, given to the owner's
 * job, and nvqd never reads, writes or opens them.
 */
static int
ctl_attach(struct ctl_req *r, struct proto_buf *out)
{
	const char *mask = proto_str(r->msg, "fds");
	char by[64];
	struct ctl_attach *a;
	struct job *j;
	size_t i, n;

	if ((j = ctl_job_to(r, "attach to")) == NULL)
		return -1;
	if (j->uid != r->uid)
		return ctl_error(r, "job %lld is not yours", (long long)j->id);
	if (j->state != JOB_PENDING || !j->parked || j->stdio[0] >= 0 || j->stdio[1] >= 0 ||
	    j->stdio[2] >= 0)
		return ctl_error(r, "job %lld is not waiting for nvq run", (long long)j->id);
	n = mask != NULL ? strlen(mask) : 0;
	if (n < 1 || n > 3)
		return ctl_error(r, "\"fds\" says which of 0, 1, 2 come");
	for (i = 0; i < n; i++)
		if (mask[i] < '0' || mask[i] > '2' || memchr(mask, mask[i], i) != NULL)
			return ctl_error(r, "\"fds\" says which of 0, 1, 2 come, each once");
	if (ctl_attached_by(r->uid) >= CTL_MAX_ATTACHED_UID) {
		ctl_user_name(r->uid, by, sizeof(by));
		return ctl_error(r, "%s is passing %d terminals to nvqd already, the most a user "
		    "may; try again", by, CTL_MAX_ATTACHED_UID);
	}
	if (ctl_nattached >= CTL_MAX_ATTACHED)
		return ctl_error(r, "nvqd takes %d terminals at once; try again", CTL_MAX_ATTACHED);
	if ((a = calloc(1, sizeof(*a))) == NULL)
		return ctl_error(r, "out of memory");
	a->e = r->e;
	a->id = j->id;
	a->uid = r->uid;
	memcpy(a->mask, mask, n);
	if (server_take_fds(r->conn, (int)n, CTL_ATTACH_MS, ctl_attach_fds_cb, a) == -1) {
		free(a);
		return ctl_error(r, "this connection cannot take descriptors");
	}
	ctl_attached[ctl_nattached++] = r->uid;
	proto_put_int(out, "ready", 1);
	return 0;
}

/* nvq drain GPU [REASON] / nvq undrain GPU: administrators only. */
static int
ctl_drain(struct ctl_req *r, struct proto_buf *out)
{
	int drain = r->msg->type == MSG_DRAIN, g;
	const char *spec = proto_str(r->msg, "gpu"), *reason = proto_str(r->msg, "reason");
	char by[64];

	if (!ctl_is_admin(r))
		return ctl_error(r, "only root%s%s may %s a GPU", r->e->cfg.has_admin_gid ?
		    " and members of " : "", r->e->cfg.admin_group, drain ? "drain" : "undrain");
	if (spec == NULL)
		return ctl_error(r, "which GPU? (an index or a UUID)");
	if ((g = ctl_gpu_index(r, spec, strlen(spec))) == -1)
		return -1;
	if (!!(r->e->drained & (1ULL << g)) == drain)
		return ctl_error(r, "GPU %d is %s", g, drain ? "drained already" : "not drained");
	ctl_user_name(r->uid, by, sizeof(by));
	if (engine_drain(r->e, g, drain, by, reason) == -1)
		return ctl_error(r, "cannot record the %s of GPU %d (see nvqd's log)",
		    drain ? "drain" : "undrain", g);
	proto_put_int(out, "index", g);
	proto_put_str(out, "uuid", r->e->gpus.gpus[g].uuid);
	return 0;
}

static int
ctl_gpus(struct ctl_req *r, struct proto_buf *out)
{
	struct engine *e = r->e;
	char ids[1024];
	int i;

	proto_put_str(out, "source", e->gpus.source);
	for (i = 0; i < e->gpus.n; i++) {
		const struct gpu *g = &e->gpus.gpus[i];
		proto_put_int(out, "index", g->index);
		proto_put_str(out, "uuid", g->uuid);
		proto_put_str(out, "name", g->name);
		proto_put_str(out, "mode", config_mode(&e->cfg, i) == SCHED_SERIAL ? "serial" :
		    config_mode(&e->cfg, i) == SCHED_TIMESLICE ? "timeslice" : "auto");
		if (config_mode(&e->cfg, i) == SCHED_TIMESLICE)
			proto_put_int(out, "turn_ms", (int64_t)(gpuctl_turn(e, i) * 1000));
		proto_put_str(out, "compute", config_compute(&e->cfg, i) == COMPUTE_TIMESLICE ?
		    "timeslice" : "shared");
		proto_put_int(out, "total", (int64_t)g->total);
		proto_put_int(out, "budget", (int64_t)engine_budget(e, i));
		proto_put_int(out, "demanded", (int64_t)engine_demanded(e, i, ids, sizeof(ids)));
		proto_put_int(out, "outside", (int64_t)g->outside);
		proto_put_int(out, "queue_used", (int64_t)engine_queue_used(e, i));
		proto_put_int(out, "outside_procs", g->nprocs_outside);
		proto_put_int(out, "used", (int64_t)g->used);
		proto_put_str(out, "jobs", ids);
		proto_put_int(out, "drained", (int64_t)((e->drained >> i) & 1));
		if (config_compute(&e->cfg, i) == COMPUTE_TIMESLICE)
			proto_put_int(out, "lock_holder", gpuctl_holder(e, i));
	}
	return 0;
}

/* nvq shares: every user's recent GPU use, and the priority it earns them. */
static int
ctl_shares(struct ctl_req *r, struct proto_buf *out)
{
	const struct fairshare *f = engine_usage(r->e);
	char buf[32], name[64];
	int i;

	proto_put_int(out, "fairshare", r->e->cfg.fairshare);
	proto_put_int(out, "halflife", r->e->cfg.fs_halflife);
	snprintf(buf, sizeof(buf), "%g", r->e->cfg.fs_weight);
	proto_put_str(out, "weight", buf);
	proto_put_int(out, "active", f->nactive);
	for (i = 0; i < f->n; i++) {
		proto_put_int(out, "uid", f->u[i].uid);
		ctl_user_name(f->u[i].uid, name, sizeof(name));
		proto_put_str(out, "user", name);
		proto_put_int(out, "queued", f->u[i].active);
		snprintf(buf, sizeof(buf), "%.4f", f->u[i].usage / 3600);
		proto_put_str(out, "gpu_hours", buf);
		if (!f->u[i].active)
			continue;
		snprintf(buf, sizeof(buf), "%.4f", f->u[i].frac);
		proto_put_str(out, "use", buf);
		snprintf(buf, sizeof(buf), "%.4f", 1.0 / f->nactive);
		proto_put_str(out, "share", buf);
		snprintf(buf, sizeof(buf), "%.2f", r->e->cfg.fairshare ? f->u[i].bonus : 0);
		proto_put_str(out, "bonus", buf);
	}
	return 0;
}

/*
 * nvq stats [--since] [--user]: what the history says, summed up, read off
 * the loop (statq.h), so the reply comes later.
 */
static int
ctl_stats(struct ctl_req *r, struct proto_buf *out)
{
	(void)out;
	if (statq_add(r->conn, (uint32_t)r->uid, (double)proto_int(r->msg, "since", 0),
	    proto_str(r->msg, "user"), engine_now(), r->err, sizeof(r->err)) == -1)
		return -1;
	r->deferred = 1;
	return 0;
}

/* nvq top: this connection gets a frame after each change (watch.h). */
static int
ctl_watch(struct ctl_req *r, struct proto_buf *out)
{
	int yield = proto_int(r->msg, "yield", 0) != 0;

	if (watch_add(r->conn, (unsigned)r->uid, yield) == -1)
		return ctl_error(r, "nvqd has as many watchers as it takes (%d, %d per user%s)",
		    yield ? WATCH_YIELD_MAX : WATCH_MAX, yield ? WATCH_YIELD_MAX_UID : WATCH_MAX_UID,
		    yield ? ", of those that can do without" : "");
	proto_put_int(out, "watching", 1);
	return 0;
}

/* nvq web-token: the caller's link to the dashboard, with their token in it. */
static int
ctl_web_token(struct ctl_req *r, struct proto_buf *out)
{
	char token[64];

	if (r->e->cfg.web_listen[0] == '\0')
		return ctl_error(r, "the dashboard is off: [web] listen is empty");
	if (store_web_token(r->e->store, r->uid, proto_int(r->msg, "new", 0) != 0, token,
	    sizeof(token)) == -1)
		return ctl_error(r, "cannot make a token (see nvqd's log)");
	proto_put_str(out, "listen", r->e->cfg.web_listen);
	proto_put_str(out, "token", token);
	return 0;
}

static int
ctl_ping(struct ctl_req *r, struct proto_buf *out)
{
	proto_put_int(out, "version", PROTO_VERSION);
	proto_put_int(out, "uid", r->uid);
	proto_put_str(out, "database", r->e->cfg.database);
	return 0;
}

static const struct ctl_entry ctl_table[] = {
	{ MSG_SUBMIT, ctl_submit, 0 },
	{ MSG_LIST, ctl_list, 0 },
	{ MSG_SHOW, ctl_show, 0 },
	{ MSG_CANCEL, ctl_cancel, 0 },
	{ MSG_HISTORY, ctl_history, 0 },
	{ MSG_GPUS, ctl_gpus, 0 },
	{ MSG_PING, ctl_ping, 0 },
	{ MSG_HOLD, ctl_hold, CTL_ROOM },
	{ MSG_RELEASE, ctl_hold, CTL_ROOM },
	{ MSG_SUSPEND, ctl_suspend, 0 },
	{ MSG_RESUME, ctl_suspend, 0 },
	{ MSG_TOP, ctl_top, CTL_ROOM },
	{ MSG_MODIFY, ctl_modify, CTL_ROOM },
	{ MSG_REQUEUE, ctl_requeue, CTL_ROOM },
	{ MSG_RESTART, ctl_restart, 0 },
	{ MSG_ATTACH, ctl_attach, 0 },
	{ MSG_STATS, ctl_stats, 0 },
	{ MSG_WATCH, ctl_watch, 0 },
	{ MSG_WEB_TOKEN, ctl_web_token, 0 },
	{ MSG_DRAIN, ctl_drain, 0 },
	{ MSG_UNDRAIN, ctl_drain, 0 },
	{ MSG_SHARES, ctl_shares, 0 },
	{ MSG_ADOPT, ctl_adopt, 0 },
};

/* server.h's frame function for a new connection: a request, or a hook's hello. */
static int
ctl_frame(void *arg, struct server_conn *conn, const struct server_peer *p,
    const struct proto_msg *m, struct proto_buf *out, char *err, size_t errlen)
{
	struct engine *e = arg;
	struct ctl_req req;

	if (proto_is_hook(m->type))
		return hooks_accept(e, conn, p, m, err, errlen);
	memset(&req, 0, sizeof(req));
	req.e = e;
	req.msg = m;
	req.uid = p->uid;
	req.gid = p->gid;
	req.pid = p->pid;
	req.groups = p->groups;
	req.ngroups = p->ngroups;
	req.conn = conn;
	if (ctl_dispatch(&req, out) == -1) {
		snprintf(err, errlen, "%s", req.err);
		return SERVER_ERROR;
	}
	return SERVER_REPLY;
}

/* A client that hangs up before its submit is stored: its job is stored all the same. */
static void
ctl_closed(void *arg, struct server_conn *conn)
{
	(void)arg;
	submit_forget(conn);
	statq_forget(conn);
}

const struct server_handler ctl_handler = { .frame = ctl_frame, .closed = ctl_closed };

int
ctl_dispatch(struct ctl_req *r, struct proto_buf *out)
{
	size_t i;

	r->err[0] = '\0';
	for (i = 0; i < sizeof(ctl_table) / sizeof(ctl_table[0]); i++) {
		if (ctl_table[i].type != r->msg->type)
			continue;
		if ((ctl_table[i].flags & CTL_ROOM) && !store_room(r->e->store))
			return ctl_error(r, "the database's disk is full (its reserve for ends and "
			    "cancels is in use): nvq %s waits for room; nvq cancel works",
			    proto_type_name(r->msg->type));
		proto_begin(out, MSG_OK);
		if (proto_int(r->msg, "array", 0) != 0 && (r->msg->type == MSG_CANCEL ||
		    r->msg->type == MSG_HOLD || r->msg->type == MSG_RELEASE ||
		    r->msg->type == MSG_SUSPEND || r->msg->type == MSG_RESUME)) {
			if (ctl_array_each(r, out, ctl_table[i].fn) == -1)
				return -1;
		} else if (ctl_table[i].fn(r, out) == -1)
			return -1;
		if (r->deferred) {
			proto_buf_free(out);
			return 0;
		}
		if (proto_end(out) == -1)
			return ctl_error(r, "the reply is too large");
		return 0;
	}
	return ctl_error(r, "message type \"%s\" is not a request",
	    proto_type_name(r->msg->type));
}
