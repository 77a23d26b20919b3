#!/usr/bin/env bash
# peak_check.sh: the peak GPU memory nvqd stores for a run, against what
# PyTorch reserved plus the CUDA context's own memory (issue 3, 2(e)).
# The job holds 10 GiB for 4 s; nvqd polls NVML every second.
# Usage: tests/gpu/peak_check.sh [BUILD_DIR]
set -u
cd "$(dirname "$0")/../.."
B=${1:-build}
. tests/gpu/lib.sh
gpu_nvqd peak "[gpus]" "poll = 1s"
cat > "$T/peak.py" <<'PY'
import os, subprocess, time, torch
x = torch.empty(10 << 30, dtype=torch.uint8, device="cuda")
x.fill_(1)
torch.cuda.synchronize()
reserved = torch.cuda.max_memory_reserved()
out = subprocess.run(["nvidia-smi", "--query-compute-apps=pid,used_memory",
                      "--format=csv,noheader,nounits"], capture_output=True, text=True).stdout
mine = [int(l.split(",")[1]) for l in out.splitlines() if l.split(",")[0].strip() == str(os.getpid())]
used = mine[0] << 20 if mine else -1
print("max_memory_reserved", reserved)
print("nvml_process_used", used)
print("context", used - torch.cuda.memory_reserved() if used > 0 else -1)
time.sleep(4)
PY
id=$("$NVQ" submit --parsable -m 16G -- python3 "$T/peak.py")
"$NVQ" wait "$id"
"$NVQ" log "$id"
reserved=$("$NVQ" log "$id" | awk '/^max_memory_reserved/ {print $2}')
context=$("$NVQ" log "$id" | awk '/^context/ {print $2}')
# (the GPU host may have no sqlite3 shell: Python's module reads it too)
peak=$(python3 -c "import sqlite3, sys; print(sqlite3.connect(sys.argv[1]).execute(
    'SELECT peak_gpu_mem FROM runs WHERE job_id = ?', (int(sys.argv[2]),)).fetchone()[0])" \
    "$T/nvq.db" "$id")
want=$((reserved + context))
echo "stored peak $peak bytes; max_memory_reserved + context = $reserved + $context = $want"
ok=$(awk -v p="$peak" -v w="$want" 'BEGIN {d = (p - w) / w; if (d < 0) d = -d; printf "%.4f %d", d, d <= 0.05}')
echo "relative difference ${ok% *}"
[ "${ok#* }" = 1 ] && echo "ok   - within 5%" || { echo "FAIL - not within 5%"; exit 1; }
