-- 020_array_task.sql: an array's task found by its index (nvq's A_I, as
-- in Slurm: `nvq log 23_7`, `--dependency afterok:23_7`) in O(log n), not
-- by reading every task of the array.
CREATE INDEX jobs_array_task ON jobs (array_id, array_index) WHERE array_id IS NOT NULL;
