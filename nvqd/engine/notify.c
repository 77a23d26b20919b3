/*
 * notify.c: a job's notifiers, run as its owner once it has ended (see
 * notify.h).  A notifier's life:
 *
 *	state		event				next
 *	QUEUED		a slot free (notify_next)	RUNNING, or DONE if it cannot start
 *	RUNNING		exit				DRAINING (its stderr read to the end)
 *	RUNNING		notify_timeout			RUNNING, its group killed: exit follows
 *	DRAINING	stderr's end, or 200 ms		DONE
 *	DONE		the event recorded		closing its handles, then freed
 *	any		notify_stop			killed, closed, freed; no event
 */
#include <errno.h>
#include <pwd.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/time.h>

#include "log.h"
#include "notify.h"

enum { NK_FINISH, NK_NOTIFY, NK_MAIL };
static const char *const notify_kinds[] = { "on_finish", "--notify", "--mail-user" };

#define NOTIFY_ENV	24
#define NOTIFY_TAIL	240
#define NOTIFY_DRAIN_MS	200

/* As the owner: into the job's directory (or /), then the command. */
static const char notify_cmd_script[] =
    "cd -- \"$NVQ_JOB_CWD\" 2>/dev/null || cd /; exec /bin/sh -c \"$NVQ_COMMAND\"";
/*
 * As the owner: a mail through sendmail ($1).  Every value comes from the
 * environment, none is spliced into the script; the name loses its line
 * ends so that it cannot add a header, and the address was checked at
 * submit (notify_mail_ok).
 */
static const char notify_mail_script[] =
    "cd /; n=$(printf %s \"$NVQ_JOB_NAME\" | tr -d '\\r\\n' | cut -c1-80); {\n"
    "printf 'To: %s\\nSubject: nvq job %s (%s) %s\\n\\n' \"$NVQ_MAIL_USER\" \"$NVQ_JOB_ID\" "
    "\"$n\" \"$NVQ_JOB_STATE\"\n"
    "printf 'Job %s (%s) of %s ended %s.\\n\\n' \"$NVQ_JOB_ID\" \"$n\" \"$NVQ_JOB_USER\" "
    "\"$NVQ_JOB_STATE\"\n"
    "printf 'Exit code: %s\\nReason: %s\\nOutput: %s\\nErrors: %s\\n' \"$NVQ_EXIT_CODE\" "
    "\"$NVQ_JOB_REASON\" \"$NVQ_STDOUT\" \"$NVQ_STDERR\"\n"
    "} | \"$1\" -i -- \"$NVQ_MAIL_USER\"";

struct notifier {
	struct notifier	*next;
	struct notify_set *set;
	int64_t		id;
	int		kind;
	uint32_t	uid, gid;
	char		*env[NOTIFY_ENV];
	int		nenv;
	char		*argv[6];
	uv_process_t	proc;
	uv_timer_t	timer;
	uv_pipe_t	err;
	int		open;		/* handles initialized and not yet closed */
	int		closing;
	int		spawned, exited, eof, timed_out, done;
	int64_t		status;
	int		term_signal;
	double		started;
	char		tail[NOTIFY_TAIL + 1];
	size_t		ntail;
};

static double
notify_now(void)
{
	struct timeval tv;

	gettimeofday(&tv, NULL);
	return (double)tv.tv_sec + (double)tv.tv_usec / 1e6;
}

void
notify_init(struct notify_set *s, uv_loop_t *loop, struct store *st, const struct config *cfg,
    int is_root)
{
	memset(s, 0, sizeof(*s));
	s->loop = loop;
	s->store = st;
	s->cfg = cfg;
	s->is_root = is_root;
}

int
notify_mail_ok(const char *a)
{
	const char *at;
	size_t n;

	if (a == NULL || (n = strlen(a)) == 0 || n > 254 || a[0] == '-' ||
	    (at = strchr(a, '@')) == NULL || at == a || at[1] == '\0' || strchr(at + 1, '@'))
		return 0;
	for (; *a != '\0'; a++)
		if (!((*a >= 'a' && *a <= 'z') || (*a >= 'A' && *a <= 'Z') ||
		    (*a >= '0' && *a <= '9') || strchr("._%+-@", *a) != NULL))
			return 0;
	return 1;
}

/* Adds KEY=VALUE to n's environment (VALUE NULL: empty); 0, or -1 out of memory. */
static int
notify_env(struct notifier *n, const char *key, const char *value)
{
	char *s;

	if (n->nenv >= NOTIFY_ENV - 1 ||
	    asprintf(&s, "%s=%s", key, value != NULL ? value : "") == -1)
		return -1;
	n->env[n->nenv++] = s;
	n->env[n->nenv] = NULL;
	return 0;
}

static void
notify_free(struct notifier *n)
{
	int i;

	for (i = 0; i < n->nenv; i++)
		free(n->env[i]);
	free(n);
}

/* A notifier of kind for the job whose row is r; NULL out of memory. */
static struct notifier *
notify_make(struct notify_set *s, const struct store_notice *r, int kind, const char *command)
{
	struct notifier *n;
	struct passwd pw, *p = NULL;
	char code[16], sig[16], id[24], pwbuf[4096];
	int bad = 0;

	if ((n = calloc(1, sizeof(*n))) == NULL)
		return NULL;
	n->set = s;
	n->id = r->id;
	n->kind = kind;
	n->uid = r->uid;
	n->gid = r->gid;
	snprintf(id, sizeof(id), "%lld", (long long)r->id);
	code[0] = sig[0] = '\0';
	if (r->signal > 0) {
		snprintf(code, sizeof(code), "%d", 128 + r->signal);
		snprintf(sig, sizeof(sig), "%d", r->signal);
	} else if (r->exit_code >= 0)
		snprintf(code, sizeof(code), "%d", r->exit_code);
	/* the owner's home and name, as a login would set them */
	if (getpwuid_r(r->uid, &pw, pwbuf, sizeof(pwbuf), &p) != 0)
		p = NULL;
	bad |= notify_env(n, "PATH", "/usr/local/bin:/usr/bin:/bin");
	bad |= notify_env(n, "SHELL", "/bin/sh");
	bad |= notify_env(n, "HOME", p != NULL ? p->pw_dir : "/");
	bad |= notify_env(n, "USER", p != NULL ? p->pw_name : r->user);
	bad |= notify_env(n, "LOGNAME", p != NULL ? p->pw_name : r->user);
	bad |= notify_env(n, "NVQ_JOB_ID", id);
	bad |= notify_env(n, "NVQ_JOB_NAME", r->name);
	bad |= notify_env(n, "NVQ_JOB_STATE", r->state);
	bad |= notify_env(n, "NVQ_EXIT_CODE", code);
	bad |= notify_env(n, "NVQ_SIGNAL", sig);
	bad |= notify_env(n, "NVQ_JOB_REASON", r->reason);
	bad |= notify_env(n, "NVQ_STDOUT", r->out);
	bad |= notify_env(n, "NVQ_STDERR", r->err);
	bad |= notify_env(n, "NVQ_JOB_CWD", r->cwd);
	bad |= notify_env(n, "NVQ_JOB_USER", r->user);
	if (kind == NK_MAIL)
		bad |= notify_env(n, "NVQ_MAIL_USER", r->mail_user);
	else
		bad |= notify_env(n, "NVQ_COMMAND", command);
	if (bad) {
		notify_free(n);
		return NULL;
	}
	n->argv[0] = "/bin/sh";
	n->argv[1] = "-c";
	n->argv[2] = (char *)(kind == NK_MAIL ? notify_mail_script : notify_cmd_script);
	n->argv[3] = kind == NK_MAIL ? "nvq-mail" : "nvq-notify";
	n->argv[4] = kind == NK_MAIL ? (char *)s->cfg->sendmail : NULL;
	n->argv[5] = NULL;
	return n;
}

static void notify_next(struct notify_set *);

static void
notify_close_cb(uv_handle_t *h)
{
	struct notifier *n = h->data, **pp;
	struct notify_set *s = n->set;

	if (--n->open > 0)
		return;
	for (pp = &s->live; *pp != NULL; pp = &(*pp)->next)
		if (*pp == n) {
			*pp = n->next;
			break;
		}
	notify_free(n);
	s->running--;
	notify_next(s);
}

/* Closes n's handles; it is freed once they are, and another may start. */
static void
notify_close(struct notifier *n)
{
	if (n->closing)
		return;
	n->closing = 1;
	if (!uv_is_closing((uv_handle_t *)&n->timer))
		uv_close((uv_handle_t *)&n->timer, notify_close_cb);
	if (!uv_is_closing((uv_handle_t *)&n->err))
		uv_close((uv_handle_t *)&n->err, notify_close_cb);
	if (n->spawned && !uv_is_closing((uv_handle_t *)&n->proc))
		uv_close((uv_handle_t *)&n->proc, notify_close_cb);
}

/* Records how n ended, as an event of its job, and closes it. */
static void
notify_done(struct notifier *n, const char *failed)
{
	char why[512], line[NOTIFY_TAIL + 1], *p, *q;
	double took = notify_now() - n->started;
	int ok = 0;

	if (n->done)
		return;
	n->done = 1;
	/* the last line of what it wrote on stderr, trimmed */
	n->tail[n->ntail] = '\0';
	snprintf(line, sizeof(line), "%s", n->tail);
	for (p = line + strlen(line); p > line && (p[-1] == '\n' || p[-1] == '\r' ||
	    p[-1] == ' '); p--)
		p[-1] = '\0';
	q = strrchr(line, '\n');
	q = q != NULL ? q + 1 : line;
	if (failed != NULL)
		snprintf(why, sizeof(why), "%s: %s", notify_kinds[n->kind], failed);
	else if (n->timed_out)
		snprintf(why, sizeof(why), "%s: killed after %llds (notify_timeout)%s%s",
		    notify_kinds[n->kind], (long long)n->set->cfg->notify_timeout,
		    *q ? ": " : "", q);
	else if (n->term_signal != 0)
		snprintf(why, sizeof(why), "%s: killed by signal %d after %.1fs%s%s",
		    notify_kinds[n->kind], n->term_signal, took, *q ? ": " : "", q);
	else {
		ok = n->status == 0;
		snprintf(why, sizeof(why), "%s: exit %lld after %.1fs%s%s", notify_kinds[n->kind],
		    (long long)n->status, took, !ok && *q ? ": " : "", ok ? "" : q);
	}
	if (ok)
		log_debug("job %lld: %s", (long long)n->id, why);
	else
		log_warnx("job %lld: %s", (long long)n->id, why);
	if (store_event_add(n->set->store, n->id, notify_now(), "NOTIFY", why) == -1)
		log_warnx("job %lld: cannot record how its notifier ended", (long long)n->id);
	notify_close(n);
}

static void
notify_timer_cb(uv_timer_t *t)
{
	struct notifier *n = t->data;

	if (n->exited) {
		notify_done(n, NULL);	/* its stderr stays open in a child: enough */
		return;
	}
	n->timed_out = 1;
	/* not reaped yet, so its pid, and its group's id, are still its own */
	if (n->proc.pid > 0 && kill(-n->proc.pid, SIGKILL) == -1 && errno != ESRCH)
		log_warn("job %lld: cannot kill its notifier", (long long)n->id);
}

static void
notify_exit_cb(uv_process_t *p, int64_t status, int term_signal)
{
	struct notifier *n = p->data;

	n->exited = 1;
	n->status = status;
	n->term_signal = term_signal;
	if (n->eof) {
		notify_done(n, NULL);
		return;
	}
	uv_timer_stop(&n->timer);
	uv_timer_start(&n->timer, notify_timer_cb, NOTIFY_DRAIN_MS, 0);
}

static void
notify_alloc_cb(uv_handle_t *h, size_t size, uv_buf_t *buf)
{
	static char b[4096];

	(void)h;
	(void)size;
	*buf = uv_buf_init(b, sizeof(b));
}

static void
notify_read_cb(uv_stream_t *st, ssize_t nread, const uv_buf_t *buf)
{
	struct notifier *n = st->data;
	size_t k;

	if (nread > 0) {
		/* keep the last NOTIFY_TAIL bytes */
		k = (size_t)nread;
		if (k >= NOTIFY_TAIL) {
			memcpy(n->tail, buf->base + k - NOTIFY_TAIL, NOTIFY_TAIL);
			n->ntail = NOTIFY_TAIL;
		} else {
			if (n->ntail + k > NOTIFY_TAIL) {
				memmove(n->tail, n->tail + (n->ntail + k - NOTIFY_TAIL),
				    NOTIFY_TAIL - k);
				n->ntail = NOTIFY_TAIL - k;
			}
			memcpy(n->tail + n->ntail, buf->base, k);
			n->ntail += k;
		}
		return;
	}
	if (nread < 0) {
		n->eof = 1;
		uv_read_stop(st);
		if (n->exited)
			notify_done(n, NULL);
	}
}

/* Starts n: running, or done with why it could not start. */
static void
notify_spawn(struct notify_set *s, struct notifier *n)
{
	uv_process_options_t o;
	uv_stdio_container_t io[3];
	char err[128];
	int r;

	n->next = s->live;
	s->live = n;
	s->running++;
	n->started = notify_now();
	uv_timer_init(s->loop, &n->timer);
	n->timer.data = n;
	uv_pipe_init(s->loop, &n->err, 0);
	n->err.data = n;
	n->open = 2;
	memset(&o, 0, sizeof(o));
	memset(io, 0, sizeof(io));
	io[0].flags = UV_IGNORE;
	io[1].flags = UV_IGNORE;
	io[2].flags = UV_CREATE_PIPE | UV_WRITABLE_PIPE;
	io[2].data.stream = (uv_stream_t *)&n->err;
	o.file = n->argv[0];
	o.args = n->argv;
	o.env = n->env;
	o.cwd = "/";
	o.stdio = io;
	o.stdio_count = 3;
	o.exit_cb = notify_exit_cb;
	/* a session of its own, so that a timeout ends what it started too */
	o.flags = UV_PROCESS_DETACHED;
	if (s->is_root) {
		o.flags |= UV_PROCESS_SETUID | UV_PROCESS_SETGID;
		o.uid = n->uid;
		o.gid = n->gid;
	}
	n->proc.data = n;
	r = uv_spawn(s->loop, &n->proc, &o);
	/* the handle is live either way, and must be closed */
	n->spawned = 1;
	n->open++;
	if (r != 0) {
		snprintf(err, sizeof(err), "cannot start /bin/sh: %s", uv_strerror(r));
		notify_done(n, err);
		return;
	}
	uv_read_start((uv_stream_t *)&n->err, notify_alloc_cb, notify_read_cb);
	uv_timer_start(&n->timer, notify_timer_cb, (uint64_t)s->cfg->notify_timeout * 1000, 0);
}

static void
notify_next(struct notify_set *s)
{
	struct notifier *n;

	while (!s->stopping && s->running < NOTIFY_MAX && s->head != NULL) {
		n = s->head;
		if ((s->head = n->next) == NULL)
			s->tail = NULL;
		s->queued--;
		n->next = NULL;
		notify_spawn(s, n);
	}
}

static void
notify_queue(struct notify_set *s, struct notifier *n)
{
	if (s->queued >= NOTIFY_QUEUE) {
		log_warnx("job %lld: %d notifiers wait already; its %s is not run",
		    (long long)n->id, s->queued, notify_kinds[n->kind]);
		notify_free(n);
		return;
	}
	n->next = NULL;
	if (s->tail != NULL)
		s->tail->next = n;
	else
		s->head = n;
	s->tail = n;
	s->queued++;
}

static void
notify_row_cb(void *arg, const struct store_notice *r)
{
	struct notify_set *s = arg;
	const char *cmd[3] = { s->cfg->on_finish, r->notify, r->mail_user };
	struct notifier *n;
	int k;

	for (k = NK_FINISH; k <= NK_MAIL; k++) {
		if (cmd[k] == NULL || cmd[k][0] == '\0')
			continue;
		if ((n = notify_make(s, r, k, cmd[k])) == NULL) {
			log_warnx("job %lld: out of memory for its %s", (long long)r->id,
			    notify_kinds[k]);
			continue;
		}
		notify_queue(s, n);
	}
}

void
notify_job(struct notify_set *s, int64_t id)
{
	if (s->stopping)
		return;
	if (store_notice(s->store, id, notify_row_cb, s) == -1)
		log_warnx("job %lld: cannot read whom to tell of its end", (long long)id);
	notify_next(s);
}

void
notify_stop(struct notify_set *s)
{
	struct notifier *n, *next;

	s->stopping = 1;
	for (n = s->head; n != NULL; n = next) {
		next = n->next;
		notify_free(n);
	}
	s->head = s->tail = NULL;
	s->queued = 0;
	for (n = s->live; n != NULL; n = n->next) {
		if (!n->exited && !n->done && n->spawned && n->proc.pid > 0)
			kill(-n->proc.pid, SIGKILL);
		n->done = 1;
		notify_close(n);
	}
}
