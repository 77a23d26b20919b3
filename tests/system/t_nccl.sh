# t_nccl.sh: memory that a job's ranks share NCCL's way (cuMem memory
# exported to a descriptor, passed over a Unix socket, imported by a peer),
# moved out and back by the hooks of every rank on suspend and resume.
# Sourced by run.sh (helpers in lib.sh).

nccl_held() {	# PID...: per process, "MAPPED,HELD": the fake driver's device memories
	local p	# it maps, and its descriptors of them; sorted
	for p in "$@"; do
		echo "$(grep -c fake-vmm "/proc/$p/maps"),$(ls -l "/proc/$p/fd" | grep -c fake-vmm)"
	done | sort | tr '\n' ' '
}

nccl_wait_out() {	# FILE REGEX: until FILE has a line that matches (10 s)
	local i
	for i in $(seq 200); do
		grep -Eq "$2" "$1" 2> /dev/null && return 0
		sleep 0.05
	done
	fail "no /$2/ in $1: $(cat "$1" 2> /dev/null | tr '\n' ' ')"; return 1
}

t_nccl_suspend() {	# NCCL's shared buffers go out of both ranks on suspend and come back shared, at the same addresses
	[ -x "$FAKE_JOB" ] || { fail "build tests/fake_job first"; return; }
	ckpt_config "[scheduler]" "preempt = suspend" "preempt_min_runtime = 0s"
	start_nvqd || return
	local a b p q before
	# the peer maps the exporter's 8M twice (its handle released), both wait 8 s
	a=$(NVQ_DEBUG=1 fsubmit -m 20G -o "$T/a.out" -e "$T/a.err" "$FAKE_JOB" nccl 8388608 8)
	wait_field "$a" hook_pids '^[0-9]+,[0-9]+$' || return
	nccl_wait_out "$T/a.out" "^peer mapped" || return
	p=$(field "$a" hook_pids); q=${p#*,}; p=${p%,*}
	before=$(nccl_held "$p" "$q")
	expect_match "both ranks hold the shared memory" "$before" '^1,[12] 2,1 $'
	sleep 0.3	# a report: at most one link tick behind
	expect_eq "nvq suspend is not refused" "$(nvq suspend "$a" 2>&1)" "job $a suspended"
	expect_eq "the device memory is gone from both ranks" "$(nccl_held "$p" "$q")" "0,0 0,0 "
	expect_eq "resume" "$(nvq resume "$a")" "job $a resumes once its memory is free on its GPUs"
	wait_state "$a" RUNNING
	expect_eq "both map it again, as before" "$(nccl_held "$p" "$q")" "$before"
	# preempted by a higher job that needs the GPU: suspended, not stopped
	b=$(submit -m 70G -p 10 sleep 0.5)
	wait_state "$b" COMPLETED 20
	wait_state "$a" RUNNING 20
	expect_match "preempted by suspend, then resumed" "$(switches "$a")" \
	    "^suspend\|user\|1 resume\|user\|1 suspend\|preempt\|1 resume\|preempt\|1 $"
	nvq wait "$a" > /dev/null
	# each read what the other wrote before, through the same pointers, and
	# the exporter saw what the peer wrote after: one memory again
	expect_eq "both ranks read each other's data after the round trips" \
	    "$(tr '\n' ' ' < "$T/a.out")" "peer mapped peer ok nccl ok 8388608 "
	expect_eq "it completed" "$(field "$a" state)" COMPLETED
	expect_match "the exporter moved it itself" "$(cat "$T/a.err")" "shared memory out: 8388608 bytes"
}

t_nccl_orphan_refused() {	# an import whose exporter ended (or freed it) cannot be moved: the suspend is refused, untouched
	[ -x "$FAKE_JOB" ] || { fail "build tests/fake_job first"; return; }
	ckpt_config
	start_nvqd || return
	local a
	a=$(fsubmit -m 1G -o "$T/a.out" sh -c "$FAKE_JOB nccl 4194304 30 orphan; sleep 30 & wait")
	nccl_wait_out "$T/a.out" "^exporter ends" || return
	wait_field "$a" hook_pids '^[0-9]+$' || return	# the exporter's link has ended
	sleep 0.5	# the report that says so: at most one link tick behind
	expect_match "nvq suspend is refused, and says why" "$(nvq suspend "$a" 2>&1)" \
	    "^nvq: cannot suspend job $a: job $a's processes share 4M of GPU memory nvq cannot move "
	expect_eq "it runs on" "$(field "$a" state)" RUNNING
	expect_eq "nothing was checkpointed" "$(switches "$a")" ""
	nvq cancel "$a" > /dev/null
	# the exporter lives on but freed the memory the peer still maps: the same
	local b
	b=$(fsubmit -m 1G -o "$T/b.out" "$FAKE_JOB" nccl 4194304 30 freed)
	nccl_wait_out "$T/b.out" "^exporter freed it" || return
	sleep 0.5
	expect_match "refused while the exporter lives, and says why" "$(nvq suspend "$b" 2>&1)" \
	    "^nvq: cannot suspend job $b: job $b's processes share 4M of GPU memory nvq cannot move "
	expect_eq "nothing of it was checkpointed" "$(switches "$b")" ""
	nvq cancel "$b" > /dev/null
}

nccl_peer_of() {	# PID PID: the one that is the peer (fake_job nccl-peer)
	local p
	for p in "$@"; do
		tr '\0' ' ' < "/proc/$p/cmdline" | grep -q nccl-peer && { echo "$p"; return; }
	done
}

t_nccl_fork_child() {	# a child forked (no exec) after the export keeps none of the shared memory across a suspend
	[ -x "$FAKE_JOB" ] || { fail "build tests/fake_job first"; return; }
	ckpt_config
	start_nvqd || return
	local a p q c
	a=$(NVQ_DEBUG=1 fsubmit -m 20G -o "$T/a.out" -e "$T/a.err" "$FAKE_JOB" nccl 8388608 6 fork)
	nccl_wait_out "$T/a.out" "^peer mapped" || return
	nccl_wait_out "$T/a.out" "^forked [0-9]+" || return
	c=$(sed -n 's/^forked //p' "$T/a.out")
	wait_field "$a" hook_pids '^[0-9]+,[0-9]+' || return
	p=$(field "$a" hook_pids | cut -d, -f1); q=$(field "$a" hook_pids | cut -d, -f2)
	sleep 0.3
	suspend_round "$a" nccl_held "$p" "$q" "$c"	# the forked child too
	nvq wait "$a" > /dev/null
	expect_match "both ranks read each other's data after the round trip" \
	    "$(tr '\n' ' ' < "$T/a.out")" "peer ok nccl ok 8388608 $"
	expect_eq "it completed" "$(field "$a" state)" COMPLETED
}

t_nccl_handle_reuse() {	# the driver gives a moved allocation's old handle value to new memory: the job gets another, and each names its own memory
	[ -x "$FAKE_JOB" ] || { fail "build tests/fake_job first"; return; }
	ckpt_config
	start_nvqd || return
	local a
	a=$(FAKE_VMM_REUSE=1 NVQ_DEBUG=1 fsubmit -m 20G -o "$T/a.out" -e "$T/a.err" "$FAKE_JOB" \
	    nccl-reuse 4194304 4)
	nccl_wait_out "$T/a.out" "^made" || return
	wait_field "$a" hook_pids '^[0-9]+$' || return
	sleep 0.3
	suspend_round "$a" nccl_held "$(field "$a" hook_pids)"
	nvq wait "$a" > /dev/null
	expect_eq "new memory never took the job's value of A, which kept its data" \
	    "$(tr '\n' ' ' < "$T/a.out")" "made reuse ok "
	expect_eq "it completed" "$(field "$a" state)" COMPLETED
}

# nccl_fail_round STEP WHO SKIP: a job whose move out fails at STEP in WHO
# (exporter or peer) after SKIP calls of it; the suspend goes on (the
# driver's checkpoint takes the rest), the resume brings it all back, and
# both ranks read each other's data after.
nccl_fail_round() {
	local a p q x
	a=$(NVQ_DEBUG=1 fsubmit -m 20G -o "$T/$1.out" -e "$T/$1.err" "$FAKE_JOB" nccl 8388608 6)
	wait_field "$a" hook_pids '^[0-9]+,[0-9]+$' || return
	nccl_wait_out "$T/$1.out" "^peer mapped" || return
	p=$(field "$a" hook_pids); q=${p#*,}; p=${p%,*}
	x=$(nccl_peer_of "$p" "$q")
	[ "$2" = exporter ] && { [ "$x" = "$p" ] && x=$q || x=$p; }
	sleep 0.3
	echo "$1 $x $3" > "$FAKE_CKPT_DIR/vmmfail"
	expect_eq "$1 fails in the $2: nvq suspend goes on" "$(nvq suspend "$a" 2>&1)" "job $a suspended"
	rm -f "$FAKE_CKPT_DIR/vmmfail"
	expect_eq "resume" "$(nvq resume "$a")" "job $a resumes once its memory is free on its GPUs"
	wait_state "$a" RUNNING 15
	expect_match "$1 failed in the $2: the memory came back to both" "$(nccl_held "$p" "$q")" \
	    '^1,[12] 2,1 $'
	nvq wait "$a" > /dev/null
	expect_eq "$1 failed in the $2: both ranks read each other's data after" \
	    "$(tr '\n' ' ' < "$T/$1.out")" "peer mapped peer ok nccl ok 8388608 "
	expect_eq "$1 failed in the $2: it completed" "$(field "$a" state)" COMPLETED
}

t_nccl_move_fails() {	# a move out that fails at unmapping (in part, or in the exporter) or copying loses nothing
	[ -x "$FAKE_JOB" ] || { fail "build tests/fake_job first"; return; }
	ckpt_config
	start_nvqd || return
	nccl_fail_round unmap peer 1
	nccl_fail_round unmap exporter 0
	nccl_fail_round dtoh exporter 0
}
