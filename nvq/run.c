/*
 * run.c: `nvq run [submit options] -- COMMAND`: queues the job as nvq
 * submit does, then stays with it: its stdout and stderr are copied here as
 * the job writes them (nvq reads its output files, with the caller's own
 * permissions, as nvq log -f does), and nvq exits with the job's status, as
 * nvq wait gives it.  SIGINT (Ctrl-C), SIGTERM or SIGHUP cancels the job;
 * nvq then waits for its end and exits 130 (128 + SIGINT) or 128 + the
 * signal.  The job's standard input is nvq's, and so are its standard
 * output and error where they are a terminal (and -o, -e do not say
 * otherwise): nvq passes them to nvqd (SCM_RIGHTS), which gives them to the
 * job's supervisor at its start; until they came the job is held.  A
 * terminal is then the job's own as it is nvq's (its size, its modes), and
 * what the job writes there is in no file.
 */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "nvq.h"

#define RUN_POLL_US	100000

static volatile sig_atomic_t run_signal;

static void
run_on_signal(int sig)
{
	run_signal = sig;
}

/* One output file followed: opened once it exists, copied to out. */
struct run_out {
	const char	*what;
	char		path[4096];
	int		fd;
	FILE		*out;
};

/* Copies what the file has now; -1 if out failed. */
static int
run_copy(struct run_out *o)
{
	char buf[65536];
	ssize_t n;

	if (o->fd == -1 && (o->fd = open(o->path, O_RDONLY | O_CLOEXEC | O_NONBLOCK)) == -1)
		return 0;	/* not made yet: the job has not started */
	while ((n = read(o->fd, buf, sizeof(buf))) > 0)
		if (fwrite(buf, 1, (size_t)n, o->out) != (size_t)n)
			return -1;
	fflush(o->out);
	return 0;
}

/*
 * Passes stdin, and stdout and stderr where they are a terminal and not
 * sent to files, to the job held for them; attached[i] says which.  0, or
 * -1 (said).
 */
static int
run_attach(struct nvq_args *a, int attached[2])
{
	struct proto_buf b = { 0 };
	struct proto_msg m;
	char mask[4] = "0";
	int fds[3], n = 1, null = -1, rc;

	/* no stdin at all: /dev/null, as for a submitted job */
	if (fcntl(0, F_GETFD) == -1 && (null = open("/dev/null", O_RDONLY | O_CLOEXEC)) == -1) {
		nvq_err("cannot open /dev/null: %s", strerror(errno));
		return -1;
	}
	fds[0] = null != -1 ? null : 0;
	attached[0] = isatty(1) && a->out == NULL;
	attached[1] = isatty(2) && a->err == NULL && a->out == NULL;
	if (attached[0]) {
		fds[n] = 1;
		mask[n++] = '1';
	}
	if (attached[1]) {
		fds[n] = 2;
		mask[n++] = '2';
	}
	proto_begin(&b, MSG_ATTACH);
	proto_put_int(&b, "id", a->job_id);
	proto_put_str(&b, "fds", mask);
	rc = client_pass_fds(a->socket, &b, fds, n, &m);
	proto_buf_free(&b);
	if (null != -1)
		close(null);
	if (rc == 0)
		proto_msg_free(&m);
	return rc;
}

static void
run_cancel(struct nvq_args *a, int64_t id)
{
	struct proto_buf b = { 0 };
	struct proto_msg m;

	proto_begin(&b, MSG_CANCEL);
	proto_put_int(&b, "id", id);
	if (client_call(a->socket, &b, &m) == 0)
		proto_msg_free(&m);
	proto_buf_free(&b);
}

int
cmd_run(struct nvq_args *a)
{
	struct run_out o[2] = { { "stdout_path", "", -1, NULL }, { "stderr_path", "", -1, NULL } };
	struct sigaction sa;
	struct proto_msg m;
	struct nvq_row job;
	char state[16] = "";
	int64_t code = -1, sig = 0;
	int i, rc, cancelled = 0, said = 0, attached[2];

	a->attach = 1;
	if ((rc = cmd_submit(a)) != 0)
		return rc;
	if (run_attach(a, attached) == -1) {
		nvq_err("job %lld is cancelled: it cannot have this terminal", (long long)a->job_id);
		run_cancel(a, a->job_id);
		return 1;
	}
	o[0].out = stdout;
	o[1].out = stderr;
	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = run_on_signal;	/* no SA_RESTART: the poll's sleep ends at once */
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	sigaction(SIGHUP, &sa, NULL);
	for (;;) {
		if (run_signal != 0 && !cancelled) {
			nvq_err("%s: cancelling job %lld", strsignal(run_signal),
			    (long long)a->job_id);
			run_cancel(a, a->job_id);
			cancelled = run_signal;
		}
		if (jobs_fetch(a->socket, a->job_id, &m, &job) == -1)
			return 1;
		snprintf(state, sizeof(state), "%s", fmt_safe(row_str(&m, &job, "state")));
		for (i = 0; i < 2; i++)
			if (o[i].path[0] == '\0' && row_str(&m, &job, o[i].what) != NULL)
				snprintf(o[i].path, sizeof(o[i].path), "%s",
				    row_str(&m, &job, o[i].what));
		code = row_int(&m, &job, "exit_code", -1);
		sig = row_int(&m, &job, "signal", 0);
		proto_msg_free(&m);
		/* -o without -e: one file, copied once; a terminal the job has: none */
		if (strcmp(o[0].path, o[1].path) == 0)
			o[1].path[0] = '\0';
		for (i = 0; i < 2; i++)
			if (attached[i])
				o[i].path[0] = '\0';
		for (i = 0; i < 2; i++)
			if (o[i].path[0] != '\0' && run_copy(&o[i]) == -1)
				return 1;
		if (!fmt_state_active(state))
			break;
		if (!said && strcmp(state, "PENDING") == 0 && isatty(2)) {
			nvq_err("job %lld queued and waiting (nvq list says why)",
			    (long long)a->job_id);
			said = 1;
		}
		usleep(RUN_POLL_US);
	}
	for (i = 0; i < 2; i++)
		if (o[i].fd != -1)
			close(o[i].fd);
	if (cancelled)
		return 128 + cancelled;
	return wait_status(state, code, sig);
}
