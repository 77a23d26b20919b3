# lib.sh: what the GPU checks and bench/hook.sh share.  Sourced from the
# repository root with B set to the build folder.
NVQD=$PWD/$B/nvqd
NVQ=$PWD/$B/nvq
fails=0

check() {	# WHAT COMMAND...: runs it, prints ok or FAIL, counts failures
	local what=$1; shift
	if "$@"; then echo "ok   - $what"; else echo "FAIL - $what"; fails=$((fails + 1)); fi
}

# gpu_nvqd NAME [LINE...]: makes T, a folder for this run, writes a
# configuration ([daemon] socket, database and spool in T, then the lines
# given), starts nvqd on it (killed at exit) and exports NVQ_SOCKET.
# NVQD_STAMP=1: each line of T/nvqd.log begins with the time it was written.
gpu_nvqd() {
	T=$(mktemp -d "/tmp/nvq-$1.XXXXXX"); shift
	{
		printf '[daemon]\nsocket = %s/sock\ndatabase = %s/nvq.db\nspool = %s/spool\n' \
		    "$T" "$T" "$T"
		printf '%s\n' "$@"
		# STAGING=SIZE: every check runs with [scheduler] staging (sections may repeat)
		[ -z "${STAGING:-}" ] || printf '[scheduler]\nstaging = %s\n' "$STAGING"
	} > "$T/nvq.ini"
	# NVQD_CGROUP=DIR (gpu_own_cgroup): nvqd starts in that cgroup, as systemd starts a unit
	local in=()
	[ -z "${NVQD_CGROUP:-}" ] || in=(sh -c 'echo $$ > "$0/cgroup.procs" && exec "$@"' "$NVQD_CGROUP")
	if [ -n "${NVQD_STAMP:-}" ]; then
		# each line of its log stamped (time.time()) as it comes: a trace
		"${in[@]}" "$NVQD" -c "$T/nvq.ini" 2> >(python3 -c 'import os, time
buf = b""
while True:
    d = os.read(0, 65536)
    if not d:
        break
    t = time.time()
    *lines, buf = (buf + d).split(b"\n")
    for l in lines:
        os.write(1, b"%.6f %s\n" % (t, l))' > "$T/nvqd.log") &
	else
		"${in[@]}" "$NVQD" -c "$T/nvq.ini" 2> "$T/nvqd.log" &
	fi
	NVQD_PID=$!
	export NVQ_SOCKET=$T/sock
	# jobs outlive nvqd: end them too, suspended ones included (their args name T)
	trap 'kill $NVQD_PID 2>/dev/null; pkill -9 -f "$T/" 2>/dev/null; gpu_cgroup_gone' EXIT
	for _ in $(seq 100); do "$NVQ" list > /dev/null 2>&1 && return 0; sleep 0.1; done
	echo "nvqd did not start:"; cat "$T/nvqd.log"
	exit 1
}

# gpu_own_cgroup: a cgroup v2 for nvqd alone, as systemd gives a unit with
# Delegate=yes; sets NVQD_CGROUP for gpu_nvqd.  The cgroup this script runs
# in must hand memory and cpu down, which it may only while it holds no
# process: where it holds some (a container's root cgroup) they move into
# its leaf init/ first, as container entrypoints do; its ancestors are
# asked for memory and cpu too.  1 where that cannot be.
gpu_own_cgroup() {
	local r p c a rel
	rel=$(sed -n 's/^0:://p' /proc/self/cgroup)
	# a leaf init/ an earlier check made: its parent hands the controllers down already
	[ "${rel##*/}" != init ] || ! grep -qw memory "/sys/fs/cgroup${rel%/init}/cgroup.subtree_control" ||
	    rel=${rel%/init}
	r=/sys/fs/cgroup$rel
	[ "$(stat -fc %T /sys/fs/cgroup)" = cgroup2fs ] || return 1
	# memory and cpu on the path down to here, as systemd enables them for a delegated unit
	a=/sys/fs/cgroup
	for p in $(tr '/' ' ' <<< "$rel"); do
		for c in pids memory cpu; do
			grep -qw $c "$a/cgroup.subtree_control" || echo "+$c" > "$a/cgroup.subtree_control" || return 1
		done
		a=$a/$p
	done
	if ! grep -qw memory "$r/cgroup.subtree_control"; then
		mkdir -p "$r/init"
		for p in $(cat "$r/cgroup.procs"); do echo "$p" > "$r/init/cgroup.procs" 2> /dev/null; done
		for c in +pids +memory +cpu; do echo "$c" > "$r/cgroup.subtree_control" || return 1; done
	fi
	NVQD_CGROUP=$r/nvq-check-$$
	mkdir -p "$NVQD_CGROUP"
}

# what gpu_own_cgroup made, once what ran in it has ended
gpu_cgroup_gone() {
	[ -n "${NVQD_CGROUP:-}" ] || return 0
	sleep 0.5
	find "$NVQD_CGROUP" -depth -type d -exec rmdir {} + 2> /dev/null
	return 0
}

# gpu_nvqd2 NAME [LINE...]: gpu_nvqd for a check of NCCL jobs on two GPUs:
# NCCL_NVLS_ENABLE=0 for its jobs; exits if nvqd sees fewer than two GPUs.
gpu_nvqd2() {
	export NCCL_NVLS_ENABLE=0
	gpu_nvqd "$@"
	[ "$("$NVQ" gpus --json | grep -c '"uuid"')" -ge 2 ] || { echo "needs two GPUs"; exit 1; }
}

# Steps a job wrote to FILE, one line each; waits until there are N (60 s at most).
# count FILE: the number a job writes into FILE, 0 while it is missing or
# empty (a writer truncates it before each new figure)
count() { local v; v=$(cat "$1" 2>/dev/null); echo "${v:-0}"; }
lines() { if [ -f "$1" ]; then wc -l < "$1"; else echo 0; fi; }
wait_steps() {
	local i
	for i in $(seq 600); do [ "$(lines "$1")" -ge "$2" ] && return 0; sleep 0.1; done
	return 1
}

# The GPU host may have no sqlite3 shell: Python's module answers the same queries.
if ! command -v sqlite3 > /dev/null; then
	sqlite3() {
		python3 -c 'import sqlite3, sys
for r in sqlite3.connect(sys.argv[1]).execute(sys.argv[2]):
    print("|".join("" if v is None else str(v) for v in r))' "$@"
	}
fi

now() { date +%s.%N; }
el() { awk -v a="$1" -v b="$2" 'BEGIN { printf "%.2f", b - a }'; }
# wait_progress FILE ABOVE [PID]: until the job's count (holder.py) is above
# ABOVE (120 s at most; fails at once if PID ends)
wait_progress() {
	local i
	for i in $(seq 1200); do
		[ "$(count "$1")" -gt "$2" ] && return 0
		[ -n "${3:-}" ] && ! kill -0 "$3" 2> /dev/null && return 1
		sleep 0.1
	done
	return 1
}
