#!/bin/bash
# preempt_check.sh [BUILD]: a low-priority PyTorch job holding 50 GiB is
# preempted (suspended) by a high-priority 50 GiB job, which completes; the
# low one then resumes on its own and completes, its data checked bit for
# bit after the resume and at its end.  Two 50 GiB jobs do not fit together
# on an 80 GB GPU.  Run as root on a machine with an 80 GB NVIDIA GPU.
cd "$(dirname "$0")/../.." || exit 1
B=${1:-build}
. tests/gpu/lib.sh
PY=${PYTHON:-python3}
GIB=${GIB:-50}
state() { sqlite3 "$T/nvq.db" "SELECT state FROM jobs WHERE id = $1"; }
wait_state() {	# ID STATE: 300 s at most
	local i
	for i in $(seq 3000); do [ "$(state "$1")" = "$2" ] && return 0; sleep 0.1; done
	return 1
}

gpu_nvqd preempt "[scheduler]" "preempt = suspend" "preempt_min_runtime = 0s"
low=$("$NVQ" submit --parsable -p 0 -m "$((GIB + 5))G" -o "$T/low.out" -e "$T/low.out" \
    $PY "$PWD/tests/gpu/holder.py" "$GIB" 40 "$T/low")
for i in $(seq 3000); do [ "$(count "$T/low")" -gt 5 ] && break; sleep 0.1; done
t0=$(now)
high=$("$NVQ" submit --parsable -p 10 -m "$((GIB + 5))G" -o "$T/high.out" -e "$T/high.out" \
    $PY "$PWD/tests/gpu/holder.py" "$GIB" 20 "$T/high")
check "the low job is suspended" wait_state "$low" SUSPENDED
t1=$(now)
check "the high job runs" wait_state "$high" RUNNING
t2=$(now)
"$NVQ" wait "$high"; rc=$?; t3=$(now)
check "the high job completes with its data intact ($(tail -1 "$T/high.out"))" [ "$rc" = 0 ]
check "the low job resumes on its own" wait_state "$low" RUNNING
t4=$(now)
"$NVQ" wait "$low"; rc=$?; t5=$(now)
check "the low job completes with its data intact ($(grep -c 'data ok' "$T/low.out") checks after gaps; $(tail -1 "$T/low.out"))" [ "$rc" = 0 ]
echo "high submitted -> low suspended $(el "$t0" "$t1") s -> high running $(el "$t0" "$t2") s;" \
    "high done at $(el "$t0" "$t3") s; low running again $(el "$t3" "$t4") s after; low done at $(el "$t0" "$t5") s"
echo "switches: $(sqlite3 "$T/nvq.db" "SELECT group_concat(job_id || ' ' || kind || ' ' || why ||
    ' by ' || ifnull(by_job, '-') || ' ' || printf('%.2f', seconds) || 's ' || (bytes >> 20) || ' MiB', '; ')
    FROM switches")"
echo "$fails failed"
[ "$fails" = 0 ]
