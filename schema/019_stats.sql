-- 019_stats.sql: failures and switches by when they ended, so that each of
-- nvq stats' sums reads the rows of its window (runs have runs_ended and
-- runs_started), not every job of the history, and nvq restart --failed
-- the failures of its user, not every job the user ran.
CREATE INDEX jobs_failed_ended ON jobs (ended_at)
    WHERE state IN ('FAILED', 'TIMEOUT', 'NODE_FAIL', 'CANCELLED');
CREATE INDEX jobs_uid_failed ON jobs (uid, ended_at)
    WHERE state IN ('FAILED', 'TIMEOUT', 'NODE_FAIL');
CREATE INDEX switches_ended ON switches (ended_at);
