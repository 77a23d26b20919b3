# t_limits.sh: what one user can do to everyone through the queue, nvqd's
# memory and other users' terminals (issue 11): pending jobs and
# environments past [limits], connections that hold partial frames or
# unread replies, escape sequences in what nvq prints, absurd time limits,
# and jobs past [limits] max_gpus.

# lim_be BYTES VALUE: VALUE as BYTES big-endian bytes, on stdout
lim_be() {
	local i out=""
	for ((i = $1 - 1; i >= 0; i--)); do
		out+=$(printf '\\x%02x' $(( ($2 >> (8 * i)) & 255 )))
	done
	printf "$out"
}
lim_str() {	# KEY VALUE: a string field
	printf s; lim_be 1 ${#1}; printf %s "$1"; lim_be 4 $(( ${#2} + 1 )); printf '%s\0' "$2"
}
lim_int() {	# KEY VALUE: an integer field
	printf i; lim_be 1 ${#1}; printf %s "$1"; lim_be 8 "$2"
}
# lim_submit_raw TIME: a submit frame of `sleep 30` with that time limit, sent as it is
lim_submit_raw() {
	{ lim_str arg sleep; lim_str arg 30; lim_str cwd /tmp; lim_int gpus 0
	  lim_int time "$1"; } > "$T/body"
	{ lim_be 4 "$(stat -c %s "$T/body")"; lim_be 2 2; lim_be 2 3; cat "$T/body"; } |
	    "$HELPERS/rawsend" "$T/sock"
}
lim_as_a() {	# ARGS...: nvq submit --parsable as nvqta
	as_user nvqta "$NVQ_BIN" -s "$T/sock" submit --parsable "$@"
}
lim_jobs() {	# the jobs stored, all users
	sqlite3 "$T/nvq.db" "SELECT count(*) FROM jobs"
}

t_limits_pending() {	# [limits] max_pending: a user's pending jobs are capped; root is not
	if [ "$(id -u)" != 0 ] || ! command -v setpriv > /dev/null || ! make_users; then
		skip "needs root, setpriv and useradd"
		return
	fi
	chmod 755 "$T"
	write_config "[limits]" "max_pending = 3"
	start_nvqd || return
	local big out rc i p
	big=$(submit -g 2 sleep 30); wait_state "$big" RUNNING
	# five at once, read in one loop turn: those queued in the turn count too
	kill -STOP "$NVQD_PID"
	p=()
	for i in 1 2 3 4 5; do lim_as_a -g 1 true > "$T/p.$i" 2>&1 & p+=($!); done
	sleep 1
	kill -CONT "$NVQD_PID"
	wait "${p[@]}"
	expect_eq "three of five queued" "$(cat "$T"/p.* | grep -c '^[0-9][0-9]*$')" 3
	expect_eq "two refused" "$(cat "$T"/p.* | grep -c "max_pending is 3")" 2
	out=$(lim_as_a -g 1 true 2>&1); rc=$?
	expect_eq "the fourth pending job is refused" "$rc" 1
	expect_eq "and told why" "$out" \
	    "nvq: nvqta has 3 pending jobs: [limits] max_pending is 3; nothing was queued"
	expect_eq "nothing stored" "$(sqlite3 "$T/nvq.db" \
	    "SELECT count(*) FROM jobs WHERE user = 'nvqta'")" 3
	for i in 1 2 3 4; do submit -g 1 true > /dev/null || fail "root is exempt ($i)"; done
	# the counts survive a restart (they come from the loaded jobs)
	stop_nvqd; start_nvqd || return
	out=$(lim_as_a -g 1 true 2>&1)
	expect_match "still refused after a restart" "$out" "nvqta has 3 pending jobs"
	# once they start, they no longer count
	nvq cancel "$big"
	for i in $(seq 100); do
		[ "$(sqlite3 "$T/nvq.db" "SELECT count(*) FROM jobs WHERE state = 'PENDING'")" = 0 ] &&
		    break
		sleep 0.1
	done
	for i in 1 2 3; do
		lim_as_a -g 1 true > /dev/null || fail "a pending job after the others started ($i)"
	done
	# and a cancelled one no longer counts either
	big=$(submit -g 2 sleep 30); wait_state "$big" RUNNING
	p=$(lim_as_a -g 1 true); lim_as_a -g 1 true > /dev/null; lim_as_a -g 1 true > /dev/null
	out=$(lim_as_a -g 1 true 2>&1)
	expect_match "three pending again: refused" "$out" "nvqta has 3 pending jobs"
	nvq cancel "$p"
	lim_as_a -g 1 true > /dev/null; expect_eq "a cancel makes room" "$?" 0
	nvq cancel "$big"
}

# lim_big_env COMMAND...: runs it with 2 MB more environment: BIG (120 kB; one
# string may not pass 128 kB through exec) and 19 of 100 kB
lim_big_env() {
	(
		ulimit -s unlimited 2> /dev/null || ulimit -s 65536
		export BIG; BIG=$(head -c 120000 /dev/zero | tr '\0' x)
		local i
		for i in $(seq 19); do
			export "FILL$i=$(head -c 100000 /dev/zero | tr '\0' x)"
		done
		"$@"
	)
}

t_limits_env() {	# [limits] max_env: a large environment is refused, nothing stored
	write_config; start_nvqd || return
	local out rc ok
	out=$(lim_big_env "$NVQ_BIN" -s "$T/sock" submit -g 0 true 2>&1); rc=$?
	expect_eq "refused" "$rc" 1
	expect_match "with its size and the key" "$out" \
	    "the environment is 1\.9M \([0-9]+ bytes; the largest variable, BIG, is 117K\), over \[limits\] max_env \(1M\); nothing was queued"
	expect_eq "nothing stored" "$(lim_jobs)" 0
	ok=$(env SMALL="$(head -c 100000 /dev/zero | tr '\0' x)" "$NVQ_BIN" -s "$T/sock" \
	    submit --parsable -g 0 sh -c 'echo ${#SMALL}')
	wait_state "$ok" COMPLETED
	expect_eq "a normal one runs with its environment" "$(nvq log "$ok")" 100000
	# 0: no limit
	printf '[limits]\nmax_env = 0\n' >> "$T/nvq.ini"; kill -HUP "$NVQD_PID"; sleep 0.3
	out=$(lim_big_env "$NVQ_BIN" -s "$T/sock" submit --parsable -g 0 true 2>&1)
	expect_match "max_env = 0 takes any size" "$out" "^[0-9]+$"
}

t_limits_memory() {	# partial 4 MB frames on many connections, unread replies: nvqd's memory bounded
	if [ "$(id -u)" != 0 ] || ! command -v setpriv > /dev/null; then
		skip "needs root and setpriv (the flood comes from another uid)"
		return
	fi
	chmod 755 "$T"
	$CC -O1 -o "$HELPERS/stall" tests/system/stall.c || { fail "cannot build stall"; return; }
	write_config; start_nvqd || return
	local as=(setpriv --reuid=65534 --regid=65534 --clear-groups --) rss=0 r t0 t1 pid i most=150
	# ASan keeps freed buffers in quarantine, and its shadow besides
	ldd "$NVQD" | grep -q libasan && most=300
	rss() { awk '/^VmRSS/ { print int($2 / 1024) }' "/proc/$NVQD_PID/status"; }
	# 128 connections, each with the header of a 4 MiB frame and 3.9 MB of its body
	"${as[@]}" "$HELPERS/stall" "$T/sock" frames 128 3900000 3 > "$T/stall.out" &
	pid=$!
	for i in $(seq 400); do
		r=$(rss); [ "$r" -gt "$rss" ] && rss=$r
		grep -q sent "$T/stall.out" && break
		sleep 0.05
	done
	t0=$(date +%s.%N)
	expect_eq "another user's nvq list answers" "$(nvq list > /dev/null 2>&1; echo $?)" 0
	t1=$(date +%s.%N)
	expect_eq "at once" "$(awk -v a="$t0" -v b="$t1" 'BEGIN { print (b - a < 1) }')" 1
	r=$(rss); [ "$r" -gt "$rss" ] && rss=$r
	wait "$pid"
	echo "    nvqd's VmRSS at most ${rss} MB during 128 partial 4 MB frames"
	expect_eq "nvqd's VmRSS stays under $most MB (${rss} MB)" "$(( rss < most ))" 1
	expect_match "most connections refused" "$(grep '^closed' "$T/stall.out")" "^closed (1[01][0-9]|12[0-8])$"
	expect_match "and told why" "$(grep '^error' "$T/stall.out")" \
	    "your user's connections hold 64 MiB in nvqd"
	expect_eq "logged once, not per connection" "$(grep -c 'uid 65534: its connections hold' "$T/nvqd.log")" 1
	# replies nobody reads: 400,000 pings of 250-byte answers on one connection
	stop_nvqd
	local deep; deep=$T/$(printf 'd%.0s' $(seq 150) | sed 's/.\{50\}/&\//g')
	mkdir -p "$deep"; chmod -R 755 "$T"
	sed -i "s#^database = .*#database = $deep/nvq.db#" "$T/nvq.ini"
	start_nvqd || return
	rss=0
	"${as[@]}" "$HELPERS/stall" "$T/sock" pings 400000 5 > "$T/stall.out" &
	pid=$!
	for i in $(seq 400); do
		r=$(rss); [ "$r" -gt "$rss" ] && rss=$r
		grep -q '^open' "$T/stall.out" && break
		sleep 0.05
	done
	wait "$pid"
	echo "    nvqd's VmRSS at most ${rss} MB during 100 MB of unread replies"
	expect_eq "nvqd's VmRSS stays under $most MB with unread replies (${rss} MB)" \
	    "$(( rss < most ))" 1
	expect_eq "the reader that never reads is closed" "$(grep '^closed' "$T/stall.out")" "closed 1"
	expect_eq "nvqd still serves" "$(nvq list > /dev/null 2>&1; echo $?)" 0
}

t_limits_escapes() {	# control characters from other users reach no terminal through nvq
	write_config; start_nvqd || return
	local evil bad hold pend out what esc=$'\e' del=$'\x7f' c1=$'\xc2\x9b'
	evil=$(submit -g 0 -n evil -o "$T/out${esc}[41m.txt" \
	    printf '%s' $'\e[2J\e[41mred\x7f\xc2\x9b2J\ttab')
	bad=$(submit -g 0 $'/nonexistent/\e[2Jcmd')
	wait_state "$evil" COMPLETED; wait_state "$bad" FAILED
	# and one waiting, for nvq list
	hold=$(submit -g 2 sleep 30); wait_state "$hold" RUNNING
	pend=$(submit -g 1 $'/nonexistent/\e[31mwait')
	expect_match "list: a pending job's name" "$(nvq list)" "\\\\e\[31mwait +PENDING"
	for what in "show $evil" "show $bad" "list" "list -a" "history" "show --json $evil" \
	    "show --json $bad" "list --json" "history --json"; do
		# shellcheck disable=SC2086
		expect_none "nvq $what: no ESC, DEL, C1 control" "$(nvq $what 2>&1)" "$esc" "$del" "$c1"
	done
	expect_match "show: the command, escaped" "$(nvq show "$evil")" \
	    "command +printf %s '\\\\e\[2J\\\\e\[41mred\\\\x7f\\\\u009b2J\\\\ttab'"
	expect_match "show: the output path" "$(nvq show "$evil")" "out\\\\e\[41m\.txt"
	expect_match "list: the name" "$(nvq history)" "\\\\e\[2Jcmd"
	# the reason: ESC as the status file writes it (\x1b)
	expect_match "history: the reason" "$(nvq history)" \
	    "cannot execute /nonexistent/(\\\\e|\\\\x1b)\[2Jcmd"
	expect_match "json: \\u001b" "$(nvq show --json "$bad")" '"name":"\\u001b\[2Jcmd"'
	expect_match "json: DEL and C1" "$(nvq show --json "$evil")" 'red\\u007f\\u009b2J\\ttab'
	# an error from nvqd quoting the user's text is escaped too
	out=$(lim_big_env env "$(printf 'E\e[2JX=%0125000d' 0)" "$NVQ_BIN" -s "$T/sock" \
	    submit -g 0 true 2>&1)
	expect_eq "errors: no ESC" "$(grep -c "$esc" <<< "$out")" 0
	expect_match "errors: escaped" "$out" "the largest variable, E\\\\e\[2JX, is"
	nvq cancel "$pend" "$hold"
}

t_limits_time() {	# absurd time limits are refused by nvq and by nvqd; huge stored ones saturate
	write_config; start_nvqd || return
	local out rc a b
	out=$(nvq submit -g 0 -t 300000000000d true 2>&1); rc=$?
	expect_eq "nvq refuses -t 300000000000d" "$rc" 2
	expect_eq "with the maximum" "$out" "nvq: -t 300000000000d: over the longest time limit, 365 days"
	a=$(submit -g 2 -t 365d sleep 30)
	wait_state "$a" RUNNING
	# a raw frame with 2^63 - 1 seconds
	out=$(lim_submit_raw 9223372036854775807)
	expect_eq "nvqd refuses a raw 2^63-1" "$out" \
	    "type 2 error: the time limit (9223372036854775807 seconds) is over the longest, 365 days"
	out=$(lim_submit_raw $(( 365 * 86400 + 1 )))
	expect_match "and 365 days and a second" "$out" "over the longest, 365 days"
	expect_eq "nothing stored" "$(lim_jobs)" 1
	out=$(lim_submit_raw 3600); expect_eq "a raw hour is fine" "$out" "type 1"
	sleep 0.5
	expect_eq "365 days: still running" "$(state "$a")" RUNNING
	# a limit stored before these checks: its timer saturates instead of firing at once
	b=$(submit -g 1 sleep 30)
	stop_nvqd
	sqlite3 "$T/nvq.db" "UPDATE jobs SET time_limit = 9223372036854775807 WHERE id = $b"
	start_nvqd || return
	nvq cancel "$a"
	wait_state "$b" RUNNING
	sleep 1
	expect_eq "a stored 2^63-1 s limit does not end the job at once" "$(state "$b")" RUNNING
	nvq cancel "$b"
}

t_limits_gpus() {	# a job past [limits] max_gpus is refused at submit, not left pending for ever
	write_config "[limits]" "max_gpus = 1"
	start_nvqd || return
	local out rc a
	out=$(nvq submit -g 2 true 2>&1); rc=$?
	expect_eq "refused" "$rc" 1
	expect_eq "with the limit" "$out" \
	    "nvq: this job could never run: it asks for 2 GPUs and [limits] max_gpus is 1 per user"
	expect_eq "nothing stored" "$(lim_jobs)" 0
	a=$(submit -g 1 true); wait_state "$a" COMPLETED
}
