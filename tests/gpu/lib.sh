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
gpu_nvqd() {
	T=$(mktemp -d "/tmp/nvq-$1.XXXXXX"); shift
	{
		printf '[daemon]\nsocket = %s/sock\ndatabase = %s/nvq.db\nspool = %s/spool\n' \
		    "$T" "$T" "$T"
		printf '%s\n' "$@"
		# STAGING=SIZE: every check runs with [scheduler] staging (sections may repeat)
		[ -z "${STAGING:-}" ] || printf '[scheduler]\nstaging = %s\n' "$STAGING"
	} > "$T/nvq.ini"
	"$NVQD" -c "$T/nvq.ini" 2> "$T/nvqd.log" &
	NVQD_PID=$!
	export NVQ_SOCKET=$T/sock
	# jobs outlive nvqd: end them too, suspended ones included (their args name T)
	trap 'kill $NVQD_PID 2>/dev/null; pkill -9 -f "$T/" 2>/dev/null' EXIT
	for _ in $(seq 100); do "$NVQ" list > /dev/null 2>&1 && return 0; sleep 0.1; done
	echo "nvqd did not start:"; cat "$T/nvqd.log"
	exit 1
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
