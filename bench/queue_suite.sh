#!/usr/bin/env bash
# queue_suite.sh OLD_BUILD [NEW_BUILD]: every queue-scale benchmark in one go,
# the build before (a folder with nvqd and nvq) against this one (build),
# on this machine, one after the other:
#   scale.sh    CPU per submit, latency, 8 clients, admit: 1k, 10k, 100k pending
#   list.sh     nvq list, whole and first rows: 10k and 100k pending
#   list_history.sh  nvq list of a few active jobs with 100k finished before them
#   history.sh  nvq history of 5000 finished jobs, with 0 and 20k pending
#   fsync.sh    flushes per submitted job, 1 and 8 clients (sync = full)
#   queue.sh    1000 trivial jobs against task-spooler, sync = full and normal
# (queue.sh measures this build only: tsp is its reference.)
set -euo pipefail
cd "$(dirname "$0")/.."
OLD=${1:?usage: bench/queue_suite.sh OLD_BUILD [NEW_BUILD]}
NEW=${2:-build}
echo "== queue suite, $(date -u +%F), $(nproc) CPUs; before: $OLD, after: $NEW"
echo "== scale.sh"
bash bench/scale.sh "1000 10000 100000" "$NEW/nvqd" "$OLD/nvqd"
echo "== list.sh"
for n in 10000 100000; do SEED=sql bash bench/list.sh "$n" "$OLD" "$NEW"; done
echo "== list_history.sh"
bash bench/list_history.sh 100000 "$OLD" "$NEW"
echo "== history.sh"
bash bench/history.sh 5000 20000 "$NEW/nvqd" "$OLD/nvqd"
echo "== fsync.sh"
NVQD_BUILDS="$OLD/nvqd $NEW/nvqd" bash bench/fsync.sh 200 1 8
echo "== queue.sh"
bash bench/queue.sh 1000 3
