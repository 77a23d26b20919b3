-- 002_groups.sql: the submitter's supplementary groups, as its process had
-- them when it submitted (SO_PEERGROUPS), comma-separated; a job runs with
-- them. NULL for jobs submitted before: those get the user's groups from
-- the user database.
ALTER TABLE jobs ADD COLUMN groups TEXT;
