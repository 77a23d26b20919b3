#!/usr/bin/env bash
# timeslice_ddp.sh: two 2-GPU DDP jobs (NCCL) taking turns on the same two
# GPUs under compute = timeslice (issue 40, item 2).  First one job alone,
# then two at once, each the same fixed number of steps with -m 12G.
# Prints each time, the ratio pair/one (target: 2.2 or less), whether both
# COMPLETED, the SIGSTOPs in nvqd's log (target: 0) and whether each job's
# replicas ended equal (each rank writes a checksum of its parameters).
# Needs two GPUs; NCCL_NVLS_ENABLE=0 is set for the jobs.
# Usage: tests/gpu/timeslice_ddp.sh [BUILD_DIR]   (STEPS=6000, QUANTUM=5s)
set -u
cd "$(dirname "$0")/../.."
B=${1:-build}
STEPS=${STEPS:-6000}
. tests/gpu/lib.sh
gpu_nvqd2 tsddp "log_level = debug" "[scheduler]" "compute = timeslice" "quantum = ${QUANTUM:-5s}" \
    "revoke_timeout = 10s"
cat > "$T/ddp.py" <<'PY'
import sys, time, torch, torch.distributed as dist
dist.init_process_group("nccl")
r = dist.get_rank(); torch.cuda.set_device(r)
torch.manual_seed(0)
m = torch.nn.parallel.DistributedDataParallel(
    torch.nn.Sequential(*[torch.nn.Linear(2048, 2048) for _ in range(8)]).cuda())
opt = torch.optim.SGD(m.parameters(), lr=1e-5)
g = torch.Generator(device="cuda"); g.manual_seed(1 + r)
x = torch.randn(256, 2048, device="cuda", generator=g)
dist.barrier(); torch.cuda.synchronize(); t0 = time.time()
for i in range(int(sys.argv[3])):
    loss = m(x).pow(2).mean(); opt.zero_grad(); loss.backward(); opt.step()
    if i % 100 == 0:
        loss.item()	# the host waits for the step, as a training loop's logging does
torch.cuda.synchronize(); t1 = time.time()
s = sum(p.double().sum().item() for p in m.parameters())
open("%s/%s.rank%d" % (sys.argv[1], sys.argv[2], r), "w").write("%.12e %.3f\n" % (s, t1 - t0))
dist.destroy_process_group()
PY
TORCHRUN=$(command -v torchrun || echo "python3 -m torch.distributed.run")
submit() {	# NAME: a 2-GPU job of STEPS steps; its id
	# shellcheck disable=SC2086
	"$NVQ" submit --parsable -g 2 -m 12G -n "$1" -- $TORCHRUN --standalone \
	    --nproc_per_node=2 "$T/ddp.py" "$T" "$1" "$STEPS"
}
state() { "$NVQ" show "$1" | awk '$1 == "state" {print $2}'; }
replicas() {	# NAME: "equal" if both ranks wrote the same checksum
	local a b
	a=$(awk '{print $1}' "$T/$1.rank0" 2>/dev/null); b=$(awk '{print $1}' "$T/$1.rank1" 2>/dev/null)
	[ -n "$a" ] && [ "$a" = "$b" ] && echo equal || echo "differ ($a, $b)"
}
t0=$(now); one=$(submit one); timeout 600 "$NVQ" wait "$one" > /dev/null 2>&1; t1=$(now)
t_one=$(el "$t0" "$t1")
echo "one alone: $t_one s ($(state "$one")), training $(awk '{print $2}' "$T/one.rank0") s, replicas $(replicas one)"
t0=$(now); a=$(submit pa); b=$(submit pb)
timeout 900 "$NVQ" wait "$a" > /dev/null 2>&1; timeout 900 "$NVQ" wait "$b" > /dev/null 2>&1
t1=$(now); t_pair=$(el "$t0" "$t1")
ratio=$(awk -v p="$t_pair" -v o="$t_one" 'BEGIN { printf "%.2f", p / o }')
stops=$(grep -c SIGSTOP "$T/nvqd.log")
echo "the pair: $t_pair s (a $(state "$a"), b $(state "$b")); ratio pair/one $ratio; training a $(awk '{print $2}' "$T/pa.rank0") s, b $(awk '{print $2}' "$T/pb.rank0") s"
echo "SIGSTOP in nvqd's log: $stops; cuts not reached: $(grep -c 'did not reach the same collective' "$T/nvqd.log"); grants: $(grep -c 'lock granted' "$T/nvqd.log")"
echo "replicas: a $(replicas pa), b $(replicas pb)"
check "one alone completed" test "$(state "$one")" = COMPLETED
check "both of the pair completed" test "$(state "$a")/$(state "$b")" = COMPLETED/COMPLETED
check "the pair took at most 2.2x one alone ($ratio)" awk -v r="$ratio" 'BEGIN { exit !(r <= 2.2) }'
check "no SIGSTOP" test "$stops" = 0
check "replicas equal" test "$(replicas one) $(replicas pa) $(replicas pb)" = "equal equal equal"
echo "timeslice_ddp: $fails failed"
