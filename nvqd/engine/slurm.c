/*
 * slurm.c: nvqd in front of Slurm (slurm.h has the table of a job's life).
 * I/O only: what to say and how to read the answers is slurmjob.c's.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "cmdq.h"
#include "log.h"
#include "slurm.h"
#include "slurmjob.h"

enum sj_state { SJ_NEW, SJ_PENDING, SJ_STARTING, SJ_RUNNING, SJ_ENDED };

#define SLURM_BUCKETS	4096
#define SLURM_CHUNK	500		/* job ids per squeue */
#define SLURM_PEAK_WAIT	5.0		/* seconds an ended job waits for its peaks */
#define SLURM_MAX_GPUS	64

struct sj {
	struct slurm	*s;
	int64_t		id, sid;
	uint32_t	uid, gid;
	int		gpus;
	uint64_t	mem;
	int		state;		/* enum sj_state */
	int		busy;		/* a command about it is in flight */
	int		cancel;		/* nvq cancel came before sbatch answered */
	int		unseen;		/* polls in a row squeue did not show it */
	unsigned	seen;		/* the poll that last showed it */
	int		final;		/* squeue said it ended: row is its last */
	int		lost;		/* start-up found it unsent: sbatch may have taken it */
	struct slurm_row row;
	double		ended_at;	/* when it was seen ended */
	char		by[64];		/* who cancelled it */
	char		reason[128];	/* Slurm's, while pending */
	struct sj	*next, *prev;	/* all */
	struct sj	*hid, *hsid;	/* by id, by Slurm's id */
};

struct slurm {
	uv_loop_t	*loop;
	struct store	*store;
	const struct config *cfg;
	struct cmdq	*q;
	uv_timer_t	timer;
	struct sj	*all;
	struct sj	*byid[SLURM_BUCKETS], *bysid[SLURM_BUCKETS];
	int		polling;	/* squeue chunks in flight */
	int		nlost;		/* jobs with lost set, looked for at the first poll */
	char		conf[PATH_MAX + 16];	/* SLURM_CONF=, from nvqd's environment, or "" */
	int		poll_failed;
	unsigned	gen;
};

static double
slurm_now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_REALTIME, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static struct sj *
slurm_find(struct slurm *s, int64_t id)
{
	struct sj *j;

	for (j = s->byid[(uint64_t)id % SLURM_BUCKETS]; j != NULL; j = j->hid)
		if (j->id == id)
			return j;
	return NULL;
}

static struct sj *
slurm_find_sid(struct slurm *s, int64_t sid)
{
	struct sj *j;

	for (j = s->bysid[(uint64_t)sid % SLURM_BUCKETS]; j != NULL; j = j->hsid)
		if (j->sid == sid)
			return j;
	return NULL;
}

static void
slurm_set_sid(struct slurm *s, struct sj *j, int64_t sid)
{
	struct sj **h = &s->bysid[(uint64_t)sid % SLURM_BUCKETS];

	j->sid = sid;
	j->hsid = *h;
	*h = j;
}

static void
slurm_forget(struct slurm *s, struct sj *j)
{
	struct sj **p;

	for (p = &s->byid[(uint64_t)j->id % SLURM_BUCKETS]; *p != NULL; p = &(*p)->hid)
		if (*p == j) {
			*p = j->hid;
			break;
		}
	if (j->sid > 0)
		for (p = &s->bysid[(uint64_t)j->sid % SLURM_BUCKETS]; *p != NULL;
		    p = &(*p)->hsid)
			if (*p == j) {
				*p = j->hsid;
				break;
			}
	if (j->prev != NULL)
		j->prev->next = j->next;
	else
		s->all = j->next;
	if (j->next != NULL)
		j->next->prev = j->prev;
	free(j);
}

/* A path under the configured folder of Slurm's commands. */
static void
slurm_bin(const struct slurm *s, const char *cmd, char *buf, size_t len)
{
	snprintf(buf, len, "%s/%s", s->cfg->slurm_bin, cmd);
}

/* The first line of what a command printed, for a reason. */
static void
slurm_line(const char *text, char *buf, size_t len)
{
	size_t n;

	while (*text == '\n' || *text == ' ')
		text++;
	n = strcspn(text, "\n");
	if (n >= len)
		n = len - 1;
	memcpy(buf, text, n);
	buf[n] = '\0';
}

/* Ends a job nvqd follows in the database (no run, or its run closed), and forgets it. */
static void
slurm_end(struct slurm *s, struct sj *j, const char *state, int code, int sig, double at,
    const char *reason, int npeaks, const char *const *uuids, const int64_t *peaks)
{
	struct store_end e;
	int64_t top = -1;
	int i;

	for (i = 0; i < npeaks; i++)
		if (peaks[i] > top)
			top = peaks[i];
	memset(&e, 0, sizeof(e));
	e.state = state;
	e.now = at > 0 ? at : slurm_now();
	e.exit_code = code;
	e.signal = sig;
	e.cpu_time = -1;
	e.max_rss = -1;
	e.reason = reason;
	e.peak_gpu_mem = top;
	e.npeaks = npeaks;
	e.peak_uuids = uuids;
	e.peaks = peaks;
	if (store_job_end(s->store, j->id, &e) == -1) {
		log_warnx("job %lld: cannot record its end (%s): %s", (long long)j->id, state,
		    store_errmsg(s->store));
		return;		/* tried again at the next poll */
	}
	store_env_delete(s->store, j->id);
	log_info("job %lld (Slurm job %lld): %s%s%s", (long long)j->id, (long long)j->sid,
	    state, reason ? ": " : "", reason ? reason : "");
	slurm_forget(s, j);
}

/*
 * The peaks the plugin recorded for Slurm job sid: the most per GPU over
 * its steps' files in [cluster] peaks/SID/.  The count (its names and
 * bytes in uuids and peaks), with *batch set if the batch step's file is
 * there; the folder is removed when remove is set.
 */
static int
slurm_peaks(struct slurm *s, int64_t sid, char uuids[][96], int64_t *peaks, int *batch,
    int remove)
{
	char path[PATH_MAX], buf[65536], gpu[96], *line, *save;
	struct dirent *d;
	DIR *dir;
	uint64_t b;
	ssize_t n;
	int fd, dfd, i, k = 0;

	*batch = 0;
	snprintf(path, sizeof(path), "%s/%lld", s->cfg->slurm_peaks, (long long)sid);
	if ((dfd = open(path, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC)) == -1)
		return 0;
	if ((dir = fdopendir(dfd)) == NULL) {
		close(dfd);
		return 0;
	}
	while ((d = readdir(dir)) != NULL) {
		if (d->d_name[0] == '.')
			continue;
		if (strncmp(d->d_name, "batch.", 6) == 0)
			*batch = 1;
		fd = openat(dfd, d->d_name, O_RDONLY | O_NOFOLLOW | O_CLOEXEC | O_NONBLOCK);
		n = fd == -1 ? -1 : read(fd, buf, sizeof(buf) - 1);
		if (fd != -1)
			close(fd);
		if (remove)
			unlinkat(dfd, d->d_name, 0);
		if (n <= 0)
			continue;
		buf[n] = '\0';
		for (line = strtok_r(buf, "\n", &save); line != NULL;
		    line = strtok_r(NULL, "\n", &save)) {
			if (slurmjob_peak_line(line, gpu, sizeof(gpu), &b) == -1 || b > INT64_MAX)
				continue;
			for (i = 0; i < k && strcmp(uuids[i], gpu) != 0; i++)
				;
			if (i == k) {
				if (k == SLURM_MAX_GPUS)
					continue;
				snprintf(uuids[k], 96, "%s", gpu);
				peaks[k++] = 0;
			}
			if ((int64_t)b > peaks[i])
				peaks[i] = (int64_t)b;
		}
	}
	closedir(dir);
	if (remove)
		rmdir(path);
	return k;
}

/* A job squeue says ended: its end stored once its peaks are there. */
static void
slurm_finish(struct slurm *s, struct sj *j)
{
	char uuids[SLURM_MAX_GPUS][96], reason[256];
	const char *names[SLURM_MAX_GPUS], *st;
	int64_t peaks[SLURM_MAX_GPUS];
	int n, i, batch, final, code = -1, sig = 0, status = j->row.status;

	n = slurm_peaks(s, j->sid, uuids, peaks, &batch, 0);
	if (j->mem > 0 && !batch && slurm_now() - j->ended_at < SLURM_PEAK_WAIT)
		return;		/* the node's plugin has not written them yet */
	n = slurm_peaks(s, j->sid, uuids, peaks, &batch, 1);
	for (i = 0; i < n; i++) {
		/*
		 * a job on one node: that node's name, as Slurm has it (the plugin
		 * names it by its host name where slurmstepd does not say it)
		 */
		if (j->row.nodes[0] != '\0' && strpbrk(j->row.nodes, ",[") == NULL &&
		    strchr(uuids[i], ':') != NULL) {
			char idx[32];

			snprintf(idx, sizeof(idx), "%s", strchr(uuids[i], ':'));
			snprintf(uuids[i], sizeof(uuids[i]), "%.64s%s", j->row.nodes, idx);
		}
		names[i] = uuids[i];
	}
	if ((st = slurmjob_state(j->row.state, &final)) == NULL)
		st = "FAILED";
	if (j->row.nodes[0] == '\0')
		;		/* it never ran: no exit status */
	else if (WIFSIGNALED(status))
		sig = WTERMSIG(status);
	else
		code = WEXITSTATUS(status);
	if (strcmp(st, "CANCELLED") == 0 && j->by[0] != '\0')
		snprintf(reason, sizeof(reason), "cancelled by %s", j->by);
	else if (strcmp(st, "COMPLETED") == 0)
		reason[0] = '\0';
	else if (strcmp(st, "FAILED") == 0 && sig == 0 && code > 0 &&
	    strcmp(j->row.state, "FAILED") == 0)
		snprintf(reason, sizeof(reason), "exit code %d (Slurm job %lld)", code,
		    (long long)j->sid);
	else
		snprintf(reason, sizeof(reason), "Slurm job %lld: %s%s%s", (long long)j->sid,
		    j->row.state, strcmp(j->row.reason, "None") != 0 && j->row.reason[0] ? ", " : "",
		    strcmp(j->row.reason, "None") != 0 ? j->row.reason : "");
	slurm_end(s, j, st, code, sig, j->row.end, reason[0] ? reason : NULL, n, names, peaks);
}

static void slurm_poll(struct slurm *);
static void slurm_submit(struct slurm *, struct sj *);

/* scontrol -d named the GPUs of a job that started: its run is stored. */
static void
slurm_started_cb(void *arg, int status, const char *out, const char *err)
{
	struct sj *j = arg;
	struct slurm *s = j->s;
	char gpus[1024];
	double at;

	(void)err;
	if (status == CMDQ_STOPPED)
		return;
	j->busy = 0;
	if (status != 0 || slurmjob_gpus(out, gpus, sizeof(gpus)) == -1)
		snprintf(gpus, sizeof(gpus), "%s", j->row.nodes);
	at = j->row.start > 0 ? j->row.start : slurm_now();
	if (store_job_start(s->store, j->id, at, gpus, j->gpus, j->mem, 0) == -1) {
		log_warnx("job %lld: cannot record its start: %s", (long long)j->id,
		    store_errmsg(s->store));
		j->state = SJ_PENDING;		/* again at the next poll */
		return;
	}
	j->state = j->final ? SJ_ENDED : SJ_RUNNING;
	j->reason[0] = '\0';
	log_info("job %lld (Slurm job %lld): RUNNING on %s", (long long)j->id, (long long)j->sid,
	    gpus);
	if (j->state == SJ_ENDED)
		slurm_finish(s, j);
}

/* Starts a job squeue shows running (or already ended): its GPUs first. */
static void
slurm_start(struct slurm *s, struct sj *j)
{
	char bin[PATH_MAX], id[24];
	char *argv[] = { bin, "-d", "-o", "show", "job", id, NULL };
	struct cmd_spec c = { argv, NULL, 0, 0, 0, NULL, 0, 30 };

	slurm_bin(s, "scontrol", bin, sizeof(bin));
	snprintf(id, sizeof(id), "%lld", (long long)j->sid);
	j->reason[0] = '\0';
	j->state = SJ_STARTING;
	j->busy = 1;
	if (cmdq_run(s->q, &c, slurm_started_cb, j) == -1) {
		j->busy = 0;
		j->state = SJ_PENDING;
	}
}

/* One row of squeue: what it says of the job it names. */
static void
slurm_row(struct slurm *s, const struct slurm_row *r)
{
	struct sj *j = slurm_find_sid(s, r->sid);
	const char *st;
	int final;

	if (j == NULL)
		return;
	/* shown: Slurm knows it, whatever the state (one this does not know waits) */
	j->seen = s->gen;
	j->unseen = 0;
	if ((st = slurmjob_state(r->state, &final)) == NULL || j->busy || j->state == SJ_ENDED)
		return;
	if (strcmp(st, "PENDING") == 0) {
		if (j->state == SJ_PENDING)
			snprintf(j->reason, sizeof(j->reason), "%s", r->reason);
		return;
	}
	j->row = *r;
	j->final = final;
	if (final)
		j->ended_at = slurm_now();
	if (j->state == SJ_PENDING && final && r->nodes[0] == '\0') {
		j->state = SJ_ENDED;	/* it never ran: cancelled or refused while pending */
		slurm_finish(s, j);
	} else if (j->state == SJ_PENDING)
		slurm_start(s, j);
	else if (final) {
		j->state = SJ_ENDED;
		slurm_finish(s, j);
	}
}

struct slurm_chunk {
	struct slurm	*s;
	int		one;		/* it asked for one job */
};

static void
slurm_poll_cb(void *arg, int status, const char *out, const char *err)
{
	struct slurm_chunk *c = arg;
	struct slurm *s = c->s;
	struct slurm_row r;
	const char *p, *nl;
	char line[1024];
	size_t n;

	if (status == CMDQ_STOPPED) {
		free(c);
		return;
	}
	if (status != 0 && !(c->one && strstr(err, "Invalid job id") != NULL)) {
		slurm_line(err, line, sizeof(line));
		log_warnx("squeue: %s (exit %d)", line[0] ? line : "no answer", status);
		s->poll_failed = 1;
	}
	for (p = out; status == 0 && *p != '\0'; p = *nl ? nl + 1 : nl) {
		nl = p + strcspn(p, "\n");
		n = (size_t)(nl - p) < sizeof(line) ? (size_t)(nl - p) : sizeof(line) - 1;
		memcpy(line, p, n);
		line[n] = '\0';
		if (slurmjob_parse_row(line, &r) == 0)
			slurm_row(s, &r);
	}
	free(c);
	if (--s->polling > 0)
		return;
	if (!s->poll_failed) {
		struct sj *j, *next;

		/* twice not shown: Slurm has forgotten it (or never had it) */
		for (j = s->all; j != NULL; j = next) {
			next = j->next;
			if (j->sid <= 0 || j->busy || j->seen == s->gen)
				continue;
			if (j->state == SJ_ENDED) {
				slurm_finish(s, j);
				continue;
			}
			if (++j->unseen >= 2)
				slurm_end(s, j, "FAILED", -1, 0, 0, j->state == SJ_RUNNING ?
				    "Slurm no longer knows its job; its end is unknown" :
				    "Slurm no longer knows its job", 0, NULL, NULL);
		}
	}
	/* ended jobs waiting for their peaks, whatever squeue said */
	{
		struct sj *j, *next;

		for (j = s->all; j != NULL; j = next) {
			next = j->next;
			if (j->state == SJ_ENDED && !j->busy && j->seen == s->gen)
				slurm_finish(s, j);
		}
	}
}

/*
 * Start-up found jobs with no Slurm id: nvqd may have stopped after sbatch
 * took them and before it said which id they got.  squeue's jobs with
 * comment nvq:ID (slurmjob.c's --comment) of the same user are theirs;
 * the others go to sbatch now.
 */
static void
slurm_found_cb(void *arg, int status, const char *out, const char *err)
{
	struct slurm *s = arg;
	struct sj *j, *next;
	const char *p, *nl;
	char why[96];
	long long sid, id, uid;

	if (status == CMDQ_STOPPED)
		return;
	s->polling--;
	if (status != 0) {
		slurm_line(err, why, sizeof(why));
		log_warnx("squeue: %s (exit %d); looking again", why, status);
		return;
	}
	for (p = out; *p != '\0'; p = *nl ? nl + 1 : nl) {
		nl = p + strcspn(p, "\n");
		if (sscanf(p, "%lld|nvq:%lld|%lld", &sid, &id, &uid) != 3 ||
		    (j = slurm_find(s, id)) == NULL || !j->lost || (long long)j->uid != uid ||
		    sid <= 0)
			continue;
		j->lost = 0;
		snprintf(why, sizeof(why), "sent to Slurm: job %lld (found again)", sid);
		if (store_job_slurm(s->store, j->id, sid, NULL, slurm_now(), why) == -1)
			log_warnx("job %lld: cannot record Slurm's job %lld: %s", (long long)j->id,
			    sid, store_errmsg(s->store));
		store_env_delete(s->store, j->id);
		slurm_set_sid(s, j, sid);
		j->state = SJ_PENDING;
		log_info("job %lld: Slurm had taken it as job %lld", (long long)j->id, sid);
	}
	for (j = s->all; j != NULL; j = next) {
		next = j->next;		/* slurm_submit may end it */
		if (j->lost) {
			j->lost = 0;
			slurm_submit(s, j);
		}
	}
	s->nlost = 0;
}

/* One squeue per SLURM_CHUNK jobs, all of them answering one poll. */
static void
slurm_poll(struct slurm *s)
{
	char bin[PATH_MAX], ids[SLURM_CHUNK * 21 + 1];
	char *argv[] = { bin, "-h", "-t", "all", "-j", ids, "-O", SLURM_SQUEUE_FORMAT, NULL };
	struct cmd_spec c = { argv, NULL, 0, 0, 0, NULL, 0, 60 };
	struct slurm_chunk *ch;
	struct sj *j = s->all, *next;
	size_t off;
	int n;

	if (s->polling)
		return;
	if (s->nlost > 0) {
		char *fargv[] = { bin, "-h", "-t", "all", "-o", "%i|%k|%U", NULL };
		struct cmd_spec f = { fargv, NULL, 0, 0, 0, NULL, 0, 60 };

		slurm_bin(s, "squeue", bin, sizeof(bin));
		if (cmdq_run(s->q, &f, slurm_found_cb, s) == 0)
			s->polling++;
		return;
	}
	/* a new job sbatch could not be asked for (no memory, no database): again */
	for (j = s->all; j != NULL; j = next) {
		next = j->next;		/* slurm_submit may end it */
		if (j->state == SJ_NEW && !j->busy && !j->lost && j->sid <= 0)
			slurm_submit(s, j);
	}
	j = s->all;
	s->gen++;
	s->poll_failed = 0;
	slurm_bin(s, "squeue", bin, sizeof(bin));
	while (j != NULL) {
		for (off = 0, n = 0; j != NULL && n < SLURM_CHUNK; j = j->next) {
			if (j->sid <= 0)
				continue;
			off += (size_t)snprintf(ids + off, sizeof(ids) - off, "%s%lld", n ? "," : "",
			    (long long)j->sid);
			n++;
		}
		if (n == 0 || (ch = calloc(1, sizeof(*ch))) == NULL)
			break;
		ch->s = s;
		ch->one = n == 1;
		s->polling++;
		if (cmdq_run(s->q, &c, slurm_poll_cb, ch) == -1) {
			s->polling--;
			free(ch);
			break;
		}
	}
}

static void
slurm_timer_cb(uv_timer_t *t)
{
	slurm_poll(t->data);
}

struct slurm_sbatch {
	struct slurm	*s;
	int64_t		id;
};

static void
slurm_sbatch_cb(void *arg, int status, const char *out, const char *err)
{
	struct slurm_sbatch *b = arg;
	struct slurm *s = b->s;
	struct sj *j;
	char line[512], why[640], *e;
	long long sid;

	if (status == CMDQ_STOPPED) {
		/* start-up asks again: the job has no Slurm id yet */
		free(b);
		return;
	}
	j = slurm_find(s, b->id);
	free(b);
	if (j == NULL)
		return;
	j->busy = 0;
	sid = strtoll(out, &e, 10);
	if (status != 0 || e == out || sid <= 0 || (*e != '\n' && *e != ';' && *e != '\0')) {
		slurm_line(*err ? err : out, line, sizeof(line));
		snprintf(why, sizeof(why), "sbatch refused it: %s",
		    line[0] ? line : "no answer");
		slurm_end(s, j, "FAILED", -1, 0, 0, why, 0, NULL, NULL);
		return;
	}
	snprintf(why, sizeof(why), "sent to Slurm: job %lld", sid);
	if (store_job_slurm(s->store, j->id, sid, NULL, slurm_now(), why) == -1)
		log_warnx("job %lld: Slurm took it as job %lld, which cannot be recorded: %s",
		    (long long)j->id, sid, store_errmsg(s->store));
	/* Slurm keeps its own copy of the environment now */
	store_env_delete(s->store, j->id);
	slurm_set_sid(s, j, sid);
	j->state = SJ_PENDING;
	log_info("job %lld: Slurm job %lld", (long long)j->id, sid);
	if (j->cancel)
		slurm_cancel(s, j->id, j->by, why, sizeof(why));
}

struct slurm_exec {
	struct slurm	*s;
	struct sj	*j;
	int		ok;		/* 1: sbatch runs; -1: refused, why says why */
	char		why[256];
};

/* What store_job_exec read: sbatch, as the job's user, with its environment. */
static int
slurm_exec_cb(void *arg, const struct store_job_exec *x)
{
	struct slurm_exec *ex = arg;
	struct slurm *s = ex->s;
	struct sj *j = ex->j;
	struct slurm_req r;
	struct slurm_sbatch *b;
	char bin[PATH_MAX], args[8192], *argv[SLURM_MAX_ARGS], **env = NULL;
	char *script = NULL;
	static char path[] = "PATH=/usr/local/bin:/usr/bin:/bin";
	char *dflt[] = { path, NULL, NULL };
	struct cmd_spec c;
	int i, n, len, k = 0;
	size_t cap = (size_t)x->argv_len * 4 + 64;

	memset(&r, 0, sizeof(r));
	r.id = j->id;
	r.name = x->name;
	r.cwd = x->cwd;
	r.out = x->stdout_path;
	r.err = x->stderr_path;
	r.gpus = x->gpus;
	r.mem = x->mem;
	r.shard_size = s->cfg->shard_size;
	r.time_limit = x->time_limit;
	/* the job's own --partition over [cluster] partition */
	r.partition = x->partition != NULL ? x->partition : s->cfg->slurm_partition;
	r.account = x->account;
	r.warn_sig = x->warn_sig;
	r.warn_time = x->warn_time;
	r.warn_batch = x->warn_batch;
	r.cpus = x->cpus;
	r.host_mem = x->host_mem;
	r.mem_per_cpu = x->mem_per_cpu;
	slurm_bin(s, "sbatch", bin, sizeof(bin));
	if ((n = slurmjob_sbatch_args(&r, bin, args, sizeof(args), argv, SLURM_MAX_ARGS, ex->why,
	    sizeof(ex->why))) == -1) {
		ex->ok = -1;
		return 1;
	}
	if ((script = malloc(cap)) == NULL ||
	    (len = slurmjob_script(j->id, x->argv, x->argv_len, script, cap)) == -1) {
		free(script);
		return 1;
	}
	if (x->env != NULL && x->env_len > 0) {
		for (i = 0, n = 0; i < x->env_len; i++)
			n += x->env[i] == '\0';
		if ((env = calloc((size_t)n + 2, sizeof(*env))) == NULL) {
			free(script);
			return 1;
		}
		/* the cluster's configuration is nvqd's to say, not the user's */
		for (i = 0; i < x->env_len; i += (int)strlen(x->env + i) + 1)
			if (strncmp(x->env + i, "SLURM_CONF=", 11) != 0)
				env[k++] = (char *)(uintptr_t)(x->env + i);
		if (s->conf[0] != '\0')
			env[k++] = s->conf;
		env[k] = NULL;
	} else if (s->conf[0] != '\0')
		dflt[1] = s->conf;
	memset(&c, 0, sizeof(c));
	c.argv = argv;
	c.env = env != NULL ? env : dflt;
	c.as_user = 1;
	c.uid = x->uid;
	c.gid = x->gid;
	c.in = script;
	c.inlen = (size_t)len;
	c.timeout = 60;
	if ((b = malloc(sizeof(*b))) != NULL) {
		b->s = s;
		b->id = j->id;
		if (cmdq_run(s->q, &c, slurm_sbatch_cb, b) == 0) {
			j->busy = 1;
			ex->ok = 1;
		} else
			free(b);
	}
	free(env);
	free(script);
	return 1;
}

/* A new job (or one start-up found unsent): to sbatch. */
static void
slurm_submit(struct slurm *s, struct sj *j)
{
	struct slurm_exec ex = { s, j, 0, "" };

	if (store_job_exec(s->store, j->id, slurm_exec_cb, &ex) == -1 || ex.ok == 0) {
		log_warnx("job %lld: cannot hand it to sbatch now; again at the next poll",
		    (long long)j->id);
		return;
	}
	if (ex.ok == -1)
		slurm_end(s, j, "FAILED", -1, 0, 0, ex.why, 0, NULL, NULL);
}

struct slurm *
slurm_new(uv_loop_t *loop, struct store *st, const struct config *cfg)
{
	struct slurm *s = calloc(1, sizeof(*s));

	if (s == NULL || (s->q = cmdq_new(loop, 4)) == NULL) {
		free(s);
		return NULL;
	}
	s->loop = loop;
	s->store = st;
	s->cfg = cfg;
	if (getenv("SLURM_CONF") != NULL && strlen(getenv("SLURM_CONF")) < PATH_MAX)
		snprintf(s->conf, sizeof(s->conf), "SLURM_CONF=%s", getenv("SLURM_CONF"));
	uv_timer_init(loop, &s->timer);
	s->timer.data = s;
	uv_timer_start(&s->timer, slurm_timer_cb, (uint64_t)cfg->slurm_poll * 1000,
	    (uint64_t)cfg->slurm_poll * 1000);
	return s;
}

int
slurm_add(struct slurm *s, int64_t id, uint32_t uid, uint32_t gid, int gpus, uint64_t mem,
    const char *state, int64_t sid, int recovered)
{
	struct sj *j = calloc(1, sizeof(*j)), **h;

	if (j == NULL)
		return -1;
	j->s = s;
	j->id = id;
	j->uid = uid;
	j->gid = gid;
	j->gpus = gpus;
	j->mem = mem;
	j->next = s->all;
	if (s->all != NULL)
		s->all->prev = j;
	s->all = j;
	h = &s->byid[(uint64_t)id % SLURM_BUCKETS];
	j->hid = *h;
	*h = j;
	if (sid > 0) {
		slurm_set_sid(s, j, sid);
		j->state = strcmp(state, "PENDING") == 0 ? SJ_PENDING : SJ_RUNNING;
	} else if (recovered) {
		j->state = SJ_NEW;
		j->lost = 1;	/* looked for in Slurm first (slurm_found_cb) */
		s->nlost++;
	} else {
		j->state = SJ_NEW;
		slurm_submit(s, j);
	}
	return 0;
}

int
slurm_has(struct slurm *s, int64_t id, uint32_t *uid)
{
	struct sj *j = slurm_find(s, id);

	if (j != NULL && uid != NULL)
		*uid = j->uid;
	return j != NULL;
}

static void
slurm_done_cb(void *arg, int status, const char *out, const char *err)
{
	char line[256], *what = arg;

	(void)out;
	if (status != 0 && status != CMDQ_STOPPED) {
		slurm_line(err, line, sizeof(line));
		log_warnx("%s: %s (exit %d)", what, line, status);
	}
	free(what);
}

/* Runs Slurm's cmd with args about job j, as its user; 0, or -1. */
static int
slurm_tell(struct slurm *s, struct sj *j, const char *cmd, const char *a1, const char *a2)
{
	char bin[PATH_MAX], id[24], *what;
	char *argv[] = { bin, (char *)(uintptr_t)a1, (char *)(uintptr_t)a2, id, NULL };
	static char path[] = "PATH=/usr/bin:/bin";
	char *env[] = { path, s->conf[0] != '\0' ? s->conf : NULL, NULL };
	struct cmd_spec c = { argv, env, 1, j->uid, j->gid, NULL, 0, 30 };

	slurm_bin(s, cmd, bin, sizeof(bin));
	snprintf(id, sizeof(id), "%lld", (long long)j->sid);
	if (a2 == NULL) {
		argv[2] = id;
		argv[3] = NULL;
	}
	if ((what = malloc(96)) == NULL)
		return -1;
	snprintf(what, 96, "job %lld: %s %s", (long long)j->id, cmd, a1);
	if (cmdq_run(s->q, &c, slurm_done_cb, what) == -1) {
		free(what);
		return -1;
	}
	return 0;
}

int
slurm_cancel(struct slurm *s, int64_t id, const char *by, char *err, size_t len)
{
	struct sj *j = slurm_find(s, id);

	if (j == NULL) {
		snprintf(err, len, "job %lld is not Slurm's", (long long)id);
		return -1;
	}
	snprintf(j->by, sizeof(j->by), "%s", by);
	if (j->sid <= 0) {
		j->cancel = 1;	/* scancel once sbatch answers */
		return 0;
	}
	store_job_ending(s->store, id, "CANCELLED", j->by, slurm_now());
	if (slurm_tell(s, j, "scancel", "--quiet", NULL) == -1) {
		snprintf(err, len, "cannot run scancel (out of memory)");
		return -1;
	}
	return 0;
}

int
slurm_hold(struct slurm *s, int64_t id, int held, const char *by, char *err, size_t len)
{
	struct sj *j = slurm_find(s, id);
	char why[128];

	if (j == NULL || j->sid <= 0 || j->state != SJ_PENDING) {
		snprintf(err, len, "job %lld %s under Slurm: nvq %s works on a pending Slurm job "
		    "only (Slurm's suspend would leave its GPU memory in place)", (long long)id,
		    j != NULL && j->sid <= 0 ? "is not yet" : "runs", held ? "hold" : "release");
		return -1;
	}
	if (slurm_tell(s, j, "scontrol", held ? "hold" : "release", NULL) == -1) {
		snprintf(err, len, "cannot run scontrol (out of memory)");
		return -1;
	}
	snprintf(why, sizeof(why), "%s by %s (scontrol %s)", held ? "held" : "released", by,
	    held ? "hold" : "release");
	store_job_held(s->store, id, held, slurm_now(), why);
	return 0;
}

int
slurm_wait(struct slurm *s, int64_t id, char *buf, size_t len)
{
	struct sj *j = slurm_find(s, id);

	if (j == NULL || (j->state != SJ_NEW && j->state != SJ_PENDING))
		return -1;
	if (j->state == SJ_NEW)
		snprintf(buf, len, "handed to sbatch");
	else
		snprintf(buf, len, "Slurm job %lld: %s", (long long)j->sid,
		    j->reason[0] ? j->reason : "pending");
	return 0;
}

static void
slurm_timer_closed_cb(uv_handle_t *h)
{
	struct slurm *s = h->data;
	struct sj *j, *next;

	for (j = s->all; j != NULL; j = next) {
		next = j->next;
		free(j);
	}
	free(s);
}

void
slurm_stop(struct slurm *s)
{
	cmdq_stop(s->q);
	uv_close((uv_handle_t *)&s->timer, slurm_timer_closed_cb);
}
