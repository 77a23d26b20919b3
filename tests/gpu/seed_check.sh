#!/usr/bin/env bash
# seed_check.sh: the seed scenario of issue 14 on one GPU.
#
# Four jobs of 46 GiB (-m 46G) where only one fits at a time; each job is
# two processes (two PyTorch holders of 20 GiB, tests/gpu/holder.py, which
# fill their memory, run matmuls for WORK seconds and check the memory bit
# for bit).  One job alone first, then the four submitted at once:
#   makespan / (4 x one alone): the issue's figure, printed;
#   makespan / (the four runs' own times, as nvqd recorded them): what the
#   queue adds, checked (<= 1.01).  A job's own time varies by some
#   percent from run to run (12.5 to 14.4 s in one call on an H100), so
#   the issue's figure can fall either side of 1.01 with nothing added;
#   the gaps: each job's start (runs.started_at) less the end of the one
#   before it (runs.ended_at), as nvqd recorded them.
# Usage: tests/gpu/seed_check.sh [BUILD_DIR] (default build); WORK=8.
set -u
cd "$(dirname "$0")/../.."
B=${1:-build}
WORK=${WORK:-8}
. tests/gpu/lib.sh
gpu_nvqd seed
H=$PWD/tests/gpu/holder.py

submit() {	# NAME: a job of two processes; prints its id
	"$NVQ" submit --parsable -g 1 -m 46G -n "$1" -- sh -c "python3 $H 20 $WORK $T/$1.a &
	    a=\$!; python3 $H 20 $WORK $T/$1.b; b=\$?; wait \$a && [ \$b = 0 ]" "$T/"
}
completed() {	# ID: whether it COMPLETED; if not, what it said
	[ "$("$NVQ" show "$1" | awk '$1 == "state" { print $2 }')" = COMPLETED ] && return 0
	"$NVQ" show "$1" | sed 's/^/  | /'
	{ "$NVQ" log "$1"; "$NVQ" log --err "$1"; } 2>&1 | tail -8 | sed 's/^/  | /'
	return 1
}

# warm the page cache and the driver first: "alone" must not pay for a cold start
python3 -c 'import torch; torch.zeros(1, device="cuda"); torch.cuda.synchronize()'
t0=$(now)
id=$(submit alone)
"$NVQ" wait "$id" > /dev/null
t1=$(now)
alone_end=$t1
alone=$(awk -v a="$t0" -v b="$t1" 'BEGIN { print b - a }')
check "the job alone completed" completed "$id"

t0=$(now)
ids=""
for k in 1 2 3 4; do ids="$ids $(submit "four$k")"; done
for i in $ids; do "$NVQ" wait "$i" > /dev/null; done
t1=$(now)
makespan=$(awk -v a="$t0" -v b="$t1" 'BEGIN { print b - a }')
for i in $ids; do
	check "job $i completed" completed "$i"
done
q="SELECT started_at, ended_at FROM runs WHERE job_id IN ($(echo $ids | tr ' ' ,))
    ORDER BY started_at"
gaps=$(sqlite3 "$T/nvq.db" "$q" | awk -F'|' 'NR > 1 { printf "%.3f ", $1 - e } { e = $2 }')
ratio=$(awk -v m="$makespan" -v a="$alone" 'BEGIN { print m / (4 * a) }')
printf 'one alone %.2f s; four %.2f s; makespan / (4 x alone) = %.4f\n' "$alone" "$makespan" "$ratio"
runs=$(sqlite3 "$T/nvq.db" "SELECT sum(ended_at - started_at) FROM runs
    WHERE job_id IN ($(echo $ids | tr ' ' ,))")
share=$(awk -v m="$makespan" -v r="$runs" 'BEGIN { print m / r }')
printf 'the four runs %.2f s; makespan / runs = %.4f\n' "$runs" "$share"
echo "gaps between one's end and the next's start (s): $gaps"
# where the time goes: each run as nvqd recorded it, and around the one alone
sqlite3 "$T/nvq.db" "SELECT job_id, started_at - (SELECT submitted_at FROM jobs
    WHERE id = job_id), ended_at - started_at FROM runs ORDER BY started_at" |
    awk -F'|' '{ printf "job %s: submit to start %.3f s, run %.3f s\n", $1, $2, $3 }'
echo "the one alone: nvq wait returned $(sqlite3 "$T/nvq.db" "SELECT ended_at FROM runs
    WHERE job_id = $id" | awk -v w="$alone_end" '{ printf "%.3f", w - $1 }') s after its end"
check "the queue adds at most 1% (makespan / the four runs <= 1.01)" \
    awk -v r="$share" 'BEGIN { exit !(r <= 1.01) }'
echo "$fails failed"
exit $((fails > 0))
