#!/usr/bin/env bash
# race_check.sh [BUILD_DIR] [ROUNDS]: the job's shared memory account with the
# real driver.  Two PyTorch processes of one -m 1G job (the second in a
# session of its own, as torchrun's workers are) each allocate 600 MiB at
# the same instant (a barrier), ROUNDS times (30), freeing in between:
# exactly one may succeed in every round (1.2 GiB would pass -m; 600 MiB
# fits).  Also prints nvq gpus while they hold memory: the job's, none
# outside.  Run on a machine with an NVIDIA GPU.
set -u
cd "$(dirname "$0")/../.."
B=${1:-build}; ROUNDS=${2:-30}
. tests/gpu/lib.sh
gpu_nvqd race "log_level = debug" "[gpus]" "poll = 1s"
cat > "$T/race.py" <<'PY'
import os, sys, time, torch, torch.multiprocessing as mp
MB = 1 << 20
def work(rank, rounds, bar, q):
    if rank == 1:
        os.setsid()
    torch.cuda.init(); torch.zeros(1, device="cuda")
    for r in range(rounds):
        bar.wait()
        try:
            t = torch.empty(600 * MB, dtype=torch.uint8, device="cuda")
            ok = True
        except torch.OutOfMemoryError:
            t = None; ok = False
        q.put((r, rank, ok))
        bar.wait()
        if r == 0 and rank == 0:
            open(sys.argv[2] + "/holding", "w").close()
            time.sleep(6)   # nvq gpus looks at them now
        bar.wait()
        del t
        torch.cuda.empty_cache()
if __name__ == "__main__":
    rounds = int(sys.argv[1])
    ctx = mp.get_context("spawn")
    bar, q = ctx.Barrier(2), ctx.Queue()
    ps = [ctx.Process(target=work, args=(k, rounds, bar, q)) for k in (0, 1)]
    for p in ps: p.start()
    got = {}
    for _ in range(2 * rounds):
        r, k, ok = q.get()
        got.setdefault(r, []).append(ok)
    for p in ps: p.join()
    one = sum(1 for v in got.values() if sum(v) == 1)
    both = sum(1 for v in got.values() if sum(v) == 2)
    none = sum(1 for v in got.values() if sum(v) == 0)
    print("race rounds %d one %d both %d none %d" % (rounds, one, both, none), flush=True)
PY
a=$("$NVQ" submit --parsable -m 1G -o "$T/out" -e "$T/err" python3 "$T/race.py" "$ROUNDS" "$T")
for _ in $(seq 1200); do [ -f "$T/holding" ] && break; sleep 0.1; done
sleep 2.5	# two NVML polls
echo "nvq gpus while the first round holds its memory:"; "$NVQ" gpus | sed 's/^/    /'
"$NVQ" wait "$a" > /dev/null 2>&1
cat "$T/out"
check "the job completed" test "$("$NVQ" show "$a" | awk '$1 == "state" {print $2}')" = COMPLETED
check "exactly one success in every round" grep -q "^race rounds $ROUNDS one $ROUNDS both 0 none 0$" "$T/out"
check "no process was refused its link" test "$(grep -c "not part of job" "$T/nvqd.log")" = 0
tail -3 "$T/err" | sed 's/^/    stderr: /'
echo "race check: $fails failed"
exit $((fails > 0))
