#!/usr/bin/env bash
# cpu_split.sh: CPU per job by process, nvq against task-spooler (tsp), in
# one run: N trivial jobs (`true`), SLOTS at a time, each submitted by its
# own client process from a bash loop, on tmpfs, nvq with sync = normal.
# `perf record -a` samples the whole machine at 4999 Hz from the first
# submit to the last job's end; each command name's samples / 4999 / N is
# its CPU per job (nvq-shim, nvqd, the job `true` with the hook, the
# client, the loop's bash; tsp's own process, `true`, bash).  Needs perf,
# tsp and sqlite3, and root or perf_event_paranoid <= 0.
# Usage: bench/cpu_split.sh [BUILD] [N] [SLOTS]  (BUILD absolute; ./build, made, by default)
# SPLIT_ALL=1 lists every command name's samples in nvq's run too (kernel workers and all).
set -u
cd "$(dirname "$0")/.."
B=${1:-$PWD/build}; N=${2:-500}; SLOTS=${3:-16}; F=4999
for c in perf tsp sqlite3; do
	command -v $c > /dev/null || { echo "cpu_split.sh: needs $c" >&2; exit 2; }
done
[ $# -ge 1 ] || make -s
W=$(mktemp -d /dev/shm/nvq-split.XXXXXX)
trap 'kill $(jobs -p) 2>/dev/null; [ -z "${TS_SOCKET:-}" ] || tsp -K 2>/dev/null; rm -rf "$W"' EXIT
# split FILE NAMES...: each name's CPU per job in ms, from FILE's samples
split() {
	local f=$1; shift
	perf report -i "$f" --sort comm --stdio -F sample,comm 2> /dev/null | grep -v '^#' |
	    awk -v n="$N" -v hz="$F" -v want=" $* " 'NF == 2 && index(want, " " $2 " ") {
		ms[$2] = $1 / hz * 1000 / n; total += ms[$2] }
	    END { split(want, w, " "); for (i = 1; w[i] != ""; i++) printf "%s %.3f  ", w[i], ms[w[i]] + 0
		printf "(sum %.3f ms a job)\n", total }'
}
. bench/lib.sh
BENCH_NVQ=$B/nvq bench_nvqd "$W/nvq" "$B/nvqd" "sync = normal" "[gpus]" "virtual = 1x16G" \
    "[limits]" "max_running_jobs = $SLOTS" || exit 1
perf record -a -F $F -o "$W/nvq.data" -- bash -c "
	for ((i = 0; i < $N; i++)); do '$B/nvq' -s '$W/nvq/sock' submit -g 0 true > /dev/null; done
	until [ \"\$(sqlite3 '$W/nvq/nvq.db' \"SELECT count(*) FROM jobs WHERE state = 'COMPLETED'\")\" = $N ]; do
		sleep 0.01
	done" > /dev/null 2>&1
bench_stop
[ -z "${SPLIT_ALL:-}" ] || perf report -i "$W/nvq.data" --sort comm --stdio -F sample,comm 2> /dev/null |
    grep -v '^#' | grep -v '^$'
echo "nvq ($B), $N jobs, $SLOTS at a time, CPU per job (ms):"
echo "  $(split "$W/nvq.data" nvq-shim nvqd true nvq bash)"
export TS_SOCKET=$W/ts TMPDIR=$W TS_MAXCONN=$((N + 100))
tsp -S "$SLOTS" > /dev/null
perf record -a -F $F -o "$W/tsp.data" -- bash -c "
	for ((i = 0; i < $N; i++)); do tsp true > /dev/null; done
	until [ \"\$(tsp -l | grep -c ' finished ')\" = $N ]; do sleep 0.01; done" > /dev/null 2>&1
echo "tsp, the same:"
echo "  $(split "$W/tsp.data" tsp true bash)"
