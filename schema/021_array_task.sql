-- 021_array_task.sql: two lookups of issue 42 in O(log n).  An array's task found by its index (nvq's A_I, as
-- in Slurm: `nvq log 23_7`, `--dependency afterok:23_7`) in O(log n), not
-- by reading every task of the array.
CREATE INDEX jobs_array_task ON jobs (array_id, array_index) WHERE array_id IS NOT NULL;
-- --dependency singleton: a user's active jobs of a name, found without
-- reading the history of that name (jobs_uid_name holds every job).
CREATE INDEX jobs_active_name ON jobs (uid, name) WHERE state IN ('PENDING', 'RUNNING', 'SUSPENDED');
