-- 013_slurm.sql: jobs nvqd hands to Slurm ([cluster] engine = slurm).
-- Slurm's job id once sbatch took the job; NULL for a job nvqd runs itself
-- (and, with engine = slurm, for one sbatch has not taken yet). Such a
-- job's runs.gpu_uuids and run_gpus.gpu_uuid name its GPUs NODE:INDEX
-- (gpu01:0), Slurm's node and the GPU's index there.
ALTER TABLE jobs ADD COLUMN slurm_id INTEGER;
CREATE INDEX jobs_slurm ON jobs (slurm_id) WHERE slurm_id IS NOT NULL;
