/*
 * notify.h: telling of a job's end.
 *
 * When a job ends, its notifiers run: [daemon] on_finish, its --notify
 * command and its --mail-user mail (through [daemon] sendmail), each as
 * /bin/sh as the job's owner (nvqd drops to the owner before the shell
 * reads anything of the user's; the shell then enters the job's directory),
 * in a session of its own, with the job's facts in the environment:
 * NVQ_JOB_ID, NVQ_JOB_NAME, NVQ_JOB_STATE, NVQ_EXIT_CODE (128 + the
 * signal for a job a signal ended; empty if it never ran), NVQ_SIGNAL,
 * NVQ_JOB_REASON, NVQ_STDOUT, NVQ_STDERR, NVQ_JOB_CWD, NVQ_JOB_USER.
 * At most NOTIFY_MAX run at once; the others wait, in order.  A notifier
 * past [daemon] notify_timeout is killed with its process group.  How each
 * ended (its exit status, its stderr's last line) is an event of the job,
 * NOTIFY; the job's own state never changes for it, and the queue never
 * waits for one.  Best effort: those not yet run when nvqd stops are not
 * run by the next nvqd, and those running are killed.
 */
#ifndef NVQ_NOTIFY_H
#define NVQ_NOTIFY_H

#include <stdint.h>
#include <uv.h>

#include "config.h"
#include "store.h"

#define NOTIFY_MAX	16	/* notifiers running at once */
#define NOTIFY_QUEUE	100000	/* waiting beyond these are dropped, and logged */

struct notifier;

struct notify_set {
	uv_loop_t	*loop;
	struct store	*store;
	const struct config *cfg;
	int		is_root;
	struct notifier	*head, *tail;	/* waiting to run */
	int		queued;
	struct notifier	*live;		/* running, or closing */
	int		running;
	int		stopping;
};

void	notify_init(struct notify_set *, uv_loop_t *, struct store *, const struct config *,
	    int is_root);
/* Queues the notifiers of job id, which has ended (its row says which). */
void	notify_job(struct notify_set *, int64_t id);
/* Kills the running notifiers and forgets the waiting ones; closes every handle. */
void	notify_stop(struct notify_set *);
/*
 * Whether addr may be given to --mail-user: a plain address (letters,
 * digits and ._%+-@, one @, not starting with -), so that it can be
 * neither an option of sendmail nor a second header.
 */
int	notify_mail_ok(const char *addr);

#endif
