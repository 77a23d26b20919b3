#!/bin/bash
# switch_trace.sh [BUILD] [GIB] [ROUNDS]: where the time of a switch goes.
# One PyTorch job (holder.py) holding GIB GiB (30 by default), with
# [scheduler] staging made ahead for it (STAGING, GIB + 10 GiB by default),
# suspended and resumed ROUNDS times (2) through nvq, nvqd at log_level =
# debug with each of its log lines stamped as it was written
# (NVQD_STAMP).  For each switch it prints nvqd's lines in seconds after
# the nvq command began: the request, the lock taken back and each
# process's acknowledgement, the hooks' moves and each process's answer,
# nvq-ckpt's start and its steps' times, and the switch's end; after a
# resume, the job's own time of its first step.  It checks that each
# switch happened and that the job's data came through intact; then that a
# second job, suspended and cancelled, leaves no nvq-ckpt waiting.
# Run as root from anywhere on a machine with an NVIDIA GPU (driver >= 570).
cd "$(dirname "$0")/../.." || exit 1
B=${1:-build}; G=${2:-30}; ROUNDS=${3:-2}
. tests/gpu/lib.sh
PY=${PYTHON:-python3}
STAGING=${STAGING:-$((G + 10))G}
NVQD_STAMP=1 gpu_nvqd trace "log_level = debug" "[scheduler]" "preempt = off"

# nvqd's log lines stamped from A to B, as seconds after A
since() {
	awk -v a="$1" -v b="$2" '$1 + 0 >= a && $1 + 0 <= b {
		printf "    +%.3f  %s\n", $1 - a, substr($0, index($0, " ") + 1) }' "$T/nvqd.log"
}

echo "GPU: $(nvidia-smi --query-gpu=name,driver_version --format=csv,noheader -i 0), staging = $STAGING"
id=$(NVQ_DEBUG=1 "$NVQ" submit --parsable -m "$((G + 6))G" -o "$T/job.out" -e "$T/job.out" \
    $PY "$PWD/tests/gpu/holder.py" "$G" $((ROUNDS * 6 + 6)) "$T/job")
wait_progress "$T/job" 5 || { echo "FAIL - the job never ran"; cat "$T/job.out"; exit 1; }
for _ in $(seq 600); do grep -q "staging ready" "$T/job.out" && break; sleep 0.1; done
echo "job $id: $(grep -m1 -h 'staging ready' "$T/job.out" || echo 'the hook made no staging in 60 s')"
for r in $(seq "$ROUNDS"); do
	t0=$(now); out=$("$NVQ" suspend "$id" 2>&1); t1=$(now)
	check "round $r: $out" [ "$out" = "job $id suspended" ]
	echo "  round $r: nvq suspend returned after $(el "$t0" "$t1") s:"
	sleep 0.2	# the log's last lines
	since "$t0" "$t1"
	sleep 1
	c=$(count "$T/job")
	t2=$(now); "$NVQ" resume "$id" > /dev/null; t3=$(now)
	wait_progress "$T/job" "$c"
	t4=$(tail -1 "$T/job.resumed" 2> /dev/null)
	check "round $r: the job ran again after nvq resume" [ -n "$t4" ]
	echo "  round $r: nvq resume returned after $(el "$t2" "$t3") s, the job's first step" \
	    "after $(el "$t2" "${t4:-$t2}") s:"
	since "$t2" "${t4:-$t3}"
	sleep 2
done
"$NVQ" wait "$id"; rc=$?
check "the job's data intact after $ROUNDS round trip(s) ($(tail -1 "$T/job.out"))" [ "$rc" = 0 ]
echo "recorded: $(sqlite3 "$T/nvq.db" "SELECT group_concat(kind || ' ' || printf('%.3f', seconds) ||
    's (driver ' || printf('%.3f', driver_seconds) || 's, hook ' ||
    printf('%.3f', coalesce(hook_seconds, 0)) || 's for ' || (coalesce(hook_bytes, 0) >> 20) ||
    ' MiB)', '; ') FROM switches WHERE job_id = $id")"
# a suspended job cancelled: its nvq-ckpt made ready for the resume ends too
id=$("$NVQ" submit --parsable -m 7G -o "$T/c.out" -e "$T/c.out" $PY "$PWD/tests/gpu/holder.py" 1 60 "$T/c")
wait_progress "$T/c" 5 || { echo "FAIL - the second job never ran"; cat "$T/c.out"; exit 1; }
out=$("$NVQ" suspend "$id" 2>&1)
check "a second job suspended: $out" [ "$out" = "job $id suspended" ]
check "one nvq-ckpt waits for its resume" [ "$(pgrep -fc "nvq-ckpt .* wait$")" = 1 ]
"$NVQ" cancel "$id" > /dev/null
for _ in $(seq 100); do [ "$(sqlite3 "$T/nvq.db" "SELECT state FROM jobs WHERE id = $id")" = CANCELLED ] && break; sleep 0.1; done
sleep 0.5
check "cancelled while suspended, and no nvq-ckpt left waiting" \
    [ "$(sqlite3 "$T/nvq.db" "SELECT state FROM jobs WHERE id = $id")/$(pgrep -fc "nvq-ckpt .* wait$")" = CANCELLED/0 ]
echo "$fails failed"
[ "$fails" = 0 ]
