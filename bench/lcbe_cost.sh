#!/usr/bin/env bash
# lcbe_cost.sh: the cost lc/be adds to a launch (issue 43), against the fake
# libcuda (no GPU needed): the median ns per launch of bench/lcbe_cost.c
# with no hook, with the hook and no nvqd (no page: one load per launch),
# as an nvqd job of class be (the page, nothing up: a load per GPU) and as
# an lc job (its bit kept up, a clock read either side for the latency).
# Each is run ROUNDS times in turn; the medians of each are printed.
# Usage: bench/lcbe_cost.sh [BUILD_DIR] [ROUNDS]
set -eu
cd "$(dirname "$0")/.."
B=${1:-build}
ROUNDS=${2:-5}
. bench/lib.sh
make -s -j2 BUILD="$B" "$B/nvqd" "$B/nvq" "$B/libnvq-hook.so" "$B/tests/fake_job"
cc -O2 -iquote bench -o "$B/lcbe_cost" bench/lcbe_cost.c -ldl
D=$(mktemp -d /tmp/nvq-lcbe-cost.XXXXXX)
BENCH_NVQ=$B/nvq bench_nvqd "$D" "$B/nvqd" "[gpus]" "virtual = 1x16G" "[class lc]" "users = *" \
    "[resources]" "cpus = 64"
trap 'bench_stop; rm -rf "$D"' EXIT
FAKE=$PWD/$B/tests/fake
HOOK=$PWD/$B/libnvq-hook.so
nvq() { "$B/nvq" -s "$D/sock" "$@"; }
job() {	# CLASS: one run as an nvqd job, its median on stdout
	local id
	id=$(LD_LIBRARY_PATH=$FAKE nvq submit --parsable --class "$1" -m 1G -o "$D/out.$1" \
	    "$PWD/$B/lcbe_cost")
	nvq wait "$id" > /dev/null
	cat "$D/out.$1"
}
for k in none preload be lc; do : > "$D/$k"; done
for r in $(seq "$ROUNDS"); do
	LD_LIBRARY_PATH=$FAKE "$B/lcbe_cost" >> "$D/none"
	LD_PRELOAD=$HOOK LD_LIBRARY_PATH=$FAKE "$B/lcbe_cost" >> "$D/preload"
	job be >> "$D/be"
	job lc >> "$D/lc"
done
printf '%-40s %s\n' "launch through" "ns per launch (median of $ROUNDS runs)"
printf '%-40s %s\n' "the fake driver alone" "$(median < "$D/none")"
printf '%-40s %s\n' "the hook, no nvqd (no page)" "$(median < "$D/preload")"
printf '%-40s %s\n' "an nvqd job, --class be (page down)" "$(median < "$D/be")"
printf '%-40s %s\n' "an nvqd job, --class lc" "$(median < "$D/lc")"
