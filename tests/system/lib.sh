# lib.sh: what the system tests share: where the binaries are, the test
# helpers they are built with, the checks (expect_eq, expect_match, fail,
# skip), a private nvqd per test (write_config, start_nvqd, stop_nvqd) and
# the ways to reach it (nvq, submit, field, state, wait_state).  Sourced by
# run.sh from the root of the tree; each tests/system/t_TOPIC.sh holds the
# tests of one topic as t_ functions.

ROOT=$PWD
BUILD=${NVQ_BUILD:-build}
NVQD=$ROOT/$BUILD/nvqd
NVQ_BIN=$ROOT/$BUILD/nvq
HELPERS=$ROOT/$BUILD/tests
CC=${CC:-cc}
mkdir -p "$HELPERS"
$CC -O1 -o "$HELPERS/rawsend" tests/system/rawsend.c || exit 1
$CC -O1 -o "$HELPERS/flood" tests/system/flood.c || exit 1
$CC -O2 -std=c11 -D_GNU_SOURCE -iquote common -iquote nvq -o "$HELPERS/load" bench/load.c \
    nvq/client.c nvq/fmt.c nvq/num.c nvq/json.c common/esc.c common/proto.c common/parse.c common/paths.c common/fdpass.c -linih || exit 1
$CC -O1 -shared -fPIC -o "$HELPERS/libfake-nvml.so.1" tests/system/fake_nvml.c || exit 1
$CC -O1 -std=c11 -D_GNU_SOURCE -iquote common -iquote nvq -o "$HELPERS/attach" \
    tests/system/attach.c nvq/client.c nvq/fmt.c nvq/num.c nvq/json.c common/esc.c common/proto.c common/parse.c common/paths.c common/fdpass.c \
    -linih || exit 1

# nvq's tables are read as a UTF-8 terminal's, whatever locale CI has:
# where the locale is not UTF-8, nvq sends ASCII only (t_escape_latin1)
export LANG=C.UTF-8
unset LC_ALL LC_CTYPE

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
expect_none() {	# WHAT TEXT BYTES...: TEXT holds none of these byte strings
	local b
	for b in "${@:3}"; do
		[ "$(LC_ALL=C grep -acF -- "$b" <<< "$2")" = 0 ] || fail "$1: holds $(printf '%q' "$b")"
	done
}
nvq() { "$NVQ_BIN" -s "$T/sock" "$@"; }

# write_config [extra INI lines...]: a config with 2x16G virtual GPUs and
# 64 CPUs for jobs ([resources] cpus: this machine may have 2, and tests of
# other things run more jobs at once) unless the extra lines say otherwise.
write_config() {
	{
		local have_res=0 l
		for l in "$@"; do [[ $l == "[resources]" ]] && have_res=1; done
		if [ $have_res = 0 ]; then
			echo "[resources]"
			echo "cpus = 64"
		fi
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
	# a broken rule of GPU control stops nvqd here (gpuact.c), so that no test passes over one
	NVQD_STRICT=1 "$NVQD" -c "$T/nvq.ini" >> "$T/nvqd.log" 2>&1 &
	NVQD_PID=$!
	local i
	for i in $(seq 200); do
		[ -S "$T/sock" ] && nvq list > /dev/null 2>&1 && return 0
		kill -0 "$NVQD_PID" 2>/dev/null || break
		sleep 0.05
	done
	fail "nvqd did not start in 10 s$(kill -0 "$NVQD_PID" 2>/dev/null || echo ": it exited")"
	tail -n 40 "$T/nvqd.log"	# its last words, not the schema it applied first
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
	    grep -o "\"$2\": *\(\"[^\"]*\"\|[-0-9.e+]*\)" | head -1 | sed 's/^[^:]*: *//; s/^"//; s/"$//'
}
state() { field "$1" state; }

# envs_left [WHERE]: the environments (of jobs WHERE) the private database
# holds once there are none, or after 2 s: a finished job's goes with those
# of the jobs that end within 50 ms of it (ENGINE_ENV_DELAY_MS)
envs_left() {
	local i n
	for i in $(seq 40); do
		n=$(sqlite3 "$T/nvq.db.private" "SELECT count(*) FROM job_env WHERE ${1:-1}")
		[ "$n" = 0 ] && break
		sleep 0.05
	done
	echo "$n"
}

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
	kill_started
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

# run_pool N TEST...: the tests, N at a time, each in a subshell of this
# shell (its functions and topics) with its output in a file, printed with
# its seconds once it ended; the counts kept here as run_test keeps them.
run_pool() {
	local n=$1 out t tpid limit=${NVQ_TEST_LIMIT:-600}
	shift
	local -A name_of=() dog_of=()
	out=$(mktemp -d /tmp/nvq-sysrun.XXXXXX)
	pool_reap() {	# one ended test: its lines and its count
		local pid ended
		wait -n -p pid "${!name_of[@]}" 2> /dev/null	# (not "Killed" for a stopped one)
		ended=${name_of[$pid]}
		unset "name_of[$pid]"
		kill $(tree_of "${dog_of[$pid]}") 2> /dev/null
		wait "${dog_of[$pid]}" 2> /dev/null
		unset "dog_of[$pid]"
		cat "$out/$ended"
		case $(cat "$out/$ended.res" 2> /dev/null) in
		pass)	PASSED=$((PASSED + 1)) ;;
		skip)	SKIPPED=$((SKIPPED + 1)); SKIPS+=("$ended") ;;
		*)	FAILED=$((FAILED + 1)); FAILS+=("$ended") ;;
		esac
	}
	pool_abort() {	# interrupted: what the running tests said so far, and their processes ended
		local pid
		for pid in "${!name_of[@]}"; do
			cat "$out/${name_of[$pid]}" 2> /dev/null
			echo "    (interrupted)"
			kill -KILL $(tree_of "$pid" "${dog_of[$pid]}") 2> /dev/null
		done
		rm -rf "$out"
		exit 130
	}
	# tests run in the background ignore SIGINT: without this a ^C ends run.sh alone
	trap pool_abort INT TERM
	for t in $(printf '%s\n' "$@" | awk '!seen[$0]++'); do	# one run of each: one file each
		while [ ${#name_of[@]} -ge "$n" ]; do pool_reap; done
		(
			PASSED=0 FAILED=0 SKIPPED=0
			s0=${EPOCHREALTIME/./}
			run_test "$t"
			res=fail
			[ "$PASSED" = 1 ] && res=pass
			[ "$SKIPPED" = 1 ] && res=skip
			s0=$(( (${EPOCHREALTIME/./} - s0) / 100000 ))
			echo "    ($((s0 / 10)).$((s0 % 10)) s)"
			echo "$res" > "$out/$t.res"
		) > "$out/$t" 2>&1 < /dev/null &
		tpid=$!
		name_of[$tpid]=$t
		# a test that hangs is stopped after NVQ_TEST_LIMIT s (600), with what
		# it started, and counted failed: the others go on, the log says which
		(
			sleep "$limit"
			[ -e "$out/$t.res" ] && exit
			echo "    FAIL: still running after $limit s (NVQ_TEST_LIMIT): stopped" >> "$out/$t"
			kill -KILL $(tree_of "$tpid") 2> /dev/null
		) < /dev/null > /dev/null 2>&1 &
		dog_of[$tpid]=$!
	done
	while [ ${#name_of[@]} -gt 0 ]; do pool_reap; done
	trap - INT TERM
	rm -rf "$out"
}

# ---------------------------------------------------------------- helpers shared by topics
# kill_started: what this test's jobs left running when its nvqd stopped
# ("running jobs go on"): each supervisor the test's database names, if it is
# still that process (its start time), with every process under it (it is a
# subreaper: the job's orphans stay below it).  By pid, never by name, so
# that another run's processes on the machine are left alone.
kill_started() {
	local db pid start tree
	db=$(sed -n 's/^database = //p' "$T/nvq.ini" 2> /dev/null)
	[ -r "$db" ] || return 0
	sqlite3 "$db" "SELECT pid, pid_start FROM jobs WHERE pid IS NOT NULL AND
	    state IN ('RUNNING', 'SUSPENDED')" 2> /dev/null | while IFS='|' read -r pid start; do
		[ "$(awk '{ print $22 }' "/proc/$pid/stat" 2> /dev/null)" = "$start" ] || continue
		tree=$(tree_of "$pid")
		kill -CONT $tree 2> /dev/null
		kill -KILL $tree 2> /dev/null
	done
	return 0
}

# tree_of PID...: those processes and every process below them, one line;
# tests find their jobs' processes this way, never by name, so that
# another run on the machine is neither counted nor killed.
tree_of() {
	local tree="$*" p="$*"
	while [ -n "$p" ]; do
		p=$(pgrep -d ' ' -P "${p// /,}")
		tree="$tree $p"
	done
	echo $tree
}

# below PID PATTERN: the pids of the processes below PID (a job's shim)
# whose command line matches PATTERN (pgrep -f), one line
below() {
	local t
	t=$(tree_of "$1")
	pgrep -f "$2" | grep -xF -f <(tr ' ' '\n' <<< "$t") | tr '\n' ' ' | sed 's/ $//'
}


alive() {	# PID: "alive" if it runs (a zombie does not)
	local st
	st=$(awk '{ print $3 }' "/proc/$1/stat" 2>/dev/null)
	[ -n "$st" ] && [ "$st" != Z ] && echo alive
}

shim_pid() { sqlite3 "$T/nvq.db" "SELECT pid FROM jobs WHERE id = $1"; }

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

# history_seed DB ID N: N finished copies of finished job ID (ids ID+1 on),
# each with a run, in DB while nvqd is stopped: submitted one every 2.5 s
# into the past (a month of them), started a second later, ended a second
# after that.  A million take some 10 s.
history_seed() {
	sqlite3 "$1" "BEGIN; CREATE TEMP TABLE k AS WITH RECURSIVE k(i) AS (SELECT 1 UNION ALL
	    SELECT i + 1 FROM k WHERE i < $3) SELECT i FROM k;
	INSERT INTO jobs (id, uid, gid, user, name, command, argv, cwd, state, gpus,
	    mem_per_gpu, priority, stdout_path, stderr_path, submitted_at, started_at, ended_at,
	    exit_code)
	    SELECT $2 + i, uid, gid, user, name, command, argv, cwd, 'COMPLETED', gpus, mem_per_gpu,
	    priority, stdout_path, stderr_path, submitted_at - i * 2.5, submitted_at - i * 2.5 + 1,
	    submitted_at - i * 2.5 + 2, 0 FROM jobs, temp.k WHERE id = $2;
	INSERT INTO runs (job_id, gpu_uuids, gpus, mem_per_gpu, started_at, ended_at, exit_code,
	    state, gpu_share) SELECT id, '', gpus, mem_per_gpu, started_at, ended_at, 0, 'COMPLETED', 0
	    FROM jobs WHERE id > $2;
	COMMIT;"
}

# seed_million: nvqd started for one job (its id in SEED), stopped, and a
# million finished copies of it seeded after it (history_seed)
seed_million() {
	local t0
	start_nvqd || return 1
	SEED=$(submit -g 0 -n seed true)
	wait_state "$SEED" COMPLETED
	stop_nvqd
	t0=$(date +%s%N)
	history_seed "$T/nvq.db" "$SEED" 1000000 || { fail "cannot seed the history"; return 1; }
	echo "    (seeded 1,000,000 jobs and runs in $(( ($(date +%s%N) - t0) / 1000000 )) ms)"
}

# submit_worst USER: the slowest of 5 submits by USER, half a second apart, in ms
submit_worst() {
	local i t0 ms worst=0
	for i in 1 2 3 4 5; do
		t0=$(date +%s%N)
		as_user "$1" "$NVQ_BIN" -s "$T/sock" submit --parsable -g 0 -n quick true > /dev/null ||
		    fail "submit $i: refused"
		ms=$(( ($(date +%s%N) - t0) / 1000000 ))
		[ "$ms" -gt "$worst" ] && worst=$ms
		sleep 0.5
	done
	echo "$worst"
}

# the supervisor prepared ahead for job ID, from nvqd's log (debug); "" if none within a second
ahead_pid() {
	local i p
	for i in $(seq 50); do
		p=$(sed -n "s/.*job $1: prepared ahead by supervisor \([0-9]*\).*/\1/p" "$T/nvqd.log" | tail -1)
		[ -n "$p" ] && break
		sleep 0.02
	done
	echo "$p"
}

# ---- the hook's link: locks, reports, reconnection (fake libcuda jobs)
FAKE_JOB=$ROOT/$BUILD/tests/fake_job

FAKE_LIB=$ROOT/$BUILD/tests/fake

fsubmit() { LD_LIBRARY_PATH=$FAKE_LIB submit "$@"; }

# hookpeer (tests/system/hookpeer.c): a job's process that speaks the hook's link by hand
HOOKPEER=$HELPERS/hookpeer
build_hookpeer() {
	$CC -O1 -std=c11 -D_GNU_SOURCE -iquote common -o "$HOOKPEER" tests/system/hookpeer.c \
	    common/proto.c
}

# linked_launcher MEM: fake_job launching for 60 s under -m MEM, counting into
# $T/a; sets JOB, and PID (its process) once it launches and its hook linked.
linked_launcher() {
	JOB=$(fsubmit -m "$1" "$FAKE_JOB" launch 60 "$T/a")
	wait_count "$T/a" || return 1
	wait_field "$JOB" hook_pids '^[0-9]+$' || return 1
	PID=$(field "$JOB" hook_pids)
}

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

# small_fs DIR SIZE: a tmpfs of SIZE mounted at $T/DIR, for a full disk;
# skips the test (returns 1) where that cannot be done (not root, no mount)
small_fs() {
	if [ "$(id -u)" != 0 ] || ! mkdir -p "$T/$1" || ! mount -t tmpfs -o size="$2" tmpfs "$T/$1"; then
		skip "needs root and mount"
		return 1
	fi
}

# suspend_round JOB HELD PID...: nvq suspend JOB; then each PID holds none
# of the fake driver's device memory (the function HELD prints "MAPPED,HELD "
# per process, sorted); nvq resume JOB, until it runs again.
suspend_round() {
	local a=$1 held=$2
	shift 2
	expect_eq "nvq suspend" "$(nvq suspend "$a" 2>&1)" "job $a suspended"
	expect_eq "the device memory is gone from $*" "$("$held" "$@")" "$(printf '0,0 %.0s' "$@")"
	expect_eq "resume" "$(nvq resume "$a")" "job $a resumes once its memory is free on its GPUs"
	wait_state "$a" RUNNING
}
