#!/usr/bin/env bash
# scale.sh [SIZES] [NVQD...]: what a submit and an admission cost nvqd with
# a long queue, for each nvqd given (build/nvqd), in one run on one machine.
#
# For each size N (default "1000 10000 100000"): one virtual GPU of 80G, a
# running job holding all of it, and N pending jobs of 10G behind it
# (copies of one, made in the database while nvqd is stopped: submitting
# 100,000 one by one takes too long with the older builds).  Then, with
# bench/load.c submitting more jobs of 10G (which wait too):
#   cpu/submit   nvqd's CPU time (utime + stime from /proc) over 1 client's
#                SUBMITS submits, divided by them
#   p50/p90      those submits' latencies (connect, frame, committed reply)
#   8 clients    submits per second with 8 clients at once
#   admit        from `nvq cancel` of the running job to the first job
#                behind it started in the database (bench/admit.py, which
#                looks every millisecond); and as nvqd recorded it: from
#                the holder's end to that job's start
# Medians of ROUNDS (3) rounds, the builds taken in turn in each round.
set -euo pipefail
cd "$(dirname "$0")/.."
SIZES=${1:-1000 10000 100000}; shift || true
BUILDS=("$@"); [ ${#BUILDS[@]} -gt 0 ] || BUILDS=(build/nvqd)
ROUNDS=${ROUNDS:-3}
SUBMITS=${SUBMITS:-400}
. bench/lib.sh
bench_load_helper
W=$(mktemp -d /tmp/nvq-scale.XXXXXX)
trap 'kill $(jobs -p) 2>/dev/null || true; pkill -f "$W/" 2>/dev/null || true; rm -rf "$W"' EXIT
G=$((1 << 30))
NVQ=build/nvq

# seed DIR NVQD N: nvqd on DIR with a holder running and N pending; its pid in BENCH_PID
seed() {
	local d=$1 nvqd=$2 n=$3 one holder
	bench_nvqd "$d" "$nvqd" "sync = normal" "[gpus]" "virtual = 1x80G" "[limits]" \
	    "max_pending = 0"
	holder=$($NVQ -s "$d/sock" submit --parsable -g 1 sh -c 'sleep 3600' "$W/")
	one=$($NVQ -s "$d/sock" submit --parsable -g 1 -m 10G true)
	bench_stop
	sqlite3 "$d/nvq.db" "WITH RECURSIVE k(i) AS (SELECT $one + 1 UNION ALL SELECT i + 1
	    FROM k WHERE i < $one + $n - 1) INSERT INTO jobs (id, uid, gid, user, name,
	    command, argv, cwd, state, gpus, mem_per_gpu, priority, stdout_path, stderr_path,
	    submitted_at) SELECT i, uid, gid, user, name, command, argv, cwd, state, gpus, mem_per_gpu,
	    priority, stdout_path, stderr_path, submitted_at + (i - $one) * 1e-6 FROM jobs, k
	    WHERE id = $one"
	bench_start "$d" "$nvqd"
	HOLDER=$holder
	FIRST=$one
}

echo "scale: $(nproc) CPUs; $SUBMITS submits by 1 client, 8 x $((SUBMITS / 4)) at once;" \
    "medians of $ROUNDS rounds"
for n in $SIZES; do
	for r in $(seq "$ROUNDS"); do
		for b in "${BUILDS[@]}"; do
			k=$(echo "$b" | tr / _)
			d=$W/$k
			seed "$d" "$b" "$n"
			t0=$(bench_cpu_ticks)
			LOAD_GPUS=1 LOAD_MEM=$((10 * G)) build/load "$d/sock" 1 "$SUBMITS" "$d/ids" \
			    > "$d/one"
			t1=$(bench_cpu_ticks)
			# clock ticks are 10 ms: ms per submit
			awk -v a="$t0" -v b="$t1" -v s="$SUBMITS" \
			    'BEGIN { printf "%.3f\n", (b - a) * 10 / s }' >> "$W/$k.$n.cpu"
			awk '$1 == "p50_ms" { print $2 }' "$d/one" >> "$W/$k.$n.p50"
			awk '$1 == "p90_ms" { print $2 }' "$d/one" >> "$W/$k.$n.p90"
			LOAD_GPUS=1 LOAD_MEM=$((10 * G)) build/load "$d/sock" 8 $((SUBMITS / 4)) \
			    "$d/ids" > "$d/eight"
			awk '$1 == "per_second" { print $2 }' "$d/eight" >> "$W/$k.$n.rate"
			python3 bench/admit.py "$NVQ" "$d/sock" "$d/nvq.db" "$HOLDER" "$FIRST" \
			    >> "$W/$k.$n.admit"
			bench_stop
			# as nvqd recorded it: the holder's end (its shim's clock, in ms) to
			# the next job's start
			sqlite3 "$d/nvq.db" "SELECT printf('%.1f', 1000 * ((SELECT started_at FROM
			    jobs WHERE id = $FIRST) - (SELECT ended_at FROM jobs WHERE id = $HOLDER)))" \
			    >> "$W/$k.$n.admit_nvqd"
			pkill -9 -f "$W/" 2> /dev/null || true
		done
	done
	for b in "${BUILDS[@]}"; do
		k=$(echo "$b" | tr / _)
		printf '%s, %d pending: cpu/submit %s ms, p50 %s ms, p90 %s ms, 8 clients %s/s, admit %s ms (in nvqd: %s ms)\n' \
		    "$b" "$n" "$(median < "$W/$k.$n.cpu")" "$(median < "$W/$k.$n.p50")" \
		    "$(median < "$W/$k.$n.p90")" "$(median < "$W/$k.$n.rate")" \
		    "$(median < "$W/$k.$n.admit")" "$(median < "$W/$k.$n.admit_nvqd")"
	done
done
