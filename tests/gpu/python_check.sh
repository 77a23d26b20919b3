#!/usr/bin/env bash
# python_check.sh [BUILD]: the Python package (python/nvq) on a real GPU:
# nvq.Executor runs PyTorch functions as jobs under the real nvqd (NVML,
# the hook preloaded).  Checks, one PASS/FAIL/SKIPPED line each with its
# figures: a matmul on the GPU comes back equal to the CPU's; four calls
# of 4G each share one GPU (nvq packs them by memory) and all come back;
# an allocation past the job's -m budget raises torch's out-of-memory
# error from result(), with the job's traceback as its cause; a pending
# future's cancel cancels its job; futures complete from pushed frames
# (how many frames and looks it took).  Needs one GPU and PyTorch.
set -u
cd "$(dirname "$0")/../.."
B=${1:-build}
. tests/gpu/lib.sh
python3 -c 'import torch; assert torch.cuda.is_available()' 2> /dev/null ||
    { echo "SKIPPED - python_check: no PyTorch with CUDA for python3 here"; exit 0; }
gpu_nvqd python
mkdir -p "$T/calls" && chmod 700 "$T/calls"
cat > "$T/drive.py" <<'PY'
import os, sys, time
import nvq

def matmul(n, seed):
    import torch
    g = torch.Generator().manual_seed(seed)
    a = torch.randn(n, n, generator=g, dtype=torch.float64)
    b = torch.randn(n, n, generator=g, dtype=torch.float64)
    c = (a.cuda() @ b.cuda()).cpu()
    return (torch.cuda.get_device_name(0), os.environ.get("CUDA_VISIBLE_DEVICES", ""),
            float(c.sum()), float((a @ b).sum()), os.getpid())

def hold(secs, mib):
    import torch
    x = torch.empty(mib << 20, dtype=torch.uint8, device="cuda")
    time.sleep(secs)
    return int(x.numel() >> 20)

def too_much(gib):
    import torch
    return torch.empty(gib << 30, dtype=torch.uint8, device="cuda").numel()

def say(ok, what):
    print("%s - %s" % ("PASS" if ok else "FAIL", what), flush=True)
    return 0 if ok else 1

if __name__ == "__main__":
    fails = 0
    folder = sys.argv[1]
    c = nvq.Client()
    t0 = time.time()
    with nvq.Executor(gpus=1, gpu_mem="4G", folder=folder, time="10m") as ex:
        try:
            name, vis, gpu_sum, cpu_sum, _ = ex.submit(matmul, 2048, 1).result(timeout=300)
            fails += say(abs(gpu_sum - cpu_sum) <= 1e-6 * max(1.0, abs(cpu_sum)),
                         "matmul on %s (CUDA_VISIBLE_DEVICES=%s): GPU sum %.6f, CPU %.6f, "
                         "%.1f s submit to result" % (name, vis, gpu_sum, cpu_sum, time.time() - t0))
        except Exception as e:
            fails += say(False, "matmul: %r" % e)
        t1 = time.time()
        futs = [ex.submit(hold, 5, 1024) for _ in range(4)]
        time.sleep(2)
        running = [c.show(f.job_id).state for f in futs].count("RUNNING")
        try:
            got = [f.result(timeout=300) for f in futs]
            fails += say(got == [1024] * 4 and running == 4,
                         "four 4G calls on one GPU: %d running at once after 2 s, results %s, "
                         "%.1f s for all" % (running, got, time.time() - t1))
        except Exception as e:
            fails += say(False, "four calls: %r" % e)
        f = ex.submit(too_much, 8)
        try:
            f.result(timeout=300)
            fails += say(False, "8G past a 4G budget: no error")
        except Exception as e:
            cause = e.__cause__
            # torch's error itself, or, if it did not pickle, nvq's RemoteError naming it
            fails += say(("OutOfMemory" in type(e).__name__ or "OutOfMemory" in str(cause))
                         and isinstance(cause, nvq.RemoteTraceback)
                         and "too_much" in str(cause),
                         "8G past a 4G budget: %s from result(), remote traceback %s; job %s"
                         % (type(e).__name__, "attached" if isinstance(cause, nvq.RemoteTraceback)
                            else "missing", c.show(f.job_id).state))
        print("     %d frames pushed, %d looks" % (ex.frames, ex.looks), flush=True)
    with nvq.Executor(gpus=1, gpu_mem="4G", folder=folder, hold=True) as ex:
        f = ex.submit(matmul, 16, 2)
        ok = f.cancel()
        st = c.show(f.job_id).state
        fails += say(ok and st == "CANCELLED", "cancel of a pending future: %s, job %s" % (ok, st))
    sys.exit(1 if fails else 0)
PY
ROOT=$PWD
cd "$T"
PYTHONPATH=$ROOT/python python3 "$T/drive.py" "$T/calls"
rc=$?
[ $rc = 0 ] || { echo "nvqd's log, its end:"; tail -20 "$T/nvqd.log"; }
exit $rc
