#!/usr/bin/env bash
# hook.sh: what the hook costs a PyTorch job on a real GPU.
#   train:  steps/s of a training loop of many small kernels (an MLP of
#           16 layers of 256, batch 32, SGD: about 100 launches per step);
#   launch: launches/s of a loop of tiny kernels (x.add_(1) on 1 element).
# Each is run without the hook, with the hook preloaded (no nvqd: the gate
# is open, nothing to ask), and as an nvqd job (the hook linked to nvqd,
# holding its lock), interleaved, RUNS times, each pinned to one CPU core
# (taskset) so that the scheduler's noise is the same for all; medians and
# ratios printed.
#   ab:     bench/launch_ab.c, one process launching an empty kernel through
#           the hook's wrapper and through the driver in alternating
#           batches: the hook's cost per launch with the noise cancelled;
#           run alone and as an nvqd job (linked, holding its lock).
# Usage: bench/hook.sh [BUILD_DIR] [RUNS]; NVQ_BENCH_WHAT="train launch ab"
# picks the parts.
set -u
cd "$(dirname "$0")/.."
B=${1:-build}
RUNS=${2:-7}
CORE=${NVQ_BENCH_CORE:-3}
HOOK=$PWD/$B/libnvq-hook.so
. tests/gpu/lib.sh
gpu_nvqd bench-hook "sync = normal" "log_level = debug"

cat > "$T/bench.py" <<'EOF'
import sys, time, torch
what = sys.argv[1]
torch.manual_seed(0)
if what == "train":
    model = torch.nn.Sequential(*[m for _ in range(16) for m in (torch.nn.Linear(256, 256), torch.nn.ReLU())]).cuda()
    opt = torch.optim.SGD(model.parameters(), lr=1e-3)
    data = torch.randn(32, 256, device="cuda")
    def step():
        loss = model(data).pow(2).mean()
        opt.zero_grad(set_to_none=False); loss.backward(); opt.step()
    n = 1500
else:
    x = torch.zeros(1, device="cuda")
    def step():
        x.add_(1)
    n = 200000
for _ in range(n // 10):
    step()
torch.cuda.synchronize()
t = time.perf_counter()
for _ in range(n):
    step()
torch.cuda.synchronize()
print("%.1f" % (n / (time.perf_counter() - t)))
EOF

run() {	# VARIANT WHAT: prints items per second
	case $1 in
	none) taskset -c "$CORE" python3 "$T/bench.py" "$2" ;;
	preload) LD_PRELOAD=$HOOK taskset -c "$CORE" python3 "$T/bench.py" "$2" ;;
	nvqd)
		local id
		id=$("$NVQ" submit --parsable -m 8G -- taskset -c "$CORE" python3 "$T/bench.py" "$2")
		"$NVQ" wait "$id" > /dev/null
		"$NVQ" log "$id" ;;
	esac
}
median() { sort -g | awk '{ v[NR] = $1 } END { print (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2 }'; }

for what in ${NVQ_BENCH_WHAT:-train launch ab}; do
	if [ "$what" = ab ]; then
		cc -O2 -o "$T/launch_ab" bench/launch_ab.c -ldl || exit 1
		echo "ab: alone"
		"$T/launch_ab" "$HOOK"
		echo "ab: as an nvqd job (the wrapper's gate linked to nvqd)"
		id=$("$NVQ" submit --parsable -m 1G -- env -u LD_PRELOAD "$T/launch_ab" "$HOOK")
		"$NVQ" wait "$id"
		"$NVQ" log "$id"
		grep "job $id: process" "$T/nvqd.log"
		continue
	fi
	for v in none preload nvqd; do : > "$T/$what.$v"; done
	for r in $(seq "$RUNS"); do
		for v in none preload nvqd; do
			run "$v" "$what" >> "$T/$what.$v"
		done
	done
	for v in none preload nvqd; do
		printf '%-7s %-8s runs: %s\n' "$what" "$v" "$(tr '\n' ' ' < "$T/$what.$v")"
	done
	n=$(median < "$T/$what.none"); p=$(median < "$T/$what.preload"); q=$(median < "$T/$what.nvqd")
	unit=$([ "$what" = train ] && echo "steps/s" || echo "launches/s")
	echo "$what: median $unit: no hook $n, hook preloaded $p, nvqd job $q"
	awk -v n="$n" -v p="$p" -v q="$q" -v w="$what" 'BEGIN {
	    printf "%s: hook preloaded / no hook = %.4f (%.2f%% slower); nvqd job / no hook = %.4f (%.2f%% slower)\n",
	    w, p / n, (1 - p / n) * 100, q / n, (1 - q / n) * 100 }'
done
