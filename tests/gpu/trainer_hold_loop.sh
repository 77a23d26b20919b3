#!/usr/bin/env bash
# trainer_hold_loop.sh: nvq hold and release of a Hugging Face Trainer
# under torchrun on two GPUs (NCCL), HOLDS times in a row (20), as
# ddp_hold_loop.sh does for plain DDP.  The model is a small GPT-2 built
# from a config and the data random tokens: nothing is downloaded.  Each
# round: nvq hold, the steps every rank makes in the 2 s after it returned
# (0 when held), nvq release, and progress again.  A hold that ends in
# SIGSTOP, or fails, counts as a failure (issue 40).
# Needs two GPUs and transformers; NCCL_NVLS_ENABLE=0 is set for the jobs.
# Usage: tests/gpu/trainer_hold_loop.sh [BUILD_DIR]
set -u
cd "$(dirname "$0")/../.."
B=${1:-build}
. tests/gpu/lib.sh
gpu_nvqd2 trainerhold "[scheduler]" "revoke_timeout = 10s"
HOLDS=${HOLDS:-20}
cat > "$T/train.py" <<'PY'
import os, sys, torch
from transformers import GPT2Config, GPT2LMHeadModel, Trainer, TrainingArguments, TrainerCallback
d = sys.argv[1]
rank = int(os.environ.get("RANK", "0"))
class Tokens(torch.utils.data.Dataset):
    def __len__(self): return 1 << 20
    def __getitem__(self, i):
        g = torch.Generator().manual_seed(i)
        ids = torch.randint(0, 1024, (128,), generator=g)
        return {"input_ids": ids, "labels": ids}
class Steps(TrainerCallback):
    def on_train_begin(self, args, state, control, **kw):
        self.f = open("%s/trainer.rank%d" % (d, rank), "w", buffering=1)
    def on_step_end(self, args, state, control, **kw):
        self.f.write("s\n")
        if os.path.exists(d + "/stop"):
            control.should_training_stop = True
model = GPT2LMHeadModel(GPT2Config(vocab_size=1024, n_positions=128, n_embd=256, n_layer=4,
                                   n_head=4))
args = TrainingArguments(output_dir=d + "/out", per_device_train_batch_size=16, max_steps=1000000,
                         save_strategy="no", report_to=[], logging_steps=1000000,
                         ddp_backend="nccl", disable_tqdm=True)
Trainer(model=model, args=args, train_dataset=Tokens(), callbacks=[Steps()]).train()
PY
TORCHRUN=$(command -v torchrun || echo "python3 -m torch.distributed.run")
# shellcheck disable=SC2086
a=$("$NVQ" submit --parsable -g 2 -m 8G -n trainer -- $TORCHRUN --standalone --nproc_per_node=2 \
    "$T/train.py" "$T")
wait_steps "$T/trainer.rank0" 20; wait_steps "$T/trainer.rank1" 20
drained=0 stopped=0 failed=0 moved=0 times=""
for i in $(seq "$HOLDS"); do
	t0=$(now); out=$("$NVQ" hold "$a" 2>&1); t1=$(now)
	case $out in
	*SIGSTOP*) stopped=$((stopped + 1)) ;;
	*drained*) drained=$((drained + 1)) ;;
	*) failed=$((failed + 1)); echo "round $i: $out" ;;
	esac
	times="$times $(el "$t0" "$t1")"
	r0=$(lines "$T/trainer.rank0"); r1=$(lines "$T/trainer.rank1"); sleep 2
	d0=$(( $(lines "$T/trainer.rank0") - r0 )); d1=$(( $(lines "$T/trainer.rank1") - r1 ))
	case $out in *drained*|*SIGSTOP*) [ $d0 = 0 ] && [ $d1 = 0 ] || moved=$((moved + 1)) ;; esac
	"$NVQ" release "$a" > /dev/null 2>&1
	r0=$(lines "$T/trainer.rank0"); sleep 1
	[ "$(lines "$T/trainer.rank0")" -gt "$r0" ] || { echo "round $i: no progress after release"; break; }
done
echo "trainer: $HOLDS holds: drained $drained, SIGSTOP $stopped, not held $failed, rounds with steps while held $moved"
echo "trainer: nvq hold took (s):$times"
echo "SIGSTOP in nvqd's log: $(grep -c SIGSTOP "$T/nvqd.log")"
check "no hold ended in SIGSTOP" test "$stopped" = 0
check "every hold drained" test "$drained" = "$HOLDS"
check "no step while held" test "$moved" = 0
touch "$T/stop"
timeout 180 "$NVQ" wait "$a" > /dev/null 2>&1
check "the job completed" test "$("$NVQ" show "$a" | awk '$1 == "state" {print $2}')" = COMPLETED
echo "trainer_hold_loop: $fails failed"
