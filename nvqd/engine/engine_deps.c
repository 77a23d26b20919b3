/*
 * engine_deps.c: --after, resolved at the start of each pass that follows
 * a job's end or a waiting job's arrival (engine_resolve): a waiting job
 * whose dependencies are met goes to the order (engine_admit.c), one that
 * can never run is cancelled, its end recorded with the others' in one
 * commit and dropped (engine_finish.c).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "dep.h"
#include "engine_rooms.h"
#include "log.h"

/*
 * A dependency on every task of an array: 0 to wait on (a task is
 * active: e->arrtab's count, O(1)), 1 met, -1 never (why set).  Once all
 * have ended, one count of those that did not complete.
 */
static int
engine_dep_array(struct engine *e, int kind, int64_t array, char *why, size_t len)
{
	int64_t bad;

	if (deptab_count(&e->arrtab, array) > 0)
		return 0;
	if (store_array_unfinished(e->store, array, &bad) == -1)
		return 0;	/* read again at the next job's end */
	if (dep_array_holds(kind, 0, bad) == DEP_MET)
		return 1;
	if (kind == DEP_AFTEROK) {
		snprintf(why, len, "DependencyNeverSatisfied (afterok:%lld_: %lld task%s did "
		    "not complete)", (long long)array, (long long)bad, bad == 1 ? "" : "s");
		return -1;
	}
	snprintf(why, len, "DependencyNeverSatisfied (afternotok:%lld_: every task "
	    "completed)", (long long)array);
	return -1;
}

/* Resolves a job's dependencies: 0 to wait on, 1 ready; -1 if it can never run (why set). */
static int
engine_deps(struct engine *e, struct job *j, char *why, size_t len)
{
	struct job *on;
	char state[16];
	int64_t id;
	int i, kind, r, ready = 1;

	j->dep_first = -1;
	for (i = 0; i < j->nafter; i++) {
		id = dep_id(j->after[i]);
		kind = dep_kind(j->after[i]);
		if (dep_whole(j->after[i])) {
			if ((r = engine_dep_array(e, kind, id, why, len)) == -1)
				return -1;
			if (r == 0 && j->dep_first < 0)
				j->dep_first = i;
			ready &= r;
			continue;
		}
		/* an active one (pending, running, suspended): its state, no query */
		if ((on = engine_find(e, id)) != NULL)
			snprintf(state, sizeof(state), "%s", on->state == JOB_PENDING ? "PENDING" :
			    "RUNNING");
		else if (store_job_state(e->store, id, state, sizeof(state)) == -1) {
			snprintf(why, len, "DependencyNeverSatisfied (job %lld does not exist)",
			    (long long)id);
			return -1;
		}
		if ((r = dep_holds(kind, state)) == DEP_WAIT) {
			if (j->dep_first < 0)
				j->dep_first = i;
			ready = 0;
			continue;
		}
		if (r == DEP_NEVER) {
			snprintf(why, len, "DependencyNeverSatisfied (%s:%lld ended %s)",
			    dep_kind_name(kind), (long long)id, state);
			return -1;
		}
	}
	return ready;
}

/* A pending job whose --after can never be met, and why: cancelled in a group. */
struct engine_doomed {
	struct job	*job;
	char		why[160];
};

/* Records the end of a job cancelled for its --after; 0 or -1. */
static int
engine_dep_end(struct engine *e, const struct engine_doomed *d, double now)
{
	struct store_end end;

	memset(&end, 0, sizeof(end));
	end.state = "CANCELLED";
	end.now = now;
	end.exit_code = -1;
	end.cpu_time = -1;
	end.max_rss = -1;
	end.peak_gpu_mem = -1;
	end.reason = d->why;
	return store_job_end(e->store, d->job->id, &end);
}

/* The jobs to look at: a growing array of distinct jobs. */
struct engine_cands {
	struct engine	*e;
	struct job	**j;
	size_t		n, cap;
	int		failed;
};

static void
engine_cand_cb(void *owner, void *arg)
{
	struct engine_cands *c = arg;
	struct job *j = owner, **nj;

	if (j->dep_seen == c->e->dep_round || j->queue != JOB_Q_DEPS)
		return;
	if (c->n == c->cap) {
		if ((nj = realloc(c->j, (c->cap ? c->cap * 2 : 64) * sizeof(*nj))) == NULL) {
			c->failed = 1;
			return;
		}
		c->j = nj;
		c->cap = c->cap ? c->cap * 2 : 64;
	}
	j->dep_seen = c->e->dep_round;
	c->j[c->n++] = j;
}

/*
 * The waiting jobs that may have changed: those that came since the last
 * pass and the dependents of those that ended (deptab), or all of them if
 * memory ran out on the way.  0, or -1 if even that cannot be gathered.
 */
static int
engine_dep_cands(struct engine *e, struct engine_cands *c)
{
	struct job *j;
	size_t i;

	memset(c, 0, sizeof(*c));
	c->e = e;
	e->dep_round++;
	if (!e->deps_all)
		for (i = 0; i < e->ndep_ids; i++) {
			if ((j = engine_find(e, e->dep_ids[i])) != NULL)
				engine_cand_cb(j, c);
			deptab_each(&e->deptab, e->dep_ids[i], engine_cand_cb, c);
		}
	if (e->deps_all || c->failed) {
		c->n = 0;
		c->failed = 0;
		e->dep_round++;
		for (j = e->deps; j != NULL; j = j->lnext)
			engine_cand_cb(j, c);
	}
	if (c->failed) {
		free(c->j);
		return -1;	/* e->deps_all stays: tried again at the next pass */
	}
	e->ndep_ids = 0;
	e->deps_all = 0;
	return 0;
}

/*
 * Resolves every pending job's --after: marks whom it still waits for, and
 * cancels those that can never run.  Their ends go in one commit (each on
 * its own if the group fails), their environments in another: a job that
 * 100,000 others wait for ends in seconds, not one commit per dependent.
 */
void
engine_resolve(struct engine *e, double now)
{
	struct engine_doomed *d = NULL, *nd;
	struct engine_cands c;
	struct job *j;
	size_t n = 0, cap = 0, i, k;
	char why[160];
	int r, grouped;

	if (engine_dep_cands(e, &c) == -1) {
		e->deps_all = 1;
		log_warnx("out of memory resolving --after; trying again");
		return;
	}
	for (k = 0; k < c.n; k++) {
		j = c.j[k];
		if ((r = engine_deps(e, j, why, sizeof(why))) != -1) {
			if (r == 1) {
				/* ready: from the jobs waiting for --after to the order */
				engine_queue_out(e, j);
				j->dep_wait = 0;
				engine_queue_in(e, j);
			}
			continue;
		}
		if (n == cap) {
			cap = cap ? cap * 2 : 64;
			if ((nd = realloc(d, cap * sizeof(*d))) == NULL) {
				e->deps_all = 1;	/* the rest at the next pass */
				break;
			}
			d = nd;
		}
		d[n].job = j;
		snprintf(d[n].why, sizeof(d[n].why), "%s", why);
		n++;
	}
	free(c.j);
	if (n == 0) {
		free(d);
		return;
	}
	/* a crash before the commit: the next nvqd resolves them again */
	grouped = store_lazy_begin(e->store) == 0;
	for (i = 0; i < n && grouped; i++)
		grouped = engine_dep_end(e, &d[i], now) == 0;
	if (store_lazy_commit(e->store) == -1)
		grouped = 0;
	store_lazy_begin(e->store);
	for (i = 0; i < n; i++) {
		j = d[i].job;
		if (!grouped && engine_dep_end(e, &d[i], now) == -1) {
			engine_dep_note(e, j->id);	/* it stays pending; tried again */
			continue;
		}
		log_info("job %lld CANCELLED: %s", (long long)j->id, d[i].why);
		store_env_delete(e->store, j->id);
		engine_notice(e, j);
		engine_drop(e, j);
	}
	store_lazy_commit(e->store);
	free(d);
	engine_kick(e);	/* for jobs that ran --after these */
}
