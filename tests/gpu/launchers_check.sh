#!/usr/bin/env bash
# launchers_check.sh [BUILD] [LAUNCHER...]: 2-GPU training jobs started the
# ways people start them, each under nvq hold, suspend and timeslice.
# LAUNCHER: ddp (torchrun, DistributedDataParallel), fsdp (torchrun, FSDP),
# trainer (torchrun, a Hugging Face Trainer on a tiny GPT-2 built from a
# config: nothing is downloaded), accelerate (accelerate launch --multi_gpu),
# lightning (Lightning's own DDP launcher: python starts rank 0, which
# starts rank 1).  Default: all five.
#
# For each: one job (-g 2 -m 8G) steps until told to stop; HOLDS (5) holds,
# each acknowledged without SIGSTOP and with no step on any rank while held;
# one nvq suspend (SUSPEND=0: none) with both GPUs' memory from nvidia-smi
# before, while suspended and after the resume, no step while suspended;
# then the job stops and its ranks' parameter checksums must be equal
# (replicas; FSDP's full parameters).  TS=1: then two copies of the job,
# STEPS (600) steps each, on both GPUs with compute = timeslice and
# quantum = 3s: both COMPLETED, no SIGSTOP in nvqd's log, and the time of the
# pair against one alone.
# Needs two GPUs; NCCL_NVLS_ENABLE=0 is set for the jobs.
set -u
cd "$(dirname "$0")/../.."
B=${1:-build}; shift || true
LAUNCHERS=${*:-ddp fsdp trainer accelerate lightning}
HOLDS=${HOLDS:-5}; SUSPEND=${SUSPEND:-1}; TS=${TS:-0}; STEPS=${STEPS:-600}
. tests/gpu/lib.sh
export NCCL_NVLS_ENABLE=0
used() { nvidia-smi --query-gpu=memory.used --format=csv,noheader,nounits | tr '\n' ' '; }
TORCHRUN=$(command -v torchrun || echo "python3 -m torch.distributed.run")
ACCEL=$(command -v accelerate || echo "python3 -m accelerate.commands.accelerate_cli")
W=$(mktemp -d /tmp/nvq-launchers.XXXXXX)

# The workloads.  argv: OUT NAME [STEPS]; each rank appends a line to
# OUT/NAME.rankR per step, stops when OUT/stop.NAME exists (decided on rank 0,
# broadcast) or after STEPS steps, and writes its parameters' checksum to
# OUT/NAME.sumR.
cat > "$W/w_common.py" <<'PY'
import os, sys, torch, torch.distributed as dist
OUT, NAME = sys.argv[1], sys.argv[2]
STEPS = int(sys.argv[3]) if len(sys.argv) > 3 else 0
def model():
    torch.manual_seed(0)
    return torch.nn.Sequential(*[m for _ in range(6) for m in (torch.nn.Linear(1024, 1024), torch.nn.ReLU())])
def data(rank):
    g = torch.Generator().manual_seed(rank + 1)
    return torch.randn(128, 1024, generator=g)
class Steps:
    def __init__(self, rank):
        self.rank, self.n = rank, 0
        self.f = open("%s/%s.rank%d" % (OUT, NAME, rank), "w", buffering=1)
    def step(self):
        self.n += 1
        self.f.write("s\n")
    def more(self, device):
        """Whether to go on: the same answer on every rank."""
        if STEPS:
            return self.n < STEPS
        go = torch.tensor([float(not os.path.exists("%s/stop.%s" % (OUT, NAME)))], device=device)
        dist.broadcast(go, 0)
        return bool(go.item())
    def checksum(self, params):
        s = sum(p.detach().double().sum().item() for p in params)
        with open("%s/%s.sum%d" % (OUT, NAME, self.rank), "w") as f:
            f.write("%r\n" % s)
PY
cat > "$W/w_ddp.py" <<'PY'
import os, sys, torch, torch.distributed as dist
sys.path.insert(0, os.path.dirname(__file__)); from w_common import *
dist.init_process_group("nccl"); r = dist.get_rank(); torch.cuda.set_device(r)
m = torch.nn.parallel.DistributedDataParallel(model().cuda())
opt = torch.optim.SGD(m.parameters(), lr=1e-4); x = data(r).cuda(); s = Steps(r)
while s.more("cuda"):
    loss = m(x).pow(2).mean(); opt.zero_grad(); loss.backward(); opt.step()
    torch.cuda.synchronize(); s.step()
s.checksum(m.module.parameters()); dist.destroy_process_group()
PY
cat > "$W/w_fsdp.py" <<'PY'
import os, sys, torch, torch.distributed as dist
from torch.distributed.fsdp import FullyShardedDataParallel as FSDP
sys.path.insert(0, os.path.dirname(__file__)); from w_common import *
dist.init_process_group("nccl"); r = dist.get_rank(); torch.cuda.set_device(r)
m = FSDP(model().cuda(), use_orig_params=True)
opt = torch.optim.SGD(m.parameters(), lr=1e-4); x = data(r).cuda(); s = Steps(r)
while s.more("cuda"):
    loss = m(x).pow(2).mean(); opt.zero_grad(); loss.backward(); opt.step()
    torch.cuda.synchronize(); s.step()
with FSDP.summon_full_params(m):
    s.checksum(m.parameters())
dist.destroy_process_group()
PY
cat > "$W/w_accel.py" <<'PY'
import os, sys, torch, torch.distributed as dist
from accelerate import Accelerator
sys.path.insert(0, os.path.dirname(__file__)); from w_common import *
acc = Accelerator(); r = acc.process_index
m = model(); opt = torch.optim.SGD(m.parameters(), lr=1e-4)
m, opt = acc.prepare(m, opt); x = data(r).to(acc.device); s = Steps(r)
while s.more(acc.device):
    loss = m(x).pow(2).mean(); opt.zero_grad(); acc.backward(loss); opt.step()
    torch.cuda.synchronize(); s.step()
s.checksum(acc.unwrap_model(m).parameters()); acc.end_training()
PY
cat > "$W/w_trainer.py" <<'PY'
import os, sys, torch, torch.distributed as dist
from transformers import GPT2Config, GPT2LMHeadModel, Trainer, TrainingArguments, TrainerCallback
sys.path.insert(0, os.path.dirname(__file__)); from w_common import *
class Tokens(torch.utils.data.Dataset):
    def __len__(self): return 100000
    def __getitem__(self, i):
        ids = torch.randint(0, 1000, (64,), generator=torch.Generator().manual_seed(i % 4096))
        return {"input_ids": ids, "labels": ids}
class Count(TrainerCallback):
    def __init__(self): self.s = None
    def on_step_end(self, args, state, control, **kw):
        if self.s is None: self.s = Steps(dist.get_rank())
        self.s.step()
        if not self.s.more("cuda"): control.should_training_stop = True
torch.manual_seed(0)
m = GPT2LMHeadModel(GPT2Config(n_layer=2, n_embd=256, n_head=4, vocab_size=1000, n_positions=64))
args = TrainingArguments(output_dir=OUT + "/hf-" + NAME, max_steps=10 ** 8, per_device_train_batch_size=8,
    report_to=[], save_strategy="no", logging_strategy="no", disable_tqdm=True,
    dataloader_num_workers=0, learning_rate=1e-4)
c = Count(); t = Trainer(model=m, args=args, train_dataset=Tokens(), callbacks=[c]); t.train()
c.s.checksum(t.model.parameters())
PY
cat > "$W/w_light.py" <<'PY'
import os, sys, torch, torch.distributed as dist
import lightning as L
sys.path.insert(0, os.path.dirname(__file__)); from w_common import *
class M(L.LightningModule):
    def __init__(self):
        super().__init__(); self.m = model(); self.s = None
    def training_step(self, batch, i):
        return self.m(batch[0]).pow(2).mean()
    def on_train_batch_end(self, out, batch, i):
        if self.s is None: self.s = Steps(self.global_rank)
        torch.cuda.synchronize(); self.s.step()
        if not self.s.more(self.device): self.trainer.should_stop = True
    def configure_optimizers(self): return torch.optim.SGD(self.parameters(), lr=1e-4)
class Rows(torch.utils.data.Dataset):
    def __len__(self): return 100000
    def __getitem__(self, i): return (torch.randn(1024, generator=torch.Generator().manual_seed(i % 4096)),)
t = L.Trainer(accelerator="gpu", devices=2, strategy="ddp", max_steps=-1, max_epochs=-1,
    enable_checkpointing=False, logger=False, enable_progress_bar=False, enable_model_summary=False)
mod = M(); t.fit(mod, torch.utils.data.DataLoader(Rows(), batch_size=128))
mod.s.checksum(mod.m.parameters())
PY
cmd() {	# LAUNCHER NAME [STEPS]: the job's command
	case $1 in
	ddp|fsdp|trainer) echo "$TORCHRUN --standalone --nproc_per_node=2 $W/w_$1.py $W $2 ${3:-}" ;;
	# accelerate's rendezvous port is 29500 unless told: two jobs at once
	# on one host would meet there, so each name gets its own.
	accelerate) echo "$ACCEL launch --main_process_port $((20000 + $(echo "$2" | cksum | cut -d' ' -f1) % 20000)) --multi_gpu --num_processes 2 --num_machines 1 --mixed_precision no --dynamo_backend no $W/w_accel.py $W $2 ${3:-}" ;;
	lightning) echo "python3 $W/w_light.py $W $2 ${3:-}" ;;
	esac
}
state() { "$NVQ" show "$1" | awk '$1 == "state" {print $2}'; }
sums_equal() {	# NAME: both ranks wrote the same checksum
	[ -s "$W/$1.sum0" ] && [ -s "$W/$1.sum1" ] && cmp -s "$W/$1.sum0" "$W/$1.sum1"
}

gpu_nvqd launchers "[scheduler]" "revoke_timeout = 5s" "preempt = off"
[ "$("$NVQ" gpus --json | grep -c '"uuid"')" -ge 2 ] || { echo "needs two GPUs"; exit 1; }
for L in $LAUNCHERS; do
	# shellcheck disable=SC2046
	a=$("$NVQ" submit --parsable -g 2 -m 8G -n "$L" -o "$W/$L.out" -e "$W/$L.out" -- $(cmd "$L" "$L"))
	if ! wait_steps "$W/$L.rank0" 20 || ! wait_steps "$W/$L.rank1" 20; then
		check "$L: both ranks step" false; grep -v "^ *\(time\|host\|rank\|exitcode\|error_file\|traceback\) *:" "$W/$L.out" | tail -40; "$NVQ" cancel "$a" > /dev/null; continue
	fi
	drained=0 stopped=0 moved=0 times=""
	for i in $(seq "$HOLDS"); do
		t0=$(now); out=$("$NVQ" hold "$a" 2>&1); t1=$(now)
		case $out in *SIGSTOP*) stopped=$((stopped + 1)) ;; *drained*) drained=$((drained + 1)) ;; esac
		times="$times $(el "$t0" "$t1")"
		r0=$(lines "$W/$L.rank0"); r1=$(lines "$W/$L.rank1"); sleep 1.5
		[ "$(lines "$W/$L.rank0")" = "$r0" ] && [ "$(lines "$W/$L.rank1")" = "$r1" ] || moved=$((moved + 1))
		"$NVQ" release "$a" > /dev/null
		r0=$(lines "$W/$L.rank0"); sleep 1
		[ "$(lines "$W/$L.rank0")" -gt "$r0" ] || { echo "$L hold $i: no progress after release ($out)"; break; }
	done
	echo "$L: $HOLDS holds: drained $drained, SIGSTOP $stopped, with steps while held $moved; took (s):$times"
	check "$L: every hold drained, none ended in SIGSTOP" [ "$drained" = "$HOLDS" ]
	check "$L: no step while held" [ "$moved" = 0 ]
	if [ "$SUSPEND" = 1 ]; then
		before=$(used); t0=$(now); out=$("$NVQ" suspend "$a" 2>&1); t1=$(now)
		while_=$(used); r0=$(lines "$W/$L.rank0"); r1=$(lines "$W/$L.rank1"); sleep 2
		held_ok=0
		[ "$(lines "$W/$L.rank0")" = "$r0" ] && [ "$(lines "$W/$L.rank1")" = "$r1" ] && held_ok=1
		t2=$(now); rout=$("$NVQ" resume "$a" 2>&1)
		r0=$(lines "$W/$L.rank0"); for _ in $(seq 300); do [ "$(lines "$W/$L.rank0")" -gt "$r0" ] && break; sleep 0.1; done
		t3=$(now)
		echo "$L: nvq suspend: '$out' in $(el "$t0" "$t1") s; GPU MiB used before: $before while: $while_ after resume: $(used); running again $(el "$t2" "$t3") s after nvq resume ('$rout')"
		check "$L: suspended" [ "$out" = "job $a suspended" ]
		check "$L: no step while suspended" [ "$held_ok" = 1 ]
	fi
	touch "$W/stop.$L"
	timeout 180 "$NVQ" wait "$a" > /dev/null 2>&1
	check "$L: the job completed" [ "$(state "$a")" = COMPLETED ]
	check "$L: replicas equal ($(cat "$W/$L.sum0" 2>/dev/null) / $(cat "$W/$L.sum1" 2>/dev/null))" sums_equal "$L"
	[ "$(state "$a")" = COMPLETED ] || tail -30 "$W/$L.out"
done
echo "SIGSTOPs in nvqd's log: $(grep -c SIGSTOP "$T/nvqd.log")"
if [ "$TS" = 1 ]; then
	kill "$NVQD_PID"; wait "$NVQD_PID" 2>/dev/null
	gpu_nvqd launchers-ts "log_level = debug" "[scheduler]" "compute = timeslice" "quantum = 3s" "revoke_timeout = 5s" \
	    "preempt = off"
	for L in $LAUNCHERS; do
		# shellcheck disable=SC2046
		t0=$(now); a=$("$NVQ" submit --parsable -g 2 -m 12G -n "$L-1" -- $(cmd "$L" "$L-alone" "$STEPS"))
		timeout 300 "$NVQ" wait "$a" > /dev/null 2>&1; t1=$(now)
		# shellcheck disable=SC2046
		a=$("$NVQ" submit --parsable -g 2 -m 12G -n "$L-a" -- $(cmd "$L" "$L-a" "$STEPS"))
		# shellcheck disable=SC2046
		b=$("$NVQ" submit --parsable -g 2 -m 12G -n "$L-b" -- $(cmd "$L" "$L-b" "$STEPS"))
		timeout 600 "$NVQ" wait "$a" "$b" > /dev/null 2>&1; t2=$(now)
		one=$(el "$t0" "$t1"); pair=$(el "$t1" "$t2")
		echo "$L timeslice: one alone $one s, the pair $pair s: ratio $(awk -v a="$pair" -v b="$one" 'BEGIN { printf "%.2f", a / b }')"
		check "$L timeslice: both COMPLETED" [ "$(state "$a")/$(state "$b")" = COMPLETED/COMPLETED ]
		for j in "$a" "$b"; do
			[ "$(state "$j")" = COMPLETED ] || { "$NVQ" show "$j" | head -20; "$NVQ" log --err "$j" 2>&1 | tail -15; }
		done
		check "$L timeslice: replicas equal" sums_equal "$L-a"
	done
	echo "timeslice: SIGSTOPs in nvqd's log: $(grep -c SIGSTOP "$T/nvqd.log"); turns passed: $(grep -c 'yields GPU' "$T/nvqd.log")"
	check "timeslice: no SIGSTOP" [ "$(grep -c SIGSTOP "$T/nvqd.log")" = 0 ]
fi
echo "launchers_check: $fails failed"
[ "$fails" = 0 ]
