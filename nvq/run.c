/*
 * run.c: `nvq run [submit options] -- COMMAND`: queues the job as nvq
 * submit does, then stays with it: its stdout and stderr are copied here as
 * the job writes them (nvq reads its output files, with the caller's own
 * permissions, as nvq log -f does), and nvq exits with the job's status, as
 * nvq wait gives it.  The job's descriptors are passed to nvqd (SCM_RIGHTS),
 * which gives them to the job's supervisor at its start; until they came
 * the job is held.
 *
 * Where nvq's stdin and stdout are a terminal, the job gets a terminal of
 * its own, as with srun --pty or ssh -t (tty.c): a pseudo-terminal nvq
 * opens, with its terminal's modes and size, passed as the job's stdin,
 * and as its stdout and stderr where nvq's are the terminal (and -o, -e do
 * not say otherwise).  The job's process makes it its controlling terminal
 * in a session of its own (nvq-shim), so a shell has job control.  Once the
 * job runs, nvq's terminal is raw and nvq relays bytes both ways: Ctrl-C
 * is SIGINT for the job's foreground, the job goes on; a second Ctrl-C
 * within a second cancels the job (nvq says so), as srun's does.  nvq's
 * terminal is put back as it was when the job ends or is cancelled; after
 * a cancel nvq copies what the job still writes until that stops (0.3 s
 * quiet, 2 s at most), then hangs up the job's terminal (SIGHUP to what is
 * left of its session, as a closed ssh connection does) and returns 130,
 * without waiting for nvqd's kill_grace, after which nvqd SIGKILLs what
 * ignored its SIGTERM.  While the job is still queued the terminal is as it
 * was, and Ctrl-C cancels the job at once.
 *
 * stdin a terminal but stdout not (`nvq run cmd > file`): no
 * pseudo-terminal, as srun --pty, which reads the size from its stdout
 * and goes on without one ("Not using a pseudo-terminal").  Then, and
 * where stdin is a pipe or a file, as before: the job's stdin is nvq's
 * own, its stdout and stderr nvq's where they are a terminal, and SIGINT
 * (Ctrl-C), SIGTERM or SIGHUP cancels the job; nvq then waits for its end
 * and exits 130 (128 + SIGINT) or 128 + the signal.  A terminal passed so
 * is the job's as it is nvq's, and what the job writes there is in no file.
 */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "nvq.h"
#include "tty.h"

#define RUN_POLL_MS	100
#define RUN_QUIET_MS	300	/* a job's output stopped: nothing for this long */
#define RUN_DRAIN_MS	2000	/* what a job still writes is copied this long at most */

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
 * sent to files, to the job held for them; attached[i] says which.  pty:
 * the pseudo-terminal's slave, passed for each instead, or -1.  0, or -1
 * (said).
 */
static int
run_attach(struct nvq_args *a, int attached[2], int pty)
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
	fds[0] = pty != -1 ? pty : null != -1 ? null : 0;
	attached[0] = isatty(1) && a->out == NULL;
	attached[1] = isatty(2) && a->err == NULL && a->out == NULL;
	if (attached[0]) {
		fds[n] = pty != -1 ? pty : 1;
		mask[n++] = '1';
	}
	if (attached[1]) {
		fds[n] = pty != -1 ? pty : 2;
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

/* A cancel nvq asked for: its terminal back first, then a line that says why. */
static void
run_cancel_said(struct nvq_args *a, const char *why)
{
	tty_restore();
	nvq_err("%s: cancelling job %lld", why, (long long)a->job_id);
	run_cancel(a, a->job_id);
}

int
cmd_run(struct nvq_args *a)
{
	struct run_out o[2] = { { "stdout_path", "", -1, NULL }, { "stderr_path", "", -1, NULL } };
	struct sigaction sa;
	struct proto_msg m;
	struct nvq_row job;
	struct tty t, *pty = NULL;
	char state[16] = "";
	int64_t code = -1, sig = 0;
	int i, rc, cancelled = 0, said = 0, attached[2];

	/* srun --pty's rule: a terminal of the job's own where stdin and stdout are one */
	if (isatty(0) && isatty(1)) {
		if (tty_open(&t) == -1)
			return 1;
		pty = &t;
	}
	a->attach = 1;
	if ((rc = cmd_submit(a)) != 0)
		return rc;
	rc = run_attach(a, attached, pty != NULL ? t.slave : -1);
	if (pty != NULL)
		tty_passed(pty);
	if (rc == -1) {
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
			run_cancel_said(a, strsignal(run_signal));
			cancelled = run_signal;
			if (pty != NULL)
				break;	/* its output until it stops, below */
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
		if (pty == NULL) {
			usleep(RUN_POLL_MS * 1000);
			continue;
		}
		if (strcmp(state, "PENDING") != 0)
			tty_start(pty);
		if (tty_relay(pty, RUN_POLL_MS) == TTY_CANCEL && !cancelled) {
			run_cancel_said(a, "Ctrl-C twice within a second");
			cancelled = SIGINT;
			break;
		}
	}
	if (pty != NULL) {
		/* ended: what it wrote last; cancelled: until its output stops */
		tty_finish(pty, RUN_QUIET_MS, RUN_DRAIN_MS);
		tty_restore();
	}
	for (i = 0; i < 2; i++)
		if (o[i].fd != -1)
			close(o[i].fd);
	if (cancelled)
		return 128 + cancelled;
	return wait_status(state, code, sig);
}
