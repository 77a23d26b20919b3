-- 008_array.sql: job arrays (nvq submit --array, --stdin): the tasks of
-- one submit share array_id, the id of its first task; array_index is the
-- task's index (NVQ_ARRAY_INDEX); array_limit, if set, is how many of its
-- tasks may run at once (--array ...%N).  NULL for jobs of no array.
ALTER TABLE jobs ADD COLUMN array_id INTEGER;
ALTER TABLE jobs ADD COLUMN array_index INTEGER;
ALTER TABLE jobs ADD COLUMN array_limit INTEGER;
CREATE INDEX jobs_array ON jobs (array_id) WHERE array_id IS NOT NULL;
