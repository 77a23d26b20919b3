-- 018_metrics.sql: what /metrics serves, kept up to date by triggers as
-- rows change, so that a scrape reads a few rows and never the history.
-- The triggers count every writer (nvqd's transitions, a recovery, a
-- restore, an admin's sqlite3) inside the writer's own transaction: a
-- change rolled back takes its count back with it.  This file fills the
-- tables once from the history as it is.

-- Jobs per state (nvq_jobs).
CREATE TABLE metric_jobs (
	state		TEXT PRIMARY KEY,
	n		INTEGER NOT NULL
) WITHOUT ROWID;
INSERT INTO metric_jobs (state, n) SELECT state, count(*) FROM jobs GROUP BY state;
CREATE TRIGGER metric_jobs_insert AFTER INSERT ON jobs BEGIN
	INSERT INTO metric_jobs (state, n) VALUES (new.state, 1)
	    ON CONFLICT (state) DO UPDATE SET n = n + 1;
END;
CREATE TRIGGER metric_jobs_delete AFTER DELETE ON jobs BEGIN
	UPDATE metric_jobs SET n = n - 1 WHERE state = old.state;
END;
CREATE TRIGGER metric_jobs_state AFTER UPDATE OF state ON jobs
    WHEN old.state IS NOT new.state BEGIN
	UPDATE metric_jobs SET n = n - 1 WHERE state = old.state;
	INSERT INTO metric_jobs (state, n) VALUES (new.state, 1)
	    ON CONFLICT (state) DO UPDATE SET n = n + 1;
END;

-- Histograms, cumulative as Prometheus' are: n counts the values <= le
-- (le 9e999 is +Inf: every value).  kind wait: how long each job waited
-- for its first start (its first run's start less its submit time); kind
-- run: how long each finished run ran, its time suspended not counted.
CREATE TABLE metric_buckets (
	kind		TEXT NOT NULL,
	le		REAL NOT NULL,
	n		INTEGER NOT NULL,
	PRIMARY KEY (kind, le)
) WITHOUT ROWID;
-- and the values' sum, kept the same way
CREATE TABLE metric_sums (
	kind		TEXT PRIMARY KEY,
	sum		REAL NOT NULL
) WITHOUT ROWID;
WITH w(v) AS (SELECT min(r.started_at) - j.submitted_at FROM jobs j
	JOIN runs r ON r.job_id = j.id GROUP BY j.id),
    r(v) AS (SELECT ended_at - started_at - coalesce(suspended_time, 0) FROM runs
	WHERE ended_at IS NOT NULL),
    le(le) AS (VALUES (1), (10), (60), (300), (1800), (3600), (21600), (86400), (9e999))
INSERT INTO metric_buckets (kind, le, n)
    SELECT 'wait', le, (SELECT count(*) FROM w WHERE v <= le) FROM le
    UNION ALL SELECT 'run', le, (SELECT count(*) FROM r WHERE v <= le) FROM le;
INSERT INTO metric_sums (kind, sum) VALUES
    ('wait', coalesce((SELECT sum(v) FROM (SELECT min(r.started_at) - j.submitted_at AS v
	FROM jobs j JOIN runs r ON r.job_id = j.id GROUP BY j.id)), 0)),
    ('run', coalesce((SELECT sum(ended_at - started_at - coalesce(suspended_time, 0))
	FROM runs WHERE ended_at IS NOT NULL), 0));

-- A job's first run counts its wait; that run gone with no other (a start
-- its supervisor never took) takes it back.
CREATE TRIGGER metric_wait_insert AFTER INSERT ON runs
    WHEN NOT EXISTS (SELECT 1 FROM runs WHERE job_id = new.job_id AND id <> new.id) BEGIN
	UPDATE metric_buckets SET n = n + 1 WHERE kind = 'wait' AND
	    le >= new.started_at - (SELECT submitted_at FROM jobs WHERE id = new.job_id);
	UPDATE metric_sums SET sum = sum + new.started_at -
	    (SELECT submitted_at FROM jobs WHERE id = new.job_id) WHERE kind = 'wait';
END;
CREATE TRIGGER metric_wait_delete AFTER DELETE ON runs
    WHEN NOT EXISTS (SELECT 1 FROM runs WHERE job_id = old.job_id) BEGIN
	UPDATE metric_buckets SET n = n - 1 WHERE kind = 'wait' AND
	    le >= old.started_at - (SELECT submitted_at FROM jobs WHERE id = old.job_id);
	UPDATE metric_sums SET sum = sum - old.started_at +
	    (SELECT submitted_at FROM jobs WHERE id = old.job_id) WHERE kind = 'wait';
END;

-- A run counts once it has ended; a change of its times moves it.
CREATE TRIGGER metric_run_insert AFTER INSERT ON runs WHEN new.ended_at IS NOT NULL BEGIN
	UPDATE metric_buckets SET n = n + 1 WHERE kind = 'run' AND
	    le >= new.ended_at - new.started_at - coalesce(new.suspended_time, 0);
	UPDATE metric_sums SET sum = sum + new.ended_at - new.started_at -
	    coalesce(new.suspended_time, 0) WHERE kind = 'run';
END;
CREATE TRIGGER metric_run_old AFTER UPDATE OF started_at, ended_at, suspended_time ON runs
    WHEN old.ended_at IS NOT NULL BEGIN
	UPDATE metric_buckets SET n = n - 1 WHERE kind = 'run' AND
	    le >= old.ended_at - old.started_at - coalesce(old.suspended_time, 0);
	UPDATE metric_sums SET sum = sum - old.ended_at + old.started_at +
	    coalesce(old.suspended_time, 0) WHERE kind = 'run';
END;
CREATE TRIGGER metric_run_new AFTER UPDATE OF started_at, ended_at, suspended_time ON runs
    WHEN new.ended_at IS NOT NULL BEGIN
	UPDATE metric_buckets SET n = n + 1 WHERE kind = 'run' AND
	    le >= new.ended_at - new.started_at - coalesce(new.suspended_time, 0);
	UPDATE metric_sums SET sum = sum + new.ended_at - new.started_at -
	    coalesce(new.suspended_time, 0) WHERE kind = 'run';
END;
CREATE TRIGGER metric_run_delete AFTER DELETE ON runs WHEN old.ended_at IS NOT NULL BEGIN
	UPDATE metric_buckets SET n = n - 1 WHERE kind = 'run' AND
	    le >= old.ended_at - old.started_at - coalesce(old.suspended_time, 0);
	UPDATE metric_sums SET sum = sum - old.ended_at + old.started_at +
	    coalesce(old.suspended_time, 0) WHERE kind = 'run';
END;

-- Suspends and resumes, done (ok 1) or failed, and the seconds they took.
CREATE TABLE metric_switches (
	kind		TEXT NOT NULL,
	ok		INTEGER NOT NULL,
	n		INTEGER NOT NULL,
	seconds		REAL NOT NULL,
	PRIMARY KEY (kind, ok)
) WITHOUT ROWID;
INSERT INTO metric_switches (kind, ok, n, seconds)
    SELECT k.kind, o.ok, (SELECT count(*) FROM switches s WHERE s.kind = k.kind AND
	(s.ok <> 0) = o.ok), (SELECT coalesce(sum(s.seconds), 0) FROM switches s
	WHERE s.kind = k.kind AND (s.ok <> 0) = o.ok)
    FROM (SELECT 'suspend' AS kind UNION ALL SELECT 'resume') k,
	(SELECT 0 AS ok UNION ALL SELECT 1) o;
CREATE TRIGGER metric_switches_insert AFTER INSERT ON switches BEGIN
	UPDATE metric_switches SET n = n + 1, seconds = seconds + new.seconds
	    WHERE kind = new.kind AND ok = (new.ok <> 0);
END;
CREATE TRIGGER metric_switches_delete AFTER DELETE ON switches BEGIN
	UPDATE metric_switches SET n = n - 1, seconds = seconds - old.seconds
	    WHERE kind = old.kind AND ok = (old.ok <> 0);
END;

-- /api/history's queue waits over a day: the runs started since a time.
CREATE INDEX runs_started ON runs (started_at);
