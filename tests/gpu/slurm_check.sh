#!/usr/bin/env bash
# slurm_check.sh: a real PyTorch job under Slurm with nvq's SPANK plugin
# (issue 17) on a GPU host that has no Slurm: Debian 12's Slurm 22.05 and
# munge, unpacked into SLURM_ROOT (dpkg -x of slurmctld slurmd slurm-client libdbus-1-3
# slurm-wlm-basic-plugins libslurm38 munge libmunge2 libhwloc15 liblua5.1-0
# libnuma1 liblz4-1), run as root from there with everything under a
# temporary folder; one node (this host), its GPUs as gres with 1 shard
# per GiB.  Checks:
#   (s1) --gres=shard:4 --gpu-mem=4G: 2 GiB fits, 4 GiB more is refused
#        with PyTorch's OutOfMemoryError, the job FAILED;
#   (s2) srun -n 2 under --gpu-mem=4G: both ranks take 1 GiB, then each
#        tries 1.5 GiB more: one gets it, the other OutOfMemoryError (one
#        account for the step's tasks: 1 + 1 + 1.5 fits, + 1.5 more not);
#   (s3) --gpu-mem=8G on --gres=shard:4: refused before the task runs;
#   (s4) nvqd in front of it ([cluster] engine = slurm): nvq submit -g 1
#        -m 3G of (s1)'s job: FAILED with OutOfMemoryError and exit code
#        3 in nvq's database, its peak there (2 GiB, from the plugin);
#   (s5) nvq submit -m 4G of a job of three processes (torch.multiprocessing,
#        spawn): two workers hold 1.5 GiB each at once, the main process's
#        2 GiB more is refused; the peak recorded is the two workers'
#        together, 3 GiB;
#   (s6) the node's own nvqd (NVML, the plugin's nvqd=): a step of two
#        spawned workers holding 1.5 GiB each under --gpu-mem=4G becomes
#        its job; nvq gpus counts it; nvq suspend frees its GPU memory
#        (nvidia-smi), nvq resume brings it back, and both workers find
#        their data intact; its end and peak land in the node's history.
# Usage: tests/gpu/slurm_check.sh BUILD_DIR SLURM_ROOT
set -u
cd "$(dirname "$0")/../.."
B=${1:-build}
S=$(cd "${2:?SLURM_ROOT}" && pwd)
ROOT=$PWD
fails=0
. tests/slurm/lib.sh
check() {
	local what=$1; shift
	if "$@"; then echo "ok   - $what"; else echo "FAIL - $what"; fails=$((fails + 1)); fi
}
T=$(mktemp -d /tmp/nvq-slurm.XXXXXX)
chmod 755 "$T"
L=$S/usr/lib/x86_64-linux-gnu
# libslurmfull.so alone from the plugin folder (the whole folder on the path
# leaves the node without its gres), the other libraries from $L
mkdir -p "$T/lib"
ln -sf "$L/slurm-wlm/libslurmfull.so" "$T/lib/libslurmfull.so"
export LD_LIBRARY_PATH=$T/lib:$L:$S/lib/x86_64-linux-gnu
# the daemons under their plain names (as Debian's alternatives name them):
# started as slurmd-wlm, slurmd registers its node without its gres
mkdir -p "$T/bin"
for d in slurmctld slurmd slurmstepd; do ln -sf "$S/usr/sbin/$d-wlm" "$T/bin/$d"; done
export PATH=$T/bin:$S/usr/bin:$S/usr/sbin:$PATH
export SLURM_CONF=$T/slurm.conf
node=$(hostname -s)
ngpu=$(nvidia-smi -L | wc -l)
gib=$(( $(nvidia-smi --query-gpu=memory.total --format=csv,noheader,nounits | head -1) / 1024 ))
files=$(ls /dev/nvidia[0-9]* | head -"$ngpu" | paste -sd, -)
echo "slurm: $node, $ngpu GPU(s) of ${gib} GiB ($files), $(( ngpu * gib )) shards"

# munge, its key and socket in T
dd if=/dev/urandom of="$T/munge.key" bs=1024 count=1 2> /dev/null
chmod 400 "$T/munge.key"
mkdir -p "$T/munge"
munged -f --key-file="$T/munge.key" --socket="$T/munge/sock" --pid-file="$T/munge/pid" \
    --log-file="$T/munge/log" --seed-file="$T/munge/seed" || { cat "$T/munge/log"; exit 1; }
trap 'scancel -u root 2> /dev/null; kill $(cat "$T/slurmd.pid" "$T/slurmctld.pid" "$T/munge/pid" 2> /dev/null) 2> /dev/null' EXIT
mkdir -p "$T/state" "$T/spool"
cat > "$T/slurm.conf" <<EOF
ClusterName=nvq
SlurmctldHost=$node(127.0.0.1)
SlurmUser=root
AuthType=auth/munge
CredType=cred/munge
AuthInfo=socket=$T/munge/sock
PluginDir=$L/slurm-wlm
StateSaveLocation=$T/state
SlurmdSpoolDir=$T/spool
SlurmctldPidFile=$T/slurmctld.pid
SlurmdPidFile=$T/slurmd.pid
SlurmctldLogFile=$T/slurmctld.log
SlurmdLogFile=$T/slurmd.log
PlugStackConfig=$T/plugstack.conf
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
JobAcctGatherType=jobacct_gather/none
AccountingStorageType=accounting_storage/none
MpiDefault=none
SwitchType=switch/none
SchedulerParameters=batch_sched_delay=0
SelectType=select/cons_tres
SelectTypeParameters=CR_Core
ReturnToService=2
GresTypes=gpu,shard
NodeName=$node NodeAddr=127.0.0.1 CPUs=$(nproc) RealMemory=8000 Gres=gpu:$ngpu,shard:$(( ngpu * gib )) State=UNKNOWN
PartitionName=batch Nodes=ALL Default=YES MaxTime=INFINITE State=UP
EOF
cat > "$T/gres.conf" <<EOF
AutoDetect=off
NodeName=$node Name=gpu File=$files
NodeName=$node Name=shard Count=$(( ngpu * gib ))
EOF
printf 'CgroupPlugin=autodetect\nIgnoreSystemd=yes\n' > "$T/cgroup.conf"
# without systemd, slurmd makes its scope under system.slice itself (cgroup v2)
[ -f /sys/fs/cgroup/cgroup.controllers ] && mkdir -p /sys/fs/cgroup/system.slice 2> /dev/null
mkdir -p "$T/peaks"
echo "required $ROOT/$B/spank_nvq.so hook=$ROOT/$B/libnvq-hook.so shard_size=1G peaks=$T/peaks" \
    > "$T/plugstack.conf"
slurmctld -c -f "$T/slurm.conf" || { tail -20 "$T/slurmctld.log"; exit 1; }
slurmd -f "$T/slurm.conf" -d "$T/bin/slurmstepd" -N "$node" ||
    { tail -20 "$T/slurmd.log"; exit 1; }
for _ in $(seq 100); do sinfo -h -o %t 2> /dev/null | grep -q idle && break; sleep 0.2; done
sleep 2
sinfo
scontrol show node "$node" | grep -E "Gres|CfgTRES" | sed 's/^ */    /'
check "Slurm's node is up" sh -c 'sinfo -h -o %t | grep -q idle'

cat > "$T/oom.py" <<'PY'
import os, sys, time, torch
rank = int(os.environ.get("SLURM_PROCID", "0"))
first, more = float(sys.argv[1]), float(sys.argv[2])
x = torch.empty(int(first * 2**30), dtype=torch.uint8, device="cuda")
torch.cuda.synchronize()
print("rank %d: %.1f GiB ok (NVQ_GPU_MEM %s)" % (rank, first, os.environ.get("NVQ_GPU_MEM")), flush=True)
time.sleep(2)
try:
    y = torch.empty(int(more * 2**30), dtype=torch.uint8, device="cuda")
    torch.cuda.synchronize()
    print("rank %d: %.1f GiB more ok" % (rank, more), flush=True)
    time.sleep(2)
except torch.OutOfMemoryError as e:
    print("rank %d: OutOfMemoryError: %s" % (rank, str(e).splitlines()[0][:120]), flush=True)
    sys.exit(3)
PY
a=$(sbatch --parsable -o "$T/s1.out" --gres=shard:4 --gpu-mem=4G --wrap "python3 $T/oom.py 2 4")
sa=$(slurm_state "$a")
echo "(s1) one process, --gpu-mem=4G, 2 GiB then 4 GiB more: $sa"; sed 's/^/    /' "$T/s1.out"
check "(s1) 2 GiB within 4G" grep -q "^rank 0: 2.0 GiB ok (NVQ_GPU_MEM 4294967296)" "$T/s1.out"
check "(s1) 4 GiB more: PyTorch's OutOfMemoryError" grep -q "^rank 0: OutOfMemoryError" "$T/s1.out"
check "(s1) the job FAILED" test "$sa" = FAILED
b=$(sbatch --parsable -o "$T/s2.out" -n 2 --gres=shard:4 --gpu-mem=4G \
    --wrap "srun -n 2 python3 $T/oom.py 1 1.5")
sb=$(slurm_state "$b")
echo "(s2) two ranks, --gpu-mem=4G, 1 GiB each, then 1.5 GiB more each: $sb"; sed 's/^/    /' "$T/s2.out"
check "(s2) both ranks took 1 GiB" test "$(grep -c 'GiB ok' "$T/s2.out")" = 2
check "(s2) one more 1.5 GiB fit, the other was refused (one account)" \
    sh -c "[ \$(grep -c 'GiB more ok' '$T/s2.out') = 1 ] && [ \$(grep -c OutOfMemoryError '$T/s2.out') = 1 ]"
c=$(sbatch --parsable -o "$T/s3.out" --gres=shard:4 --gpu-mem=8G --wrap "python3 -c 'print(\"ran\")'")
sc=$(slurm_state "$c")
echo "(s3) --gpu-mem=8G on 4 shards: $sc"; sed 's/^/    /' "$T/s3.out"
check "(s3) refused before it ran, saying why" \
    sh -c "[ $sc = FAILED ] && ! grep -q '^ran' '$T/s3.out' && grep -q 'ask --gres=shard:8' '$T/s3.out'"

# nvqd in front of Slurm: Slurm's commands through wrappers that find its
# libraries; SLURM_CONF is nvqd's own (exported above)
mkdir -p "$T/wrap" "$T/front"
for c in sbatch squeue scontrol scancel; do
	printf '#!/bin/sh\nexport LD_LIBRARY_PATH=%s\nexec %s "$@"\n' "$LD_LIBRARY_PATH" \
	    "$S/usr/bin/$c" > "$T/wrap/$c"
	chmod 755 "$T/wrap/$c"
done
printf '[daemon]\nsocket = %s/sock\ndatabase = %s/nvq.db\nspool = %s/spool\n[gpus]\nvirtual = 1x16G\n' \
    "$T/front" "$T/front" "$T/front" > "$T/front/nvq.ini"
printf '[cluster]\nengine = slurm\nshard_size = 1G\npeaks = %s\nslurm_bin = %s\n' "$T/peaks" "$T/wrap" \
    >> "$T/front/nvq.ini"
"$ROOT/$B/nvqd" -c "$T/front/nvq.ini" > "$T/front/nvqd.log" 2>&1 &
front=$!
for _ in $(seq 100); do [ -S "$T/front/sock" ] && break; sleep 0.05; done
nq() { "$ROOT/$B/nvq" -s "$T/front/sock" "$@"; }
sql() { python3 -c 'import sqlite3, sys; print("\n".join("|".join(str(c) for c in r) for r in
    sqlite3.connect(sys.argv[1]).execute(sys.argv[2])))' "$T/front/nvq.db" "$1"; }
d=$(nq submit -g 1 -m 3G -o "$T/s4.out" -- python3 "$T/oom.py" 2 4 | sed -n 's/^Submitted job \([0-9]*\).*/\1/p')
nq wait "$d"; wd=$?
r4=$(sql "SELECT j.state, j.exit_code, j.slurm_id, g.gpu_uuid, g.peak_gpu_mem FROM jobs j
    JOIN runs r ON r.job_id = j.id JOIN run_gpus g ON g.run_id = r.id WHERE j.id = $d")
echo "(s4) nvq submit -g 1 -m 3G, 2 GiB then 4 GiB more: nvq wait $wd; jobs|runs|run_gpus: $r4"
sed 's/^/    /' "$T/s4.out"
nq show "$d" | grep -E "^(state|slurm_id|gpu_uuids|reason)|^run" | sed 's/^/    /'
check "(s4) PyTorch's OutOfMemoryError at the budget" grep -q "^rank 0: OutOfMemoryError" "$T/s4.out"
check "(s4) FAILED with exit code 3, on $node:0, its peak 2 GiB, in nvq's database" \
    sh -c "[ $wd = 3 ] && echo '$r4' | grep -qE '^FAILED\|3\|[0-9]+\|$node:0\|2147483648\$'"
cat > "$T/mp.py" <<'PY'
import sys, torch, torch.multiprocessing as mp
def work(i, q, done):
    x = torch.empty(int(1.5 * 2**30), dtype=torch.uint8, device="cuda")
    torch.cuda.synchronize()
    print("worker %d: 1.5 GiB ok" % i, flush=True)
    q.put(i)
    done.wait()
if __name__ == "__main__":
    ctx = mp.get_context("spawn")
    q, done = ctx.Queue(), ctx.Event()
    ps = [ctx.Process(target=work, args=(i, q, done)) for i in range(2)]
    for p in ps: p.start()
    for p in ps: q.get()
    try:
        y = torch.empty(2**31, dtype=torch.uint8, device="cuda")
        torch.cuda.synchronize()
        print("main: 2 GiB more ok", flush=True)
    except torch.OutOfMemoryError:
        print("main: OutOfMemoryError", flush=True)
    done.set()
    for p in ps: p.join()
PY
e=$(nq submit -g 1 -m 4G -o "$T/s5.out" -- python3 "$T/mp.py" | sed -n 's/^Submitted job \([0-9]*\).*/\1/p')
nq wait "$e"; we=$?
r5=$(sql "SELECT j.state, g.gpu_uuid, g.peak_gpu_mem FROM jobs j JOIN runs r ON r.job_id = j.id
    JOIN run_gpus g ON g.run_id = r.id WHERE j.id = $e")
echo "(s5) nvq submit -m 4G, 2 spawned workers of 1.5 GiB, then the main process 2 GiB more: nvq wait $we; $r5"
sed 's/^/    /' "$T/s5.out"
check "(s5) both workers held 1.5 GiB at once; the main process's 2 GiB more was refused" \
    sh -c "[ \$(grep -c 'GiB ok' '$T/s5.out') = 2 ] && grep -q '^main: OutOfMemoryError' '$T/s5.out'"
check "(s5) COMPLETED; the peak recorded is the three processes' together, 3 GiB" \
    test "$r5" = "COMPLETED|$node:0|3221225472"
kill -TERM "$front"; wait "$front"
check "nvqd in front stopped cleanly" sh -c "! grep -q 'open handles' '$T/front/nvqd.log'"
grep -E "Slurm|warn" "$T/front/nvqd.log" | sed 's/^/    nvqd: /' | head -12

# (s6) the node's own nvqd, and the plugin told of it
mkdir -p "$T/node"
printf '[daemon]\nsocket = %s/sock\ndatabase = %s/nvq.db\nspool = %s/spool\n' "$T/node" "$T/node" \
    "$T/node" > "$T/node/nvq.ini"
"$ROOT/$B/nvqd" -c "$T/node/nvq.ini" > "$T/node/nvqd.log" 2>&1 &
nodepid=$!
for _ in $(seq 100); do [ -S "$T/node/sock" ] && break; sleep 0.05; done
echo "required $ROOT/$B/spank_nvq.so hook=$ROOT/$B/libnvq-hook.so shard_size=1G peaks=$T/peaks nvqd=$T/node/sock" \
    > "$T/plugstack.conf"
nn() { "$ROOT/$B/nvq" -s "$T/node/sock" "$@"; }
nsql() { python3 -c 'import sqlite3, sys; print("\n".join("|".join(str(c) for c in r) for r in
    sqlite3.connect(sys.argv[1]).execute(sys.argv[2])))' "$T/node/nvq.db" "$1"; }
gpumem() { nvidia-smi --query-gpu=memory.used --format=csv,noheader,nounits | head -1; }
cat > "$T/hold.py" <<'PY'
import sys, time, torch, torch.multiprocessing as mp
def work(i, secs, q):
    n = int(1.5 * 2**30) // 4
    x = torch.arange(n, dtype=torch.int32, device="cuda")
    x.mul_(i + 1)
    torch.cuda.synchronize()
    want = (i + 1) * n * (n - 1) // 2
    q.put(i)
    t0, steps = time.time(), 0
    while time.time() - t0 < secs:
        x[:4096].add_(0)
        torch.cuda.synchronize()
        steps += 1
        time.sleep(0.01)
    # in slices: a whole int64 copy would not fit the budget (the hook says no)
    got = sum(int(x[k:k + 2**24].sum(dtype=torch.int64)) for k in range(0, n, 2**24))
    print("worker %d: %d steps, data %s" % (i, steps, "ok" if got == want else "BAD %d" % got), flush=True)
if __name__ == "__main__":
    ctx = mp.get_context("spawn")
    q = ctx.Queue()
    ps = [ctx.Process(target=work, args=(i, float(sys.argv[1]), q)) for i in range(2)]
    for p in ps: p.start()
    for p in ps: q.get()
    print("both workers hold 1.5 GiB", flush=True)
    for p in ps: p.join()
    sys.exit(max(p.exitcode for p in ps))
PY
base=$(gpumem)
f=$(sbatch --parsable -o "$T/s6.out" --gres=shard:4 --gpu-mem=4G --wrap "python3 $T/hold.py 30")
for _ in $(seq 300); do grep -q "both workers hold" "$T/s6.out" 2> /dev/null && break; sleep 0.1; done
n6=$(nsql "SELECT id FROM jobs WHERE slurm_id = $f")
for _ in $(seq 50); do [ "$(nn show "$n6" | sed -n 's/^hook_pids *//p' | tr ',' '\n' | wc -l)" -ge 2 ] && break; sleep 0.1; done
echo "(s6) Slurm job $f is the node's job $n6: $(nn list | awk -v id="$n6" '$1 == id')"
nn gpus | sed 's/^/    /'
pids=$(nn show "$n6" | sed -n 's/^hook_pids *//p')
used=$(gpumem)
t0=$(date +%s.%N)
out=$(nn suspend "$n6" 2>&1)
for _ in $(seq 300); do [ "$(nsql "SELECT state FROM jobs WHERE id = $n6")" = SUSPENDED ] && break; sleep 0.1; done
t1=$(date +%s.%N)
freed=$(gpumem)
nn resume "$n6" > /dev/null
for _ in $(seq 300); do [ "$(nsql "SELECT state FROM jobs WHERE id = $n6")" = RUNNING ] && break; sleep 0.1; done
t2=$(date +%s.%N)
back=$(gpumem)
echo "(s6) hooks linked: $pids; GPU memory used (MiB): before the job $base, running $used, suspended $freed, resumed $back"
echo "(s6) $out; suspend took $(awk -v a="$t0" -v b="$t1" 'BEGIN { printf "%.2f", b - a }') s, resume $(awk -v a="$t1" -v b="$t2" 'BEGIN { printf "%.2f", b - a }') s"
sf=$(slurm_state "$f")
for _ in $(seq 100); do [ "$(nsql "SELECT state FROM jobs WHERE id = $n6")" != RUNNING ] && break; sleep 0.1; done
r6=$(nsql "SELECT j.state, r.exit_code, g.peak_gpu_mem FROM jobs j JOIN runs r ON r.job_id = j.id
    JOIN run_gpus g ON g.run_id = r.id WHERE j.id = $n6")
echo "(s6) Slurm: $sf; the node's history: $r6"; sed 's/^/    /' "$T/s6.out"
nn show "$n6" | grep -E "^(state|slurm_id|slurm_step|reason)|^(run|event)" | sed 's/^/    /'
check "(s6) the step is the node's job, with both workers' hooks linked" \
    test "$(echo "$pids" | tr ',' '\n' | wc -l)" -ge 2
check "(s6) nvq suspend freed its GPU memory (under 1 GiB above the start)" test "$((freed - base))" -lt 1024
check "(s6) nvq resume brought it back, and both workers found their data intact" \
    sh -c "[ $((back - base)) -ge 3072 ] && [ \$(grep -c 'data ok' '$T/s6.out') = 2 ]"
check "(s6) its end in the node's history: COMPLETED, exit code 0, a peak of 3 GiB or more" \
    sh -c "[ $sf = COMPLETED ] && echo '$r6' | awk -F'|' '\$1 == \"COMPLETED\" && \$2 == 0 && \$3 >= 3221225472 { ok = 1 } END { exit !ok }'"
kill -TERM "$nodepid"; wait "$nodepid"
echo "slurm GPU check: $fails failed"
[ "$fails" = 0 ]
