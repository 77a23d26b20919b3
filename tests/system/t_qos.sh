# t_qos.sh: priorities that cannot trample (issue 42): a user's -p orders
# only that user's jobs; another user's job is preempted only by a class
# ([qos NAME]) that preempts its class, or by root's.  Sourced by run.sh.

# qos_users: the test users, a folder they write to, and the fake checkpoint
# driver's folder open to their jobs; 0, or 1 (skipped)
qos_users() {
	[ "$(id -u)" = 0 ] && command -v setpriv > /dev/null && make_users ||
	    { skip "needs root, setpriv and useradd"; return 1; }
	[ -x "$FAKE_JOB" ] || { fail "build tests/fake_job first"; return 1; }
	chmod 755 "$T"
	mkdir -m 1777 "$T/w"
	return 0
}

# usub USER NVQ-SUBMIT-ARGS...: submit as USER (the fake CUDA library found)
usub() {
	local u=$1; shift
	as_user "$u" env LD_LIBRARY_PATH="$FAKE_LIB" FAKE_CKPT_DIR="${FAKE_CKPT_DIR:-}" \
	    "$NVQ_BIN" -s "$T/sock" submit "$@"
}

# qos_config LINES...: one 80G GPU, preempt = suspend at once, no fair share
# (so that the order between users is their submit times), and LINES
qos_config() {
	ckpt_config "[scheduler]" "preempt = suspend" "preempt_min_runtime = 0s" \
	    "fairshare = off" "$@"
	chmod 1777 "$FAKE_CKPT_DIR"
}

t_qos_trample() {	# under the defaults, B's -p 100 is refused and B's job passes and preempts nobody of A's
	qos_users || return
	qos_config
	start_nvqd || return
	local a1 a2 b out rc
	a1=$(usub nvqta --parsable -m 50G "$FAKE_JOB" launch 60 "$T/w/a1")
	wait_count "$T/w/a1" || return
	a2=$(usub nvqta --parsable -m 50G "$FAKE_JOB" launch 60 "$T/w/a2")
	out=$(usub nvqtb --parsable -m 50G -p 100 "$FAKE_JOB" launch 60 "$T/w/b" 2>&1); rc=$?
	expect_eq "B's -p 100: refused" "$rc" 1
	expect_match "in one line that says what to do" "$out" \
	    "^nvq: -p 100: priority 100 is above \[limits\] max_priority \(0\); only root may raise priority; lower your other jobs \(-p -N, --nice N\) or move one ahead with nvq top ID$"
	b=$(usub nvqtb --parsable -m 50G -p 0 "$FAKE_JOB" launch 60 "$T/w/b")
	sleep 1.5
	expect_eq "B's -p 0 job suspends nobody" "$(state "$a1") $(state "$b")" "RUNNING PENDING"
	expect_eq "nobody was switched" "$(sqlite3 "$T/nvq.db" "SELECT count(*) FROM switches")" 0
	nvq cancel "$a1" > /dev/null
	wait_state "$a2" RUNNING 20
	expect_eq "A's earlier job goes first" "$(state "$b")" PENDING
	# a user may still lower a job (--nice) and move one up among their own
	out=$(as_user nvqtb "$NVQ_BIN" -s "$T/sock" modify -p 5 "$b" 2>&1); rc=$?
	expect_eq "nor raise it with nvq modify" "$rc" 1
	expect_match "and is told why" "$out" "^nvq: -p 5: priority 5 is above .* only root may raise priority"
	out=$(as_user nvqtb "$NVQ_BIN" -s "$T/sock" modify -p -5 "$b" 2>&1)
	expect_eq "lowering is the user's" "$(field "$b" priority)" -5
	nvq cancel "$a2" "$b" > /dev/null
}

t_qos_cross_user() {	# with max_priority raised, B's higher -p orders B's jobs but preempts only B's own
	qos_users || return
	qos_config "[limits]" "max_priority = 100"
	start_nvqd || return
	local a b1 b2
	# A's job starts last: by -p alone, the most recently started would give way
	b1=$(usub nvqtb --parsable -m 30G -p 0 "$FAKE_JOB" launch 60 "$T/w/b1")
	wait_count "$T/w/b1" || return
	wait_field "$b1" hook_pids '^[0-9]+$'
	sleep 1
	a=$(usub nvqta --parsable -m 30G "$FAKE_JOB" launch 60 "$T/w/a")
	wait_count "$T/w/a" || return
	wait_field "$a" hook_pids '^[0-9]+$'
	b2=$(usub nvqtb --parsable -m 40G -p 100 "$FAKE_JOB" launch 60 "$T/w/b2")
	wait_state "$b2" RUNNING 10
	expect_eq "B's -p 100 suspended B's own lower job" "$(state "$b1")" SUSPENDED
	expect_eq "not A's, of a lower -p" "$(state "$a")" RUNNING
	expect_eq "A's job was never switched" "$(sqlite3 "$T/nvq.db" "SELECT count(*) FROM switches
	    WHERE job_id = $a")" 0
	nvq cancel "$a" "$b1" "$b2" > /dev/null
}

t_qos_class() {	# a class that preempts normal suspends A's job for B's --qos high; who may use it; shown and kept
	qos_users || return
	qos_config "[qos high]" "priority = 10" "preempts = normal" "users = nvqtb"
	start_nvqd || return
	local a b out rc
	a=$(usub nvqta --parsable -m 50G "$FAKE_JOB" launch 60 "$T/w/a")
	wait_count "$T/w/a" || return
	wait_field "$a" hook_pids '^[0-9]+$'
	out=$(usub nvqta --parsable -m 50G --qos high "$FAKE_JOB" launch 60 "$T/w/x" 2>&1); rc=$?
	expect_eq "A may not use high" "$rc" 1
	expect_eq "and is told so in one line" "$out" \
	    "nvq: --qos high: you may not use this class (its users and groups in nvq.ini); nothing was queued"
	out=$(usub nvqta --parsable -m 50G --qos nosuch true 2>&1)
	expect_eq "an unknown class: refused, the classes named" "$out" \
	    "nvq: --qos nosuch: no such class (there are: high, normal); nothing was queued"
	b=$(usub nvqtb --parsable -m 50G --qos high "$FAKE_JOB" launch 60 "$T/w/b")
	wait_state "$a" SUSPENDED 10
	wait_state "$b" RUNNING 10
	expect_match "A's job: preempted by B's" "$(nvq show "$a")" "SUSPENDED +preempted by job $b"
	expect_eq "the class in nvq show" "$(field "$b" qos) $(field "$a" qos)" "high normal"
	expect_match "and as a column" "$(nvq list --format id,qos)" "$b +high"
	# kept across a restart: the job is still of high, and still takes precedence
	stop_nvqd
	start_nvqd || return
	expect_eq "after a restart" "$(field "$b" qos)" high
	out=$(usub nvqta --parsable -m 50G "$FAKE_JOB" launch 60 "$T/w/a2")
	sleep 1
	expect_eq "the high job runs on" "$(state "$b")" RUNNING
	nvq cancel "$a" "$b" "$out" > /dev/null
}

t_qos_limits() {	# a class's max_jobs_per_user holds a user's further jobs of it back, with the reason
	qos_users || return
	write_config "[qos batch]" "max_jobs_per_user = 1" "priority = -5"
	start_nvqd || return
	local j1 j2 j3
	j1=$(usub nvqta --parsable -g 0 --qos batch sleep 30)
	j2=$(usub nvqta --parsable -g 0 --qos batch sleep 30)
	j3=$(usub nvqta --parsable -g 0 sleep 30)
	wait_state "$j1" RUNNING
	wait_state "$j3" RUNNING
	expect_eq "the second of the class waits" "$(state "$j2")" PENDING
	expect_match "and says why" "$(nvq list)" "$j2 .*qos limit \(1 running jobs of class batch per user\)"
	nvq cancel "$j1" > /dev/null
	wait_state "$j2" RUNNING
	nvq cancel "$j2" "$j3" > /dev/null
}

t_qos_config() {	# classes that cannot be: refused at start with the line's reason
	local what lines want out ini n=0
	# each: what | the INI's lines, ; between them | the error wanted (a regex)
	while IFS='|' read -r what lines want; do
		IFS=';' read -r -a ini <<< "$lines"
		write_config "${ini[@]}"
		out=$("$NVQD" -n -c "$T/nvq.ini" 2>&1)
		expect_match "$what" "$out" "$want"
		n=$((n + 1))
	done <<- 'EOF'
	a class preempting itself|[qos a];preempts = a|\[qos a\] preempts itself
	two preempting each other|[qos a];preempts = b;[qos b];preempts = a|preempt each other in a ring
	an unknown class|[qos a];preempts = zzz|\[qos a\] preempts zzz: there is no such class
	an unknown user, with its line|[qos a];users = no-such-user-nvq|nvq.ini:[0-9]+: users: no user "no-such-user-nvq"
	a default class with no section|[scheduler];default_qos = gold|default_qos = gold: there is no \[qos gold\]
	an unknown key|[qos a];colour = red|unknown key "colour" in \[qos a\]
	EOF
	expect_eq "every case was read" "$n" 6
}

t_qos_reload() {	# SIGHUP: a class's new priority reorders the waiting jobs of it
	qos_users || return
	write_config "[gpus]" "virtual = 1x16G" "[scheduler]" "fairshare = off" \
	    "[qos later]" "priority = 0"
	start_nvqd || return
	local blk a b
	blk=$(submit -m 10G sleep 30)
	wait_state "$blk" RUNNING
	a=$(usub nvqta --parsable -m 10G sleep 30)
	b=$(usub nvqtb --parsable -m 10G --qos later sleep 30)
	write_config "[gpus]" "virtual = 1x16G" "[scheduler]" "fairshare = off" \
	    "[qos first]" "priority = 0" "[qos later]" "priority = 10"
	kill -HUP "$NVQD_PID"
	sleep 0.3
	expect_match "reloaded" "$(tail -n 3 "$T/nvqd.log")" "configuration reloaded"
	nvq cancel "$blk" > /dev/null
	wait_state "$b" RUNNING
	expect_eq "the later job of the class now 10 points up goes first" "$(state "$a")" PENDING
	nvq cancel "$a" "$b" > /dev/null
}

t_qos_restart() {	# nvq restart re-checks the job's class and priority against the settings now
	qos_users || return
	write_config "[limits]" "max_priority = 10" "[qos high]" "priority = 100" "users = nvqta"
	start_nvqd || return
	local j k out rc
	j=$(usub nvqta --parsable -g 0 --qos high true)
	k=$(usub nvqta --parsable -g 0 -p 10 true)
	wait_state "$j" COMPLETED; wait_state "$k" COMPLETED
	# the admin takes the class and the raise away
	write_config "[limits]" "max_priority = 0" "[qos high]" "priority = 100" "users = root"
	kill -HUP "$NVQD_PID"
	sleep 0.3
	out=$(as_user nvqta "$NVQ_BIN" -s "$T/sock" restart "$j" 2>&1); rc=$?
	expect_eq "a class no longer yours: not restarted" "$rc,$(state "$j")" "1,COMPLETED"
	expect_match "and why" "$out" "job $j is of class high, which you may not use now"
	out=$(as_user nvqta "$NVQ_BIN" -s "$T/sock" restart "$k" 2>&1); rc=$?
	expect_eq "a priority above max_priority now: not restarted" "$rc,$(state "$k")" "1,COMPLETED"
	expect_match "and why" "$out" "job $k: -p 10: priority 10 is above \\[limits\\] max_priority \\(0\\)"
	# given back, both restart (only their owner restarts jobs: with the owner's environment)
	write_config "[limits]" "max_priority = 10" "[qos high]" "priority = 100" "users = nvqta"
	kill -HUP "$NVQD_PID"
	sleep 0.3
	expect_match "the class given back: restarted" \
	    "$(as_user nvqta "$NVQ_BIN" -s "$T/sock" restart "$j" "$k" 2>&1)" "job $k is pending again"
	wait_state "$j" COMPLETED; wait_state "$k" COMPLETED
	expect_eq "with their class and priority" "$(field "$j" qos) $(field "$k" priority)" "high 10"
}
