/*
 * top.c: `nvq top`: a live view of the GPUs and the queue.
 *
 * Each GPU is a bar of its memory: used by jobs (#), asked for by jobs but
 * not used (=), used outside the queue (+), free (.); with its mode, its
 * jobs and, on a timeslice GPU, who holds its lock.  Then the running
 * jobs, the suspended ones and the pending ones with why each waits, as
 * many as the terminal has lines for.  nvq follows nvqd on a connection
 * of its own (MSG_WATCH): nvqd pushes a frame after each change, and nvq
 * asks for the picture again then, and once a second for the clocks;
 * the database is never read.  The screen is drawn whole, in place, at
 * the terminal's size (SIGWINCH), in ASCII, in colour unless NO_COLOR is
 * set.  q quits, as does Ctrl-C; the terminal is given back as it was.
 * Where stdout is no terminal, one picture is printed and nvq exits.
 */
#include <errno.h>
#include <poll.h>
#include <signal.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <termios.h>
#include <time.h>
#include <unistd.h>

#include "nvq.h"
#include "table.h"

#define TOP_TICK_MS	1000
#define TOP_MAX_LINES	500
#define TOP_MAX_COLS	1024

static volatile sig_atomic_t top_winch, top_quit;
static int top_pipe[2] = { -1, -1 };

static void
top_on_signal(int sig)
{
	int saved = errno;

	if (sig == SIGWINCH)
		top_winch = 1;
	else
		top_quit = 1;
	if (top_pipe[1] != -1)
		(void)!write(top_pipe[1], "x", 1);
	errno = saved;
}

/* The screen being made: lines of text, cut to its width. */
struct top_screen {
	int	rows, cols, color;
	int	n;
	char	line[TOP_MAX_LINES][TOP_MAX_COLS * 4];
};

/* Appends a line (printf-like), cut to the screen's width; colour codes count for nothing. */
static void __attribute__((format(printf, 2, 3)))
top_line(struct top_screen *s, const char *fmt, ...)
{
	char buf[TOP_MAX_COLS * 4], *p, *out;
	va_list ap;
	int w = 0, esc = 0;

	if (s->n >= s->rows || s->n >= TOP_MAX_LINES)
		return;
	va_start(ap, fmt);
	vsnprintf(buf, sizeof(buf), fmt, ap);
	va_end(ap);
	out = s->line[s->n++];
	for (p = buf; *p; p++) {
		if (*p == '\033')
			esc = 1;
		if (!esc && ((unsigned char)*p & 0xc0) != 0x80 && ++w > s->cols)
			break;
		if (!esc || s->color)
			*out++ = *p;
		if (esc && *p == 'm')
			esc = 0;
	}
	*out = '\0';
}

/* A colour's code, or "" without colour. */
static const char *
top_c(const struct top_screen *s, const char *code)
{
	return s->color ? code : "";
}

/* The bar of GPU memory: used by jobs, asked and not used, used outside, free. */
static void
top_bar(const struct top_screen *s, int width, uint64_t total, uint64_t used, uint64_t asked,
    uint64_t outside, char *buf, size_t len)
{
	static const char marks[4] = { '#', '=', '+', '.' };
	const char *colors[4] = { "\033[32m", "\033[33m", "\033[31m", "\033[2m" };
	uint64_t part[4];
	int cells[4], i, k, left = width;
	size_t off = 0;

	if (used > asked)
		asked = used;
	part[0] = used;
	part[1] = asked - used;
	part[2] = outside;
	part[3] = total > asked + outside ? total - asked - outside : 0;
	for (i = 0; i < 3; i++) {
		cells[i] = total > 0 ? (int)((double)part[i] / (double)total * width + 0.5) : 0;
		if (part[i] > 0 && cells[i] == 0)
			cells[i] = 1;
		if (cells[i] > left)
			cells[i] = left;
		left -= cells[i];
	}
	cells[3] = left;
	off += (size_t)snprintf(buf + off, len - off, "[");
	for (i = 0; i < 4; i++) {
		if (cells[i] == 0)
			continue;
		off += (size_t)snprintf(buf + off, len - off, "%s", top_c(s, colors[i]));
		for (k = 0; k < cells[i] && off + 1 < len; k++)
			buf[off++] = marks[i];
		off += (size_t)snprintf(buf + off, len - off, "%s", top_c(s, "\033[0m"));
	}
	snprintf(buf + off, len - off, "]");
}

/* The first page of the jobs of one state; *more: there are more pages. */
static int
top_list(struct nvq_args *a, const char *state, struct proto_msg *m, int *more)
{
	struct proto_buf b = { 0 };
	int r;

	proto_begin(&b, MSG_LIST);
	proto_put_str(&b, "state", state);
	r = client_call(a->socket, &b, m);
	proto_buf_free(&b);
	*more = r == 0 && proto_int(m, "more", 0) != 0;
	return r;
}

/* The jobs of one state, as lines; pending ones with why they wait. */
static void
top_jobs(struct nvq_args *a, struct top_screen *s, const char *state, double now, int *count,
    int *more_pages)
{
	struct proto_msg m;
	struct nvq_row *rows = NULL;
	char mem[40], t[24], asked[16], used[16];
	int i, n, more, pending = strcmp(state, "PENDING") == 0;

	*count = 0;
	*more_pages = 0;
	if (top_list(a, state, &m, &more) == -1)
		return;
	*more_pages = more;
	n = client_rows(&m, "id", 0, &rows);
	*count = n;
	if (n > 0) {
		top_line(s, "%s%s%s%s", top_c(s, "\033[1m"), state, more ? " (the first)" : "",
		    top_c(s, "\033[0m"));
		top_line(s, "%-8s %-10s %4s %12s %8s  %s", "ID", "USER", "GPUS", "MEM",
		    pending ? "WAITING" : "ELAPSED", pending ? "REASON" : "NAME");
	}
	for (i = 0; i < n; i++) {
		const struct nvq_row *r = &rows[i];
		int64_t u = row_int(&m, r, "gpu_used", -1), mpg = row_int(&m, r, "mem_per_gpu", 0);
		double since = pending ? row_real(&m, r, "submitted_at") :
		    row_real(&m, r, "started_at");

		if (s->n >= s->rows - 1 && i < n - 1) {
			top_line(s, "... %d more %s", n - i, state);
			break;
		}
		if (row_int(&m, r, "gpus", 0) == 0)
			snprintf(asked, sizeof(asked), "-");
		else if (mpg == 0)
			snprintf(asked, sizeof(asked), "whole");
		else
			fmt_size((uint64_t)mpg, asked, sizeof(asked));
		if (u >= 0) {
			fmt_size((uint64_t)u, used, sizeof(used));
			snprintf(mem, sizeof(mem), "%s/%s", used, asked);
		} else
			snprintf(mem, sizeof(mem), "%s", asked);
		fmt_duration((int64_t)(now - since), t, sizeof(t));
		top_line(s, "%-8lld %-10.10s %4lld %12s %8s  %s",
		    (long long)row_int(&m, r, "id", 0), fmt_safe(row_str(&m, r, "user")),
		    (long long)row_int(&m, r, "gpus", 0), mem, t,
		    fmt_safe(pending ? (row_str(&m, r, "wait") ? row_str(&m, r, "wait") :
		    row_int(&m, r, "held", 0) ? "held" : "") : row_str(&m, r, "name")));
	}
	if (n > 0)
		top_line(s, "%s", "");
	free(rows);
	proto_msg_free(&m);
}

/* The whole picture into s; 0, or -1 when nvqd did not answer. */
static int
top_draw(struct nvq_args *a, struct top_screen *s)
{
	struct proto_buf b = { 0 };
	struct proto_msg m;
	struct nvq_row *rows = NULL;
	char bar[TOP_MAX_COLS * 16], tot[16], use[16], clock[16], head[256], jt[192];
	double now;
	time_t tt;
	int i, n, r, nrun, nsusp, npend, width, mark, mrun, msusp, mpend;

	s->n = 0;
	proto_begin(&b, MSG_GPUS);
	r = client_call(a->socket, &b, &m);
	proto_buf_free(&b);
	if (r == -1)
		return -1;
	now = (double)time(NULL);
	tt = (time_t)now;
	strftime(clock, sizeof(clock), "%H:%M:%S", localtime(&tt));
	n = client_rows(&m, "index", 0, &rows);
	mark = s->n;
	top_line(s, "%s", "");	/* the title, once the counts are known */
	width = s->cols - 58;
	if (width < 10)
		width = 10;
	if (width > 100)
		width = 100;
	for (i = 0; i < n; i++) {
		const struct nvq_row *g = &rows[i];
		uint64_t total = (uint64_t)row_int(&m, g, "total", 0);
		uint64_t used = (uint64_t)row_int(&m, g, "queue_used", 0);
		uint64_t asked = (uint64_t)row_int(&m, g, "demanded", 0);
		int64_t holder = row_int(&m, g, "lock_holder", -1);
		const char *jobs = row_str(&m, g, "jobs");

		top_bar(s, width, total, used, asked, (uint64_t)row_int(&m, g, "outside", 0), bar,
		    sizeof(bar));
		fmt_size(total, tot, sizeof(tot));
		fmt_size(used > asked ? used : asked, use, sizeof(use));
		gpus_jobs_text(&m, g, jt, sizeof(jt));
		snprintf(head, sizeof(head), "%s%s%s", jobs && *jobs ? "jobs " : "no job", jt,
		    row_int(&m, g, "drained", 0) ? ", drained" : "");
		if (holder > 0)
			snprintf(head + strlen(head), sizeof(head) - strlen(head), ", lock: job %lld",
			    (long long)holder);
		else if (holder == 0)
			snprintf(head + strlen(head), sizeof(head) - strlen(head), ", lock: free");
		top_line(s, "GPU %-2lld %-9s %s %6s/%-6s %s", (long long)row_int(&m, g, "index", 0),
		    fmt_safe(row_str(&m, g, "mode")), bar, use, tot, head);
	}
	if (n == 0)
		top_line(s, "no GPUs (%s)", fmt_safe(proto_str(&m, "source")));
	if (proto_int(&m, "host_cpus", 0) > 0) {	/* [resources]: what running jobs hold */
		fmt_size((uint64_t)proto_int(&m, "host_mem_used", 0), use, sizeof(use));
		fmt_size((uint64_t)proto_int(&m, "host_mem", 0), tot, sizeof(tot));
		top_line(s, "host: %lld of %lld CPUs, %s of %s memory held by jobs",
		    (long long)proto_int(&m, "host_cpus_used", 0),
		    (long long)proto_int(&m, "host_cpus", 0), use, tot);
	}
	top_line(s, "  %s#%s used by jobs  %s=%s asked, not used  %s+%s used outside the queue  "
	    "%s.%s free", top_c(s, "\033[32m"), top_c(s, "\033[0m"), top_c(s, "\033[33m"),
	    top_c(s, "\033[0m"), top_c(s, "\033[31m"), top_c(s, "\033[0m"),
	    top_c(s, "\033[2m"), top_c(s, "\033[0m"));
	top_line(s, "%s", "");
	free(rows);
	proto_msg_free(&m);
	top_jobs(a, s, "RUNNING", now, &nrun, &mrun);
	top_jobs(a, s, "SUSPENDED", now, &nsusp, &msusp);
	top_jobs(a, s, "PENDING", now, &npend, &mpend);
	/* the title, on its line */
	snprintf(s->line[mark], sizeof(s->line[mark]), "%snvq top%s  %s  %d GPU%s  %d%s running  "
	    "%d%s suspended  %d%s pending   q quits", top_c(s, "\033[1m"), top_c(s, "\033[0m"),
	    clock, n, n == 1 ? "" : "s", nrun, mrun ? "+" : "", nsusp, msusp ? "+" : "", npend,
	    mpend ? "+" : "");
	{
		/* cut the title as the others */
		char t[sizeof(s->line[0])];
		int keep = s->n;

		snprintf(t, sizeof(t), "%s", s->line[mark]);
		s->n = mark;
		top_line(s, "%s", t);
		s->n = keep;
	}
	return 0;
}

/* The terminal's size, into s. */
static void
top_size(struct top_screen *s)
{
	struct winsize ws;

	s->rows = 24;
	s->cols = 80;
	if (ioctl(1, TIOCGWINSZ, &ws) == 0 && ws.ws_row > 0 && ws.ws_col > 0) {
		s->rows = ws.ws_row;
		s->cols = ws.ws_col > TOP_MAX_COLS ? TOP_MAX_COLS : ws.ws_col;
	}
}

/* The picture on the terminal: from its top, each line cleared past its end. */
static void
top_show(const struct top_screen *s, const char *banner)
{
	int i;

	fputs("\033[H", stdout);
	for (i = 0; i < s->n && i < s->rows; i++)
		printf("%s\033[K%s", s->line[i], i + 1 < s->rows ? "\r\n" : "");
	if (banner != NULL && i < s->rows)
		printf("%s\033[K", banner);
	fputs("\033[J", stdout);
	fflush(stdout);
}

int
top_view(struct nvq_args *a)
{
	static struct top_screen s;
	struct termios saved, raw;
	struct sigaction sa;
	struct pollfd pf[3];
	struct proto_msg m;
	int fd = -1, tty = isatty(1) && isatty(0), rc = 0, draw = 1;
	char c;

	s.color = table_colors();
	top_size(&s);
	if (!tty) {
		/* no terminal: one picture, no colour */
		s.color = 0;
		s.rows = TOP_MAX_LINES;
		if (top_draw(a, &s) == -1)
			return 1;
		for (int i = 0; i < s.n; i++)
			puts(s.line[i]);
		return 0;
	}
	if ((fd = client_watch(a->socket, 0)) == -1)
		return 1;
	if (pipe(top_pipe) == -1) {
		nvq_err("pipe: %s", strerror(errno));
		close(fd);
		return 1;
	}
	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = top_on_signal;
	sigaction(SIGWINCH, &sa, NULL);
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	sigaction(SIGHUP, &sa, NULL);
	tcgetattr(0, &saved);
	raw = saved;
	raw.c_lflag &= (tcflag_t)~(ICANON | ECHO);
	raw.c_cc[VMIN] = 1;
	raw.c_cc[VTIME] = 0;
	tcsetattr(0, TCSANOW, &raw);
	/* the alternate screen, the cursor hidden: given back at the end */
	fputs("\033[?1049h\033[?25l", stdout);
	nvq_quiet = 1;
	while (!top_quit) {
		if (top_winch) {
			top_winch = 0;
			top_size(&s);
			draw = 1;
		}
		if (draw) {
			draw = 0;
			if (top_draw(a, &s) == -1) {
				s.n = 0;
				top_show(&s, "nvqd does not answer; trying again every second");
			} else
				top_show(&s, NULL);
		}
		pf[0].fd = 0;
		pf[0].events = POLLIN;
		pf[1].fd = fd;
		pf[1].events = POLLIN;
		pf[2].fd = top_pipe[0];
		pf[2].events = POLLIN;
		if (poll(pf, 3, TOP_TICK_MS) <= 0) {
			draw = 1;	/* the clocks */
			if (fd == -1)
				fd = client_watch(a->socket, 0);
			continue;
		}
		if (pf[2].revents & POLLIN)
			(void)!read(top_pipe[0], &c, 1);
		if ((pf[0].revents & POLLIN) && read(0, &c, 1) == 1 && (c == 'q' || c == 'Q'))
			break;
		if (pf[0].revents & (POLLHUP | POLLERR))
			break;
		if (fd != -1 && (pf[1].revents & (POLLIN | POLLHUP | POLLERR))) {
			if (client_next(fd, &m) == 0) {
				proto_msg_free(&m);
				draw = 1;
			} else {
				/* nvqd went away: followed again once it is back */
				close(fd);
				fd = -1;
				draw = 1;
			}
		}
	}
	nvq_quiet = 0;
	fputs("\033[?25h\033[?1049l", stdout);
	fflush(stdout);
	tcsetattr(0, TCSANOW, &saved);
	if (fd != -1)
		close(fd);
	close(top_pipe[0]);
	close(top_pipe[1]);
	return rc;
}
