#!/usr/bin/env bash
# control_check.sh: queue control on a real GPU, with a job of several
# processes (torchrun, 2 DDP workers over gloo on GPU 0, each in a session
# of its own, under -m 8G):
#   (c1) nvq requeue: every process of the first run ends and its GPU memory
#        is freed, the job runs again as the same id (restarts 1, 2 runs),
#        both ranks train again; the seconds from requeue to the first step;
#   (c2) a pending job held (nvq hold) does not start though it fits, and
#        starts once released;
#   (c3) nvq drain 0: a new job waits, the running one trains on; nvq
#        undrain 0: it starts.
# Usage: tests/gpu/control_check.sh [BUILD_DIR]
set -u
cd "$(dirname "$0")/../.."
B=${1:-build}
. tests/gpu/lib.sh
gpu_nvqd control "log_level = debug" "[gpus]" "poll = 1s"
check "a GPU found" test "$("$NVQ" gpus --json | grep -c '"uuid"')" -ge 1

cat > "$T/ddp.py" <<'PY'
import os, sys, time, torch, torch.distributed as dist
dist.init_process_group("gloo")
r = dist.get_rank(); torch.cuda.set_device(0)
m = torch.nn.parallel.DistributedDataParallel(
    torch.nn.Sequential(*[torch.nn.Linear(2048, 2048) for _ in range(8)]).cuda())
opt = torch.optim.SGD(m.parameters(), lr=1e-5)
x = torch.randn(256, 2048, device="cuda")
f = open("%s/rank%d" % (sys.argv[1], r), "w", buffering=1)
while True:
    loss = m(x).pow(2).mean(); opt.zero_grad(); loss.backward(); opt.step()
    torch.cuda.synchronize(); f.write("s\n")
PY
TORCHRUN=$(command -v torchrun || echo "python3 -m torch.distributed.run")
state() { "$NVQ" show --json "$1" | head -1 | grep -o '"state":"[A-Z_]*"' | cut -d'"' -f4; }
wait_state() {	# ID STATE SECONDS
	local i
	for i in $(seq $(($3 * 10))); do [ "$(state "$1")" = "$2" ] && return 0; sleep 0.1; done
	return 1
}
# shellcheck disable=SC2086
a=$("$NVQ" submit --parsable -m 8G -n ddp -- $TORCHRUN --standalone --nproc_per_node=2 \
    "$T/ddp.py" "$T")
wait_steps "$T/rank0" 20; wait_steps "$T/rank1" 20
sleep 2
pids=$("$NVQ" show "$a" | awk '$1 == "hook_pids" {print $2}' | tr ',' ' ')
echo "(c1) the first run's hooked processes: $pids"
check "(c1) at least the two ranks are hooked" test "$(echo $pids | wc -w)" -ge 2
t0=$(date +%s.%N)
"$NVQ" requeue "$a" | sed 's/^/    /'
rm -f "$T/rank0" "$T/rank1"
requeued() {	# until the first run's end is recorded (restarts 1), then RUNNING again
	local i
	for i in $(seq 600); do
		[ "$(sqlite3 "$T/nvq.db" "SELECT restarts FROM jobs WHERE id = $a")" = 1 ] && break
		sleep 0.1
	done
	wait_state "$a" RUNNING 60
}
check "(c1) back to PENDING, then RUNNING again" requeued
t2=$(date +%s.%N)
echo "(c1) from nvq requeue to its second run RUNNING: $(python3 -c "print(round($t2 - $t0, 2))") s"
restarts=$(sqlite3 "$T/nvq.db" "SELECT restarts FROM jobs WHERE id = $a")
runs=$(sqlite3 "$T/nvq.db" "SELECT count(*) FROM runs WHERE job_id = $a")
check "(c1) restarts 1, two runs (got $restarts, $runs)" test "$restarts/$runs" = "1/2"
left=""
for p in $pids; do kill -0 "$p" 2>/dev/null && left="$left $p"; done
check "(c1) no process of the first run is left (left:${left:- none})" test -z "$left"
gone=1
for p in $pids; do
	nvidia-smi --query-compute-apps=pid --format=csv,noheader | grep -qw "$p" && gone=0
done
check "(c1) none of them holds GPU memory" test $gone = 1
wait_steps "$T/rank0" 5; wait_steps "$T/rank1" 5
t1=$(date +%s.%N)
check "(c1) both ranks train again" test "$(lines "$T/rank0")" -ge 5 -a "$(lines "$T/rank1")" -ge 5
echo "(c1) from nvq requeue to both ranks' 5th step again: $(python3 -c "print(round($t1 - $t0, 2))") s"

b=$("$NVQ" submit --parsable --hold -m 8G -- python3 -c 'import torch; torch.ones(1, device="cuda")')
sleep 3
check "(c2) a held job that fits stays PENDING" test "$(state "$b")" = PENDING
"$NVQ" release "$b" | sed 's/^/    /'
check "(c2) released, it runs and COMPLETED" wait_state "$b" COMPLETED 60

"$NVQ" drain 0 maintenance | sed 's/^/    /'
c=$("$NVQ" submit --parsable -m 1G -- python3 -c 'import torch; torch.ones(1, device="cuda")')
n0=$(lines "$T/rank0"); sleep 3
check "(c3) a new job waits on the drained GPU" test "$(state "$c")" = PENDING
echo "(c3) its reason: $("$NVQ" list | awk -v id="$c" '$1 == id' | sed 's/  */ /g')"
check "(c3) the running job trains on ($(( $(lines "$T/rank0") - n0 )) steps in 3 s)" \
    test "$(lines "$T/rank0")" -gt "$n0"
"$NVQ" undrain 0 | sed 's/^/    /'
check "(c3) undrained, it runs and COMPLETED" wait_state "$c" COMPLETED 60
"$NVQ" cancel "$a" > /dev/null
check "(c1) the job cancelled" wait_state "$a" CANCELLED 60
echo "control_check: $fails failed"
[ $fails = 0 ]
