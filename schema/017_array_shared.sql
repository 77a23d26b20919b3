-- 017_array_shared.sql: an array's tasks share one copy of what their
-- submit gave them all, so that an --array of N tasks does not store its
-- command N times.  A task other than the first whose command is the
-- array's (--array; --stdin's tasks have commands of their own) keeps ''
-- in command and a zero-length argv: its command is its first task's
-- (the row whose id is its array_id).  job_commands reads every job's
-- command so.  Their environment, in <database>.private, is stored once
-- too: array_env (by array_id; an nvq restart's, of any jobs, under a
-- key below 0), with a task_env row per job while it is active; it goes
-- with the last of them.
CREATE VIEW job_commands AS
	SELECT j.id AS id,
	    CASE WHEN j.array_id IS NOT NULL AND j.command = '' THEN a.command
	    ELSE j.command END AS command,
	    CASE WHEN j.array_id IS NOT NULL AND length(j.argv) = 0 THEN a.argv
	    ELSE j.argv END AS argv
	FROM jobs j LEFT JOIN jobs a ON a.id = j.array_id;
