#!/bin/bash
# preempt_defaults.sh [BUILD] [GIB]: issue 40's preemption at the defaults
# (offload = on, staging = 0, preempt = suspend; only preempt_min_runtime
# = 0s, else the low job could not be preempted for a minute): a PyTorch
# job of GIB GiB (50) at priority 0 on the GPU, then one of GIB GiB at
# priority 50 for the same GPU (two do not fit on an 80 GB GPU).  Prints
# the time from the high job's submit to its first step, and where it went:
# until the low job's suspend began, the suspend (driver, hook), until the
# high job started, until its first step (its Python and PyTorch starting,
# its memory filled).  Both jobs must complete with their data intact.
# Run as root on a machine with an 80 GB NVIDIA GPU (driver >= 570).
cd "$(dirname "$0")/../.." || exit 1
B=${1:-build}; G=${2:-50}
. tests/gpu/lib.sh
PY=${PYTHON:-python3}
q() { sqlite3 "$T/nvq.db" "$1"; }

gpu_nvqd preempt "[scheduler]" "preempt_min_runtime = 0s"
low=$(NVQ_DEBUG=1 "$NVQ" submit --parsable -w 0 -p 0 -m "$((G + 5))G" -o "$T/low.out" -e "$T/low.out" \
    $PY "$PWD/tests/gpu/holder.py" "$G" 6 "$T/low")
wait_progress "$T/low" 5 || { echo "FAIL - the low job never ran"; cat "$T/low.out"; exit 1; }
t0=$(now)
high=$("$NVQ" submit --parsable -w 0 -p 50 -m "$((G + 5))G" -o "$T/high.out" -e "$T/high.out" \
    $PY "$PWD/tests/gpu/holder.py" "$G" 2 "$T/high")
# the high job's first step: its progress file appears (polled every 20 ms)
for _ in $(seq 6000); do [ -e "$T/high" ] && break; sleep 0.02; done
t1=$(now)
check "$B: the high job took a step" [ -e "$T/high" ]
"$NVQ" wait "$high"; rh=$?
"$NVQ" wait "$low"; rl=$?
check "$B: the high job completed, data intact ($(tail -1 "$T/high.out"))" [ "$rh" = 0 ]
check "$B: the low job completed, data intact ($(grep -c 'data ok' "$T/low.out") checks after gaps)" \
    [ "$rl" = 0 ]
sub=$(q "SELECT submitted_at FROM jobs WHERE id = $high")
IFS='|' read -r s_at s_sec s_drv s_hook s_mib <<< "$(q "SELECT started_at, printf('%.2f', seconds),
    printf('%.2f', driver_seconds), printf('%.2f', coalesce(hook_seconds, 0)),
    coalesce(hook_bytes, 0) >> 20 FROM switches WHERE job_id = $low AND kind = 'suspend'
    ORDER BY id LIMIT 1")"
h_start=$(q "SELECT started_at FROM jobs WHERE id = $high")
echo "$B $G GiB preemption: high submitted -> its first step $(el "$t0" "$t1") s; from its submit:" \
    "suspend began $(el "$sub" "$s_at") s, suspend took ${s_sec} s (driver ${s_drv} s, hook ${s_hook} s" \
    "for ${s_mib} MiB), high started at $(el "$sub" "$h_start") s, first step $(el "$h_start" "$t1") s after"
echo "  low's hook: $(grep -h 'offload out' "$T/low.out" | tr '\n' ' ')"
echo "$fails failed"
[ "$fails" = 0 ]
