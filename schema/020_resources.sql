-- 020_resources.sql: the host's CPUs and memory a job holds while it runs
-- (issue 42), so that sqlite3 shows what a finished job had.  cpus is what
-- it asked with -c (--cpus-per-task) or the default it was given ([resources]
-- cpus_per_gpu; 1 for a job of no GPU); host_mem the bytes of host memory it
-- may use (--mem, or --mem-per-cpu times cpus, or [resources] default_mem),
-- 0 for no limit of its own; mem_per_cpu the --mem-per-cpu it asked, in
-- bytes.  NULL in rows of jobs submitted before this file.
ALTER TABLE jobs ADD COLUMN cpus INTEGER;
ALTER TABLE jobs ADD COLUMN host_mem INTEGER;
ALTER TABLE jobs ADD COLUMN mem_per_cpu INTEGER;
