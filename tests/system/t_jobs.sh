# t_jobs.sh: a job's life: cancel, time limits, wait and log, restarts of
# nvqd, NODE_FAIL, start tickets, pids checked before signals, cgroups, job
# policy.  Sourced by run.sh (helpers in lib.sh).

cgroup_base() {	# where nvqd makes job cgroups as root, or nothing
	[ "$(id -u)" = 0 ] || return 0
	local m
	m=$(awk '$9 == "cgroup2" { print $5; exit }' /proc/self/mountinfo)
	[ -n "$m" ] && [ -w "$m" ] && echo "$m"
}

t_cancel_tree() {	# cancel reaches every process of a job that forked
	write_config "[scheduler]" "kill_grace = 2s"
	start_nvqd || return
	local a pids
	a=$(submit -g 0 sh -c 'sleep 3171 & sleep 3172 & (sleep 3173; true) & wait')
	wait_state "$a" RUNNING; sleep 0.3
	pids=$(below "$(shim_pid "$a")" '^sleep 317[123]$')
	expect_eq "the job's processes are there" "$(wc -w <<< "$pids")" 3
	nvq cancel "$a"
	wait_state "$a" CANCELLED
	local left="" p
	for p in $pids; do [ -n "$(alive "$p")" ] && left="$left $p"; done
	expect_eq "processes left after cancel" "$left" ""
	[ -n "$left" ] && kill -9 $left
	expect_match "reason" "$(field "$a" reason)" "cancelled by"
	expect_match "cancel an ended job" "$(nvq cancel "$a" 2>&1)" "already ended \(CANCELLED\)"
}

t_timeout() {	# -t ends a job as TIMEOUT; SIGKILL after kill_grace if it resists
	write_config "[scheduler]" "kill_grace = 1s"
	start_nvqd || return
	local a b
	a=$(submit -g 0 -t 1s sleep 30)
	# a name no other run on the machine gives its sleeps
	local u="3181.$$$RANDOM"
	b=$(submit -g 0 -t 1s sh -c "trap '' TERM; sleep $u; sleep $u")
	wait_state "$b" RUNNING; sleep 0.2
	expect_eq "the TERM-proof job runs" "$(pgrep -fc "^sleep $u\$")" 1
	wait_state "$a" TIMEOUT 5
	expect_match "reason" "$(field "$a" reason)" "time limit 00:01 reached"
	wait_state "$b" TIMEOUT 6
	expect_eq "the TERM-proof job was killed" "$(pgrep -fc "^sleep $u\$")" 0
	expect_match "the log says SIGKILL" "$(cat "$T/nvqd.log")" "job $b: still running after 1s, sending SIGKILL"
	local el; el=$(awk -v s="$(field "$b" started_at)" -v e="$(field "$b" ended_at)" 'BEGIN{print e - s}')
	expect_eq "ended within limit + grace + 1s" "$(awk -v x="$el" 'BEGIN{print (x >= 1.9 && x < 3.5)}')" 1
}

t_restart() {	# queued and running jobs survive a restart of nvqd
	write_config "[gpus]" "virtual = 1x16G"
	start_nvqd || return
	local run q1 q2 ends
	run=$(submit -m 10G sh -c 'sleep 1.5; exit 3')
	wait_state "$run" RUNNING
	q1=$(submit -m 10G sh -c 'echo q1'); q2=$(submit -g 0 --after "$q1" true)
	ends=$(submit -g 0 sh -c 'sleep 0.8; exit 0')
	wait_state "$ends" RUNNING
	stop_nvqd
	sleep 1.7	# the running jobs end while nvqd is away
	start_nvqd || return
	wait_state "$run" FAILED
	expect_eq "exit code recorded while nvqd was away" "$(field "$run" exit_code)" 3
	wait_state "$ends" COMPLETED
	wait_state "$q1" COMPLETED
	wait_state "$q2" COMPLETED
	expect_eq "q1's output" "$(nvq log "$q1")" q1
	# a job still running across the restart is reattached
	run=$(submit -g 0 sh -c 'sleep 1; exit 4')
	wait_state "$run" RUNNING
	stop_nvqd; start_nvqd || return
	expect_match "reattached" "$(cat "$T/nvqd.log")" "job $run: still running .*reattached"
	wait_state "$run" FAILED 5
	expect_eq "its exit code" "$(field "$run" exit_code)" 4
	expect_eq "ran once" "$(sqlite3 "$T/nvq.db" "SELECT count(*) FROM runs WHERE job_id = $run")" 1
}

t_restart_lost_starts() {	# starts a crash cut short cost a restart one wait, not one each
	write_config
	start_nvqd || return
	local ids=() k t0 t1
	for k in 1 2 3 4 5 6; do ids+=("$(submit -g 0 --hold true)"); done
	stop_nvqd
	# as if nvqd died after its shims took their tickets, before it wrote their pids
	sqlite3 "$T/nvq.db" "UPDATE jobs SET state = 'RUNNING', held = 0, started_at = $(date +%s)
	    WHERE id IN ($(IFS=,; echo "${ids[*]}"))"
	t0=$(date +%s%N)
	start_nvqd || return
	t1=$(date +%s%N)
	echo "    restarted in $(( (t1 - t0) / 1000000 )) ms with 6 supervisors not to be found"
	expect_eq "one wait for all (under 4 s)" "$(( (t1 - t0) < 4000000000 ))" 1
	for k in "${ids[@]}"; do wait_state "$k" FAILED || return; done
	expect_match "each said gone" "$(grep -c 'its supervisor is gone' "$T/nvqd.log")" '^6$'
}

t_wait_log() {	# nvq wait's exit status, nvq log and -f, --err, -o
	write_config; start_nvqd || return
	local a b c d out
	a=$(submit -g 0 sh -c 'echo out; echo err >&2; exit 3')
	nvq wait "$a"; expect_eq "wait exits with the job's code" "$?" 3
	expect_eq "log" "$(nvq log "$a")" out
	expect_eq "log --err" "$(nvq log --err "$a")" err
	b=$(submit -g 0 sh -c 'for i in 1 2 3; do echo line$i; sleep 0.2; done')
	out=$(nvq log -f "$b")
	expect_eq "log -f follows to the end" "$out" "line1
line2
line3"
	c=$(cd "$T" && nvq submit --parsable -g 0 -o out.txt sh -c 'echo both; echo two >&2')
	nvq wait "$c"; expect_eq "wait 0" "$?" 0
	expect_eq "-o relative to the cwd, stderr follows stdout" "$(cat "$T/out.txt")" "both
two"
	d=$(submit -g 0 sh -c 'kill -9 $$')
	nvq wait "$d"; expect_eq "wait after SIGKILL" "$?" 137
	expect_match "reason" "$(field "$d" reason)" "killed by signal 9"
	local e; e=$(submit -m 3G sh -c 'echo $NVQ_JOB_ID $NVQ_GPU_MEM $CUDA_DEVICE_ORDER; echo $CUDA_VISIBLE_DEVICES')
	nvq wait "$e"
	expect_eq "the job's environment" "$(nvq log "$e")" "$e 3221225472 PCI_BUS_ID
GPU-00000000-0000-0000-0000-000000000000"
	local e0; e0=$(cd / && env -i "$NVQ_BIN" -s "$T/sock" submit --parsable -g 0 /bin/sh -c 'echo "[$HOME]"')
	nvq wait "$e0"; expect_eq "a job submitted with an empty environment runs" "$(nvq log "$e0")" "[]"
	MYVAR=hello nvq submit -g 0 --parsable sh -c 'echo $MYVAR' > "$T/id"
	nvq wait "$(cat "$T/id")"
	expect_eq "the submitted environment" "$(nvq log "$(cat "$T/id")")" hello
	expect_eq "the private database is private" "$(stat -c %a "$T/nvq.db.private")" 600
	expect_eq "the environment is not in the public database" \
	    "$(grep -c MYVAR=hello "$T/nvq.db" "$T/nvq.db-wal" 2>/dev/null | awk -F: '{s += $2} END {print s}')" 0
	expect_eq "nor kept after the job ended" "$(envs_left)" 0
	expect_eq "the user's spool folder is private" "$(stat -c %a "$T/spool/$(id -u)")" 700
	out=$(nvq history --since 1h | wc -l)
	expect_eq "history lines (header + 7 jobs)" "$out" 8
	expect_match "history --json" "$(nvq history --state FAILED --json)" "\"exit_code\":3"
	expect_match "list -u" "$(nvq list -a -u nobody)" "^ID +USER"
	expect_eq "list -u nobody is empty" "$(nvq list -a -u nobody | wc -l)" 1
}

t_node_fail() {	# a job that ran when the machine restarted: NODE_FAIL, or PENDING with --requeue
	write_config; start_nvqd || return
	local a b apid bpid
	a=$(submit -g 0 --requeue sh -c 'echo run; sleep 3100')
	b=$(submit -g 0 sleep 3101)
	wait_state "$a" RUNNING; wait_state "$b" RUNNING
	apid=$(shim_pid "$a"); bpid=$(shim_pid "$b")
	stop_nvqd
	# what a reboot does: every process gone, and another boot id
	kill -9 $(tree_of "$apid" "$bpid"); sleep 0.3
	sqlite3 "$T/nvq.db" "UPDATE jobs SET boot_id = 'an-earlier-boot' WHERE state = 'RUNNING'"
	start_nvqd || return
	wait_state "$b" NODE_FAIL
	expect_match "its reason" "$(field "$b" reason)" "the machine restarted while it ran"
	wait_state "$a" RUNNING
	expect_eq "requeued once" "$(field "$a" restarts)" 1
	expect_eq "its events" "$(sqlite3 "$T/nvq.db" "SELECT group_concat(state, ' ') FROM
	    (SELECT state FROM events WHERE job_id = $a ORDER BY id)")" "PENDING RUNNING NODE_FAIL PENDING RUNNING"
	expect_eq "its runs" "$(sqlite3 "$T/nvq.db" "SELECT group_concat(coalesce(state, 'open'), ' ')
	    FROM (SELECT state FROM runs WHERE job_id = $a ORDER BY id)")" "NODE_FAIL open"
	expect_eq "listed as NODE_FAIL" "$(nvq list -a --state NODE_FAIL --json | grep -o '"id":[0-9]*')" "\"id\":$b"
	nvq cancel "$a"; wait_state "$a" CANCELLED
}

t_wait_prompt() {	# nvq wait returns as its job ends (pushed by nvqd's watch), or polls where it leaves the watches to nvq top
	write_config; start_nvqd || return
	local a b long t lag i out pids=""
	a=$(submit -g 0 sleep 0.7)
	nvq wait "$a"; t=$(date +%s.%N)
	lag=$(awk -v t="$t" -v e="$(field "$a" ended_at)" 'BEGIN { print t - e }')
	# polling, it was 0.3 to 0.5 s: its looks were 0.62 and 1.12 s after the start
	expect_eq "nvq wait returned $lag s after the end (< 0.2)" "$(awk -v x="$lag" 'BEGIN { print (x < 0.2) }')" 1
	# a user's waits take 4 watches at most (nvq top keeps room): a fifth polls, and returns all the same
	long=$(submit -g 0 sleep 60)
	for i in 1 2 3 4; do nvq wait "$long" > /dev/null 2>&1 & pids+=" $!"; done
	sleep 0.5
	b=$(submit -g 0 sleep 0.3)
	timeout 10 "$NVQ_BIN" -s "$T/sock" wait "$b" 2> "$T/wait5"
	expect_eq "the fifth wait returns the job's status" "$?" 0
	expect_eq "and says nothing of the refused watch" "$(cat "$T/wait5")" ""
	# a watch that can do without (MSG_WATCH, 33, with "yield" 1), asked by hand: refused
	out=$(printf '\x00\x00\x00\x0f\x00\x02\x00\x21i\x05yield\x00\x00\x00\x00\x00\x00\x00\x01' |
	    "$HELPERS/rawsend" "$T/sock")
	expect_match "nvqd refuses a fifth" "$out" "as many watchers as it takes \(128, 4 per user, of those"
	# and nvq top, on a terminal, still follows the queue (q ends it)
	out=$(python3 tests/system/pty_run.py 24 100 "ELAPSED" 'q' -- "$NVQ_BIN" -s "$T/sock" top)
	expect_eq "nvq top beside them: its status" "$(echo "$out" | head -1)" 0
	expect_match "and its screen" "$out" "1 running"
	nvq cancel "$long" > /dev/null
	for i in $pids; do wait "$i"; echo $?; done > "$T/rcs"
	expect_eq "the four waits ended with the cancel (125)" "$(sort -u "$T/rcs")" 125
}

t_exec_lookup() {	# the job's command is looked up as glibc's execvp would: PATH, "#!"-less scripts, 126/127
	write_config; start_nvqd || return
	local a b c d
	mkdir -p "$T/bin" "$T/bin2"
	printf 'echo "plain $# $1 $2"\n' > "$T/bin/plain"; chmod 755 "$T/bin/plain"
	printf 'echo no\n' > "$T/bin/ro"; chmod 644 "$T/bin/ro"
	printf 'echo "ro $1"\n' > "$T/bin2/ro"; chmod 755 "$T/bin2/ro"
	a=$(PATH="$T/bin:$PATH" submit -g 0 plain x y)
	nvq wait "$a"; expect_eq "a script without #!, by name: /bin/sh runs it" "$(nvq log "$a")" "plain 2 x y"
	b=$(submit -g 0 "$T/bin/plain" z)
	nvq wait "$b"; expect_eq "and by its path" "$(nvq log "$b")" "plain 1 z "
	c=$(PATH="$T/bin:$T/bin2:$PATH" submit -g 0 ro 1)
	nvq wait "$c"; expect_eq "one that cannot be run is passed over" "$(nvq log "$c")" "ro 1"
	d=$(PATH="$T/bin:/nonexistent" submit -g 0 ro)
	wait_state "$d" FAILED
	expect_eq "found, but none can be run: 126" "$(field "$d" exit_code)" 126
	expect_match "saying why" "$(field "$d" reason)" "cannot execute ro: Permission denied"
	d=$(PATH="$T/bin" submit -g 0 nvq-no-such-command)
	wait_state "$d" FAILED
	expect_eq "found nowhere: 127" "$(field "$d" exit_code)" 127
	expect_match "saying why" "$(field "$d" reason)" "cannot execute nvq-no-such-command: No such file"
}

t_ticket() {	# a shim runs its job only if it takes its own start's ticket
	local shim="$ROOT/$BUILD/nvq-shim" d="$T/st"
	mkdir -p "$d"
	touch "$d/7.new.ticket"
	# the shim of a start nvqd voided, slow to begin: the next start's ticket is not its own
	"$shim" -s "$d/7" -t old -o "$d/out" -e "$d/err" -d / -u root -U 0 -G 0 -- \
	    sh -c "echo ran >> '$d/ran'"
	expect_eq "a voided start exits quietly" "$?" 0
	expect_eq "and runs nothing" "$(cat "$d/ran" 2> /dev/null)" ""
	expect_eq "nor records an end" "$([ -e "$d/7" ] && echo yes)" ""
	expect_eq "the next start's ticket stays" "$(ls "$d")" "7.new.ticket"
	"$shim" -s "$d/7" -t new -o "$d/out" -e "$d/err" -d / -u root -U 0 -G 0 -- \
	    sh -c "echo ran >> '$d/ran'; exit 3"
	expect_eq "its own ticket: it runs once" "$(cat "$d/ran")" ran
	expect_match "and records the end" "$(cat "$d/7")" "exit 3"
	expect_eq "having taken the ticket" "$([ -e "$d/7.new.ticket" ] && echo yes)" ""
	"$shim" -s "$d/7" -o "$d/out" -e "$d/err" -d / -u root -U 0 -G 0 -- true 2> "$d/usage"
	expect_eq "a shim without a ticket is refused" "$?" 2
}

t_same_process() {	# a pid from the database is signalled only if it is still the shim
	write_config; start_nvqd || return
	local a shim decoy
	a=$(submit -g 0 sh -c 'echo $$ > '"$T"'/jobpid; sleep 3102')
	wait_state "$a" RUNNING; shim=$(shim_pid "$a")
	stop_nvqd
	kill -9 "$shim"
	sleep 3103 & decoy=$!
	# the shim's pid now names another process (as after pid reuse)
	sqlite3 "$T/nvq.db" "UPDATE jobs SET pid = $decoy WHERE id = $a"
	start_nvqd || return
	wait_state "$a" FAILED
	expect_match "its reason" "$(field "$a" reason)" "its supervisor ended without recording"
	expect_eq "the other process was not signalled" "$(alive $decoy)" alive
	kill "$decoy"; wait "$decoy" 2>/dev/null
	if [ -n "$(cgroup_base)" ]; then
		sleep 0.2
		expect_eq "what the job left without its shim was killed" \
		    "$(alive "$(cat "$T/jobpid")")" ""
	else
		# its sleep, by the pid of the shell that started it
		pkill -P "$(cat "$T/jobpid")" sleep
		kill "$(cat "$T/jobpid")" 2> /dev/null
	fi
}

t_cgroup() {	# a job is all its processes: one that left its process group is signalled too
	if [ -z "$(cgroup_base)" ]; then
		skip "needs root and a writable cgroup2 mount"
		return
	fi
	write_config; start_nvqd || return
	local a cg pid
	a=$(submit -g 0 sh -c 'setsid sh -c "trap \"echo got-term > '"$T"'/esc; exit 0\" TERM;
	    echo \$\$ > '"$T"'/escpid; while :; do sleep 0.1; done" & sleep 3104')
	wait_state "$a" RUNNING
	for i in $(seq 50); do [ -s "$T/escpid" ] && break; sleep 0.05; done
	pid=$(cat "$T/escpid")
	cg=$(sqlite3 "$T/nvq.db" "SELECT cgroup FROM jobs WHERE id = $a")
	expect_match "its cgroup" "$cg" "/nvq/job-$a-[0-9]+$"
	expect_match "the escaped process is in it" "$(cat /proc/$pid/cgroup)" "0::.*/nvq/job-$a-"
	expect_eq "in another process group" "$(( $(ps -o pgid= -p "$pid") != $(shim_pid "$a") ))" 1
	nvq cancel "$a"; wait_state "$a" CANCELLED
	expect_eq "it got SIGTERM too" "$(cat "$T/esc" 2>/dev/null)" got-term
	expect_eq "nothing of it is left" "$(alive "$pid")" ""
	expect_eq "its cgroup is gone" "$([ -d "$cg" ] && echo there)" ""
	# kill -9 escapes nothing either: SIGKILL for a job that ignores SIGTERM
	write_config "[scheduler]" "kill_grace = 1s"; stop_nvqd; start_nvqd || return
	a=$(submit -g 0 sh -c 'setsid sh -c "trap \"\" TERM; echo \$\$ > '"$T"'/escpid2;
	    while :; do sleep 0.1; done" & trap "" TERM; sleep 3105; sleep 3105')
	wait_state "$a" RUNNING
	for i in $(seq 50); do [ -s "$T/escpid2" ] && break; sleep 0.05; done
	nvq cancel "$a"; wait_state "$a" CANCELLED 5
	expect_eq "killed after the grace" "$(alive "$(cat "$T/escpid2")")" ""
}

t_cgroup_born() {	# a job's process is born in its cgroup (clone3), not moved there through cgroup.procs
	if [ -z "$(cgroup_base)" ]; then
		skip "needs root and a writable cgroup2 mount"
		return
	fi
	command -v strace > /dev/null || { skip "strace is not installed"; return; }
	write_config; start_nvqd || return
	local a b spid
	# from nvqd's first spawn on: the shims of both jobs, the second one a standby
	strace -f -e trace=clone3,openat -p "$NVQD_PID" -o "$T/strace.born" 2> /dev/null &
	spid=$!; sleep 0.5
	kill -0 "$spid" 2> /dev/null || { skip "strace cannot attach here (ptrace refused?)"; return; }
	a=$(submit -g 0 cat /proc/self/cgroup); nvq wait "$a" > /dev/null
	b=$(submit -g 0 cat /proc/self/cgroup); nvq wait "$b" > /dev/null
	kill -INT "$spid"; wait "$spid" 2> /dev/null
	expect_match "the first job ran in its cgroup" "$(nvq log "$a")" "0::.*/nvq/job-$a-[0-9]+$"
	expect_match "the second too" "$(nvq log "$b")" "0::.*/nvq/job-$b-[0-9]+$"
	expect_eq "each was born there" "$(grep -c 'clone3(.*CLONE_INTO_CGROUP' "$T/strace.born")" 2
	# in the cgroup v2 hierarchy; a job's -c and --mem on cgroup v1 (a hybrid host) join
	# its v1 cpu and memory folders, which clone3 cannot be born into
	local v2; v2=$(findmnt -n -t cgroup2 -o TARGET | head -1)
	expect_eq "none was moved" "$(grep -c "\"$v2/.*cgroup.procs\"" "$T/strace.born")" 0
}

t_job_policy() {	# umask, rlimits and max_priority come from the configuration
	write_config "[limits]" "umask = 077" "rlimits = core=0, nofile=64:128" "max_priority = 10"
	umask 002
	start_nvqd || return
	umask 022
	local a out
	a=$(submit -g 0 sh -c 'umask; ulimit -Sn; ulimit -Hn; ulimit -c; echo x > '"$T"'/made')
	wait_state "$a" COMPLETED
	expect_eq "umask and limits" "$(nvq log "$a" | tr '\n' ' ')" "0077 64 128 0 "
	expect_eq "files it makes" "$(stat -c %a "$T/made")" 600
	if [ "$(id -u)" = 0 ] && command -v setpriv > /dev/null; then
		chmod 755 "$T"
		out=$(cd /tmp && setpriv --reuid=65534 --regid=65534 --clear-groups -- \
		    "$NVQ_BIN" -s "$T/sock" submit -g 0 -p 11 true 2>&1)
		expect_eq "above max_priority: refused" "$?" 1
		expect_match "and why" "$out" "priority 11 is above \[limits\] max_priority \(10\)"
		out=$(cd /tmp && setpriv --reuid=65534 --regid=65534 --clear-groups -- \
		    "$NVQ_BIN" -s "$T/sock" submit --parsable -g 0 -p 10 true 2>&1)
		expect_match "at max_priority: queued" "$out" "^[0-9]+$"
	fi
	expect_match "root may go higher" "$(submit -g 0 -p 500 true)" "^[0-9]+$"
	nvq submit -g 0 -p 1000001 true 2>/dev/null; expect_eq "out of range" "$?" 2
}

array_peak() {	# ARRAY N: "PEAK DONE": most of its tasks seen RUNNING at once, and how many COMPLETED (within 10 s)
	local most=0 now done=0 i
	for i in $(seq 100); do
		now=$(sqlite3 "$T/nvq.db" "SELECT count(*) FROM jobs WHERE array_id = $1 AND state = 'RUNNING'")
		[ "$now" -gt "$most" ] && most=$now
		done=$(sqlite3 "$T/nvq.db" "SELECT count(*) FROM jobs WHERE array_id = $1 AND state = 'COMPLETED'")
		[ "$done" = "$2" ] && break
		sleep 0.1
	done
	echo "$most $done"
}

t_array() {	# --array and --stdin: one submit, one commit; indexes, %N, %A/%a, folding, cancel A_
	write_config "[limits]" "max_running_jobs = 50"
	start_nvqd || return
	local a b c out n
	a=$(submit -g 0 --array 0-9:3,20%2 -o "$T/o.%A_%a" sh -c 'echo "$NVQ_ARRAY_ID $NVQ_ARRAY_INDEX"; sleep 0.4')
	expect_eq "5 tasks, consecutive ids, the array's is the first's" \
	    "$(sqlite3 "$T/nvq.db" "SELECT group_concat(id || ':' || array_index, ' ') FROM jobs WHERE array_id = $a")" \
	    "$a:0 $((a + 1)):3 $((a + 2)):6 $((a + 3)):9 $((a + 4)):20"
	# %2: never more than 2 of them at once, though 50 may run
	expect_eq "at most 2 at once (%2), then all 5 COMPLETED" "$(array_peak "$a" 5)" "2 5"
	expect_eq "each task's NVQ_ARRAY_ID and _INDEX, in its %A_%a file" \
	    "$(cat "$T/o.${a}_0" "$T/o.${a}_9" "$T/o.${a}_20")" "$a 0"$'\n'"$a 9"$'\n'"$a 20"
	# --stdin: a task per line, blank lines skipped, each run by /bin/sh -c
	b=$(printf 'echo one > %s/s1\n\n  \necho "two  words" > %s/s2\n' "$T" "$T" | nvq submit --parsable -g 0 --stdin)
	wait_state "$((b + 1))" COMPLETED
	expect_eq "--stdin: two tasks" "$(sqlite3 "$T/nvq.db" "SELECT count(*) FROM jobs WHERE array_id = $b")" 2
	expect_eq "--stdin: the lines ran" "$(cat "$T/s1" "$T/s2")" "one"$'\n'"two  words"
	expect_eq "--stdin: the command is the line" \
	    "$(sqlite3 "$T/nvq.db" "SELECT command FROM jobs WHERE id = $((b + 1))")" 'echo "two  words" > '"$T"/s2
	# pending tasks fold into one line of nvq list, -r shows each; A_ cancels them all
	c=$(submit -g 0 --array 0-199%1 sleep 30)
	wait_state "$c" RUNNING
	out=$(nvq list)
	expect_match "folded" "$out" "${c}_\[1-199\] .*199 tasks: array limit \(1 of array $c at once\)"
	expect_eq "-r: a line per task" "$(nvq list -r | grep -c "sleep\[")" 200
	# hold A_ and release A_: the pending tasks, in one request; the running one's lock
	out=$(ASAN_OPTIONS=detect_leaks=0 strace -f -e trace=connect -o "$T/strace.hold" "$NVQ_BIN" -s "$T/sock" hold "${c}_")
	# one request for all 200, then a wait for the running task's lock
	n=$(grep -c 'connect(' "$T/strace.hold")
	[ "$n" -le 3 ] || fail "hold A_: $n connections, not one request"
	expect_eq "hold A_: 199 pending tasks held" "$(echo "$out" | grep -c "held: it does not start")" 199
	expect_eq "held in the database" "$(sqlite3 "$T/nvq.db" \
	    "SELECT count(*) FROM jobs WHERE array_id = $c AND held = 1")" 200
	out=$(nvq hold "${c}_" 2>&1)
	expect_eq "hold A_ again: none done" "$?" 1
	expect_match "its error" "$out" "no task of array $c was done: job $c is held already"
	expect_match "suspend A_ of no GPU" "$(nvq suspend "${c}_" 2>&1)" "no task of array $c was done"
	nvq release "${c}_" > /dev/null
	expect_eq "released" "$(sqlite3 "$T/nvq.db" \
	    "SELECT count(*) FROM jobs WHERE array_id = $c AND held = 1")" 0
	out=$(ASAN_OPTIONS=detect_leaks=0 strace -f -e trace=connect -o "$T/strace.cancel" "$NVQ_BIN" -s "$T/sock" cancel "${c}_")
	expect_eq "cancel A_: one request" "$(grep -c 'connect(' "$T/strace.cancel")" 1
	# the running task is CANCELLED once its supervisor has ended it, after the reply
	wait_state "$c" CANCELLED
	n=$(sqlite3 "$T/nvq.db" "SELECT count(*) FROM jobs WHERE array_id = $c AND state = 'CANCELLED'")
	expect_eq "A_ cancelled all 200" "$n" 200
	wait_state "$c" CANCELLED
	expect_match "cancel A_ again" "$(nvq cancel "${c}_" 2>&1)" "array $c has no pending or running task"
	expect_match "not an array" "$(nvq cancel 999999_ 2>&1)" "no such array 999999"
	# bad specs: clear errors, nothing stored
	n=$(sqlite3 "$T/nvq.db" "SELECT count(*) FROM jobs")
	out=$(nvq submit --array 5-2 true 2>&1); expect_match "reversed range" "$out" "not a range"
	out=$(nvq submit --array 1,1 true 2>&1); expect_match "twice" "$out" "index 1 is given twice"
	out=$(nvq submit --array 0-200000 true 2>&1); expect_match "too many" "$out" "over 100000 tasks"
	out=$(nvq submit --array 0-3%0 true 2>&1); expect_match "bad %N" "$out" "not a number of tasks at once"
	out=$(nvq submit --stdin true < /dev/null 2>&1); expect_match "stdin and a command" "$out" "give no command"
	out=$(nvq submit --stdin < /dev/null 2>&1); expect_match "empty stdin" "$out" "no commands"
	expect_eq "nothing stored by the bad submits" "$(sqlite3 "$T/nvq.db" "SELECT count(*) FROM jobs")" "$n"
	# nvqd restarted: the limit holds for what was stored
	c=$(submit -g 0 --array 0-5%2 sleep 0.5)
	stop_nvqd; start_nvqd || return
	expect_eq "after a restart, still at most 2 at once, then all 6 COMPLETED" \
	    "$(array_peak "$c" 6)" "2 6"
}

# the standby shims waiting (nvqd spawns one on its thread pool after a start: a second at most)
standbys() {
	local i s
	for i in $(seq 50); do
		s=$(pgrep -P "$NVQD_PID" -f '^nvq-shim -W$') && break
		sleep 0.02
	done
	echo $s
}

t_standby() {	# the next job's shim waits ready (nvq-shim -W); one signalled by hand ends and is replaced; none outlives nvqd
	write_config; start_nvqd || return
	local a b c sb sb2 sb3
	a=$(submit -g 0 true); nvq wait "$a" > /dev/null
	sb=$(standbys)
	expect_eq "after a start, one standby waits" "$(echo $sb | wc -w)" 1
	expect_eq "in a session of its own" "$(ps -o sid= -p "$sb" | tr -d ' ')" "$sb"
	b=$(submit -g 0 sh -c 'echo $PPID; exec sleep 1'); wait_state "$b" RUNNING
	expect_eq "recorded with the next job's start" "$(shim_pid "$b")" "$sb"
	nvq wait "$b" > /dev/null
	expect_eq "it was that job's supervisor" "$(nvq log "$b")" "$sb"
	expect_eq "which completed" "$(state "$b")" COMPLETED
	sb2=$(standbys)
	expect_eq "another one waits" "$(echo $sb2 | wc -w)" 1
	# a signal to the standby itself ends it; it is not kept for the next job
	kill -TERM "$sb2"; sleep 0.1
	expect_eq "a standby signalled ends" "$(alive "$sb2")" ""
	c=$(submit -g 0 sh -c 'echo $PPID'); nvq wait "$c" > /dev/null
	expect_eq "a job starts without it, and is not signalled" "$(state "$c")" COMPLETED
	expect_eq "under a shim spawned for it" "$(( $(nvq log "$c") > 0 && $(nvq log "$c") != sb2 ))" 1
	sb3=$(standbys)
	expect_eq "and a new one waits" "$(echo $sb3 | wc -w)" 1
	stop_nvqd; sleep 0.1
	expect_eq "it ends with nvqd" "$(alive "$sb3")" ""
}

t_status_spares() {	# an ended job's status file becomes a spare for a later start; none is left behind
	write_config "[limits]" "max_running_jobs = 1"; start_nvqd || return
	local i last
	for i in $(seq 6); do last=$(submit -g 0 true); done
	nvq wait "$last" > /dev/null
	sleep 0.2
	expect_eq "no job's status file is left" "$(ls "$T/spool/.status" | grep -cv '^spare\.')" 0
	expect_eq "they are spares" "$(( $(ls "$T/spool/.status" | grep -c '^spare\.') >= 1 ))" 1
	expect_eq "all completed" "$(sqlite3 "$T/nvq.db" "SELECT count(*) FROM jobs WHERE state = 'COMPLETED'")" 6
}

t_cancel_pending_first() {	# nvq cancel RUNNING PENDING...: none of the pending ones starts in between
	write_config "[gpus]" "virtual = 1x16G"; start_nvqd || return
	local r blk p1 p2 ran=0 states=""
	for r in $(seq 8); do
		blk=$(submit -g 1 sleep 3190); wait_state "$blk" RUNNING || return
		p1=$(submit -g 1 true); p2=$(submit -g 1 true)
		nvq cancel "$blk" "$p1" "$p2" > /dev/null
		nvq wait "$blk" "$p1" "$p2" > /dev/null 2>&1
		states="$states $(state "$blk") $(state "$p1") $(state "$p2")"
		ran=$(( ran + $(sqlite3 "$T/nvq.db" "SELECT count(*) FROM runs WHERE job_id IN ($p1, $p2)") ))
	done
	expect_eq "each one cancelled" "$(echo $states | tr ' ' '\n' | sort -u)" CANCELLED
	expect_eq "no pending one named after the running one ran" "$ran" 0
	# a bad id among them is said once, and the others are cancelled all the same
	blk=$(submit -g 1 sleep 3191); wait_state "$blk" RUNNING || return
	p1=$(submit -g 1 true)
	expect_eq "the bad id said once" "$(nvq cancel "$blk" 99999 "$p1" 2>&1 | grep -c 'no such job 99999')" 1
	nvq wait "$blk" "$p1" > /dev/null 2>&1
	expect_eq "and the others cancelled" "$(state "$blk") $(state "$p1")" "CANCELLED CANCELLED"
}

t_standby_told() {	# a standby shim tells nvqd its job's end before its own cleanup; nvqd still reaps it
	command -v strace > /dev/null || { skip "strace is not installed"; return; }
	write_config "[limits]" "max_running_jobs = 1"; start_nvqd || return
	local first i last spid
	first=$(submit -g 0 true); nvq wait "$first" > /dev/null; standbys > /dev/null
	strace -f -e trace=sendto,pwrite64,exit_group -p "$NVQD_PID" -o "$T/strace.told" 2> /dev/null &
	spid=$!; sleep 0.5
	kill -0 "$spid" 2> /dev/null || { skip "strace cannot attach here (ptrace refused?)"; return; }
	# the first under the standby that waited before strace came: not traced.  A
	# start whose standby is not back yet from the thread pool execs a shim of its
	# own, which has no one to tell; nvq wait returns as the job ends, so each
	# submit waits here for a standby spawned since the last one
	local seen=" $(standbys) " p fresh
	for i in 1 2 3 4 5; do
		last=$(submit -g 0 sh -c "exit $i"); nvq wait "$last" > /dev/null
		for _ in $(seq 100); do
			fresh=""
			for p in $(standbys); do
				case $seen in *" $p "*) ;; *) fresh=$p ;; esac
			done
			[ -n "$fresh" ] && break
			sleep 0.02
		done
		seen+="$fresh "
		sleep 0.05	# its spawn is back on the loop
	done
	sleep 0.3
	kill -INT "$spid"; wait "$spid" 2> /dev/null
	expect_eq "each told its end" "$(grep -c 'sendto(6, "e", 1' "$T/strace.told")" 4
	# the record first, then the word: a shim's pwrite of its status before its sendto
	expect_eq "after writing its record" "$(awk '/pwrite64\([0-9]+, "exit [0-9]/ { w[$1] = 1 }
	    /sendto\(6, "e"/ { if (w[$1]) n++ } END { print n + 0 }' "$T/strace.told")" 4
	expect_eq "the exit codes as recorded" "$(for i in 1 2 3 4 5; do field $((first + i)) exit_code; done | tr '\n' ' ')" "1 2 3 4 5 "
	expect_eq "no supervisor left unreaped" "$(ps -o stat= --ppid "$NVQD_PID" | grep -c Z)" 0
}

t_standby_go() {	# a standby gets its job before the start's commit, and takes the ticket only after it
	command -v strace > /dev/null || { skip "strace is not installed"; return; }
	write_config "[limits]" "max_running_jobs = 1"; start_nvqd || return
	local first i last spid
	first=$(submit -g 0 true); nvq wait "$first" > /dev/null; standbys > /dev/null
	strace -f -e trace=sendmsg,sendto,recvfrom,rename,pwrite64 -p "$NVQD_PID" \
	    -o "$T/strace.go" 2> /dev/null &
	spid=$!; sleep 0.5
	kill -0 "$spid" 2> /dev/null || { skip "strace cannot attach here (ptrace refused?)"; return; }
	for i in 1 2 3 4 5; do last=$(submit -g 0 sh -c "exit $i"); nvq wait "$last" > /dev/null; done
	sleep 0.3
	kill -INT "$spid"; wait "$spid" 2> /dev/null
	# per start: nvqd's hand-off (sendmsg), its commit (pages into nvq.db-wal),
	# its word (send "g"); the shim takes its ticket (rename) after the word
	expect_eq "hand-off, commit, word, ticket, in that order, for each start" "$(awk -v nvqd="$NVQD_PID" '
	    $1 == nvqd && /sendmsg\(/ { h = 1; c = 0; g = 0; next }
	    $1 == nvqd && h && /pwrite64\(/ && /nvq\.db-wal|, 24, / { c = 1; next }
	    $1 == nvqd && /sendto\([0-9]+, "g", 1/ { g = h && c; next }
	    /rename\(.*\.ticket", / { if (g) n++; h = 0; c = 0; g = 0 }
	    END { print n + 0 }' "$T/strace.go")" 4
	expect_eq "the exit codes as recorded" "$(for i in 1 2 3 4 5; do field $((first + i)) exit_code; done | tr '\n' ' ')" "1 2 3 4 5 "
	expect_eq "no supervisor left unreaped" "$(ps -o stat= --ppid "$NVQD_PID" | grep -c Z)" 0
}

t_standby_ahead() {	# the job next in line is handed to a standby while the one before runs; called off when it is not
	write_config "[limits]" "max_running_jobs = 1"; start_nvqd || return
	local a b c d pb pc i cg
	a=$(submit -g 0 sleep 2); wait_state "$a" RUNNING || return
	b=$(submit -g 0 sh -c 'echo $PPID; echo "$NVQ_JOB_ID" >&2; exit 3')
	pb=$(ahead_pid "$b")
	expect_match "b prepared while a runs" "$pb" '^[0-9]+$'
	expect_eq "a still running then, b pending" "$(state "$a") $(state "$b")" "RUNNING PENDING"
	expect_eq "its supervisor waits" "$(alive "$pb")" alive
	nvq wait "$b" > /dev/null
	expect_eq "b ran under it" "$(nvq log "$b")" "$pb"
	expect_eq "with its own environment and exit code" "$(nvq log --err "$b") $(field "$b" exit_code)" "$b 3"
	# the one next in line cancelled before its turn: its supervisor undoes and goes
	a=$(submit -g 0 sleep 2); wait_state "$a" RUNNING || return
	c=$(submit -g 0 sh -c "touch $T/c.ran")
	pc=$(ahead_pid "$c")
	expect_match "c prepared" "$pc" '^[0-9]+$'
	# where jobs get cgroups: its supervisor made the job's already
	cg=$(sed -n 's/.*jobs run in cgroups under //p' "$T/nvqd.log" | head -1)
	for i in $(seq 50); do [ -z "$cg" ] || [ -d "$cg/job-$c-$pc" ] && break; sleep 0.02; done
	[ -z "$cg" ] || expect_eq "its cgroup made ahead" "$( [ -d "$cg/job-$c-$pc" ] && echo there)" there
	# its process set up before its turn: its output file is there, empty
	for i in $(seq 50); do [ -e "$(field "$c" stdout_path)" ] && break; sleep 0.02; done
	expect_eq "its output made ahead, empty" "$(stat -c %s "$(field "$c" stdout_path)" 2>&1)" 0
	expect_eq "nvq log of it pending says so" "$(nvq log "$c" 2>&1; echo "rc $?")" \
	    "$(printf 'nvq: job %s is PENDING: no output yet (use -f to wait for it)\nrc 1' "$c")"
	nvq cancel "$c" > /dev/null
	for i in $(seq 50); do [ -z "$(alive "$pc")" ] && break; sleep 0.02; done
	expect_eq "its supervisor gone" "$(alive "$pc")" ""
	expect_eq "c never ran" "$(state "$c") $( [ -e "$T/c.ran" ] && echo ran)" "CANCELLED "
	expect_eq "and left no output file" "$(ls "$(field "$c" stdout_path)" "$(field "$c" stderr_path)" 2> /dev/null)" ""
	d=$(submit -g 0 sh -c 'echo $PPID')
	nvq wait "$a" "$d" > /dev/null
	expect_eq "the next one completes" "$(state "$d")" COMPLETED
	expect_eq "under a supervisor of its own" "$(( $(nvq log "$d") != pc ))" 1
	[ -z "$cg" ] || expect_eq "its cgroup removed" "$( [ -d "$cg/job-$c-$pc" ] && echo there)" ""
	expect_eq "no supervisor left unreaped" "$(ps -o stat= --ppid "$NVQD_PID" | grep -c Z)" 0
	# a file of the user's named with -o: untouched by a start called off, truncated by one that runs
	echo keep > "$T/mine.out"
	a=$(submit -g 0 sleep 2); wait_state "$a" RUNNING || return
	c=$(submit -g 0 -o "$T/mine.out" echo new)
	pc=$(ahead_pid "$c")
	expect_match "c prepared again" "$pc" '^[0-9]+$'
	for i in $(seq 50); do pgrep -P "$pc" > /dev/null && break; sleep 0.02; done
	expect_eq "its process waits, started ahead" "$(pgrep -P "$pc" | wc -l)" 1
	sleep 0.1	# time to open the file
	nvq cancel "$c" > /dev/null
	for i in $(seq 50); do [ -z "$(alive "$pc")" ] && break; sleep 0.02; done
	expect_eq "the user's file kept as it was" "$(cat "$T/mine.out")" keep
	c=$(submit -g 0 -o "$T/mine.out" echo new)
	nvq wait "$a" "$c" > /dev/null
	expect_eq "and written afresh by the job that ran" "$(cat "$T/mine.out")" new
	# nvqd killed with a job prepared: its supervisor goes; after a restart the job runs once
	a=$(submit -g 0 sleep 2); wait_state "$a" RUNNING || return
	b=$(submit -g 0 sh -c "echo run >> $T/b.runs")
	pb=$(ahead_pid "$b")
	kill -9 "$NVQD_PID"; wait "$NVQD_PID" 2> /dev/null; NVQD_PID=""
	for i in $(seq 50); do [ -z "$(alive "$pb")" ] && break; sleep 0.02; done
	expect_eq "the prepared supervisor goes with nvqd" "$(alive "$pb")" ""
	start_nvqd || return
	nvq wait "$b" > /dev/null 2>&1
	expect_eq "the job ran once after the restart" "$(state "$b") $(wc -l < "$T/b.runs")" "COMPLETED 1"
}

t_standby_void() {	# a start whose recorded shim is gone without taking its ticket runs again after a restart of nvqd
	write_config; start_nvqd || return
	local a b apid bpid
	a=$(submit -g 0 sh -c "echo run >> $T/a.runs; [ -e $T/second ] || sleep 3192")
	b=$(submit -g 0 sleep 3193)
	wait_state "$a" RUNNING; wait_state "$b" RUNNING
	apid=$(shim_pid "$a"); bpid=$(shim_pid "$b")
	stop_nvqd
	# as if nvqd had stopped after recording the standby with a's start, before
	# handing it the job: the shim gone, the ticket there
	kill -9 $(tree_of "$apid" "$bpid"); sleep 0.3
	touch "$T/second" "$T/spool/.status/$a.0.ticket"
	start_nvqd || return
	wait_state "$a" COMPLETED
	expect_eq "it ran again" "$(cat "$T/a.runs" | wc -l)" 2
	# at the restart, or when the pidfd of what is left of it (a zombie nobody reaped yet) says it ended
	expect_match "pending again" "$(grep "job $a" "$T/nvqd.log")" \
	    "job $a(: never started| UNSTARTED: its supervisor ended before it took the job); pending again"
	expect_eq "one run recorded" "$(sqlite3 "$T/nvq.db" "SELECT count(*) FROM runs WHERE job_id = $a")" 1
	# b's shim took its ticket: it started, and its end is unknown
	wait_state "$b" FAILED
	expect_match "b's reason" "$(field "$b" reason)" "its supervisor ended without recording an exit status"
}
