#!/usr/bin/env bash
# ddp_suspend.sh [BUILD] [MODES]: nvq suspend and resume of a 2-GPU job whose
# ranks talk through NCCL, mid-training (issue 40 item 3).  MODES (default
# "cumem legacy fsdp"): DDP with NCCL's cuMem buffers (its default), DDP with
# NCCL_CUMEM_ENABLE=0 (legacy CUDA IPC), FSDP with cuMem.  For each: GPU
# memory of both GPUs (nvidia-smi) before, while suspended and after; steps
# while suspended (0); the times of nvq suspend and resume and the hook's
# share (switches); then the job finishes and each rank writes a hash of its
# parameters (FSDP: of the full parameters), which must be equal.  A refused
# suspend prints nvq's reason and counts as a failure.
# Needs two GPUs; NCCL_NVLS_ENABLE=0 is set for the jobs.  NVQ_DEBUG=1 in the
# jobs: their stderr (T/MODE.err) lists what the hook moved.
set -u
cd "$(dirname "$0")/../.."
B=${1:-build}
MODES=${2:-cumem legacy fsdp}
. tests/gpu/lib.sh
export NCCL_NVLS_ENABLE=0
gpu_nvqd ddpsusp "[scheduler]" "preempt = off"
[ "$("$NVQ" gpus --json | grep -c '"uuid"')" -ge 2 ] || { echo "needs two GPUs"; exit 1; }
used() { nvidia-smi --query-gpu=memory.used --format=csv,noheader,nounits | tr '\n' ' '; }
cat > "$T/train.py" <<'PY'
# train.py DIR MODE KIND: trains until DIR/stop.MODE appears (rank 0 decides,
# every rank stops at the same step), one line per step in DIR/MODE.rankR,
# then the hash of its parameters in DIR/MODE.sumR
import hashlib, os, sys, torch, torch.distributed as dist
out, mode, kind = sys.argv[1:4]
dist.init_process_group("nccl")
rank = dist.get_rank(); torch.cuda.set_device(rank)
torch.manual_seed(0)
layers = torch.nn.Sequential(*[torch.nn.Linear(2048, 2048) for _ in range(8)]).cuda()
if kind == "fsdp":
    from torch.distributed.fsdp import FullyShardedDataParallel as FSDP
    model = FSDP(layers, use_orig_params=True)
else:
    model = torch.nn.parallel.DistributedDataParallel(layers)
sgd = torch.optim.SGD(model.parameters(), lr=1e-4)
torch.manual_seed(1 + rank)
batch = torch.randn(256, 2048, device="cuda")
steps = open(os.path.join(out, "%s.rank%d" % (mode, rank)), "w", buffering=1)
stop = torch.zeros(1, device="cuda")
while not stop.item():
    sgd.zero_grad(); model(batch).square().mean().backward(); sgd.step()
    torch.cuda.synchronize(); print("step", file=steps)
    stop.fill_(float(os.path.exists(os.path.join(out, "stop." + mode)))); dist.broadcast(stop, 0)
def params():
    return hashlib.sha256(b"".join(p.detach().float().cpu().numpy().tobytes()
                                   for p in model.parameters())).hexdigest()
if kind == "fsdp":
    with FSDP.summon_full_params(model):
        digest = params()
else:
    digest = params()
print(digest, file=open(os.path.join(out, "%s.sum%d" % (mode, rank)), "w"))
dist.destroy_process_group()
PY
TORCHRUN=$(command -v torchrun || echo "python3 -m torch.distributed.run")
for mode in $MODES; do
	unset NCCL_CUMEM_ENABLE
	[ $mode = legacy ] && export NCCL_CUMEM_ENABLE=0
	kind=ddp; [ $mode = fsdp ] && kind=fsdp
	echo "== $mode (NCCL_CUMEM_ENABLE=${NCCL_CUMEM_ENABLE:-default})"
	echo "$mode: before the job: $(used)MiB"
	# shellcheck disable=SC2086
	a=$(NVQ_DEBUG=1 "$NVQ" submit --parsable -g 2 -m 8G -n ddp-$mode -e "$T/$mode.err" -- \
	    $TORCHRUN --standalone --nproc_per_node=2 "$T/train.py" "$T" $mode $kind)
	wait_steps "$T/$mode.rank0" 50 && wait_steps "$T/$mode.rank1" 50 ||
	    { echo "$mode: no steps"; tail -20 "$T/$mode.err"; fails=$((fails + 1)); continue; }
	echo "$mode: running: $(used)MiB"
	t0=$(now); out=$("$NVQ" suspend "$a" 2>&1); t1=$(now)
	echo "$mode: nvq suspend ($(el "$t0" "$t1") s): $out"
	if [[ $out != *suspended ]]; then
		check "$mode: suspended" false
		touch "$T/stop.$mode"; timeout 120 "$NVQ" wait "$a" > /dev/null 2>&1
		continue
	fi
	sleep 1
	s0=$(lines "$T/$mode.rank0"); s1=$(lines "$T/$mode.rank1")
	echo "$mode: suspended: $(used)MiB"
	sleep 2
	d0=$(( $(lines "$T/$mode.rank0") - s0 )); d1=$(( $(lines "$T/$mode.rank1") - s1 ))
	check "$mode: no step while suspended ($d0, $d1)" test "$d0$d1" = 00
	check "$mode: both GPUs freed while suspended" awk -v u="$(used)" \
	    'BEGIN { split(u, a, " "); exit !(a[1] < 1024 && a[2] < 1024) }'
	t2=$(now); "$NVQ" resume "$a" > /dev/null
	for _ in $(seq 600); do
		[ "$("$NVQ" show "$a" | awk '$1 == "state" {print $2}')" = RUNNING ] && break
		sleep 0.1
	done
	t3=$(now)
	echo "$mode: nvq resume until RUNNING: $(el "$t2" "$t3") s"
	check "$mode: steps again after the resume" wait_steps "$T/$mode.rank0" $((s0 + 50))
	echo "$mode: resumed: $(used)MiB"
	touch "$T/stop.$mode"
	timeout 180 "$NVQ" wait "$a" > /dev/null 2>&1
	check "$mode: the job completed" test "$("$NVQ" show "$a" | awk '$1 == "state" {print $2}')" = COMPLETED
	check "$mode: replicas equal ($(cut -c1-12 "$T/$mode.sum0" 2>/dev/null) $(cut -c1-12 "$T/$mode.sum1" 2>/dev/null))" \
	    test -s "$T/$mode.sum0" -a "$(cat "$T/$mode.sum0" 2>/dev/null)" = "$(cat "$T/$mode.sum1" 2>/dev/null)"
	echo "$mode: switches (kind|ok|seconds|driver_seconds|bytes|hook_bytes|hook_seconds|error):"
	sqlite3 "$T/nvq.db" "SELECT kind, ok, round(seconds, 3), round(driver_seconds, 3), bytes, hook_bytes,
	    round(hook_seconds, 3), error FROM switches WHERE job_id = $a ORDER BY id" 2>&1 | sed 's/^/    /'
	echo "$mode: the hook: $(grep -c 'exported$' "$T/$mode.err") exports, $(grep -c 'imported' "$T/$mode.err") imports; $(grep -E 'shared memory (out|in)|offload (out|in)|cannot' "$T/$mode.err" | sort | uniq -c | tr '\n' ';' | cut -c1-600)"
	[ -n "${OUT:-}" ] && cp "$T/$mode.err" "$OUT/$mode.err" 2> /dev/null
done
echo "ddp_suspend: $fails failed"
