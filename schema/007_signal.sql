-- 007_signal.sql: the signal a job gets first when it is preempted by
-- stopping it (--signal; preempt = requeue, or a job that cannot be
-- suspended), kill_grace before SIGKILL.  NULL: SIGUSR1.
ALTER TABLE jobs ADD COLUMN preempt_signal INTEGER;
