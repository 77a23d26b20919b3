/*
 * watch.h: clients that follow the queue as it changes (nvq top, nvq
 * wait).  A client's MSG_WATCH hands its connection here for good; after
 * any change of a job or a GPU, each watcher gets a MSG_CHANGED frame
 * ("seq", one more each time): at once after a quiet WATCH_MS, never more
 * than one every WATCH_MS; and asks for what it shows on a connection of
 * its own.  Nothing a watcher sends is read: it hangs
 * up to stop.
 */
#ifndef NVQ_WATCH_H
#define NVQ_WATCH_H

#include <uv.h>

struct server_conn;

#define WATCH_MS	100
#define WATCH_MAX	256	/* watchers at once, all users */
#define WATCH_MAX_UID	8	/* of one user */
/*
 * Watchers that can do without (nvq wait polls instead) are refused past
 * half of either, so that nvq top finds room, a user's own too.
 */
#define WATCH_YIELD_MAX		(WATCH_MAX / 2)
#define WATCH_YIELD_MAX_UID	(WATCH_MAX_UID / 2)

void	watch_init(uv_loop_t *);
/* Takes conn of uid as a watcher (yield: one that can do without): 0, or -1 (too many; conn untouched). */
int	watch_add(struct server_conn *, unsigned uid, int yield);
/* Something changed: the watchers are told, WATCH_MS from now at the latest. */
void	watch_changed(void *unused);
/* Closes the timer (at shutdown; the server closes the connections). */
void	watch_stop(void);

#endif
