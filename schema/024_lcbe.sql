-- 024_lcbe.sql: a job's latency class (nvq submit --class lc|be, issue 43):
-- 1 for latency-critical (lc), whose launches best-effort jobs on its GPUs
-- give way to; 0 or NULL (jobs from before) for best-effort (be), the
-- default.  Not the same thing as qos (022): --qos orders and preempts
-- the queue, --class decides who yields on a shared GPU.  And its figures
-- as its hooks measured them, written when it ends: an lc job's launch
-- latency percentiles in nanoseconds (the upper edge of a histogram bucket a quarter of a power of two wide) (the host time from the launch call
-- into the hook to its return), a be job's time spent yielding.
ALTER TABLE jobs ADD COLUMN lc INTEGER;
ALTER TABLE jobs ADD COLUMN lc_p50_ns INTEGER;
ALTER TABLE jobs ADD COLUMN lc_p99_ns INTEGER;
ALTER TABLE jobs ADD COLUMN lc_p999_ns INTEGER;
ALTER TABLE jobs ADD COLUMN be_yield_us INTEGER;
