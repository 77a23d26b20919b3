# t_cut.sh: a consistent cut across a job's ranks (hook/cut.h): hold,
# timeslice turns and the hook's older protocol, against the fake
# libcuda's NCCL collectives (tests/hook/fake_nccl.c), whose synchronize
# and synchronous copies wait for every rank's launch.  fake_job ddp runs
# the ranks, each in a session of its own as torchrun starts them.
# Sourced by run.sh (helpers in lib.sh).

# ranks_at FILE: "R0 R1", the steps each of the two ranks has finished
ranks_at() { echo "$(count "$1.rank0") $(count "$1.rank1")"; }
# colls_at FILE: "R0 R1", the all-reduces each has launched
colls_at() { echo "$(count "$1.coll0") $(count "$1.coll1")"; }

# wait_ranks FILE N: until both ranks finished N steps or more
wait_ranks() {
	local i
	for i in $(seq 200); do
		[ "$(count "$1.rank0")" -ge "$2" ] 2>/dev/null &&
		    [ "$(count "$1.rank1")" -ge "$2" ] 2>/dev/null && return 0
		sleep 0.05
	done
	fail "$1: the ranks are at $(ranks_at "$1"), not $2"; return 1
}

# ddp_job FILE [ENV=VALUE...]: a 2-rank fake DDP job that runs until FILE.stop
ddp_job() {
	local f=$1
	shift
	env "$@" LD_LIBRARY_PATH="$FAKE_LIB" "$NVQ_BIN" -s "$T/sock" submit --parsable -g 2 -m 2G \
	    "$FAKE_JOB" ddp 2 300 "$f"
}

# ddp_stalled FILE ENV...: a 2-rank job, A, whose rank 1 sleeps before a
# collective of step 40 (FAKE_DDP_STALL in ENV), once both wait at step 39
ddp_stalled() {
	local f=$1
	shift
	A=$(ddp_job "$f" "$@")
	wait_field "$A" hook_pids '^[0-9]+,[0-9]+$' || return 1
	wait_ranks "$f" 39 || return 1
	sleep 0.3	# rank 0 launched it and waits in its copy
}

# expect_turns FILE: a DDP job's rank 0 takes 20 steps within 25 s
expect_turns() {
	local i
	for i in $(seq 250); do
		[ "$(count "$1.rank0")" -ge 20 ] && break
		sleep 0.1
	done
	expect_eq "$1 got turns" "$([ "$(count "$1.rank0")" -ge 20 ] &&
	    echo yes || echo "no: at $(count "$1.rank0") steps")" yes
}

# ddp_end ID FILE: the job ends by itself; its ranks ended after the same step
ddp_end() {
	touch "$2.stop"
	wait_state "$1" COMPLETED 20
	expect_match "every rank ended after the same step" "$(nvq log "$1" | tail -1)" '^ddp ok [0-9]+$'
}

t_cut_hold() {	# 20 holds of a 2-rank job: each drains without SIGSTOP, both ranks at the same collective
	[ -x "$FAKE_JOB" ] || { fail "build tests/fake_job first"; return; }
	write_config "[scheduler]" "revoke_timeout = 3s"
	start_nvqd || return
	local a i out later coll bad=0
	a=$(ddp_job "$T/d")
	wait_ranks "$T/d" 20 || return
	wait_field "$a" hook_pids '^[0-9]+,[0-9]+$' || return
	for i in $(seq 20); do
		out=$(nvq hold "$a")
		[ "$out" = "job $a held: its GPU work has drained" ] ||
		    { fail "hold $i: $out"; bad=1; break; }
		# A rank's step ends with its loss.item() copy: one that passed
		# the gate before the cut returns during the hold and writes its
		# count later still (0.2-0.6 s on a loaded machine), one gated
		# after it does not.  So each rank has finished the step of its
		# last all-reduce or the one before, and launches nothing more.
		sleep 0.2	# (a rank writes its counts after its calls return)
		coll=$(colls_at "$T/d")
		sleep 0.4; later=$(ranks_at "$T/d")
		[ "$coll" = "$(colls_at "$T/d")" ] || { fail "hold $i: all-reduces while held"; bad=1; }
		[ "${coll% *}" = "${coll#* }" ] ||
		    { fail "hold $i: the ranks stopped at all-reduces $coll"; bad=1; }
		{ [ "${later% *}" -le "${coll% *}" ] && [ "${later#* }" -le "${coll#* }" ] &&
		    [ "${later% *}" -ge $(( ${coll% *} - 1 )) ] &&
		    [ "${later#* }" -ge $(( ${coll#* } - 1 )) ]; } ||
		    { fail "hold $i: steps $later while held at all-reduces $coll"; bad=1; }
		nvq release "$a" > /dev/null
		wait_ranks "$T/d" $(( ${coll% *} + 3 )) || { bad=1; break; }
	done
	expect_eq "20 holds, each drained, the ranks at one collective and still" "$bad" 0
	expect_eq "no SIGSTOP" "$(grep -c SIGSTOP "$T/nvqd.log")" 0
	expect_match "the ranks ran on to the cut" "$(cat "$T/nvqd.log")" "the cut of seq [0-9]+ sent"
	ddp_end "$a" "$T/d"
}

t_cut_timeslice() {	# two 2-rank jobs on the same two timeslice GPUs take turns through cuts
	[ -x "$FAKE_JOB" ] || { fail "build tests/fake_job first"; return; }
	write_config "[scheduler]" "compute = timeslice" "quantum = 1s" "revoke_timeout = 3s"
	start_nvqd || return
	local a b i pa pb na nb only_a=0 only_b=0
	a=$(ddp_job "$T/a")
	wait_ranks "$T/a" 10 || return
	b=$(ddp_job "$T/b")
	wait_field "$b" hook_pids '^[0-9]+,[0-9]+$' || return
	# over 5 s: each makes progress while the other does not
	for i in $(seq 50); do
		pa=$(count "$T/a.rank0"); pb=$(count "$T/b.rank0")
		sleep 0.1
		na=$(count "$T/a.rank0"); nb=$(count "$T/b.rank0")
		[ "$na" -gt "$pa" ] && [ "$nb" = "$pb" ] && only_a=$((only_a + 1))
		[ "$nb" -gt "$pb" ] && [ "$na" = "$pa" ] && only_b=$((only_b + 1))
	done
	[ $only_a -ge 5 ] && [ $only_b -ge 5 ] ||
	    fail "turns: a alone in $only_a, b alone in $only_b of 50 samples"
	[ "$(grep -c "lock granted" "$T/nvqd.log")" -ge 4 ] || fail "fewer than 4 grants in 5 s"
	touch "$T/a.stop" "$T/b.stop"
	ddp_end "$a" "$T/a"
	ddp_end "$b" "$T/b"
	expect_eq "no SIGSTOP" "$(grep -c SIGSTOP "$T/nvqd.log")" 0
}

t_cut_unreached() {	# a rank that cannot reach the cut: the hold fails with why, no SIGSTOP, it runs on
	[ -x "$FAKE_JOB" ] || { fail "build tests/fake_job first"; return; }
	write_config "[scheduler]" "revoke_timeout = 2s"
	start_nvqd || return
	local a out rc pids
	# rank 1 sleeps 6 s on the CPU before the all-reduce of step 40
	a=$(ddp_job "$T/d" FAKE_DDP_STALL=1:40:6)
	wait_field "$a" hook_pids '^[0-9]+,[0-9]+$' || return
	pids=$(field "$a" hook_pids)
	wait_ranks "$T/d" 39 || return
	sleep 0.3	# rank 0 launched it and waits in its copy
	expect_eq "the ranks wait at step 39" "$(ranks_at "$T/d")" "39 39"
	out=$(nvq hold "$a" 2>&1); rc=$?
	expect_eq "nvq hold fails" "$rc" 1
	expect_match "with the one-line reason" "$out" "^nvq: job $a not held: its processes did not \
reach the same collective in 2s: process ($(echo "$pids" | tr , '|')) launched 39 of the 40 \
collectives of its communicator 0 that a peer had launched; its lock was given back$"
	expect_eq "one line" "$(echo "$out" | wc -l)" 1
	expect_eq "not held" "$(field "$a" lock)" granted
	expect_eq "not held, as stored" "$(sqlite3 "$T/nvq.db" "SELECT held FROM jobs WHERE id = $a")" 0
	expect_eq "no SIGSTOP" "$(grep -c SIGSTOP "$T/nvqd.log")" 0
	expect_match "logged" "$(cat "$T/nvqd.log")" "did not reach the same collective"
	wait_ranks "$T/d" 45 || return	# once rank 1 wakes, both run on
	ddp_end "$a" "$T/d"
}

t_cut_old_hook() {	# a process that never reports its counts (an older hook) is still stopped as before
	[ -x "$FAKE_JOB" ] || { fail "build tests/fake_job first"; return; }
	write_config "[scheduler]" "revoke_timeout = 2s"
	start_nvqd || return
	local a out
	a=$(ddp_job "$T/d" NVQ_HOOK_CUT=0 FAKE_DDP_STALL=1:40:6)
	wait_field "$a" hook_pids '^[0-9]+,[0-9]+$' || return
	wait_ranks "$T/d" 39 || return
	sleep 0.3	# rank 0 launched the all-reduce and waits in its copy: no drain
	out=$(nvq hold "$a")
	expect_eq "stopped after revoke_timeout, as before cuts" "$out" \
	    "job $a held: it did not answer in time and was stopped (SIGSTOP)"
	expect_match "logged" "$(cat "$T/nvqd.log")" "no acknowledgement of the lock in 2s"
	expect_eq "no cut asked of it" "$(grep -c "the cut of seq" "$T/nvqd.log")" 0
	nvq release "$a" > /dev/null
	wait_ranks "$T/d" 45 || return
	ddp_end "$a" "$T/d"
}

t_cut_suspend_unreached() {	# the drain before a suspend that no cut ends: a failed suspend, no SIGSTOP
	[ -x "$FAKE_JOB" ] || { fail "build tests/fake_job first"; return; }
	export FAKE_CKPT_DIR=$T/ckpt
	mkdir -p "$FAKE_CKPT_DIR"
	write_config "[gpus]" "virtual = 2x16G" "cuda_library = $FAKE_LIB/libcuda.so.1" \
	    "[scheduler]" "revoke_timeout = 2s"
	start_nvqd || return
	local a out rc
	a=$(ddp_job "$T/d" FAKE_DDP_STALL=1:40:6)
	wait_field "$a" hook_pids '^[0-9]+,[0-9]+$' || return
	wait_ranks "$T/d" 39 || return
	sleep 0.3
	out=$(nvq suspend "$a" 2>&1); rc=$?
	expect_eq "nvq suspend fails" "$rc" 1
	expect_match "saying why" "$out" "^nvq: job $a: the suspend failed: its processes did not \
reach the same collective in 2s: process [0-9]+ launched 39 of the 40 collectives .*; it runs on$"
	expect_eq "running" "$(state "$a")" RUNNING
	expect_eq "its lock is its own" "$(field "$a" lock)" granted
	expect_eq "recorded as a failed suspend" "$(switches "$a")" "suspend|user|0 "
	expect_eq "no SIGSTOP" "$(grep -c SIGSTOP "$T/nvqd.log")" 0
	wait_ranks "$T/d" 45 || return
	ddp_end "$a" "$T/d"
	unset FAKE_CKPT_DIR
}

t_cut_turns_bounded() {	# a timeslice job whose cuts never end its turns keeps the GPUs a bounded time
	[ -x "$FAKE_JOB" ] || { fail "build tests/fake_job first"; return; }
	build_hookpeer || { fail "cannot build hookpeer"; return; }
	write_config "[scheduler]" "compute = timeslice" "quantum = 1s" "revoke_timeout = 1s"
	start_nvqd || return
	local a b
	# a answers every revoke with NCCL counts and never acknowledges
	a=$(nvq submit --parsable -g 2 -m 2G "$HOOKPEER" cutter 1000 60)
	wait_field "$a" hook_pids '^[0-9]+$' || return
	wait_field "$a" lock granted || return
	b=$(ddp_job "$T/b")
	expect_turns "$T/b"
	expect_match "a's turns ended by cuts not reached first" "$(cat "$T/nvqd.log")" \
	    "job $a: its processes did not reach the same collective in 1s"
	expect_match "then it was stopped, saying why" "$(cat "$T/nvqd.log")" \
	    "job $a: no cut was reached in [0-9]+ revokes in a row: stopping its processes \(SIGSTOP\)"
	ddp_end "$b" "$T/b"
	nvq cancel "$a" > /dev/null
}

t_cut_turns_stall() {	# a timeslice job whose rank stalls before a collective: the other job still gets turns
	[ -x "$FAKE_JOB" ] || { fail "build tests/fake_job first"; return; }
	write_config "[scheduler]" "compute = timeslice" "quantum = 1s" "revoke_timeout = 1s"
	start_nvqd || return
	local a b
	# a's rank 1 sleeps 40 s on the CPU before the all-reduce of step 30;
	# rank 0 waits for it in its copy, its link busy draining
	a=$(ddp_job "$T/a" FAKE_DDP_STALL=1:30:40)
	wait_ranks "$T/a" 29 || return
	b=$(ddp_job "$T/b")
	expect_turns "$T/b"
	expect_match "a was stopped, saying why" "$(cat "$T/nvqd.log")" \
	    "job $a: .*stopping its processes \(SIGSTOP\)"
	ddp_end "$b" "$T/b"
	nvq cancel "$a" > /dev/null
}

t_cut_comm_late() {	# a second communicator first used by one rank just before a hold, not yet by the other: it drains
	[ -x "$FAKE_JOB" ] || { fail "build tests/fake_job first"; return; }
	write_config "[scheduler]" "revoke_timeout = 8s"
	start_nvqd || return
	local a out
	# from step 40 on, a second all-reduce on a second communicator; rank 1
	# sleeps 3 s on the CPU before its first one: rank 0 launched both
	ddp_stalled "$T/d" FAKE_DDP_COMM2=40 FAKE_DDP_STALL=1:40:3 || return
	a=$A
	expect_eq "the ranks wait at step 39" "$(ranks_at "$T/d")" "39 39"
	out=$(nvq hold "$a" 2>&1)
	expect_eq "the hold drains" "$out" "job $a held: its GPU work has drained"
	expect_eq "no SIGSTOP" "$(grep -c SIGSTOP "$T/nvqd.log")" 0
	expect_match "both communicators cut" "$(cat "$T/nvqd.log")" \
	    "the cut of seq [0-9]+ sent \(2 communicators\)"
	sleep 0.3
	# rank 0 finished step 40; rank 1 launched both its all-reduces and waits at its copy
	expect_eq "both launched the second's first collective" "$(ranks_at "$T/d")" "40 39"
	nvq release "$a" > /dev/null
	wait_ranks "$T/d" 45 || return
	ddp_end "$a" "$T/d"
}

t_cut_nonrank() {	# a non-rank that does not drain while the ranks run on to the cut: not stopped mid-collective
	[ -x "$FAKE_JOB" ] || { fail "build tests/fake_job first"; return; }
	write_config "[scheduler]" "revoke_timeout = 2s"
	start_nvqd || return
	local a out rc
	# a non-rank whose synchronize waits while $T/hang is there, and two
	# ranks, rank 1 sleeping 4 s on the CPU before the all-reduce of step 40
	a=$(LD_LIBRARY_PATH="$FAKE_LIB" nvq submit --parsable -g 2 -m 2G sh -c \
	    "FAKE_SYNC_HANG=$T/hang $FAKE_JOB launch 12 $T/n & FAKE_DDP_STALL=1:40:4 $FAKE_JOB ddp 2 300 $T/d; wait")
	wait_count "$T/n" || return
	wait_field "$a" hook_pids '^[0-9]+,[0-9]+,[0-9]+$' || return
	wait_ranks "$T/d" 39 || return
	touch "$T/hang"
	sleep 0.3
	out=$(nvq hold "$a" 2>&1); rc=$?
	expect_eq "nvq hold fails" "$rc" 1
	expect_match "saying why" "$out" "^nvq: job $a not held: its processes did not reach the \
same collective in 2s: process [0-9]+ launched 39 of the 40 collectives of its communicator 0 \
that a peer had launched; its lock was given back$"
	expect_eq "no SIGSTOP" "$(grep -c SIGSTOP "$T/nvqd.log")" 0
	rm -f "$T/hang"
	wait_ranks "$T/d" 45 || return	# once rank 1 wakes, both run on
	touch "$T/d.stop"
	wait_state "$a" COMPLETED 30
	expect_match "every rank ended after the same step" "$(nvq log "$a")" 'ddp ok [0-9]+'
}

t_cut_relink() {	# a rank that links again in the middle of a revoke reports and reaches the cut like the others
	[ -x "$FAKE_JOB" ] || { fail "build tests/fake_job first"; return; }
	command -v strace > /dev/null || { skip "strace is not installed"; return; }
	write_config "[scheduler]" "revoke_timeout = 8s"
	start_nvqd || return
	local a r1 spid out
	ddp_stalled "$T/d" FAKE_DDP_STALL=1:40:3 || return
	a=$A
	r1=$(count "$T/d.pid1")
	# rank 1's link loses its connection at its next read (recvmsg, which
	# takes the lc/be page's descriptor too: issue 43): the revoke's
	strace -f -qq -e trace=recvmsg -e inject=recvmsg:error=ECONNRESET:when=1 -p "$r1" \
	    -o "$T/strace.r1" 2> /dev/null &
	spid=$!
	sleep 0.5
	kill -0 "$spid" 2> /dev/null || { skip "strace cannot attach here (ptrace refused?)"; return; }
	out=$(nvq hold "$a" 2>&1)
	kill "$spid" 2> /dev/null; wait "$spid" 2> /dev/null
	expect_match "rank 1 linked again after the revoke began" "$(sed -n '/lock asked back/,$p' \
	    "$T/nvqd.log")" "job $a: process $r1 linked"
	expect_eq "the hold drains" "$out" "job $a held: its GPU work has drained"
	expect_eq "no SIGSTOP" "$(grep -c SIGSTOP "$T/nvqd.log")" 0
	nvq release "$a" > /dev/null
	wait_ranks "$T/d" 45 || return
	ddp_end "$a" "$T/d"
}
