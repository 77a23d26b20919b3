-- 014_slurm_step.sql: Slurm's steps that nvqd on their node follows as jobs
-- of its own (the SPANK plugin's nvqd= argument): the step, "batch" or its
-- number; slurm_id is their Slurm job. NULL for every other job.
ALTER TABLE jobs ADD COLUMN slurm_step TEXT;
