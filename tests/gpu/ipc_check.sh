#!/usr/bin/env bash
# ipc_check.sh [BUILD_DIR]: CUDA IPC between the processes of a job under
# the default configuration ([scheduler] offload = on, so the job's large
# allocations are VMM memory, which the driver's IPC handles cannot name:
# the hook's handles carry them, hook/ipc.h).  torch.multiprocessing
# passes a 256 MiB CUDA tensor to a spawned child, which checks it, adds 1
# to it in place and holds it for a while; the parent then checks that it
# sees the child's writes.  The same script runs outside nvq first.  While
# the child holds the tensor, nvq suspend must be refused with the reason
# and change nothing; nvq gpus must show the job's memory as the job's.
# Run on a machine with an NVIDIA GPU.
set -u
cd "$(dirname "$0")/../.."
B=${1:-build}
. tests/gpu/lib.sh
gpu_nvqd ipc "log_level = debug" "[gpus]" "poll = 1s"
cat > "$T/ipc.py" <<'PY'
import sys, time, torch, torch.multiprocessing as mp
N = 64 << 20   # int32: 256 MiB
def child(t, q, hold, flag):
    ok = bool(torch.equal(t[:5].cpu(), torch.arange(5, dtype=torch.int32)))
    ok = ok and int(t[-1]) == N - 1
    t.add_(1); torch.cuda.synchronize()
    q.put(ok)
    open(flag, "w").close()
    time.sleep(hold)
if __name__ == "__main__":
    mp.set_start_method("spawn")
    t = torch.arange(N, dtype=torch.int32, device="cuda")
    q = mp.Queue()
    t0 = time.time()
    p = mp.Process(target=child, args=(t, q, float(sys.argv[1]), sys.argv[2])); p.start()
    ok = q.get(timeout=120)
    p.join()
    seen = int(t[0]) == 1 and int(t[-1]) == N
    print("child read %s, parent sees its writes %s, %.2f s" %
          ("ok" if ok else "BAD", "ok" if seen else "BAD", time.time() - t0), flush=True)
    sys.exit(0 if ok and seen else 1)
PY
python3 "$T/ipc.py" 0 "$T/flag0" > "$T/outside.out" 2>&1
echo "outside nvq: $(grep -m1 "^child read" "$T/outside.out" || tail -n 1 "$T/outside.out")"
check "the script works outside nvq" grep -q "^child read ok, parent sees its writes ok" "$T/outside.out"

a=$("$NVQ" submit --parsable -m 4G -o "$T/out" -e "$T/err" -- python3 "$T/ipc.py" 12 "$T/flag")
for _ in $(seq 1200); do [ -f "$T/flag" ] && break; sleep 0.1; done
sleep 2.5	# two NVML polls, and the hooks' reports
echo "nvq gpus while the child holds the parent's tensor:"; "$NVQ" gpus | sed 's/^/    /'
"$NVQ" show "$a" | grep -E '^(hook_pids|gpu_used) ' | sed 's/^/    /'
out=$("$NVQ" suspend "$a" 2>&1); rc=$?
echo "nvq suspend: rc $rc: $out"
check "nvq suspend is refused" test "$rc" != 0
check "and says why" grep -q "share GPU memory through CUDA IPC" <<< "$out"
check "the job runs on" test "$("$NVQ" show "$a" | awk '$1 == "state" {print $2}')" = RUNNING
"$NVQ" wait "$a" > /dev/null 2>&1
echo "in nvq: $(grep -m1 "^child read" "$T/out" || tail -n 1 "$T/out")"
check "the job completed" test "$("$NVQ" show "$a" | awk '$1 == "state" {print $2}')" = COMPLETED
check "the child read the tensor and the parent saw its writes" \
    grep -q "^child read ok, parent sees its writes ok" "$T/out"
check "no process was refused its link" test "$(grep -c "not part of job" "$T/nvqd.log")" = 0
echo "ipc check: $fails failed"
[ "$fails" = 0 ]
