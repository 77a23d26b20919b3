-- 023_energy.sql: the energy each run used on each of its GPUs (issue 44),
-- from NVML's counter of the GPU's energy (nvmlDeviceGetTotalEnergyConsumption,
-- Volta and later), read every [gpus] poll and at the run's start and end.
--
-- run_energy, one row per GPU of a run, written while the run goes (at
-- each poll, so that a crash of nvqd loses at most one poll's interval)
-- and at its end:
--   energy	joules, NULL where unknown (no counter on the GPU: virtual
--		GPUs, older boards; a read that failed; jobs shared the GPU
--		where NVML gave no per-process utilisation), never 0 for unknown
--   how	how it was measured: 'alone' (the GPU's whole counter delta
--		over the intervals the run had it to itself), 'shared' (in some
--		intervals other jobs or processes used the GPU too, and each
--		interval's delta was split by the processes' SM utilisation,
--		nvmlDeviceGetProcessUtilization; evenly where none was measured,
--		and over a restart of nvqd), 'unknown'
--   counter	the GPU's counter (millijoules) when the row was last written:
--		a restarted nvqd carries a running job's energy on from there
CREATE TABLE run_energy (
	run_id		INTEGER NOT NULL REFERENCES runs (id),
	gpu_uuid	TEXT NOT NULL,
	energy		REAL,
	how		TEXT NOT NULL CHECK (how IN ('alone', 'shared', 'unknown')),
	counter		INTEGER,
	PRIMARY KEY (run_id, gpu_uuid)
) WITHOUT ROWID;

-- The run's energy over all its GPUs, written at its end: NULL when any of
-- its GPUs' is unknown (or for runs from before this file); energy_how the
-- least sure of its GPUs' (unknown, then shared, then alone).
ALTER TABLE runs ADD COLUMN energy REAL;
ALTER TABLE runs ADD COLUMN energy_how TEXT;

-- What /metrics serves as nvq_energy_joules_total{user}: the known joules
-- of every user's runs, counted as the rows grow.  A counter: it only goes
-- up (a row that turns unknown keeps what it had counted).
CREATE TABLE metric_energy (
	user		TEXT PRIMARY KEY,
	joules		REAL NOT NULL
) WITHOUT ROWID;
CREATE TRIGGER metric_energy_insert AFTER INSERT ON run_energy
    WHEN new.energy > 0 BEGIN
	INSERT INTO metric_energy (user, joules) SELECT j.user, new.energy
	    FROM runs r JOIN jobs j ON j.id = r.job_id WHERE r.id = new.run_id
	    ON CONFLICT (user) DO UPDATE SET joules = joules + excluded.joules;
END;
CREATE TRIGGER metric_energy_update AFTER UPDATE OF energy ON run_energy
    WHEN new.energy > coalesce(old.energy, 0) BEGIN
	INSERT INTO metric_energy (user, joules) SELECT j.user,
	    new.energy - coalesce(old.energy, 0)
	    FROM runs r JOIN jobs j ON j.id = r.job_id WHERE r.id = new.run_id
	    ON CONFLICT (user) DO UPDATE SET joules = joules + excluded.joules;
END;
