-- 003_locks.sql: GPU locks and the hook's reports.

-- 1 while the job's GPU locks are taken back with `nvq hold`; it gets them
-- again with `nvq release` (kept across restarts of nvqd).
ALTER TABLE jobs ADD COLUMN held INTEGER NOT NULL DEFAULT 0;

-- One row per GPU of each run: the most device memory the job's processes
-- held there at once, in bytes (the hook's reports and NVML's figures,
-- whichever saw more).
CREATE TABLE run_gpus (
	run_id		INTEGER NOT NULL REFERENCES runs (id),
	gpu_uuid	TEXT NOT NULL,
	peak_gpu_mem	INTEGER NOT NULL,
	PRIMARY KEY (run_id, gpu_uuid)
);
