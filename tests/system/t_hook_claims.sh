# t_hook_claims.sh: what nvqd believes of a job's hooked processes.  A
# session is the process that connected, not its pid (a pid may go to
# another user's process); a report is a claim, counted as at most what the
# job may hold.  Sourced by run.sh.

build_hookpeer || exit 1

hc_can_steal() {	# root, two users, and a writable ns_last_pid
	[ "$(id -u)" = 0 ] && command -v setpriv > /dev/null && command -v useradd > /dev/null &&
	    [ -w /proc/sys/kernel/ns_last_pid ] && make_users
}

# steal_pid PID: starts nvqtb's `sleep 3190` with pid PID (sets STOLEN), or fails.
steal_pid() {
	local want=$1 gid i
	gid=$(id -g nvqtb)
	STOLEN=""
	for i in $(seq 40); do
		echo $((want - 1)) > /proc/sys/kernel/ns_last_pid
		setpriv --reuid=nvqtb --regid="$gid" --init-groups -- sleep 3190 &
		if [ "$!" = "$want" ]; then
			STOLEN=$!
			sleep 0.2	# setpriv has become sleep
			return 0
		fi
		kill "$!" 2> /dev/null; wait "$!" 2> /dev/null
	done
	return 1
}

# hc_handoff_job [submit options]: nvqta's job whose child says hello, hands
# its socket to its parent and exits; sets JOB and CHILD.
hc_handoff_job() {
	local i
	chmod 755 "$T"; mkdir -m 1777 "$T/pub"
	JOB=$(as_user nvqta "$NVQ_BIN" -s "$T/sock" submit --parsable "$@" \
	    "$HOOKPEER" handoff "$T/pub/child" "$T/pub/eof")
	for i in $(seq 100); do [ -s "$T/pub/child" ] && break; sleep 0.05; done
	CHILD=$(cat "$T/pub/child" 2> /dev/null)
	[ -n "$CHILD" ] || { fail "the job's child never handed its socket over"; return 1; }
}

t_hook_claims_pid_reuse() {	# a hold never stops another user's process that got a job's old pid
	hc_can_steal || { skip "needs root, setpriv, useradd and ns_last_pid"; return; }
	write_config "[scheduler]" "revoke_timeout = 1s"
	start_nvqd || return
	local out
	hc_handoff_job -m 1G || return
	steal_pid "$CHILD" || { skip "could not start a process with pid $CHILD"; return; }
	expect_eq "nvqtb's sleep has the child's old pid" "$(stat -c %U /proc/"$STOLEN")" nvqtb
	out=$(nvq hold "$JOB")
	sleep 2
	expect_match "nvqtb's process is not stopped" "$(awk '{print $3}' /proc/"$STOLEN"/stat)" "^[RSD]$"
	expect_eq "nvqd closed the link of the process that ended" "$(cat "$T/pub/eof" 2> /dev/null)" eof
	expect_eq "no session is left for it" "$(field "$JOB" hook_pids)" ""
	expect_match "hold had nobody to stop" "$out" "job $JOB held: its GPU work has drained"
	nvq release "$JOB" > /dev/null
	kill -9 "$STOLEN"; wait "$STOLEN" 2> /dev/null
	nvq cancel "$JOB" > /dev/null
}

t_hook_claims_ckpt() {	# nvq-ckpt is never given a pid that is no longer the job's
	hc_can_steal || { skip "needs root, setpriv, useradd and ns_last_pid"; return; }
	ckpt_config "[scheduler]" "revoke_timeout = 1s" "offload = off"
	chmod 755 "$FAKE_CKPT_DIR"
	start_nvqd || return
	local out pids rc
	hc_handoff_job -m 1G || return
	steal_pid "$CHILD" || { skip "could not start a process with pid $CHILD"; return; }
	out=$(timeout 20 "$NVQ_BIN" -s "$T/sock" suspend "$JOB" 2>&1)
	expect_eq "suspended" "$out" "job $JOB suspended"
	expect_eq "nvqtb's process was not checkpointed" "$(ckpt_state "$STOLEN")" 0
	expect_match "nor stopped" "$(awk '{print $3}' /proc/"$STOLEN"/stat)" "^[RSD]$"
	pids=$(sqlite3 "$T/nvq.db" "SELECT coalesce(pids, '') FROM switches WHERE job_id = $JOB")
	[[ ",$pids," =~ [,?]$STOLEN[,@] ]] && fail "nvq-ckpt was given pid $STOLEN ($pids)"
	nvq resume "$JOB" > /dev/null; wait_state "$JOB" RUNNING
	# nvq-ckpt itself: a pid whose start time is not the one nvqd checked is left alone
	echo 2 > "$FAKE_CKPT_DIR/$STOLEN"
	out=$("$ROOT/$BUILD/nvq-ckpt" -l "$FAKE_LIB/libcuda.so.1" resume "$STOLEN@1" 2>&1); rc=$?
	expect_eq "nvq-ckpt ends well" "$rc" 0
	expect_match "and says why it left it" "$out" "skip $STOLEN 0 not the job's process"
	expect_eq "the process was not restored" "$(ckpt_state "$STOLEN")" 2
	out=$("$ROOT/$BUILD/nvq-ckpt" -l "$FAKE_LIB/libcuda.so.1" resume \
	    "$STOLEN@$(awk '{ sub(/.*\) /, ""); print $20 }' /proc/"$STOLEN"/stat)" 2>&1)
	expect_eq "the same process is" "$(ckpt_state "$STOLEN")" 0
	kill -9 "$STOLEN"; wait "$STOLEN" 2> /dev/null
	nvq cancel "$JOB" > /dev/null
}

t_hook_claims_report() {	# a report of 2^62 bytes counts as at most the job's -m
	[ -x "$FAKE_JOB" ] || { fail "build tests/fake_job first"; return; }
	ckpt_config
	start_nvqd || return
	local a out
	a=$(fsubmit -m 1G "$HOOKPEER" claim $((1 << 62)) 60)
	wait_field "$a" hook_pids '^[0-9]+$' || return
	wait_field "$a" gpu_used '^1073741824$'
	expect_match "nvq gpus shows no more" "$(nvq gpus)" " 1G +"
	expect_match "the claim is logged" "$(cat "$T/nvqd.log")" \
	    "job $a: process [0-9]+ reports 4611686018427387904 bytes used .* counted as 1073741824"
	out=$(nvq suspend "$a" 2>&1)
	expect_eq "nvq suspend is not refused for the claim" "$out" "job $a suspended"
	nvq resume "$a" > /dev/null; wait_state "$a" RUNNING
	nvq cancel "$a" > /dev/null
}

t_hook_claims_preempt() {	# a job that claims 2^62 bytes still gives way to another user's higher job
	[ "$(id -u)" = 0 ] && command -v setpriv > /dev/null && make_users ||
	    { skip "needs root, setpriv and useradd"; return; }
	# another user's job preempts only by a class that preempts its class (issue 42)
	ckpt_config "[scheduler]" "preempt = suspend" "preempt_min_runtime = 0s" \
	    "[limits]" "max_priority = 10" "[qos high]" "preempts = normal"
	chmod 755 "$T" "$FAKE_CKPT_DIR"
	start_nvqd || return
	local low high v
	low=$(as_user nvqta "$NVQ_BIN" -s "$T/sock" submit --parsable -m 4G -p 0 \
	    "$HOOKPEER" claim $((1 << 62)) 60)
	wait_field "$low" hook_pids '^[0-9]+$' || return
	wait_field "$low" gpu_used '^[0-9]+$'
	high=$(as_user nvqtb "$NVQ_BIN" -s "$T/sock" submit --parsable -m 75G -p 10 --qos high sleep 1)
	wait_state "$low" SUSPENDED 10
	wait_state "$high" COMPLETED 10
	wait_state "$low" RUNNING 10
	v=$(field "$low" gpu_used)
	expect_eq "nvq show: at most its 4G" "$(( ${v:-0} <= 4294967296 ))" 1
	expect_match "nvq gpus: at most 4G" "$(nvq gpus --json)" '"queue_used":(4294967296|[0-9]{1,9}),'
	nvq cancel "$low" > /dev/null
}

t_hook_claims_ipc() {	# another user's process cannot open a job's CUDA IPC handle
	[ "$(id -u)" = 0 ] && command -v setpriv > /dev/null && make_users ||
	    { skip "needs root, setpriv and useradd"; return; }
	write_config
	chmod 755 "$T"
	start_nvqd || return
	local a h i out
	a=$(as_user nvqta env LD_LIBRARY_PATH="$FAKE_LIB" "$NVQ_BIN" -s "$T/sock" submit \
	    --parsable -m 1G "$FAKE_JOB" ipc 4194304 4)
	for i in $(seq 100); do
		h=$(nvq log "$a" 2> /dev/null | awk '/^handle/ {print $2}')
		[ -n "$h" ] && break
		sleep 0.05
	done
	[ -n "$h" ] || { fail "the job printed no handle"; return; }
	out=$(as_user nvqtb env LD_PRELOAD="$ROOT/$BUILD/libnvq-hook.so" NVQ_HOOK_OFFLOAD=1 \
	    NVQ_DEBUG=1 LD_LIBRARY_PATH="$FAKE_LIB" "$FAKE_JOB" ipc-child "$h" 4194304 2>&1)
	expect_match "nvqtb's process is refused the job's memory" "$out" \
	    "cuIpcOpenMemHandle: CUDA error 400"
	expect_match "why" "$out" "cannot open a handle: taking descriptor [0-9]+ of process [0-9]+: Operation not permitted"
	nvq wait "$a"
	expect_match "the job's own processes shared it" "$(nvq log "$a" | tr '\n' ' ')" \
	    "child read ok ipc ok 4194304 $"
}

t_hook_claims_stalled() {	# an acknowledgement that waited in nvqd's socket while nvqd stood still stops nothing
	write_config "[scheduler]" "revoke_timeout = 2s"
	start_nvqd || return
	local a pid hp i
	mkdir "$T/gate"
	a=$(fsubmit -m 1G "$HOOKPEER" gate 1048576 60 "$T/gate")
	wait_field "$a" hook_pids '^[0-9]+$' || return
	pid=$(field "$a" hook_pids)
	nvq hold "$a" > "$T/hold.out" 2>&1 &
	hp=$!
	for i in $(seq 250); do [ -e "$T/gate/asked" ] && break; sleep 0.02; done
	[ -e "$T/gate/asked" ] || { fail "the lock was never asked back"; return; }
	# nvqd stands still past revoke_timeout; the process answers at once
	kill -STOP "$NVQD_PID"
	touch "$T/gate/go"
	sleep 4
	kill -CONT "$NVQD_PID"
	wait "$hp"
	expect_eq "nvq hold saw the drain" "$(cat "$T/hold.out")" \
	    "job $a held: its GPU work has drained"
	expect_match "the process was not stopped" "$(awk '{print $3}' /proc/"$pid"/stat)" "^[RSD]$"
	expect_eq "nvqd stopped nothing" "$(grep -c "no acknowledgement of the lock" "$T/nvqd.log")" 0
	# nvqd logs "its sockets are read once more first" only where SIGSTOP found it
	# in its poll; stopped between its check and its next poll, it reads the
	# acknowledgement first, so that line is no sign of anything either way
	kill -CONT "$pid" 2> /dev/null	# (where it was stopped, for the cancel to reach it)
	nvq cancel "$a" > /dev/null
}

t_hook_claims_shared() {	# a claim of 1 byte shared does not keep a low job in place of another user's higher one
	[ "$(id -u)" = 0 ] && command -v setpriv > /dev/null && make_users ||
	    { skip "needs root, setpriv and useradd"; return; }
	# another user's job preempts only by a class that preempts its class (issue 42)
	ckpt_config "[scheduler]" "preempt = suspend" "preempt_min_runtime = 0s" "kill_grace = 2s" \
	    "[limits]" "max_priority = 10" "[qos high]" "preempts = normal"
	chmod 755 "$T" "$FAKE_CKPT_DIR"
	start_nvqd || return
	local low high q h2
	# no --requeue: it gets its --signal (SIGUSR1 ends hookpeer) and is cancelled
	low=$(as_user nvqta "$NVQ_BIN" -s "$T/sock" submit --parsable -m 50G -p 0 \
	    "$HOOKPEER" claim 4096 60 1)
	wait_field "$low" gpu_used '^4096$' 10 || return	# its report, "shared" in it, was taken
	expect_eq "root's nvq suspend says what stops it instead" "$(nvq suspend "$low" 2>&1)" \
	    "nvq: cannot suspend job $low: job $low's processes share 1B of GPU memory nvq cannot \
move (the driver's own CUDA IPC handles: allocations under 2 MiB, or all with offload off; \
cuMemExportToShareableHandle while [scheduler] offload is off; or memory of a process that has \
ended): it cannot be suspended and runs on untouched; \`nvq requeue $low\` stops it and queues \
it again, and a higher-priority job that needs its memory stops it with its --signal and \
cancels it (no --requeue)"
	high=$(as_user nvqtb "$NVQ_BIN" -s "$T/sock" submit --parsable -m 75G -p 10 --qos high sleep 1)
	wait_state "$low" CANCELLED 10
	wait_state "$high" COMPLETED 10
	expect_match "its events say why" "$(nvq show "$low")" \
	    "CANCELLED +preempted by job $high \\(priority 10\\); cancelled: it cannot be suspended \\(it shares GPU memory\\) and has no --requeue"
	expect_eq "nothing was suspended" "$(switches "$low")" ""
	# --requeue: stopped the same way, queued again, and runs once the higher job is done
	# 30 s a run, so that a slow first report still finds it running; cancelled at the end
	q=$(as_user nvqta "$NVQ_BIN" -s "$T/sock" submit --parsable --requeue -m 50G -p 0 \
	    "$HOOKPEER" claim 4096 30 1)
	wait_field "$q" gpu_used '^4096$' 10 || return
	expect_match "nvq suspend says it would be queued again" "$(nvq suspend "$q" 2>&1)" \
	    "stops it with its --signal and queues it again \\(--requeue\\)$"
	h2=$(as_user nvqtb "$NVQ_BIN" -s "$T/sock" submit --parsable -m 75G -p 10 --qos high sleep 1)
	wait_state "$h2" COMPLETED 10
	wait_state "$q" RUNNING 10
	expect_match "requeued, and says why" "$(nvq show "$q")" \
	    "PREEMPTED +preempted by job $h2 \\(priority 10\\); requeued: it cannot be suspended \\(it shares GPU memory\\).*PENDING +requeued"
	expect_eq "stopped once and run again" "$(sqlite3 "$T/nvq.db" "SELECT restarts FROM jobs
	    WHERE id = $q")" 1
	nvq cancel "$q" > /dev/null
	wait_state "$q" CANCELLED 10
}

t_hook_claims_turns() {	# on a timeslice GPU a job that cannot be suspended takes no turns: neither stopped nor suspended; a higher job still preempts it
	ckpt_config "[scheduler]" "mode = timeslice" "turn = 1s" "preempt = suspend" \
	    "preempt_min_runtime = 0" "kill_grace = 2s"
	start_nvqd || return
	local a b c
	# --requeue too: stopped at each turn's end it would lose its work each turn
	a=$(submit --requeue -m 50G "$HOOKPEER" claim 4096 60 1)
	wait_field "$a" gpu_used '^4096$' 10 || return
	b=$(submit -m 50G sleep 1)
	sleep 4	# four turns
	expect_eq "its turns are over, it runs on" "$(state "$a")" RUNNING
	expect_eq "not stopped" "$(field "$a" restarts)" 0
	expect_eq "nothing was suspended" "$(switches "$a")" ""
	expect_eq "the job of its priority waits" "$(state "$b")" PENDING
	# a higher job: stopped with its --signal and requeued
	c=$(submit -p 10 -m 50G sleep 1)
	wait_state "$c" COMPLETED 15
	expect_match "requeued for the higher job" "$(nvq show "$a")" \
	    "job $c \\(priority 10\\)[^\n]*; requeued: it cannot be suspended"
	nvq cancel "$a" "$b" > /dev/null 2>&1
}

t_hook_claims_refusal() {	# nvq suspend's refusal says what the settings will do instead
	ckpt_config "[scheduler]" "mode = timeslice" "turn = 1h" "preempt = off"
	start_nvqd || return
	local a
	a=$(submit -m 50G "$HOOKPEER" claim 4096 60 1)
	wait_field "$a" gpu_used '^4096$' 10 || return
	expect_eq "preempt = off, a timeslice GPU" "$(nvq suspend "$a" 2>&1)" \
	    "nvq: cannot suspend job $a: job $a's processes share 1B of GPU memory nvq cannot \
move (the driver's own CUDA IPC handles: allocations under 2 MiB, or all with offload off; \
cuMemExportToShareableHandle while [scheduler] offload is off; or memory of a process that has \
ended): it cannot be suspended and runs on untouched; \`nvq requeue $a\` stops it and queues \
it again, and a higher-priority job that needs its memory waits for it (preempt = off); it \
takes no turns on a timeslice GPU: jobs of its priority wait for its end"
	nvq cancel "$a" > /dev/null
	wait_state "$a" CANCELLED 10
	stop_nvqd
	ckpt_config "[scheduler]" "preempt = requeue"
	start_nvqd || return
	a=$(submit -m 50G "$HOOKPEER" claim 4096 60 1)
	wait_field "$a" gpu_used '^4096$' 10 || return
	expect_match "preempt = requeue, no --requeue" "$(nvq suspend "$a" 2>&1)" \
	    "queues it again, and a higher-priority job that needs its memory waits for it \\(preempt = requeue, and it has no --requeue\\)$"
	nvq cancel "$a" > /dev/null
	wait_state "$a" CANCELLED 10
}

# steal_pid moves the machine's pid counter: nothing else may start processes meanwhile
ALONE+=(t_hook_claims_pid_reuse t_hook_claims_ckpt)
