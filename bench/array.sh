#!/usr/bin/env bash
# array.sh: how long one submit of a whole array takes to be stored
# durably ([daemon] sync = full: on disk before the reply), for --array and
# for --stdin, against the same number of jobs submitted one by one (a
# sample of them, scaled).  Every task waits (its GPU is held), so only the
# submit is timed.  Prints the median of ROUNDS rounds.
# Usage: bench/array.sh [TASKS] [ROUNDS]
set -euo pipefail
cd "$(dirname "$0")/.."
N=${1:-10000}
ROUNDS=${2:-5}
SINGLES=${SINGLES:-500}
. bench/lib.sh
make -s
W=$(mktemp -d /tmp/nvq-array.XXXXXX)
trap 'kill $(jobs -p) 2>/dev/null || true; rm -rf "$W"' EXIT
now() { date +%s.%N; }
seq 0 $((N - 1)) | sed 's/^/echo task /' > "$W/lines"
for r in $(seq "$ROUNDS"); do
	rm -rf "$W/d"
	bench_nvqd "$W/d" build/nvqd "sync = full" "[gpus]" "virtual = 1x16G" "[limits]" "max_pending = 0"
	pid=$BENCH_PID
	export NVQ_SOCKET=$W/d/sock
	build/nvq submit --parsable -g 1 sleep 600 > /dev/null	# holds the GPU: the rest wait
	t0=$(now); build/nvq submit --parsable -g 1 --array "0-$((N - 1))" true > /dev/null; t1=$(now)
	build/nvq submit --parsable -g 1 --stdin < "$W/lines" > /dev/null; t2=$(now)
	for ((i = 0; i < SINGLES; i++)); do build/nvq submit -g 1 true > /dev/null; done; t3=$(now)
	n=$(sqlite3 "$W/d/nvq.db" "SELECT count(*) FROM jobs WHERE state = 'PENDING'")
	[ "$n" = $((2 * N + SINGLES)) ] || { echo "expected $((2 * N + SINGLES)) pending, found $n" >&2; exit 1; }
	kill "$pid"; wait "$pid" 2>/dev/null || true
	echo "$t1 - $t0" | bc >> "$W/array"
	echo "$t2 - $t1" | bc >> "$W/stdin"
	echo "($t3 - $t2) * $N / $SINGLES" | bc -l >> "$W/single"
done
a=$(median < "$W/array"); s=$(median < "$W/stdin"); o=$(median < "$W/single")
echo "$N jobs stored durably (sync = full), median of $ROUNDS rounds, $(nproc) CPUs:"
printf '  one submit --array 0-%d:  %6.3f s\n' $((N - 1)) "$a"
printf '  one submit --stdin (%d lines): %6.3f s\n' "$N" "$s"
printf '  one by one (%d timed, scaled): %6.1f s  (%.0f times --array)\n' "$SINGLES" "$o" \
    "$(echo "$o / $a" | bc -l)"
