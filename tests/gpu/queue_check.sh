#!/usr/bin/env bash
# queue_check.sh: the queue on a machine with NVIDIA GPUs and PyTorch.
#
# Starts nvqd on NVML (no virtual GPUs), and checks that
#   1. nvq gpus lists every GPU NVML has, with its UUID and total memory;
#   2. a PyTorch job sees exactly its assigned GPU (by UUID), and only one;
#   3. memory used by a process outside the queue shows in nvq gpus and
#      shrinks the budget, while a job's own memory does not count as outside;
#   4. a job asking for more than is left waits with its reason.
# Usage: tests/gpu/queue_check.sh [BUILD_DIR]  (default build; the binaries
# may be built elsewhere with `make STATIC=1 BUILD=.devbuild`).
set -u
cd "$(dirname "$0")/../.."
B=${1:-build}
. tests/gpu/lib.sh
gpu_nvqd gpu "[gpus]" "poll = 1s"
trap 'kill $NVQD_PID 2>/dev/null; kill ${OUTSIDER:-} 2>/dev/null; sleep 0.5; cat $T/nvqd.log | sed "s/^/  nvqd| /"' EXIT

echo "== nvidia-smi"
nvidia-smi --query-gpu=index,uuid,name,memory.total,memory.used --format=csv,noheader
echo "== nvq gpus"
"$NVQ" gpus
n_smi=$(nvidia-smi -L | wc -l)
n_nvq=$("$NVQ" gpus --json | grep -c '"uuid"')
check "nvq sees the $n_smi GPUs nvidia-smi lists" [ "$n_smi" = "$n_nvq" ]
uuid0=$(nvidia-smi --query-gpu=uuid --format=csv,noheader -i 0)
check "GPU 0's UUID matches nvidia-smi" grep -q "$uuid0" <("$NVQ" gpus)
total=$("$NVQ" gpus --json | grep -o '"total":[0-9]*' | head -1 | cut -d: -f2)
smi_total=$(nvidia-smi --query-gpu=memory.total --format=csv,noheader,nounits -i 0)
check "GPU 0's total ($total bytes) matches nvidia-smi ($smi_total MiB)" \
    [ "$((total >> 20))" = "$smi_total" ]

echo "== a PyTorch job sees exactly its GPU"
cat > "$T/seen.py" <<'EOF'
import os, torch
props = torch.cuda.get_device_properties(0)
print("visible", os.environ["CUDA_VISIBLE_DEVICES"])
print("count", torch.cuda.device_count())
print("uuid", "GPU-" + str(props.uuid))
print("name", props.name, "total", props.total_memory)
x = torch.ones(1024, 1024, device="cuda")
print("sum", float((x @ x).sum()))
EOF
id=$("$NVQ" submit --parsable -m 8G -n seen -- python3 "$T/seen.py")
"$NVQ" wait "$id"; rc=$?
"$NVQ" log "$id"; "$NVQ" log --err "$id" | tail -3
out=$("$NVQ" log "$id")
assigned=$("$NVQ" show --json "$id" | grep -o '"gpu_uuids":"[^"]*"' | head -1 | cut -d'"' -f4)
check "the job COMPLETED" [ $rc = 0 ]
check "torch sees one GPU" grep -q '^count 1$' <<< "$out"
check "it is the assigned one ($assigned)" grep -q "^uuid $assigned$" <<< "$out"
check "its matmul ran" grep -q '^sum 1073741824' <<< "$out"

echo "== memory used outside the queue"
cat > "$T/hold.py" <<'EOF'
import sys, time, torch
x = torch.empty(int(sys.argv[1]) << 30, dtype=torch.uint8, device="cuda")
x.fill_(1)
torch.cuda.synchronize()
print("holding", x.numel() >> 30, "GiB", flush=True)
time.sleep(int(sys.argv[2]))
EOF
CUDA_VISIBLE_DEVICES=$uuid0 python3 "$T/hold.py" 6 60 > "$T/outsider.log" 2>&1 &
OUTSIDER=$!
for _ in $(seq 60); do grep -q holding "$T/outsider.log" && break; sleep 0.5; done
sleep 2.5	# two polls
"$NVQ" gpus
outside=$("$NVQ" gpus --json | head -2 | grep -o '"outside":[0-9]*' | cut -d: -f2)
budget=$("$NVQ" gpus --json | head -2 | grep -o '"budget":[0-9]*' | cut -d: -f2)
echo "outside use on GPU 0: $outside bytes ($((outside >> 20)) MiB); budget $((budget >> 20)) MiB"
check "nvq gpus shows the outsider's 6 GiB (and its context) on GPU 0" \
    [ "$outside" -ge $((6 << 30)) -a "$outside" -le $((8 << 30)) ]
check "the budget shrank by it" [ "$budget" -le $((total - (6 << 30))) ]

echo "== a job's own memory is not outside use"
id2=$("$NVQ" submit --parsable -m 10G -n inside -- python3 "$T/hold.py" 5 8)
for _ in $(seq 60); do "$NVQ" log "$id2" 2>/dev/null | grep -q holding && break; sleep 0.5; done
sleep 2.5
"$NVQ" gpus
g2=$("$NVQ" show --json "$id2" | grep -o '"gpu_uuids":"[^"]*"' | head -1 | cut -d'"' -f4)
line=$("$NVQ" gpus | grep "$g2")
outside2=$("$NVQ" gpus --json | grep "$g2" | grep -o '"outside":[0-9]*' | cut -d: -f2)
if [ "$g2" = "$uuid0" ]; then want=$outside; else want=0; fi
check "the job's 5 GiB on $g2 is not counted outside (outside $((outside2 >> 20)) MiB)" \
    [ "$outside2" -le $((want + (512 << 20))) ]
"$NVQ" wait "$id2"

echo "== a job that does not fit beside the outsider waits"
big=$(( (budget >> 30) + 1 ))
if [ "$n_smi" = 1 ]; then
	id3=$("$NVQ" submit --parsable -m ${big}G -n toobig -- true)
	sleep 1.5
	"$NVQ" list
	check "a ${big}G job is PENDING with its reason" grep -q "needs ${big}G on 1 GPU, largest free" <("$NVQ" list)
	kill $OUTSIDER; wait $OUTSIDER 2>/dev/null; OUTSIDER=""
	"$NVQ" wait "$id3"
	check "it runs once the outsider is gone" [ $? = 0 ]
fi
"$NVQ" list -a
echo "gpu queue check: $fails failed"
exit $fails
