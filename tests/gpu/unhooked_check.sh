#!/usr/bin/env bash
# unhooked_check.sh [BUILD]: a job whose processes are not all hooked.
#   - a PyTorch process holding 4 GiB that feeds itself through a DataLoader
#     with 2 forked workers (they map libcuda but hold no CUDA state);
#   - a PyTorch process started without LD_PRELOAD (no hook) holding 2 GiB.
# nvq suspend must free the GPU of both (the unhooked one through the
# driver's checkpoint alone), leave the workers be, and not wait on them;
# after nvq resume both check their data bit for bit.
set -u
cd "$(dirname "$0")/../.."
B=${1:-build}
. tests/gpu/lib.sh
gpu_nvqd unhooked "[scheduler]" "preempt = off"
cat > "$T/loader.py" <<'PY'
import sys, time, torch
from torch.utils.data import DataLoader
progress = sys.argv[1]
n = (4 << 30) // 4
x = torch.arange(n, dtype=torch.int32, device="cuda")
loader = DataLoader(list(range(100000)), batch_size=64, num_workers=2, persistent_workers=True)
m = torch.randn(2048, 2048, device="cuda")
it, gaps, last, end = 0, 0, time.time(), time.time() + 40
while time.time() < end or gaps == 0:
    for b in loader:
        y = (m @ m).sum() + b.sum().cuda()
        torch.cuda.synchronize()
        now = time.time()
        gaps += now - last >= 1.0
        last = now
        it += 1
        with open(progress, "w") as f:
            f.write("%d\n" % it)
        if time.time() >= end and gaps:
            break
ok = torch.equal(x, torch.arange(n, dtype=torch.int32, device="cuda"))
print("loader: %d steps, %d gaps, data %s" % (it, gaps, "ok" if ok else "BAD"), flush=True)
sys.exit(0 if ok else 1)
PY
id=$("$NVQ" submit --parsable -m 12G -o "$T/j.out" -e "$T/j.out" bash -c \
    "python3 $T/loader.py $T/l & l=\$!; env -u LD_PRELOAD python3 $PWD/tests/gpu/holder.py 2 20 $T/u;
    h=\$?; wait \$l; exit \$(( \$? | h ))")
for i in $(seq 900); do [ "$(count "$T/l")" -gt 20 ] && [ "$(count "$T/u")" -gt 5 ] && break; sleep 0.1; done
before=$(nvidia-smi --query-gpu=memory.used --format=csv,noheader,nounits -i 0)
echo "processes: $(pgrep -f "$T/loader.py" | tr '\n' ' ') (loader and its workers), $(pgrep -f "holder.py 2 20 $T/u" | tr '\n' ' ') (unhooked)"
t0=$(now); out=$("$NVQ" suspend "$id" 2>&1); t1=$(now)
after=$(nvidia-smi --query-gpu=memory.used --format=csv,noheader,nounits -i 0)
check "$out (in $(el "$t0" "$t1") s)" [ "$out" = "job $id suspended" ]
check "GPU memory used $before -> $after MiB" [ "$after" -lt 100 ]
grep -E "suspending|skip|SUSPENDED" "$T/nvqd.log" | sed 's/^/    /'
sleep 2
"$NVQ" resume "$id" > /dev/null
"$NVQ" wait "$id"; rc=$?
grep -E "loader:|end:|rror" "$T/j.out" | head -5
check "both processes' data intact after the round trip" [ "$rc" = 0 ]
echo "$fails failed"
[ "$fails" = 0 ]
