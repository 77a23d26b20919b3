#!/usr/bin/env bash
# lock_check.sh: the GPU locks on a real GPU, under nvqd, with PyTorch.
#   (c) a Triton kernel and a CUDA-graph replay run under the hook, and a
#       hold stops each of them (the other job goes on), a release resumes it;
#   (d) nvq hold stops a training loop within a second, nvq release resumes it;
#   and the results computed across the holds are right.
# Usage: tests/gpu/lock_check.sh [BUILD_DIR]
set -u
cd "$(dirname "$0")/../.."
B=${1:-build}
. tests/gpu/lib.sh
gpu_nvqd lock "log_level = debug" "[gpus]" "poll = 1s"

cat > "$T/loop.py" <<'EOF'
# loop.py MODE FILE SECONDS: runs MODE (triton, graph, train) step after
# step, writing "STEP TIME" per step to FILE; checks its results at the end.
import sys, time, torch
mode, path, secs = sys.argv[1], sys.argv[2], float(sys.argv[3])
torch.manual_seed(0)
if mode == "triton":
    import triton, triton.language as tl
    @triton.jit
    def add_kernel(x_ptr, y_ptr, out_ptr, n, BLOCK: tl.constexpr):
        offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
        m = offs < n
        tl.store(out_ptr + offs, tl.load(x_ptr + offs, mask=m) + tl.load(y_ptr + offs, mask=m), mask=m)
    x = torch.randn(1 << 22, device="cuda"); y = torch.randn_like(x); out = torch.empty_like(x)
    def step():
        add_kernel[(x.numel() + 1023) // 1024,](x, y, out, x.numel(), BLOCK=1024)
    def verify():
        return bool(torch.equal(out, x + y))
elif mode == "graph":
    a = torch.randn(2048, 2048, device="cuda")
    s = torch.cuda.Stream(); s.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(s):
        for _ in range(3):
            b = a @ a
    torch.cuda.current_stream().wait_stream(s)
    g = torch.cuda.CUDAGraph()
    with torch.cuda.graph(g):
        b = a @ a
    ref = (a @ a).clone()
    def step():
        g.replay()
    def verify():
        return bool(torch.allclose(b, ref))
else:
    model = torch.nn.Sequential(*[torch.nn.Linear(1024, 1024) for _ in range(8)]).cuda()
    opt = torch.optim.SGD(model.parameters(), lr=1e-4)
    data = torch.randn(256, 1024, device="cuda")
    ref = None
    def step():
        loss = model(data).pow(2).mean()
        opt.zero_grad(); loss.backward(); opt.step()
    def verify():
        return all(bool(torch.isfinite(p).all()) for p in model.parameters())
f = open(path, "w", buffering=1)
end = time.time() + secs
n = 0
while time.time() < end:
    step()
    torch.cuda.synchronize()
    n += 1
    f.write("%d %.6f\n" % (n, time.time()))
print("%s: %d steps, results %s" % (mode, n, "correct" if verify() else "WRONG"))
EOF

lastt() { tail -n 1 "$1" | awk '{print $2}'; }
# hold_test ID FILE NAME [OTHER_FILE]: hold, measure, release, measure
hold_test() {
	local id=$1 f=$2 name=$3 other=${4:-} t0 t1 n1 n2 o1 o2 t2 first
	t0=$(date +%s.%N)
	"$NVQ" hold "$id"
	t1=$(date +%s.%N)
	sleep 0.2; n1=$(lines "$f"); [ -n "$other" ] && o1=$(lines "$other")
	sleep 2; n2=$(lines "$f"); [ -n "$other" ] && o2=$(lines "$other")
	echo "$name: nvq hold returned after $(awk -v a="$t0" -v b="$t1" 'BEGIN { printf "%.3f", b - a }') s;" \
	    "last step $(awk -v a="$t0" -v b="$(lastt "$f")" 'BEGIN { printf "%.3f", b - a }') s after the hold began;" \
	    "steps in the 2 s held: $((n2 - n1))"
	check "$name: stopped within a second" awk -v a="$t0" -v b="$(lastt "$f")" 'BEGIN { exit !(b - a < 1) }'
	check "$name: no step while held" test "$n1" = "$n2"
	if [ -n "$other" ]; then
		echo "$name: the other job took $((o2 - o1)) steps meanwhile"
		check "$name: the other job went on" test "$o2" -gt "$o1"
	fi
	check "$name: nvq list shows the hold" grep -q "lock held" <<< "$("$NVQ" list)"
	t2=$(date +%s.%N)
	"$NVQ" release "$id"
	wait_steps "$f" $((n2 + 5))
	first=$(awk -v t="$t2" '$2 > t { print $2; exit }' "$f")
	echo "$name: first step $(awk -v a="$t2" -v b="$first" 'BEGIN { printf "%.3f", b - a }') s after the release"
	check "$name: resumed after release" test -n "$first"
}

echo "== (c) a Triton kernel and a CUDA-graph replay, two jobs on the GPU"
a=$("$NVQ" submit --parsable -m 8G -n triton -- python3 "$T/loop.py" triton "$T/tri" 20)
b=$("$NVQ" submit --parsable -m 8G -n graph -- python3 "$T/loop.py" graph "$T/gra" 20)
check "(c) triton job runs" wait_steps "$T/tri" 50
check "(c) graph job runs" wait_steps "$T/gra" 50
"$NVQ" show "$a" | grep -E "^(lock|hook_pids)"
hold_test "$a" "$T/tri" "(c) triton" "$T/gra"
hold_test "$b" "$T/gra" "(c) graph" "$T/tri"
"$NVQ" wait "$a" "$b"
"$NVQ" log "$a"; "$NVQ" log "$b"
check "(c) Triton results right after hold and release" grep -q "results correct" <<< "$("$NVQ" log "$a")"
check "(c) graph results right after hold and release" grep -q "results correct" <<< "$("$NVQ" log "$b")"

echo "== (d) a training loop, held and released"
c=$("$NVQ" submit --parsable -m 8G -n train -- python3 "$T/loop.py" train "$T/train" 25)
check "(d) training runs" wait_steps "$T/train" 100
hold_test "$c" "$T/train" "(d) train"
"$NVQ" wait "$c"
"$NVQ" log "$c"
check "(d) training results after hold and release" grep -q "results correct" <<< "$("$NVQ" log "$c")"
"$NVQ" show "$c" | grep -E "^(event|run)"
grep -E "lock|acknowledged" "$T/nvqd.log" | head -20
echo "lock_check: $fails failed"
[ $fails = 0 ]
