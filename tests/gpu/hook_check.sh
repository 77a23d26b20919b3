#!/usr/bin/env bash
# hook_check.sh: the hook on a real GPU, under nvqd, with PyTorch and CuPy.
#   (a) a -m 4G job that allocates 8G gets torch's OutOfMemoryError, and
#       torch.cuda.mem_get_info() shows a 4G total;
#   (b) the same with PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True
#       (the VMM path: cuMemCreate);
#   (f) CuPy held to the budget too (its memGetInfo and an 8G allocation).
# Usage: tests/gpu/hook_check.sh [BUILD_DIR]
set -u
cd "$(dirname "$0")/../.."
B=${1:-build}
. tests/gpu/lib.sh
gpu_nvqd hook

cat > "$T/torch_budget.py" <<'EOF'
import os, torch
free, total = torch.cuda.mem_get_info()
print("mem_get_info total %d free %d" % (total, free))
print("NVQ_GPU_MEM", os.environ.get("NVQ_GPU_MEM"))
x = torch.empty(3 << 30, dtype=torch.uint8, device="cuda")
x.fill_(7)
print("3G ok, sum", int(x[:1024].sum()))
try:
    y = torch.empty(8 << 30, dtype=torch.uint8, device="cuda")
    print("8G allocated")
except torch.cuda.OutOfMemoryError as e:
    print("8G refused: OutOfMemoryError:", str(e).splitlines()[0][:120])
print("max_memory_reserved", torch.cuda.max_memory_reserved())
EOF
cat > "$T/cupy_budget.py" <<'EOF'
import cupy
free, total = cupy.cuda.runtime.memGetInfo()
print("memGetInfo total %d free %d" % (total, free))
a = cupy.ones(3 << 30, dtype=cupy.uint8)
print("3G ok, sum", int(a[:1024].sum()))
try:
    b = cupy.ones(8 << 30, dtype=cupy.uint8)
    print("8G allocated")
except cupy.cuda.memory.OutOfMemoryError as e:
    print("8G refused: OutOfMemoryError:", str(e)[:120])
EOF

echo "== (a) PyTorch, -m 4G"
a=$("$NVQ" submit --parsable -m 4G -n torch -- python3 "$T/torch_budget.py")
"$NVQ" wait "$a"; "$NVQ" log "$a"; "$NVQ" log --err "$a" | grep -v Warning | tail -3
out=$("$NVQ" log "$a")
check "(a) torch sees a 4G total" grep -q "mem_get_info total $((4 << 30)) " <<< "$out"
check "(a) 3G fits" grep -q "^3G ok, sum 7168" <<< "$out"
check "(a) 8G raises OutOfMemoryError" grep -q "^8G refused: OutOfMemoryError" <<< "$out"

echo "== (b) PyTorch with expandable_segments, -m 4G"
b=$(PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True "$NVQ" submit --parsable -m 4G -n torch-vmm \
    -- python3 "$T/torch_budget.py")
"$NVQ" wait "$b"; "$NVQ" log "$b"; "$NVQ" log --err "$b" | grep -v Warning | tail -3
out=$("$NVQ" log "$b")
check "(b) torch sees a 4G total" grep -q "mem_get_info total $((4 << 30)) " <<< "$out"
check "(b) 3G fits" grep -q "^3G ok, sum 7168" <<< "$out"
check "(b) 8G raises OutOfMemoryError" grep -q "^8G refused: OutOfMemoryError" <<< "$out"

echo "== (f) CuPy, -m 4G"
if python3 -c "import cupy" 2>/dev/null; then
	f=$("$NVQ" submit --parsable -m 4G -n cupy -- python3 "$T/cupy_budget.py")
	"$NVQ" wait "$f"; "$NVQ" log "$f"; "$NVQ" log --err "$f" | tail -3
	out=$("$NVQ" log "$f")
	check "(f) CuPy sees a 4G total" grep -q "memGetInfo total $((4 << 30)) " <<< "$out"
	check "(f) 3G fits" grep -q "^3G ok, sum 1024" <<< "$out"
	check "(f) 8G raises OutOfMemoryError" grep -q "^8G refused: OutOfMemoryError" <<< "$out"
else
	echo "FAIL - (f) cupy is not installed here"; fails=$((fails + 1))
fi
echo "== without the budget (no -m: the whole GPU), the same script sees the GPU's memory"
w=$("$NVQ" submit --parsable -n torch-whole -- python3 "$T/torch_budget.py")
"$NVQ" wait "$w"; "$NVQ" log "$w"
check "a whole-GPU job may allocate 8G" grep -q "^8G allocated" <<< "$("$NVQ" log "$w")"
"$NVQ" list -a
echo "gpu hook check: $fails failed"
exit $fails
