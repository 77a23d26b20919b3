#!/usr/bin/env bash
# fsync.sh: flushes to disk (fsync and fdatasync, counted with strace -f)
# per submitted job, with [daemon] sync = full, for CLIENTS submitting at
# once (bench/load.c; 1 and 8 by default), for each nvqd in NVQD_BUILDS.
# The jobs do not start (a first job of the same user holds the only slot
# of [limits] max_running_jobs), so the count is the submits' alone.
# Then per finished job: 100 trivial jobs run one after another (the
# holder cancelled), from the cancel to the last one's end.
# Each count is split into the flushes of nvqd's loop thread (what a submit
# or a job's start waits for) and those of its other threads (the WAL
# checkpoints, nvqd/store/checkpoint.c), which overlap with the loop's work.
# Usage: bench/fsync.sh [SUBMITS_PER_CLIENT] [CLIENTS...]
set -euo pipefail
cd "$(dirname "$0")/.."
N=${1:-200}; shift || true
CLIENTS=${*:-1 8}
NVQD_BUILDS=${NVQD_BUILDS:-build/nvqd}
command -v strace > /dev/null || { echo "fsync.sh needs strace"; exit 2; }
. bench/lib.sh
bench_load_helper
W=$(mktemp -d /tmp/nvq-fsync.XXXXXX)
# FILE PID: "ALL LOOP" flushes in strace -f's output, LOOP those of thread PID
flushes() {
	awk -v pid="$2" '/ (fsync|fdatasync)\(/ { n++; if ($1 == pid) l++ } END { print n + 0, l + 0 }' "$1"
}
trap 'kill $(jobs -p) 2>/dev/null || true; pkill -f "$W/" 2>/dev/null || true; rm -rf "$W"' EXIT
echo "flushes per submitted job, sync = full, $N submits per client; $(nproc) CPUs"
for c in $CLIENTS; do
	for nvqd in $NVQD_BUILDS; do
		bench_nvqd "$W/d" "$nvqd" "sync = full" "[limits]" "max_running_jobs = 1"
		pid=$BENCH_PID
		build/nvq -s "$W/d/sock" submit -g 0 sh -c "sleep 600" "$W/" > /dev/null
		sleep 0.5
		strace -f -e trace=fsync,fdatasync -p "$pid" -o "$W/d/strace" 2> /dev/null &
		spid=$!
		sleep 0.5
		build/load "$W/d/sock" "$c" "$N" "$W/d/ids" > "$W/d/out"
		kill -INT "$spid"; wait "$spid" 2> /dev/null || true
		kill "$pid"; wait "$pid" || true
		read -r flushes loop < <(flushes "$W/d/strace" "$pid")
		acked=$(awk '$1 == "acknowledged" { print $2 }' "$W/d/out")
		echo "$nvqd, $c client(s): $acked submits, $flushes flushes, $(awk -v f="$flushes" -v n="$acked" 'BEGIN { printf "%.2f", f / n }') per job ($(awk -v f="$loop" -v n="$acked" 'BEGIN { printf "%.2f", f / n }') in the loop's thread); $(grep -E '^per_second' "$W/d/out")"
	done
done
for nvqd in $NVQD_BUILDS; do
	bench_nvqd "$W/d" "$nvqd" "sync = full" "[limits]" "max_running_jobs = 1"
	pid=$BENCH_PID
	h=$(build/nvq -s "$W/d/sock" submit --parsable -g 0 sh -c "sleep 600" "$W/")
	for i in $(seq 100); do build/nvq -s "$W/d/sock" submit -g 0 true > /dev/null; done
	strace -f -e trace=fsync,fdatasync -p "$pid" -o "$W/d/strace" 2> /dev/null &
	spid=$!
	sleep 0.5
	build/nvq -s "$W/d/sock" cancel "$h" > /dev/null
	until [ "$(sqlite3 "$W/d/nvq.db" "SELECT count(*) FROM jobs WHERE state = 'COMPLETED'")" = 100 ]; do
		sleep 0.05
	done
	sleep 0.5
	kill -INT "$spid"; wait "$spid" 2> /dev/null || true
	kill "$pid"; wait "$pid" || true
	read -r flushes loop < <(flushes "$W/d/strace" "$pid")
	echo "$nvqd, 100 jobs run one after another: $flushes flushes, $(awk -v f="$flushes" 'BEGIN { printf "%.2f", f / 100 }') per finished job ($(awk -v f="$loop" 'BEGIN { printf "%.2f", f / 100 }') in the loop's thread)"
done
