#!/usr/bin/env bash
# after.sh [WAITING] [JOBS] [NVQD...]: what jobs waiting for --after cost the
# rest of the queue.  WAITING (100000) jobs wait --after a job that sleeps
# (copies of one, made in the database while nvqd is stopped); then JOBS
# (200) trivial jobs of no GPU are run one after another (submit, wait),
# and their time and nvqd's CPU time are measured: each of their ends used to make nvqd look at
# every waiting job.  For each nvqd given (build/nvqd), in one run.
set -euo pipefail
cd "$(dirname "$0")/.."
WAITING=${1:-100000}; JOBS=${2:-200}; shift 2 || true
BUILDS=("$@"); [ ${#BUILDS[@]} -gt 0 ] || BUILDS=(build/nvqd)
. bench/lib.sh
make -s
W=$(mktemp -d /tmp/nvq-after.XXXXXX)
trap 'kill $(jobs -p) 2>/dev/null || true; pkill -f "$W/" 2>/dev/null || true; rm -rf "$W"' EXIT
NVQ=build/nvq

for b in "${BUILDS[@]}"; do
	d=$W/$(echo "$b" | tr / _)
	bench_nvqd "$d" "$b" "sync = normal" "[limits]" "max_pending = 0"
	first=$($NVQ -s "$d/sock" submit --parsable -g 0 sh -c 'sleep 3600' "$W/")
	one=$($NVQ -s "$d/sock" submit --parsable -g 0 --after "$first" true)
	bench_stop
	sqlite3 "$d/nvq.db" "WITH RECURSIVE k(i) AS (SELECT $one + 1 UNION ALL SELECT i + 1
	    FROM k WHERE i < $one + $WAITING - 1) INSERT INTO jobs (id, uid, gid, user, name,
	    command, argv, cwd, state, gpus, priority, after, stdout_path, stderr_path,
	    submitted_at) SELECT i, uid, gid, user, name, command, argv, cwd, state, gpus,
	    priority, after, stdout_path, stderr_path, submitted_at FROM jobs, k WHERE id = $one"
	bench_start "$d" "$b"
	t0=$(bench_cpu_ticks)
	a=$(date +%s%N)
	for _ in $(seq "$JOBS"); do
		i=$($NVQ -s "$d/sock" submit --parsable -g 0 true)
		$NVQ -s "$d/sock" wait "$i" > /dev/null
	done
	z=$(date +%s%N)
	t1=$(bench_cpu_ticks)
	echo "$b: $WAITING waiting --after; $JOBS jobs one after another: $(( (z - a) / 1000000 / JOBS )) ms" \
	    "each, nvqd CPU $(awk -v a="$t0" -v b="$t1" -v n="$JOBS" 'BEGIN { printf "%.2f", (b - a) * 10 / n }') ms each"
	bench_stop
	pkill -9 -f "$W/" 2> /dev/null || true
done
