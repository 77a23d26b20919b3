-- 022_qos.sql: a job's class (nvq submit --qos, [qos NAME] in nvq.ini,
-- Slurm's QOS): its name as submitted, or [scheduler] default_qos's when
-- none was given.  Jobs from before have none (NULL), and are of the
-- default class.  The class's priority points and whom it may preempt are
-- the configuration's, read again at each start of nvqd.
ALTER TABLE jobs ADD COLUMN qos TEXT;
-- (Numbered 021 so that it follows 020_resources.sql of the branch it merges
-- with; alone on its branch the versions run 19, then 20 for this file.)
