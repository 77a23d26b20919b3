#!/usr/bin/env bash
# chain_parts.sh: where one job's turn goes, one job at a time.  N jobs of
# bench/stamp.c (a dynamically linked program, so that the hook is loaded
# as into any job, that writes the time its main() began) run one after
# another (max_running_jobs = 1, sync = normal); from the database and
# their output, the medians of:
#   start -> main:  nvqd's recorded start to the job's main(): the hand-off,
#                   the supervisor's setup, the job's process, exec, the
#                   dynamic loader and the hook;
#   main -> end:    the job's main() to its end as its supervisor records it;
#   end -> start:   a job's end to the next one's recorded start (nvqd).
# Usage: bench/chain_parts.sh [N]   (NVQ_BUILD= a build folder, not rebuilt;
# NOHOOK=1 runs the jobs without the hook: a copy of the build without it)
set -euo pipefail
cd "$(dirname "$0")/.."
N=${1:-300}
[ -n "${NVQ_BUILD:-}" ] || make -s
B=$(cd "${NVQ_BUILD:-build}" && pwd)
. bench/lib.sh
D=$(mktemp -d /tmp/nvq-parts.XXXXXX)
trap 'kill $(jobs -p) 2>/dev/null || true; rm -rf "$D"' EXIT
cc -O2 -o "$D/stamp" bench/stamp.c
if [ "${NOHOOK:-0}" = 1 ]; then
	mkdir "$D/b"; cp "$B/nvqd" "$B/nvq" "$B/nvq-shim" "$D/b/"; B=$D/b
fi
BENCH_NVQ=$B/nvq
bench_nvqd "$D/q" "$B/nvqd" "sync = normal" "[gpus]" "virtual = 1x16G" "[limits]" \
    "max_running_jobs = 1"
P=$BENCH_PID
export NVQ_SOCKET=$D/q/sock
"$B/nvq" submit --hold --array "1-$N" -g 0 -o "$D/out.%j" "$D/stamp" > /dev/null
"$B/nvq" release 1_ > /dev/null
"$B/nvq" wait $(seq 1 "$N") > /dev/null
kill "$P"; wait "$P" || true
python3 - "$D" <<'PY'
import sqlite3, sys
d = sys.argv[1]
r = sqlite3.connect(d + "/q/nvq.db").execute("SELECT id, started_at, ended_at FROM jobs "
    "WHERE state = 'COMPLETED' ORDER BY started_at").fetchall()
med = lambda a: sorted(a)[len(a) // 2] * 1e3
main = {i: float(open("%s/out.%d" % (d, i)).read()) for i, _, _ in r}
a = [main[i] - s for i, s, e in r]
b = [e - main[i] for i, s, e in r]
c = [r[k + 1][1] - r[k][2] for k in range(len(r) - 1)]
print("%d jobs one at a time, medians: start -> main %.3f ms, main -> end %.3f ms, "
      "end -> next start %.3f ms; cycle %.3f ms" % (len(r), med(a), med(b), med(c),
      (r[-1][2] - r[0][1]) / (len(r) - 1) * 1e3))
PY
