#!/usr/bin/env bash
# chain.sh: one job to the next, one at a time, from nvqd's own records.
# N trivial jobs (`true`) are submitted held as one array and released at
# once to an nvqd with max_running_jobs = 1 and sync = normal; then, from
# the database, the medians of: the supervisor's spawn to the job's end
# as recorded ("run"), a job's end to the next one's start ("gap", nvqd's
# part), and the whole span over N-1 ("cycle").
# Usage: bench/chain.sh [N]   (NVQ_BUILD= a build folder, not rebuilt)
set -euo pipefail
cd "$(dirname "$0")/.."
N=${1:-500}
[ -n "${NVQ_BUILD:-}" ] || make -s
B=${NVQ_BUILD:-build}
. bench/lib.sh
D=$(mktemp -d /tmp/nvq-chain.XXXXXX)
trap 'kill $(jobs -p) 2>/dev/null || true; rm -rf "$D"' EXIT
BENCH_NVQ=$B/nvq
bench_nvqd "$D" "$B/nvqd" "sync = normal" "[gpus]" "virtual = 1x16G" "[limits]" \
    "max_running_jobs = 1"
P=$BENCH_PID
export NVQ_SOCKET=$D/sock
"$B/nvq" submit --hold --array "1-$N" -g 0 true > /dev/null
"$B/nvq" release 1_ > /dev/null
# every job of the array by id (the array is 1_; nvq wait takes job ids)
"$B/nvq" wait $(seq 1 "$N") > /dev/null
kill "$P"
wait "$P" || true
python3 - "$D/nvq.db" <<'PY'
import sqlite3, sys
r = sqlite3.connect(sys.argv[1]).execute("SELECT started_at, ended_at FROM jobs "
    "WHERE state = 'COMPLETED' ORDER BY started_at").fetchall()
med = lambda a: sorted(a)[len(a) // 2] * 1e3
run = [e - s for s, e in r]
gap = [r[i + 1][0] - r[i][1] for i in range(len(r) - 1)]
print("%d jobs, one at a time: run %.3f ms, gap %.3f ms (medians), cycle %.3f ms"
      % (len(r), med(run), med(gap), (r[-1][1] - r[0][0]) / (len(r) - 1) * 1e3))
PY
