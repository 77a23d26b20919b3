-- 019_stats.sql: nvq stats' failures and switches by when they ended, so
-- that each of its sums reads the rows of its window (runs have runs_ended
-- and runs_started), not every job of the history: the failures among
-- them only, in an index of their own.
CREATE INDEX jobs_failed_ended ON jobs (ended_at)
    WHERE state IN ('FAILED', 'TIMEOUT', 'NODE_FAIL', 'CANCELLED');
CREATE INDEX switches_ended ON switches (ended_at);
