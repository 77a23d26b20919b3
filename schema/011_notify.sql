-- 011_notify.sql: who hears of a job's end.
-- notify: nvq submit --notify, a shell command run as the job's owner once
-- the job has ended; mail_user: --mail-user, an address sendmail mails then.
-- How each notifier ended is an event (state NOTIFY) of the job.
ALTER TABLE jobs ADD COLUMN notify TEXT;
ALTER TABLE jobs ADD COLUMN mail_user TEXT;
