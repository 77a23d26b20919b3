# t_control.sh: control of the queue: hold and release of pending jobs,
# top, modify, requeue, drain and undrain, placement (pack, spread, -w, -x).
# Sourced by run.sh (helpers in lib.sh).

reason_of() { nvq list | awk -v id="$1" '$1 == id'; }	# ID: its line in nvq list

t_hold_pending() {	# held pending jobs do not start, across a restart, until released
	write_config "[gpus]" "virtual = 1x16G"
	start_nvqd || return
	local blk a b
	blk=$(submit -m 10G sleep 30); wait_state "$blk" RUNNING
	a=$(submit -m 10G sleep 0)
	b=$(submit --hold -m 1G sleep 0)
	sleep 0.5
	expect_eq "a job submitted --hold that fits" "$(state "$b")" PENDING
	expect_match "its reason" "$(reason_of "$b")" "held; nvq release $b"
	expect_match "hold a pending job" "$(nvq hold "$a")" "job $a held: it does not start"
	expect_match "hold it twice" "$(nvq hold "$a" 2>&1)" "held already"
	nvq cancel "$blk"; wait_state "$blk" CANCELLED
	sleep 0.5
	expect_eq "held job once its memory is free" "$(state "$a")" PENDING
	# the hold is stored: a restarted nvqd keeps it
	stop_nvqd; start_nvqd || return
	sleep 0.5
	expect_eq "held across a restart" "$(state "$a")" PENDING
	expect_match "reason after the restart" "$(reason_of "$a")" "held"
	expect_match "release" "$(nvq release "$a")" "job $a released: it starts"
	wait_state "$a" COMPLETED
	expect_match "release one not held" "$(nvq release "$a" 2>&1)" "already ended"
	nvq release "$b" > /dev/null; wait_state "$b" COMPLETED
	expect_eq "events" "$(sqlite3 "$T/nvq.db" "SELECT group_concat(state, ' ') FROM \
	    (SELECT state FROM events WHERE job_id = $a ORDER BY id)")" \
	    "PENDING HELD RELEASED RUNNING COMPLETED"
	# a held job that waits --after for another keeps waiting for it once released
	local c d
	c=$(submit -g 0 sleep 1); d=$(submit --hold -g 0 --after "$c" true)
	nvq release "$d" > /dev/null
	expect_eq "released, its --after still holds it" "$(state "$d")" PENDING
	wait_state "$d" COMPLETED
}

t_top_modify() {	# nvq top and nvq modify reorder and change pending jobs
	write_config "[gpus]" "virtual = 1x16G" "[limits]" "max_priority = 10"
	start_nvqd || return
	local blk p1 p2 p3 out
	blk=$(submit -m 10G sleep 30); wait_state "$blk" RUNNING
	p1=$(submit -m 10G sleep 30); p2=$(submit -m 10G sleep 30); p3=$(submit -m 10G sleep 30)
	expect_match "top" "$(nvq top "$p3")" "job $p3 is first of its owner's jobs of its priority"
	expect_match "top of a running job" "$(nvq top "$blk" 2>&1)" "only a pending job"
	nvq cancel "$blk"
	wait_state "$p3" RUNNING
	expect_eq "the first-submitted one waits" "$(state "$p1")" PENDING
	# modify: p2 above p1 by priority; its time limit and memory
	expect_match "modify" "$(nvq modify -p 5 -t 1m -m 9G "$p2")" "job $p2 modified"
	expect_eq "priority stored" "$(field "$p2" priority)" 5
	expect_eq "time limit stored" "$(field "$p2" time_limit)" 60
	expect_eq "memory stored" "$(field "$p2" mem_per_gpu)" $((9 << 30))
	expect_match "its event" "$(nvq show "$p2")" "modified by .*priority 0 -> 5 mem 9G time 01:00"
	out=$(nvq modify -m 20G "$p1" 2>&1); expect_eq "modify that could never fit: status" $? 1
	expect_match "its error" "$out" "could never run so: .*it is unchanged"
	expect_eq "memory unchanged" "$(field "$p1" mem_per_gpu)" $((10 << 30))
	expect_match "nothing to change" "$(nvq modify "$p1" 2>&1)" "nothing to change"
	expect_match "running job" "$(nvq modify -p 1 "$p3" 2>&1)" "only a pending job"
	nvq cancel "$p3"
	wait_state "$p2" RUNNING
	expect_eq "p1 still waits" "$(state "$p1")" PENDING
	nvq cancel "$p1" "$p2"
}

# top_first ID...: the first of these jobs to be RUNNING (10 s at most)
top_first() {
	local i j
	for i in $(seq 200); do
		for j in "$@"; do
			[ "$(state "$j")" = RUNNING ] && { echo "$j"; return; }
		done
		sleep 0.05
	done
	echo none
}

t_top_bank() {	# nvq top moves a job among its owner's own only, and lends it no other job's age
	[ "$(id -u)" = 0 ] && command -v setpriv > /dev/null && make_users ||
	    { skip "needs root, setpriv and useradd"; return; }
	chmod 755 "$T"
	# aging of 36000 points an hour: 10 a second; one 10G job at a time; users
	# may raise -p to 5 (the default, 0, lets them only lower it)
	write_config "[gpus]" "virtual = 1x16G" "[scheduler]" "aging = 36000" \
	    "[limits]" "max_priority = 5"
	start_nvqd || return
	local blk bank own high other x
	blk=$(submit -m 10G sleep 30); wait_state "$blk" RUNNING
	# nvqta's time bank: a held job that ages, and an older job of its own
	bank=$(as_user nvqta "$NVQ_BIN" -s "$T/sock" submit --parsable --hold -m 10G true)
	own=$(as_user nvqta "$NVQ_BIN" -s "$T/sock" submit --parsable -m 10G sleep 30)
	sleep 1.5	# 15 points of age, more than the 5 of priority below
	high=$(as_user nvqtb "$NVQ_BIN" -s "$T/sock" submit --parsable -m 10G -p 5 sleep 30)
	other=$(as_user nvqtb "$NVQ_BIN" -s "$T/sock" submit --parsable -m 10G sleep 30)
	x=$(as_user nvqta "$NVQ_BIN" -s "$T/sock" submit --parsable -m 10G sleep 30)
	expect_match "top" "$(as_user nvqta "$NVQ_BIN" -s "$T/sock" top "$x")" \
	    "job $x is first of its owner's jobs of its priority"
	stop_nvqd; start_nvqd || return	# the order is stored
	nvq cancel "$blk"
	expect_eq "another user's higher-priority job goes before the topped one" \
	    "$(top_first "$high" "$x" "$own" "$other")" "$high"
	nvq cancel "$high"
	expect_eq "another user's older job of the same priority too" \
	    "$(top_first "$x" "$own" "$other")" "$other"
	nvq cancel "$other"
	expect_eq "the topped job before its owner's older one" "$(top_first "$x" "$own")" "$x"
	expect_eq "which waits" "$(state "$own")" PENDING
	nvq cancel "$x" "$own" "$bank" > /dev/null
}

t_requeue() {	# nvq requeue: the running job stops, waits again, runs again as the same job
	write_config "[gpus]" "virtual = 1x16G"
	start_nvqd || return
	local a
	a=$(submit -m 1G sh -c 'echo run; sleep 30')
	wait_state "$a" RUNNING
	expect_match "requeue" "$(nvq requeue "$a")" "job $a is stopping"
	wait_field "$a" restarts 1
	wait_state "$a" RUNNING
	expect_eq "two runs" "$(sqlite3 "$T/nvq.db" "SELECT count(*) FROM runs WHERE job_id = $a")" 2
	expect_match "the first run's end" "$(sqlite3 "$T/nvq.db" \
	    "SELECT group_concat(state, ' ') FROM events WHERE job_id = $a")" \
	    "RUNNING RUNNING REQUEUED PENDING RUNNING"
	expect_match "requeue of a pending job" "$(nvq requeue "$(submit --hold -g 0 true)" 2>&1)" \
	    "pending already"
	expect_match "-m of a job of no GPU" "$(nvq modify -m 1G "$(submit --hold -g 0 true)" \
	    2>&1)" "uses no GPU"
	# a cancel while it stops for a requeue wins: it ends CANCELLED, not PENDING
	local b
	b=$(submit -m 1G sh -c 'trap "sleep 1; exit 0" TERM; sleep 30 & wait')
	wait_state "$b" RUNNING
	sleep 0.3
	nvq requeue "$b" > /dev/null
	nvq cancel "$b"
	wait_state "$b" CANCELLED
	expect_eq "no second run" "$(field "$b" restarts)" 0
	nvq cancel "$a"; wait_state "$a" CANCELLED
}

t_restart_failed() {	# nvq restart ID / --failed [--since]: the same job runs again, its history kept
	write_config "[gpus]" "virtual = 1x16G"
	start_nvqd || return
	local a b c d out
	# fails the first time, succeeds the next; prints the environment it got
	printf '#!/bin/sh\necho "FOO=$FOO"\n[ -e "$1" ] && exit 0\ntouch "$1"; exit 3\n' > "$T/flaky"
	chmod 755 "$T/flaky"
	a=$(submit -g 0 "$T/flaky" "$T/a.ok")
	b=$(submit -g 0 true)
	c=$(submit -g 0 sleep 100)
	wait_state "$a" FAILED; wait_state "$b" COMPLETED; wait_state "$c" RUNNING
	expect_match "a running job" "$(nvq restart "$c" 2>&1)" \
	    "job $c is RUNNING: only a finished job can be restarted \(nvq requeue"
	expect_match "ids and --failed" "$(nvq restart --failed "$a" 2>&1)" "not both"
	expect_match "no such job" "$(nvq restart 999 2>&1)" "no such job 999"
	# all or none: a, with c still running, is not restarted
	nvq restart "$a" "$c" > /dev/null 2>&1
	expect_eq "all or none: status" "$?" 1
	expect_eq "all or none: a stays" "$(state "$a")" FAILED
	out=$(FOO=bar nvq restart "$a")
	expect_eq "said" "$out" "job $a is pending again"
	wait_state "$a" COMPLETED
	expect_eq "restarts" "$(field "$a" restarts)" 1
	expect_eq "the two runs' exit codes" "$(sqlite3 "$T/nvq.db" \
	    "SELECT group_concat(exit_code, ' ') FROM runs WHERE job_id = $a ORDER BY id")" "3 0"
	expect_match "events" "$(sqlite3 "$T/nvq.db" \
	    "SELECT group_concat(state || ':' || coalesce(reason, ''), ' ') FROM events WHERE job_id = $a")" \
	    "FAILED:.* PENDING:restarted by root RUNNING:.* COMPLETED:$"
	expect_eq "the restarter's environment" "$(tail -1 "$T/spool/0/$a.out")" "FOO=bar"
	expect_eq "its reason and exit code anew" "$(field "$a" exit_code),$(field "$a" reason)" "0,"
	# another user's job: only its owner may
	make_users || { skip "cannot create users"; return; }
	chmod 755 "$T"
	expect_match "not the owner" "$(as_user nvqta "$NVQ_BIN" -s "$T/sock" restart "$b" 2>&1)" \
	    "is not yours"
	# --failed: FAILED and TIMEOUT, not COMPLETED nor CANCELLED; --since
	nvq cancel "$c"; wait_state "$c" CANCELLED
	d=$(submit -g 0 -t 1s sleep 30)
	wait_state "$d" TIMEOUT 15
	rm -f "$T/a.ok"
	out=$(nvq restart --failed --since 1h)
	expect_eq "--failed: the TIMEOUT job" "$out" "job $d is pending again"
	expect_eq "a COMPLETED job stays" "$(state "$b")" COMPLETED
	expect_eq "a CANCELLED job stays" "$(state "$c")" CANCELLED
	wait_state "$d" TIMEOUT 15
	sleep 2.5
	expect_match "--since: none since" "$(nvq restart --failed --since 1s 2>&1)" \
	    "no job of yours ended FAILED, TIMEOUT or NODE_FAIL since then"
	# a restarted pending job outlives nvqd's restart
	nvq hold "$(submit -g 0 true)" > /dev/null 2>&1
	out=$(nvq restart --failed)
	expect_eq "again" "$out" "job $d is pending again"
	stop_nvqd; start_nvqd || return
	expect_match "after nvqd's restart" "$(state "$d")" "PENDING|RUNNING|TIMEOUT"
	wait_state "$d" TIMEOUT 15
	expect_eq "three runs" "$(sqlite3 "$T/nvq.db" "SELECT count(*) FROM runs WHERE job_id = $d")" 3
	# an id given twice: one restart
	expect_eq "an id twice" "$(nvq restart "$d" "$d" 2>&1)" "job $d is pending again"
	nvq cancel "$d"
}

t_placement() {	# pack and spread on 4 virtual GPUs; -w and -x; drain and undrain
	write_config "[gpus]" "virtual = 4x16G"
	start_nvqd || return
	local ids=() i g
	for i in 1 2 3 4; do ids+=("$(submit -m 1G sleep 30)"); done
	for i in "${ids[@]}"; do wait_state "$i" RUNNING; done
	g=$(for i in "${ids[@]}"; do field "$i" gpu_uuids; done | sort -u | wc -l)
	expect_eq "pack: one GPU holds all four" "$g" 1
	nvq cancel "${ids[@]}"
	stop_nvqd
	write_config "[gpus]" "virtual = 4x16G" "[scheduler]" "placement = spread"
	start_nvqd || return
	ids=()
	for i in 1 2 3 4; do ids+=("$(submit -m 1G sleep 30)"); done
	for i in "${ids[@]}"; do wait_state "$i" RUNNING; done
	g=$(for i in "${ids[@]}"; do field "$i" gpu_uuids; done | sort -u | wc -l)
	expect_eq "spread: four GPUs" "$g" 4
	nvq cancel "${ids[@]}"
	local uuid2 w x
	uuid2=$(nvq gpus --json | grep '"index":2' | grep -o '"uuid":"[^"]*"' | cut -d'"' -f4)
	w=$(submit -m 1G -w 2 sleep 30); x=$(submit -m 1G -x 0,1,"$uuid2" sleep 30)
	wait_state "$w" RUNNING; wait_state "$x" RUNNING
	expect_eq "-w 2" "$(field "$w" gpu_uuids)" "$uuid2"
	expect_match "-x 0,1,2: GPU 3" "$(field "$x" gpu_uuids)" "03$"
	expect_match "-w of no GPU" "$(nvq submit -w 7 true 2>&1)" "-w: there is no GPU 7"
	expect_match "-x of all" "$(nvq submit -x 0,1,2,3 true 2>&1)" \
	    "could never run: it asks for 1 GPU and -w and -x leave 0"
	# drain: nothing new there, what runs there goes on; -w there waits
	expect_match "drain" "$(nvq drain 2 maintenance)" "GPU 2 .* drained"
	expect_match "gpus says so, by whom and why" "$(nvq gpus | awk '$1 == 2')" "drained by root: maintenance"
	expect_match "and in JSON" "$(nvq gpus --json | grep '"index":2')" '"drain_reason":"by root: maintenance"'
	expect_match "drain twice" "$(nvq drain "$uuid2" 2>&1)" "drained already"
	local y
	y=$(submit -m 1G -w 2 true)
	sleep 0.5
	expect_eq "a job that may only go to a drained GPU" "$(state "$y")" PENDING
	expect_match "its reason" "$(reason_of "$y")" "among those its -w and -x allow"
	expect_eq "the job already there runs on" "$(state "$w")" RUNNING
	stop_nvqd; start_nvqd || return
	sleep 0.5
	expect_eq "drained across a restart" "$(state "$y")" PENDING
	expect_match "its reason too" "$(nvq gpus | awk '$1 == 2')" "drained by root: maintenance"
	expect_match "and requeued -w kept" "$(nvq requeue "$w")" "stopping"
	wait_field "$w" restarts 1
	sleep 0.5
	expect_eq "requeued -w job waits for its drained GPU" "$(state "$w")" PENDING
	expect_match "undrain" "$(nvq undrain 2)" "undrained"
	wait_state "$y" COMPLETED
	wait_state "$w" RUNNING
	nvq cancel "$w" "$x"
	expect_match "drain of no GPU" "$(nvq drain 9 2>&1)" "no GPU 9"
	if make_users; then
		chmod 755 "$T"
		expect_match "a user may not drain" \
		    "$(as_user nvqta "$NVQ_BIN" -s "$T/sock" drain 0 2>&1)" "only root"
	fi
}

t_restart_env_kept() {	# a job restarted right after it failed keeps the environment it was restarted with
	# one at a time: the restarted job waits behind the next one, past the
	# 50 ms in which a finished job's environment waits to be deleted
	write_config "[limits]" "max_running_jobs = 1"; start_nvqd || return
	local i a b ok=0
	printf '#!/bin/sh\necho "FOO=$FOO"\n[ -e "$1" ] && exit 0\ntouch "$1"; exit 3\n' > "$T/flaky"
	chmod 755 "$T/flaky"
	for i in 1 2 3; do
		a=$(submit -g 0 "$T/flaky" "$T/ok.$i")
		b=$(submit -g 0 sleep 0.3)
		until [ "$(state "$a")" = FAILED ]; do :; done
		FOO=bar nvq restart "$a" > /dev/null
		wait_state "$a" COMPLETED 10
		[ "$(state "$a")" = COMPLETED ] && [ "$(nvq log "$a" | tail -1)" = FOO=bar ] &&
		    ok=$((ok + 1))
	done
	expect_eq "each ran again with its environment" "$ok" 3
}
