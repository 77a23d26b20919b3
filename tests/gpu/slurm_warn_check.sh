#!/usr/bin/env bash
# slurm_warn_check.sh [BUILD]: Slurm's --signal [B:]SIG@TIME and an
# array's SLURM_ARRAY_TASK_* on the GPU machine (pure cgroup v2, where the
# shim reaches a job's processes through its cgroup), with jobs as people
# write them: a PyTorch training loop on one GPU whose USR1 handler saves a
# checkpoint when warned 10 s before its 20 s limit (#SBATCH
# --signal=USR1@10: every process of the job); a batch shell warned alone
# (#SBATCH --signal=B:USR1@8) while its Python child trains on; and an
# array --array 0-6:3.  One PASS, FAIL or SKIPPED line per check, with its
# figures.
set -u
cd "$(dirname "$0")/../.."
B=${1:-build}
. tests/gpu/lib.sh
python3 -c 'import torch; assert torch.cuda.is_available()' 2> /dev/null ||
    { echo "SKIPPED - all checks (no PyTorch with CUDA here)"; exit 0; }
gpu_nvqd slurmwarn "[cluster]" "name = gpubox"
W=$T/work; mkdir -p "$W"
state() { "$NVQ" show "$1" | awk '$1 == "state" {print $2}'; }
say() {	# WHAT FIGURES COMMAND...: one line, PASS or FAIL (counted here, not in a subshell)
	local what=$1 figs=$2 r=PASS; shift 2
	"$@" || { r=FAIL; fails=$((fails + 1)); }
	echo "$r - $what ($figs)"
}
cat > "$W/train.py" <<'PY'
import os, signal, sys, time, torch
out = sys.argv[1]
t0 = float(os.environ.get("JOB_T0", time.time()))  # the job's start, from its batch shell
warned = []
signal.signal(signal.SIGUSR1, lambda s, f: warned.append(time.time() - t0))
m = torch.nn.Linear(1024, 1024).cuda()
opt = torch.optim.SGD(m.parameters(), lr=0.01)
step = 0
while not warned and time.time() - t0 < 60:
    opt.zero_grad(); m(torch.randn(256, 1024, device="cuda")).square().mean().backward(); opt.step()
    step += 1
if warned:
    torch.save({"step": step, "model": m.state_dict()}, out + ".pt")
    print(f"python warned at {warned[0]:.1f} s, step {step}, checkpoint saved", flush=True)
PY
# 1: every process warned: the trainer saves its checkpoint and ends
cat > "$W/all.sbatch" <<EOF
#!/bin/bash
#SBATCH --job-name=warned
#SBATCH --gres=gpu:1
#SBATCH --time=0:20
#SBATCH --signal=USR1@10
#SBATCH --output=%x-%j.out
trap 'echo "shell warned at \$SECONDS s"' USR1
export JOB_T0=\$(date +%s.%N)
python3 $W/train.py $W/all &
wait; wait
EOF
# 2: B: the batch shell alone; its trap stops the trainer itself (SIGTERM)
cat > "$W/batch.sbatch" <<EOF
#!/bin/bash
#SBATCH --job-name=bshell
#SBATCH --gres=gpu:1
#SBATCH --time=0:20
#SBATCH --signal=B:USR1@8
#SBATCH --output=%x-%j.out
export JOB_T0=\$(date +%s.%N)
python3 $W/train.py $W/batch &
child=\$!
trap 'echo "shell warned at \$SECONDS s"; kill -TERM \$child' USR1
wait; wait
echo "child ended"
EOF
cat > "$W/env.sh" <<'EOF'
#!/bin/sh
echo "task=$SLURM_ARRAY_TASK_ID count=$SLURM_ARRAY_TASK_COUNT min=$SLURM_ARRAY_TASK_MIN max=$SLURM_ARRAY_TASK_MAX step=$SLURM_ARRAY_TASK_STEP cluster=$SLURM_CLUSTER_NAME"
EOF
chmod +x "$W/env.sh"
cd "$W"
a=$("$NVQ" submit --parsable all.sbatch)
b=$("$NVQ" submit --parsable batch.sbatch)
c=$("$NVQ" submit --parsable -g 0 --array 0-6:3 -o "$W/env-%a.out" "$W/env.sh")
"$NVQ" wait "$a" "$b" "${c}_" > /dev/null 2>&1
oa=$(cat "$W/warned-$a.out" 2>/dev/null); ob=$(cat "$W/bshell-$b.out" 2>/dev/null)
echo "$oa" | sed 's/^/    all: /'; echo "$ob" | sed 's/^/    B:   /'
pw=$(sed -n 's/^python warned at \([0-9.]*\) s.*/\1/p' <<< "$oa")
say "USR1@10, --time 0:20: the trainer warned about 10 s in, saved its checkpoint, COMPLETED" \
    "state $(state "$a"), python warned at ${pw:-never} s" \
    sh -c "[ '$(state "$a")' = COMPLETED ] && [ -s '$W/all.pt' ] &&
    awk -v x='${pw:-0}' 'BEGIN { exit !(x >= 8 && x <= 12.5) }'"
say "USR1@10 without B: reaches the batch shell too" "$(grep -c '^shell warned' <<< "$oa") line(s)" \
    test "$(grep -c '^shell warned' <<< "$oa")" = 1
sw=$(sed -n 's/^shell warned at \([0-9]*\) s.*/\1/p' <<< "$ob")
say "B:USR1@8: the batch shell warned about 12 s in" "shell at ${sw:-never} s, state $(state "$b")" \
    sh -c "[ '$(state "$b")' = COMPLETED ] && [ '${sw:-0}' -ge 10 ] && [ '${sw:-0}' -le 13 ]"
say "B:USR1@8: its Python child not warned (no checkpoint)" \
    "$(grep -c '^python warned' <<< "$ob") warning(s), checkpoint $([ -e "$W/batch.pt" ] && echo saved || echo none)" \
    sh -c "! printf '%s\\n' \"\$0\" | grep -q '^python warned' && [ ! -e '$W/batch.pt' ]" "$ob"
envs=$(cat "$W"/env-0.out "$W"/env-3.out "$W"/env-6.out 2>/dev/null | tr '\n' ';')
say "--array 0-6:3: SLURM_ARRAY_TASK_COUNT/MIN/MAX/STEP and SLURM_CLUSTER_NAME" "$envs" \
    test "$envs" = "task=0 count=3 min=0 max=6 step=3 cluster=gpubox;task=3 count=3 min=0 max=6 step=3 cluster=gpubox;task=6 count=3 min=0 max=6 step=3 cluster=gpubox;"
grep "before its time limit" "$T/nvqd.log" | sed 's/^/    nvqd: /'
echo "slurm_warn_check: $fails failed"
[ "$fails" = 0 ]
