#!/bin/bash
# timeslice_check.sh [BUILD] fixed|auto|serial: three PyTorch jobs of 45 GiB
# (no two fit together on an 80 GB GPU), WORK seconds of matmuls each (40).
#   fixed:  [scheduler] mode = timeslice, turn = TURN (20s): they take turns.
#   auto:   mode = timeslice, turn = auto (switch_overhead 5%).
#   serial: mode = auto: one after another, the baseline.
# Prints the makespan, each job's turns and the time lost to switching; every
# job checks its data bit for bit after each turn and at its end.
cd "$(dirname "$0")/../.." || exit 1
B=${1:-build}; how=${2:-fixed}
. tests/gpu/lib.sh
PY=${PYTHON:-python3}
GIB=${GIB:-45}; WORK=${WORK:-40}; TURN=${TURN:-20s}
case $how in
fixed)	gpu_nvqd ts "[scheduler]" "mode = timeslice" "turn = $TURN" "preempt = off" ;;
auto)	gpu_nvqd ts "[scheduler]" "mode = timeslice" "turn = auto" "preempt = off" ;;
serial)	gpu_nvqd ts "[scheduler]" "mode = auto" "preempt = off" ;;
*)	echo "usage: timeslice_check.sh BUILD fixed|auto|serial"; exit 2 ;;
esac
t0=$(now)
ids=()
for k in a b c; do
	ids+=("$("$NVQ" submit --parsable -m "$((GIB + 5))G" -o "$T/$k.out" -e "$T/$k.out" \
	    $PY "$PWD/tests/gpu/holder.py" "$GIB" "$WORK" "$T/$k")")
done
rc=0
for id in "${ids[@]}"; do "$NVQ" wait "$id" || rc=1; done
t1=$(now)
for k in a b c; do
	check "job $k: data intact ($(grep -c 'data ok' "$T/$k.out") checks after its turns; $(tail -1 "$T/$k.out"))" \
	    grep -q "final check ok" "$T/$k.out"
done
check "all three completed" [ "$rc" = 0 ]
echo "$how: makespan $(el "$t0" "$t1") s for 3 x $WORK s of work"
echo "turns: $(sqlite3 "$T/nvq.db" "SELECT count(*) FROM switches WHERE why = 'timeslice' AND kind = 'suspend' AND ok")" \
    "suspends, switching $(sqlite3 "$T/nvq.db" "SELECT printf('%.1f', ifnull(sum(seconds), 0)) FROM switches WHERE ok") s" \
    "(suspends $(sqlite3 "$T/nvq.db" "SELECT printf('%.1f', ifnull(sum(seconds), 0)) FROM switches WHERE ok AND kind = 'suspend'") s)," \
    "suspended time per job: $(sqlite3 "$T/nvq.db" "SELECT group_concat(printf('%.1f', suspended_time), ' ') FROM jobs")"
echo "runs: $(sqlite3 "$T/nvq.db" "SELECT group_concat(id || ' ' || printf('%.1f', started_at - (SELECT min(submitted_at) FROM jobs)) || '..' || printf('%.1f', ended_at - (SELECT min(submitted_at) FROM jobs)), '; ') FROM jobs")"
echo "each switch (job kind seconds: driver + hook, GiB, ok): $(sqlite3 "$T/nvq.db" "SELECT group_concat(job_id || ' ' ||
    kind || ' ' || printf('%.1f', seconds) || ': ' || printf('%.1f', coalesce(driver_seconds, 0)) || ' + ' ||
    printf('%.1f', coalesce(hook_seconds, 0)) || ', ' || (coalesce(bytes, 0) >> 30) || ', ' || ok, '; ') FROM switches")"
echo "switches refused: $(grep -c 'cannot give way' "$T/nvqd.log")$(grep -m1 'cannot give way' "$T/nvqd.log" | sed 's/^.*: /, e.g. /')"
echo "$fails failed"
[ "$fails" = 0 ]
