/*
 * reap.c: reaping supervisors that outlive their job's record (reap.h).
 */
#include <errno.h>
#include <stdlib.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include "log.h"
#include "reap.h"

struct reap {
	uv_poll_t	poll;
	pid_t		pid;
	int		pidfd;
	struct reap	*next, *prev;
};

static struct reap *reaps;

static void
reap_closed_cb(uv_handle_t *h)
{
	struct reap *r = h->data;

	close(r->pidfd);
	free(r);
}

static void
reap_drop(struct reap *r)
{
	if (r->prev != NULL)
		r->prev->next = r->next;
	else
		reaps = r->next;
	if (r->next != NULL)
		r->next->prev = r->prev;
	uv_close((uv_handle_t *)&r->poll, reap_closed_cb);
}

/* Reaped (or not ours to reap): 1; still running: 0. */
static int
reap_try(pid_t pid)
{
	int st;
	pid_t p;

	while ((p = waitpid(pid, &st, WNOHANG)) == -1 && errno == EINTR)
		;
	return p != 0;
}

static void
reap_cb(uv_poll_t *h, int status, int events)
{
	struct reap *r = h->data;

	(void)status;
	(void)events;
	if (reap_try(r->pid))
		reap_drop(r);
}

void
reap_later(uv_loop_t *loop, pid_t pid, int pidfd)
{
	struct reap *r;

	if (reap_try(pid)) {
		close(pidfd);
		return;
	}
	if ((r = calloc(1, sizeof(*r))) == NULL || uv_poll_init(loop, &r->poll, pidfd) != 0) {
		/* left a zombie until nvqd exits: rather that than wait here */
		log_warnx("cannot watch supervisor %d to reap it", (int)pid);
		free(r);
		close(pidfd);
		return;
	}
	r->poll.data = r;
	r->pid = pid;
	r->pidfd = pidfd;
	r->next = reaps;
	if (reaps != NULL)
		reaps->prev = r;
	reaps = r;
	uv_poll_start(&r->poll, UV_READABLE, reap_cb);
}

void
reap_pid(uv_loop_t *loop, pid_t pid)
{
	int pidfd;

	if (pid <= 0)
		return;
	if ((pidfd = (int)syscall(SYS_pidfd_open, pid, 0)) == -1) {
		reap_try(pid);	/* gone already, or left a zombie until nvqd exits */
		return;
	}
	reap_later(loop, pid, pidfd);
}

void
reap_stop(void)
{
	while (reaps != NULL)
		reap_drop(reaps);
}
