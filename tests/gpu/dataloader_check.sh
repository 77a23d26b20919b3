#!/usr/bin/env bash
# dataloader_check.sh [BUILD]: what a GPU job's default CPU share (-c not
# given: its GPUs' share of the machine's CPUs, [resources]) does to a
# PyTorch DataLoader with WORKERS worker processes (8) that decode and
# augment on the CPU and feed one GPU.  Images/s measured inside the job
# after a warm-up, ROUNDS (2) interleaved rounds of: the same script run
# directly (no nvq, no cgroup), as `nvq submit -g 1` (the default share,
# cpu.max enforced where nvqd runs in a cgroup of its own: gpu_own_cgroup),
# and as `nvq submit -g 1 -c ALL` (every CPU).  Prints the medians and the
# ratios to the direct run, and the cpu.max each job had.
set -u
cd "$(dirname "$0")/../.."
B=${1:-build}
. tests/gpu/lib.sh
WORKERS=${WORKERS:-8}
ROUNDS=${ROUNDS:-2}
[ "$(id -u)" != 0 ] || gpu_own_cgroup || true
gpu_nvqd dataloader
W=$T/work; mkdir -p "$W"
ALL=$(nproc)
cat > "$W/dl.py" <<'PY'
import os, sys, time, torch
from torch.utils.data import DataLoader, Dataset
cg = "/sys/fs/cgroup" + open("/proc/self/cgroup").read().split("::")[-1].strip()
try:
    quota = open(cg + "/cpu.max").read().strip()
except OSError:
    quota = "none"
class Images(Dataset):
    def __len__(self):
        return 1 << 20
    def __getitem__(self, i):
        g = torch.Generator().manual_seed(i)
        x = torch.rand(3, 256, 256, generator=g)          # a decoded image
        x = torch.nn.functional.interpolate(x[None], size=224, mode="bilinear")[0]
        x = (x - x.mean((1, 2), keepdim=True)) / (x.std((1, 2), keepdim=True) + 1e-6)
        return x.flip(2) if i % 2 else x, i % 1000
torch.set_num_threads(1)
dl = DataLoader(Images(), batch_size=64, num_workers=int(sys.argv[1]), persistent_workers=True)
m = torch.nn.Conv2d(3, 16, 3).cuda()
it = iter(dl)
for _ in range(10):                                       # warm-up
    x, y = next(it); m(x.cuda(non_blocking=True)).sum().item()
n, t0 = 0, time.time()
while time.time() - t0 < 8:
    x, y = next(it); m(x.cuda(non_blocking=True)).sum().item(); n += x.shape[0]
print(f"rate {n / (time.time() - t0):.1f} cpu.max {quota}", flush=True)
PY
direct=() share=() whole=()
rate() { grep -o 'rate [0-9.]*' <<< "$1" | cut -d' ' -f2; }
for r in $(seq "$ROUNDS"); do
	o=$(CUDA_VISIBLE_DEVICES=0 python3 "$W/dl.py" "$WORKERS" 2>&1); direct+=("$(rate "$o")")
	echo "    round $r direct: $o"
	for how in share whole; do
		a=(-g 1); [ $how = whole ] && a+=(-c "$ALL")
		id=$("$NVQ" submit --parsable "${a[@]}" -o "$W/$how-$r.out" python3 "$W/dl.py" "$WORKERS")
		"$NVQ" wait "$id" > /dev/null 2>&1
		o=$(cat "$W/$how-$r.out" 2>/dev/null | grep '^rate')
		echo "    round $r $how (job $id, $("$NVQ" show "$id" | grep -io 'cpus[^,]*' | head -1)): $o"
		eval "$how+=(\"\$(rate \"\$o\")\")"
	done
done
med() { printf '%s\n' "$@" | sort -n | awk '{ a[NR] = $1 } END { if (NR % 2) print a[(NR + 1) / 2]; else printf "%.1f\n", (a[NR / 2] + a[NR / 2 + 1]) / 2 }'; }
d=$(med "${direct[@]}"); s=$(med "${share[@]}"); w=$(med "${whole[@]}")
echo "    images/s (median of $ROUNDS, $WORKERS workers, $ALL CPUs): direct $d, default share $s, -c $ALL $w"
echo "    ratios to direct: default share $(awk -v a="$s" -v b="$d" 'BEGIN { printf "%.2f", a / b }'), -c $ALL $(awk -v a="$w" -v b="$d" 'BEGIN { printf "%.2f", a / b }')"
check "every run measured" test -n "$d" -a -n "$s" -a -n "$w"
echo "dataloader_check: $fails failed"
exit $((fails > 0))
