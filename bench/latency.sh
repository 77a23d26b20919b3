#!/usr/bin/env bash
# latency.sh: the spread of one submit's time.  N held submits (`nvq
# submit --hold true`, one process each, one after another) to each nvqd
# given, with [daemon] sync = SYNC; prints the median, 99th and 99.9th
# percentiles and the maximum of each submit's wall time as the shell saw
# it.  A stall of nvqd's loop (a WAL checkpoint in it, before
# nvqd/store/checkpoint.c) shows in the tail, not in the median.  Run the builds
# in turn, twice or more: the machine's own noise is in the tail too.
# Usage: bench/latency.sh [N] [SYNC] [NVQD...]   (default 3000 full build/nvqd)
set -euo pipefail
cd "$(dirname "$0")/.."
N=${1:-3000}; SYNC=${2:-full}; shift 2 || true
BUILDS=("$@"); [ ${#BUILDS[@]} -gt 0 ] || BUILDS=(build/nvqd)
. bench/lib.sh
NVQ=$PWD/build/nvq
W=$(mktemp -d /tmp/nvq-latency.XXXXXX)
trap 'kill $(jobs -p) 2>/dev/null || true; rm -rf "$W"' EXIT
k=0
for b in "${BUILDS[@]}"; do
	k=$((k + 1)); D=$W/d$k
	bench_nvqd "$D" "$b" "sync = $SYNC" "[gpus]" "virtual = 1x16G"
	for ((i = 0; i < N; i++)); do
		a=$(date +%s%N)
		"$NVQ" -s "$D/sock" submit --hold true > /dev/null
		c=$(date +%s%N)
		echo $(((c - a) / 1000))
	done > "$D/us"
	bench_stop
	sort -n "$D/us" | awk -v b="$b" -v s="$SYNC" '{ a[NR] = $1 } END {
	    printf "%s, sync = %s, %d submits: p50 %.2f p99 %.2f p99.9 %.2f max %.2f ms\n", b, s, NR,
	    a[int(NR * 0.5)] / 1000, a[int(NR * 0.99)] / 1000, a[int(NR * 0.999)] / 1000, a[NR] / 1000 }'
done
