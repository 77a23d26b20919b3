# t_preempt.sh: preemption and timeslice turns.  Sourced by run.sh (helpers
# in lib.sh).

t_preempt() {	# a higher job suspends a lower one; two arriving together do not thrash
	[ -x "$FAKE_JOB" ] || { fail "build tests/fake_job first"; return; }
	ckpt_config "[scheduler]" "preempt = suspend" "preempt_min_runtime = 0s"
	start_nvqd || return
	local low h1 h2
	low=$(fsubmit -m 50G -p 0 "$FAKE_JOB" launch 60 "$T/low")
	wait_count "$T/low" || return
	wait_field "$low" hook_pids '^[0-9]+$'
	h1=$(fsubmit -m 50G -p 10 "$FAKE_JOB" launch 2 "$T/h1")
	h2=$(fsubmit -m 50G -p 10 "$FAKE_JOB" launch 2 "$T/h2")
	wait_state "$low" SUSPENDED
	timeout 1 "$NVQ_BIN" -s "$T/sock" wait "$low"
	expect_eq "nvq wait waits for a suspended job" "$?" 124
	wait_state "$h1" RUNNING
	expect_eq "the second waits for the first" "$(state "$h2")" PENDING
	wait_state "$h1" COMPLETED
	wait_state "$h2" COMPLETED
	wait_state "$low" RUNNING
	expect_eq "suspended once, resumed once" "$(switches "$low")" \
	    "suspend|preempt|1 resume|preempt|1 "
	expect_eq "for the first" "$(sqlite3 "$T/nvq.db" "SELECT by_job FROM switches
	    WHERE job_id = $low AND kind = 'suspend'")" "$h1"
	expect_eq "no high job was suspended" "$(sqlite3 "$T/nvq.db" "SELECT count(*) FROM switches
	    WHERE job_id IN ($h1, $h2)")" 0
	expect_eq "the low job goes on" "$(growing "$T/low" 0.5)" grows
	expect_match "the event says why" "$(nvq show "$low")" "SUSPENDED +preempted by job $h1"
	nvq cancel "$low" > /dev/null
	wait_state "$low" CANCELLED 40
	# preempt = off: the high job waits
	stop_nvqd
	ckpt_config "[scheduler]" "preempt = off"
	start_nvqd || return
	low=$(fsubmit -m 50G -p 0 "$FAKE_JOB" launch 3 "$T/low2")
	wait_count "$T/low2" || return
	h1=$(fsubmit -m 50G -p 10 "$FAKE_JOB" launch 1 "$T/h3")
	sleep 1
	expect_eq "off: nobody is suspended" "$(state "$low")$(state "$h1")" RUNNINGPENDING
	wait_state "$h1" COMPLETED
}

t_preempt_min_runtime() {	# a job that just started is not preempted before preempt_min_runtime
	[ -x "$FAKE_JOB" ] || { fail "build tests/fake_job first"; return; }
	ckpt_config "[scheduler]" "preempt = suspend" "preempt_min_runtime = 3s"
	start_nvqd || return
	local low h t0 t1
	low=$(fsubmit -m 50G "$FAKE_JOB" launch 30 "$T/low")
	wait_count "$T/low" || return
	t0=$(date +%s.%N)
	h=$(fsubmit -m 50G -p 10 "$FAKE_JOB" launch 1 "$T/h")
	sleep 1.5
	expect_eq "protected for now" "$(state "$low")" RUNNING
	wait_state "$low" SUSPENDED 10
	t1=$(date +%s.%N)
	expect_eq "after about 3s of its run" "$(awk -v a="$t0" -v b="$t1" 'BEGIN { print (b - a > 1.5 && b - a < 6) }')" 1
	wait_state "$h" COMPLETED
	nvq cancel "$low" > /dev/null
}

t_preempt_requeue() {	# preempt = requeue stops --requeue jobs and queues them again
	[ -x "$FAKE_JOB" ] || { fail "build tests/fake_job first"; return; }
	ckpt_config "[scheduler]" "preempt = requeue" "preempt_min_runtime = 0s" "kill_grace = 2s"
	start_nvqd || return
	local low q h
	low=$(fsubmit -m 30G "$FAKE_JOB" launch 30 "$T/low")
	q=$(fsubmit --requeue -m 30G "$FAKE_JOB" launch 3 "$T/q")
	wait_count "$T/low" && wait_count "$T/q" || return
	h=$(fsubmit -m 40G -p 10 "$FAKE_JOB" launch 1 "$T/h")
	wait_state "$h" RUNNING 10
	expect_eq "the job without --requeue runs on" "$(state "$low")" RUNNING
	wait_state "$h" COMPLETED
	wait_state "$q" COMPLETED 20
	expect_eq "stopped once and run again" "$(sqlite3 "$T/nvq.db" "SELECT restarts FROM jobs
	    WHERE id = $q")" 1
	expect_match "its events" "$(nvq show "$q")" "PREEMPTED +preempted by job $h.*PENDING +requeued"
	nvq cancel "$low" > /dev/null
}

t_timeslice_turns() {	# jobs that do not fit together take turns, each making progress
	[ -x "$FAKE_JOB" ] || { fail "build tests/fake_job first"; return; }
	ckpt_config "[scheduler]" "mode = timeslice" "turn = 1s" "preempt = off"
	start_nvqd || return
	local a b c i both=0 ga gb gc n
	a=$(fsubmit -m 45G "$FAKE_JOB" launch 8 "$T/a")
	b=$(fsubmit -m 45G "$FAKE_JOB" launch 8 "$T/b")
	c=$(fsubmit -m 45G "$FAKE_JOB" launch 8 "$T/c")
	expect_match "gpus shows the turn" "$(nvq gpus --json)" '"mode":"timeslice"'
	sleep 5
	expect_match "all three made progress" "$(count "$T/a") $(count "$T/b") $(count "$T/c")" \
	    "^[1-9][0-9]+ [1-9][0-9]+ [1-9][0-9]+$"
	# never two at once: sample who launches
	for i in $(seq 10); do
		ga=$(count "$T/a"); gb=$(count "$T/b"); gc=$(count "$T/c")
		sleep 0.1
		n=0
		[ "$(count "$T/a")" -gt "$ga" ] && n=$((n + 1))
		[ "$(count "$T/b")" -gt "$gb" ] && n=$((n + 1))
		[ "$(count "$T/c")" -gt "$gc" ] && n=$((n + 1))
		[ $n -ge 2 ] && both=$((both + 1))
	done
	[ "$both" -le 3 ] || fail "two jobs launched at once in $both of 10 samples"
	wait_state "$a" COMPLETED 20; wait_state "$b" COMPLETED 20; wait_state "$c" COMPLETED 20
	n=$(sqlite3 "$T/nvq.db" "SELECT count(*) FROM switches WHERE why = 'timeslice' AND ok = 1")
	expect_eq "several turns" "$(( n >= 4 ))" 1
	expect_eq "each was suspended at some time" "$(sqlite3 "$T/nvq.db" "SELECT count(DISTINCT job_id)
	    FROM switches WHERE why = 'timeslice' AND kind = 'suspend'")" 3
}

t_preempt_unsuspendable() {	# a job that cannot be suspended gets its --signal, then is requeued (--requeue) or cancelled
	[ -x "$FAKE_JOB" ] || { fail "build tests/fake_job first"; return; }
	ckpt_config "[scheduler]" "preempt = suspend" "preempt_min_runtime = 0s" "kill_grace = 3s"
	start_nvqd || return
	local q h low h2
	# a process maps memory of a process that has ended (CUDA IPC): it cannot be suspended
	q=$(fsubmit --requeue --signal usr2 -m 50G sh -c "trap 'echo got USR2 >> $T/sig' USR2
	    $FAKE_JOB ipc-orphan 8388608 30; sleep 30 & wait; wait")
	wait_field "$q" hook_pids '^[0-9]+,[0-9]+$' || return
	wait_field "$q" hook_pids '^[0-9]+$' || return	# the exporter ended
	sleep 0.5	# the report that says what it maps
	h=$(fsubmit -m 50G -p 10 "$FAKE_JOB" launch 1 "$T/h")
	wait_state "$h" COMPLETED 15
	expect_eq "it got its --signal, once" "$(cat "$T/sig" 2> /dev/null)" "got USR2"
	expect_match "it was stopped and queued again, and says why" "$(nvq show "$q")" \
	    "PREEMPTED +preempted by job $h \\(priority 10\\); requeued: it cannot be suspended \\(it shares GPU memory\\).*PENDING +requeued"
	expect_eq "nothing was suspended" "$(switches "$q")" ""
	wait_state "$q" RUNNING 10
	nvq cancel "$q" > /dev/null
	wait_state "$q" CANCELLED 10
	# without --requeue: stopped the same way, then cancelled, with the reason
	low=$(fsubmit --signal usr2 -m 50G sh -c "trap 'echo got USR2 >> $T/sig2' USR2
	    $FAKE_JOB ipc-orphan 8388608 30; sleep 30 & wait; wait")
	wait_field "$low" hook_pids '^[0-9]+,[0-9]+$' || return
	wait_field "$low" hook_pids '^[0-9]+$' || return
	sleep 0.5
	expect_eq "nvq suspend refuses, and says what stops it instead" "$(nvq suspend "$low" 2>&1)" \
	    "nvq: cannot suspend job $low: job $low's processes share 8M of GPU memory nvq cannot \
move (the driver's own CUDA IPC handles: allocations under 2 MiB, or all with offload off; \
cuMemExportToShareableHandle while [scheduler] offload is off; or memory of a process that has \
ended): it cannot be suspended and runs on untouched; \`nvq requeue $low\` stops it and queues \
it again, and a higher-priority job that needs its memory stops it with its --signal and \
cancels it (no --requeue)"
	expect_eq "it runs on" "$(state "$low")" RUNNING
	h2=$(fsubmit -m 50G -p 10 "$FAKE_JOB" launch 1 "$T/h2")
	wait_state "$low" CANCELLED 15
	wait_state "$h2" COMPLETED 15
	expect_eq "it got its --signal, once" "$(cat "$T/sig2" 2> /dev/null)" "got USR2"
	expect_match "and says why" "$(nvq show "$low")" \
	    "CANCELLED +preempted by job $h2 \\(priority 10\\); cancelled: it cannot be suspended \\(it shares GPU memory\\) and has no --requeue"
	expect_eq "nothing was suspended" "$(switches "$low")" ""
}

t_preempt_suspend_fails() {	# a job whose suspend fails is stopped instead, not passed over
	[ -x "$FAKE_JOB" ] || { fail "build tests/fake_job first"; return; }
	ckpt_config "[scheduler]" "preempt = suspend" "preempt_min_runtime = 0s" "kill_grace = 2s"
	start_nvqd || return
	local low h
	echo checkpoint > "$FAKE_CKPT_DIR/fail"	# the driver's checkpoint of it fails
	low=$(fsubmit -m 50G "$FAKE_JOB" launch 60 "$T/low")
	wait_count "$T/low" || return
	wait_field "$low" hook_pids '^[0-9]+$' || return
	h=$(fsubmit -m 50G -p 10 "$FAKE_JOB" launch 1 "$T/h")
	wait_state "$low" CANCELLED 15
	wait_state "$h" COMPLETED 15
	expect_match "its events say why" "$(nvq show "$low")" \
	    "CANCELLED +preempted by job $h \\(priority 10\\); cancelled: it cannot be suspended \\(its suspend failed: checkpoint [0-9]+ 999[^)]*\\) and has no --requeue"
	expect_eq "the suspend was tried once, and failed" "$(switches "$low")" "suspend|preempt|0 "
	[ "$(state "$low")" = RUNNING ] && nvq cancel "$low" > /dev/null
}
