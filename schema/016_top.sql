-- 016_top.sql: nvq top moves a job among its owner's jobs only.
-- top_at: after nvq top, the time a pending job takes among its owner's
-- waiting jobs, just before the first of them of its priority (NULL: none).
-- Across users it waits as submitted (submitted_at, or rank_at after nvq
-- restart): its aging counts from there, never from another job's time.
-- Before, nvq top wrote rank_at before every pending job of anyone, and
-- the job aged from there: such a rank_at (one before submitted_at; nvq
-- restart's is later) becomes the job's top_at.
ALTER TABLE jobs ADD COLUMN top_at REAL;
UPDATE jobs SET top_at = rank_at, rank_at = NULL WHERE rank_at < submitted_at;
