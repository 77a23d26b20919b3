/*
 * store_energy.c: a run's energy per GPU (schema/023_energy.sql): written
 * for the job's open run while it goes (engine_energy.c, every poll and at
 * its end), the run's total kept beside it in runs, and read back by a
 * restarted nvqd.  Returns 0 or -1, as the rest of the store.
 */
#include <math.h>

#include "store_int.h"

int
store_energy_put(struct store *st, int64_t id, const char *uuid, double joules,
    const char *how, int64_t counter)
{
	sqlite3_stmt *s = store_prepare(st, "INSERT INTO run_energy (run_id, gpu_uuid, energy, "
	    "how, counter) SELECT id, ?2, ?3, ?4, ?5 FROM runs WHERE job_id = ?1 AND "
	    "ended_at IS NULL ON CONFLICT (run_id, gpu_uuid) DO UPDATE SET "
	    "energy = excluded.energy, how = excluded.how, counter = excluded.counter");

	if (s == NULL)
		return -1;
	sqlite3_bind_int64(s, 1, id);
	sqlite3_bind_text(s, 2, uuid, -1, SQLITE_STATIC);
	if (joules >= 0 && isfinite(joules))
		sqlite3_bind_double(s, 3, joules);
	sqlite3_bind_text(s, 4, how, -1, SQLITE_STATIC);
	if (counter >= 0)
		sqlite3_bind_int64(s, 5, counter);
	return store_done(st, s);
}

int
store_energy_total(struct store *st, int64_t id)
{
	/* unknown (NULL) where any GPU's is; how: the least sure of its GPUs' */
	sqlite3_stmt *s = store_prepare(st, "UPDATE runs SET "
	    "energy = (SELECT CASE WHEN count(*) = 0 OR count(e.energy) < count(*) THEN NULL "
	    "ELSE sum(e.energy) END FROM run_energy e WHERE e.run_id = runs.id), "
	    "energy_how = (SELECT CASE max(CASE e.how WHEN 'unknown' THEN 2 WHEN 'shared' "
	    "THEN 1 ELSE 0 END) WHEN 2 THEN 'unknown' WHEN 1 THEN 'shared' WHEN 0 THEN 'alone' "
	    "END FROM run_energy e WHERE e.run_id = runs.id) "
	    "WHERE job_id = ? AND ended_at IS NULL");

	if (s == NULL)
		return -1;
	sqlite3_bind_int64(s, 1, id);
	return store_done(st, s);
}

int
store_energy_get(struct store *st, int64_t id, store_energy_cb cb, void *arg)
{
	sqlite3_stmt *s = store_prepare(st, "SELECT e.gpu_uuid, e.energy, e.how, e.counter "
	    "FROM run_energy e JOIN runs r ON r.id = e.run_id "
	    "WHERE r.job_id = ? AND r.ended_at IS NULL");
	int rc;

	if (s == NULL)
		return -1;
	sqlite3_bind_int64(s, 1, id);
	while ((rc = sqlite3_step(s)) == SQLITE_ROW)
		cb(arg, (const char *)sqlite3_column_text(s, 0),
		    sqlite3_column_type(s, 1) == SQLITE_NULL ? -1 : sqlite3_column_double(s, 1),
		    (const char *)sqlite3_column_text(s, 2),
		    sqlite3_column_type(s, 3) == SQLITE_NULL ? -1 : sqlite3_column_int64(s, 3));
	sqlite3_reset(s);
	return rc == SQLITE_DONE ? 0 : -1;
}

int
store_energy_counts(struct store *st, store_row_cb cb, void *arg)
{
	return store_rows(st, store_prepare(st, "SELECT user, joules FROM metric_energy "
	    "ORDER BY user"), cb, arg);
}
