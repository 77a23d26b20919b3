-- 010_fairshare.sql: what each run used of the GPUs ([scheduler] fairshare
-- and GPU-hours in reports).
-- gpu_share: the GPUs' worth the run held: on each of its GPUs, the memory
-- it was granted over the GPU's (a whole GPU counts 1), summed; 0 for a job
-- of no GPU; NULL for runs from before this column.
-- suspended_time: seconds of the run spent SUSPENDED (its memory out of the
-- GPU).  A run's GPU-hours:
--   gpu_share * (ended_at - started_at - suspended_time) / 3600
ALTER TABLE runs ADD COLUMN gpu_share REAL;
ALTER TABLE runs ADD COLUMN suspended_time REAL NOT NULL DEFAULT 0;
CREATE INDEX runs_ended ON runs (ended_at);
