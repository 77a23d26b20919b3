-- 005_suspend.sql: suspend and resume (nvq suspend, preemption, timeslice turns).
--
-- A SUSPENDED job's processes live on; the CUDA driver holds its GPU memory
-- in host memory (cuCheckpointProcessCheckpoint) until it resumes on the
-- same GPUs.

-- While SUSPENDED: since when, and whether it waits for `nvq resume`
-- (suspended by a user) or resumes on its own once it fits (preempted, or
-- its turn on a timeslice GPU ended).
ALTER TABLE jobs ADD COLUMN suspended_at REAL;
ALTER TABLE jobs ADD COLUMN suspend_hold INTEGER NOT NULL DEFAULT 0;
-- The processes checkpointed, comma-separated pids: set from the moment a
-- suspend begins until its resume has ended, so that an nvqd restarted in
-- between can put them back to running.
ALTER TABLE jobs ADD COLUMN ckpt_pids TEXT;
-- Seconds spent SUSPENDED, over all its runs.
ALTER TABLE jobs ADD COLUMN suspended_time REAL NOT NULL DEFAULT 0;

-- One row per suspend or resume, done or failed.
CREATE TABLE switches (
	id		INTEGER PRIMARY KEY,
	job_id		INTEGER NOT NULL REFERENCES jobs (id),
	kind		TEXT NOT NULL CHECK (kind IN ('suspend', 'resume')),
	why		TEXT NOT NULL,		-- user, preempt, timeslice, restart
	by_job		INTEGER,		-- preempt, timeslice: the job it gave way to
	gpu_uuids	TEXT NOT NULL,
	started_at	REAL NOT NULL,		-- asked
	ended_at	REAL NOT NULL,		-- done: the GPU free (suspend), the job running (resume)
	seconds		REAL NOT NULL,		-- ended_at - started_at
	driver_seconds	REAL,			-- of which in the driver's checkpoint calls
	bytes		INTEGER,		-- GPU memory moved out or back
	pids		TEXT,
	ok		INTEGER NOT NULL,
	error		TEXT			-- why it failed; the job was left running or suspended
);
CREATE INDEX switches_job ON switches (job_id);
