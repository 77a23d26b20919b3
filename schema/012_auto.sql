-- 012_auto.sql: nvq submit -m auto finds a user's last runs of a job name,
-- else of a command, through these.
CREATE INDEX jobs_uid_name ON jobs (uid, name);
CREATE INDEX jobs_uid_command ON jobs (uid, command);
