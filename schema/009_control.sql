-- 009_control.sql: control of the queue.
-- jobs.held (003), a running job's GPU lock taken back, also marks a
-- PENDING job held by nvq hold or nvq submit --hold: it does not start
-- until nvq release.  rank_at: after nvq top, the time a pending job waits
-- in order as if it had been submitted then (NULL: submitted_at).
-- gpus_allow and gpus_deny: nvq submit -w and -x, the GPUs' UUIDs,
-- comma-separated (NULL: any).
ALTER TABLE jobs ADD COLUMN rank_at REAL;
ALTER TABLE jobs ADD COLUMN gpus_allow TEXT;
ALTER TABLE jobs ADD COLUMN gpus_deny TEXT;
-- GPUs drained by nvq drain: no job starts there until nvq undrain; the
-- jobs running there finish.
CREATE TABLE drained (
	uuid	TEXT PRIMARY KEY,
	at	REAL NOT NULL,
	by	TEXT NOT NULL,
	reason	TEXT
);
