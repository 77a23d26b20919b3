/*
 * srun.c: `srun CMD` inside an nvq job, for the scripts written for Slurm
 * (nvqd puts its folder first on a job's PATH, unless Slurm runs the jobs).
 *
 * One node, the job's own resources: srun starts --ntasks copies of CMD
 * (default $SLURM_NTASKS, which nvq submit --ntasks sets, else 1) as a
 * step of the job, each with SLURM_PROCID, SLURM_LOCALID, SLURM_NODEID=0,
 * SLURM_STEP_ID, SLURM_STEP_NUM_TASKS, SLURM_STEP_NUM_NODES=1 and
 * SLURM_NTASKS; waits for all of them; passes SIGINT, SIGTERM, SIGHUP,
 * SIGUSR1 and SIGUSR2 on to them; -l puts "N: " before each line of task
 * N; and exits as srun does: with the highest exit status of its tasks,
 * 128 + N for one a signal N ended.  The table below says what each
 * option does here: honoured, accepted (it means nothing on one server,
 * inside the job's allocation), or refused with its reason (exit 2).
 * Steps are not counted: SLURM_STEP_ID is 0 for every srun.
 */
#include <errno.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#define SRUN_MAX_TASKS	256		/* as nvq submit --ntasks */
#define SRUN_LINE	4096		/* -l: a longer line is cut into pieces */

enum srun_opt { SRUN_NTASKS, SRUN_LABEL, SRUN_NODES, SRUN_MPI, SRUN_KILL, SRUN_EXPORT,
	SRUN_PTY, SRUN_ACCEPT, SRUN_REFUSE };

static const struct srun_row {
	const char	*name;		/* long name */
	char		letter;		/* or 0 */
	char		arg;		/* 0 none, 1 required, 2 optional (--name=V only) */
	enum srun_opt	what;
	const char	*why;		/* SRUN_REFUSE: the reason */
} srun_table[] = {
	{ "ntasks", 'n', 1, SRUN_NTASKS, NULL },
	{ "ntasks-per-node", 0, 1, SRUN_NTASKS, NULL },
	{ "label", 'l', 0, SRUN_LABEL, NULL },
	{ "nodes", 'N', 1, SRUN_NODES, NULL },
	{ "mpi", 0, 1, SRUN_MPI, NULL },
	{ "kill-on-bad-exit", 'K', 2, SRUN_KILL, NULL },
	{ "export", 0, 1, SRUN_EXPORT, NULL },
	{ "pty", 0, 0, SRUN_PTY, NULL },
	/* the job's allocation already: nothing to ask for or bind on one server */
	{ "cpu-bind", 0, 1, SRUN_ACCEPT, NULL },
	{ "gpu-bind", 0, 1, SRUN_ACCEPT, NULL },
	{ "gpus-per-task", 0, 1, SRUN_ACCEPT, NULL },
	{ "gpus", 'G', 1, SRUN_ACCEPT, NULL },
	{ "gres", 0, 1, SRUN_ACCEPT, NULL },
	{ "cpus-per-task", 'c', 1, SRUN_ACCEPT, NULL },
	{ "mem", 0, 1, SRUN_ACCEPT, NULL },
	{ "job-name", 'J', 1, SRUN_ACCEPT, NULL },
	{ "unbuffered", 'u', 0, SRUN_ACCEPT, NULL },
	{ "overlap", 0, 0, SRUN_ACCEPT, NULL },
	{ "exact", 0, 0, SRUN_ACCEPT, NULL },
	{ "exclusive", 0, 2, SRUN_ACCEPT, NULL },
	{ "quiet", 'Q', 0, SRUN_ACCEPT, NULL },
	{ "verbose", 'v', 0, SRUN_ACCEPT, NULL },
	{ "nodelist", 'w', 1, SRUN_REFUSE, "this is one server: no nodes to choose" },
	{ "partition", 'p', 1, SRUN_REFUSE, "this is one server: partitions are Slurm's" },
	{ "output", 'o', 1, SRUN_REFUSE, "the tasks write to the job's output" },
	{ "error", 'e', 1, SRUN_REFUSE, "the tasks write to the job's output" },
	{ "input", 'i', 1, SRUN_REFUSE, "the tasks read the job's input" },
	{ "time", 't', 1, SRUN_REFUSE, "a step has the job's time limit" },
};
#define SRUN_NROWS	(sizeof(srun_table) / sizeof(srun_table[0]))

static pid_t	srun_pids[SRUN_MAX_TASKS];
static int	srun_n;

static void
srun_die(const char *fmt, const char *a, const char *b)
{
	fprintf(stderr, "srun: ");
	fprintf(stderr, fmt, a, b);
	fprintf(stderr, "\n");
	exit(2);
}

/* A signal srun was sent: its tasks' now. */
static void
srun_forward_cb(int sig)
{
	int i, saved = errno;

	for (i = 0; i < srun_n; i++)
		if (srun_pids[i] > 0)
			kill(srun_pids[i], sig);
	errno = saved;
}

/* A count from 1 to max, or -1. */
static int
srun_count(const char *s, int max)
{
	char *end;
	long v;

	errno = 0;
	v = strtol(s, &end, 10);
	return errno == 0 && end != s && *end == '\0' && v >= 1 && v <= max ? (int)v : -1;
}

static const struct srun_row *
srun_find(const char *name, size_t len, char letter)
{
	size_t i;

	for (i = 0; i < SRUN_NROWS; i++)
		if (name != NULL ? strlen(srun_table[i].name) == len &&
		    strncmp(srun_table[i].name, name, len) == 0 : srun_table[i].letter == letter)
			return &srun_table[i];
	return NULL;
}

struct srun_opts {
	int	ntasks, label, kill;
	char	**cmd;
};

/* argv's options into o; o->cmd is the command. */
static void
srun_options(int argc, char **argv, struct srun_opts *o)
{
	const struct srun_row *r;
	const char *w, *val, *eq;
	char l[2] = { 0 };
	int i;

	for (i = 1; i < argc && argv[i][0] == '-' && argv[i][1] != '\0'; i++) {
		w = argv[i];
		val = NULL;
		if (strcmp(w, "--") == 0) {
			i++;
			break;
		}
		if (w[1] == '-') {
			eq = strchr(w, '=');
			if ((r = srun_find(w + 2, eq ? (size_t)(eq - w - 2) : strlen(w + 2), 0)) == NULL)
				srun_die("unknown option %s (nvq's srun: one node, the job's "
				    "resources)%s", w, "");
			if (eq != NULL && r->arg == 0)
				srun_die("--%s takes no value%s", r->name, "");
			val = eq != NULL ? eq + 1 : NULL;
		} else {
			l[0] = w[1];
			if ((r = srun_find(NULL, 0, w[1])) == NULL)
				srun_die("unknown option -%s (nvq's srun: one node, the job's "
				    "resources)%s", l, "");
			if (r->arg == 0 && w[2] != '\0')
				srun_die("-%s takes no value (one letter a word)%s", l, "");
			val = w[2] != '\0' ? w + 2 : NULL;
		}
		if (r->arg == 1 && val == NULL) {
			if (i + 1 == argc)
				srun_die("--%s needs a value%s", r->name, "");
			val = argv[++i];
		}
		switch (r->what) {
		case SRUN_NTASKS:
			if ((o->ntasks = srun_count(val, SRUN_MAX_TASKS)) == -1)
				srun_die("--ntasks %s: not a number of tasks from 1 to 256%s", val, "");
			break;
		case SRUN_LABEL: o->label = 1; break;
		case SRUN_KILL: o->kill = val == NULL || strcmp(val, "0") != 0; break;
		case SRUN_NODES:
			if (strcmp(val, "1") != 0 && strncmp(val, "1-", 2) != 0)
				srun_die("--nodes %s: this is one server: a step runs on one node%s",
				    val, "");
			break;
		case SRUN_MPI:
			if (strcmp(val, "none") != 0)
				srun_die("--mpi %s: nvq's srun starts plain processes (--mpi=none); "
				    "start MPI with its own launcher%s", val, "");
			break;
		case SRUN_EXPORT:
			if (strcmp(val, "ALL") != 0)
				srun_die("--export %s: a step gets the job's environment here "
				    "(ALL)%s", val, "");
			break;
		case SRUN_PTY:
			if (!isatty(STDIN_FILENO))
				srun_die("--pty: no terminal here (nvq run gives a job one)%s%s", "",
				    "");
			break;
		case SRUN_ACCEPT: break;
		case SRUN_REFUSE: srun_die("--%s: %s", r->name, r->why);
		}
	}
	if (i == argc)
		srun_die("no command to run%s%s", "", "");
	o->cmd = argv + i;
}

/* Task i of n: its variables, its output into out/err where labelled, then cmd. */
static void
srun_task(const struct srun_opts *o, int i, int out, int err)
{
	char v[16];

	snprintf(v, sizeof(v), "%d", i);
	setenv("SLURM_PROCID", v, 1);
	setenv("SLURM_LOCALID", v, 1);
	setenv("SLURM_NODEID", "0", 1);
	setenv("SLURM_STEP_ID", "0", 1);
	setenv("SLURM_STEPID", "0", 1);
	setenv("SLURM_STEP_NUM_NODES", "1", 1);
	snprintf(v, sizeof(v), "%d", o->ntasks);
	setenv("SLURM_STEP_NUM_TASKS", v, 1);
	setenv("SLURM_NTASKS", v, 1);
	setenv("SLURM_NPROCS", v, 1);
	if (out != -1 && (dup2(out, STDOUT_FILENO) == -1 || dup2(err, STDERR_FILENO) == -1))
		_exit(2);
	signal(SIGPIPE, SIG_DFL);
	execvp(o->cmd[0], o->cmd);
	fprintf(stderr, "srun: error: execve(): %s: %s\n", o->cmd[0], strerror(errno));
	_exit(2);
}

/* A labelled stream: task, where it writes, what it has of its line. */
struct srun_stream {
	int	task, to;
	size_t	len;
	char	buf[SRUN_LINE];
};

/* Writes s's line (or what it holds) with its label; empties it. */
static void
srun_flush(struct srun_stream *s)
{
	char head[16];
	int n = snprintf(head, sizeof(head), "%d: ", s->task);
	ssize_t w;
	size_t o;

	if (s->len == 0)
		return;
	if (s->buf[s->len - 1] != '\n' && s->len < sizeof(s->buf))
		s->buf[s->len++] = '\n';
	for (o = 0; o < (size_t)n; o += (size_t)w)
		if ((w = write(s->to, head + o, (size_t)n - o)) <= 0)
			break;
	for (o = 0; o < s->len; o += (size_t)w)
		if ((w = write(s->to, s->buf + o, s->len - o)) <= 0)
			break;
	s->len = 0;
}

/* -l: the tasks' pipes (2 a task) until they close. */
static void
srun_relay(struct pollfd *fds, struct srun_stream *st, int nfds)
{
	char in[SRUN_LINE];
	int open = nfds, i;
	ssize_t r, k;

	while (open > 0) {
		if (poll(fds, (nfds_t)nfds, -1) == -1) {
			if (errno == EINTR)
				continue;
			return;
		}
		for (i = 0; i < nfds; i++) {
			if (fds[i].fd == -1 || fds[i].revents == 0)
				continue;
			if ((r = read(fds[i].fd, in, sizeof(in))) <= 0) {
				if (r == -1 && errno == EINTR)
					continue;
				srun_flush(&st[i]);
				close(fds[i].fd);
				fds[i].fd = -1;
				open--;
				continue;
			}
			for (k = 0; k < r; k++) {
				st[i].buf[st[i].len++] = in[k];
				if (in[k] == '\n' || st[i].len == sizeof(st[i].buf))
					srun_flush(&st[i]);
			}
		}
	}
}

int
main(int argc, char **argv)
{
	static struct pollfd fds[2 * SRUN_MAX_TASKS];
	static struct srun_stream st[2 * SRUN_MAX_TASKS];
	struct srun_opts o = { 0 };
	struct sigaction sa;
	const char *env = getenv("SLURM_NTASKS");
	int i, k, status, worst = 0, left, p[2][2], code;
	pid_t pid;

	o.ntasks = env != NULL && srun_count(env, SRUN_MAX_TASKS) > 0 ?
	    srun_count(env, SRUN_MAX_TASKS) : 1;
	srun_options(argc, argv, &o);
	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = srun_forward_cb;
	sigemptyset(&sa.sa_mask);
	sa.sa_flags = SA_RESTART;
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	sigaction(SIGHUP, &sa, NULL);
	sigaction(SIGUSR1, &sa, NULL);
	sigaction(SIGUSR2, &sa, NULL);
	signal(SIGPIPE, SIG_IGN);	/* -l: a reader gone is the tasks' to see */
	for (i = 0; i < o.ntasks; i++) {
		if (o.label && (pipe(p[0]) == -1 || pipe(p[1]) == -1)) {
			fprintf(stderr, "srun: error: pipe: %s\n", strerror(errno));
			srun_forward_cb(SIGTERM);
			return 2;
		}
		if ((pid = fork()) == -1) {
			fprintf(stderr, "srun: error: fork: %s\n", strerror(errno));
			srun_forward_cb(SIGTERM);
			return 2;
		}
		if (pid == 0) {
			for (k = 0; k < 2 * i && o.label; k++)
				close(fds[k].fd);
			if (o.label) {
				close(p[0][0]);
				close(p[1][0]);
			}
			srun_task(&o, i, o.label ? p[0][1] : -1, o.label ? p[1][1] : -1);
		}
		srun_pids[srun_n++] = pid;
		if (o.label) {
			close(p[0][1]);
			close(p[1][1]);
			fds[2 * i] = (struct pollfd){ p[0][0], POLLIN, 0 };
			fds[2 * i + 1] = (struct pollfd){ p[1][0], POLLIN, 0 };
			st[2 * i].task = st[2 * i + 1].task = i;
			st[2 * i].to = STDOUT_FILENO;
			st[2 * i + 1].to = STDERR_FILENO;
		}
	}
	if (o.label)
		srun_relay(fds, st, 2 * o.ntasks);
	for (left = o.ntasks; left > 0; ) {
		if ((pid = waitpid(-1, &status, 0)) == -1) {
			if (errno == EINTR)
				continue;
			break;
		}
		for (i = 0; i < o.ntasks && srun_pids[i] != pid; i++)
			;
		if (i == o.ntasks)
			continue;
		srun_pids[i] = 0;
		left--;
		code = WIFSIGNALED(status) ? 128 + WTERMSIG(status) : WEXITSTATUS(status);
		if (code > worst)
			worst = code;
		if (code != 0 && o.kill)
			srun_forward_cb(SIGTERM);
	}
	return worst;
}
