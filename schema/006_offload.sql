-- 006_offload.sql: the hook's own share of a switch, and the time limit
-- that waits while a job is suspended.
--
-- With [scheduler] offload = on, the hook moves a job's large allocations
-- to host memory and back itself (at the link's speed); the driver's
-- checkpoint then moves only the rest.
ALTER TABLE switches ADD COLUMN hook_seconds REAL;	-- the slowest process's move
ALTER TABLE switches ADD COLUMN hook_bytes INTEGER;	-- what the hooks moved, summed
-- Seconds SUSPENDED since the job last started: its time limit counts
-- only the time it runs.
ALTER TABLE jobs ADD COLUMN run_suspended REAL NOT NULL DEFAULT 0;
