#!/usr/bin/env bash
# list_history.sh [FINISHED] [BUILD...]: how long `nvq list` takes for a
# few active jobs (a running one and 10 pending) while FINISHED (1000000)
# finished jobs lie in the history before them, and `nvq history` of those,
# for each build folder given (build), in one run.  The finished jobs are
# copies of one, made in the database while nvqd is stopped.  A listing
# should cost its own rows: nvq list the same with 0 or a million finished.
# Medians of 5.
set -euo pipefail
cd "$(dirname "$0")/.."
FIN=${1:-1000000}; shift || true
BUILDS=("$@"); [ ${#BUILDS[@]} -gt 0 ] || BUILDS=(build)
ACT=10
. bench/lib.sh
W=$(mktemp -d /tmp/nvq-lh.XXXXXX)
trap 'kill $(jobs -p) 2>/dev/null || true; pkill -f "$W/" 2>/dev/null || true; rm -rf "$W"' EXIT
ms() { local a b; a=$(date +%s%N); "$@" > /dev/null; b=$(date +%s%N); echo $(( (b - a) / 1000000 )); }
for B in "${BUILDS[@]}"; do
	for fin in 0 "$FIN"; do
		d=$W/$(echo "$B" | tr / _).$fin; NVQ=$B/nvq
		BENCH_NVQ=$NVQ bench_nvqd "$d" "$B/nvqd" "sync = normal" "[gpus]" "virtual = 1x80G" \
		    "[limits]" "max_pending = 0"
		$NVQ -s "$d/sock" submit --parsable -g 1 sh -c 'sleep 3600' "$W/" > /dev/null
		one=$($NVQ -s "$d/sock" submit --parsable -g 1 -m 10G true)
		bench_stop
		# fin finished copies first, then ACT pending ones behind the running one
		bench_seed "$d/nvq.db" "$one" $((ACT + fin)) "i > $one + $fin"
		BENCH_NVQ=$NVQ bench_start "$d" "$B/nvqd"
		rows=$($NVQ -s "$d/sock" list | tail -n +2 | wc -l)
		t=$(for _ in 1 2 3 4 5; do ms "$NVQ" -s "$d/sock" list; done | median)
		h=$(for _ in 1 2 3 4 5; do ms "$NVQ" -s "$d/sock" history; done | median)
		echo "$B: $fin finished: nvq list $t ms ($rows rows), nvq history $h ms (medians of 5)"
		bench_stop
		pkill -9 -f "$W/" 2> /dev/null || true
	done
done
