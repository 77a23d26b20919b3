#!/usr/bin/env bash
# sbatch_check.sh [BUILD]: an sbatch script as people write it for two
# GPUs, submitted unchanged (`nvq submit ddp.sbatch`): #SBATCH --gres=gpu:2,
# --cpus-per-task=4, --mem=16G, --time, --output=%x-%j.out, and
# `srun torchrun --nproc_per_node=2` running a DDP job whose two ranks
# all-reduce through NCCL.  Checks: COMPLETED; the SLURM_* variables the
# script printed; the job's cgroup limits (memory.max = 16G, cpu.max = 4
# CPUs: a machine with cgroup v2 controllers, as Ubuntu's); both ranks saw
# the same all-reduced sum and the replicas' checksums agree; one torchrun
# (srun ran it once).  Then a --mem job that allocates past its --mem beside
# a GPU job: the first FAILED with the OOM reason, the second COMPLETED.
# Needs two GPUs; NCCL_NVLS_ENABLE=0 is set for the jobs.
set -u
cd "$(dirname "$0")/../.."
B=${1:-build}
. tests/gpu/lib.sh
# nvqd in a cgroup of its own, as its systemd unit gives it (nvqd(8) CGROUPS)
[ "$(id -u)" != 0 ] || gpu_own_cgroup || true
gpu_nvqd2 sbatch "[resources]" "cpus = 8"
W=$T/work; mkdir -p "$W"
state() { "$NVQ" show --json "$1" | head -1 | grep -o '"state": *"[A-Z_]*"' | grep -o '[A-Z_]*"$' | tr -d '"'; }
# limits are checked where nvqd could have them enforced (its log says so)
enforced() { ! grep -q "no $1 controller for jobs' cgroups" "$T/nvqd.log"; }
skipped=0
skip() { echo "SKIP - $1 (nvqd: no $2 controller for jobs' cgroups here)"; skipped=$((skipped + 1)); }
cat > "$W/ddp.py" <<'PY'
import os, torch, torch.distributed as dist
dist.init_process_group("nccl")
r = dist.get_rank(); torch.cuda.set_device(int(os.environ["LOCAL_RANK"]))
m = torch.nn.parallel.DistributedDataParallel(torch.nn.Linear(256, 256).cuda())
opt = torch.optim.SGD(m.parameters(), lr=0.01)
for _ in range(50):
    opt.zero_grad(); m(torch.randn(64, 256, device="cuda")).square().mean().backward(); opt.step()
t = torch.tensor([float(r + 1)], device="cuda"); dist.all_reduce(t)
s = sum(p.double().sum().item() for p in m.parameters())
print(f"rank {r} allreduce {t.item():.0f} sum {s:.6f}", flush=True)
dist.destroy_process_group()
PY
TORCHRUN=$(command -v torchrun || echo "python3 -m torch.distributed.run")
cat > "$W/ddp.sbatch" <<EOF
#!/bin/bash
#SBATCH --job-name=ddp2
#SBATCH --gres=gpu:2
#SBATCH --cpus-per-task=4
#SBATCH --mem=16G
#SBATCH --time=10
#SBATCH --output=%x-%j.out
echo "env \$SLURM_JOB_ID \$SLURM_JOB_NAME gpus=\$SLURM_JOB_GPUS on=\$SLURM_GPUS_ON_NODE cpus=\$SLURM_CPUS_PER_TASK mem=\$SLURM_MEM_PER_NODE ntasks=\$SLURM_NTASKS"
cg=/sys/fs/cgroup\$(sed -n 's/^0:://p' /proc/self/cgroup)
echo "memory.max \$(cat \$cg/memory.max 2>/dev/null || echo none)"
echo "cpu.max \$(cat \$cg/cpu.max 2>/dev/null || echo none)"
echo "srun \$(command -v srun)"
srun $TORCHRUN --standalone --nproc_per_node=2 $W/ddp.py
EOF
cd "$W"
t0=$(date +%s.%N)
id=$("$NVQ" submit --parsable ddp.sbatch)
check "submitted unchanged" test -n "$id"
"$NVQ" wait "$id" > /dev/null 2>&1
t1=$(date +%s.%N)
out=$(cat "$W/ddp2-$id.out" 2>/dev/null)
echo "$out" | sed 's/^/    /'
check "COMPLETED" test "$(state "$id")" = COMPLETED
check "SLURM_* of the script" grep -q "^env $id ddp2 gpus=0,1 on=2 cpus=4 mem=16384 ntasks=1$" <<< "$out"
if enforced memory; then check "memory.max = 16G" grep -qx "memory.max 17179869184" <<< "$out"
else skip "memory.max = 16G" memory; fi
if enforced cpu; then check "cpu.max = 4 CPUs" grep -qx "cpu.max 400000 100000" <<< "$out"
else skip "cpu.max = 4 CPUs" cpu; fi
check "nvq's srun first on PATH" grep -qx "srun $(dirname "$NVQD")/bin/srun" <<< "$out"
check "two ranks all-reduced (1 + 2)" test "$(grep -c "allreduce 3 " <<< "$out")" = 2
check "replicas equal" test "$(grep -o 'sum [-0-9.]*' <<< "$out" | sort -u | wc -l)" = 1
echo "    sbatch job: $(python3 -c "print(f'{$t1 - $t0:.1f}')") s from submit to its end"
# a job past its --mem beside a GPU job: killed by its cgroup, the other untouched
g=$("$NVQ" submit --parsable -g 1 -m 2G python3 -c 'import torch, time; x = torch.ones(1 << 28, device="cuda"); time.sleep(3); print(x.sum().item())')
o=$("$NVQ" submit --parsable -g 0 --mem 300M python3 -c 'b = bytearray(800 << 20); print(len(b))')
"$NVQ" wait "$g" "$o" > /dev/null 2>&1
if enforced memory; then
	check "over its --mem: FAILED" test "$(state "$o")" = FAILED
	check "with the reason" grep -q "over its --mem 300M of host memory" <<< "$("$NVQ" show "$o")"
else
	skip "over its --mem: FAILED" memory
	echo "    (the --mem job, not enforced: $(state "$o"))"
fi
check "the GPU job beside it COMPLETED" test "$(state "$g")" = COMPLETED
echo "sbatch_check: $fails failed, $skipped skipped"
exit $((fails > 0))
