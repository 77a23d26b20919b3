#!/usr/bin/env bash
# check.sh: nvq's SPANK plugin on a one-node Slurm (as root, no systemd),
# then nvqd in front of it (front.sh), a node's own nvqd (node.sh), and two
# nodes in network namespaces (two_nodes.sh),
# following contrib/slurm/README.md: Slurm from Debian's packages with fake
# GPU devices and 8 shards, 8 CPUs whatever the machine has (.ci/slurm-setup.sh), contrib/slurm/install.sh,
# then jobs against the fake libcuda the tests build.
# Usage: tests/slurm/check.sh [BUILD_DIR]
set -u
cd "$(dirname "$0")/../.."
B=${1:-build}
ROOT=$PWD
F=$ROOT/$B/tests
fails=0
. tests/slurm/lib.sh
check() {	# WHAT COMMAND...
	local what=$1; shift
	if "$@"; then echo "ok   - $what"; else echo "FAIL - $what"; fails=$((fails + 1)); fi
}
SLURM_CI_WITH_DEV=1 SLURM_CI_CPUS=8 bash .ci/slurm-setup.sh > /tmp/nvq-slurm-setup.log 2>&1 ||
    { tail -20 /tmp/nvq-slurm-setup.log; echo "FAIL - Slurm did not start"; exit 1; }
trap 'bash .ci/slurm-setup.sh stop > /dev/null 2>&1' EXIT
contrib/slurm/install.sh "$ROOT/$B/libnvq-hook.so" 1G /var/spool/nvq/slurm ||
    { echo "FAIL - install.sh"; exit 1; }
W=$(mktemp -d /tmp/nvq-slurm.XXXXXX)
chmod 755 "$W"
check "sbatch knows --gpu-mem" sh -c 'sbatch --help | grep -q -- --gpu-mem=SIZE'

job() {	# NAME SBATCH-ARGS... -- COMMAND: its id
	local name=$1; shift
	sbatch --parsable -o "$W/$name.out" "$@"
}
env_fake="LD_LIBRARY_PATH=$F/fake"
a=$(job within --gres=shard:2 --gpu-mem=1G --wrap "$env_fake $F/fake_job alloc 536870912 0; echo NVQ_GPU_MEM=\$NVQ_GPU_MEM; echo NVQ_SHARE=\$NVQ_SHARE")
b=$(job over --gres=shard:2 --gpu-mem=1G --wrap "$env_fake $F/fake_job alloc 2147483648 0")
c=$(job uncovered --gres=shard:1 --gpu-mem=2G --wrap "echo ran")
d=$(job ranks -n 2 --gres=shard:2 --gpu-mem=1G --wrap "srun -n 2 sh -c '$env_fake $F/fake_job alloc 629145600 3; echo rank \$SLURM_PROCID rc \$?'")
e=$(job plain --gres=shard:1 --wrap "$env_fake $F/fake_job alloc 2147483648 0; echo LD_PRELOAD=\$LD_PRELOAD")
sa=$(slurm_state "$a"); sb=$(slurm_state "$b"); sc=$(slurm_state "$c"); sd=$(slurm_state "$d"); se=$(slurm_state "$e")
for n in within over uncovered ranks plain; do echo "== $n"; sed 's/^/    /' "$W/$n.out"; done
check "within its --gpu-mem: COMPLETED, the budget in its environment" \
    sh -c "[ $sa = COMPLETED ] && grep -q '^alloc ok' $W/within.out && grep -q '^NVQ_GPU_MEM=1073741824$' $W/within.out"
check "past its --gpu-mem: CUDA's out-of-memory error, the job FAILED" \
    sh -c "[ $sb = FAILED ] && grep -q '^alloc oom' $W/over.out"
check "a --gpu-mem its shards do not cover: the task never runs, and says why" \
    sh -c "[ $sc = FAILED ] && ! grep -q '^ran' $W/uncovered.out && grep -q 'is more than this job.s shards give: 1 shard of 1G each, 1G (ask --gres=shard:2)' $W/uncovered.out"
check "two ranks share one account: one of 2 x 600M under 1G is refused" \
    sh -c "[ \$(grep -c '^alloc ok' $W/ranks.out) = 1 ] && [ \$(grep -c '^alloc oom' $W/ranks.out) = 1 ]"
check "a job without --gpu-mem: no hook, not fenced" \
    sh -c "[ $se = COMPLETED ] && grep -q '^alloc ok' $W/plain.out && grep -q '^LD_PRELOAD=$' $W/plain.out"
share=$(sed -n 's/^NVQ_SHARE=//p' "$W/within.out")
check "the step had an account ($share), removed after it" sh -c "[ -n '$share' ] && [ ! -e '$share' ]"

# plain sbatch: four jobs of 2 shards share the 2 GPUs of 4 two by two, a fifth waits
for i in 1 2 3 4; do p[$i]=$(job "share$i" --gres=shard:2 --gpu-mem=2G --wrap "sleep 3"); done
p[5]=$(job share5 --gres=shard:2 --gpu-mem=2G --wrap "true")
for t in $(seq 100); do
	[ "$(squeue -h -t R -j "${p[1]},${p[2]},${p[3]},${p[4]}" | wc -l)" = 4 ] && break
	sleep 0.1
done
idx=$(for i in 1 2 3 4; do scontrol -d show job -o "${p[$i]}" | grep -o 'GRES=shard:2(IDX:[0-9]*)'; done |
    sort | uniq -c | awk '{ print $1 "x" $2 }' | xargs)
st5=$(squeue -h -j "${p[5]}" -o '%T %r')
echo "    four on: $idx; the fifth: $st5"
check "sbatch --gpu-mem=2G --gres=shard:2: four jobs share the two GPUs, two by two" \
    test "$idx" = "2xGRES=shard:2(IDX:0) 2xGRES=shard:2(IDX:1)"
check "... and a fifth waits for room" test "$st5" = "PENDING Resources"
check "... then runs" test "$(slurm_state "${p[5]}")" = COMPLETED

. tests/slurm/front.sh
. tests/slurm/node.sh
. tests/slurm/two_nodes.sh
rm -rf "$W"
echo "slurm check: $fails failed"
[ "$fails" = 0 ]
