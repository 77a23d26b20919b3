# t_arrays.sh: an array as one thing, as in Slurm: A_ (every task) and A_I
# (its task of index I) wherever a job id is taken, --after A as all of
# A's tasks; Slurm's dependency kinds (-d, --dependency); nvq cancel by
# filter.  Sourced by run.sh (helpers in lib.sh).

t_arrays_after_whole() {	# --after A (an array's id) and A_ wait for every task, A_I for one; kept over a restart
	write_config; start_nvqd || return
	local a b c d out
	# task 0 ends at once, the others later
	a=$(submit -g 0 --array 0-2 sh -c 'sleep $((NVQ_ARRAY_INDEX * 2))')
	b=$(submit -g 0 --after "$a" true)
	c=$(submit -g 0 --after "${a}_" true)
	d=$(submit -g 0 --after "${a}_0" true)
	wait_state "$d" COMPLETED
	expect_eq "A_0 done: --after A_0 ran" "$(state "$d")" COMPLETED
	expect_eq "--after A (the array's id) waits for its other tasks" "$(state "$b")" PENDING
	expect_eq "--after A_ waits too" "$(state "$c")" PENDING
	expect_match "its reason" "$(nvq list | awk -v id="$b" '$1 == id')" "Dependency \(afterok:${a}_\)"
	stop_nvqd; start_nvqd || return	# what it waits for is stored
	expect_eq "stored as the whole array" \
	    "$(sqlite3 "$T/nvq.db" "SELECT after FROM jobs WHERE id IN ($b, $c, $d) ORDER BY id")" \
	    "afterok:${a}_"$'\n'"afterok:${a}_"$'\n'"afterok:$a"
	expect_eq "still waits after a restart" "$(state "$b")" PENDING
	wait_state "$b" COMPLETED 10; wait_state "$c" COMPLETED
	expect_eq "b started after the last task ended" \
	    "$(awk -v s="$(field "$b" started_at)" -v e="$(field "$((a + 2))" ended_at)" 'BEGIN{print (s >= e)}')" 1
	# a task that fails: afterok on the array can never hold
	a=$(submit -g 0 --array 0-1 sh -c 'exit $NVQ_ARRAY_INDEX')
	b=$(submit -g 0 --after "$a" true)
	wait_state "$b" CANCELLED
	expect_eq "its reason" "$(field "$b" reason)" \
	    "DependencyNeverSatisfied (afterok:${a}_: 1 task did not complete)"
	out=$(nvq submit --after "${a}_7" true 2>&1)
	expect_match "unknown A_I" "$out" "no task ${a}_7"
	expect_eq "in one line" "$(echo "$out" | wc -l)" 1
	expect_match "A_ of no array" "$(nvq submit --after "${b}_" true 2>&1)" "job $b is not an array's id"
}

t_arrays_ids() {	# A_I and A_ in show, log, wait, hold, release, modify, cancel; an unknown A_I in one line
	write_config; start_nvqd || return
	local a out rc
	a=$(submit -g 0 --array 0,3,5 -o "$T/o.%a" sh -c 'echo "task $NVQ_ARRAY_INDEX"; exit $((NVQ_ARRAY_INDEX == 3))')
	nvq wait "${a}_" > /dev/null; rc=$?
	expect_eq "wait A_: every task ended, the first failure's status" "$rc" 1
	expect_eq "no task left active" "$(sqlite3 "$T/nvq.db" "SELECT count(*) FROM jobs WHERE
	    array_id = $a AND state IN ('PENDING', 'RUNNING')")" 0
	expect_eq "show A_I: the task's job" "$(nvq show --json "${a}_5" | head -1 |
	    grep -o '"id": *[0-9]*' | head -1 | tr -dc 0-9)" "$((a + 2))"
	expect_eq "log A_I" "$(nvq log "${a}_3")" "task 3"
	out=$(nvq show "${a}_")
	expect_match "show A_: tasks per state" "$out" "array $a: 3 tasks: 2 COMPLETED, 1 FAILED"
	expect_match "then its tasks" "$out" "${a}_3 +job $((a + 1)) +FAILED"
	expect_match "show --json A_" "$(nvq show --json "${a}_")" \
	    '"array":'"$a"',"tasks":3,"states":\{"COMPLETED":2,"FAILED":1\}'
	out=$(nvq show "${a}_4" 2>&1); rc=$?
	expect_match "unknown A_I" "$out" "no task ${a}_4: array $a has no task of index 4"
	expect_eq "in one line, exit 1" "$(echo "$out" | wc -l) $rc" "1 1"
	expect_match "not an id" "$(nvq show "${a}_x" 2>&1; echo "rc=$?")" "is not a job id.*rc=2"
	nvq wait "${a}_0" "${a}_5"; expect_eq "wait A_I A_I: both COMPLETED" "$?" 0
	# a pending array: hold, modify, release and cancel one task by its index
	a=$(submit -g 0 --hold --array 0-3 true)
	expect_match "hold A_I" "$(nvq hold "${a}_2" 2>&1)" "job $((a + 2)) is held already"
	expect_match "modify A_I" "$(nvq modify -p 5 "${a}_2")" "$((a + 2))"
	expect_eq "its priority" "$(field "$((a + 2))" priority)" 5
	nvq release "${a}_2" > /dev/null
	wait_state "$((a + 2))" COMPLETED
	expect_eq "the others stay held" "$(state "$((a + 1))")" PENDING
	nvq cancel "${a}_1" > /dev/null
	expect_eq "cancel A_I" "$(state "$((a + 1))")" CANCELLED
	# A_ for modify and top: every pending task, one request
	expect_eq "modify A_: the two pending tasks" "$(nvq modify -p 3 "${a}_" | wc -l)" 2
	expect_eq "their priority" "$(sqlite3 "$T/nvq.db" "SELECT group_concat(priority) FROM jobs
	    WHERE array_id = $a AND state = 'PENDING' ORDER BY id")" "3,3"
	expect_match "top A_" "$(nvq top "${a}_")" "job $((a + 3)) is first"
	nvq cancel "${a}_" > /dev/null
	expect_eq "cancel A_: the rest" "$(sqlite3 "$T/nvq.db" "SELECT group_concat(state) FROM jobs
	    WHERE array_id = $a ORDER BY id")" "CANCELLED,CANCELLED,COMPLETED,CANCELLED"
	nvq wait "${a}_"; expect_eq "wait A_ of a cancelled array: 125" "$?" 125
}

t_deps_kinds() {	# -d: afterok, afterany, afternotok, after, ',' for all; '?' refused; the reason; never satisfied
	write_config; start_nvqd || return
	local ok bad slow b c d e f g out
	ok=$(submit -g 0 true); bad=$(submit -g 0 false); slow=$(submit -g 0 sleep 2)
	wait_state "$ok" COMPLETED; wait_state "$bad" FAILED
	b=$(submit -g 0 -d "afterany:$bad" true)
	c=$(submit -g 0 --dependency "afternotok:$bad" true)
	d=$(submit -g 0 -d "afternotok:$ok" true)
	e=$(submit -g 0 -d "afterok:$ok:$slow,afterany:$bad" true)
	f=$(submit -g 0 -d "after:$slow" true)
	g=$(submit -g 0 -d "afterany:$slow" true)
	wait_state "$b" COMPLETED; wait_state "$c" COMPLETED; wait_state "$f" COMPLETED
	expect_eq "after: ran while the job it follows runs" "$(state "$slow")" RUNNING
	expect_eq "afterok on a running job waits" "$(state "$e")" PENDING
	expect_match "its reason names what it waits for" \
	    "$(nvq list | awk -v id="$g" '$1 == id')" "Dependency \(afterany:$slow\)"
	wait_state "$d" CANCELLED
	expect_eq "afternotok of a job that completed: never" "$(field "$d" reason)" \
	    "DependencyNeverSatisfied (afternotok:$ok ended COMPLETED)"
	expect_match "nvq show says what it waits for" "$(nvq show "$e")" \
	    "after +afterok:$ok:$slow,afterany:$bad"
	wait_state "$e" COMPLETED; wait_state "$g" COMPLETED
	out=$(nvq submit -d "afterok:$ok?afterany:$bad" true 2>&1)
	expect_match "'?' refused" "$out" "'\?' \(any one of them\) is not supported"
	expect_eq "in one line" "$(echo "$out" | wc -l)" 1
	expect_match "an unknown kind" "$(nvq submit -d "aftercorr:$ok" true 2>&1; echo "rc=$?")" \
	    "\"aftercorr\": not a dependency nvq knows.*rc=2"
	expect_match "a bare id is afterany, as Slurm's" \
	    "$(sqlite3 "$T/nvq.db" "SELECT after FROM jobs WHERE id = $(submit -g 0 -d "$bad" true)")" \
	    "^afterany:$bad$"
	expect_match "--after is afterok" \
	    "$(sqlite3 "$T/nvq.db" "SELECT after FROM jobs WHERE id = $(submit -g 0 --after "$ok,$bad" true)")" \
	    "^afterok:$ok:$bad$"
	expect_match "--after takes ids only" "$(nvq submit --after "afterany:$ok" true 2>&1)" \
	    "not a list of job ids"
	expect_match "no such job" "$(nvq submit -d "afterok:999999" true 2>&1)" "no such job 999999"
}

t_cancel_filters() {	# nvq cancel --all, -u, -t/--state, -n/--name, with ids; a user's own only; root's --all alone refused
	write_config; start_nvqd || return
	local x1 x2 y1 y2 out rc u1 u2
	x1=$(submit -g 0 --hold -n x true); x2=$(submit -g 0 --hold -n x true)
	y1=$(submit -g 0 -n y sleep 30); y2=$(submit -g 0 --hold -n y true)
	wait_state "$y1" RUNNING
	out=$(nvq cancel --all 2>&1); rc=$?
	expect_match "root's --all alone: refused" "$out" "would cancel every user's jobs: add -u USER"
	expect_eq "exit 1, nothing cancelled" "$rc $(state "$x1")" "1 PENDING"
	expect_match "a finished state" "$(nvq cancel --state CD 2>&1; echo "rc=$?")" \
	    "not a state a job can be cancelled in.*rc=2"
	expect_match "not a state" "$(nvq cancel -t bogus 2>&1; echo "rc=$?")" "not a state .*rc=2"
	expect_eq "--state PD --name y: the pending y" "$(nvq cancel --state PD --name y)" "1 job cancelled"
	expect_eq "which" "$(state "$y2") $(state "$y1")" "CANCELLED RUNNING"
	expect_eq "-t r,pd -n x with an id: that one" "$(nvq cancel -t r,pd -n x "$x2")" "1 job cancelled"
	expect_eq "which" "$(state "$x2") $(state "$x1")" "CANCELLED PENDING"
	expect_eq "nothing matches: 0, exit 0" "$(nvq cancel -n nosuch; echo "rc=$?")" \
	    "0 jobs cancelled"$'\n'"rc=0"
	make_users || { skip "cannot create users"; return; }
	chmod 755 "$T"
	u1=$(as_user nvqta "$NVQ_BIN" -s "$T/sock" submit --parsable -g 0 --hold true)
	u2=$(as_user nvqta "$NVQ_BIN" -s "$T/sock" submit --parsable -g 0 sleep 30)
	wait_state "$u2" RUNNING
	out=$(as_user nvqta "$NVQ_BIN" -s "$T/sock" cancel -u root 2>&1)
	expect_match "another user's: refused as by id" "$out" "belongs to root; only its owner or root may cancel it"
	expect_eq "a user's --all: their own two" \
	    "$(as_user nvqta "$NVQ_BIN" -s "$T/sock" cancel --all)" "2 jobs cancelled"
	wait_state "$u2" CANCELLED
	expect_eq "root's stay" "$(state "$x1") $(state "$y1") $(state "$u1")" "PENDING RUNNING CANCELLED"
	expect_eq "root: -u USER" "$(nvq cancel -u root)" "2 jobs cancelled"
	wait_state "$y1" CANCELLED
}

t_deps_singleton_restart() {	# nvq restart of a finished singleton: it waits again for the running ones of its name
	write_config
	start_nvqd || return
	local a b c d out
	a=$(submit -g 0 -n single -d singleton true)
	wait_state "$a" COMPLETED
	expect_eq "stored as a singleton with nothing to wait for" \
	    "$(sqlite3 "$T/nvq.db" "SELECT after FROM jobs WHERE id = $a")" singleton
	b=$(submit -g 0 -n single -d singleton sleep 30)
	wait_state "$b" RUNNING
	out=$(nvq restart "$a" 2>&1)
	expect_eq "restarted" "$?" 0
	sleep 1
	expect_eq "it waits while the running one of its name runs" "$(state "$a")" PENDING
	expect_eq "for it" "$(sqlite3 "$T/nvq.db" "SELECT after FROM jobs WHERE id = $a")" \
	    "afterany:$b,singleton"
	# two restarted at once: the later waits for the earlier, never both for each other
	c=$(submit -g 0 -n pair -d singleton true)
	wait_state "$c" COMPLETED
	d=$(submit -g 0 -n pair -d singleton true)
	wait_state "$d" COMPLETED
	nvq restart "$c" "$d" > /dev/null
	wait_state "$c" COMPLETED
	wait_state "$d" COMPLETED
	nvq cancel "$a" "$b" > /dev/null 2>&1
	# a pending one of the name that waits for the restarted job: no cycle
	local x y z
	x=$(submit -g 0 -n cyc -d singleton sleep 30)
	wait_state "$x" RUNNING
	y=$(submit -g 0 -n cyc -d singleton true)
	z=$(submit -g 0 -n cyc -d "singleton,afterany:$x" true)	# waits for x and y
	nvq cancel "$y" > /dev/null
	wait_state "$y" CANCELLED
	nvq restart "$y" > /dev/null
	expect_eq "the restarted one waits for the running one alone" \
	    "$(sqlite3 "$T/nvq.db" "SELECT after FROM jobs WHERE id = $y")" "afterany:$x,singleton"
	nvq cancel "$x" > /dev/null
	wait_state "$y" COMPLETED
	wait_state "$z" COMPLETED
}

t_deps_singleton_batch() {	# -d singleton submits that reach nvqd in one loop turn still wait for each other
	write_config
	start_nvqd || return
	local i n max=0 pids=()
	for i in $(seq 16); do
		submit -g 0 -n single -d singleton sleep 2 > "$T/id.$i" &
		pids+=($!)
	done
	for i in "${pids[@]}"; do wait "$i"; done
	expect_eq "each but the first waits for one before it" \
	    "$(sqlite3 "$T/nvq.db" "SELECT count(*) FROM jobs WHERE after = 'singleton'")" 1
	for i in $(seq 20); do
		n=$(nvq list --format id,state,name 2> /dev/null | grep -c ' RUNNING.*single')
		[ "$n" -gt "$max" ] && max=$n
		sleep 0.2
	done
	expect_eq "one of the name runs at a time (most seen at once)" "$max" 1
	nvq cancel $(cat "$T"/id.*) > /dev/null 2>&1
}

t_deps_singleton() {	# -d singleton: after every earlier active job of its name and user (an array as a whole), one at a time
	write_config; start_nvqd || return
	local a b s1 s2 o
	a=$(submit -g 0 -n s sleep 1); b=$(submit -g 0 -n s --array 0-1 sleep 2)
	o=$(submit -g 0 -n other -d singleton true)
	s1=$(submit -g 0 -n s -d singleton sh -c "date +%s.%N > $T/s1")
	s2=$(submit -g 0 -n s --dependency singleton sh -c "date +%s.%N > $T/s2")
	wait_state "$o" COMPLETED
	expect_eq "another name does not wait" "$(state "$o")" COMPLETED
	expect_eq "what s1 waits for" "$(sqlite3 "$T/nvq.db" "SELECT after FROM jobs WHERE id = $s1")" \
	    "afterany:${b}_:$a,singleton"
	expect_eq "s2 waits for s1 (which waits for the rest)" \
	    "$(sqlite3 "$T/nvq.db" "SELECT after FROM jobs WHERE id = $s2")" "afterany:$s1,singleton"
	expect_match "its reason" "$(nvq list | awk -v id="$s1" '$1 == id')" "Dependency \(afterany:${b}_\)"
	wait_state "$s2" COMPLETED 15
	expect_eq "s1 started after the array's last task ended" \
	    "$(awk -v s="$(field "$s1" started_at)" -v e="$(field "$((b + 1))" ended_at)" 'BEGIN{print (s >= e)}')" 1
	expect_eq "s2 after s1 ended" \
	    "$(awk -v s="$(field "$s2" started_at)" -v e="$(field "$s1" ended_at)" 'BEGIN{print (s >= e)}')" 1
}

t_deps_old_rows() {	# a dependency stored before -d ("1,2", afterok) is read back as afterok after an upgrade
	write_config; start_nvqd || return
	local a bad b c
	a=$(submit -g 0 sleep 1); bad=$(submit -g 0 false)
	b=$(submit -g 0 --hold true); c=$(submit -g 0 --hold true)
	wait_state "$bad" FAILED
	stop_nvqd
	sqlite3 "$T/nvq.db" "UPDATE jobs SET after = '$a', held = 0 WHERE id = $b;
	    UPDATE jobs SET after = '$a,$bad', held = 0 WHERE id = $c"
	start_nvqd || return
	expect_match "waits as afterok" "$(nvq list | awk -v id="$b" '$1 == id')" "Dependency \(afterok:$a\)"
	wait_state "$b" COMPLETED
	wait_state "$c" CANCELLED
	expect_eq "the failed one: never" "$(field "$c" reason)" \
	    "DependencyNeverSatisfied (afterok:$bad ended FAILED)"
}

t_arrays_requeue() {	# requeue A_: every running task stopped and queued again, in one request
	write_config; start_nvqd || return
	local a out
	a=$(submit -g 0 --array 0-1 sh -c 'echo run >> '"$T"'/runs.$NVQ_ARRAY_INDEX; sleep 30')
	wait_state "$a" RUNNING; wait_state "$((a + 1))" RUNNING
	# RUNNING is its supervisor's start: wait for the command's own first line
	for _ in $(seq 100); do
		[ "$(cat "$T/runs.0" "$T/runs.1" 2> /dev/null | wc -l)" = 2 ] && break
		sleep 0.05
	done
	out=$(nvq requeue "${a}_")
	expect_eq "requeue A_: both" "$(echo "$out" | grep -c "is stopping; it then waits")" 2
	for _ in $(seq 100); do
		[ "$(cat "$T/runs.0" "$T/runs.1" 2> /dev/null | wc -l)" = 4 ] && break
		sleep 0.1
	done
	expect_eq "each ran again" "$(cat "$T/runs.0" "$T/runs.1" | wc -l)" 4
	nvq cancel "${a}_" > /dev/null
}

t_cancel_filter_ids() {	# cancel -u with 40,000 ids against 40,000 jobs: a lookup each, not a scan each
	write_config "[limits]" "max_pending = 100000"
	start_nvqd || return
	local a t0 t1 out
	a=$(submit -g 0 --hold --array 0-39999 true)
	t0=$(date +%s%N)
	out=$(nvq cancel -u root $(seq $((a + 40000)) $((a + 79999))) 2>&1)
	t1=$(date +%s%N)
	echo "    cancel -u with 40,000 ids that match none of 40,000 jobs: $(( (t1 - t0) / 1000000 )) ms"
	expect_match "none matched" "$out" "^0 jobs cancelled|no job"
	expect_eq "in under 2 s" "$(( (t1 - t0) < 2000000000 ))" 1
	out=$(nvq cancel -u root $(seq "$a" $((a + 2))) $((a + 50000)))
	expect_match "the ids that are its jobs: cancelled" "$out" "^3 jobs cancelled"
	expect_eq "those three" "$(state "$a") $(state $((a + 2))) $(state $((a + 3)))" "CANCELLED CANCELLED PENDING"
	nvq cancel "${a}_" > /dev/null
}
