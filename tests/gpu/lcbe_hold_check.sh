#!/usr/bin/env bash
# lcbe_hold_check.sh: nvq hold of a 2-GPU best-effort DDP job (NCCL) whose
# ranks yield to a latency-critical job kept busy on GPU 0, HOLDS times (5),
# with be_max_wait (30 s) far past revoke_timeout (5 s): each hold must
# drain without SIGSTOP and within revoke_timeout (a be launch stops
# yielding once its job's lock is being taken back), no step while held,
# and both ranks end with equal replicas.  Then the lc job ends and the be
# job must run on.  The system test t_lcbe_hold_be checks the same against
# the fake libcuda.
# Needs two GPUs; NCCL_NVLS_ENABLE=0 is set for the jobs.
# Usage: tests/gpu/lcbe_hold_check.sh [BUILD_DIR]
set -u
cd "$(dirname "$0")/../.."
B=${1:-build}
HOLDS=${HOLDS:-5}
. tests/gpu/lib.sh
gpu_nvqd2 lcbehold "[class lc]" "users = *" "be_max_wait = 30000" "[scheduler]" \
    "revoke_timeout = 5s"
cat > "$T/ddp.py" <<'PY'
import os, sys, torch, torch.distributed as dist
dist.init_process_group("nccl")
r = dist.get_rank(); torch.cuda.set_device(r)
m = torch.nn.parallel.DistributedDataParallel(
    torch.nn.Sequential(*[torch.nn.Linear(2048, 2048) for _ in range(8)]).cuda())
opt = torch.optim.SGD(m.parameters(), lr=1e-5)
x = torch.randn(256, 2048, device="cuda")
f = open("%s/be.rank%d" % (sys.argv[1], r), "w", buffering=1)
go = torch.ones(1, device="cuda")
while True:
    go.fill_(float(not os.path.exists(sys.argv[1] + "/stop"))); dist.broadcast(go, 0)
    if not go.item(): break
    loss = m(x).pow(2).mean(); opt.zero_grad(); loss.backward(); opt.step()
    torch.cuda.synchronize(); f.write("s\n")
s = torch.tensor([sum(float(p.double().sum()) for p in m.parameters())], device="cuda")
open("%s/be.sum%d" % (sys.argv[1], r), "w").write("%.6f\n" % s.item())
dist.destroy_process_group()
PY
cat > "$T/busy.py" <<'PY'
import os, sys, torch
a = torch.randn(8192, 8192, device="cuda")
f = open(sys.argv[1] + "/lc.steps", "w", buffering=1)
while not os.path.exists(sys.argv[1] + "/stop.lc"):
    for _ in range(4):
        a = (a @ a).clamp_(-1, 1)
    torch.cuda.synchronize(); f.write("s\n")
PY
TORCHRUN=$(command -v torchrun || echo "python3 -m torch.distributed.run")
# shellcheck disable=SC2086
be=$("$NVQ" submit --parsable -g 2 -m 8G -n be -- $TORCHRUN --standalone --nproc_per_node=2 \
    "$T/ddp.py" "$T")
wait_steps "$T/be.rank0" 20; wait_steps "$T/be.rank1" 20
lc=$("$NVQ" submit --parsable --class lc -w 0 -m 8G -n lc -- python3 "$T/busy.py" "$T")
wait_steps "$T/lc.steps" 5
a=$(lines "$T/be.rank0"); sleep 3; b=$(lines "$T/be.rank0")
echo "be steps in 3 s beside the busy lc job: $((b - a))"
drained=0 stopped=0 moved=0 late=0 times=""
for i in $(seq "$HOLDS"); do
	t0=$(now); out=$("$NVQ" hold "$be" 2>&1); t1=$(now)
	case $out in
	*SIGSTOP*) stopped=$((stopped + 1)) ;;
	*drained*) drained=$((drained + 1)) ;;
	*) echo "hold $i: $out" ;;
	esac
	times="$times $(el "$t0" "$t1")"
	awk -v t="$(el "$t0" "$t1")" 'BEGIN { exit !(t < 5) }' || late=$((late + 1))
	r0=$(lines "$T/be.rank0"); r1=$(lines "$T/be.rank1"); sleep 2
	[ "$(lines "$T/be.rank0")" = "$r0" ] && [ "$(lines "$T/be.rank1")" = "$r1" ] ||
	    moved=$((moved + 1))
	"$NVQ" release "$be" > /dev/null
	sleep 1
done
echo "$HOLDS holds: drained $drained, SIGSTOP $stopped, past revoke_timeout $late," \
    "rounds with steps while held $moved"
echo "nvq hold took (s):$times"
check "every hold drained" test "$drained" = "$HOLDS"
check "no hold ended in SIGSTOP" test "$stopped" = 0
check "each within revoke_timeout, not be_max_wait" test "$late" = 0
check "no step while held" test "$moved" = 0
touch "$T/stop.lc"
timeout 60 "$NVQ" wait "$lc" > /dev/null 2>&1
a=$(lines "$T/be.rank0"); sleep 3; b=$(lines "$T/be.rank0")
echo "be steps in 3 s once lc ended: $((b - a))"
check "be runs on once lc ended" test $((b - a)) -gt 0
touch "$T/stop"
timeout 120 "$NVQ" wait "$be" > /dev/null 2>&1
check "the be job completed" test "$("$NVQ" show "$be" | awk '$1 == "state" {print $2}')" = COMPLETED
s0=$(cat "$T/be.sum0" 2> /dev/null); s1=$(cat "$T/be.sum1" 2> /dev/null)
check "replicas equal ($s0, $s1)" test -n "$s0" -a "$s0" = "$s1"
check "no SIGSTOP in nvqd's log" test "$(grep -c SIGSTOP "$T/nvqd.log")" = 0
echo "lcbe_hold_check: $fails failed"
