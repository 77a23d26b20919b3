"""hook_ab.py: what the hook costs a real PyTorch training step, with a
confidence interval narrow enough to resolve 0.5%.

Usage: python3 bench/hook_ab.py worker CMD_FIFO OUT_FIFO
       python3 bench/hook_ab.py run DIR ROUNDS SECONDS ARM...

A worker trains a transformer (HOOK_AB_SIZE: "big", 8 encoder layers of
d_model 1024, batch 32 x 256 tokens, or "small", 4 layers of 512, batch
16 x 128; AdamW; hundreds of kernel launches per step) and waits; each "go S" on its command FIFO makes it train for S
seconds and answer its steps per second.  run starts nothing itself: the
arms (one worker each: without the hook, with it preloaded, as an nvqd
job) are started by bench/hook_ab.sh, all pinned to one core, and run asks
them in turn, one at a time, the order rotated each round.  Slow drifts of
the machine then hit every arm of a round alike; the per-round ratio to
the first arm cancels them.  It prints, for each arm against the first,
the median ratio and a 95% bootstrap interval of the mean log ratio.
"""
import math
import os
import random
import sys
import time


# d_model, heads, feed-forward, layers, batch, tokens: "small" is bound by
# the CPU launching kernels (about 13 ms a step on the H100, where the
# machine's noise is largest); "big" by the GPU (a step of tens of ms)
SIZES = {"small": (512, 8, 2048, 4, 16, 128), "big": (1024, 16, 4096, 8, 32, 256)}


def worker(cmd, out):
    import torch
    torch.manual_seed(0)
    d, heads, ff, layers, batch, seq = SIZES[os.environ.get("HOOK_AB_SIZE", "big")]
    layer = torch.nn.TransformerEncoderLayer(d, heads, ff, batch_first=True)
    model = torch.nn.TransformerEncoder(layer, layers).cuda()
    opt = torch.optim.AdamW(model.parameters(), lr=1e-4)
    x = torch.randn(batch, seq, d, device="cuda")

    def step():
        loss = model(x).pow(2).mean()
        opt.zero_grad(set_to_none=False)
        loss.backward()
        opt.step()

    for _ in range(50):
        step()
    torch.cuda.synchronize()
    with open(out, "w") as o:
        o.write("ready\n")
        o.flush()
        with open(cmd) as c:
            for line in c:
                secs = float(line.split()[1])
                n, t = 0, time.perf_counter()
                while True:
                    step()
                    n += 1
                    if n % 10 == 0:
                        torch.cuda.synchronize()
                        el = time.perf_counter() - t
                        if el >= secs:
                            break
                o.write("%.4f\n" % (n / el))
                o.flush()


def run(d, rounds, secs, arms):
    cmds, outs = {}, {}
    for a in arms:
        outs[a] = open(os.path.join(d, a + ".out"))
        if outs[a].readline().strip() != "ready":
            sys.exit("arm %s did not start" % a)
        cmds[a] = open(os.path.join(d, a + ".cmd"), "w")
    rates = {a: [] for a in arms}
    for r in range(rounds):
        order = arms[r % len(arms):] + arms[:r % len(arms)]
        for a in order:
            cmds[a].write("go %s\n" % secs)
            cmds[a].flush()
            rates[a].append(float(outs[a].readline()))
    for a in arms:
        cmds[a].close()
        print("%-8s steps/s: median %.2f, min %.2f, max %.2f" % (a, sorted(rates[a])[rounds // 2],
              min(rates[a]), max(rates[a])))
    base = arms[0]
    rnd = random.Random(1)
    for a in arms[1:]:
        logs = [math.log(x / y) for x, y in zip(rates[a], rates[base])]
        means = []
        for _ in range(10000):
            s = [logs[rnd.randrange(len(logs))] for _ in logs]
            means.append(sum(s) / len(s))
        means.sort()
        lo, hi = math.exp(means[250]) - 1, math.exp(means[9749]) - 1
        mean = math.exp(sum(logs) / len(logs)) - 1
        med = sorted(math.exp(v) for v in logs)[len(logs) // 2] - 1
        print("%s vs %s: %+.2f%% (median of rounds %+.2f%%), 95%% interval %+.2f%% to %+.2f%%"
              " (width %.2f points, %d rounds)" % (a, base, 100 * mean, 100 * med, 100 * lo,
                                                  100 * hi, 100 * (hi - lo), rounds))


if __name__ == "__main__":
    if sys.argv[1] == "worker":
        worker(sys.argv[2], sys.argv[3])
    else:
        run(sys.argv[2], int(sys.argv[3]), sys.argv[4], sys.argv[5:])
