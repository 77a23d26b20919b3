# holder.py GIB WORK_SECONDS PROGRESS_FILE: a PyTorch job for the suspend checks.
#
# Fills GIB GiB of device memory with a known pattern, then runs 4096x4096
# matmuls for WORK_SECONDS of its own running time (gaps of a second or more,
# while it was suspended, do not count).  It writes its iteration count to
# PROGRESS_FILE every 0.1 s, the time (time.time()) at which it ran again
# after each gap to PROGRESS_FILE.resumed, checks the whole pattern bit for bit after every
# gap and at the end, and exits 0 only if every check held.
import os
import sys
import time

import torch

gib, work, progress = float(sys.argv[1]), float(sys.argv[2]), sys.argv[3]
n = int(gib * (1 << 30)) // 4
chunk = 1 << 26	# 256 MiB of it at a time: the check's scratch stays small
x = torch.empty(n, dtype=torch.int32, device="cuda")


def pattern(a, b):
    return (torch.arange(a, b, dtype=torch.int64, device="cuda") * 2654435761 % 65521).to(torch.int32)


for a in range(0, n, chunk):
    x[a:min(n, a + chunk)] = pattern(a, min(n, a + chunk))
torch.cuda.synchronize()


def verify():
    for a in range(0, n, chunk):
        if not torch.equal(x[a:min(n, a + chunk)], pattern(a, min(n, a + chunk))):
            return False
    return True


m = torch.randn(4096, 4096, device="cuda")
done, it, gaps, bad, last, last_write = 0.0, 0, 0, 0, time.time(), 0.0
while done < work:
    t = time.time()
    y = m @ m
    torch.cuda.synchronize()
    now = time.time()
    step = now - t
    if now - last >= 1.0:
        # it was suspended (or held) in between: running again (said at
        # once, so that a check times the resume, not the pattern check)...
        it += 1
        # when, by this host's clock: a check times "running again" by it,
        # not by how often it polls PROGRESS_FILE
        with open(progress + ".resumed", "a") as f:
            f.write(f"{now:.6f}\n")
        with open(progress + ".tmp", "w") as f:
            f.write(f"{it}\n")
        os.replace(progress + ".tmp", progress)
        # ...and is everything still there?
        gaps += 1
        ok = verify() and torch.equal(y, m @ m)
        bad += not ok
        print(f"gap {now - last:.2f}s: data {'ok' if ok else 'BAD'}", flush=True)
        last = time.time()
        continue
    done += step
    it += 1
    last = now
    if now - last_write >= 0.1:
        with open(progress + ".tmp", "w") as f:
            f.write(f"{it}\n")
        os.replace(progress + ".tmp", progress)
        last_write = now
ok = verify()
bad += not ok
print(f"end: {it} iterations, {gaps} gaps, final check {'ok' if ok else 'BAD'}", flush=True)
with open(progress, "w") as f:
    f.write(f"{it}\n")
sys.exit(1 if bad else 0)
