#!/usr/bin/env bash
# energy_check.sh [BUILD]: each run's energy per GPU (issue 44) on a real
# GPU, against the GPU's own counter read around the jobs by this script
# (NVML's counter, nvmlDeviceGetTotalEnergyConsumption: millijoules since
# the driver loaded, read through ctypes; nvidia-smi's
# total_energy_consumption, the same counter, is printed beside it).  nvqd polls every second.
#  1. alone: a PyTorch job (matrix products, about 40 s) alone on a GPU: its
#     stored energy within 5% of the counter's delta from before its submit
#     to after its end, measured "alone".
#  2. shared: two PyTorch jobs (-m 12G each) on the same GPU at once, one
#     busy, one mostly idle: both "shared", the busy one given more, and
#     their parts add up to the GPU's delta over both within 5%.
# Prints ok/FAIL per check with the figures, and a PASS/FAIL line per part.
set -u
cd "$(dirname "$0")/../.."
B=${1:-build}
. tests/gpu/lib.sh
gpu_nvqd energy "[gpus]" "poll = 1s"
W=$T/work; mkdir -p "$W"

# counter INDEX: the GPU's energy counter in millijoules (NVML's, which
# nvidia-smi prints too); "-1" where it has none
cat > "$W/counter.py" <<'PY'
import ctypes, sys
nvml = ctypes.CDLL("libnvidia-ml.so.1")
assert nvml.nvmlInit_v2() == 0
h = ctypes.c_void_p()
assert nvml.nvmlDeviceGetHandleByIndex_v2(int(sys.argv[1]), ctypes.byref(h)) == 0
e = ctypes.c_ulonglong()
print(e.value if nvml.nvmlDeviceGetTotalEnergyConsumption(h, ctypes.byref(e)) == 0 else -1)
PY
counter() { python3 "$W/counter.py" "$1"; }
# smi INDEX: nvidia-smi's reading of the same counter, as it prints it (for the record)
smi() { nvidia-smi -i "$1" --query-gpu=total_energy_consumption --format=csv,noheader,nounits 2> /dev/null | head -1 | tr -d ' ' || true; }
cat > "$W/burn.py" <<'PY'
import sys, time, torch
secs, n, pause = float(sys.argv[1]), int(sys.argv[2]), float(sys.argv[3])
a = torch.randn(n, n, device="cuda"); b = torch.randn(n, n, device="cuda")
t = time.time(); k = 0
while time.time() - t < secs:
    for _ in range(8):
        c = a @ b
    torch.cuda.synchronize(); k += 1
    if pause:
        time.sleep(pause)
print("steps", k)
PY
sq() { python3 -c 'import sqlite3, sys
for r in sqlite3.connect(sys.argv[1]).execute(sys.argv[2]):
    print(" ".join("NULL" if v is None else str(v) for v in r))' "$T/nvq.db" "$1"; }
# within A B: 1 if A is within 5% of B
within() { awk -v a="$1" -v b="$2" 'BEGIN { d = b > 0 ? (a - b) / b : 1; if (d < 0) d = -d; print (d <= 0.05) }'; }
pct() { awk -v a="$1" -v b="$2" 'BEGIN { printf("%+.2f%%", (b > 0 ? 100 * (a - b) / b : 0)) }'; }
uuid0=$("$NVQ" gpus --json | grep -o '"uuid": *"[^"]*"' | head -1 | sed 's/.*"\(GPU[^"]*\)"/\1/')
[ "$(counter 0)" -ge 0 ] || { echo "SKIPPED - GPU 0 has no energy counter"; exit 0; }
echo "    GPU 0 is $uuid0"

# 1. alone
part=0
e0=$(counter 0); s0=$(smi 0)
a=$("$NVQ" submit --parsable -n burn -w "$uuid0" -m 12G python3 "$W/burn.py" 40 8192 0)
"$NVQ" wait "$a" > /dev/null 2>&1
e1=$(counter 0); s1=$(smi 0)
echo "    nvidia-smi total_energy_consumption around it: ${s0:-n/a} -> ${s1:-n/a}"
gpu_delta=$(awk -v a="$e0" -v b="$e1" 'BEGIN { printf "%.3f", (b - a) / 1000 }')
read -r stored how <<< "$(sq "SELECT energy, energy_how FROM runs WHERE job_id = $a")"
echo "    alone: job $a $("$NVQ" show --json "$a" | head -1 | grep -o '"state": *"[A-Z]*"'), stored ${stored} J ($how); the counter's delta ${gpu_delta} J ($(pct "${stored/NULL/0}" "$gpu_delta"))"
check "alone: measured alone" test "$how" = alone
check "alone: within 5% of the counter's delta" test "$(within "${stored/NULL/0}" "$gpu_delta")" = 1
[ $fails = 0 ] && echo "PASS - alone: ${stored} J stored, ${gpu_delta} J by the counter" || { echo "FAIL - alone: ${stored} J stored, ${gpu_delta} J by the counter"; part=1; }

# 2. two jobs on one GPU
f0=$fails
e0=$(counter 0)
b=$("$NVQ" submit --parsable -n busy -w "$uuid0" -m 12G python3 "$W/burn.py" 40 8192 0)
c=$("$NVQ" submit --parsable -n idle -w "$uuid0" -m 12G python3 "$W/burn.py" 40 1024 0.05)
"$NVQ" wait "$b" "$c" > /dev/null 2>&1
e1=$(counter 0)
gpu_delta=$(awk -v a="$e0" -v b="$e1" 'BEGIN { printf "%.3f", (b - a) / 1000 }')
read -r eb hb <<< "$(sq "SELECT energy, energy_how FROM runs WHERE job_id = $b")"
read -r ec hc <<< "$(sq "SELECT energy, energy_how FROM runs WHERE job_id = $c")"
sum=$(awk -v x="${eb/NULL/0}" -v y="${ec/NULL/0}" 'BEGIN { printf "%.3f", x + y }')
overlap=$(sq "SELECT printf('%.1f', min(b.ended_at, c.ended_at) - max(b.started_at, c.started_at)) FROM runs b, runs c WHERE b.job_id = $b AND c.job_id = $c")
echo "    shared: busy job $b ${eb} J ($hb), idle job $c ${ec} J ($hc), together ${sum} J; the counter's delta ${gpu_delta} J ($(pct "$sum" "$gpu_delta")); they ran together ${overlap} s"
check "shared: both measured shared" test "$hb $hc" = "shared shared"
check "shared: the busy job given more" awk -v x="${eb/NULL/0}" -v y="${ec/NULL/0}" 'BEGIN { exit !(x > y) }'
check "shared: the parts add up to the GPU's delta within 5%" test "$(within "$sum" "$gpu_delta")" = 1
[ $fails = "$f0" ] && echo "PASS - shared: $eb J + $ec J = $sum J, the counter ${gpu_delta} J" || { echo "FAIL - shared: $eb J + $ec J = $sum J, the counter ${gpu_delta} J"; part=1; }
"$NVQ" show "$b" | grep '^run '
exit $part
