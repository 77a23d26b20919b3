#!/usr/bin/env bash
# oom_check.sh: memory advice with real PyTorch jobs (issue 15).
#   (o1) torchrun --nproc_per_node=2 (gloo, both ranks on GPU 0) under -m 3G:
#        rank 1 asks for 4 GiB more; the hook refuses it past the job's
#        budget, PyTorch raises its out-of-memory error, the job fails, and
#        its reason says so ("out of GPU memory: asked ... try -m ...");
#   (o2) a job named fit that peaks near 2 GiB completes; nvq submit -m auto
#        -n fit asks for that peak + 10% and says so; nvq show gives the -m
#        the peak implies.
# Usage: tests/gpu/oom_check.sh [BUILD_DIR]
set -u
cd "$(dirname "$0")/../.."
B=${1:-build}
. tests/gpu/lib.sh
gpu_nvqd oom "[gpus]" "poll = 1s"

cat > "$T/oom.py" <<'PY'
import sys, time, torch, torch.distributed as dist
dist.init_process_group("gloo")
r = dist.get_rank()
x = torch.ones(256 << 20, device="cuda")        # 1 GiB each: 2 GiB of the job's 3G
dist.barrier()
if r == 1:
    try:
        y = torch.empty(4 << 30, dtype=torch.uint8, device="cuda")
        print("rank 1: got 4 GiB past the budget", flush=True)
    except torch.OutOfMemoryError as e:
        print("rank 1: OutOfMemoryError:", str(e).splitlines()[0], flush=True)
        sys.exit(3)
time.sleep(1)
PY
TORCHRUN=$(command -v torchrun || echo "python3 -m torch.distributed.run")
# shellcheck disable=SC2086
a=$("$NVQ" submit --parsable -m 3G -n oom -o "$T/oom.out" -- $TORCHRUN --standalone \
    --nproc_per_node=2 "$T/oom.py")
"$NVQ" wait "$a" > /dev/null 2>&1
st=$("$NVQ" show "$a" | awk '$1 == "state" {print $2}')
reason=$("$NVQ" show --json "$a" | python3 -c 'import json,sys; print(json.load(sys.stdin)["job"].get("reason", ""))')
echo "(o1) torchrun under -m 3G, rank 1 asks 4 GiB more: $st: $reason"
grep "rank 1:" "$T/oom.out" | sed 's/^/    /'
check "(o1) PyTorch got its out-of-memory error" grep -q "rank 1: OutOfMemoryError" "$T/oom.out"
check "(o1) the job FAILED" test "$st" = FAILED
check "(o1) its reason: out of GPU memory, and the -m to try" \
    sh -c 'echo "$1" | grep -Eq "^out of GPU memory: asked 4G more with .* of its -m 3G in use \(.*\); try -m [0-9]+G$"' sh "$reason"

cat > "$T/fit.py" <<'PY'
import torch
x = torch.ones(512 << 20, device="cuda")        # 2 GiB
torch.cuda.synchronize()
print(float(x[:10].sum()))
import time; time.sleep(2)
PY
b=$("$NVQ" submit --parsable -m 4G -n fit -o "$T/fit.out" -- python3 "$T/fit.py")
"$NVQ" wait "$b" > /dev/null 2>&1
peak=$(sqlite3 "$T/nvq.db" "SELECT peak_gpu_mem FROM runs WHERE job_id = $b")
out=$("$NVQ" submit -m auto -n fit -o "$T/fit2.out" -- python3 "$T/fit.py")
echo "(o2) fit peaked at $peak bytes; nvq submit -m auto -n fit said:"
echo "$out" | sed 's/^/    /'
c=$(echo "$out" | sed -n 's/^Submitted job //p')
want=$(sqlite3 "$T/nvq.db" "SELECT mem_per_gpu FROM jobs WHERE id = $c")
check "(o2) a peak was recorded (2 GiB and the context, under 4 GiB)" \
    test "${peak:-0}" -gt $((2 << 30)) -a "${peak:-0}" -lt $((4 << 30))
check "(o2) -m auto took the peak + 10%, rounded up to a MiB" \
    test "$want" = $(( (peak + peak / 10 + (1 << 20) - 1) / (1 << 20) * (1 << 20) ))
check "(o2) and said so" sh -c 'echo "$1" | grep -q "^-m auto: .*, the peak of job $2 (.*) + 10%$"' sh "$out" "$b"
"$NVQ" wait "$c" > /dev/null 2>&1
check "(o2) the -m auto job completed" test "$("$NVQ" show "$c" | awk '$1 == "state" {print $2}')" = COMPLETED
adv=$("$NVQ" show "$b" | awk '$1 == "mem_advice"')
echo "(o2) nvq show $b: $adv"
check "(o2) nvq show gives the -m its peak implies" sh -c 'echo "$1" | grep -q "mem_advice *-m [0-9]*M: its peak .* + 10% (it asked for 4G)"' sh "$adv"
# (o3) DataLoader workers (processes of their own, started by fork) feeding a
# training loop under -m: the job runs to its end, nothing refused
cat > "$T/loader.py" <<'PY'
import torch
from torch.utils.data import DataLoader, TensorDataset
data = TensorDataset(torch.randn(4096, 512), torch.randn(4096, 1))
loader = DataLoader(data, batch_size=256, num_workers=2, pin_memory=True)
m = torch.nn.Sequential(torch.nn.Linear(512, 2048), torch.nn.ReLU(), torch.nn.Linear(2048, 1)).cuda()
opt = torch.optim.SGD(m.parameters(), lr=1e-3)
steps = 0
for epoch in range(3):
    for x, y in loader:
        loss = (m(x.cuda(non_blocking=True)) - y.cuda(non_blocking=True)).pow(2).mean()
        opt.zero_grad(); loss.backward(); opt.step(); steps += 1
torch.cuda.synchronize()
print("steps", steps)
PY
d=$("$NVQ" submit --parsable -m 2G -n loader -o "$T/loader.out" -- python3 "$T/loader.py")
"$NVQ" wait "$d" > /dev/null 2>&1
echo "(o3) DataLoader with 2 workers under -m 2G: $("$NVQ" show "$d" | awk '$1 == "state" {print $2}'); $(tail -n 1 "$T/loader.out")"
check "(o3) the DataLoader job completed its 48 steps" grep -q "^steps 48$" "$T/loader.out"
check "(o3) COMPLETED, with no reason (nothing refused)" test "$("$NVQ" show "$d" | awk '$1 == "state" || $1 == "reason"' | tr -s ' ' | paste -sd' ')" = "state COMPLETED"
echo "oom check: $fails failed"
[ "$fails" = 0 ]
