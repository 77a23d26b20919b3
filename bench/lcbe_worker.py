#!/usr/bin/env python3
"""lcbe_worker.py: the jobs of the lc/be benchmark (issue 43; driven by
tests/gpu/lcbe_bench.sh).

Each worker is one nvqd job that lives through every phase of the run: it
builds its model once, says it is ready, then follows the phase the driver
writes into DIR/phase ("A1", "B1", ... "END"), working only in the phases
whose letter is in its --phases, and writes DIR/res.ROLE.PHASE.json after
each:

  infer  an inference service: torchvision's resnet50 built from its config
         (random weights: no download), fp16, channels_last, eval.  Requests
         arrive at a steady RATE a second (open loop: arrival k at t0 + k /
         RATE; a late service queues them, and their wait counts), each a
         batch of 1 to 8 images (seeded), copied in from pinned host memory,
         run, and the result copied back.  Latency is arrival to result on
         the host.  CUDA events around each request give the GPU time it
         kept the GPU busy: busy share = their sum / the phase's length.
  train  a training loop: resnet50, batch 64, fp16 autocast, SGD, on a fixed
         random batch on the GPU (no data loading); the loss is read every
         10 steps (a typical loop logs every few steps, and its launches run
         ahead of the GPU in between).  Throughput = steps / seconds.
  ddp    the train loop under torchrun (NCCL all-reduce of gradients), a
         fixed number of STEPS; prints its time.

--fake stands in for torch with sleeps, so that the driver's flow can be
checked on a machine without a GPU (CI's, against nvqd's virtual GPUs).
"""
import argparse
import json
import os
import random
import sys
import time


def read_phase(d):
    try:
        with open(os.path.join(d, "phase")) as f:
            return f.read().strip()
    except OSError:
        return ""


def write_json(path, obj):
    tmp = path + ".tmp"
    with open(tmp, "w") as f:
        json.dump(obj, f)
    os.replace(tmp, path)


class FakeInfer:
    def request(self, b):
        time.sleep(0.002 + 0.0002 * b)
        return 0.002 + 0.0002 * b


class FakeTrain:
    def step(self, sync):
        time.sleep(0.01)


class Infer:
    def __init__(self):
        import torch
        import torchvision
        self.torch = torch
        torch.backends.cudnn.benchmark = True
        self.model = torchvision.models.resnet50(weights=None).cuda().half().eval()
        self.model = self.model.to(memory_format=torch.channels_last)
        self.host = torch.randn(8, 3, 224, 224).half().pin_memory()
        self.start = torch.cuda.Event(enable_timing=True)
        self.end = torch.cuda.Event(enable_timing=True)
        for b in range(1, 9):  # every shape once: cudnn's choice made before timing
            for _ in range(3):
                self.request(b)

    def request(self, b):
        torch = self.torch
        self.start.record()
        with torch.no_grad():
            x = self.host[:b].cuda(non_blocking=True).to(memory_format=torch.channels_last)
            y = self.model(x)
        self.end.record()
        y.float().cpu()
        return self.start.elapsed_time(self.end) / 1000.0


class Train:
    def __init__(self):
        import torch
        import torchvision
        self.torch = torch
        torch.backends.cudnn.benchmark = True
        self.model = torchvision.models.resnet50(weights=None).cuda()
        self.model = self.model.to(memory_format=torch.channels_last)
        self.opt = torch.optim.SGD(self.model.parameters(), lr=0.01, momentum=0.9)
        self.scaler = torch.amp.GradScaler("cuda")
        self.x = torch.randn(64, 3, 224, 224, device="cuda").to(memory_format=torch.channels_last)
        self.y = torch.randint(0, 1000, (64,), device="cuda")
        self.loss = None
        for _ in range(5):
            self.step(True)

    def step(self, sync):
        torch = self.torch
        self.opt.zero_grad(set_to_none=True)
        with torch.autocast("cuda", dtype=torch.float16):
            loss = torch.nn.functional.cross_entropy(self.model(self.x), self.y)
        self.scaler.scale(loss).backward()
        self.scaler.step(self.opt)
        self.scaler.update()
        if sync:
            loss.item()


def pct(xs, q):
    if not xs:
        return 0.0
    s = sorted(xs)
    k = min(len(s) - 1, max(0, int(q * len(s) + 0.5) - 1))
    return s[k]


def run_infer(w, args, phase):
    rng = random.Random(sum(map(ord, phase)))  # the same batches for a phase in every run
    time.sleep(0.5)  # the other job of the phase is under way first
    lat, busy = [], 0.0
    t0 = time.perf_counter()
    k = 0
    while True:
        arrival = t0 + k / args.rate
        now = time.perf_counter()
        if arrival - t0 >= args.seconds:
            break
        if now < arrival:
            time.sleep(arrival - now)
        b = rng.randint(1, 8)
        busy += w.request(b)
        lat.append(time.perf_counter() - arrival)
        k += 1
    span = time.perf_counter() - t0
    return {"role": "infer", "phase": phase, "requests": len(lat), "seconds": span,
            "p50_ms": 1000 * pct(lat, 0.5), "p99_ms": 1000 * pct(lat, 0.99),
            "p999_ms": 1000 * pct(lat, 0.999), "busy_share": busy / span,
            "lat_ms": [round(1000 * x, 3) for x in lat]}


def run_train(w, args, phase):
    steps = 0
    t0 = time.perf_counter()
    while time.perf_counter() - t0 < args.seconds + 1.0:
        steps += 1
        w.step(steps % 10 == 0)
    w.step(True)
    steps += 1
    span = time.perf_counter() - t0
    return {"role": "train", "phase": phase, "steps": steps, "seconds": span,
            "steps_per_s": steps / span}


def run_ddp(args):
    import torch
    import torch.distributed as dist
    dist.init_process_group("nccl")
    rank = dist.get_rank()
    torch.cuda.set_device(int(os.environ["LOCAL_RANK"]))
    w = Train()
    w.model = torch.nn.parallel.DistributedDataParallel(w.model)
    w.opt = torch.optim.SGD(w.model.parameters(), lr=0.01, momentum=0.9)
    for _ in range(3):
        w.step(True)
    torch.cuda.synchronize()
    dist.barrier()
    t0 = time.perf_counter()
    for s in range(args.steps):
        w.step(s % 10 == 9)
    torch.cuda.synchronize()
    dist.barrier()
    span = time.perf_counter() - t0
    if rank == 0:
        print(f"ddp steps {args.steps} seconds {span:.3f}", flush=True)
    dist.destroy_process_group()


def main():
    p = argparse.ArgumentParser()
    p.add_argument("role", choices=["infer", "train", "ddp"])
    p.add_argument("--dir", default=".")
    p.add_argument("--name", default=None, help="the name its result files carry")
    p.add_argument("--phases", default="", help="letters of the phases it works in")
    p.add_argument("--rate", type=float, default=60.0)
    p.add_argument("--seconds", type=float, default=15.0)
    p.add_argument("--steps", type=int, default=300)
    p.add_argument("--fake", action="store_true")
    args = p.parse_args()
    if args.role == "ddp":
        run_ddp(args)
        return
    name = args.name or args.role
    if args.fake:
        w = FakeInfer() if args.role == "infer" else FakeTrain()
    else:
        w = Infer() if args.role == "infer" else Train()
    write_json(os.path.join(args.dir, "ready." + name), {"pid": os.getpid()})
    last = ""
    deadline = time.time() + 3600
    while time.time() < deadline:
        ph = read_phase(args.dir)
        if ph == last or ph == "":
            time.sleep(0.02)
            continue
        last = ph
        if ph == "END":
            break
        if ph[0] not in args.phases:
            continue
        res = run_infer(w, args, ph) if args.role == "infer" else run_train(w, args, ph)
        write_json(os.path.join(args.dir, "res.%s.%s.json" % (name, ph)), res)


if __name__ == "__main__":
    sys.exit(main())
