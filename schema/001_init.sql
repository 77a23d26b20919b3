-- 001_init.sql: jobs, their state transitions, and their runs.
-- Times are seconds since the Unix epoch (REAL, with fractions), so that
-- datetime(submitted_at, 'unixepoch') reads them. Sizes are bytes.

-- One row per submitted job.
CREATE TABLE jobs (
	id		INTEGER PRIMARY KEY AUTOINCREMENT,
	uid		INTEGER NOT NULL,	-- submitter, from SO_PEERCRED
	gid		INTEGER NOT NULL,
	user		TEXT NOT NULL,		-- submitter's login name
	name		TEXT NOT NULL,		-- -n, else the command's base name
	command		TEXT NOT NULL,		-- the command line, shell-quoted
	argv		BLOB NOT NULL,		-- the arguments, each ending with a NUL
	cwd		TEXT NOT NULL,
	state		TEXT NOT NULL CHECK (state IN ('PENDING', 'RUNNING',
			    'COMPLETED', 'FAILED', 'CANCELLED', 'TIMEOUT')),
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
	ending		TEXT			-- CANCELLED or TIMEOUT once asked to stop
);
CREATE INDEX jobs_state ON jobs (state);
CREATE INDEX jobs_user_ended ON jobs (user, ended_at);

-- One row per state transition: what happened to a job, and when.
CREATE TABLE events (
	id		INTEGER PRIMARY KEY,
	job_id		INTEGER NOT NULL REFERENCES jobs (id),
	at		REAL NOT NULL,
	state		TEXT NOT NULL,		-- the state entered
	reason		TEXT
);
CREATE INDEX events_job ON events (job_id);

-- One row per execution of a job.
CREATE TABLE runs (
	id		INTEGER PRIMARY KEY,
	job_id		INTEGER NOT NULL REFERENCES jobs (id),
	gpu_uuids	TEXT NOT NULL,		-- comma-separated; '' for none
	gpus		INTEGER NOT NULL,
	mem_per_gpu	INTEGER,		-- bytes granted per GPU
	started_at	REAL NOT NULL,
	ended_at	REAL,
	exit_code	INTEGER,
	signal		INTEGER,
	cpu_time	REAL,			-- user + system seconds
	max_rss		INTEGER,		-- bytes, largest process
	peak_gpu_mem	INTEGER			-- bytes; filled in by the hook
);
CREATE INDEX runs_job ON runs (job_id);
