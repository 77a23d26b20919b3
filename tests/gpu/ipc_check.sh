#!/usr/bin/env bash
# ipc_check.sh [BUILD_DIR]: CUDA IPC between the processes of a job under
# the default configuration ([scheduler] offload = on, so the job's large
# allocations are VMM memory, which the driver's IPC handles cannot name:
# the hook's handles carry them, hook/ipc.h).  torch.multiprocessing
# passes a 256 MiB CUDA tensor to a spawned child, which checks it, adds 1
# to it in place and holds it for a while, then checks it again and adds 1
# again; the parent then checks that it sees both writes.  The same script
# runs outside nvq first.  While the child holds the tensor, nvq gpus must
# show the job's memory as the job's, and nvq suspend must move the memory
# of both processes out (nvidia-smi lists neither), and nvq resume bring it
# back shared: the child's second read and write go to the parent's tensor.
# OFFLOAD=off runs it with the driver's own IPC handles, which its
# checkpoint cannot restore: the suspend must be refused, the job run on.
# Run on a machine with an NVIDIA GPU.
set -u
cd "$(dirname "$0")/../.."
B=${1:-build}
. tests/gpu/lib.sh
gpu_nvqd ipc "log_level = debug" "[gpus]" "poll = 1s" "[scheduler]" "offload = ${OFFLOAD:-on}"
state() { "$NVQ" show "$1" | awk '$1 == "state" {print $2}'; }
cat > "$T/ipc.py" <<'PY'
import sys, time, torch, torch.multiprocessing as mp
N = 64 << 20   # int32: 256 MiB
def child(t, q, hold, flag):
    ok = bool(torch.equal(t[:5].cpu(), torch.arange(5, dtype=torch.int32)))
    ok = ok and int(t[-1]) == N - 1
    t.add_(1); torch.cuda.synchronize()
    q.put(ok)
    open(flag, "w").close()
    time.sleep(hold)   # a suspend and a resume may come meanwhile
    again = bool(torch.equal(t[:1 << 20].cpu(), torch.arange(1, (1 << 20) + 1, dtype=torch.int32)))
    again = again and int(t[-1]) == N
    t.add_(1); torch.cuda.synchronize()
    q.put(again)
if __name__ == "__main__":
    mp.set_start_method("spawn")
    t = torch.arange(N, dtype=torch.int32, device="cuda")
    q = mp.Queue()
    t0 = time.time()
    p = mp.Process(target=child, args=(t, q, float(sys.argv[1]), sys.argv[2])); p.start()
    ok = q.get(timeout=120)
    again = q.get(timeout=600)
    p.join()
    seen = int(t[0]) == 2 and int(t[-1]) == N + 1
    print("child read %s, read again after the wait %s, parent sees its writes %s, %.2f s" %
          ("ok" if ok else "BAD", "ok" if again else "BAD", "ok" if seen else "BAD",
           time.time() - t0), flush=True)
    sys.exit(0 if ok and again and seen else 1)
PY
python3 "$T/ipc.py" 0 "$T/flag0" > "$T/outside.out" 2>&1
echo "outside nvq: $(grep -m1 "^child read" "$T/outside.out" || tail -n 1 "$T/outside.out")"
check "the script works outside nvq" grep -q "^child read ok, read again after the wait ok, parent sees its writes ok" "$T/outside.out"

a=$("$NVQ" submit --parsable -m 4G -o "$T/out" -e "$T/err" -- python3 "$T/ipc.py" 25 "$T/flag")
for _ in $(seq 1200); do [ -f "$T/flag" ] && break; sleep 0.1; done
sleep 2.5	# two NVML polls, and the hooks' reports
echo "nvq gpus while the child holds the parent's tensor:"; "$NVQ" gpus | sed 's/^/    /'
"$NVQ" show "$a" | grep -E '^(hook_pids|gpu_used) ' | sed 's/^/    /'
pids=$("$NVQ" show "$a" | awk '$1 == "hook_pids" {print $2}')
check "both processes are linked" grep -qE '^[0-9]+,[0-9]+$' <<< "$pids"
apps() { nvidia-smi --query-compute-apps=pid,used_memory --format=csv,noheader | grep -E "^(${pids/,/|})," | tr '\n' ' '; }
echo "nvidia-smi before: $(apps)"
t0=$(now); out=$("$NVQ" suspend "$a" 2>&1); rc=$?; t1=$(now)
echo "nvq suspend: rc $rc in $(el "$t0" "$t1") s: $out"
if [ "${OFFLOAD:-on}" = off ]; then
	# the driver's own IPC: its checkpoint cannot restore the importer (export_check.sh)
	check "nvq suspend is refused" test "$rc" != 0
	check "and says why" grep -q "the driver's CUDA IPC" <<< "$out"
	check "the job runs on" test "$(state "$a")" = RUNNING
else
	check "nvq suspend succeeds" test "$rc" = 0
	check "SUSPENDED" test "$(state "$a")" = SUSPENDED
	left=$(apps)
	echo "nvidia-smi after the suspend: ${left:-none of the two}"
	check "nvidia-smi lists neither process" test -z "$left"
	sleep 1
	t2=$(now); "$NVQ" resume "$a" > /dev/null
	for _ in $(seq 600); do [ "$(state "$a")" = RUNNING ] && break; sleep 0.05; done; t3=$(now)
	echo "RUNNING again $(el "$t2" "$t3") s after nvq resume; nvidia-smi: $(apps)"
	check "RUNNING again" test "$(state "$a")" = RUNNING
fi
"$NVQ" wait "$a" > /dev/null 2>&1
echo "in nvq: $(grep -m1 "^child read" "$T/out" || tail -n 1 "$T/out")"
echo "switches: $(sqlite3 "$T/nvq.db" "SELECT group_concat(kind || ' ' || printf('%.2f', seconds) || ' s (hook ' ||
    printf('%.2f', coalesce(hook_seconds, 0)) || ' s for ' || (coalesce(hook_bytes, 0) >> 20) || ' MiB)', '; ')
    FROM switches WHERE job_id = $a")"
check "the job completed" test "$(state "$a")" = COMPLETED
check "the child read the tensor, read it again after the resume, and the parent saw both writes" \
    grep -q "^child read ok, read again after the wait ok, parent sees its writes ok" "$T/out"
check "no process was refused its link" test "$(grep -c "not part of job" "$T/nvqd.log")" = 0
echo "ipc check: $fails failed"
[ "$fails" = 0 ]
