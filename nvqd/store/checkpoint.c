/*
 * checkpoint.c: WAL checkpoints on a thread of their own (see checkpoint.h).
 */
#include <pthread.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>

#include <sqlite3.h>

#include "checkpoint.h"

struct checkpoint {
	pthread_t	thread;
	pthread_mutex_t	mu;
	pthread_cond_t	cv;
	int		wanted;		/* CHECKPOINT_* asked for, not yet begun */
	int		stop;
	sqlite3		*db;		/* the thread's alone once it runs */
};

static void *
checkpoint_main(void *arg)
{
	struct checkpoint *c = arg;
	int which, stop;

	for (;;) {
		pthread_mutex_lock(&c->mu);
		while (!c->wanted && !c->stop)
			pthread_cond_wait(&c->cv, &c->mu);
		which = c->wanted;
		stop = c->stop;
		c->wanted = 0;
		pthread_mutex_unlock(&c->mu);
		if (stop)
			break;
		/*
		 * PASSIVE: no wait for readers (someone's sqlite3 shell) or for
		 * the loop's writer; a checkpoint cut short is taken up at the
		 * next kick.  Failures (a full disk) likewise: SQLite's own
		 * auto-checkpoint ignored them too.
		 */
		if (which & CHECKPOINT_MAIN)
			sqlite3_wal_checkpoint_v2(c->db, "main", SQLITE_CHECKPOINT_PASSIVE,
			    NULL, NULL);
		if (which & CHECKPOINT_PRIVATE_TRUNCATE)
			sqlite3_wal_checkpoint_v2(c->db, "private", SQLITE_CHECKPOINT_TRUNCATE,
			    NULL, NULL);
		else if (which & CHECKPOINT_PRIVATE)
			sqlite3_wal_checkpoint_v2(c->db, "private", SQLITE_CHECKPOINT_PASSIVE,
			    NULL, NULL);
	}
	return NULL;
}

static int
checkpoint_exec(sqlite3 *db, const char *sql)
{
	return sqlite3_exec(db, sql, NULL, NULL, NULL) == SQLITE_OK ? 0 : -1;
}

struct checkpoint *
checkpoint_start(const char *path, const char *private_path, char *err, size_t errlen)
{
	struct checkpoint *c;
	sqlite3_stmt *s = NULL;
	int rc;

	if ((c = calloc(1, sizeof(*c))) == NULL) {
		snprintf(err, errlen, "out of memory");
		return NULL;
	}
	rc = sqlite3_open_v2(path, &c->db, SQLITE_OPEN_READWRITE | SQLITE_OPEN_NOMUTEX, NULL);
	if (rc == SQLITE_OK)
		rc = sqlite3_prepare_v2(c->db, "ATTACH DATABASE ? AS private", -1, &s, NULL);
	if (rc == SQLITE_OK) {
		sqlite3_bind_text(s, 1, private_path, -1, SQLITE_STATIC);
		rc = sqlite3_step(s) == SQLITE_DONE ? SQLITE_OK : SQLITE_ERROR;
	}
	sqlite3_finalize(s);
	sqlite3_busy_timeout(c->db, 1000);	/* for CHECKPOINT_PRIVATE_TRUNCATE alone */
	/* the log synced before it is copied, the database after: as nvqd's own would */
	if (rc != SQLITE_OK || checkpoint_exec(c->db, "PRAGMA main.synchronous = NORMAL") == -1 ||
	    checkpoint_exec(c->db, "PRAGMA private.synchronous = NORMAL") == -1) {
		snprintf(err, errlen, "%s: %s", path, c->db ? sqlite3_errmsg(c->db) :
		    "cannot open");
		goto fail;
	}
	pthread_mutex_init(&c->mu, NULL);
	pthread_cond_init(&c->cv, NULL);
	if ((rc = pthread_create(&c->thread, NULL, checkpoint_main, c)) != 0) {
		snprintf(err, errlen, "cannot start the checkpoint thread");
		pthread_cond_destroy(&c->cv);
		pthread_mutex_destroy(&c->mu);
		goto fail;
	}
	return c;
fail:
	sqlite3_close(c->db);
	free(c);
	return NULL;
}

void
checkpoint_kick(struct checkpoint *c, int which)
{
	if (c == NULL)
		return;
	pthread_mutex_lock(&c->mu);
	c->wanted |= which;
	pthread_cond_signal(&c->cv);
	pthread_mutex_unlock(&c->mu);
}

void
checkpoint_stop(struct checkpoint *c)
{
	if (c == NULL)
		return;
	pthread_mutex_lock(&c->mu);
	c->stop = 1;
	pthread_cond_signal(&c->cv);
	pthread_mutex_unlock(&c->mu);
	pthread_join(c->thread, NULL);
	pthread_cond_destroy(&c->cv);
	pthread_mutex_destroy(&c->mu);
	sqlite3_close(c->db);
	free(c);
}
