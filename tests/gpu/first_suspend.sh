#!/bin/bash
# first_suspend.sh [BUILD] [GIB]: the first suspend of a fresh nvqd at the
# defaults ([scheduler] offload = on, staging = 0): one PyTorch job holding
# GIB GiB (30), suspended once and resumed once, its data checked bit for
# bit after the resume and at its end.  Prints the time until nvq suspend
# returned (the GPU free), the recorded breakdown (driver, hook, bytes),
# the hook's own line, and the time until the job ran again after nvq
# resume.  Run as root on a machine with an NVIDIA GPU (driver >= 570).
cd "$(dirname "$0")/../.." || exit 1
B=${1:-build}; G=${2:-30}
. tests/gpu/lib.sh
PY=${PYTHON:-python3}
gpu_used() { nvidia-smi --query-gpu=memory.used --format=csv,noheader,nounits -i 0; }

gpu_nvqd first
id=$(NVQ_DEBUG=1 "$NVQ" submit --parsable -w 0 -m "$((G + 6))G" -o "$T/job.out" -e "$T/job.out" \
    $PY "$PWD/tests/gpu/holder.py" "$G" 4 "$T/job")
wait_progress "$T/job" 5 || { echo "FAIL - the job never ran"; cat "$T/job.out"; exit 1; }
base=$(gpu_used)
t0=$(now); out=$("$NVQ" suspend "$id" 2>&1); t1=$(now)
used=$(gpu_used)
check "$B: $out ($base -> $used MiB)" [ "$out" = "job $id suspended" ]
sleep 1
c=$(count "$T/job")
t2=$(now); "$NVQ" resume "$id" > /dev/null
wait_progress "$T/job" "$c"
t3=$(tail -1 "$T/job.resumed" 2> /dev/null)
"$NVQ" wait "$id"; rc=$?
check "$B: data intact ($(tail -1 "$T/job.out"))" [ "$rc" = 0 ]
echo "$B $G GiB first suspend: $(el "$t0" "$t1") s until the GPU was free; running again" \
    "$(el "$t2" "${t3:-$t2}") s after nvq resume; recorded: $(sqlite3 "$T/nvq.db" \
    "SELECT group_concat(kind || ' ' || printf('%.2f', seconds) || 's (driver ' ||
    printf('%.2f', driver_seconds) || 's, hook ' || printf('%.2f', coalesce(hook_seconds, 0)) ||
    's for ' || (coalesce(hook_bytes, 0) >> 20) || ' MiB)', '; ') FROM switches WHERE job_id = $id")"
echo "  hook: $(grep -h 'offload out' "$T/job.out" | tr '\n' ' ')"
echo "$fails failed"
[ "$fails" = 0 ]
