#!/usr/bin/env bash
# two_gpu_suspend.sh [BUILD] [GIB]: a job holding GIB GiB (8) on each of two
# GPUs, copying between them (peer copies) and running matmuls on both, is
# suspended and resumed through nvq with the hook's offload (the default):
# its memory on both GPUs goes to host memory and back to the same
# addresses.  After the resume it checks every byte on both GPUs, copies
# across again and compares.  Needs two GPUs (the device tool's nvidia-h200-x2).
set -u
cd "$(dirname "$0")/../.."
B=${1:-build}; GIB=${2:-8}
. tests/gpu/lib.sh
gpu_nvqd 2gpu-suspend "[scheduler]" "preempt = off"
used() { nvidia-smi --query-gpu=memory.used --format=csv,noheader,nounits | tr '\n' ' '; }
cat > "$T/two.py" <<'PY'
import os, sys, time, torch
gib, progress = float(sys.argv[1]), sys.argv[2]
n = int(gib * (1 << 30)) // 4
def pattern(d, a, b):
    return ((torch.arange(a, b, dtype=torch.int64, device="cuda:%d" % d) * 2654435761 + d) % 65521).to(torch.int32)
xs = [torch.empty(n, dtype=torch.int32, device="cuda:%d" % d) for d in (0, 1)]
chunk = 1 << 26
for d in (0, 1):
    for a in range(0, n, chunk):
        xs[d][a:min(n, a + chunk)] = pattern(d, a, min(n, a + chunk))
def verify():
    ok = all(torch.equal(xs[d][a:min(n, a + chunk)], pattern(d, a, min(n, a + chunk)))
             for d in (0, 1) for a in range(0, n, chunk))
    # across: a piece of GPU 0's memory copied to GPU 1 and back
    y = xs[0][:chunk].to("cuda:1")
    return ok and torch.equal(y.to("cuda:0"), xs[0][:chunk]) and torch.equal(y, pattern(0, 0, chunk).to("cuda:1"))
ms = [torch.randn(4096, 4096, device="cuda:%d" % d) for d in (0, 1)]
it, gaps, bad, last = 0, 0, 0, time.time()
end = time.time() + 40
while time.time() < end or gaps == 0:
    for d in (0, 1):
        ms[d] @ ms[d]
    z = xs[0][:1 << 20].to("cuda:1")
    torch.cuda.synchronize(0); torch.cuda.synchronize(1)
    now = time.time()
    if now - last >= 1.0:
        gaps += 1
        ok = verify()
        bad += not ok
        print("gap %.1fs: both GPUs %s" % (now - last, "ok" if ok else "BAD"), flush=True)
    last = time.time()
    it += 1
    with open(progress, "w") as f:
        f.write("%d\n" % it)
ok = verify()
print("end: %d iterations, %d gaps, final check %s" % (it, gaps, "ok" if ok else "BAD"), flush=True)
sys.exit(0 if ok and not bad else 1)
PY
id=$(NVQ_DEBUG=1 "$NVQ" submit --parsable -g 2 -m "$((GIB + 4))G" -o "$T/j.out" -e "$T/j.out" \
    python3 "$T/two.py" "$GIB" "$T/p")
for i in $(seq 600); do [ "$(count "$T/p")" -gt 20 ] && break; sleep 0.1; done
before=$(used)
t0=$(now); out=$("$NVQ" suspend "$id" 2>&1); t1=$(now)
check "$out" [ "$out" = "job $id suspended" ]
echo "GPU memory used (MiB): $before -> $(used) in $(el "$t0" "$t1") s"
sleep 2
t2=$(now); "$NVQ" resume "$id" > /dev/null
c=$(count "$T/p"); for i in $(seq 600); do [ "$(count "$T/p")" -gt "$c" ] && break; sleep 0.1; done
echo "running again $(el "$t2" "$(now)") s after nvq resume"
"$NVQ" wait "$id"; rc=$?
grep -E "gap|end|offload|rror" "$T/j.out" | head -20
check "both GPUs' data intact after the round trip, peer copies work" [ "$rc" = 0 ]
echo "switches: $(sqlite3 "$T/nvq.db" "SELECT group_concat(kind || ' ' || printf('%.2f', seconds) || 's, hook ' ||
    (coalesce(hook_bytes, 0) >> 20) || ' MiB in ' || printf('%.2f', coalesce(hook_seconds, 0)) || 's', '; ') FROM switches")"
echo "$fails failed"
[ "$fails" = 0 ]
