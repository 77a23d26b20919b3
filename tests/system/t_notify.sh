# t_notify.sh: telling of a job's end: --notify, [daemon] on_finish and
# --mail-user, run as the job's owner; failing and hanging notifiers.
# Sourced by run.sh (helpers in lib.sh).

notify_events() {	# ID: its NOTIFY events' reasons, one per line, in order
	sqlite3 "$T/nvq.db" "SELECT reason FROM events WHERE job_id = $1 AND state = 'NOTIFY' \
	    ORDER BY id"
}

wait_events() {	# ID N: until the job has N NOTIFY events (10 s)
	local i
	for i in $(seq 200); do
		[ "$(notify_events "$1" | wc -l)" -ge "$2" ] && return 0
		sleep 0.05
	done
	fail "job $1 has $(notify_events "$1" | wc -l) NOTIFY events, not $2"
	return 1
}

t_notify_owner() {	# --notify and on_finish run as the owner, with the job's facts
	local who=root as=""
	if [ "$(id -u)" = 0 ] && command -v setpriv > /dev/null && make_users; then
		who=nvqta
		as="as_user nvqta"
	fi
	chmod 755 "$T"
	mkdir -m 1777 "$T/n"
	write_config "[daemon]" "on_finish = echo \"fin \$NVQ_JOB_ID \$NVQ_JOB_STATE \$NVQ_EXIT_CODE \$(id -un) \$(pwd)\" >> $T/n/fin"
	start_nvqd || return
	local a b c d
	mkdir -m 777 "$T/wd"
	# from $T/wd, as the user (as_user would start from /tmp)
	a=$(cd "$T/wd" && ${as:+setpriv --reuid=nvqta --regid="$(id -g nvqta 2>/dev/null)" \
	    --init-groups --} "$NVQ_BIN" -s "$T/sock" submit --parsable -g 0 -n "my job" \
	    --notify "echo \"\$NVQ_JOB_ID|\$NVQ_JOB_NAME|\$NVQ_JOB_STATE|\$NVQ_EXIT_CODE|\$NVQ_SIGNAL|\$(id -un)|\$HOME|\$NVQ_STDOUT\" > $T/n/a" \
	    sh -c 'exit 3')
	b=$($as "$NVQ_BIN" -s "$T/sock" submit --parsable -g 0 --notify "echo \$NVQ_JOB_STATE \$NVQ_EXIT_CODE \$NVQ_SIGNAL > $T/n/b" \
	    sh -c 'kill -TERM $$')
	wait_state "$a" FAILED; wait_state "$b" FAILED
	wait_events "$a" 2; wait_events "$b" 2
	local home
	home=$(getent passwd "$who" | cut -d: -f6)
	expect_eq "--notify's variables, as the owner" "$(cat "$T/n/a")" \
	    "$a|my job|FAILED|3||$who|$home|$(field "$a" stdout_path)"
	expect_eq "a job a signal ended" "$(cat "$T/n/b")" "FAILED 143 15"
	# on_finish: every job, the owner, in the job's directory (where the user could go)
	expect_match "on_finish of a" "$(grep "^fin $a " "$T/n/fin")" "^fin $a FAILED 3 $who $T/wd\$"
	expect_match "on_finish of b" "$(grep "^fin $b " "$T/n/fin")" "^fin $b FAILED 143 $who "
	expect_eq "the events" "$(notify_events "$a" | sed 's/after [0-9.]*s/after Ts/' | sort)" \
	    "--notify: exit 0 after Ts
on_finish: exit 0 after Ts"
	# a pending job cancelled has no exit code; its notifier still runs
	local blk
	blk=$(submit -g 2 sleep 30); wait_state "$blk" RUNNING
	c=$($as "$NVQ_BIN" -s "$T/sock" submit --parsable --notify "echo \$NVQ_JOB_STATE x\${NVQ_EXIT_CODE}x > $T/n/c" true)
	nvq cancel "$c" > /dev/null
	wait_events "$c" 2
	expect_eq "a cancelled pending job" "$(cat "$T/n/c")" "CANCELLED xx"
	nvq cancel "$blk" > /dev/null
	# shown by nvq show: the command stored with the job
	d=$(submit -g 0 --notify 'true' true); wait_state "$d" COMPLETED
	expect_match "nvq show" "$(nvq show "$d")" "notify +true"
	# refused: an empty command, a command too long
	expect_match "empty --notify" "$(nvq submit --notify '' true 2>&1)" "--notify: a command of 1"
	expect_match "long --notify" "$(nvq submit --notify "$(head -c 5000 /dev/zero | tr '\0' x)" \
	    true 2>&1)" "--notify: a command of 1 to 4096 bytes"
}

t_notify_failing() {	# a failing or hanging notifier is recorded, and the queue goes on
	write_config "[daemon]" "notify_timeout = 4s"
	start_nvqd || return
	local a b i ids=() t0 t1
	a=$(submit -g 0 --notify 'echo "cannot reach the chat server" >&2; exit 7' true)
	# hangs, with a child: both go at the timeout
	b=$(submit -g 0 --notify "sleep 300 & echo \$! > $T/child; sleep 301" true)
	wait_state "$a" COMPLETED; wait_state "$b" COMPLETED
	# the queue does not wait for them: ten jobs run and end meanwhile
	t0=$(date +%s.%N)
	for i in 1 2 3 4 5 6 7 8 9 10; do ids+=("$(submit -m 1G true)"); done
	for i in "${ids[@]}"; do wait_state "$i" COMPLETED; done
	t1=$(date +%s.%N)
	expect_eq "no NOTIFY of b yet: it hangs" "$(notify_events "$b")" ""
	python3 -c "import sys; sys.exit(0 if $t1 - $t0 < 3.5 else 1)" ||
	    fail "ten jobs took $(python3 -c "print(round($t1 - $t0, 2))")s beside a hanging notifier"
	wait_events "$a" 1; wait_events "$b" 1
	expect_match "failing: its status and stderr" "$(notify_events "$a")" \
	    "^--notify: exit 7 after [0-9.]+s: cannot reach the chat server$"
	expect_eq "hanging: killed" "$(notify_events "$b")" "--notify: killed after 4s (notify_timeout)"
	expect_eq "its child too" "$(alive "$(cat "$T/child")")" ""
	expect_eq "the job's state is its own" "$(state "$a") $(state "$b")" "COMPLETED COMPLETED"
	expect_match "nvqd's log says so" "$(grep "job $a: --notify" "$T/nvqd.log")" "exit 7"
	# a hanging notifier at nvqd's stop is killed, and nvqd stops cleanly
	local c
	c=$(submit -g 0 --notify "echo \$\$ > $T/hang; exec sleep 302" true)
	wait_state "$c" COMPLETED
	for i in $(seq 100); do [ -s "$T/hang" ] && break; sleep 0.05; done
	stop_nvqd
	sleep 0.2
	expect_eq "killed at nvqd's stop" "$(alive "$(cat "$T/hang")")" ""
}

t_notify_mail() {	# --mail-user through [daemon] sendmail; bad addresses refused
	printf '#!/bin/sh\n{ echo "ARGS: $*"; cat; } > %s/mail\n' "$T" > "$T/sendmail"
	chmod 755 "$T/sendmail"
	write_config "[daemon]" "sendmail = $T/sendmail"
	start_nvqd || return
	local a
	a=$(submit -g 0 -n 'nightly eval' --mail-user ada@example.org sh -c 'exit 2')
	wait_state "$a" FAILED
	wait_events "$a" 1
	expect_match "sendmail's arguments" "$(head -1 "$T/mail")" "^ARGS: -i -- ada@example.org$"
	expect_match "the subject" "$(cat "$T/mail")" "Subject: nvq job $a \(nightly eval\) FAILED"
	expect_match "the exit code" "$(cat "$T/mail")" "Exit code: 2"
	expect_match "--mail-user's event" "$(notify_events "$a")" "^--mail-user: exit 0"
	local out
	for bad in '-oQ/tmp@x' 'a@b
To: c@d' 'a b@c' 'noat' 'a@b@c'; do
		out=$(nvq submit --mail-user "$bad" true 2>&1)
		expect_eq "refused: $bad" "$?" 1
		expect_match "its error" "$out" "is not a plain mail address"
	done
	# a server without sendmail refuses --mail-user at submit
	write_config "[daemon]" "sendmail = $T/none"
	kill -HUP "$NVQD_PID"; sleep 0.3
	expect_match "no sendmail" "$(nvq submit --mail-user a@b.c true 2>&1)" \
	    "this server has no $T/none to mail with"
	expect_eq "nothing was queued" "$(sqlite3 "$T/nvq.db" "SELECT count(*) FROM jobs")" 1
}
