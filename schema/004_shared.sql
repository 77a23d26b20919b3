-- 004_shared.sql: jobs that outlive a reboot of the machine, and their
-- cgroups.
--
-- The jobs table is rebuilt (SQLite cannot change a CHECK constraint in
-- place) to admit two more states: NODE_FAIL (the machine restarted while
-- the job ran, so its end is unknown) and SUSPENDED (kept for suspend and
-- resume). Its columns and ids are kept as they were.
CREATE TABLE jobs_new (
	id		INTEGER PRIMARY KEY AUTOINCREMENT,
	uid		INTEGER NOT NULL,	-- submitter, from SO_PEERCRED
	gid		INTEGER NOT NULL,
	user		TEXT NOT NULL,		-- submitter's login name
	name		TEXT NOT NULL,		-- -n, else the command's base name
	command		TEXT NOT NULL,		-- the command line, shell-quoted
	argv		BLOB NOT NULL,		-- the arguments, each ending with a NUL
	cwd		TEXT NOT NULL,
	state		TEXT NOT NULL CHECK (state IN ('PENDING', 'RUNNING',
			    'SUSPENDED', 'COMPLETED', 'FAILED', 'CANCELLED', 'TIMEOUT',
			    'NODE_FAIL')),
	gpus		INTEGER NOT NULL,	-- GPUs asked for
	mem_per_gpu	INTEGER,		-- bytes per GPU; NULL: a whole GPU
	priority	INTEGER NOT NULL DEFAULT 0,
	time_limit	INTEGER,		-- seconds; NULL: none
	after		TEXT,			-- --after ids, comma-separated
	stdout_path	TEXT NOT NULL,
	stderr_path	TEXT NOT NULL,
	gpu_uuids	TEXT,			-- the GPUs it ran on, comma-separated
	submitted_at	REAL NOT NULL,
	started_at	REAL,
	ended_at	REAL,
	exit_code	INTEGER,		-- when it exited
	signal		INTEGER,		-- when a signal ended it
	reason		TEXT,			-- why it ended as it did
	pid		INTEGER,		-- its supervisor, while RUNNING
	pid_start	INTEGER,		-- that process's start time, in clock ticks
	ending		TEXT,			-- CANCELLED or TIMEOUT once asked to stop
	groups		TEXT,			-- see 002_groups.sql
	held		INTEGER NOT NULL DEFAULT 0,	-- see 003_locks.sql
	-- new in 004:
	requeue		INTEGER NOT NULL DEFAULT 0,	-- submitted with --requeue
	boot_id		TEXT,			-- the machine's boot id when it started
	cgroup		TEXT,			-- its cgroup v2 folder while RUNNING
	restarts	INTEGER NOT NULL DEFAULT 0	-- times it went back to PENDING
);
INSERT INTO jobs_new (id, uid, gid, user, name, command, argv, cwd, state, gpus,
    mem_per_gpu, priority, time_limit, after, stdout_path, stderr_path, gpu_uuids,
    submitted_at, started_at, ended_at, exit_code, signal, reason, pid, pid_start,
    ending, groups, held)
SELECT id, uid, gid, user, name, command, argv, cwd, state, gpus, mem_per_gpu,
    priority, time_limit, after, stdout_path, stderr_path, gpu_uuids, submitted_at,
    started_at, ended_at, exit_code, signal, reason, pid, pid_start, ending, groups,
    held FROM jobs;
-- ids are never reused, also those of the newest jobs if they were deleted
UPDATE sqlite_sequence SET seq = max(seq, coalesce((SELECT seq FROM sqlite_sequence
    WHERE name = 'jobs'), 0)) WHERE name = 'jobs_new';
DROP TABLE jobs;
ALTER TABLE jobs_new RENAME TO jobs;
CREATE INDEX jobs_state ON jobs (state);
CREATE INDEX jobs_user_ended ON jobs (user, ended_at);

-- How each run ended: COMPLETED, FAILED, CANCELLED, TIMEOUT, or NODE_FAIL
-- for a run the machine's restart cut short (its job may have run again).
ALTER TABLE runs ADD COLUMN state TEXT;
