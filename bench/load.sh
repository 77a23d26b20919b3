#!/usr/bin/env bash
# load.sh: CLIENTS clients submitting SUBMITS jobs each, at once, to one
# nvqd; the acknowledgement latency (connect, SUBMIT, reply with the
# committed id) of every submit, with [daemon] sync = full (each submit on
# disk before its reply) and sync = normal.  The jobs (`true`, no GPU) run
# while others are submitted, at most 8 at a time.  Prints each round and
# the medians over ROUNDS rounds.
# Usage: bench/load.sh [CLIENTS] [SUBMITS] [ROUNDS]
set -euo pipefail
cd "$(dirname "$0")/.."
CLIENTS=${1:-50}
SUBMITS=${2:-200}
ROUNDS=${3:-3}
# NVQD_BUILDS: nvqd binaries to compare, round by round in turn (default build/nvqd)
NVQD_BUILDS=${NVQD_BUILDS:-build/nvqd}
. bench/lib.sh
bench_load_helper
W=$(mktemp -d /tmp/nvq-load.XXXXXX)
trap 'kill $(jobs -p) 2>/dev/null || true; rm -rf "$W"' EXIT
echo "$CLIENTS clients x $SUBMITS submits, $ROUNDS rounds; $(nproc) CPUs; nvqd: $NVQD_BUILDS"
for sync in full normal; do
	for r in $(seq "$ROUNDS"); do
		k=0
		for nvqd in $NVQD_BUILDS; do
			k=$((k + 1))
			bench_nvqd "$W/d" "$nvqd" "sync = $sync" "[gpus]" "virtual = 2x16G" "[limits]" \
			    "max_running_jobs = 8"
			pid=$BENCH_PID
			build/load "$W/d/sock" "$CLIENTS" "$SUBMITS" "$W/d/ids" > "$W/d/out"
			kill "$pid"; wait "$pid" || true
			stored=$(sqlite3 "$W/d/nvq.db" "SELECT count(*) FROM jobs")
			echo "sync=$sync round $r $nvqd: $(grep -E '^(acknowledged|per_second|p50_ms|p99_ms)' "$W/d/out" | tr '\n' ' ')stored $stored"
			grep '^p50_ms' "$W/d/out" | cut -d' ' -f2 >> "$W/p50.$sync.$k"
			grep '^p99_ms' "$W/d/out" | cut -d' ' -f2 >> "$W/p99.$sync.$k"
			grep '^per_second' "$W/d/out" | cut -d' ' -f2 >> "$W/rate.$sync.$k"
		done
	done
	k=0
	for nvqd in $NVQD_BUILDS; do
		k=$((k + 1))
		echo "sync=$sync $nvqd medians: p50 $(median < "$W/p50.$sync.$k") ms, p99 $(median < "$W/p99.$sync.$k") ms, $(median < "$W/rate.$sync.$k") submits/s"
	done
done
