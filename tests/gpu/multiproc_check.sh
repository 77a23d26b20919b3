#!/usr/bin/env bash
# multiproc_check.sh: jobs of several processes.
#   (m1) torchrun --nproc_per_node=2 (DDP, each worker in a session of its
#        own) under -m 8G: over NCCL on two GPUs (-g 2), or over gloo with
#        both workers on the one GPU where there is one: it completes; how many of its
#        processes' hooks nvqd took or refused, what nvq gpus calls outside
#        use, and whether nvq hold stops both ranks;
#   (m2) torch.multiprocessing passing a CUDA tensor to a spawned child
#        (CUDA IPC), with [scheduler] offload on and off: both complete
#        (tests/gpu/ipc_check.sh goes further);
#   (m3) two torchrun jobs as in (m1) on all GPUs, each with -m over half a
#        GPU's budget, so one waits for the other: the second is prepared
#        while the first runs (nvqd hands it to its supervisor ahead, and
#        its processes start only on nvqd's word); both complete, the
#        second under the supervisor prepared for it, after the first.
# Checks what must hold now; prints as "issue 13:" the figures of what
# issue 13 is to fix.  Usage: tests/gpu/multiproc_check.sh [BUILD_DIR]
set -u
cd "$(dirname "$0")/../.."
B=${1:-build}
. tests/gpu/lib.sh
gpu_nvqd mproc "log_level = debug" "[gpus]" "poll = 1s"
ngpus=$("$NVQ" gpus --json | grep -c '"uuid"')
check "a GPU found" test "$ngpus" -ge 1
[ "$ngpus" -ge 2 ] && { g=2; backend=nccl; } || { g=1; backend=gloo; }
echo "(m1) $g GPU(s), backend $backend"

cat > "$T/ddp.py" <<'PY'
import faulthandler, os, signal, sys, time, torch, torch.distributed as dist
faulthandler.register(signal.SIGUSR2, all_threads=True)	# stacks, if it hangs (jobwait)
dist.init_process_group(sys.argv[3])
r = dist.get_rank(); torch.cuda.set_device(r % torch.cuda.device_count())
m = torch.nn.parallel.DistributedDataParallel(
    torch.nn.Sequential(*[torch.nn.Linear(2048, 2048) for _ in range(8)]).cuda())
opt = torch.optim.SGD(m.parameters(), lr=1e-5)
x = torch.randn(256, 2048, device="cuda")
f = open("%s/rank%d" % (sys.argv[1], r), "w", buffering=1)
end = time.time() + float(sys.argv[2])
# rank 0 alone says when to stop: ranks that each read the clock can
# disagree by one step, and the one a step ahead waits in its all-reduce
# for ever (the hang seen on two GPUs, with and without nvq's hold)
go = torch.ones(1, device="cuda")
while True:
    go.fill_(float(time.time() < end)); dist.broadcast(go, 0)
    if not go.item(): break
    loss = m(x).pow(2).mean(); opt.zero_grad(); loss.backward(); opt.step()
    torch.cuda.synchronize(); f.write("s\n")
dist.destroy_process_group()
PY
TORCHRUN=$(command -v torchrun || echo "python3 -m torch.distributed.run")
# nvq wait, but at most LIMIT seconds: a job that hangs (NCCL, or its GPU
# lock) fails the check and says where it is: nvqd's last words, its
# processes' states and the Python stacks of ddp.py's ranks (SIGUSR2)
jobwait() {	# LIMIT ID...
	local limit=$1; shift
	timeout "$limit" "$NVQ" wait "$@" > /dev/null 2>&1
	[ $? != 124 ] && return 0
	echo "jobwait: job(s) $* still active after ${limit}s; nvqd's last words:"
	grep -v "lock timer" "$T/nvqd.log" | tail -12 | sed 's/^/    /'
	local p
	# the ranks (python -u ddp.py), not torchrun, whom SIGUSR2 would end
	for p in $(pgrep -f -- "-u $T/ddp.py"); do
		echo "    pid $p $(awk '/^State/ {print $2}' /proc/$p/status) $(cat /proc/$p/wchan 2>/dev/null)"
		kill -USR2 "$p" 2> /dev/null
	done
	sleep 1
	for f in "$T"/spool/*/*.err; do tail -n 30 "$f" | sed "s|^|    $(basename "$f"): |"; done
	return 1
}
# shellcheck disable=SC2086
a=$("$NVQ" submit --parsable -g $g -m 8G -n ddp -- $TORCHRUN --standalone --nproc_per_node=2 \
    "$T/ddp.py" "$T" 25 $backend)
wait_steps "$T/rank0" 20; wait_steps "$T/rank1" 20
sleep 2
echo "issue 13: nvq gpus while torchrun runs:"; "$NVQ" gpus | sed 's/^/    /'
linked=$(grep -c "job $a: process [0-9]* linked" "$T/nvqd.log")
refused=$(grep -c "not part of job $a" "$T/nvqd.log")
echo "issue 13: hooks linked $linked, refused $refused (nvq show: hook_pids $("$NVQ" show "$a" | awk '$1 == "hook_pids" {print $2}'))"
"$NVQ" hold "$a" | sed 's/^/    /'
r0=$(lines "$T/rank0"); r1=$(lines "$T/rank1"); sleep 3
echo "issue 13: steps in the 3 s after nvq hold returned: rank 0 $(( $(lines "$T/rank0") - r0 )), rank 1 $(( $(lines "$T/rank1") - r1 ))"
"$NVQ" release "$a" > /dev/null
# NCCL shares its buffers between ranks with cuMemExportToShareableHandle: the
# driver cannot restore them (export_check.sh), so a suspend must be refused
# untouched, and the job must run on
if [ $backend = nccl ]; then
	susp=$("$NVQ" suspend "$a" 2>&1); rc=$?
	echo "(m1) nvq suspend of the NCCL job: rc $rc: $susp"
	check "(m1) the suspend of the NCCL job is refused, saying why" \
	    sh -c "[ $rc -ne 0 ] && echo \"\$1\" | grep -q 'cannot move'" sh "$susp"
	r0=$(lines "$T/rank0"); sleep 2
	check "(m1) and it runs on" test "$(lines "$T/rank0")" -gt "$r0"
fi
jobwait 120 "$a"
check "(m1) the torchrun job completed" test "$("$NVQ" show "$a" | awk '$1 == "state" {print $2}')" = COMPLETED
check "(m1) both ranks stepped" test "$(lines "$T/rank0")" -ge 20 -a "$(lines "$T/rank1")" -ge 20

cat > "$T/ipc.py" <<'PY'
import torch, torch.multiprocessing as mp
def child(t, q):
    q.put(float(t.sum()))
if __name__ == "__main__":
    mp.set_start_method("spawn")
    t = torch.full((1 << 20,), 2.0, device="cuda")
    q = mp.Queue()
    p = mp.Process(target=child, args=(t, q)); p.start()
    print("child sum", q.get(timeout=60)); p.join()
PY
for off in on off; do
	if [ $off = off ]; then
		kill $NVQD_PID; wait $NVQD_PID 2> /dev/null
		printf '[scheduler]\noffload = off\n' >> "$T/nvq.ini"
		"$NVQD" -c "$T/nvq.ini" 2>> "$T/nvqd.log" &
		NVQD_PID=$!
		for _ in $(seq 100); do "$NVQ" list > /dev/null 2>&1 && break; sleep 0.1; done
	fi
	b=$("$NVQ" submit --parsable -m 4G -n ipc-$off -o "$T/ipc-$off.out" -- python3 "$T/ipc.py")
	jobwait 120 "$b"
	st=$("$NVQ" show "$b" | awk '$1 == "state" {print $2}')
	echo "(m2) offload $off: $st; $(grep -m1 'child sum' "$T/ipc-$off.out" || tail -n 1 "$T/ipc-$off.out")"
	check "(m2) CUDA IPC to a spawned child with offload $off" test "$st" = COMPLETED
	check "(m2) the child read the parent's tensor (offload $off)" grep -q "^child sum 2097152.0$" "$T/ipc-$off.out"
done
# (m3): -m over half the smallest budget (the budget is in bytes), in GiB
half=$("$NVQ" gpus --json | grep -o '"budget":[0-9]*' | cut -d: -f2 | sort -n | head -1)
m3=$(( half / 2 / 1073741824 + 1 ))G
rm -f "$T"/rank*
# shellcheck disable=SC2086
c1=$("$NVQ" submit --parsable -g $ngpus -m $m3 -n ddp1 -- $TORCHRUN --standalone \
    --nproc_per_node=2 "$T/ddp.py" "$T" 8 $backend)
# shellcheck disable=SC2086
c2=$("$NVQ" submit --parsable -g $ngpus -m $m3 -n ddp2 -- $TORCHRUN --standalone \
    --nproc_per_node=2 "$T/ddp.py" "$T" 8 $backend)
jobwait 150 "$c1" "$c2"
sup=$(sed -n "s/.*job $c2: prepared ahead by supervisor \([0-9]*\).*/\1/p" "$T/nvqd.log" | tail -1)
echo "(m3) -m $m3 each on $ngpus GPU(s): $("$NVQ" show "$c1" | awk '$1 == "state" {print $2}') /" \
    "$("$NVQ" show "$c2" | awk '$1 == "state" {print $2}'); job $c2 prepared by supervisor ${sup:-none}," \
    "started under $(grep -o "job $c2 started (pid [0-9]*)" "$T/nvqd.log" | grep -o '[0-9]*)' | tr -d ')')"
check "(m3) both completed" test "$("$NVQ" show "$c1" | awk '$1 == "state" {print $2}')$("$NVQ" show "$c2" | awk '$1 == "state" {print $2}')" = COMPLETEDCOMPLETED
check "(m3) the second was prepared while the first ran" test -n "$sup"
check "(m3) and ran under that supervisor" grep -q "job $c2 started (pid $sup)" "$T/nvqd.log"
# (sqlite3: the shell, or lib.sh's Python stand-in on a host without it)
check "(m3) one after the other" test "$(sqlite3 "$T/nvq.db" "SELECT (SELECT started_at FROM runs WHERE job_id = $c2) >= (SELECT ended_at FROM runs WHERE job_id = $c1) - 0.01")" = 1
echo "multiproc check: $fails failed"
[ "$fails" = 0 ]
