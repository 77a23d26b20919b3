#!/bin/bash
# suspend_check.sh [BUILD] [GIB...]: suspend and resume of PyTorch jobs
# holding 1, 8 and 30 GiB, each timed through nvq and, beside it, through
# the driver's checkpoint API alone (nvq-ckpt on a process outside nvq).
# Every job checks its data bit for bit after the resume and at its end.
# Through nvq the hook moves the job's large allocations itself ([scheduler]
# offload, on by default) and the driver's checkpoint the rest.
# Run as root from anywhere on a machine with an NVIDIA GPU (driver >= 570).
# STAGING=SIZE sets [scheduler] staging (the hook makes its staging ahead
# and keeps it): the check waits until the hook says it is ready, then
# suspends and resumes each job ROUNDS times (2 by default with STAGING).
# RAW=0 leaves out the driver-only runs.
cd "$(dirname "$0")/../.." || exit 1
B=${1:-build}; shift
SIZES=${*:-1 8 30}
. tests/gpu/lib.sh
PY=${PYTHON:-python3}

gpu_used() { nvidia-smi --query-gpu=memory.used --format=csv,noheader,nounits -i 0; }
ROUNDS=${ROUNDS:-$([ -n "${STAGING:-}" ] && echo 2 || echo 1)}
gpu_nvqd suspend "[scheduler]" "preempt = off"
echo "GPU: $(nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader -i 0)"
for g in $SIZES; do
	# the driver alone, on a process outside nvq
	if [ "${RAW:-1}" = 1 ]; then
	$PY tests/gpu/holder.py "$g" 12 "$T/raw$g" > "$T/raw$g.out" 2>&1 &
	pid=$!
	wait_progress "$T/raw$g" 5 "$pid" || { echo "FAIL - raw $g GiB job never ran"; cat "$T/raw$g.out"; fails=$((fails + 1)); continue; }
	base=$(gpu_used)
	t0=$(now); "$PWD/$B/nvq-ckpt" suspend "$pid" > "$T/raw$g.ckpt"; t1=$(now)
	free_raw=$(el "$t0" "$t1"); used_raw=$(gpu_used)
	sleep 1
	c=$(count "$T/raw$g")
	t2=$(now); "$PWD/$B/nvq-ckpt" resume "$pid" >> "$T/raw$g.ckpt"; t3=$(now)
	wait_progress "$T/raw$g" "$c" "$pid"; t4=$(now)
	t5=$(tail -1 "$T/raw$g.resumed" 2> /dev/null)
	wait "$pid"; rc=$?
	echo "raw $g GiB: suspend $free_raw s (GPU $base -> $used_raw MiB), resume $(el "$t2" "$t3") s," \
	    "running again after $(el "$t2" "${t5:-$t4}") s (the job's clock); driver steps:" \
	    "$(tr '\n' ' ' < "$T/raw$g.ckpt")"
	check "raw $g GiB: data intact after the round trip ($(tail -1 "$T/raw$g.out"))" [ "$rc" = 0 ]
	fi

	# through nvq
	id=$(NVQ_DEBUG=1 "$NVQ" submit --parsable -m "$((g + 6))G" -o "$T/nvq$g.out" -e "$T/nvq$g.out" \
	    $PY "$PWD/tests/gpu/holder.py" "$g" $((ROUNDS * 6 + 6)) "$T/nvq$g")
	wait_progress "$T/nvq$g" 5 || { echo "FAIL - nvq $g GiB job never ran"; cat "$T/nvq$g.out"; fails=$((fails + 1)); continue; }
	if [ -n "${STAGING:-}" ]; then
		for _ in $(seq 600); do grep -q "staging ready" "$T/nvq$g.out" && break; sleep 0.1; done
		echo "nvq $g GiB: $(grep -m1 -h 'staging ready' "$T/nvq$g.out")"
	fi
	for r in $(seq "$ROUNDS"); do
		base=$(gpu_used)
		t0=$(now); out=$("$NVQ" suspend "$id" 2>&1); t1=$(now)
		used=$(gpu_used)
		check "nvq $g GiB, round $r: $out" [ "$out" = "job $id suspended" ]
		check "nvq $g GiB, round $r: SUSPENDED and its GPU memory freed ($base -> $used MiB)" \
		    [ "$(sqlite3 "$T/nvq.db" "SELECT state FROM jobs WHERE id = $id")" = SUSPENDED ]
		sleep 1
		c=$(count "$T/nvq$g")
		t2=$(now); "$NVQ" resume "$id" > /dev/null
		wait_progress "$T/nvq$g" "$c"; t4=$(now)
		# the job's own time of its first step after the gap; the check's
		# polling (every 0.1 s, and the shell's) only bounds it
		t3=$(tail -1 "$T/nvq$g.resumed" 2> /dev/null)
		echo "nvq $g GiB, round $r: suspend $(el "$t0" "$t1") s until the GPU was free, running again" \
		    "$(el "$t2" "${t3:-$t4}") s after nvq resume (by the job's clock; $(el "$t2" "$t4") s by" \
		    "the check's polling)"
		sleep 2
	done
	"$NVQ" wait "$id"; rc=$?
	echo "nvq $g GiB: recorded:" \
	    "$(sqlite3 "$T/nvq.db" "SELECT group_concat(kind || ' ' || printf('%.2f', seconds) || 's (driver ' ||
	    printf('%.2f', driver_seconds) || 's, hook ' || printf('%.2f', coalesce(hook_seconds, 0)) ||
	    's for ' || (coalesce(hook_bytes, 0) >> 20) || ' MiB) ' || (bytes >> 20) || ' MiB', '; ')
	    FROM switches WHERE job_id = $id")" "; hook: $(grep -h 'offload' "$T/nvq$g.out" | tr '\n' ' ')"
	check "nvq $g GiB: data intact after $ROUNDS round trip(s) ($(tail -1 "$T/nvq$g.out"))" [ "$rc" = 0 ]
	check "nvq $g GiB: suspended time recorded" [ "$(sqlite3 "$T/nvq.db" \
	    "SELECT suspended_time > 1 FROM jobs WHERE id = $id")" = 1 ]
done
echo "$fails failed"
[ "$fails" = 0 ]
