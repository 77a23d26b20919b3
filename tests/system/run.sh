#!/usr/bin/env bash
# run.sh: system tests.  Each test starts the real nvqd on a temporary
# socket, database and spool (virtual or fake-NVML GPUs) and drives it with
# the real nvq.  Usage: run.sh [TEST...]; NVQ_BUILD names the build folder.
set -u
cd "$(dirname "$0")/../.."
ROOT=$PWD
BUILD=${NVQ_BUILD:-build}
NVQD=$ROOT/$BUILD/nvqd
NVQ_BIN=$ROOT/$BUILD/nvq
HELPERS=$ROOT/$BUILD/tests
CC=${CC:-cc}
mkdir -p "$HELPERS"
$CC -O1 -o "$HELPERS/rawsend" tests/system/rawsend.c || exit 1
$CC -O1 -o "$HELPERS/flood" tests/system/flood.c || exit 1
$CC -O2 -std=c11 -D_GNU_SOURCE -iquote nvqd -iquote nvq -o "$HELPERS/load" bench/load.c \
    nvq/client.c nvq/fmt.c nvqd/proto.c nvqd/parse.c -linih || exit 1
$CC -O1 -shared -fPIC -o "$HELPERS/libfake-nvml.so.1" tests/system/fake_nvml.c || exit 1

PASSED=0
FAILED=0
SKIPPED=0
SKIPS=()
FAILS=()
T=""		# this test's folder
NVQD_PID=""

skip() {	# WHY: this test cannot run here; it is counted as skipped, not passed
	echo "    SKIPPED: $*"
	CUR_SKIPPED=1
}
fail() {
	echo "    FAIL: $*"
	CUR_FAILED=1
}
expect_eq() {	# WHAT GOT WANT
	[ "$2" == "$3" ] || fail "$1: got '$2', wanted '$3'"
}
expect_match() {	# WHAT GOT REGEX
	[[ "$2" =~ $3 ]] || fail "$1: got '$2', wanted /$3/"
}
nvq() { "$NVQ_BIN" -s "$T/sock" "$@"; }

# write_config [extra INI lines...]: a config with 2x16G virtual GPUs unless
# the extra lines say otherwise.
write_config() {
	{
		echo "[daemon]"
		echo "socket = $T/sock"
		echo "database = $T/nvq.db"
		echo "spool = $T/spool"
		echo "log_level = debug"
		echo "sync = normal"
		local have_gpus=0 line
		for line in "$@"; do [[ $line == "[gpus]" ]] && have_gpus=1; done
		if [ $have_gpus = 0 ]; then
			echo "[gpus]"
			echo "virtual = 2x16G"
		fi
		for line in "$@"; do echo "$line"; done
	} > "$T/nvq.ini"
}

start_nvqd() {
	"$NVQD" -c "$T/nvq.ini" >> "$T/nvqd.log" 2>&1 &
	NVQD_PID=$!
	local i
	for i in $(seq 100); do
		[ -S "$T/sock" ] && nvq list > /dev/null 2>&1 && return 0
		sleep 0.05
	done
	fail "nvqd did not start"; cat "$T/nvqd.log"
	return 1
}

stop_nvqd() {	# SIGTERM, and check the loop closed cleanly
	[ -n "$NVQD_PID" ] || return 0
	kill -TERM "$NVQD_PID" 2>/dev/null
	wait "$NVQD_PID" 2>/dev/null
	local rc=$?
	NVQD_PID=""
	[ $rc = 0 ] || fail "nvqd exited with $rc"
	grep -q "still had open handles" "$T/nvqd.log" && fail "nvqd left libuv handles open"
	if grep -qE "AddressSanitizer|runtime error|LeakSanitizer" "$T/nvqd.log"; then
		fail "sanitizer report in nvqd's log"
		grep -A5 -E "AddressSanitizer|runtime error|LeakSanitizer" "$T/nvqd.log" | head -30
	fi
	return 0
}

field() {	# ID KEY: one field of `nvq show --json`
	nvq show --json "$1" 2>/dev/null | head -1 |
	    grep -o "\"$2\": \(\"[^\"]*\"\|[-0-9.]*\)" | head -1 | sed 's/^[^:]*: //; s/^"//; s/"$//'
}
state() { field "$1" state; }

wait_state() {	# ID STATE [SECONDS]
	local i n=$(( ${3:-10} * 20 ))
	for i in $(seq $n); do
		[ "$(state "$1")" == "$2" ] && return 0
		sleep 0.05
	done
	fail "job $1 is $(state "$1"), not $2, after ${3:-10}s"
	return 1
}

submit() { nvq submit --parsable "$@"; }

run_test() {
	local name=$1
	T=$(mktemp -d /tmp/nvq-systest.XXXXXX)
	CUR_FAILED=0
	CUR_SKIPPED=0
	echo "== $name"
	if ! declare -F "$name" > /dev/null; then
		fail "no such test"
	else
		"$name"
	fi
	stop_nvqd
	if [ $CUR_FAILED = 0 ] && [ $CUR_SKIPPED = 1 ]; then
		SKIPPED=$((SKIPPED + 1))
		SKIPS+=("$name")
		rm -rf "$T"
	elif [ $CUR_FAILED = 0 ]; then
		PASSED=$((PASSED + 1))
		rm -rf "$T"
	else
		FAILED=$((FAILED + 1))
		FAILS+=("$name")
		echo "    (kept $T; nvqd's log follows)"
		tail -n 30 "$T/nvqd.log" | sed 's/^/    | /'
	fi
}

# ---------------------------------------------------------------- tests

t_packing() {	# 2x16G: three 10G jobs, two run; a 2-GPU 4G job runs beside
	write_config; start_nvqd || return
	local a b c d
	a=$(submit -m 10G sleep 30); b=$(submit -m 10G sleep 30); c=$(submit -m 10G sleep 30)
	d=$(submit -g 2 -m 4G sleep 30)
	wait_state "$a" RUNNING; wait_state "$b" RUNNING; wait_state "$d" RUNNING
	expect_eq "third 10G job" "$(state "$c")" PENDING
	expect_match "pending reason" "$(nvq list | awk -v id="$c" '$1 == id')" \
	    "needs 10G on 1 GPU, largest free 5.2G"
	expect_match "the two 10G jobs on different GPUs" \
	    "$(field "$a" gpu_uuids) $(field "$b" gpu_uuids)" "0000000000(00|01) .*0000000000(01|00)$"
	local gpus; gpus=$(nvq gpus)
	expect_match "nvq gpus demanded" "$gpus" "16G +15.2G +14G"
	nvq cancel "$a"
	wait_state "$c" RUNNING
	expect_eq "job took the freed GPU" "$(field "$c" gpu_uuids)" "$(field "$a" gpu_uuids)"
	nvq cancel "$b" "$c" "$d"
}

t_serial() {	# mode = serial: one job per GPU whatever its size
	write_config "[gpus]" "virtual = 1x80G" "[scheduler]" "mode = serial"
	start_nvqd || return
	local a b
	a=$(submit -m 1G sleep 30); b=$(submit -m 1G sleep 0)
	wait_state "$a" RUNNING
	sleep 0.3
	expect_eq "second job on a serial GPU" "$(state "$b")" PENDING
	expect_match "gpus shows serial" "$(nvq gpus)" " serial "
	nvq cancel "$a"
	wait_state "$b" COMPLETED
	# and per GPU: GPU 1 serial, GPU 0 shared
	stop_nvqd
	write_config "[gpus]" "virtual = 2x80G" "[scheduler]" "mode = auto,1:serial"
	start_nvqd || return
	a=$(submit -m 1G sleep 30); b=$(submit -m 1G sleep 30)
	wait_state "$a" RUNNING; wait_state "$b" RUNNING
	expect_eq "auto GPU 0 packs both" "$(field "$a" gpu_uuids)" "$(field "$b" gpu_uuids)"
	nvq cancel "$a" "$b"
}

t_all_or_nothing() {	# an N-GPU job gets all N at once or waits
	write_config; start_nvqd || return
	local a b
	a=$(submit -m 10G sleep 30)
	wait_state "$a" RUNNING
	b=$(submit -g 2 -m 8G sleep 0)
	sleep 0.3
	expect_eq "2-GPU job while one GPU lacks room" "$(state "$b")" PENDING
	expect_eq "it holds no GPU" "$(field "$b" gpu_uuids)" ""
	expect_match "gpus: nothing demanded of the free GPU" "$(nvq gpus | tail -1)" " 0B +0B +$"
	nvq cancel "$a"
	wait_state "$b" COMPLETED
	expect_match "it ran on both" "$(field "$b" gpu_uuids)" "^GPU-.*,GPU-"
	expect_match "could never fit: too many GPUs" "$(nvq submit -g 3 true 2>&1)" \
	    "could never run: needs 3 GPUs, this server has 2"
	expect_match "could never fit: too much memory" "$(nvq submit -m 17G true 2>&1)" \
	    "could never run: needs 17G on 1 GPU, the largest budget is 15.2G"
}

t_priority_aging() {	# higher priority first; aging lets a long wait win
	write_config "[gpus]" "virtual = 1x16G"
	start_nvqd || return
	local blk low high
	blk=$(submit -m 10G sleep 30); wait_state "$blk" RUNNING
	low=$(submit -m 10G sleep 30); high=$(submit -m 10G -p 5 sleep 30)
	nvq cancel "$blk"
	wait_state "$high" RUNNING
	expect_eq "low priority waits" "$(state "$low")" PENDING
	expect_match "its reason" "$(nvq list | awk -v id="$low" '$1 == id')" "largest free"
	nvq cancel "$high"; wait_state "$low" RUNNING; nvq cancel "$low"
	stop_nvqd
	# aging of 36000 points an hour: 10 a second
	write_config "[gpus]" "virtual = 1x16G" "[scheduler]" "aging = 36000"
	start_nvqd || return
	blk=$(submit -m 10G sleep 30); wait_state "$blk" RUNNING
	low=$(submit -m 10G sleep 30)
	sleep 1.2
	high=$(submit -m 10G -p 5 sleep 30)
	nvq cancel "$blk"
	wait_state "$low" RUNNING
	expect_eq "with aging, the long-waiting job went first" "$(state "$high")" PENDING
	nvq cancel "$low" "$high"
}

t_user_limits() {	# [limits] max_running_jobs and max_gpus
	write_config "[limits]" "max_running_jobs = 1"
	start_nvqd || return
	local a b
	a=$(submit -m 1G sleep 30); b=$(submit -m 1G sleep 0)
	wait_state "$a" RUNNING
	sleep 0.3
	expect_eq "second job of the same user" "$(state "$b")" PENDING
	expect_match "its reason" "$(nvq list | awk -v id="$b" '$1 == id')" "user limit"
	nvq cancel "$a"; wait_state "$b" COMPLETED
	stop_nvqd
	write_config "[limits]" "max_gpus = 1"
	start_nvqd || return
	a=$(submit -m 1G sleep 30); b=$(submit -g 0 sleep 0); local c; c=$(submit -m 1G sleep 0)
	wait_state "$a" RUNNING; wait_state "$b" COMPLETED
	sleep 0.3
	expect_eq "a second GPU over max_gpus" "$(state "$c")" PENDING
	nvq cancel "$a"; wait_state "$c" COMPLETED
}

t_after() {	# --after: runs once they COMPLETED; cancelled if one did not
	write_config; start_nvqd || return
	local a b c d
	a=$(submit -g 0 sleep 2); b=$(submit -g 0 --after "$a" true)
	c=$(submit -g 0 false); d=$(submit -g 0 --after "$a,$c" true)
	sleep 0.2
	expect_match "b waits" "$(nvq list | awk -v id="$b" '$1 == id')" "PENDING.*dependency"
	wait_state "$b" COMPLETED
	expect_eq "b started after a ended" \
	    "$(awk -v s="$(field "$b" started_at)" -v e="$(field "$a" ended_at)" 'BEGIN{print (s >= e)}')" 1
	local e2; e2=$(submit -g 0 --after "$d" true)
	wait_state "$d" CANCELLED
	expect_eq "d's reason" "$(field "$d" reason)" "dependency $c ended FAILED"
	wait_state "$e2" CANCELLED
	expect_eq "a chain is cancelled link by link" "$(field "$e2" reason)" \
	    "dependency $d ended CANCELLED"
	expect_match "unknown dependency" "$(nvq submit --after 999 true 2>&1)" "no such job 999"
}

t_cancel_tree() {	# cancel reaches every process of a job that forked
	write_config "[scheduler]" "kill_grace = 2s"
	start_nvqd || return
	local a pids
	a=$(submit -g 0 sh -c 'sleep 3171 & sleep 3172 & (sleep 3173; true) & wait')
	wait_state "$a" RUNNING; sleep 0.3
	expect_eq "the job's processes are there" "$(pgrep -fc '^sleep 317[123]$')" 3
	nvq cancel "$a"
	wait_state "$a" CANCELLED
	pids=$(pgrep -f '^sleep 317[123]$')
	expect_eq "processes left after cancel" "$pids" ""
	[ -n "$pids" ] && kill -9 $pids
	expect_match "reason" "$(field "$a" reason)" "cancelled by"
	expect_match "cancel an ended job" "$(nvq cancel "$a" 2>&1)" "already ended \(CANCELLED\)"
}

t_timeout() {	# -t ends a job as TIMEOUT; SIGKILL after kill_grace if it resists
	write_config "[scheduler]" "kill_grace = 1s"
	start_nvqd || return
	local a b
	a=$(submit -g 0 -t 1s sleep 30)
	b=$(submit -g 0 -t 1s sh -c 'trap "" TERM; sleep 3181; sleep 3181')
	wait_state "$a" TIMEOUT 5
	expect_match "reason" "$(field "$a" reason)" "time limit 00:01 reached"
	wait_state "$b" TIMEOUT 6
	expect_eq "the TERM-proof job was killed" "$(pgrep -fc 'sleep 3181')" 0
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

t_sqlite_reader() {	# the sqlite3 shell reads while nvqd writes
	write_config; start_nvqd || return
	( for i in $(seq 150); do nvq submit -g 0 true > /dev/null; done ) &
	local w=$! bad=0 n out
	while kill -0 $w 2>/dev/null; do
		out=$(sqlite3 -readonly "$T/nvq.db" "SELECT count(*) FROM jobs; SELECT count(*) FROM events;" 2>&1) || bad=$((bad + 1))
		[[ $out =~ ^[0-9]+$'\n'[0-9]+$ ]] || { bad=$((bad + 1)); echo "    reader: $out"; }
	done
	wait $w
	expect_eq "failed reads" "$bad" 0
	sleep 0.5
	n=$(sqlite3 "$T/nvq.db" "SELECT count(*) FROM jobs WHERE state = 'COMPLETED'")
	expect_eq "completed jobs" "$n" 150
	expect_eq "journal mode" "$(sqlite3 "$T/nvq.db" "PRAGMA journal_mode")" wal
	expect_eq "schema version" "$(sqlite3 "$T/nvq.db" "PRAGMA user_version")" "$(ls schema/[0-9]*.sql | wc -l)"
	expect_eq "events per job" "$(sqlite3 "$T/nvq.db" "SELECT count(*) FROM events")" 450
}

t_bad_input() {	# clear errors, non-zero exits, nothing stored lost
	write_config; start_nvqd || return
	local keep out rc
	keep=$(submit -m 1G sleep 30); wait_state "$keep" RUNNING
	out=$(nvq submit -m 20Q true 2>&1); rc=$?
	expect_eq "bad size exit" "$rc" 2; expect_match "bad size" "$out" "-m 20Q: not a memory size"
	out=$(nvq submit -t 1:99 true 2>&1); rc=$?
	expect_eq "bad time exit" "$rc" 2; expect_match "bad time" "$out" "-t 1:99: not a time limit"
	out=$(nvq submit --bogus true 2>&1); rc=$?
	expect_eq "unknown option exit" "$rc" 2; expect_match "unknown option" "$out" "unknown or incomplete option --bogus"
	out=$(nvq submit -p high true 2>&1); rc=$?
	expect_eq "bad priority exit" "$rc" 2
	out=$(nvq submit --after 1,,2 true 2>&1); expect_match "bad --after" "$out" "not a list of job ids"
	out=$(nvq submit 2>&1); rc=$?
	expect_eq "no command exit" "$rc" 2; expect_match "no command" "$out" "missing arguments"
	out=$(nvq show 4242 2>&1); rc=$?
	expect_eq "unknown job exit" "$rc" 1; expect_match "unknown job" "$out" "no such job 4242"
	out=$(nvq cancel 4242 2>&1); expect_match "cancel unknown" "$out" "no such job 4242"
	out=$(nvq show abc 2>&1); expect_match "not an id" "$out" "\"abc\" is not a job id"
	out=$(nvq list --state DONE 2>&1); expect_match "bad state" "$out" "--state DONE"
	out=$(nvq frobnicate 2>&1); rc=$?
	expect_eq "unknown command exit" "$rc" 2; expect_match "unknown command" "$out" "unknown command"
	out=$(nvq history --since yesterday 2>&1); expect_match "bad --since" "$out" "not a date"
	# garbage on the socket
	out=$(printf 'GET / HTTP/1.0\r\n\r\n' | "$HELPERS/rawsend" "$T/sock")
	expect_match "garbage" "$out" "type 2 error: protocol version"
	out=$(printf '\xff\xff\xff\xff\x00\x02\x00\x04' | "$HELPERS/rawsend" "$T/sock")
	expect_match "oversized frame" "$out" "over the maximum"
	out=$(printf '\x00\x00\x00\x64\x00\x02\x00\x04abc' | "$HELPERS/rawsend" "$T/sock")
	expect_match "truncated frame" "$out" "error: truncated"
	out=$(printf '\x00\x00\x00\x03\x00\x02\x00\x04abc' | "$HELPERS/rawsend" "$T/sock")
	expect_match "malformed body" "$out" "error: (malformed|truncated)"
	out=$(printf '\x00\x00\x00\x00\x00\x02\x00\x01' | "$HELPERS/rawsend" "$T/sock")
	expect_match "a reply type sent as a request" "$out" "not a request"
	head -c 3000 /dev/urandom | "$HELPERS/rawsend" "$T/sock" > /dev/null
	# a client that sends half a header and goes silent does not block others
	( printf '\x00\x00' | "$HELPERS/rawsend" "$T/sock" 3 > /dev/null ) &
	local slow=$!
	sleep 0.2
	expect_eq "serving while a client stalls" "$(state "$keep")" RUNNING
	wait $slow
	# a job whose command does not exist
	local nx; nx=$(submit -g 0 /nonexistent/cmd)
	wait_state "$nx" FAILED
	expect_match "its reason" "$(field "$nx" reason)" "cannot execute /nonexistent/cmd: No such file"
	expect_eq "its exit code" "$(field "$nx" exit_code)" 127
	# a working directory that is gone by the time it runs
	mkdir "$T/wd"; local wd
	wd=$(cd "$T/wd" && nvq submit --parsable -g 0 --after "$keep" pwd)
	rmdir "$T/wd"
	nvq cancel "$keep"
	wait_state "$wd" CANCELLED
	# the daemon is still there, and nothing stored was lost
	expect_eq "still serving" "$(state "$keep")" CANCELLED
	expect_eq "jobs stored" "$(sqlite3 "$T/nvq.db" "SELECT count(*) FROM jobs")" 3
	# a bad configuration line stops start-up with FILE:LINE
	printf '[scheduler]\nreserve = 5%%\nmode = turbo\n' > "$T/bad.ini"
	out=$("$NVQD" -n -c "$T/bad.ini" 2>&1); rc=$?
	expect_eq "bad config exit" "$rc" 1
	expect_eq "bad config message" "$out" "nvqd: $T/bad.ini:3: mode: \"turbo\" is not auto, serial or timeslice, optionally followed by INDEX:MODE entries (e.g. auto,1:serial)"
	out=$("$NVQD" -n -c "$T/nvq.ini" 2>&1); expect_eq "good config" "$out" "$T/nvq.ini: ok"
	# a second nvqd on the same socket refuses to start
	out=$("$NVQD" -c "$T/nvq.ini" 2>&1); rc=$?
	expect_eq "second nvqd exit" "$rc" 1; expect_match "second nvqd" "$out" "another nvqd is listening"
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
	expect_eq "nor kept after the job ended" \
	    "$(sqlite3 "$T/nvq.db.private" "SELECT count(*) FROM job_env")" 0
	expect_eq "the user's spool folder is private" "$(stat -c %a "$T/spool/$(id -u)")" 700
	out=$(nvq history --since 1h | wc -l)
	expect_eq "history lines (header + 7 jobs)" "$out" 8
	expect_match "history --json" "$(nvq history --state FAILED --json)" "\"exit_code\": 3"
	expect_match "list -u" "$(nvq list -a -u nobody)" "^ID +USER"
	expect_eq "list -u nobody is empty" "$(nvq list -a -u nobody | wc -l)" 1
}

t_no_daemon() {	# nvq without a daemon says so and how to start one
	local out rc
	out=$("$NVQ_BIN" -s "$T/none.sock" list 2>&1); rc=$?
	expect_eq "exit" "$rc" 1
	expect_match "message" "$out" "cannot reach nvqd at $T/none.sock.*start it with"
}

t_fake_nvml() {	# NVML via dlopen: GPUs, UUIDs, use outside the queue and by jobs
	write_config "[gpus]" "nvml_library = $HELPERS/libfake-nvml.so.1" "poll = 1s"
	export FAKE_NVML_GPUS=2x16G FAKE_NVML_PROCS=$T/procs
	: > "$T/procs"
	start_nvqd || return
	expect_match "GPUs found" "$(nvq gpus)" "GPU-fa4e0000-0000-0000-0000-000000000001 +Fake GPU"
	# a process outside the queue takes 6G of GPU 0
	sleep 3191 & local outsider=$!
	echo "0 $outsider $((6 << 30))" > "$T/procs"
	local a; a=$(submit -m 5G sh -c 'sleep 3192 & sleep 3194; wait')
	wait_state "$a" RUNNING
	sleep 0.3
	# two processes of the job use 3G and 1G of its GPU
	local p1 p2 g
	p1=$(pgrep -f '^sleep 3192$'); p2=$(pgrep -f '^sleep 3194$')
	g=$(field "$a" gpu_uuids); g=${g: -1}
	printf '0 %s %s\n%s %s %s\n%s %s %s\n' "$outsider" $((6 << 30)) "$g" "$p1" $((3 << 30)) \
	    "$g" "$p2" $((1 << 30)) > "$T/procs"
	sleep 1.5
	# GPU 0: 16G, less 5%, less the outsider's 6G: a 9.2G budget; the job
	# went there (best fit); its own 4G is USED, not outside use
	expect_eq "the job went to the GPU with less room" "$g" 0
	expect_match "GPU 0: budget, demanded, used by the queue, outside" "$(nvq gpus | grep '^0 ')" \
	    " 16G +9.2G +5G +4G +6G +$a$"
	expect_eq "outside processes counted" \
	    "$(nvq gpus --json | grep -o '"outside_procs": [0-9]*' | head -1)" '"outside_procs": 1'
	expect_match "GPU 1 untouched" "$(nvq gpus | grep '^1 ')" " 16G +15.2G +0B +0B +0B +$"
	expect_eq "the job's use is its processes' together" "$(field "$a" gpu_used)" $((4 << 30))
	expect_match "nvq list shows used/asked" "$(nvq list | awk -v id="$a" '$1 == id')" " 4G/5G "
	# one process lets go of its memory: the use falls, the peak stays
	printf '0 %s %s\n%s %s %s\n' "$outsider" $((6 << 30)) "$g" "$p1" $((1 << 30)) > "$T/procs"
	sleep 1.5
	expect_eq "use now" "$(field "$a" gpu_used)" $((1 << 30))
	expect_eq "peak so far" "$(field "$a" gpu_peak)" $((4 << 30))
	kill $outsider
	nvq cancel "$a"
	wait_state "$a" CANCELLED
	expect_eq "the run's peak is stored" \
	    "$(sqlite3 "$T/nvq.db" "SELECT peak_gpu_mem FROM runs WHERE job_id = $a")" $((4 << 30))
	unset FAKE_NVML_GPUS FAKE_NVML_PROCS
}

t_config_example() {	# etc/nvq.ini is what the key table prints
	expect_eq "etc/nvq.ini matches nvqd --print-config" \
	    "$("$NVQD" --print-config | diff - etc/nvq.ini && echo same)" same
	expect_eq "it loads" "$("$NVQD" -n -c etc/nvq.ini)" "etc/nvq.ini: ok"
}

t_reload() {	# SIGHUP reloads limits; a bad file keeps the old settings
	write_config "[limits]" "max_running_jobs = 1"
	start_nvqd || return
	local a b
	a=$(submit -g 0 sleep 30); b=$(submit -g 0 sleep 30)
	wait_state "$a" RUNNING; sleep 0.2
	expect_eq "limited" "$(state "$b")" PENDING
	write_config "[limits]" "max_running_jobs = 0"
	kill -HUP "$NVQD_PID"
	wait_state "$b" RUNNING
	echo "bogus" >> "$T/nvq.ini"
	kill -HUP "$NVQD_PID"; sleep 0.2
	expect_match "bad reload kept" "$(cat "$T/nvq.ini" > /dev/null; cat "$T/nvqd.log")" "reload: .*keeping the running configuration"
	expect_eq "still serving" "$(state "$a")" RUNNING
	nvq cancel "$a" "$b"
}

t_readme_queries() {	# the README's history queries run and answer
	write_config; start_nvqd || return
	local a b q out n=0
	a=$(submit -m 1G sleep 0.3); b=$(submit -g 0 false)
	nvq wait "$a" "$b"
	# a switch to find: one row as nvqd writes them
	sqlite3 "$T/nvq.db" "INSERT INTO switches (job_id, kind, why, gpu_uuids, started_at, ended_at,
	    seconds, bytes, ok) VALUES ($a, 'suspend', 'user', '', 1, 3.5, 2.5, 3221225472, 1)"
	while IFS= read -r q; do
		n=$((n + 1))
		q=${q//\/var\/lib\/nvq\/nvq.db/$T/nvq.db}
		q=${q//job_id = 42/job_id = $a}
		out=$(eval "$q" 2>&1) || fail "README query $n failed: $out"
		case $q in
		*switches*) expect_match "switches" "$out" "$a +suspend +user +2.5 +3072 +1" ;;
		*gpu_hours*) expect_match "GPU-hours per user" "$out" "$(id -un) +[0-9.]+ +2" ;;
		*avg_wait_s*) expect_match "waits per day" "$out" "$(date -u +%Y-%m-%d) +2 +[0-9.]+ +1" ;;
		*events*) expect_match "what happened" "$out" "PENDING +submitted.*RUNNING.*COMPLETED" ;;
		*) fail "a README query this test does not know: $q" ;;
		esac
	done < <(grep '^sqlite3 -readonly' README.md)
	expect_eq "queries found in the README" "$n" 4
}

t_socket_from_config() {	# nvq finds the socket in the configuration file
	write_config; start_nvqd || return
	local out
	out=$(NVQ_CONFIG=$T/nvq.ini "$NVQ_BIN" list 2>&1)
	expect_match "socket from NVQ_CONFIG" "$out" "^ID +USER"
	out=$(NVQ_CONFIG=$T/nvq.ini NVQ_SOCKET=$T/nope "$NVQ_BIN" list 2>&1)
	expect_match "NVQ_SOCKET comes first" "$out" "cannot reach nvqd at $T/nope"
}

t_users() {	# as root, a job runs as its submitter; others cannot cancel it
	if [ "$(id -u)" != 0 ] || ! command -v setpriv > /dev/null; then
		skip "needs root and setpriv"
		return
	fi
	chmod 755 "$T"
	write_config; start_nvqd || return
	local as_nobody="setpriv --reuid=65534 --regid=65534 --groups=65534,4 --"
	local a out
	a=$(cd /tmp && $as_nobody "$NVQ_BIN" -s "$T/sock" submit --parsable -g 0 \
	    sh -c 'id -u; id -g; id -G; sleep 30')
	wait_state "$a" RUNNING; sleep 0.3
	expect_eq "uid, gid and groups of the submitter" "$(nvq log "$a")" "65534
65534
65534 4"
	expect_eq "its owner" "$(field "$a" uid)" 65534
	expect_eq "its output belongs to it" "$(stat -c %u "$(field "$a" stdout_path)")" 65534
	expect_eq "its spool folder is its own" "$(stat -c '%u %a' "$T/spool/65534")" "65534 700"
	local b; b=$(submit -g 0 sleep 30)
	out=$($as_nobody "$NVQ_BIN" -s "$T/sock" cancel "$b" 2>&1)
	expect_match "another user's job cannot be cancelled" "$out" "belongs to root; only its owner or root may cancel it"
	expect_eq "it still runs" "$(state "$b")" RUNNING
	$as_nobody "$NVQ_BIN" -s "$T/sock" cancel "$a"
	wait_state "$a" CANCELLED
	expect_match "cancelled by its owner" "$(field "$a" reason)" "cancelled by nobody"
	nvq cancel "$b"; wait_state "$b" CANCELLED
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
	kill -9 "$apid" "$bpid"; pkill -9 -f 'sleep 310[01]'; sleep 0.3
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
	expect_eq "listed as NODE_FAIL" "$(nvq list -a --state NODE_FAIL --json | grep -o '"id": [0-9]*')" "\"id\": $b"
	nvq cancel "$a"; wait_state "$a" CANCELLED
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
		pkill -f 'sleep 3102'
	fi
}

alive() {	# PID: "alive" if it runs (a zombie does not)
	local st
	st=$(awk '{ print $3 }' "/proc/$1/stat" 2>/dev/null)
	[ -n "$st" ] && [ "$st" != Z ] && echo alive
}

shim_pid() { sqlite3 "$T/nvq.db" "SELECT pid FROM jobs WHERE id = $1"; }

cgroup_base() {	# where nvqd makes job cgroups as root, or nothing
	[ "$(id -u)" = 0 ] || return 0
	local m
	m=$(awk '$9 == "cgroup2" { print $5; exit }' /proc/self/mountinfo)
	[ -n "$m" ] && [ -w "$m" ] && echo "$m"
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

t_flood() {	# a user with a thousand silent connections does not stop nvqd serving others
	write_config; start_nvqd || return
	local as=() t0 t1 out a
	if [ "$(id -u)" = 0 ] && command -v setpriv > /dev/null; then
		chmod 755 "$T"
		as=(setpriv --reuid=65534 --regid=65534 --clear-groups --)
	fi
	"${as[@]}" "$HELPERS/flood" "$T/sock" 1000 3 > "$T/flood.out" &
	local fpid=$!
	for i in $(seq 100); do grep -q connected "$T/flood.out" && break; sleep 0.05; done
	t0=$(date +%s.%N)
	out=$(nvq list 2>&1); expect_eq "nvq list answers" "$?" 0
	a=$(submit -g 0 true); nvq wait "$a"; expect_eq "a job runs" "$?" 0
	t1=$(date +%s.%N)
	expect_eq "within a second" "$(awk -v a="$t0" -v b="$t1" 'BEGIN { print (b - a < 1) }')" 1
	wait "$fpid"
	if [ ${#as[@]} -gt 0 ]; then
		expect_eq "the flooder kept 256" "$(grep '^open' "$T/flood.out")" "open 256"
		expect_eq "the rest refused" "$(grep '^closed' "$T/flood.out")" "closed 744"
		expect_eq "logged once, not once per refusal" \
		    "$(grep -c 'uid 65534 has 256 connections' "$T/nvqd.log")" 1
	fi
	expect_eq "nvqd still serves" "$(nvq list > /dev/null 2>&1; echo $?)" 0
}

t_disk_trouble() {	# a full disk or a read-only database: submits refused, jobs run on, nothing lost
	if [ "$(id -u)" != 0 ] || ! mkdir -p "$T/db" || ! mount -t tmpfs -o size=3m tmpfs "$T/db"; then
		skip "needs root and mount"
		return
	fi
	write_config
	sed -i "s#^database = .*#database = $T/db/nvq.db#" "$T/nvq.ini"
	start_nvqd || { umount "$T/db"; return; }
	local run ok out rc i
	run=$(submit -g 0 sh -c 'sleep 1.5; exit 7')
	ok=$(submit -g 0 true); wait_state "$ok" COMPLETED
	wait_state "$run" RUNNING
	# fill the file system the database is on
	dd if=/dev/zero of="$T/db/filler" bs=64k 2> /dev/null
	for i in $(seq 50); do
		out=$(nvq submit -g 0 true 2>&1); rc=$?
		[ $rc != 0 ] && break
	done
	expect_eq "a submit on a full disk fails" "$rc" 1
	expect_match "and says why" "$out" "cannot store the job: database or disk is full; nothing was queued"
	local acked; acked=$(sqlite3 "$T/db/nvq.db" "SELECT count(*) FROM jobs" 2>/dev/null)
	sleep 1.5	# the running job ends while the disk is full
	expect_eq "nvqd runs on" "$(nvq list > /dev/null 2>&1; echo $?)" 0
	rm -f "$T/db/filler"
	wait_state "$run" FAILED 5
	expect_eq "its end is recorded once there is room" "$(field "$run" exit_code)" 7
	expect_eq "nothing acknowledged was lost" "$(sqlite3 "$T/db/nvq.db" "SELECT count(*) FROM jobs")" "$acked"
	expect_match "submits work again" "$(submit -g 0 true)" "^[0-9]+$"
	stop_nvqd
	expect_eq "integrity" "$(sqlite3 "$T/db/nvq.db" "PRAGMA integrity_check")" ok
	umount "$T/db"
	check_read_only_fs
}

# The file system under the database turns read-only while nvqd runs, as
# ext4 does after an error (remount,abort); the admin repairs it and
# restarts nvqd.
check_read_only_fs() {
	truncate -s 32M "$T/ext.img" && mkfs.ext4 -q "$T/ext.img" 2>/dev/null &&
	    mkdir -p "$T/ro" && mount -o loop "$T/ext.img" "$T/ro" || {
		skip "needs loop devices and ext4"
		return
	}
	# sync = full: what is acknowledged is on the disk, as a repair keeps no more
	sed -i "s#^database = .*#database = $T/ro/nvq.db#; s#^sync = .*#sync = full#" "$T/nvq.ini"
	start_nvqd || { umount "$T/ro"; return; }
	local run out rc acked
	run=$(submit -g 0 sh -c 'sleep 1; exit 5'); wait_state "$run" RUNNING
	acked=$(sqlite3 "$T/ro/nvq.db" "SELECT count(*) FROM jobs")
	mount -o remount,abort "$T/ro" 2> /dev/null
	expect_match "the file system is read-only" "$(awk -v m="$T/ro" '$2 == m { print $4 }' /proc/mounts)" "(^ro,|emergency_ro)"
	out=$(nvq submit -g 0 true 2>&1); rc=$?
	expect_eq "a submit to a read-only database fails" "$rc" 1
	expect_match "and says why" "$out" "cannot store the job: .*(readonly|I/O).*; nothing was queued"
	sleep 1.5	# the running job ends meanwhile
	expect_eq "still serving" "$(nvq list > /dev/null 2>&1; echo $?)" 0
	expect_eq "its end waits" "$(state "$run")" RUNNING
	kill -TERM "$NVQD_PID"; wait "$NVQD_PID"; NVQD_PID=""
	umount "$T/ro" || fail "cannot unmount the file system"
	mount -o loop "$T/ext.img" "$T/ro" || fail "cannot mount it again"
	start_nvqd || { umount "$T/ro"; return; }
	wait_state "$run" FAILED 5
	expect_eq "its exit code, recorded after the repair" "$(field "$run" exit_code)" 5
	expect_eq "nothing acknowledged was lost" "$(sqlite3 "$T/ro/nvq.db" "SELECT count(*) FROM jobs")" "$acked"
	stop_nvqd
	expect_eq "integrity" "$(sqlite3 "$T/ro/nvq.db" "PRAGMA integrity_check")" ok
	umount "$T/ro"
}

t_chaos() {	# 50 kill -9 of nvqd during a storm of submits: nothing acknowledged lost, nothing run twice
	write_config
	start_nvqd || return
	local rounds=${NVQ_CHAOS_ROUNDS:-50} r k stop="$T/stop" spid=()
	# each job says it ran, and ends with an exit code it owes to its id
	local job='echo $NVQ_JOB_ID >> '"$T"'/ran; sleep 0.$((NVQ_JOB_ID % 3)); exit $((NVQ_JOB_ID % 7))'
	for k in 1 2 3 4; do
		(
			while [ ! -e "$stop" ]; do
				id=$("$NVQ_BIN" -s "$T/sock" submit --parsable -g 0 sh -c "$job" 2>/dev/null) &&
				    echo "$id" >> "$T/acked.$k"
			done
		) &
		spid+=($!)
	done
	for r in $(seq "$rounds"); do
		sleep "0.$(printf '%03d' $((RANDOM % 400)))"
		kill -9 "$NVQD_PID"; wait "$NVQD_PID" 2>/dev/null; NVQD_PID=""
		start_nvqd || break
	done
	touch "$stop"; wait "${spid[@]}"
	local acked ran
	acked=$(cat "$T"/acked.* | sort -n | uniq | wc -l)
	# everything ends
	for k in $(seq 600); do
		[ "$(sqlite3 "$T/nvq.db" "SELECT count(*) FROM jobs WHERE state IN ('PENDING', 'RUNNING')")" = 0 ] && break
		sleep 0.1
	done
	echo "    $rounds rounds, $acked jobs acknowledged, $(sqlite3 "$T/nvq.db" "SELECT count(*) FROM jobs") stored;" \
	    "starts voided $(grep -c 'never started; pending again' "$T/nvqd.log")," \
	    "shims found $(grep -c 'found its supervisor' "$T/nvqd.log")," \
	    "reattached $(grep -c 'reattached' "$T/nvqd.log")"
	expect_eq "all ended" "$(sqlite3 "$T/nvq.db" "SELECT count(*) FROM jobs WHERE state IN ('PENDING', 'RUNNING')")" 0
	expect_eq "many were acknowledged" "$(( acked > 100 ))" 1
	local missing=0 id
	for id in $(cat "$T"/acked.*); do
		[ "$(sqlite3 "$T/nvq.db" "SELECT count(*) FROM jobs WHERE id = $id")" = 1 ] || missing=$((missing + 1))
	done
	expect_eq "every acknowledged job is stored" "$missing" 0
	expect_eq "none ran twice" "$(sort "$T/ran" | uniq -d | wc -l)" 0
	expect_eq "one run each" "$(sqlite3 "$T/nvq.db" "SELECT count(*) FROM (SELECT job_id FROM runs
	    GROUP BY job_id HAVING count(*) > 1)")" 0
	expect_eq "every job ran" "$(sort -u "$T/ran" | wc -l)" "$(sqlite3 "$T/nvq.db" "SELECT count(*) FROM jobs")"
	local wrong="WHERE exit_code IS NOT id % 7 OR state != CASE WHEN id % 7 = 0 THEN 'COMPLETED' ELSE 'FAILED' END"
	expect_eq "every end has its real exit code" "$(sqlite3 "$T/nvq.db" "SELECT count(*) FROM jobs $wrong")" 0
	sqlite3 "$T/nvq.db" "SELECT '    wrong end: job ' || id || ' ' || state || ' exit ' || ifnull(exit_code, 'none') ||
	    ' (' || ifnull(reason, '') || ')' FROM jobs $wrong LIMIT 5"
	sqlite3 "$T/nvq.db" "SELECT '      event ' || job_id || ' ' || state || ' ' || ifnull(reason, '') FROM events
	    WHERE job_id IN (SELECT id FROM jobs $wrong LIMIT 5)"
	expect_eq "integrity" "$(sqlite3 "$T/nvq.db" "PRAGMA integrity_check")" ok
	stop_nvqd
	sleep 0.2
	expect_eq "no process of the test is left" "$(pgrep -f "$T" | wc -l)" 0
}

# Two unprivileged users made for the test, and a group for admins.
make_users() {
	getent group nvqtadm > /dev/null || groupadd nvqtadm || return 1
	getent group nvqtx > /dev/null || groupadd nvqtx || return 1
	id nvqta > /dev/null 2>&1 || useradd -M -N -g nogroup -G nvqtx -s /bin/sh nvqta || return 1
	id nvqtb > /dev/null 2>&1 || useradd -M -N -g nogroup -G nvqtadm -s /bin/sh nvqtb || return 1
}
as_user() {	# USER COMMAND...: run as USER with the user's groups, from /tmp
	local u=$1; shift
	(cd /tmp && setpriv --reuid="$u" --regid="$(id -g "$u")" --init-groups -- "$@")
}

t_security() {	# user A's jobs are safe from user B; jobs run as exactly their submitter
	if [ "$(id -u)" != 0 ] || ! command -v setpriv > /dev/null || ! command -v useradd > /dev/null ||
	    ! make_users; then
		skip "needs root, setpriv and useradd"
		return
	fi
	chmod 755 "$T"
	write_config; start_nvqd || return
	local a b out rc verb
	a=$(as_user nvqta env SECRET_OF_A=hunter2 "$NVQ_BIN" -s "$T/sock" submit --parsable -g 0 \
	    sh -c 'id -u; id -g; id -G; sleep 30')
	b=$(as_user nvqtb "$NVQ_BIN" -s "$T/sock" submit --parsable -g 0 sleep 30)
	wait_state "$a" RUNNING; wait_state "$b" RUNNING; sleep 0.3
	expect_eq "A's job runs with A's uid, gid and groups" "$(nvq log "$a" | tr '\n' ' ')" \
	    "$(id -u nvqta) $(id -g nvqta) $(id -G nvqta) "
	expect_eq "and its processes are A's" "$(ps -o uid= --ppid "$(shim_pid "$a")" | tr -d ' ')" "$(id -u nvqta)"
	# B acting on A's job: every verb refused, the job untouched
	for verb in cancel hold release; do
		out=$(as_user nvqtb "$NVQ_BIN" -s "$T/sock" "$verb" "$a" 2>&1); rc=$?
		expect_eq "B may not $verb A's job" "$rc" 1
		expect_match "and is told why ($verb)" "$out" "belongs to nvqta; only its owner or root may $verb it"
	done
	expect_eq "A's job still runs" "$(state "$a")" RUNNING
	expect_eq "not held" "$(sqlite3 "$T/nvq.db" "SELECT held FROM jobs WHERE id = $a")" 0
	out=$(as_user nvqtb "$NVQ_BIN" -s "$T/sock" submit -g 0 -p 101 true 2>&1)
	expect_match "B may not go above max_priority" "$out" "above \[limits\] max_priority \(100\)"
	# A's environment: not in the shared database, not readable by B
	expect_eq "not in the database others read" "$(grep -c hunter2 "$T/nvq.db" "$T/nvq.db-wal" 2>/dev/null | awk -F: '{ s += $2 } END { print s }')" 0
	expect_eq "the private database is root's alone" "$(stat -c '%U %a' "$T/nvq.db.private")" "root 600"
	out=$(as_user nvqtb cat "$T/nvq.db.private" 2>&1); expect_match "B cannot read it" "$out" "Permission denied"
	out=$(as_user nvqtb cat "/proc/$(pgrep -f 'sleep 30' -u nvqta | head -1)/environ" 2>&1)
	expect_match "nor the job's environment in /proc" "$out" "Permission denied"
	out=$(as_user nvqtb ls "$T/spool/$(id -u nvqta)" 2>&1)
	expect_match "nor A's spool folder" "$out" "Permission denied"
	expect_match "B still reads the history with sqlite3" \
	    "$(as_user nvqtb sqlite3 -readonly "$T/nvq.db" "SELECT count(*) FROM jobs" 2>&1)" "^[0-9]+$"
	# a planted symlink for an output file is not followed
	mkdir -m 1777 "$T/shared"; echo root-data > "$T/rootfile"; chmod 644 "$T/rootfile"
	ln -s "$T/rootfile" "$T/shared/out.txt"; chown -h nvqtb "$T/shared/out.txt"
	out=$(as_user nvqta "$NVQ_BIN" -s "$T/sock" submit --parsable -g 0 -o "$T/shared/out.txt" \
	    sh -c 'echo written > '"$T"'/shared/ran')
	wait_state "$out" FAILED
	# (the kernel's protected_symlinks may refuse it before O_NOFOLLOW does)
	expect_match "the job fails" "$(field "$out" reason)" "cannot open $T/shared/out.txt: (Too many levels of symbolic links|Permission denied)"
	expect_eq "the target is untouched" "$(cat "$T/rootfile")" root-data
	expect_eq "the job never ran" "$([ -e "$T/shared/ran" ] && echo ran)" ""
	# a link A planted in A's own folder, to a file A owns: O_NOFOLLOW
	mkdir "$T/adir"; echo a-data > "$T/adir/afile"; ln -s "$T/adir/afile" "$T/adir/out.txt"
	chown -R -h nvqta "$T/adir"
	out=$(as_user nvqta "$NVQ_BIN" -s "$T/sock" submit --parsable -g 0 -o "$T/adir/out.txt" true)
	wait_state "$out" FAILED
	expect_match "not followed" "$(field "$out" reason)" "cannot open $T/adir/out.txt: Too many levels of symbolic links"
	expect_eq "its target untouched" "$(cat "$T/adir/afile")" a-data
	# a working directory replaced by a link before the job starts
	mkdir "$T/adir/work"; chown nvqta "$T/adir/work"
	local first; first=$(as_user nvqta "$NVQ_BIN" -s "$T/sock" submit --parsable -g 0 sleep 1)
	out=$(cd "$T/adir/work" && setpriv --reuid=nvqta --regid="$(id -g nvqta)" --init-groups -- \
	    "$NVQ_BIN" -s "$T/sock" submit --parsable -g 0 --after "$first" pwd)
	mv "$T/adir/work" "$T/adir/work.real"; ln -s "$T/adir/work.real" "$T/adir/work"
	wait_state "$out" FAILED 5
	expect_match "a linked working directory is not entered" "$(field "$out" reason)" \
	    "cannot enter $T/adir/work: (Too many levels of symbolic links|Not a directory)"
	# admins: members of [security] admin_group may act on any job
	printf '[security]\nadmin_group = nvqtadm\n' >> "$T/nvq.ini"; kill -HUP "$NVQD_PID"; sleep 0.3
	as_user nvqtb "$NVQ_BIN" -s "$T/sock" cancel "$a"
	expect_eq "an admin may cancel A's job" "$?" 0
	wait_state "$a" CANCELLED
	expect_match "by the admin" "$(field "$a" reason)" "cancelled by nvqtb"
	out=$(as_user nvqta "$NVQ_BIN" -s "$T/sock" cancel "$b" 2>&1)
	expect_match "A is no admin" "$out" "only its owner, root or members of nvqtadm may cancel it"
	nvq cancel "$b"; wait_state "$b" CANCELLED
	stop_nvqd
	check_failed_drop
}

# nvqd as root in a user namespace that maps no other uid: dropping to the
# submitter's uid fails there, and the job must fail without running.
check_failed_drop() {
	if ! unshare -Ur true 2>/dev/null; then
		skip "needs user namespaces"
		return
	fi
	# the unmapped submitter is 65534 in there; its spool folder is made here
	mkdir -p -m 700 "$T/spool/65534"; chown 65534 "$T/spool/65534"
	unshare -Ur "$NVQD" -c "$T/nvq.ini" >> "$T/nvqd.log" 2>&1 &
	NVQD_PID=$!
	local i a
	for i in $(seq 100); do nvq list > /dev/null 2>&1 && break; sleep 0.05; done
	a=$(as_user nvqta "$NVQ_BIN" -s "$T/sock" submit --parsable -g 0 \
	    sh -c 'id -u > '"$T"'/shared/dropped')
	wait_state "$a" FAILED
	expect_match "a failed drop fails the job" "$(field "$a" reason)" "^cannot set (the groups of|gid|uid)"
	expect_eq "which never ran" "$([ -e "$T/shared/dropped" ] && echo ran)" ""
	expect_eq "its exit code" "$(field "$a" exit_code)" 126
}

t_load() {	# 50 clients x 200 submits at once: every one acknowledged and stored, once
	write_config "[limits]" "max_running_jobs = 8"
	start_nvqd || return
	"$HELPERS/load" "$T/sock" 50 200 "$T/ids" > "$T/load.out"
	expect_eq "no submit failed" "$?" 0
	sed 's/^/    /' "$T/load.out" | grep -E "acknowledged|per_second|p50|p99"
	expect_eq "10000 acknowledged" "$(grep '^acknowledged' "$T/load.out")" "acknowledged 10000"
	expect_eq "10000 distinct ids" "$(sort -u "$T/ids" | wc -l)" 10000
	expect_eq "every one stored" "$(sqlite3 "$T/nvq.db" "SELECT count(*) FROM jobs WHERE id IN
	    ($(paste -sd, "$T/ids"))")" 10000
	expect_eq "and nothing else" "$(sqlite3 "$T/nvq.db" "SELECT count(*) FROM jobs")" 10000
}

t_schema_upgrade() {	# an older database is upgraded in place; a newer one refused
	write_config
	sqlite3 "$T/nvq.db" < schema/001_init.sql
	sqlite3 "$T/nvq.db" "PRAGMA user_version = 1; INSERT INTO jobs (uid, gid, user, name,
	    command, argv, cwd, state, gpus, stdout_path, stderr_path, submitted_at, ended_at,
	    exit_code) VALUES (0, 0, 'root', 'old', 'true', x'7472756500', '/', 'COMPLETED', 0,
	    '/dev/null', '/dev/null', 1000, 1001, 0)"
	start_nvqd || return
	local want; want=$(ls schema/[0-9]*.sql | wc -l)
	expect_eq "upgraded" "$(sqlite3 "$T/nvq.db" "PRAGMA user_version")" "$want"
	expect_eq "the old job is kept" "$(field 1 name) $(field 1 state)" "old COMPLETED"
	local a; a=$(submit -g 0 true); nvq wait "$a"
	expect_eq "new jobs get the next id" "$a" 2
	stop_nvqd
	sqlite3 "$T/nvq.db" "PRAGMA user_version = 99"
	local out; out=$("$NVQD" -c "$T/nvq.ini" 2>&1)
	expect_match "a newer database is refused" "$out" "schema version 99, newer than this nvqd's $want"
	sqlite3 "$T/nvq.db" "PRAGMA user_version = $want"
	expect_eq "and left as it was" "$(sqlite3 "$T/nvq.db" "SELECT count(*) FROM jobs")" 2
}

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

# ---- the hook's link: locks, reports, reconnection (fake libcuda jobs)
FAKE_JOB=$ROOT/$BUILD/tests/fake_job
FAKE_LIB=$ROOT/$BUILD/tests/fake
fsubmit() { LD_LIBRARY_PATH=$FAKE_LIB submit "$@"; }
count() { cat "$1" 2>/dev/null || echo 0; }
wait_count() {	# FILE: until it exists and grows
	local i
	for i in $(seq 100); do
		[ "$(count "$1")" -gt 10 ] 2>/dev/null && return 0
		sleep 0.05
	done
	fail "$1 never counted launches"; return 1
}
wait_field() {	# ID KEY REGEX [SECONDS]
	local i v
	for i in $(seq $(( ${4:-5} * 20 ))); do
		v=$(field "$1" "$2")
		[[ $v =~ $3 ]] && return 0
		sleep 0.05
	done
	fail "job $1: $2 is '$v', not /$3/"; return 1
}
growing() {	# FILE SECONDS: prints "grows" or "still"
	local a b; a=$(count "$1"); sleep "$2"; b=$(count "$1")
	[ "$b" -gt "$a" ] && echo grows || echo still
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
	expect_eq "the other GPU's job goes on" "$(growing "$T/b" 0.3)" grows
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
	expect_eq "the process is stopped" "$(awk '{print $3}' /proc/"$pid"/stat)" T
	rm -f "$T/hang"
	nvq release "$a" > /dev/null
	sleep 0.2
	expect_match "SIGCONT on release" "$(awk '{print $3}' /proc/"$pid"/stat)" "^[RSD]$"
	expect_eq "launches again" "$(growing "$T/a" 0.4)" grows
	expect_match "logged" "$(cat "$T/nvqd.log")" "no acknowledgement of the lock in 1s"
	nvq cancel "$a"
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
	expect_match "gpus shows it" "$(nvq gpus --json)" '"compute": "timeslice"'
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

# ---- suspend, resume, preemption and turns, against the fake checkpoint API
ckpt_config() {	# the fake libcuda's checkpoint API for nvq-ckpt and the jobs
	export FAKE_CKPT_DIR=$T/ckpt
	mkdir -p "$FAKE_CKPT_DIR"
	write_config "[gpus]" "virtual = 1x80G" "cuda_library = $FAKE_LIB/libcuda.so.1" "$@"
}
ckpt_state() {	# PID: 0 running, 1 locked, 2 checkpointed (the fake driver's view)
	cat "$FAKE_CKPT_DIR/$1" 2>/dev/null || echo 0
}
switches() {	# ID: its switches, one per line
	sqlite3 "$T/nvq.db" "SELECT kind, why, ok FROM switches WHERE job_id = $1 ORDER BY id" |
	    tr '\n' ' '
}

t_suspend() {	# nvq suspend and resume: GPU memory out and back, the job never killed
	[ -x "$FAKE_JOB" ] || { fail "build tests/fake_job first"; return; }
	ckpt_config
	start_nvqd || return
	local a pid out b
	a=$(fsubmit -m 10G "$FAKE_JOB" launch 60 "$T/a")
	wait_count "$T/a" || return
	wait_field "$a" hook_pids '^[0-9]+$'
	pid=$(field "$a" hook_pids)
	expect_match "demanded while running" "$(nvq gpus --json)" '"demanded": 10737418240'
	out=$(nvq suspend "$a"); expect_eq "nvq suspend waits for it" "$out" "job $a suspended"
	expect_eq "SUSPENDED" "$(state "$a")" SUSPENDED
	expect_eq "its process is checkpointed" "$(ckpt_state "$pid")" 2
	expect_eq "it launches nothing" "$(growing "$T/a" 0.5)" still
	expect_eq "its process lives" "$(kill -0 "$pid" && echo alive)" alive
	expect_match "its memory is free for others" "$(nvq gpus --json)" '"demanded": 0,'
	expect_match "nvq list shows it" "$(nvq list)" "SUSPENDED.*nvq resume $a"
	out=$(nvq suspend "$a" 2>&1); expect_match "twice" "$out" "suspended already"
	# a job that needs the whole GPU starts meanwhile
	b=$(submit -m 75G sleep 0.5)
	wait_state "$b" COMPLETED
	expect_eq "resume" "$(nvq resume "$a")" "job $a resumes once its memory is free on its GPUs"
	wait_state "$a" RUNNING
	expect_eq "restored and unlocked" "$(ckpt_state "$pid")" 0
	expect_eq "it launches again" "$(growing "$T/a" 0.5)" grows
	expect_eq "recorded" "$(switches "$a")" "suspend|user|1 resume|user|1 "
	expect_eq "its time suspended" "$(sqlite3 "$T/nvq.db" "SELECT suspended_time > 0.3 FROM jobs
	    WHERE id = $a")" 1
	expect_match "nvq show lists the switches" "$(nvq show "$a")" "switch suspend: why=user"
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
	# suspended across a restart of nvqd, then cancelled: it ends
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

t_preempt() {	# a higher job suspends a lower one; two arriving together do not thrash
	[ -x "$FAKE_JOB" ] || { fail "build tests/fake_job first"; return; }
	ckpt_config "[scheduler]" "preempt = suspend" "preempt_min_runtime = 0s"
	start_nvqd || return
	local low h1 h2
	low=$(fsubmit -m 50G -p 0 "$FAKE_JOB" launch 60 "$T/low")
	wait_count "$T/low" || return
	wait_field "$low" hook_pids '^[0-9]+$'
	h1=$(fsubmit -m 50G -p 10 "$FAKE_JOB" launch 2 "$T/h1")
	h2=$(fsubmit -m 50G -p 10 "$FAKE_JOB" launch 2 "$T/h2")
	wait_state "$low" SUSPENDED
	timeout 1 "$NVQ_BIN" -s "$T/sock" wait "$low"
	expect_eq "nvq wait waits for a suspended job" "$?" 124
	wait_state "$h1" RUNNING
	expect_eq "the second waits for the first" "$(state "$h2")" PENDING
	wait_state "$h1" COMPLETED
	wait_state "$h2" COMPLETED
	wait_state "$low" RUNNING
	expect_eq "suspended once, resumed once" "$(switches "$low")" \
	    "suspend|preempt|1 resume|preempt|1 "
	expect_eq "for the first" "$(sqlite3 "$T/nvq.db" "SELECT by_job FROM switches
	    WHERE job_id = $low AND kind = 'suspend'")" "$h1"
	expect_eq "no high job was suspended" "$(sqlite3 "$T/nvq.db" "SELECT count(*) FROM switches
	    WHERE job_id IN ($h1, $h2)")" 0
	expect_eq "the low job goes on" "$(growing "$T/low" 0.5)" grows
	expect_match "the event says why" "$(nvq show "$low")" "SUSPENDED +preempted by job $h1"
	nvq cancel "$low" > /dev/null
	wait_state "$low" CANCELLED 40
	# preempt = off: the high job waits
	stop_nvqd
	ckpt_config "[scheduler]" "preempt = off"
	start_nvqd || return
	low=$(fsubmit -m 50G -p 0 "$FAKE_JOB" launch 3 "$T/low2")
	wait_count "$T/low2" || return
	h1=$(fsubmit -m 50G -p 10 "$FAKE_JOB" launch 1 "$T/h3")
	sleep 1
	expect_eq "off: nobody is suspended" "$(state "$low")$(state "$h1")" RUNNINGPENDING
	wait_state "$h1" COMPLETED
}

t_preempt_min_runtime() {	# a job that just started is not preempted before preempt_min_runtime
	[ -x "$FAKE_JOB" ] || { fail "build tests/fake_job first"; return; }
	ckpt_config "[scheduler]" "preempt = suspend" "preempt_min_runtime = 3s"
	start_nvqd || return
	local low h t0 t1
	low=$(fsubmit -m 50G "$FAKE_JOB" launch 30 "$T/low")
	wait_count "$T/low" || return
	t0=$(date +%s.%N)
	h=$(fsubmit -m 50G -p 10 "$FAKE_JOB" launch 1 "$T/h")
	sleep 1.5
	expect_eq "protected for now" "$(state "$low")" RUNNING
	wait_state "$low" SUSPENDED 10
	t1=$(date +%s.%N)
	expect_eq "after about 3s of its run" "$(awk -v a="$t0" -v b="$t1" 'BEGIN { print (b - a > 1.5 && b - a < 6) }')" 1
	wait_state "$h" COMPLETED
	nvq cancel "$low" > /dev/null
}

t_preempt_requeue() {	# preempt = requeue stops --requeue jobs and queues them again
	[ -x "$FAKE_JOB" ] || { fail "build tests/fake_job first"; return; }
	ckpt_config "[scheduler]" "preempt = requeue" "preempt_min_runtime = 0s" "kill_grace = 2s"
	start_nvqd || return
	local low q h
	low=$(fsubmit -m 30G "$FAKE_JOB" launch 30 "$T/low")
	q=$(fsubmit --requeue -m 30G "$FAKE_JOB" launch 3 "$T/q")
	wait_count "$T/low" && wait_count "$T/q" || return
	h=$(fsubmit -m 40G -p 10 "$FAKE_JOB" launch 1 "$T/h")
	wait_state "$h" RUNNING 10
	expect_eq "the job without --requeue runs on" "$(state "$low")" RUNNING
	wait_state "$h" COMPLETED
	wait_state "$q" COMPLETED 20
	expect_eq "stopped once and run again" "$(sqlite3 "$T/nvq.db" "SELECT restarts FROM jobs
	    WHERE id = $q")" 1
	expect_match "its events" "$(nvq show "$q")" "PREEMPTED +preempted by job $h.*PENDING +requeued"
	nvq cancel "$low" > /dev/null
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
	expect_match "nvq show has the hook's share" "$(nvq show "$a")" "switch resume: .*hook_bytes=$mib"
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

t_timeslice_turns() {	# jobs that do not fit together take turns, each making progress
	[ -x "$FAKE_JOB" ] || { fail "build tests/fake_job first"; return; }
	ckpt_config "[scheduler]" "mode = timeslice" "turn = 1s" "preempt = off"
	start_nvqd || return
	local a b c i both=0 ga gb gc n
	a=$(fsubmit -m 45G "$FAKE_JOB" launch 8 "$T/a")
	b=$(fsubmit -m 45G "$FAKE_JOB" launch 8 "$T/b")
	c=$(fsubmit -m 45G "$FAKE_JOB" launch 8 "$T/c")
	expect_match "gpus shows the turn" "$(nvq gpus --json)" '"mode": "timeslice"'
	sleep 5
	expect_match "all three made progress" "$(count "$T/a") $(count "$T/b") $(count "$T/c")" \
	    "^[1-9][0-9]+ [1-9][0-9]+ [1-9][0-9]+$"
	# never two at once: sample who launches
	for i in $(seq 10); do
		ga=$(count "$T/a"); gb=$(count "$T/b"); gc=$(count "$T/c")
		sleep 0.1
		n=0
		[ "$(count "$T/a")" -gt "$ga" ] && n=$((n + 1))
		[ "$(count "$T/b")" -gt "$gb" ] && n=$((n + 1))
		[ "$(count "$T/c")" -gt "$gc" ] && n=$((n + 1))
		[ $n -ge 2 ] && both=$((both + 1))
	done
	[ "$both" -le 3 ] || fail "two jobs launched at once in $both of 10 samples"
	wait_state "$a" COMPLETED 20; wait_state "$b" COMPLETED 20; wait_state "$c" COMPLETED 20
	n=$(sqlite3 "$T/nvq.db" "SELECT count(*) FROM switches WHERE why = 'timeslice' AND ok = 1")
	expect_eq "several turns" "$(( n >= 4 ))" 1
	expect_eq "each was suspended at some time" "$(sqlite3 "$T/nvq.db" "SELECT count(DISTINCT job_id)
	    FROM switches WHERE why = 'timeslice' AND kind = 'suspend'")" 3
}

# tests by topic, each file a set of t_ functions using the helpers above
for f in tests/system/t_*.sh; do
	[ -e "$f" ] && . "$f"
done

ALL=$(declare -F | awk '{print $3}' | grep '^t_')
for t in ${@:-$ALL}; do
	run_test "$t"
done
pkill -f 'sleep 31[789][0-9]' 2>/dev/null
echo
echo "system tests: $PASSED passed, $FAILED failed${FAILS:+: ${FAILS[*]}}, $SKIPPED skipped${SKIPS:+: ${SKIPS[*]}}"
[ $FAILED = 0 ]
