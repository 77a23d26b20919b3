#!/usr/bin/env bash
# shim.sh: how fast trivial jobs go through nvqd end to end (submitted at
# once by bench/load.c, `true`, no GPU, [limits] max_running_jobs = 16),
# for each folder of DIRS holding an nvqd and its nvq-shim, round by round
# in turn: the seconds from the first submit until every job is COMPLETED.
# Usage: DIRS="A B" bench/shim.sh [JOBS] [ROUNDS]
set -euo pipefail
cd "$(dirname "$0")/.."
N=${1:-500}
ROUNDS=${2:-5}
DIRS=${DIRS:-build}
. bench/lib.sh
bench_load_helper
W=$(mktemp -d /tmp/nvq-shim.XXXXXX)
trap 'kill $(jobs -p) 2>/dev/null || true; rm -rf "$W"' EXIT
echo "$N trivial jobs end to end, $ROUNDS rounds, $(nproc) CPUs; nvqd and nvq-shim from: $DIRS"
for r in $(seq "$ROUNDS"); do
	k=0
	for d in $DIRS; do
		k=$((k + 1))
		bench_nvqd "$W/d" "$d/nvqd" "sync = normal" "[limits]" "max_running_jobs = 16"
		pid=$BENCH_PID
		t0=$(date +%s.%N)
		build/load "$W/d/sock" 1 "$N" "$W/d/ids" > /dev/null
		until [ "$(sqlite3 "$W/d/nvq.db" "SELECT count(*) FROM jobs WHERE state = 'COMPLETED'")" = "$N" ]; do
			sleep 0.05
		done
		t1=$(date +%s.%N)
		kill "$pid"; wait "$pid" || true
		s=$(awk -v a="$t0" -v b="$t1" 'BEGIN { printf "%.2f", b - a }')
		echo "round $r $d: $s s"
		echo "$s" >> "$W/t.$k"
	done
done
k=0
for d in $DIRS; do
	k=$((k + 1))
	echo "$d: median $(median < "$W/t.$k") s for $N jobs"
done
