#!/usr/bin/env bash
# hook_ab.sh: the hook's cost on a real PyTorch training step, as a ratio
# with a 95% interval (bench/hook_ab.py says how).  Three workers, all
# pinned to one core: without the hook ("none"), with it preloaded and no
# nvqd ("preload"), and as an nvqd job holding its lock ("nvqd"), asked in
# turn ROUNDS times for SECONDS of training each.
# Usage: bench/hook_ab.sh [BUILD_DIR] [ROUNDS] [SECONDS]
set -u
cd "$(dirname "$0")/.."
B=${1:-build}
ROUNDS=${2:-40}
SECS=${3:-2}
CORE=${NVQ_BENCH_CORE:-3}
HOOK=$PWD/$B/libnvq-hook.so
. tests/gpu/lib.sh
gpu_nvqd bench-hook-ab "sync = normal"
PY=$PWD/bench/hook_ab.py
for a in none preload nvqd; do mkfifo "$T/$a.cmd" "$T/$a.out"; done
taskset -c "$CORE" python3 "$PY" worker "$T/none.cmd" "$T/none.out" &
LD_PRELOAD=$HOOK taskset -c "$CORE" python3 "$PY" worker "$T/preload.cmd" "$T/preload.out" &
id=$("$NVQ" submit --parsable -m 8G -- taskset -c "$CORE" python3 "$PY" worker "$T/nvqd.cmd" \
    "$T/nvqd.out")
timeout 1200 python3 "$PY" run "$T" "$ROUNDS" "$SECS" none preload nvqd
"$NVQ" wait "$id" > /dev/null
echo "nvqd job $id: $("$NVQ" show "$id" | awk '$1 == "state" { print $2 }')"
