/*
 * submit.c: a submit's checks, from its request to the job queued for the
 * end of the loop's turn (submitq.c stores the turn's submits and answers).
 */
#include <errno.h>
#include <limits.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "hostres.h"
#include "dep.h"
#include "log.h"
#include "notify.h"
#include "parse.h"
#include "proto.h"
#include "slurm.h"
#include "slurmopt.h"
#include "submit.h"

/*
 * A submit's checks, before it is queued: what it asks against the limits
 * ([limits], [scheduler]), the GPUs there are and what Slurm takes; then
 * the job made from the request, queued for the end of the turn.  The
 * sentences are what nvq prints; the system tests match them.
 */

/* A submit being checked: who sends it, its message, and where a refusal goes. */
struct submit_req {
	struct engine			*e;
	const struct submit_from	*from;
	const struct proto_msg		*msg;
	char				*err;
	size_t				errlen;
};

static int submit_error(struct submit_req *, const char *, ...)
    __attribute__((format(printf, 2, 3)));

/* Sets the refusal's sentence; returns -1, for `return submit_error(...)`. */
static int
submit_error(struct submit_req *r, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(r->err, r->errlen, fmt, ap);
	va_end(ap);
	return -1;
}

/* Appends s to buf quoted for a shell where it needs to be. */
static void
submit_quote(char *buf, size_t len, size_t *off, const char *s)
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
submit_user_dir(struct submit_req *r)
{
	char dir[PATH_MAX];
	struct stat sb;

	engine_user_dir(r->e, r->from->uid, dir, sizeof(dir));
	if (stat(dir, &sb) == 0)
		return 0;
	if (mkdir(dir, 0700) == -1 && errno != EEXIST)
		return -1;
	if (r->e->is_root && chown(dir, r->from->uid, r->from->gid) == -1)
		return -1;
	return 0;
}

/* The environment fields, NUL-separated in one buffer (the caller's to free). */
char *
submit_env(const struct proto_msg *m, int *lenp)
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
int
submit_env_check(struct engine *e, const struct proto_msg *m, char *err, size_t errlen)
{
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
	if (e->cfg.max_env == 0 || len <= e->cfg.max_env)
		return 0;
	eq = big != NULL ? strchr(big, '=') : NULL;
	namelen = big == NULL ? 0 : eq != NULL ? (int)(eq - big) : (int)biglen;
	fmt_size(len, total, sizeof(total));
	fmt_size(e->cfg.max_env, max, sizeof(max));
	fmt_size(biglen, bigsz, sizeof(bigsz));
	snprintf(err, errlen, "the environment is %s (%zu bytes; the largest variable, %.*s%s, is "
	    "%s), over [limits] max_env (%s); nothing was queued", total, len,
	    namelen > 40 ? 40 : namelen, big != NULL ? big : "", namelen > 40 ? "..." : "",
	    bigsz, max);
	return -1;
}

/*
 * What the submit of j (or arr's tasks) would keep in nvqd's files, against
 * [limits] max_stored with what its user's active and queued jobs keep
 * (counts kept as jobs come and go: no scan).  Root is exempt, as from
 * max_pending.  0, or -1 with the refusal set.
 */
int
submit_stored_over(struct engine *e, uint32_t uid, const char *user, uint64_t need,
    const char *what, char *err, size_t errlen)
{
	uint64_t have, max = e->cfg.max_stored;
	char hs[16], ns[16], ms[16];

	if (uid == 0 || max == 0)
		return 0;
	have = engine_stored(e, uid) + submit_queued_bytes(uid);
	if (have + need <= max)
		return 0;
	fmt_size(have, hs, sizeof(hs));
	fmt_size(need, ns, sizeof(ns));
	fmt_size(max, ms, sizeof(ms));
	snprintf(err, errlen, "%s's jobs keep %s in nvqd's files and this %s would add %s, "
	    "over [limits] max_stored (%s); nothing was %s", user, hs, what, ns, ms,
	    strcmp(what, "submit") == 0 ? "queued" : "restarted");
	return -1;
}

static int
submit_stored_check(struct submit_req *r, const struct store_job_new *j,
    const struct submit_array *arr)
{
	uint64_t shared, own = submit_bytes(j, arr, &shared);

	return submit_stored_over(r->e, r->from->uid, j->user, own + shared, "submit", r->err,
	    r->errlen);
}

/*
 * --stdin's lines, each a task run as /bin/sh -c LINE: their argument
 * vectors and lengths, and the commands shown (the lines, borrowed from m).
 */
static int
submit_lines(const struct proto_msg *m, int n, char ***argv, int **len, const char ***cmd)
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

/*
 * The CPUs and host memory a job asks (-c, --mem, --mem-per-cpu) and those
 * it takes unless it says ([resources]), into j; 0, or -1 with the error
 * set where it could never run here.
 */
static int
submit_host(struct submit_req *r, int gpus, uint64_t mem, struct store_job_new *j)
{
	const struct config *c = &r->e->cfg;
	const struct proto_msg *m = r->msg;
	int64_t cpus = proto_int(m, "cpus", 0), hmem = proto_int(m, "host_mem", 0);
	int64_t per_cpu = proto_int(m, "mem_per_cpu", 0);
	uint64_t largest = 0;
	char a[16], b[16];
	int i;

	for (i = 0; i < r->e->gpus.n; i++)
		if (r->e->gpus.gpus[i].total > largest)
			largest = r->e->gpus.gpus[i].total;
	if (cpus < 0 || cpus > 65536)
		return submit_error(r, "-c: CPUs must be from 1 to 65536");
	if (hmem < 0 || per_cpu < 0)
		return submit_error(r, "--mem, --mem-per-cpu: host memory must not be negative");
	if (hmem > 0 && per_cpu > 0)
		return submit_error(r, "--mem and --mem-per-cpu: give one of them");
	j->mem_per_cpu = (uint64_t)per_cpu;
	if (r->e->slurm != NULL) {
		/* what it asked goes on to sbatch; the rest is Slurm's to say */
		j->cpus = (int)cpus;
		j->host_mem = hostres_job_mem((uint64_t)hmem, (uint64_t)per_cpu, j->cpus, 0);
		return 0;
	}
	j->cpus = hostres_job_cpus((int)cpus, gpus, mem, c->sched.cpus, c->cpus_per_gpu,
	    r->e->gpus.n, largest);
	j->host_mem = hostres_job_mem((uint64_t)hmem, (uint64_t)per_cpu, j->cpus,
	    c->default_mem);
	if (c->sched.cpus > 0 && j->cpus > c->sched.cpus)
		return submit_error(r, "this job could never run: it asks for %d CPUs and this "
		    "server gives jobs %d ([resources] cpus)", j->cpus, c->sched.cpus);
	if (c->sched.host_mem > 0 && j->host_mem > c->sched.host_mem) {
		fmt_size(j->host_mem, a, sizeof(a));
		fmt_size(c->sched.host_mem, b, sizeof(b));
		return submit_error(r, "this job could never run: it asks for %s of host memory "
		    "and this server gives jobs %s ([resources] memory)", a, b);
	}
	return 0;
}

/* Whether ngpus GPUs of mem each could ever fit here (sched_could_fit). */
int
submit_could_fit(struct engine *e, int ngpus, uint64_t mem, char *why, size_t len)
{
	struct sched_gpu g[SCHED_MAX_GPUS] = { { 0 } };
	int i;

	if (e->slurm != NULL)
		return 0;	/* Slurm's to say, at sbatch */
	for (i = 0; i < e->gpus.n; i++) {
		g[i].total = e->gpus.gpus[i].total;
		g[i].mode = config_mode(&e->cfg, i);
	}
	return sched_could_fit(g, e->gpus.n, &e->cfg.sched, ngpus, mem, why, len);
}

/* GPU spec (an index or a UUID) as its index, or -1 with the error set. */
int
submit_gpu_index(struct engine *e, const char *spec, size_t len, char *err, size_t errlen)
{
	const struct gpu_set *gs = &e->gpus;
	long long v;
	char buf[128];
	int g;

	snprintf(buf, sizeof(buf), "%.*s", (int)(len < sizeof(buf) ? len : sizeof(buf) - 1),
	    spec);
	if (parse_int(buf, 0, SCHED_MAX_GPUS - 1, &v) == 0) {
		if (v < gs->n)
			return (int)v;
		snprintf(err, errlen, "there is no GPU %lld (%d GPUs: 0 to %d)", v, gs->n,
		    gs->n - 1);
		return -1;
	}
	for (g = 0; g < gs->n; g++)
		if (strcmp(gs->gpus[g].uuid, buf) == 0)
			return g;
	snprintf(err, errlen, "there is no GPU \"%s\" (an index or a UUID from nvq gpus)", buf);
	return -1;
}

/*
 * -w / -x: "0,2" or UUIDs into their UUIDs, comma-separated, in out (len
 * bytes) and their mask; 0, or -1 with the error set.
 */
static int
submit_gpu_list(struct submit_req *r, const char *opt, const char *list, char *out, size_t len,
    uint64_t *mask)
{
	const char *p = list, *end;
	size_t off = 0, n;
	int g;

	*mask = 0;
	out[0] = '\0';
	if (*list == '\0')
		return submit_error(r, "%s: no GPUs", opt);
	while (p != NULL) {
		end = strchr(p, ',');
		n = end ? (size_t)(end - p) : strlen(p);
		if ((g = submit_gpu_index(r->e, p, n, r->err, r->errlen)) == -1) {
			char why[1024];

			snprintf(why, sizeof(why), "%s", r->err);
			return submit_error(r, "%s: %s", opt, why);
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
submit_auto_mem(struct submit_req *r, const char *name, const char *cmd, int gpus, int64_t *mem,
    char *note, size_t len)
{
	uint64_t peak, want, mib = 1ULL << 20;
	int64_t from;
	char why[256], p[16], w[16];
	int k = store_auto_peak(r->e->store, r->from->uid, name, cmd, &peak, &from);

	if (k == -1)
		return submit_error(r, "-m auto: the database could not be read (see nvqd's log); "
		    "nothing was queued");
	if (k == 0)
		return submit_error(r, "-m auto: no job of yours named \"%s\", nor of this "
		    "command, has completed with its GPU memory known; give -m; nothing was "
		    "queued", name);
	want = peak + (uint64_t)((double)peak * r->e->cfg.auto_margin);
	want = (want + mib - 1) / mib * mib;
	fmt_size(peak, p, sizeof(p));
	fmt_size(want, w, sizeof(w));
	if (submit_could_fit(r->e, gpus, want, why, sizeof(why)) == -1)
		return submit_error(r, "-m auto would take %s (the peak of job %lld, %s, + "
		    "%.0f%%), and this job could never run: %s", w, (long long)from, p,
		    100 * r->e->cfg.auto_margin, why);
	*mem = (int64_t)want;
	snprintf(note, len, "-m auto: %s, the peak of job %lld (%s) + %.0f%%", w,
	    (long long)from, p, 100 * r->e->cfg.auto_margin);
	return 0;
}

int
submit_prio_over(struct engine *e, int prio, char *err, size_t errlen)
{
	if (prio <= e->cfg.max_priority)
		return 0;
	snprintf(err, errlen, "-p %d: priority %d is above [limits] max_priority (%d); only "
	    "root%s%s may raise priority; lower your other jobs (-p -N, --nice N) or move one "
	    "ahead with nvq top ID", prio, prio, e->cfg.max_priority,
	    e->cfg.has_admin_gid ? " and members of " : "", e->cfg.admin_group);
	return -1;
}

/*
 * --qos: the class named (or NULL: the default class), if it exists and the
 * sender may use it; 0, or -1 with the refusal set.
 */
static int
submit_qos(struct submit_req *r, const struct proto_msg *m, const char **qos)
{
	const struct qos_table *t = &r->e->cfg.qos;
	const struct qos_class *c;
	char names[QOS_MAX * (QOS_NAME_MAX + 2)];
	size_t off = 0;
	int i;

	*qos = proto_str(m, "qos");
	c = &t->c[t->dflt];
	if (*qos != NULL && (i = qos_find(t, *qos)) == -1) {
		names[0] = '\0';
		for (i = 0; i < t->n; i++)
			off += (size_t)snprintf(names + off, sizeof(names) - off, "%s%s",
			    i ? ", " : "", t->c[i].name);
		return submit_error(r, "--qos %.*s: no such class (there are: %s); nothing was "
		    "queued", QOS_NAME_MAX, *qos, names);
	}
	if (*qos != NULL)
		c = &t->c[i];
	if (!qos_may_use(c, r->from->uid, r->from->gid, r->from->groups, r->from->ngroups))
		return submit_error(r, "--qos %s: you may not use this class (its users and "
		    "groups in nvq.ini); nothing was queued", c->name);
	*qos = c->name;
	return 0;
}

/* --class lc|be (issue 43): lcclass_decide, with the sender's lc jobs; 0, or -1 with the refusal set. */
static int
submit_class(struct submit_req *r, const struct proto_msg *m, int ntasks, int *lc)
{
	struct lcclass_who w = { r->from->uid, r->from->gid, r->from->groups, r->from->ngroups,
	    engine_lc_active(r->e, r->from->uid) + submit_queued_lc(r->from->uid) };

	return lcclass_decide(&r->e->cfg.lcbe, proto_str(m, "class"), &w, ntasks, lc, r->err,
	    r->errlen);
}

/*
 * [cluster] engine = slurm: what a submit may not ask of Slurm through nvq
 * (yet); 0, or -1 with the error set.
 */
static int
submit_slurm(struct submit_req *r, int nafter, int nlines)
{
	static const char *const no[][2] = {
		{ "array", "--array" }, { "allow", "-w" }, { "deny", "-x" },
		{ "hold", "--hold" }, { "attach", "nvq run" }, { "requeue", "--requeue" },
		{ "notify", "--notify" }, { "mail_user", "--mail-user" }, { "signal", "--signal" },
		{ "qos", "--qos" }, { "class", "--class" },
	};
	size_t i;

	for (i = 0; i < sizeof(no) / sizeof(no[0]); i++)
		if (proto_str(r->msg, no[i][0]) != NULL || proto_int(r->msg, no[i][0], 0) != 0)
			break;
	if (i < sizeof(no) / sizeof(no[0]) || nafter > 0 || nlines > 0)
		return submit_error(r, "%s does not work with [cluster] engine = slurm (give "
		    "Slurm's own options to sbatch); nothing was queued",
		    i < sizeof(no) / sizeof(no[0]) ? no[i][1] : nafter > 0 ? "--after" : "--stdin");
	if (proto_int(r->msg, "priority", 0) != 0)
		return submit_error(r, "-p does not work with [cluster] engine = slurm: Slurm "
		    "orders its jobs itself; nothing was queued");
	return 0;
}

/*
 * One dependency of a submit as the engine keeps it (dep.h's packing): a
 * job, an array's id or A_ (every task: Slurm's afterok on an array), or
 * A_I (its task's job id, found by the index of schema 020).  0, or -1
 * with the error set.
 */
static int
submit_dep(struct submit_req *r, const struct dep_item *d, int64_t *packed)
{
	char state[16];
	int64_t array, id;

	if (d->index >= 0) {
		if (store_array_task(r->e->store, d->id, d->index, &id) == -1)
			return submit_error(r, "--dependency: no task %lld_%lld (array %lld has no "
			    "task of index %lld)", (long long)d->id, (long long)d->index,
			    (long long)d->id, (long long)d->index);
		*packed = dep_pack(d->kind, 0, id);
		return 0;
	}
	if (store_job_of_array(r->e->store, d->id, state, sizeof(state), &array) == -1)
		return submit_error(r, "--dependency: no such job %lld", (long long)d->id);
	if (d->index == DEP_WHOLE && array != d->id)
		return submit_error(r, "--dependency: %lld_: job %lld is not an array's id",
		    (long long)d->id, (long long)d->id);
	if (array == d->id && d->kind == DEP_AFTER)
		return submit_error(r, "--dependency after:%lld: on a whole array is not supported "
		    "(give afterany, afterok or afternotok, or a task: after:%lld_0)",
		    (long long)d->id, (long long)d->id);
	*packed = dep_pack(d->kind, array == d->id, d->id);
	return 0;
}

/* How many of a user's active jobs of a name singleton reads, the latest first. */
#define SUBMIT_SINGLETON_ROWS	1000

/* --dependency singleton: what it waits for, gathered by submit_singleton_cb. */
struct submit_single {
	int64_t		*packed;
	int		n, full;
	const int64_t	*skip;		/* jobs not waited for (sorted), nskip of them */
	int		nskip;
	int		started;	/* only jobs that started (a restart's) */
};

static int
submit_singleton_cb(void *arg, const struct store_col *c, int ncols)
{
	struct submit_single *s = arg;
	int64_t v;
	int i;

	if (ncols < 3)
		return 1;
	if (s->nskip > 0 && bsearch(&c[0].i, s->skip, (size_t)s->nskip, sizeof(*s->skip),
	    parse_cmp_i64) != NULL)
		return 0;
	if (s->started && (ncols < 4 || c[3].i == 0))
		return 0;
	/* a task: its whole array, once */
	v = c[1].i != 0 ? dep_pack(DEP_AFTERANY, 1, c[1].i) : dep_pack(DEP_AFTERANY, 0, c[0].i);
	for (i = 0; i < s->n && s->packed[i] != v; i++)
		;
	if (i == s->n) {
		if (s->n == PARSE_MAX_IDS) {
			s->full = 1;
			return 1;
		}
		s->packed[s->n++] = v;
	}
	/* an earlier singleton waits for all before it: no need to look further */
	return c[2].i != 0;
}

/*
 * --dependency singleton, resolved at submit as Slurm means it: afterany
 * on each of the user's active jobs of this name (an array's tasks as the
 * whole array), back to the latest that is a singleton too, which waits
 * for those before it.  Appended to packed[0..*n).  0, or -1 with the
 * error set.
 */
static int
submit_singleton(struct submit_req *r, const char *name, int64_t *packed, int *n)
{
	struct submit_single s = { packed, *n, 0, NULL, 0, 0 };

	/* a submit of this name earlier in this loop turn is not stored yet: now it is */
	if (submit_queued_named(r->from->uid, name))
		submit_flush_now();
	if (store_active_named(r->e->store, r->from->uid, name, SUBMIT_SINGLETON_ROWS,
	    submit_singleton_cb, &s) == -1)
		return submit_error(r, "--dependency singleton: the database could not be read "
		    "(see nvqd's log)");
	if (s.full)
		return submit_error(r, "--dependency singleton: too many of your jobs named \"%s\" "
		    "are active (it waits for at most %d jobs or arrays)", name, PARSE_MAX_IDS);
	*n = s.n;
	return 0;
}

int
submit_singleton_again(struct engine *e, uint32_t uid, const char *name, const int64_t *skip,
    int nskip, const char *after, char *text, size_t len)
{
	int64_t packed[PARSE_MAX_IDS];
	/*
	 * only the started ones: they wait for nothing, where a pending one of
	 * the name may wait for this job (it did when this job was pending
	 * before): waiting for it back would be a cycle that never resolves
	 */
	struct submit_single s = { packed, 0, 0, skip, nskip, 1 };
	int singleton;

	/* what it waited for before stays (met, or not yet if it never ran), then its name's */
	s.n = dep_unformat(after, packed, &singleton);
	if (store_active_named(e->store, uid, name, SUBMIT_SINGLETON_ROWS, submit_singleton_cb,
	    &s) == -1 || s.full)
		return -1;
	return dep_format(packed, s.n, 1, text, len) == -1 ? -1 : 0;
}

/*
 * The submit's dependencies: each "dep" (Slurm's text; a bare id is
 * afterany as in Slurm) and each "after" (ids, afterok: nvq before 0.x's
 * clients), into packed and *n; the text to store into text.  0, or -1
 * with the error set.
 */
static int
submit_deps(struct submit_req *r, const struct proto_msg *m, const char *name, int64_t *packed,
    int *n, char *text, size_t len)
{
	struct dep_list l;
	char why[200];
	int i;

	memset(&l, 0, sizeof(l));
	for (i = 0; i < m->nfields; i++) {
		const struct proto_field *f = &m->fields[i];

		if (strcmp(f->key, "dep") == 0 && f->kind == 's') {
			if (dep_parse(f->s, DEP_AFTERANY, &l, why, sizeof(why)) == -1)
				return submit_error(r, "--dependency: %s", why);
		} else if (strcmp(f->key, "after") == 0 && f->kind == 'i') {
			if (l.n == PARSE_MAX_IDS)
				return submit_error(r, "at most %d jobs to depend on", PARSE_MAX_IDS);
			l.d[l.n].kind = DEP_AFTEROK;
			l.d[l.n].id = f->i;
			l.d[l.n++].index = DEP_JOB;
		}
	}
	for (i = 0; i < l.n; i++)
		if (submit_dep(r, &l.d[i], &packed[i]) == -1)
			return -1;
	*n = l.n;
	if (l.singleton && submit_singleton(r, name, packed, n) == -1)
		return -1;
	if (dep_format(packed, *n, l.singleton, text, len) == -1)
		return submit_error(r, "--dependency: too long");
	return 0;
}

int
submit_request(struct engine *e, struct server_conn *conn, const struct submit_from *from,
    const struct proto_msg *m, char *err, size_t errlen)
{
	struct submit_req req = { e, from, m, err, errlen }, *r = &req;
	struct store_job_new j;
	int64_t after[PARSE_MAX_IDS];
	char user[64], name[SUBMIT_MAX_NAME + 1], why[256], *argv = NULL, *cmd = NULL;
	char note[160] = "";
	char afterbuf[DEP_MAX_TEXT], *env = NULL, *groups = NULL;
	char allow[SCHED_MAX_GPUS * 97], deny[SCHED_MAX_GPUS * 97];
	uint64_t amask = 0, dmask = 0;
	const char *s, *qos;
	size_t argvlen = 0, off = 0, cmdlen = 8192;
	int i, lc = 0, nargs = 0, nafter = 0, rc = -1, npending, nlines = 0;
	struct submit_array arr = { 0 }, *arrp = NULL;
	int64_t *index = NULL;
	char **targv = NULL;
	const char **tcmd = NULL;
	int *targv_len = NULL;
	int64_t gpus = proto_int(m, "gpus", 1), prio = proto_int(m, "priority", 0), sig;
	int64_t limit = proto_int(m, "time", 0), mem = proto_int(m, "mem", 0);

	memset(&j, 0, sizeof(j));
	afterbuf[0] = '\0';
	for (i = 0; i < m->nfields; i++) {
		if (strcmp(m->fields[i].key, "arg") == 0 && m->fields[i].kind == 's') {
			nargs++;
			argvlen += m->fields[i].slen + 1;
		} else if ((strcmp(m->fields[i].key, "after") == 0 && m->fields[i].kind == 'i') ||
		    (strcmp(m->fields[i].key, "dep") == 0 && m->fields[i].kind == 's')) {
			nafter++;	/* parsed by submit_deps */
		} else if (strcmp(m->fields[i].key, "line") == 0 && m->fields[i].kind == 's') {
			nlines++;
		}
	}
	if (nargs == 0 && nlines == 0)
		return submit_error(r, "no command to run");
	if (nargs > 0 && nlines > 0)
		return submit_error(r, "a command and --stdin's lines: give one or the other");
	if (nlines > PARSE_MAX_TASKS)
		return submit_error(r, "%d lines: at most %d tasks in one array", nlines,
		    PARSE_MAX_TASKS);
	if (nargs > SUBMIT_MAX_ARGS)
		return submit_error(r, "too many arguments (at most %d)", SUBMIT_MAX_ARGS);
	if ((s = proto_str(m, "cwd")) == NULL || *s != '/')
		return submit_error(r, "the working directory must be an absolute path");
	/* each task of an array keeps its own copy: no longer than a path can be */
	if (strlen(s) >= PATH_MAX)
		return submit_error(r, "the working directory is longer than %d bytes; nothing was "
		    "queued", PATH_MAX - 1);
	if (gpus < 0 || gpus > SCHED_MAX_GPUS)
		return submit_error(r, "GPUs must be from 0 to %d", SCHED_MAX_GPUS);
	/* the scheduler holds everyone to it, root too: such a job would wait for ever */
	if (r->e->cfg.sched.max_gpus > 0 && gpus > r->e->cfg.sched.max_gpus)
		return submit_error(r, "this job could never run: it asks for %lld GPUs and "
		    "[limits] max_gpus is %d per user", (long long)gpus, r->e->cfg.sched.max_gpus);
	if (mem < 0)
		return submit_error(r, "memory must not be negative");
	if (prio < -SUBMIT_MAX_PRIO || prio > SUBMIT_MAX_PRIO)
		return submit_error(r, "priority must be from -%d to %d", SUBMIT_MAX_PRIO,
		    SUBMIT_MAX_PRIO);
	if (!r->from->admin && submit_prio_over(r->e, (int)prio, r->err, r->errlen) == -1)
		return -1;
	if (submit_qos(r, m, &qos) == -1)
		return -1;
	if (limit < 0)
		return submit_error(r, "the time limit must not be negative");
	if (limit > PARSE_MAX_LIMIT)
		return submit_error(r, "the time limit (%lld seconds) is over the longest, %lld "
		    "days", (long long)limit, PARSE_MAX_LIMIT / 86400);
	if (submit_env_check(r->e, m, r->err, r->errlen) == -1)
		return -1;
	if (r->e->slurm != NULL && submit_slurm(r, nafter, nlines) == -1)
		return -1;
	if ((s = proto_str(m, "stdout")) != NULL && *s != '/')
		return submit_error(r, "the output file \"%s\" is not an absolute path", s);
	if ((s = proto_str(m, "stderr")) != NULL && *s != '/')
		return submit_error(r, "the error file \"%s\" is not an absolute path", s);
	if (proto_int(m, "mem_auto", 0) && gpus == 0)
		return submit_error(r, "-m auto is memory per GPU; it needs -g 1 or more");
	if (gpus > 0 && !proto_int(m, "mem_auto", 0)) {
		if (submit_could_fit(r->e, (int)gpus, (uint64_t)mem, why, sizeof(why)) == -1)
			return submit_error(r, "this job could never run: %s", why);
	}
	if (submit_host(r, (int)gpus, (uint64_t)mem, &j) == -1)
		return -1;
	if ((s = proto_str(m, "allow")) != NULL &&
	    submit_gpu_list(r, "-w", s, allow, sizeof(allow), &amask) == -1)
		return -1;
	if ((s = proto_str(m, "deny")) != NULL &&
	    submit_gpu_list(r, "-x", s, deny, sizeof(deny), &dmask) == -1)
		return -1;
	if (proto_str(m, "allow") != NULL || proto_str(m, "deny") != NULL) {
		uint64_t left = (amask ? amask : (r->e->gpus.n >= 64 ? ~0ULL :
		    (1ULL << r->e->gpus.n) - 1)) & ~dmask;

		if (__builtin_popcountll(left) < gpus)
			return submit_error(r, "this job could never run: it asks for %lld GPU%s "
			    "and -w and -x leave %d", (long long)gpus, gpus == 1 ? "" : "s",
			    __builtin_popcountll(left));
	}
	sig = proto_int(m, "signal", 0);
	if (sig != 0 && (sig < 1 || sig > 64 || sig == SIGKILL || sig == SIGSTOP))
		return submit_error(r, "--signal must be a signal from 1 to 64 other than KILL and "
		    "STOP; nothing was queued");
	if (slurmopt_take(m, r->e->cfg.slurm, limit, &j, r->err, r->errlen) == -1)
		return -1;
	if ((s = proto_str(m, "notify")) != NULL && (*s == '\0' || strlen(s) > SUBMIT_MAX_NOTIFY))
		return submit_error(r, "--notify: a command of 1 to %d bytes; nothing was queued",
		    SUBMIT_MAX_NOTIFY);
	if ((s = proto_str(m, "mail_user")) != NULL) {
		if (!notify_mail_ok(s))
			return submit_error(r, "--mail-user: \"%s\" is not a plain mail address "
			    "(user@host); nothing was queued", s);
		if (access(r->e->cfg.sendmail, X_OK) == -1)
			return submit_error(r, "--mail-user: this server has no %s to mail with "
			    "([daemon] sendmail); nothing was queued", r->e->cfg.sendmail);
	}
	if ((s = proto_str(m, "name")) != NULL && *s != '\0') {
		if (strlen(s) > SUBMIT_MAX_NAME)
			return submit_error(r, "the name is longer than %d characters",
			    SUBMIT_MAX_NAME);
		for (i = 0; s[i]; i++)
			if ((unsigned char)s[i] < 0x20 || s[i] == 0x7f)
				return submit_error(r, "the name has control characters");
		snprintf(name, sizeof(name), "%s", s);
	} else if (nargs == 0)
		snprintf(name, sizeof(name), "stdin");	/* --stdin: commands of their own */
	else {
		const char *a = proto_str(m, "arg"), *base = strrchr(a, '/');
		snprintf(name, sizeof(name), "%s", base ? base + 1 : a);
	}
	if (nafter > 0 && submit_deps(r, m, name, after, &nafter, afterbuf, sizeof(afterbuf)) == -1)
		return -1;
	if ((s = proto_str(m, "array")) != NULL || nlines > 0) {
		if ((index = malloc(sizeof(*index) * (size_t)(nlines > 0 ? nlines :
		    PARSE_MAX_TASKS))) == NULL) {
			submit_error(r, "out of memory");
			goto out;
		}
		if (s != NULL && parse_array(s, index, PARSE_MAX_TASKS, &arr.n, &arr.limit, why,
		    sizeof(why)) == -1) {
			rc = submit_error(r, "--array %s: %s", s, why);
			goto out;
		}
		if (nlines > 0 && arr.n > 0) {
			rc = submit_error(r, "--stdin numbers its tasks from 0: --array may only "
			    "say how many at once (%%N)");
			goto out;
		}
		if (nlines == 0 && arr.n == 0) {
			rc = submit_error(r, "--array %s: no indexes", s);
			goto out;
		}
		if (nlines > 0)
			for (arr.n = 0; arr.n < nlines; arr.n++)
				index[arr.n] = arr.n;
		arr.index = index;
		arrp = &arr;
		/* its shape, kept in each task for Slurm's SLURM_ARRAY_TASK_* at its start */
		{
			struct parse_shape sh;

			parse_array_shape(nlines > 0 ? NULL : s, index, arr.n, &sh);
			j.array_count = sh.count;
			j.array_min = sh.min;
			j.array_max = sh.max;
			j.array_step = sh.step;
		}
	}
	r->from->user(r->from->uid, user, sizeof(user));
	/* root is exempt: whoever cleans up after a flood must still be able to queue */
	if (r->from->uid != 0 && r->e->cfg.max_pending > 0 &&
	    (npending = engine_pending(r->e, r->from->uid) + submit_queued(r->from->uid)) +
	    (arrp ? arr.n - 1 : 0) >= r->e->cfg.max_pending) {
		rc = submit_error(r, "%s has %d pending jobs%s: [limits] max_pending is %lld; "
		    "nothing was queued", user, npending, arrp ? " and asks for more" : "",
		    r->e->cfg.max_pending);
		goto out;
	}
	if (submit_class(r, m, arrp ? arr.n : 1, &lc) == -1)
		goto out;
	if (nlines > 0 && submit_lines(m, nlines, &targv, &targv_len, &tcmd) == -1) {
		submit_error(r, "out of memory");
		goto out;
	}
	if (nlines > 0) {
		arr.argv = (const char *const *)targv;
		arr.argv_len = targv_len;
		arr.cmd = tcmd;
	}

	if (submit_user_dir(r) == -1) {
		log_warn("%s/%u", r->e->cfg.spool, (unsigned)r->from->uid);
		submit_error(r, "cannot make your folder in the spool (see "
		    "nvqd's log); nothing was queued");
		goto out;
	}
	if ((argv = malloc(argvlen + 1)) == NULL || (cmd = malloc(cmdlen + 1)) == NULL ||
	    (j.env = env = submit_env(m, &j.env_len)) == NULL) {
		submit_error(r, "out of memory");
		goto out;
	}
	for (i = 0, argvlen = 0, off = 0; i < m->nfields; i++) {
		if (strcmp(m->fields[i].key, "arg") != 0 || m->fields[i].kind != 's')
			continue;
		memcpy(argv + argvlen, m->fields[i].s, m->fields[i].slen + 1);
		argvlen += m->fields[i].slen + 1;
		submit_quote(cmd, cmdlen, &off, m->fields[i].s);
	}
	cmd[off] = '\0';
	if (proto_int(m, "mem_auto", 0)) {
		if ((rc = submit_auto_mem(r, name, cmd, (int)gpus, &mem, note, sizeof(note))) != 0)
			goto out;
		rc = -1;
	}
	j.uid = r->from->uid;
	j.gid = r->from->gid;
	j.user = user;
	j.name = name;
	j.command = cmd;
	j.cwd = proto_str(m, "cwd");
	j.argv = argv;
	j.argv_len = (int)argvlen;
	j.gpus = (int)gpus;
	j.mem = (uint64_t)mem;
	j.priority = (int)prio;
	j.qos = qos;
	j.lc = lc;
	j.time_limit = limit;
	j.after = afterbuf[0] != '\0' ? afterbuf : NULL;	/* "singleton" alone too: a restart reads it */
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
	if (r->from->groups != NULL &&
	    (groups = malloc((size_t)r->from->ngroups * 12 + 1)) != NULL) {
		for (i = 0, off = 0, groups[0] = '\0'; i < r->from->ngroups; i++)
			off += (size_t)sprintf(groups + off, "%s%u", i ? "," : "",
			    (unsigned)r->from->groups[i]);
		j.groups = groups;
	}
	if (submit_stored_check(r, &j, arrp) == -1)
		goto out;
	/* stored with the other submits of this loop turn, then answered (submit.c) */
	if (submit_queue(conn, &j, after, nafter, arrp, note[0] ? note : NULL) == -1) {
		submit_error(r, "out of memory");
		goto out;
	}
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
