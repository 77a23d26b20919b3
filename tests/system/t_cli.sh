# t_cli.sh: nvq as a user meets it: bad input, no daemon, the socket from
# the configuration, the README's queries, the sqlite3 shell beside nvqd.
# Sourced by run.sh (helpers in lib.sh).

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
	expect_eq "an unknown command is one line" "$(wc -l <<< "$out")" 1
	out=$(nvq sumbit true 2>&1); rc=$?
	expect_eq "a mistyped command's exit" "$rc" 2
	expect_eq "a mistyped command: what was meant" "$out" \
	    'nvq: unknown command "sumbit": did you mean "submit"? (nvq --help lists them)'
	out=$(nvq hist 2>&1); expect_match "a command's start: that command" "$out" 'did you mean "history"'
	out=$(nvq --bogus list 2>&1); rc=$?
	expect_eq "an unknown option of nvq's own: one line, exit 2" "$(wc -l <<< "$out") $rc" "1 2"
	out=$(nvq history --since lastweek 2>&1); expect_match "bad --since" "$out" "not a date"
	out=$(nvq list --state DONE 2>&1); expect_match "a bad --state names the codes" "$out" "Slurm's PD, R"
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

t_run_attached_limit() {	# one user's nvq run jobs waiting to start hold nvqd's files: 32 at most; the 33rd says so
	write_config "[resources]" "cpus = 1"
	start_nvqd || return
	local blk i out rc last pids=()
	blk=$(submit -g 0 sleep 60)
	wait_state "$blk" RUNNING
	# eight at a time: nvqd takes 16 of a user's attaches in flight at once
	for i in $(seq 32); do
		nvq run -g 0 true > /dev/null 2>&1 < /dev/null &
		pids+=($!)
		[ $((i % 8)) = 0 ] || continue
		for _ in $(seq 200); do
			[ "$(grep -c "released: nvq run attached" "$T/nvqd.log")" -ge "$i" ] && break
			sleep 0.05
		done
	done
	expect_eq "32 wait, each with its stdin in nvqd" \
	    "$(grep -c "released: nvq run attached" "$T/nvqd.log")" 32
	out=$(nvq run -g 0 true 2>&1 < /dev/null); rc=$?
	expect_eq "the 33rd: refused" "$rc" 1
	expect_match "saying why" "$out" "root has 32 jobs of nvq run waiting to start, the most a user may"
	last=$(sqlite3 "$T/nvq.db" "SELECT max(id) FROM jobs")
	expect_eq "and its job cancelled" "$(state "$last")" CANCELLED
	nvq cancel "$blk" > /dev/null
	for i in "${pids[@]}"; do wait "$i"; done
	expect_eq "the 32 ran" "$(sqlite3 "$T/nvq.db" "SELECT count(*) FROM jobs WHERE state = 'COMPLETED'")" 32
	expect_eq "once they started, nvq run is taken again" "$(nvq run -g 0 echo ok < /dev/null)" ok
}

t_stale_socket_held() {	# a killed nvqd's socket still open a moment in a child it was spawning: not another nvqd
	write_config
	# a process that holds a listening socket at the path for 0.4 s and
	# never accepts, as a child between posix_spawn's clone and exec does
	python3 -c 'import socket, sys, time
s = socket.socket(socket.AF_UNIX); s.bind(sys.argv[1]); s.listen(8)
open(sys.argv[1] + ".up", "w").close(); time.sleep(0.4)' "$T/sock" &
	local holder=$! i
	for i in $(seq 100); do [ -e "$T/sock.up" ] && break; sleep 0.02; done
	start_nvqd
	wait "$holder"
	expect_match "it started" "$(cat "$T/nvqd.log")" "listening on $T/sock"
	expect_eq "it serves" "$(nvq list > /dev/null 2>&1; echo $?)" 0
	stop_nvqd
	# the process that listened is gone, a child of its holds the socket 5 s:
	# stale at once (the connection's peer is the listener), not after 5 s
	rm -f "$T/sock" "$T/sock.up"
	python3 -c 'import os, socket, sys, time
s = socket.socket(socket.AF_UNIX); s.bind(sys.argv[1]); s.listen(8)
if os.fork() == 0:
    time.sleep(5); os._exit(0)
open(sys.argv[1] + ".up", "w").close()' "$T/sock"
	# (not start_nvqd: its nvq list would wait on the child's socket until nvqd replaced it)
	local i n0
	n0=$(grep -c "listening on" "$T/nvqd.log")
	NVQD_STRICT=1 "$NVQD" -c "$T/nvq.ini" >> "$T/nvqd.log" 2>&1 &
	NVQD_PID=$!
	for i in $(seq 60); do
		[ "$(grep -c "listening on" "$T/nvqd.log")" -gt "$n0" ] && break
		sleep 0.05
	done
	expect_eq "listening within 3 s, while the child still held it" \
	    "$(grep -c "listening on" "$T/nvqd.log")" $((n0 + 1))
	expect_eq "and serves" "$(nvq list > /dev/null 2>&1; echo $?)" 0
}

t_version() {	# nvq --version: the package's version and the protocol
	local out v
	out=$("$NVQ_BIN" --version); expect_eq "nvq --version exits 0" "$?" 0
	v=$(sed -n '1s/^nvq (\([^-)]*\).*/\1/p' debian/changelog)
	expect_eq "the version is the package's" "$out" "nvq $v (protocol $(sed -n 's/^#define PROTO_VERSION\t\([0-9]*\).*/\1/p' common/proto.h))"
	expect_eq "-V the same" "$("$NVQ_BIN" -V)" "$out"
}

t_help_options() {	# every command's --help explains each option it takes, Slurm's name beside; nvq(1) the same
	local cmds c out bad=0 long=0 n=0
	cmds=$("$NVQ_BIN" --help | sed -n '/^commands:/,/^$/p' | awk 'NR > 1 && NF {print $1}')
	expect_match "commands listed" "$(echo $cmds)" "^submit run list .*shares$"
	for c in $cmds; do
		out=$("$NVQ_BIN" "$c" --help) || { fail "nvq $c --help exits $?"; continue; }
		n=$((n + 1))
		echo "$out" | grep -q "(undocumented)" && { echo "    nvq $c: $(echo "$out" | grep -B1 undocumented | head -1)"; bad=$((bad + 1)); }
		long=$((long + $(echo "$out" | awk 'length > 80' | wc -l)))
		expect_match "nvq $c --help: usage, what it does, options" "$out" "^usage: nvq $c.*options:.*-h, --help"
	done
	expect_eq "every command's --help read" "$n" "$(echo $cmds | wc -w)"
	expect_eq "no option without its line" "$bad" 0
	expect_eq "lines fit 80 columns" "$long" 0
	out=$("$NVQ_BIN" submit --help)
	expect_match "submit: -g with its Slurm name" "$out" "-g, --gpus N +GPUs the job needs.*Slurm: --gpus=N"
	expect_match "submit: where the letters differ, said" "$(echo $out)" "Slurm's -p is a partition"
	expect_match "list: --state's forms" "$(echo $("$NVQ_BIN" list --help))" "--state STATES .*Slurm's codes PD, R"
	out=$("$NVQ_BIN" --man)
	expect_match "nvq(1): the options' section" "$out" "SH COMMAND OPTIONS"
	expect_eq "nvq(1): an option with its Slurm name" "$(echo "$out" | grep -A1 -F '\fB\-g, \-\-gpus N\fR' | tail -1 | grep -cF 'Slurm: \-\-gpus=N')" 1
}

t_filters_slurm() {	# --state in any case or Slurm's codes; --since today, yesterday, 08:00, now-1h
	write_config; start_nvqd || return
	local a b
	a=$(submit -g 0 sleep 30); wait_state "$a" RUNNING
	b=$(submit -g 0 --hold true)
	expect_eq "--state r" "$(nvq list --state r --format id | tail -n +2 | xargs)" "$a"
	expect_eq "--state Running" "$(nvq list --state Running --format id | tail -n +2 | xargs)" "$a"
	expect_eq "--state PD" "$(nvq list --state PD --format id | tail -n +2 | xargs)" "$b"
	# lists, as squeue -t takes them: any case, codes and names mixed, repeats
	expect_eq "--state running,PENDING" "$(nvq list --state running,PENDING --format id | tail -n +2 | xargs)" "$a $b"
	expect_eq "--state R,pd,r" "$(nvq list --state R,pd,r --format id | tail -n +2 | xargs)" "$a $b"
	expect_eq "--state R,cd: the running one" "$(nvq list --state R,cd --format id | tail -n +2 | xargs)" "$a"
	expect_match "--state R,x: refused, naming x" "$(nvq list --state R,x 2>&1)" '--state R,x: "x" is not one of'
	expect_eq "--state R,x: exit 2" "$(nvq list --state R,x > /dev/null 2>&1; echo $?)" 2
	nvq cancel "$a" "$b" > /dev/null; wait_state "$a" CANCELLED
	expect_eq "--state ca" "$(nvq history --state ca --format id | tail -n +2 | sort -n | xargs)" "$a $b"
	expect_eq "--state ca,F: history" "$(nvq history --state ca,F --format id | tail -n +2 | sort -n | xargs)" "$a $b"
	expect_eq "--state R,CA: list" "$(nvq list --state R,CA --format id | tail -n +2 | sort -n | xargs)" "$a $b"
	local w n=2
	for w in yesterday now-1h 1h; do
		expect_eq "--since $w: both" "$(nvq history --since "$w" --format id | tail -n +2 | wc -l)" 2
	done
	# the day's start: both, unless they ended before a midnight just passed
	[ "$(date -d "@$(field "$a" ended_at | cut -d. -f1)" +%F)" = "$(date +%F)" ] || n=0
	for w in today midnight 00:00; do
		expect_eq "--since $w: both" "$(nvq history --since "$w" --format id | tail -n +2 | wc -l)" "$n"
	done
	expect_eq "--since a date to come: none" "$(nvq history --since 2099-01-01 --format id | tail -n +2 | wc -l)" 0
}

t_no_daemon() {	# nvq without a daemon says so and how to start one
	local out rc
	out=$("$NVQ_BIN" -s "$T/none.sock" list 2>&1); rc=$?
	expect_eq "exit" "$rc" 1
	expect_match "message" "$out" "cannot reach nvqd at $T/none.sock.*start it with"
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
		# virtual GPUs have no energy counter: no kWh known, the GPU run counted unknown
		*kwh_known*) expect_match "energy per user" "$out" "$(id -un) +1 *$" ;;
		*) fail "a README query this test does not know: $q" ;;
		esac
	done < <(grep '^sqlite3 -readonly' README.md)
	expect_eq "queries found in the README" "$n" 5
}

t_socket_from_config() {	# nvq finds the socket in the configuration file
	write_config; start_nvqd || return
	local out
	out=$(NVQ_CONFIG=$T/nvq.ini "$NVQ_BIN" list 2>&1)
	expect_match "socket from NVQ_CONFIG" "$out" "^ID +USER"
	out=$(NVQ_CONFIG=$T/nvq.ini NVQ_SOCKET=$T/nope "$NVQ_BIN" list 2>&1)
	expect_match "NVQ_SOCKET comes first" "$out" "cannot reach nvqd at $T/nope"
}

t_list_pages() {	# a listing of any length comes in pages: every row once, in order, JSON too
	write_config
	start_nvqd || return
	local a out ids
	a=$(submit -g 0 true)
	nvq wait "$a"
	stop_nvqd
	# 2600 finished jobs, copies of that one: nvqd sends 1000 rows a page
	sqlite3 "$T/nvq.db" "WITH RECURSIVE k(i) AS (SELECT $a + 1 UNION ALL SELECT i + 1 FROM k
	    WHERE i < $a + 2599) INSERT INTO jobs (id, uid, gid, user, name, command, argv, cwd,
	    state, gpus, priority, stdout_path, stderr_path, submitted_at, started_at, ended_at,
	    exit_code) SELECT i, uid, gid, user, name || i, command, argv, cwd, state, gpus,
	    priority, stdout_path, stderr_path, submitted_at, started_at, ended_at, exit_code
	    FROM jobs, k WHERE id = $a"
	start_nvqd || return
	out=$(nvq list -a)
	ids=$(tail -n +2 <<< "$out" | awk '{print $1}')
	expect_eq "nvq list -a: one header" "$(grep -c '^ID ' <<< "$out")" 1
	expect_eq "every row" "$(wc -l <<< "$ids")" 2600
	expect_eq "each once, in order" "$(sort -n -u <<< "$ids")" "$ids"
	expect_eq "nvq history: every row" "$(nvq history | tail -n +2 | wc -l)" 2600
	expect_eq "nvq list --json: one array of every row" "$(nvq list -a --json |
	    python3 -c 'import json, sys; r = json.load(sys.stdin); print(len(r), len({j["id"] for j in r}))')" \
	    "2600 2600"
	# every other one pending (held), among the finished: nvq list reads the
	# active jobs' index and nvq history the finished ones' (schema/015), in pages
	stop_nvqd
	sqlite3 "$T/nvq.db" "UPDATE jobs SET state = 'PENDING', held = 1, started_at = NULL,
	    ended_at = NULL, exit_code = NULL WHERE id > $a AND id % 2 = 0"
	start_nvqd || return
	local act fin p
	act=$(sqlite3 "$T/nvq.db" "SELECT id FROM jobs WHERE state = 'PENDING' ORDER BY id")
	fin=$(sqlite3 "$T/nvq.db" "SELECT id FROM jobs WHERE state != 'PENDING' ORDER BY id")
	expect_eq "pending and finished, more than a page of each" \
	    "$(( $(wc -l <<< "$act") > 1000 && $(wc -l <<< "$fin") > 1000 ))" 1
	expect_eq "nvq list: the pending ones, each once, in order" \
	    "$(nvq list | tail -n +2 | awk '{print $1}')" "$act"
	expect_eq "nvq history: the finished ones, each once, in order" \
	    "$(nvq history | tail -n +2 | awk '{print $1}')" "$fin"
	# a cancel takes a job from one index to the other
	p=$(head -1 <<< "$act")
	nvq cancel "$p" > /dev/null
	expect_eq "cancelled: out of nvq list" "$(nvq list | awk -v p="$p" '$1 == p' | wc -l)" 0
	expect_eq "and in nvq history" "$(nvq history | awk -v p="$p" '$1 == p { print $4 }')" CANCELLED
}

t_script_directives() {	# nvq submit SCRIPT reads its #NVQ lines; the command line wins
	write_config; start_nvqd || return
	local a b c out rc
	mkdir -p "$T/wd"
	cat > "$T/wd/train.sh" <<-'EOF2'
	#!/bin/sh
	# a sweep's script
	#NVQ -g 0 -n "my run" -p 5   # a comment after the options
	#NVQ -t 10m
	#NVQ -o out.a
	echo "args: $*"
	#NVQ -p 99
	EOF2
	chmod +x "$T/wd/train.sh"
	a=$(cd "$T/wd" && nvq submit --parsable train.sh one two)
	wait_state "$a" COMPLETED
	expect_eq "name from #NVQ, quoted" "$(field "$a" name)" "my run"
	expect_eq "priority from #NVQ (the line after the first command is not read)" \
	    "$(field "$a" priority)" 5
	expect_eq "time limit from #NVQ" "$(field "$a" time_limit)" 600
	expect_eq "the script's output, arguments passed" "$(cat "$T/wd/out.a")" "args: one two"
	# the command line wins; a script that is not executable runs through its #! line
	chmod -x "$T/wd/train.sh"
	b=$(cd "$T/wd" && nvq submit --parsable -p 7 -o out.b train.sh x)
	wait_state "$b" COMPLETED
	expect_eq "-p on the command line over #NVQ" "$(field "$b" priority)" 7
	expect_eq "not executable: run by /bin/sh" "$(cat "$T/wd/out.b")" "args: x"
	expect_match "its command" "$(field "$b" command)" "^/bin/sh train.sh x$"
	# bad directives: the line is named, nothing is queued
	printf '#!/bin/sh\n#NVQ -g 0\n#NVQ -m 20Q\ntrue\n' > "$T/wd/bad.sh"
	out=$(cd "$T/wd" && nvq submit bad.sh 2>&1); rc=$?
	expect_eq "bad directive exit" "$rc" 2
	expect_match "bad directive" "$out" "-m 20Q: not a memory size.*bad.sh, line 3"
	printf '#!/bin/sh\n#NVQ -g 0 extra\ntrue\n' > "$T/wd/bad2.sh"
	out=$(cd "$T/wd" && nvq submit bad2.sh 2>&1)
	expect_match "operand in a directive" "$out" "options only, not \"extra\".*line 2"
	printf '#!/bin/sh\n#NVQ -n "open\ntrue\n' > "$T/wd/bad3.sh"
	out=$(cd "$T/wd" && nvq submit bad3.sh 2>&1)
	expect_match "unclosed quote" "$out" "bad3.sh, line 2: an unclosed quote"
	c=$(sqlite3 "$T/nvq.db" "SELECT count(*) FROM jobs")
	expect_eq "nothing queued by the bad scripts" "$c" 2
	# commands that are not scripts are left alone: a program by its path, a word from PATH
	cp /bin/true "$T/wd/prog"
	c=$(cd "$T/wd" && nvq submit --parsable -g 0 ./prog); rc=$?
	expect_eq "a program (a regular file, not a script) is submitted" "$rc" 0
	wait_state "$c" COMPLETED
	c=$(cd "$T/wd" && nvq submit --parsable -g 0 sh -c 'echo plain')
	wait_state "$c" COMPLETED
}

t_run() {	# nvq run: output here, exit status the job's, two Ctrl-C through a terminal cancel
	write_config "[gpus]" "virtual = 1x16G"; start_nvqd || return
	local out rc
	out=$(nvq run -g 0 sh -c 'echo to-out; echo to-err >&2; exit 3' 2> "$T/err"); rc=$?
	expect_eq "exit status" "$rc" 3
	expect_eq "stdout" "$out" "to-out"
	expect_eq "stderr" "$(cat "$T/err")" "to-err"
	out=$(nvq run -g 0 -n quick true); rc=$?
	expect_eq "a job that succeeds" "$rc" 0
	expect_eq "it ran as a job of its own" "$(nvq list -a | awk '$3 == "quick"' | wc -l)" 1
	out=$(nvq run -g 0 sh -c 'kill -9 $$' 2>&1); rc=$?
	expect_eq "killed by SIGKILL" "$rc" 137
	# waits while the job waits: after a blocker ends it runs, and nvq returns
	local blk; blk=$(submit -m 10G sleep 1)
	wait_state "$blk" RUNNING
	out=$(nvq run -m 10G sh -c 'echo after') ; rc=$?
	expect_eq "waited for its turn" "$out/$rc/$(state "$blk")" "after/0/COMPLETED"
	# Ctrl-C typed twice on a terminal: nvq run in a pseudo-terminal, ^C^C written to it
	# (one reaches the job as SIGINT: t_pty.sh; the job ignores it, or on a
	# loaded machine it would die of it before nvq read the second)
	out=$(python3 tests/system/pty_run.py 24 80 started '\x03\x03' -- "$NVQ_BIN" -s "$T/sock" \
	    run -g 0 sh -c "trap '' INT; echo started; sleep 60")
	expect_eq "Ctrl-C: exit status 130" "$(echo "$out" | head -1)" 130
	expect_match "and it said so" "$out" "cancelling job"
	local last; last=$(sqlite3 "$T/nvq.db" "SELECT max(id) FROM jobs")
	wait_state "$last" CANCELLED
	expect_match "bad usage" "$(nvq run 2>&1)" "missing arguments"
	# its stdin is nvq's
	expect_eq "stdin" "$(printf 'a\nb\nc\n' | nvq run -g 0 wc -l)" 3
	expect_eq "no stdin at all" "$(nvq run -g 0 wc -c <&-)" 0
	# a terminal: the job's stdin, stdout and stderr are it (its size too); none in files
	out=$(python3 tests/system/pty_run.py 33 101 to-err 'hello\n' -- "$NVQ_BIN" -s "$T/sock" \
	    run -g 0 sh -c 'tty; stty size; echo to-err >&2; read line; echo got:$line; exit 4')
	expect_eq "a terminal: its status" "$(echo "$out" | head -1)" 4
	expect_match "the job's stdin, stdout are the terminal" "$out" "/dev/pts/"
	expect_match "its size" "$out" "33 101"
	expect_match "what was typed, read by the job" "$out" "got:hello"
	last=$(sqlite3 "$T/nvq.db" "SELECT max(id) FROM jobs")
	expect_eq "nothing in its output files" "$(cat "$T/spool/0/$last.out" "$T/spool/0/$last.err" 2>/dev/null)" ""
	expect_match "held until nvq run attached" "$(sqlite3 "$T/nvq.db" \
	    "SELECT group_concat(state || ':' || coalesce(reason, ''), ' ') FROM events WHERE job_id = $last")" \
	    "^PENDING:submitted, held until nvq run attaches RELEASED:released: nvq run attached RUNNING"
	# nvq run's attach: for a pending held job of the caller's, the descriptors it announced
	local h nulls; h=$(submit --hold -g 0 true)
	nulls=$(ls -l /proc/"$NVQD_PID"/fd | grep -c /dev/null)
	expect_match "attach: a running job" "$("$HELPERS/attach" "$T/sock" "$blk" 0 1 2>&1)" \
	    "has already ended|not waiting for nvq run"
	expect_match "attach: fewer than announced" "$("$HELPERS/attach" "$T/sock" "$h" 01 1 2>&1)" \
	    "not the descriptors announced"
	expect_match "attach: more than announced" "$("$HELPERS/attach" "$T/sock" "$h" 0 3 2>&1)" \
	    "not those announced"
	expect_match "attach: a bad mask" "$("$HELPERS/attach" "$T/sock" "$h" 00 2 2>&1)" "each once"
	expect_eq "still held after all that" "$(field "$h" held)" 1
	expect_eq "attach: done" "$("$HELPERS/attach" "$T/sock" "$h" 0 1 2>&1)" "attached 1"
	wait_state "$h" COMPLETED
	make_users || { skip "cannot create users"; return; }
	chmod 755 "$T"
	h=$(submit --hold -g 0 true)
	expect_match "attach: another user's job" \
	    "$(as_user nvqta "$HELPERS/attach" "$T/sock" "$h" 0 1 2>&1)" "belongs to root|not yours"
	nvq cancel "$h"
	expect_eq "nvqd holds no descriptor of theirs" \
	    "$(ls -l /proc/"$NVQD_PID"/fd | grep -c /dev/null)" "$nulls"
}

t_format() {	# --format on listings, --json, tables cut to a terminal, colour there only
	write_config "[gpus]" "virtual = 2x16G"; start_nvqd || return
	local a b out long
	long=$(printf 'x%.0s' $(seq 150))
	a=$(submit -m 2G -t 90m -n train sleep 60)
	b=$(submit -g 0 sh -c "exit 3; $long")
	wait_state "$a" RUNNING; wait_state "$b" FAILED
	out=$(nvq list -a --format id,state,exit,limit)
	expect_eq "--format: the header" "$(echo "$out" | head -1)" "ID      STATE     EXIT   LIMIT"
	expect_match "--format: a row" "$out" "$a +RUNNING +- +1h30m"
	expect_match "--format: exit code" "$out" "$b +FAILED +3 +-"
	# every column, each cell made only where it is shown: the same cells in any
	# order (no GPU: its uuids empty)
	out=$(nvq list -a --format uuids,cwd,ended,started,submitted,priority,gpus,mem,user,name,id |
	    grep " $b\$")
	expect_match "every column: the failed job's row" "$out" \
	    "^ *$PWD +[0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9:]{8} +[0-9-]{10}T[0-9:]{8} +[0-9-]{10}T[0-9:]{8} +0 +0 +- +root +sh +$b\$"
	expect_eq "every column: submitted as show has it" "$(echo "$out" | awk '{ print $4 }')" \
	    "$(nvq show "$b" | awk '$1 == "submitted_at" { print $2 }')"
	out=$(nvq list --format id,nope 2>&1)
	expect_eq "an unknown column: status" "$?" 2
	expect_match "an unknown column: said, with those there are" "$out" \
	    "no column \"nope\"; the columns: id,user,name,state,"
	expect_match "history: ENDED by default" "$(nvq history | head -1)" "ELAPSED ENDED +REASON"
	expect_eq "gpus --format" "$(nvq gpus --format idx,total)" "IDX   TOTAL"$'\n'"0       16G"$'\n'"1       16G"
	expect_match "shares --format" "$(nvq shares --format user,gpu-hours | tail -1)" "^root +[0-9.]+$"
	# people's units: a span and a size
	expect_match "elapsed, human" "$(nvq list --format id,elapsed | grep "^$a")" "^$a +[0-9]+s$"
	expect_match "show: sizes and spans" "$(nvq show "$a")" "mem_per_gpu +2G.*time_limit +1h30m"
	# a name past its column: cut with a mark (… where the charset has it, else ~)
	local ln; ln=$(submit -g 0 -n a-very-long-job-name-that-goes-on --hold true)
	expect_eq "a long name: cut, with …" "$(LC_ALL=C.UTF-8 nvq list --format id,name | grep "^$ln ")" \
	    "$(printf '%-7s %s' "$ln" 'a-very-long-job-nam…')"
	expect_eq "a long name: cut, with ~ in ASCII" "$(LC_ALL=C nvq list --format id,name | grep "^$ln ")" \
	    "$(printf '%-7s %s' "$ln" 'a-very-long-job-nam~')"
	nvq cancel "$ln" > /dev/null
	# its runs too: sizes and times as the job's own lines have them, not raw numbers
	expect_match "show: a run's size and time" "$(nvq show "$a" | grep '^run 1:')" \
	    "mem_per_gpu=2G started_at=[0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9:]{8}( |$)"
	expect_match "show: seconds" "$(nvq show "$a")" "suspended_time +0.00s"
	expect_match "show --json: seconds are numbers" "$(nvq show --json "$a" | head -1)" \
	    '"suspended_time":0(\.0+)?[,}]'
	# into a pipe: whole lines, no colour
	out=$(nvq list -a --format id,state,command)
	expect_match "a pipe: the whole command" "$out" "$long"
	expect_eq "a pipe: no colour" "$(echo "$out" | grep -c $'\e')" 0
	# on a 60-column terminal: cut to it, with a mark; states in colour, unless NO_COLOR
	out=$(python3 tests/system/pty_run.py 24 60 zzz '' -- "$NVQ_BIN" -s "$T/sock" list -a \
	    --format id,user,name,state,command)
	expect_eq "a terminal: the status" "$(echo "$out" | head -1)" 0
	local w; w=$(echo "$out" | tail -n +2 | sed $'s/\e\\[[0-9]*m//g; s/\r$//; s/…/~/' |
	    awk '{ print length($0) }' | sort -n | tail -1)
	expect_eq "a terminal: no line past 60 columns" "$w" 60
	expect_match "a terminal: cut with a mark" "$out" "…"
	expect_match "a terminal: RUNNING in green" "$out" $'\e\\[32mRUNNING'
	expect_match "a terminal: FAILED in red" "$out" $'\e\\[31mFAILED'
	out=$(NO_COLOR=1 python3 tests/system/pty_run.py 24 60 zzz '' -- "$NVQ_BIN" -s "$T/sock" list)
	expect_eq "NO_COLOR: none" "$(echo "$out" | grep -c $'\e\\[3')" 0
	# --json: submit and restart too
	out=$(nvq submit --json -g 0 -n j true)
	expect_match "submit --json" "$(echo "$out" | python3 -c 'import json,sys; d=json.load(sys.stdin); print(d["id"], d["tasks"])')" "^[0-9]+ 0$"
	out=$(nvq restart --json "$b")
	expect_eq "restart --json" "$(echo "$out" | python3 -c 'import json,sys; print(json.load(sys.stdin))')" "[$b]"
	nvq cancel "$a"
}

t_list_gpu_index() {	# a running job's REASON names its GPUs by index, as nvq gpus does, not by UUID
	write_config "[gpus]" "virtual = 3x16G"
	start_nvqd || return
	local a b
	a=$(submit -g 2 -w 0,2 sleep 30); b=$(submit -w 1 sleep 30)
	wait_state "$a" RUNNING; wait_state "$b" RUNNING
	expect_match "two GPUs by index" "$(nvq list | grep "^ *$a ")" "GPUs 0,2 *$"
	expect_match "one GPU by index" "$(nvq list | grep "^ *$b ")" "GPU 1 *$"
	expect_eq "no UUID in the listing" "$(nvq list | grep -c 'GPU-\|VGPU-')" 0
	expect_match "the UUIDs still in their column" "$(nvq list --format id,uuids | grep "^ *$b ")" "[0-9a-f]{8}-"
	nvq cancel "$a" "$b" > /dev/null
}
