# t_suspend.sh: suspend and resume through nvq-ckpt and the hook's offload.
# Sourced by run.sh (helpers in lib.sh).

t_suspend() {	# nvq suspend and resume: GPU memory out and back, the job never killed
	[ -x "$FAKE_JOB" ] || { fail "build tests/fake_job first"; return; }
	ckpt_config
	start_nvqd || return
	local a pid out b
	a=$(fsubmit -m 10G "$FAKE_JOB" launch 60 "$T/a")
	wait_count "$T/a" || return
	wait_field "$a" hook_pids '^[0-9]+$'
	pid=$(field "$a" hook_pids)
	expect_match "demanded while running" "$(nvq gpus --json)" '"demanded":10737418240'
	out=$(nvq suspend "$a"); expect_eq "nvq suspend waits for it" "$out" "job $a suspended"
	expect_eq "SUSPENDED" "$(state "$a")" SUSPENDED
	expect_eq "its process is checkpointed" "$(ckpt_state "$pid")" 2
	expect_eq "it launches nothing" "$(growing "$T/a" 0.5)" still
	expect_eq "its process lives" "$(kill -0 "$pid" && echo alive)" alive
	expect_match "its memory is free for others" "$(nvq gpus --json)" '"demanded":0,'
	expect_match "nvq list shows it" "$(nvq list)" "SUSPENDED.*nvq resume $a"
	out=$(nvq suspend "$a" 2>&1); expect_match "twice" "$out" "suspended already"
	# a job that needs the whole GPU starts meanwhile
	b=$(submit -m 75G sleep 0.5)
	wait_state "$b" COMPLETED
	expect_match "an nvq-ckpt was made ready for the resume as the suspend began" \
	    "$(grep "job $a: nvq-ckpt ready ahead" "$T/nvqd.log")" "ready ahead \(pid [0-9]+\)"
	expect_eq "resume" "$(nvq resume "$a")" "job $a resumes once its memory is free on its GPUs"
	wait_state "$a" RUNNING
	expect_eq "restored and unlocked" "$(ckpt_state "$pid")" 0
	expect_match "by the nvq-ckpt made ready" "$(grep "job $a: nvq-ckpt resume" "$T/nvqd.log")" \
	    "ready ahead\)"
	expect_eq "it launches again" "$(growing "$T/a" 0.5)" grows
	expect_eq "recorded" "$(switches "$a")" "suspend|user|1 resume|user|1 "
	expect_eq "its time suspended" "$(sqlite3 "$T/nvq.db" "SELECT suspended_time > 0.3 FROM jobs
	    WHERE id = $a")" 1
	expect_match "nvq show lists the switches" "$(nvq show "$a")" "switch suspend: why=user"
	# nvq-ckpt's own end is slow after a checkpoint (the driver's teardown):
	# the switch goes on at its last line, not at its end
	echo 3000 > "$FAKE_CKPT_DIR/enddelay"
	local t0 t1
	t0=$(date +%s%N); out=$(nvq suspend "$a"); t1=$(date +%s%N)
	expect_eq "suspended with nvq-ckpt slow to end" "$out" "job $a suspended"
	expect_eq "without waiting for its end" "$(( (t1 - t0) / 1000000 < 2500 ))" 1
	rm "$FAKE_CKPT_DIR/enddelay"
	nvq resume "$a" > /dev/null
	wait_state "$a" RUNNING
	# a failed checkpoint: undone, the job runs on
	echo checkpoint > "$FAKE_CKPT_DIR/fail"
	out=$(nvq suspend "$a" 2>&1); rc=$?
	expect_eq "a failed suspend exits 1" "$rc" 1
	expect_match "and says why" "$out" "the suspend failed: checkpoint $pid 999 .*; it runs on"
	expect_eq "still RUNNING" "$(state "$a")" RUNNING
	expect_eq "unlocked again" "$(ckpt_state "$pid")" 0
	expect_eq "launching" "$(growing "$T/a" 0.5)" grows
	# a failed restore: it stays suspended, nvq resume tries again
	echo restore > "$FAKE_CKPT_DIR/fail"
	nvq suspend "$a" > /dev/null
	nvq resume "$a" > /dev/null
	wait_field "$a" switch_error "restore"
	expect_eq "stays SUSPENDED" "$(state "$a")" SUSPENDED
	rm "$FAKE_CKPT_DIR/fail"
	nvq resume "$a" > /dev/null
	wait_state "$a" RUNNING
	expect_eq "the retry restored it" "$(ckpt_state "$pid")" 0
	expect_eq "failures recorded" "$(sqlite3 "$T/nvq.db" "SELECT count(*) FROM switches
	    WHERE job_id = $a AND ok = 0 AND error LIKE '%999%'")" 2
	# suspended, then cancelled: its nvq-ckpt ready for the resume ends too
	nvq suspend "$a" > /dev/null
	expect_eq "one nvq-ckpt waits for the resume" "$(pgrep -fc "^$ROOT/$BUILD/nvq-ckpt .* wait$")" 1
	nvq cancel "$a" > /dev/null
	wait_state "$a" CANCELLED 40
	sleep 0.5
	expect_eq "it ended with the job" "$(pgrep -fc "^$ROOT/$BUILD/nvq-ckpt .* wait$")" 0
	# suspended across a restart of nvqd, then cancelled: it ends
	a=$(fsubmit -m 10G "$FAKE_JOB" launch 60 "$T/a2")
	wait_count "$T/a2" || return
	wait_field "$a" hook_pids '^[0-9]+$'
	pid=$(field "$a" hook_pids)
	nvq suspend "$a" > /dev/null
	stop_nvqd; start_nvqd || return
	expect_eq "suspended after a restart" "$(state "$a")" SUSPENDED
	nvq cancel "$a" > /dev/null
	wait_state "$a" CANCELLED 40
	expect_eq "its process is gone" "$(kill -0 "$pid" 2>/dev/null && echo alive)" ""
	expect_eq "bad id" "$(nvq suspend 999 2>&1)" "nvq: no such job 999"
}

t_suspend_host_memory() {	# no suspend when the host cannot take the GPU memory
	[ -x "$FAKE_JOB" ] || { fail "build tests/fake_job first"; return; }
	local avail a out
	avail=$(awk '/MemAvailable/ { print int($2 / 1048576) }' /proc/meminfo)
	[ "$avail" -lt 60 ] || { skip "the host has ${avail}G available, the fake GPU 80G"; return; }
	ckpt_config
	start_nvqd || return
	a=$(fsubmit -m 70G sh -c "$FAKE_JOB alloc $(( (avail + 2) << 30 )) 30")
	wait_field "$a" gpu_used '^[0-9]{11,}$'
	out=$(nvq suspend "$a" 2>&1)
	expect_match "refused, with the reason" "$out" "cannot suspend job $a: .*host has .* GiB available"
	expect_eq "it runs on" "$(state "$a")" RUNNING
	nvq cancel "$a" > /dev/null
}

t_offload() {	# the hook moves a job's own memory out and back; every byte survives
	[ -x "$FAKE_JOB" ] || { fail "build tests/fake_job first"; return; }
	ckpt_config "[scheduler]" "preempt = suspend" "preempt_min_runtime = 0s"
	start_nvqd || return
	local a h pid out mib=$((48 << 20)) o
	# the VMM path keeps the budget: over -m is refused
	o=$(fsubmit -m 1G -o "$T/o.out" "$FAKE_JOB" alloc $((1100 << 20)) 0)
	wait_state "$o" FAILED
	expect_eq "over its budget, through the VMM path" "$(cat "$T/o.out")" "alloc oom"
	a=$(NVQ_DEBUG=1 fsubmit -m 40G -o "$T/a.out" -e "$T/a.err" "$FAKE_JOB" data 30 "$T/a" $mib)
	wait_count "$T/a" || return
	wait_field "$a" hook_pids '^[0-9]+$'
	pid=$(field "$a" hook_pids)
	out=$(nvq suspend "$a"); expect_eq "nvq suspend" "$out" "job $a suspended"
	expect_eq "the hook moved its allocation itself" "$(sqlite3 "$T/nvq.db" "SELECT hook_bytes,
	    hook_seconds IS NOT NULL FROM switches WHERE job_id = $a AND kind = 'suspend'")" "$mib|1"
	expect_eq "the driver's checkpoint took the rest" "$(ckpt_state "$pid")" 2
	expect_eq "it launches nothing" "$(growing "$T/a" 0.5)" still
	nvq resume "$a" > /dev/null
	wait_state "$a" RUNNING
	expect_eq "it launches again" "$(growing "$T/a" 0.5)" grows
	expect_eq "the hook brought it back" "$(sqlite3 "$T/nvq.db" "SELECT hook_bytes FROM switches
	    WHERE job_id = $a AND kind = 'resume'")" "$mib"
	expect_match "nvq show has the hook's share, in MiB" "$(nvq show "$a")" "switch resume: .*hook_bytes=48M"
	# no device memory to come back to: it stays suspended, nothing is lost, a retry works
	nvq suspend "$a" > /dev/null
	echo create > "$FAKE_CKPT_DIR/vmmfail"
	nvq resume "$a" > /dev/null
	wait_field "$a" switch_error "bringing its memory back"
	expect_eq "stays SUSPENDED" "$(state "$a")" SUSPENDED
	expect_eq "launching nothing" "$(growing "$T/a" 0.5)" still
	rm "$FAKE_CKPT_DIR/vmmfail"
	nvq resume "$a" > /dev/null
	wait_state "$a" RUNNING
	expect_eq "launching again" "$(growing "$T/a" 0.5)" grows
	# suspended across a restart of nvqd, then resumed
	nvq suspend "$a" > /dev/null
	stop_nvqd; start_nvqd || return
	expect_eq "suspended after a restart" "$(state "$a")" SUSPENDED
	wait_field "$a" hook_pids "^$pid\$"	# its hook links again, its memory still out
	nvq resume "$a" > /dev/null
	wait_state "$a" RUNNING
	# preempted by a higher job, which completes; then it resumes on its own
	h=$(fsubmit -m 60G -p 10 -o "$T/h.out" "$FAKE_JOB" data 1 "$T/h" $((16 << 20)))
	wait_state "$h" COMPLETED 20
	wait_state "$a" RUNNING 20
	expect_match "preempted, then resumed" "$(switches "$a")" "suspend\|preempt\|1 resume\|preempt\|1 $"
	expect_eq "the higher job's data" "$(cut -d' ' -f1,2 "$T/h.out")" "data ok"
	# nvqd killed in the middle of a suspend (memory out, the driver's
	# checkpoint under way): nvq-ckpt dies with it, the next one puts the job
	# back to running and the hook brings its memory back
	stop_nvqd
	FAKE_CKPT_DELAY_MS=1000 start_nvqd || return
	wait_field "$a" hook_pids "^$pid\$"
	nvq suspend "$a" > /dev/null 2>&1 &
	for _ in $(seq 100); do [ "$(ckpt_state "$pid")" = 1 ] && break; sleep 0.05; done
	kill -9 "$NVQD_PID"; wait "$NVQD_PID" 2>/dev/null; NVQD_PID=""
	wait
	start_nvqd || return
	wait_state "$a" RUNNING
	sleep 1.5	# the killed nvqd's nvq-ckpt would have checkpointed it by now
	expect_eq "running again after the restart" "$(ckpt_state "$pid")" 0
	expect_eq "launching after the restart" "$(growing "$T/a" 0.5)" grows
	wait_state "$a" COMPLETED 40
	expect_eq "every byte, after six round trips" "$(cut -d' ' -f1,2 "$T/a.out")" "data ok"
	expect_eq "switches recorded" "$(sqlite3 "$T/nvq.db" "SELECT count(*) FROM switches
	    WHERE job_id = $a AND ok = 1 AND hook_bytes = $mib")" 8
}

t_suspend_time_limit() {	# a suspended job's time limit waits; it counts only running time
	[ -x "$FAKE_JOB" ] || { fail "build tests/fake_job first"; return; }
	ckpt_config "[scheduler]" "kill_grace = 1s"
	start_nvqd || return
	local a el
	a=$(fsubmit -m 10G -t 3s "$FAKE_JOB" launch 60 "$T/a")
	wait_count "$T/a" || return
	wait_field "$a" hook_pids '^[0-9]+$'
	nvq suspend "$a" > /dev/null
	sleep 4
	expect_eq "still SUSPENDED after more than its limit" "$(state "$a")" SUSPENDED
	nvq resume "$a" > /dev/null
	wait_state "$a" RUNNING
	# a restart of nvqd keeps the time it was suspended out of the limit
	stop_nvqd; start_nvqd || return
	expect_eq "running after a restart" "$(state "$a")" RUNNING
	wait_state "$a" TIMEOUT 8
	el=$(sqlite3 "$T/nvq.db" "SELECT ended_at - started_at - run_suspended FROM jobs WHERE id = $a")
	expect_eq "timed out after about 3 s of running ($el)" \
	    "$(awk -v x="$el" 'BEGIN { print (x >= 2.9 && x < 4.5) }')" 1
	expect_eq "ran more than its limit in all" "$(sqlite3 "$T/nvq.db" "SELECT ended_at - started_at > 6.5
	    FROM jobs WHERE id = $a")" 1
}

t_suspend_unhooked() {	# processes that map libcuda without the hook are checkpointed too
	[ -x "$FAKE_JOB" ] || { fail "build tests/fake_job first"; return; }
	ckpt_config
	start_nvqd || return
	local a u n
	# one clears LD_PRELOAD and runs CUDA; one maps libcuda and has no CUDA state
	a=$(fsubmit -m 10G sh -c "env -u LD_PRELOAD $FAKE_JOB launch 30 $T/u &
	    env -u LD_PRELOAD $FAKE_JOB alloc 1048576 30; wait")
	wait_count "$T/u" || return
	u=$(pgrep -f "^$FAKE_JOB launch 30 $T/u"); n=$(pgrep -f "^$FAKE_JOB alloc 1048576 30")
	touch "$FAKE_CKPT_DIR/nocuda.$n"
	expect_eq "suspended" "$(nvq suspend "$a")" "job $a suspended"
	expect_eq "the unhooked CUDA process is checkpointed" "$(ckpt_state "$u")" 2
	expect_eq "it launches nothing" "$(growing "$T/u" 0.5)" still
	expect_eq "the other is left as it is" "$(ckpt_state "$n")" 0
	expect_match "nvqd says why" "$(cat "$T/nvqd.log")" "skip $n 3 .*not a CUDA process"
	nvq resume "$a" > /dev/null
	wait_state "$a" RUNNING
	expect_eq "restored" "$(ckpt_state "$u")" 0
	expect_eq "launching again" "$(growing "$T/u" 0.5)" grows
	nvq cancel "$a" > /dev/null
}

t_suspend_failed_turn() {	# a suspend that fails inside the GPU dispatch loses no lock deadline
	[ -x "$FAKE_JOB" ] || { fail "build tests/fake_job first"; return; }
	ckpt_config "[scheduler]" "compute = timeslice" "quantum = 1s" "offload = off" \
	    "preempt = off"
	start_nvqd || return
	local a b ga out
	a=$(fsubmit -m 1G "$FAKE_JOB" launch 40 "$T/a")
	wait_count "$T/a" || return
	b=$(fsubmit -m 1G "$FAKE_JOB" launch 40 "$T/b")
	wait_count "$T/b" || return
	# nvq-ckpt's output cannot be made: the suspend fails as soon as a's
	# work has drained, inside the pass over the locks (the old shape
	# re-entered the pass there and armed its timer twice)
	mkdir -p "$T/spool/.status/$a.ckpt"
	out=$(nvq suspend "$a" 2>&1)
	expect_match "the suspend failed" "$out" "cannot|failed"
	expect_eq "a runs on" "$(state "$a")" RUNNING
	# the failure came inside a dispatch, and the lock timer was armed after
	# it, once, by that dispatch: the next line of GPU control is its end
	expect_match "the dispatch that failed the suspend armed the timer after it" \
	    "$(grep -A40 "job $a: cannot suspend it" "$T/nvqd.log" | grep -m1 "gpu: ")" \
	    "gpu: (ack|unlinked|timer|changed|suspend|want|idle) handled; lock timer"
	# b's turn still ends: a launches again within a few quanta
	ga=$(count "$T/a")
	sleep 4
	expect_eq "a had a turn after the failed suspend" "$(( $(count "$T/a") > ga ))" 1
	nvq cancel "$a" "$b" > /dev/null
}

# suspend_undone ID PID SECONDS WHY: nvq suspend fails within SECONDS saying WHY (a
# regex); undone: PID runs, the job runs on and launches; the failure is recorded.
suspend_undone() {
	local t0 t1 out
	t0=$(date +%s.%N)
	out=$(nvq suspend "$1" 2>&1)
	t1=$(date +%s.%N)
	expect_match "the suspend failed, and says why" "$out" \
	    "job $1: the suspend failed: $4; it runs on"
	expect_eq "within the bound" "$(awk -v a="$t0" -v b="$t1" -v s="$3" \
	    'BEGIN { print (b - a < s) }')" 1
	expect_eq "undone: its process runs" "$(ckpt_state "$2")" 0
	expect_eq "the job runs on" "$(state "$1")" RUNNING
	expect_eq "and launches" "$(growing "$T/a" 0.5)" grows
	expect_eq "recorded as failed" "$(switches "$1")" "suspend|user|0 "
}

t_suspend_verify() {	# SUSPENDED only once NVML shows the job's processes holding nothing: else undone
	[ -x "$FAKE_JOB" ] || { fail "build tests/fake_job first"; return; }
	export FAKE_CKPT_DIR=$T/ckpt FAKE_NVML_GPUS=1x80G FAKE_NVML_PROCS=$T/procs
	mkdir -p "$FAKE_CKPT_DIR"; : > "$T/procs"
	write_config "[gpus]" "nvml_library = $HELPERS/libfake-nvml.so.1" \
	    "cuda_library = $FAKE_LIB/libcuda.so.1" "poll = 1s"
	start_nvqd || return
	local a pid out
	linked_launcher 10G || return
	a=$JOB pid=$PID
	# the driver says it checkpointed the process, NVML still lists its memory
	echo "0 $pid $((1 << 30))" > "$T/procs"
	suspend_undone "$a" "$pid" 8 \
	    "verify $pid 0 NVML still shows it holding 1024 MiB on GPU 0 3 s after its checkpoint"
	# NVML agrees with the driver: suspended
	: > "$T/procs"
	out=$(nvq suspend "$a" 2>&1)
	expect_eq "then it is suspended" "$out" "job $a suspended"
	expect_eq "checkpointed" "$(ckpt_state "$pid")" 2
	nvq resume "$a" > /dev/null
	wait_state "$a" RUNNING
	nvq cancel "$a" > /dev/null
}

t_suspend_timeout() {	# an nvq-ckpt that hangs is killed after switch_timeout, its switch undone
	[ -x "$FAKE_JOB" ] || { fail "build tests/fake_job first"; return; }
	ckpt_config "[scheduler]" "switch_timeout = 1s"
	start_nvqd || return
	local a pid out
	linked_launcher 10G || return
	a=$JOB pid=$PID
	# the driver's checkpoint never returns
	echo checkpoint > "$FAKE_CKPT_DIR/hang"
	suspend_undone "$a" "$pid" 6 \
	    "nvq-ckpt suspend took longer than 1 s \\(switch_timeout\\): killed, and the switch was undone"
	rm "$FAKE_CKPT_DIR/hang"
	# a resume whose nvq-ckpt hangs: killed; the job stays suspended until nvq resume
	sleep 0.5
	expect_eq "a suspend that works" "$(nvq suspend "$a" 2>&1)" "job $a suspended"
	echo restore > "$FAKE_CKPT_DIR/hang"
	nvq resume "$a" > /dev/null
	wait_field "$a" switch_error "nvq-ckpt resume took longer than 1 s" 10 || return
	expect_eq "it stays suspended" "$(state "$a")" SUSPENDED
	rm "$FAKE_CKPT_DIR/hang"
	nvq resume "$a" > /dev/null
	wait_state "$a" RUNNING 10
	expect_eq "resumed at the second try" "$(ckpt_state "$pid")" 0
	expect_eq "and launches" "$(growing "$T/a" 0.5)" grows
	nvq cancel "$a" > /dev/null
}

# count nvq-ckpt processes by name; find the fake job by its command line,
# which t_timeslice's job shares
ALONE+=(t_suspend t_suspend_unhooked)

# the longest: started first when tests run at once (run.sh -j)
SLOW+=(t_offload)
