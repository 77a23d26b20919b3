#!/usr/bin/env bash
# history.sh [FINISHED] [ACTIVE] [NVQD...]: how long `nvq history` takes to
# print FINISHED (5000) finished jobs while ACTIVE (20000) jobs are pending,
# and with none pending, for each nvqd given (build/nvqd), in one run.
# The jobs are copies of one, made in the database while nvqd is stopped;
# the pending ones wait behind a running job that holds the only GPU.
# Medians of 5.
set -euo pipefail
cd "$(dirname "$0")/.."
FIN=${1:-5000}; ACT=${2:-20000}; shift 2 || true
BUILDS=("$@"); [ ${#BUILDS[@]} -gt 0 ] || BUILDS=(build/nvqd)
. bench/lib.sh
make -s
W=$(mktemp -d /tmp/nvq-history.XXXXXX)
trap 'kill $(jobs -p) 2>/dev/null || true; pkill -f "$W/" 2>/dev/null || true; rm -rf "$W"' EXIT
NVQ=build/nvq
ms() { local a b; a=$(date +%s%N); "$@" > /dev/null; b=$(date +%s%N); echo $(( (b - a) / 1000000 )); }

for b in "${BUILDS[@]}"; do
	for act in 0 "$ACT"; do
		d=$W/$(echo "$b" | tr / _)
		bench_nvqd "$d" "$b" "sync = normal" "[gpus]" "virtual = 1x80G" "[limits]" \
		    "max_pending = 0"
		$NVQ -s "$d/sock" submit --parsable -g 1 sh -c 'sleep 3600' "$W/" > /dev/null
		one=$($NVQ -s "$d/sock" submit --parsable -g 1 -m 10G true)
		bench_stop
		# FIN finished copies (ids after the pending ones), ACT pending ones
		bench_seed "$d/nvq.db" "$one" $((ACT + FIN)) "i <= $one + $ACT"
		sqlite3 "$d/nvq.db" "DELETE FROM jobs WHERE id > $one AND id <= $one + $ACT AND $act = 0"
		bench_start "$d" "$b"
		rows=$($NVQ -s "$d/sock" history | tail -n +2 | wc -l)
		t=$(for _ in 1 2 3 4 5; do ms $NVQ -s "$d/sock" history; done | median)
		echo "$b: nvq history, $rows rows, $act pending: $t ms (median of 5)"
		bench_stop
		pkill -9 -f "$W/" 2> /dev/null || true
	done
done
