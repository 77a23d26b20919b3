#!/usr/bin/env bash
# two_gpu_check.sh: the locks and budgets on a machine with two GPUs.
#   (g) jobs on different GPUs hold their locks at the same time; a 2-GPU
#       job gets both GPUs and both budgets; a hold on one GPU's job does
#       not slow the other GPU's job.
# Usage: tests/gpu/two_gpu_check.sh [BUILD_DIR]
set -u
cd "$(dirname "$0")/../.."
B=${1:-build}
. tests/gpu/lib.sh
gpu_nvqd 2gpu "log_level = debug" "[gpus]" "poll = 1s"
"$NVQ" gpus
ngpus=$("$NVQ" gpus --json | grep -c '"uuid"')
check "two GPUs found" test "$ngpus" -ge 2

cat > "$T/train.py" <<'EOF'
import sys, time, torch
path, secs = sys.argv[1], float(sys.argv[2])
model = torch.nn.Sequential(*[torch.nn.Linear(2048, 2048) for _ in range(8)]).cuda()
opt = torch.optim.SGD(model.parameters(), lr=1e-5)
data = torch.randn(512, 2048, device="cuda")
f = open(path, "w", buffering=1)
end, n = time.time() + secs, 0
while time.time() < end:
    loss = model(data).pow(2).mean(); opt.zero_grad(); loss.backward(); opt.step()
    torch.cuda.synchronize()
    n += 1
    f.write("%d %.6f\n" % (n, time.time()))
print("steps", n, "finite", all(bool(torch.isfinite(p).all()) for p in model.parameters()))
EOF
cat > "$T/two.py" <<'EOF'
import os, torch
n = torch.cuda.device_count()
print("device_count", n, "CUDA_VISIBLE_DEVICES", os.environ.get("CUDA_VISIBLE_DEVICES"))
xs = []
for d in range(n):
    free, total = torch.cuda.mem_get_info(d)
    print("device %d total %d" % (d, total))
    x = torch.ones(15 << 30, dtype=torch.uint8, device="cuda:%d" % d)
    xs.append(x)
    print("device %d 15G ok, sum %d" % (d, int(x[:4096].sum())))
    try:
        y = torch.empty(8 << 30, dtype=torch.uint8, device="cuda:%d" % d)
        print("device %d 8G more allocated" % d)
    except torch.cuda.OutOfMemoryError:
        print("device %d 8G more refused" % d)
EOF
rate() {	# FILE SECONDS: steps per second over the next SECONDS
	local a b; a=$(lines "$1"); sleep "$2"; b=$(lines "$1")
	awk -v a="$a" -v b="$b" -v s="$2" 'BEGIN { printf "%.1f", (b - a) / s }'
}

echo "== (g) two jobs, one per GPU (100G each: they cannot share one)"
a=$("$NVQ" submit --parsable -m 100G -n a -- python3 "$T/train.py" "$T/a" 40)
b=$("$NVQ" submit --parsable -m 100G -n b -- python3 "$T/train.py" "$T/b" 40)
check "(g) a runs" wait_steps "$T/a" 20
check "(g) b runs" wait_steps "$T/b" 20
ua=$("$NVQ" show "$a" | awk '/^gpu_uuids/ { print $2 }'); ub=$("$NVQ" show "$b" | awk '/^gpu_uuids/ { print $2 }')
echo "a on $ua, b on $ub"
check "(g) on different GPUs" test "$ua" != "$ub"
la=$("$NVQ" show "$a" | awk '/^lock/ { print $2 }'); lb=$("$NVQ" show "$b" | awk '/^lock/ { print $2 }')
echo "locks: a $la, b $lb"
check "(g) both hold their locks at once" test "$la $lb" = "granted granted"
ra=$(rate "$T/a" 3); rb0=$(rate "$T/b" 3)
echo "both running: a $ra steps/s, b $rb0 steps/s"
"$NVQ" hold "$a"
rah=$(rate "$T/a" 3); rb1=$(rate "$T/b" 3)
echo "a held: a $rah steps/s, b $rb1 steps/s (b before: $rb0; ratio $(awk -v x="$rb1" -v y="$rb0" 'BEGIN { printf "%.3f", x / y }'))"
check "(g) the held job stopped" test "$rah" = "0.0"
check "(g) the other GPU's job not slowed (within 5%)" awk -v x="$rb1" -v y="$rb0" 'BEGIN { exit !(x >= 0.95 * y) }'
"$NVQ" release "$a"
"$NVQ" cancel "$a" "$b" > /dev/null
sleep 2

echo "== (g) a 2-GPU job: both GPUs, both budgets"
c=$("$NVQ" submit --parsable -g 2 -m 20G -n two -- python3 "$T/two.py")
"$NVQ" wait "$c"; "$NVQ" log "$c"; "$NVQ" log --err "$c" | grep -v Warning | tail -3
out=$("$NVQ" log "$c")
check "(g) two devices" grep -q "^device_count 2" <<< "$out"
check "(g) budget on device 0" grep -q "^device 0 total $((20 << 30))$" <<< "$out"
check "(g) budget on device 1" grep -q "^device 1 total $((20 << 30))$" <<< "$out"
check "(g) 15G on each" test "$(grep -c "15G ok, sum 4096" <<< "$out")" = 2
check "(g) past the budget refused on each" test "$(grep -c "8G more refused" <<< "$out")" = 2
"$NVQ" show "$c" | grep -E "^run"
echo "two_gpu_check: $fails failed"
[ $fails = 0 ]
