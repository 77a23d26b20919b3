#!/usr/bin/env bash
# verify_check.sh [BUILD_DIR]: nvq-ckpt's check with NVML after a checkpoint
# (-n), with the real driver: two PyTorch processes holding 1 GiB each are
# checkpointed together; NVML must stop listing them (nvq-ckpt prints
# "verify 0 SECONDS", the time NVML took to agree), nvidia-smi must list no
# compute process, and after the resume each must find its tensor intact.
# Run on a machine with an NVIDIA GPU.
set -u
cd "$(dirname "$0")/../.."
B=${1:-build}
. tests/gpu/lib.sh
T=$(mktemp -d /tmp/nvq-verify.XXXXXX)
trap 'pkill -f "$T/" 2>/dev/null; rm -rf "$T"' EXIT
cat > "$T/hold.py" <<'PY'
import sys, time, torch
t = torch.full((256 << 20,), float(sys.argv[2]), device="cuda"); torch.cuda.synchronize()
open(sys.argv[1], "w").close()
time.sleep(30)
print("sum ok" if float(t.sum()) == float(sys.argv[2]) * (256 << 20) else "sum BAD", flush=True)
PY
python3 "$T/hold.py" "$T/r1" 1 > "$T/o1" 2>&1 & p1=$!
python3 "$T/hold.py" "$T/r2" 2 > "$T/o2" 2>&1 & p2=$!
for _ in $(seq 600); do [ -f "$T/r1" ] && [ -f "$T/r2" ] && break; sleep 0.1; done
"$B/nvq-ckpt" -n libnvidia-ml.so.1 suspend "$p1" "$p2" | tee "$T/ckpt"
apps=$(nvidia-smi --query-compute-apps=pid --format=csv,noheader | grep -cE "^($p1|$p2)$")
echo "nvidia-smi lists $apps of the two after the suspend"
check "suspend with the NVML check" grep -q '^ok ' "$T/ckpt"
check "NVML agreed (a verify line)" grep -q '^verify 0 ' "$T/ckpt"
check "nvidia-smi lists neither" test "$apps" = 0
"$B/nvq-ckpt" resume "$p1" "$p2"
wait "$p1" "$p2"
echo "process 1: $(cat "$T/o1"); process 2: $(cat "$T/o2")"
check "both tensors intact" test "$(cat "$T/o1" "$T/o2" | grep -c '^sum ok$')" = 2
echo "verify check: $fails failed"
[ "$fails" = 0 ]
