#!/usr/bin/env bash
# queue_ab.sh: bench/queue.sh for two builds, one round each in turn
# (A B A B ...), so that both meet the machine in the same states: on a
# file system that slows new files after many were removed (each round
# removes its own), a whole queue.sh run per build favours the one that
# goes first.  Prints, per pair, tsp/nvq for each build (above 1: nvq
# faster), sync = normal and full, 1 and 16 jobs at a time, then the
# medians.  Usage: bench/queue_ab.sh BUILD_A BUILD_B [PAIRS] [N]
# (TSP= a tsp binary, BENCH_TMP= the folder for the rounds' files, as for bench/queue.sh)
set -euo pipefail
cd "$(dirname "$0")/.."
A=$1; B=$2; PAIRS=${3:-3}; N=${4:-1000}
. bench/lib.sh
O=$(mktemp -d /tmp/nvq-ab.XXXXXX)
trap 'rm -rf "$O"' EXIT
for ((p = 1; p <= PAIRS; p++)); do
	for b in A B; do
		dir=$A; [ $b = B ] && dir=$B
		case $dir in /*) ;; *) dir=$PWD/$dir ;; esac
		NVQ_BUILD=$dir bash bench/queue.sh "$N" 1 > "$O/out" 2>&1 ||
		    { cat "$O/out"; exit 1; }
		# "run N trivial jobs, end to end (S at a time)  nvq  nvq-n  tsp  ..."
		awk -v b=$b -v p=$p '/^run .* end to end/ {
			s = $0; sub(/.*\(/, "", s); sub(/ at a time.*/, "", s)
			n = split($0, f, " "); nf = n
			print b, p, s, f[nf - 4] + 0, f[nf - 3] + 0, f[nf - 2] + 0 }' "$O/out" >> "$O/all"
	done
done
echo "tsp/nvq per round (above 1: nvq faster), $N jobs; A = $A, B = $B"
printf '%-5s %-6s %13s %13s\n' pair slots "A norm/full" "B norm/full"
for ((p = 1; p <= PAIRS; p++)); do
	for s in 1 16; do
		printf '%-5s %-6s' "$p" "$s"
		for b in A B; do
			awk -v b=$b -v p=$p -v s=$s '$1 == b && $2 == p && $3 == s {
			    printf " %6.2f/%-6.2f", $6 / $5, $6 / $4 }' "$O/all"
		done
		echo
	done
done
for s in 1 16; do
	for b in A B; do
		nn=$(awk -v b=$b -v s=$s '$1 == b && $3 == s { print $6 / $5 }' "$O/all" | median)
		nf=$(awk -v b=$b -v s=$s '$1 == b && $3 == s { print $6 / $4 }' "$O/all" | median)
		echo "median, $s at a time, $b: tsp/nvq $nn (sync normal), $nf (sync full)"
	done
done
