-- 025_slurm_env.sql: what a job's start needs to set Slurm's variables
-- and send Slurm's warning before its time limit (issue 42).
-- An array's shape, on each of its tasks' rows as submitted (NULL for a
-- job of no array, and for tasks submitted before): array_count tasks,
-- indexes from array_min to array_max, array_step the stride of an array
-- given as one range A-B:STEP (1 for a list, as Slurm says it);
-- SLURM_ARRAY_TASK_COUNT, _MIN, _MAX and _STEP.
ALTER TABLE jobs ADD COLUMN array_count INTEGER;
ALTER TABLE jobs ADD COLUMN array_min INTEGER;
ALTER TABLE jobs ADD COLUMN array_max INTEGER;
ALTER TABLE jobs ADD COLUMN array_step INTEGER;
-- --signal [B:]SIG@TIME (Slurm's): warn_signal is sent warn_time seconds
-- before the time limit, to the job's main process alone where warn_batch
-- is 1 (B:), else to all its processes; NULL: no warning.  warned_at is
-- when this run was warned (NULL: not yet; a start clears it), so that a
-- restart of nvqd neither repeats nor loses it.
ALTER TABLE jobs ADD COLUMN warn_signal INTEGER;
ALTER TABLE jobs ADD COLUMN warn_time INTEGER;
ALTER TABLE jobs ADD COLUMN warn_batch INTEGER;
ALTER TABLE jobs ADD COLUMN warned_at REAL;
-- --partition and --account (sbatch's), taken only under [cluster] engine
-- = slurm and passed on to sbatch (partition over [cluster] partition);
-- NULL: not given.
ALTER TABLE jobs ADD COLUMN partition TEXT;
ALTER TABLE jobs ADD COLUMN account TEXT;
