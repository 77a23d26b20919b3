#!/usr/bin/env bash
# ddp_hold_loop.sh: nvq hold and release of a 2-GPU DDP job whose ranks talk
# through NCCL, HOLDS times in a row (20), once with NCCL's cuMem buffers
# and once with NCCL_CUMEM_ENABLE=0 (legacy CUDA IPC).  Each round: nvq
# hold, the steps every rank makes in the 2 s after it returned (0 when held),
# nvq release, and progress again.  A hold that ends in SIGSTOP counts as a
# failure (issue 40: a rank stopped before a collective a peer launched).
# Needs two GPUs; NCCL_NVLS_ENABLE=0 is set for the jobs.
# Usage: tests/gpu/ddp_hold_loop.sh [BUILD_DIR]
set -u
cd "$(dirname "$0")/../.."
B=${1:-build}
HOLDS=${HOLDS:-20}
. tests/gpu/lib.sh
gpu_nvqd2 ddphold "[scheduler]" "revoke_timeout = 5s"
cat > "$T/ddp.py" <<'PY'
import os, sys, time, torch, torch.distributed as dist
dist.init_process_group("nccl")
r = dist.get_rank(); torch.cuda.set_device(r)
m = torch.nn.parallel.DistributedDataParallel(
    torch.nn.Sequential(*[torch.nn.Linear(2048, 2048) for _ in range(8)]).cuda())
opt = torch.optim.SGD(m.parameters(), lr=1e-5)
x = torch.randn(256, 2048, device="cuda")
f = open("%s/%s.rank%d" % (sys.argv[1], sys.argv[2], r), "w", buffering=1)
go = torch.ones(1, device="cuda")
while True:
    go.fill_(float(not os.path.exists(sys.argv[1] + "/stop." + sys.argv[2]))); dist.broadcast(go, 0)
    if not go.item(): break
    loss = m(x).pow(2).mean(); opt.zero_grad(); loss.backward(); opt.step()
    torch.cuda.synchronize(); f.write("s\n")
dist.destroy_process_group()
PY
TORCHRUN=$(command -v torchrun || echo "python3 -m torch.distributed.run")
for mode in cumem legacy; do
	[ $mode = legacy ] && export NCCL_CUMEM_ENABLE=0
	# shellcheck disable=SC2086
	a=$("$NVQ" submit --parsable -g 2 -m 8G -n ddp-$mode -- $TORCHRUN --standalone \
	    --nproc_per_node=2 "$T/ddp.py" "$T" $mode)
	wait_steps "$T/$mode.rank0" 20; wait_steps "$T/$mode.rank1" 20
	drained=0 stopped=0 moved=0 times=""
	for i in $(seq "$HOLDS"); do
		t0=$(now); out=$("$NVQ" hold "$a"); t1=$(now)
		case $out in
		*SIGSTOP*) stopped=$((stopped + 1)) ;;
		*drained*) drained=$((drained + 1)) ;;
		esac
		times="$times $(el "$t0" "$t1")"
		r0=$(lines "$T/$mode.rank0"); r1=$(lines "$T/$mode.rank1"); sleep 2
		d0=$(( $(lines "$T/$mode.rank0") - r0 )); d1=$(( $(lines "$T/$mode.rank1") - r1 ))
		[ $d0 = 0 ] && [ $d1 = 0 ] || moved=$((moved + 1))
		"$NVQ" release "$a" > /dev/null
		r0=$(lines "$T/$mode.rank0"); sleep 1
		[ "$(lines "$T/$mode.rank0")" -gt "$r0" ] || { echo "$mode round $i: no progress after release"; break; }
	done
	echo "$mode: $HOLDS holds: drained $drained, SIGSTOP $stopped, rounds with steps while held $moved"
	echo "$mode: nvq hold took (s):$times"
	check "$mode: no hold ended in SIGSTOP" test "$stopped" = 0
	check "$mode: no step while held" test "$moved" = 0
	touch "$T/stop.$mode"
	timeout 120 "$NVQ" wait "$a" > /dev/null 2>&1
	check "$mode: the job completed" test "$("$NVQ" show "$a" | awk '$1 == "state" {print $2}')" = COMPLETED
done
echo "ddp_hold_loop: $fails failed"
