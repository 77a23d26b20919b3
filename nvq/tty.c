/*
 * tty.c: nvq run's pseudo-terminal, where nvq's stdin and stdout are a
 * terminal.  nvq opens it as the calling user (posix_openpt), gives it the
 * modes and size of its own terminal and passes its slave to nvqd as the
 * job's stdin, stdout and stderr (run.c); the job's supervisor makes it the
 * job's controlling terminal (nvq-shim/shim.c).  While the job runs nvq's
 * terminal is raw and tty_relay copies bytes both ways, as ssh -t and srun
 * --pty do: Ctrl-C, Ctrl-Z, Ctrl-\ are bytes the job's terminal turns into
 * signals for the job's foreground; two Ctrl-C within a second also
 * cancel the job (intr.c).  SIGWINCH gives the job's terminal nvq's new
 * size.  nvq's terminal is put back at once on every way out: tty_restore,
 * called by run.c at the job's end or cancel, at exit, and on a fatal signal.
 * Functions return 0 or -1 (said), or what their comment says.
 */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <termios.h>
#include <time.h>
#include <unistd.h>

#include "nvq.h"
#include "tty.h"

static struct termios tty_saved;	/* nvq's terminal before tty_start */
static volatile sig_atomic_t tty_is_raw, tty_winch;

void
tty_restore(void)
{
	if (tty_is_raw) {
		tcsetattr(0, TCSANOW, &tty_saved);
		tty_is_raw = 0;
	}
}

/* A fatal signal: the terminal back, then the signal's own end (SA_RESETHAND). */
static void
tty_fatal_cb(int sig)
{
	tty_restore();
	raise(sig);
}

static void
tty_winch_cb(int sig)
{
	(void)sig;
	tty_winch = 1;
}

/* nvq's terminal's size (its stdout's, else its stdin's) to the job's. */
static void
tty_resize(int master)
{
	struct winsize ws;

	if (ioctl(1, TIOCGWINSZ, &ws) == 0 || ioctl(0, TIOCGWINSZ, &ws) == 0)
		ioctl(master, TIOCSWINSZ, &ws);
}

int
tty_open(struct tty *t)
{
	static const int fatal[] = { SIGQUIT, SIGABRT, SIGSEGV, SIGBUS, SIGFPE, SIGILL };
	struct sigaction sa;
	struct termios tio;
	char *name;
	size_t i;

	memset(t, 0, sizeof(*t));
	t->slave = -1;
	if ((t->master = posix_openpt(O_RDWR | O_NOCTTY | O_CLOEXEC)) == -1 ||
	    grantpt(t->master) == -1 || unlockpt(t->master) == -1 ||
	    (name = ptsname(t->master)) == NULL ||
	    (t->slave = open(name, O_RDWR | O_NOCTTY | O_CLOEXEC)) == -1) {
		nvq_err("cannot open a pseudo-terminal: %s", strerror(errno));
		if (t->master != -1)
			close(t->master);
		t->master = -1;
		return -1;
	}
	/* the job's terminal as nvq's is: its modes (the job may change them) and size */
	if (tcgetattr(0, &tio) == 0)
		tcsetattr(t->slave, TCSANOW, &tio);
	tty_resize(t->master);
	fcntl(t->master, F_SETFL, fcntl(t->master, F_GETFL) | O_NONBLOCK);
	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = tty_winch_cb;	/* no SA_RESTART: the relay's poll ends at once */
	sigaction(SIGWINCH, &sa, NULL);
	sa.sa_handler = tty_fatal_cb;
	sa.sa_flags = SA_RESETHAND | SA_NODEFER;
	for (i = 0; i < sizeof(fatal) / sizeof(fatal[0]); i++)
		sigaction(fatal[i], &sa, NULL);
	return 0;
}

void
tty_passed(struct tty *t)
{
	if (t->slave != -1)
		close(t->slave);
	t->slave = -1;
}

void
tty_start(struct tty *t)
{
	static int registered;
	struct termios raw;

	if (t->live)
		return;
	t->live = 1;
	if (tcgetattr(0, &tty_saved) == -1)
		return;
	if (!registered && atexit(tty_restore) == 0)
		registered = 1;
	raw = tty_saved;
	cfmakeraw(&raw);
	raw.c_cc[VMIN] = 1;
	raw.c_cc[VTIME] = 0;
	tty_is_raw = 1;		/* first: a signal between the two still restores */
	if (tcsetattr(0, TCSANOW, &raw) == -1)
		tty_is_raw = 0;
}

static double
tty_now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + ts.tv_nsec / 1e9;
}

/* All of buf to fd (nvq's stdout, blocking); -1 where it cannot take it. */
static int
tty_write_all(int fd, const unsigned char *buf, size_t n)
{
	ssize_t w;

	while (n > 0) {
		if ((w = write(fd, buf, n)) == -1) {
			if (errno == EINTR)
				continue;
			return -1;
		}
		buf += w;
		n -= (size_t)w;
	}
	return 0;
}

/* What the job wrote, to stdout; 0 where nothing was there (or no process holds its side). */
static int
tty_from_job(struct tty *t)
{
	unsigned char buf[65536];
	ssize_t n;

	if ((n = read(t->master, buf, sizeof(buf))) > 0) {
		(void)tty_write_all(1, buf, (size_t)n);	/* a stdout gone: the job runs on */
		return 1;
	}
	if (n == 0 || (errno != EAGAIN && errno != EINTR))
		t->hup = 1;	/* EIO: no process holds the job's side any more */
	return 0;
}

/* The byte the job's terminal takes as Ctrl-C now, or -1 where it takes none. */
static int
tty_vintr(const struct tty *t)
{
	struct termios tio;

	if (tcgetattr(t->master, &tio) == -1 || !(tio.c_lflag & ISIG) ||
	    tio.c_cc[VINTR] == _POSIX_VDISABLE)
		return -1;
	return tio.c_cc[VINTR];
}

/* What was typed, for the job; TTY_CANCEL at a second Ctrl-C within a second. */
static int
tty_from_user(struct tty *t)
{
	ssize_t n;
	size_t k;

	if ((n = read(0, t->pend, sizeof(t->pend))) <= 0) {
		if (n == 0 || (errno != EAGAIN && errno != EINTR))
			t->in_eof = 1;
		return TTY_GOING;
	}
	k = intr_scan(&t->intr, t->pend, (size_t)n, tty_now(), tty_vintr(t));
	t->npend = k;
	t->off = 0;
	return k < (size_t)n ? TTY_CANCEL : TTY_GOING;
}

/* Writes what is pending to the master, as much as the job's terminal takes. */
static void
tty_to_job(struct tty *t)
{
	ssize_t w;

	if ((w = write(t->master, t->pend + t->off, t->npend - t->off)) > 0)
		t->off += (size_t)w;
	else if (w == -1 && errno != EAGAIN && errno != EINTR)
		t->off = t->npend;	/* the job's side is gone: nobody to type to */
	if (t->off == t->npend)
		t->npend = t->off = 0;
}

int
tty_relay(struct tty *t, int ms)
{
	struct pollfd p[2];
	double end = tty_now() + ms / 1000.0, left;

	for (;;) {
		if (tty_winch) {
			tty_winch = 0;
			tty_resize(t->master);
		}
		if ((left = end - tty_now()) <= 0)
			return TTY_GOING;
		/*
		 * Both ways only once started: what the job writes shows once
		 * what is typed is the job's.  stdin is read once the job's
		 * terminal took what came before.
		 */
		p[0].fd = t->live && !t->in_eof && t->npend == 0 ? 0 : -1;
		p[0].events = POLLIN;
		p[1].fd = !t->live || (t->hup && t->npend == 0) ? -1 : t->master;
		p[1].events = (short)((t->hup ? 0 : POLLIN) | (t->npend > 0 ? POLLOUT : 0));
		p[0].revents = p[1].revents = 0;
		if (poll(p, 2, (int)(left * 1000) + 1) == -1)
			return TTY_GOING;	/* a signal: the caller looks */
		/* one read a turn: a job that never stops writing does not keep nvq here */
		if (p[1].revents & (POLLIN | POLLHUP | POLLERR))
			(void)tty_from_job(t);
		if (t->hup)
			t->npend = t->off = 0;
		if (t->npend > 0 && (p[1].revents & POLLOUT))
			tty_to_job(t);
		if (p[0].revents & (POLLIN | POLLHUP | POLLERR)) {
			if (tty_from_user(t) == TTY_CANCEL) {
				tty_to_job(t);	/* what came before the second Ctrl-C */
				return TTY_CANCEL;
			}
			tty_to_job(t);
		}
	}
}

void
tty_finish(struct tty *t, int quiet_ms, int max_ms)
{
	struct pollfd p = { .fd = t->master, .events = POLLIN };
	double end = tty_now() + max_ms / 1000.0, left;

	while (t->master != -1 && !t->hup && (left = end - tty_now()) > 0) {
		p.revents = 0;
		if (poll(&p, 1, left * 1000 < quiet_ms ? (int)(left * 1000) + 1 : quiet_ms) == 0)
			break;	/* quiet: its output has stopped */
		(void)tty_from_job(t);
	}
	if (t->master != -1)
		close(t->master);
	t->master = -1;
	tty_passed(t);
}
