# t_hook.sh: the hook against the fake libcuda: budgets, reports, GPU locks
# (hold, escalation, timeslice), reconnection, fork.  Sourced by run.sh
# (helpers in lib.sh).

t_hook() {	# every job gets the hook, which holds it to its -m
	write_config; start_nvqd || return
	local fake="$ROOT/$BUILD/tests/fake" a b c
	[ -x "$ROOT/$BUILD/tests/test_hook" ] || { fail "build tests/test_hook first (make hooktest)"; return; }
	# nvqd sets CUDA_VISIBLE_DEVICES to its own (virtual) GPUs' UUIDs: the
	# test's NVML check expects the fake NVML's GPU 1, so use fake-NVML GPUs
	stop_nvqd
	# test_hook counts cuMemAlloc calls one by one: without offload's VMM path
	# (test_offload and t_offload test that one)
	write_config "[gpus]" "nvml_library = $fake/libnvidia-ml.so.1" "[scheduler]" "offload = off"
	export FAKE_NVML_GPUS=2x16G
	start_nvqd || return
	a=$(LD_LIBRARY_PATH=$fake submit -m 1G "$ROOT/$BUILD/tests/test_hook")
	b=$(LD_LIBRARY_PATH=$fake submit -m 512M "$ROOT/$BUILD/tests/test_hook")
	# (an ASan-built nvq would refuse to start with a foreign LD_PRELOAD first)
	c=$(ASAN_OPTIONS=verify_asan_link_order=0 LD_PRELOAD=/lib/x86_64-linux-gnu/libc.so.6 \
	    submit -g 0 sh -c 'echo "$LD_PRELOAD"')
	nvq wait "$a"; expect_eq "the hook's own tests pass inside a -m 1G job" "$?" 0
	nvq wait "$b"; expect_match "and fail with a budget of 512M (failed tests)" "$?" "^[1-9]"
	expect_match "the 512M job's allocations were refused" "$(nvq log "$b")" "FAILED"
	nvq wait "$c"
	expect_match "the hook goes first, the job's own preload after" "$(nvq log "$c")" \
	    "libnvq-hook.so /lib/x86_64-linux-gnu/libc.so.6$"
	unset FAKE_NVML_GPUS
}

t_lock_hold() {	# nvq hold stops a job's launches within a second; release resumes them
	[ -x "$FAKE_JOB" ] || { fail "build tests/fake_job first"; return; }
	write_config "[scheduler]" "revoke_timeout = 2s"
	start_nvqd || return
	local a b out t0 t1
	# 10G each: one per GPU
	a=$(fsubmit -m 10G "$FAKE_JOB" launch 20 "$T/a")
	b=$(fsubmit -m 10G "$FAKE_JOB" launch 20 "$T/b")
	wait_count "$T/a" && wait_count "$T/b" || return
	wait_field "$a" hook_pids '^[0-9]+$'
	expect_eq "on different GPUs" "$(field "$a" gpu_uuids | tail -c 2)$(field "$b" gpu_uuids |
	    tail -c 2)" 01
	expect_eq "lock at start" "$(field "$a" lock)" granted
	t0=$(date +%s.%N)
	out=$(nvq hold "$a"); t1=$(date +%s.%N)
	expect_eq "nvq hold waits for the drain" "$out" "job $a held: its GPU work has drained"
	expect_eq "within a second" "$(awk -v a="$t0" -v b="$t1" 'BEGIN { print (b - a < 1) }')" 1
	expect_eq "held job launches nothing" "$(growing "$T/a" 0.6)" still
	# as long a look as at the held one: a busy machine (ASan under CI) can pause b a while
	expect_eq "the other GPU's job goes on" "$(growing "$T/b" 0.6)" grows
	expect_match "list says why" "$(nvq list)" "lock held"
	expect_eq "stored" "$(sqlite3 "$T/nvq.db" "SELECT held FROM jobs WHERE id = $a")" 1
	out=$(nvq hold "$a" 2>&1); expect_match "twice" "$out" "held already"
	out=$(nvq release "$b" 2>&1); expect_match "release a job not held" "$out" "not held"
	# held across a restart of nvqd: the process reconnects and stays held
	stop_nvqd; start_nvqd || return
	wait_field "$a" hook_pids '^[0-9]+$'
	expect_eq "still held after restart" "$(growing "$T/a" 0.6)" still
	expect_eq "release" "$(nvq release "$a")" "job $a released"
	expect_eq "launches again" "$(growing "$T/a" 0.4)" grows
	expect_eq "events" "$(sqlite3 "$T/nvq.db" "SELECT group_concat(state, ' ') FROM events
	    WHERE job_id = $a")" "PENDING RUNNING HELD RELEASED"
	out=$(nvq hold 999 2>&1); expect_match "unknown job" "$out" "no such job 999"
	nvq cancel "$a" "$b"
}

t_lock_escalate() {	# no acknowledgement within revoke_timeout: SIGSTOP, SIGCONT on release
	write_config "[scheduler]" "revoke_timeout = 1s"
	start_nvqd || return
	local a pid out
	a=$(FAKE_LAUNCH_HANG=$T/hang fsubmit -m 1G "$FAKE_JOB" launch 20 "$T/a")
	wait_count "$T/a" || return
	wait_field "$a" hook_pids '^[0-9]+$'; pid=$(field "$a" hook_pids)
	touch "$T/hang"	# the next launch never returns: its work never drains
	sleep 0.2
	out=$(nvq hold "$a")
	expect_eq "hold reports the escalation" "$out" \
	    "job $a held: it did not answer in time and was stopped (SIGSTOP)"
	# (SIGSTOP takes effect when the process next runs: soon, on a loaded machine not at once)
	local i
	for i in $(seq 40); do
		[ "$(awk '{print $3}' /proc/"$pid"/stat)" = T ] && break
		sleep 0.05
	done
	expect_eq "the process is stopped" "$(awk '{print $3}' /proc/"$pid"/stat)" T
	rm -f "$T/hang"
	nvq release "$a" > /dev/null
	sleep 0.2
	expect_match "SIGCONT on release" "$(awk '{print $3}' /proc/"$pid"/stat)" "^[RSD]$"
	expect_eq "launches again" "$(growing "$T/a" 0.4)" grows
	expect_match "logged" "$(cat "$T/nvqd.log")" "no acknowledgement of the lock in 1s"
	nvq cancel "$a"
}

t_lock_escalate_late() {	# two processes; one drains only after it was stopped and the lock given again: both launch on
	write_config "[scheduler]" "revoke_timeout = 1s"
	start_nvqd || return
	local a late
	# a's synchronize waits while $T/hang is there, as an NCCL kernel waits for its peer rank
	a=$(fsubmit -m 1G sh -c "FAKE_SYNC_HANG=$T/hang $FAKE_JOB launch 30 $T/a & $FAKE_JOB launch 30 $T/b & wait")
	wait_count "$T/a" || return; wait_count "$T/b" || return
	wait_field "$a" hook_pids '^[0-9]+,[0-9]+$' || return
	touch "$T/hang"; sleep 0.2
	expect_eq "hold stops the job" "$(nvq hold "$a")" \
	    "job $a held: it did not answer in time and was stopped (SIGSTOP)"
	rm -f "$T/hang"	# its drain can end now, but only once it runs again
	nvq release "$a" > /dev/null
	sleep 0.5
	expect_eq "the late one launches again" "$(growing "$T/a" 0.5)" grows
	expect_eq "the other one too" "$(growing "$T/b" 0.5)" grows
	# the order seen on two GPUs (docs/gpu-results.md): the grant, then the old ack, then a wait
	late=$(awk '/lock granted \(seq 2\)/ { g = 1 } g && /acknowledged seq 1/ { print $6; exit }' "$T/nvqd.log")
	expect_match "the late ack came after the lock was given again" "$late" '^[0-9]+$'
	nvq cancel "$a" > /dev/null
}

t_hook_report() {	# reports add up per job; the job's processes share one budget
	write_config
	start_nvqd || return
	local a b
	a=$(fsubmit -m 1G "$FAKE_JOB" alloc 629145600 3)
	wait_field "$a" gpu_used '^629145600$'
	expect_match "gpus shows the job's use" "$(nvq gpus)" "600M"
	# two processes of one job: the second gets what the first left
	b=$(fsubmit -m 1G sh -c "$FAKE_JOB alloc 734003200 3 & sleep 1;
	    $FAKE_JOB alloc 734003200 0; $FAKE_JOB alloc 209715200 0; wait")
	nvq wait "$a" "$b"
	expect_eq "peak per GPU in run_gpus" "$(sqlite3 "$T/nvq.db" "SELECT run_gpus.peak_gpu_mem
	    FROM run_gpus JOIN runs ON runs.id = run_id WHERE job_id = $a")" 629145600
	expect_eq "runs.peak_gpu_mem" "$(sqlite3 "$T/nvq.db" "SELECT peak_gpu_mem FROM runs
	    WHERE job_id = $a")" 629145600
	expect_eq "700M, then 700M refused, 200M allowed" "$(nvq log "$b" | tr '\n' ' ')" \
	    "alloc ok alloc oom alloc ok "
	expect_eq "the job's peak is the sum" "$(sqlite3 "$T/nvq.db" "SELECT peak_gpu_mem FROM
	    runs WHERE job_id = $b")" 943718400
}

t_hook_race() {	# two processes of a 1G job allocating 600M at the same instant: one succeeds, every round
	[ -x "$FAKE_JOB" ] || { fail "build tests/fake_job first"; return; }
	write_config
	start_nvqd || return
	local a shim
	# the second process makes a session of its own, as torchrun's workers do
	a=$(fsubmit -m 1G "$FAKE_JOB" race 629145600 30)
	nvq wait "$a"
	expect_eq "exactly one success in each of 30 rounds" "$(nvq log "$a")" \
	    "race rounds 30 one 30 both 0 none 0"
	shim=$(shim_pid "$a")
	expect_eq "the job's account is removed with it" \
	    "$(ls /dev/shm/nvq-share-"$shim"-* 2> /dev/null | wc -l)" 0
}

t_hook_ipc() {	# a CUDA IPC handle of one process of a job opens in another, with offload on
	[ -x "$FAKE_JOB" ] || { fail "build tests/fake_job first"; return; }
	write_config	# offload = on, the default: large allocations are VMM memory
	start_nvqd || return
	local a
	a=$(fsubmit -m 1G "$FAKE_JOB" ipc 8388608)
	nvq wait "$a"
	expect_match "the other process read the memory, wrote it, and the first saw it" \
	    "$(nvq log "$a" | tr '\n' ' ')" "^handle [0-9a-f]{128} child read ok ipc ok 8388608 $"
	expect_eq "it completed" "$(field "$a" state)" COMPLETED
}

vmm_held() {	# PID...: per process, "MAPPED,HELD": the fake driver's device memories
	local p	# it maps, and its descriptors of them; sorted
	for p in "$@"; do
		echo "$(grep -c fake-vmm "/proc/$p/maps"),$(ls -l "/proc/$p/fd" | grep -c fake-vmm)"
	done | sort | tr '\n' ' '
}

t_hook_ipc_suspend() {	# memory shared through CUDA IPC goes out of every process and comes back shared
	[ -x "$FAKE_JOB" ] || { fail "build tests/fake_job first"; return; }
	ckpt_config
	start_nvqd || return
	local a p q
	# the second process holds the first's memory for 5 s, then reads it again
	a=$(fsubmit -m 1G "$FAKE_JOB" ipc 8388608 5)
	wait_field "$a" hook_pids '^[0-9]+,[0-9]+$' || return
	p=$(field "$a" hook_pids); q=${p#*,}; p=${p%,*}
	# the exporter: its handle and the descriptor it exported; the importer: its handle
	expect_eq "both processes hold the shared memory" "$(vmm_held "$p" "$q")" "1,1 1,2 "
	expect_eq "nvq suspend" "$(nvq suspend "$a" 2>&1)" "job $a suspended"
	expect_eq "the device memory is gone from both" "$(vmm_held "$p" "$q")" "0,0 0,0 "
	expect_eq "resume" "$(nvq resume "$a")" "job $a resumes once its memory is free on its GPUs"
	wait_state "$a" RUNNING
	expect_eq "both map it again" "$(vmm_held "$p" "$q")" "1,1 1,2 "
	nvq wait "$a"
	# the child read the first's data again after the resume, wrote through its
	# mapping, and the first saw those writes: one memory again
	expect_match "it was shared before and after" "$(nvq log "$a" | tr '\n' ' ')" \
	    "child read ok ipc ok 8388608 $"
	expect_eq "it completed" "$(field "$a" state)" COMPLETED
	expect_eq "recorded" "$(switches "$a")" "suspend|user|1 resume|user|1 "
}

t_hook_ipc_fork_child() {	# a child forked (no exec) after a CUDA IPC export keeps none of that memory across a suspend
	[ -x "$FAKE_JOB" ] || { fail "build tests/fake_job first"; return; }
	ckpt_config
	start_nvqd || return
	local a p q c
	a=$(fsubmit -m 1G -o "$T/a.out" "$FAKE_JOB" ipc-fork 8388608 5)
	wait_field "$a" hook_pids '^[0-9]+,[0-9]+$' || return
	p=$(field "$a" hook_pids); q=${p#*,}; p=${p%,*}
	for c in $(seq 100); do grep -q "^forked" "$T/a.out" && break; sleep 0.05; done
	c=$(sed -n 's/^forked //p' "$T/a.out")
	expect_match "the child was forked" "$c" '^[0-9]+$'
	suspend_round "$a" vmm_held "$p" "$q" "$c"	# the forked child too
	nvq wait "$a" > /dev/null
	expect_match "it was shared before and after" "$(tr '\n' ' ' < "$T/a.out")" \
	    "child read ok ipc ok 8388608 $"
	expect_eq "it completed" "$(field "$a" state)" COMPLETED
}

t_hook_export_refused() {	# memory the job shares by the driver's means (NCCL's with offload off, legacy IPC): the suspend is refused untouched
	[ -x "$FAKE_JOB" ] || { fail "build tests/fake_job first"; return; }
	# with offload on, the hooks move NCCL's way of sharing themselves (t_nccl.sh)
	ckpt_config "[scheduler]" "offload = off"
	start_nvqd || return
	local a b
	a=$(fsubmit -m 1G "$FAKE_JOB" export 4194304 4)
	wait_field "$a" hook_pids '^[0-9]+$' || return
	sleep 0.5	# the report that says so: at most one link tick behind
	expect_eq "nvq suspend is refused, and says why" "$(nvq suspend "$a" 2>&1)" "nvq: cannot \
suspend job $a: job $a's processes share 4M of GPU memory nvq cannot move (the driver's \
own CUDA IPC handles: allocations under 2 MiB, or all with offload off; cuMemExportToShareableHandle while \
[scheduler] offload is off; or memory of a process that has ended): it cannot be suspended \
and runs on untouched; \`nvq requeue $a\` stops it and queues it again, and a \
higher-priority job that needs its memory stops it with its --signal and cancels it (no \
--requeue)"
	expect_eq "it runs on" "$(field "$a" state)" RUNNING
	nvq wait "$a"
	expect_eq "and held its memory to the end" "$(nvq log "$a" | tr '\n' ' ')" "exported ok released ok "
	expect_eq "nothing was checkpointed" "$(switches "$a")" ""
	# the driver's own IPC handle of a small allocation: its checkpoint cannot restore that
	b=$(fsubmit -m 1G "$FAKE_JOB" ipc-driver 1048576 3)
	wait_field "$b" hook_pids '^[0-9]+$' || return
	sleep 0.5
	expect_match "refused too" "$(nvq suspend "$b" 2>&1)" \
	    "^nvq: cannot suspend job $b: job $b's processes share 1M of GPU memory nvq cannot move "
	nvq wait "$b"
	expect_eq "it ran to its end" "$(nvq log "$b")" "driver handle ok"
	expect_eq "nothing of it was checkpointed" "$(switches "$b")" ""
}

t_hook_setsid() {	# a process in a session of its own (torchrun's workers) is the job's; one outside is not
	[ -x "$FAKE_JOB" ] || { fail "build tests/fake_job first"; return; }
	# cgroups off: only its ancestry makes a process in its own session the job's
	write_config "[daemon]" "cgroups = off" "[scheduler]" "revoke_timeout = 2s"
	start_nvqd || return
	local a b pid out
	a=$(fsubmit -m 1G -e "$T/a.err" setsid -w "$FAKE_JOB" launch 30 "$T/a")
	wait_count "$T/a" || return
	wait_field "$a" hook_pids '^[0-9]+$' || return
	pid=$(field "$a" hook_pids)
	expect_eq "the linked process leads a session of its own" \
	    "$(ps -o sid= -p "$pid" | tr -d ' ')" "$pid"
	wait_field "$a" gpu_used '^67108864$'
	out=$(nvq hold "$a")
	expect_eq "nvq hold waits for its drain" "$out" "job $a held: its GPU work has drained"
	expect_eq "it launches nothing while held" "$(growing "$T/a" 0.6)" still
	nvq release "$a" > /dev/null
	expect_eq "and again once released" "$(growing "$T/a" 0.4)" grows
	# two processes, each in a session of its own, share the job's 1G
	b=$(fsubmit -m 1G -e "$T/b.err" sh -c "setsid -w $FAKE_JOB alloc 734003200 3 & sleep 1;
	    setsid -w $FAKE_JOB alloc 734003200 0; wait")
	nvq wait "$b"
	expect_eq "700M, then 700M refused" "$(nvq log "$b" | tr '\n' ' ')" "alloc ok alloc oom "
	expect_eq "no refusal on the jobs' stderr" "$(cat "$T/a.err" "$T/b.err" | grep -c refused)" 0
	# a process of the same user outside the job, posing as one of its processes
	LD_PRELOAD=$ROOT/$BUILD/libnvq-hook.so NVQ_HOOK_SOCKET=$T/sock NVQ_JOB_ID=$a \
	    LD_LIBRARY_PATH=$FAKE_LIB "$FAKE_JOB" alloc 1048576 2 > /dev/null 2> "$T/out.err"
	expect_eq "one line says it was refused" "$(grep -c "nvqd refused this process's link" \
	    "$T/out.err")" 1
	expect_match "why" "$(cat "$T/out.err")" "is not part of job $a"
	expect_eq "only the job's process is linked" "$(field "$a" hook_pids)" "$pid"
	nvq cancel "$a" > /dev/null
}

t_hook_reconnect() {	# jobs run on while nvqd is away (run) or wait for it (wait)
	write_config
	start_nvqd || return
	local a b
	a=$(fsubmit -m 1G "$FAKE_JOB" launch 20 "$T/a")
	b=$(NVQ_HOOK_ON_DISCONNECT=wait fsubmit -m 1G "$FAKE_JOB" launch 20 "$T/b")
	wait_count "$T/a" && wait_count "$T/b" || return
	wait_field "$b" hook_pids '^[0-9]+$'
	kill -9 "$NVQD_PID"; wait "$NVQD_PID" 2>/dev/null; NVQD_PID=""
	sleep 0.3
	expect_eq "run: goes on without nvqd" "$(growing "$T/a" 0.5)" grows
	expect_eq "wait: stops without nvqd" "$(growing "$T/b" 0.5)" still
	start_nvqd || return
	wait_field "$a" hook_pids '^[0-9]+$'
	wait_field "$b" hook_pids '^[0-9]+$'
	expect_eq "wait: resumes once nvqd is back" "$(growing "$T/b" 0.4)" grows
	nvq hold "$a" > /dev/null
	expect_eq "the reconnected job obeys a hold" "$(growing "$T/a" 0.5)" still
	nvq cancel "$a" "$b"
}

t_hook_fork() {	# a job's forked child links on its own, with its own pid
	write_config
	start_nvqd || return
	local a
	a=$(fsubmit -m 1G "$FAKE_JOB" fork 2)
	wait_field "$a" hook_pids '^[0-9]+,[0-9]+$'
	nvq wait "$a"
	expect_eq "both ran" "$(nvq log "$a" | tr '\n' ' ')" \
	    "parent alloc ok child alloc ok child exited 0 "
	expect_eq "the job's peak adds both" "$(sqlite3 "$T/nvq.db" "SELECT peak_gpu_mem FROM
	    runs WHERE job_id = $a")" 3145728
}

t_timeslice() {	# compute = timeslice: one job at a time, turns each quantum, idle gives way
	write_config "[scheduler]" "compute = shared,0:timeslice" "quantum = 1s"
	start_nvqd || return
	local a b c ga gb both=0 i switches
	expect_match "gpus shows it" "$(nvq gpus --json)" '"compute":"timeslice"'
	a=$(fsubmit -m 1G "$FAKE_JOB" launch 30 "$T/a")
	wait_count "$T/a" || return
	b=$(fsubmit -m 1G "$FAKE_JOB" launch 30 "$T/b")
	wait_field "$b" hook_pids '^[0-9]+$'
	# over 3 s both advance, but never in the same 100 ms
	for i in $(seq 30); do
		ga=$(count "$T/a"); gb=$(count "$T/b")
		sleep 0.1
		[ "$(count "$T/a")" -gt "$ga" ] && [ "$(count "$T/b")" -gt "$gb" ] && both=$((both + 1))
	done
	expect_match "both made progress" "$(count "$T/a") $(count "$T/b")" "^[0-9]{2,} [0-9]{2,}$"
	# a switch can straddle a sample: allow one per switch
	switches=$(grep -c "lock granted" "$T/nvqd.log")
	[ "$both" -le "$switches" ] || fail "both launched in $both of 30 samples ($switches switches)"
	[ "$switches" -le 6 ] || fail "$switches switches in 3s with a 1s quantum"
	expect_match "one waits at a time" "$(nvq list)" "lock waiting"
	# an idle holder gives way at once: c sleeps, then launches
	nvq cancel "$a" "$b"; wait_state "$a" CANCELLED; wait_state "$b" CANCELLED
	a=$(fsubmit -m 1G sh -c "$FAKE_JOB alloc 1048576 30")
	wait_field "$a" lock granted
	c=$(fsubmit -m 1G "$FAKE_JOB" launch 5 "$T/c")
	wait_count "$T/c" || return
	expect_eq "idle holder gave way" "$(field "$a" lock)" waiting
	# the shared GPU 1 is not timesliced
	b=$(fsubmit -m 15G "$FAKE_JOB" launch 5 "$T/d"); wait_count "$T/d"
	expect_eq "shared GPU: granted" "$(field "$b" lock)" granted
	nvq cancel "$a" "$b" "$c"
}

t_mem_auto_oom() {	# -m auto from the last runs' peaks; a job the hook refused memory says so
	write_config "[scheduler]" "auto_margin = 10%"
	start_nvqd || return
	local a b c d e out
	out=$(nvq submit -m auto -n train true 2>&1)
	expect_eq "-m auto without history: status" "$?" 1
	expect_match "its error" "$out" "-m auto: no job of yours named \"train\", nor of this command"
	expect_match "-m auto of no GPU" "$(nvq submit -g 0 -m auto true 2>&1)" "needs -g 1 or more"
	# two successful runs (1G, 1.5G) and a failed one (2G refused under -m 1G)
	a=$(fsubmit -m 2G -n train "$FAKE_JOB" alloc 1073741824 1)
	b=$(fsubmit -m 2G -n train "$FAKE_JOB" alloc 1610612736 1)
	c=$(fsubmit -m 1G -n train "$FAKE_JOB" alloc 2147483648 1)
	wait_state "$a" COMPLETED; wait_state "$b" COMPLETED; wait_state "$c" FAILED
	expect_eq "b's peak" "$(sqlite3 "$T/nvq.db" "SELECT peak_gpu_mem FROM runs \
	    WHERE job_id = $b")" 1610612736
	out=$(LD_LIBRARY_PATH=$FAKE_LIB nvq submit -m auto -n train "$FAKE_JOB" alloc 1610612736 1)
	d=$(echo "$out" | sed -n 's/^Submitted job //p')
	expect_match "says what it chose" "$out" "-m auto: 1\.[0-9]+G, the peak of job $b \(1\.5G\) \+ 10%"
	# 1.5G + 10%, rounded up to a MiB: 1690M
	expect_eq "stored" "$(field "$d" mem_per_gpu)" $((1690 << 20))
	wait_state "$d" COMPLETED
	# the command's runs when no job has the name; --parsable keeps stdout to the id
	out=$(LD_LIBRARY_PATH=$FAKE_LIB nvq submit --parsable -m auto -n other "$FAKE_JOB" \
	    alloc 1610612736 1 2> "$T/note")
	expect_match "by command" "$(cat "$T/note")" "the peak of job $d \(1\.5G\)"
	expect_match "--parsable: the id alone" "$out" "^[0-9]+$"
	wait_state "$out" COMPLETED
	# the failed run was refused past its budget: its reason says so, and what -m would do
	expect_match "the OOM reason" "$(field "$c" reason)" \
	    "^out of GPU memory: asked 2G more with 0B of its -m 1G in use \(exit code 1\); try -m 3G$"
	# a job that handled the refusal and succeeded keeps its plain end
	e=$(fsubmit -m 1G sh -c "$FAKE_JOB alloc 2147483648 1; exit 0")
	wait_state "$e" COMPLETED
	expect_eq "COMPLETED after a refusal: no reason" "$(field "$e" reason)" ""
	# nvq show: the -m a job's peak implies; not for the one that failed of OOM
	expect_match "show: advice" "$(nvq show "$a")" \
	    "mem_advice +-m 1127M: its peak 1G \+ 10% \(it asked for 2G\)"
	expect_eq "show: no advice after OOM" "$(nvq show "$c" | grep -c mem_advice)" 0
}
