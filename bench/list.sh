#!/usr/bin/env bash
# list.sh [N] [BUILD...]: how long `nvq list` and `nvq show` take with N
# jobs pending (10000), for each build folder given (build), in one run on
# one machine.  The jobs wait --after a job that sleeps, so none starts;
# they are submitted by 8 clients at once.  Prints the median of 5 of each,
# per build, and how many rows nvq list printed (an nvqd that cannot send
# them all says so on stderr): compare builds only within one run.  With
# SEED=sql the pending jobs are copies of one, made in the database while
# nvqd is stopped (submitting 100,000 one by one takes hours before issue
# 14's scheduler work).
set -euo pipefail
cd "$(dirname "$0")/.."
N=${1:-10000}; shift || true
BUILDS=("$@"); [ ${#BUILDS[@]} -gt 0 ] || BUILDS=(build)
W=$(mktemp -d /tmp/nvq-list.XXXXXX)
trap 'kill $(jobs -p) 2>/dev/null || true; pkill -f "$W/" 2>/dev/null || true; rm -rf "$W"' EXIT
median() { sort -g | awk '{a[NR] = $1} END {print (NR % 2) ? a[(NR + 1) / 2] : (a[NR / 2] + a[NR / 2 + 1]) / 2}'; }
ms() { local a b; a=$(date +%s%N); "$@" > /dev/null 2>&1 || true; b=$(date +%s%N); echo $(( (b - a) / 1000000 )); }
first_ms() {
	local a b
	a=$(date +%s%N)
	b=$({ "$@" 2> /dev/null || true; } | { IFS= read -r _; date +%s%N; cat > /dev/null; })
	echo $(( (b - a) / 1000000 ))
}
for B in "${BUILDS[@]}"; do
	D=$W/$(echo "$B" | tr / _); rm -rf "$D"; mkdir -p "$D"
	printf '[daemon]\nsocket = %s/sock\ndatabase = %s/nvq.db\nspool = %s/spool\nsync = normal\n[gpus]\nvirtual = 1x80G\n[limits]\nmax_pending = 0\n' \
	    "$D" "$D" "$D" > "$D/nvq.ini"
	"$B/nvqd" -c "$D/nvq.ini" 2> "$D/nvqd.log" &
	pid=$!
	for _ in $(seq 100); do "$B/nvq" -s "$D/sock" list > /dev/null 2>&1 && break; sleep 0.1; done
	# its command line names W, for the clean-up at exit
	first=$("$B/nvq" -s "$D/sock" submit --parsable -g 0 sh -c 'sleep 3600' "$W/")
	if [ "${SEED:-}" = sql ]; then
		# one job submitted, then copied N - 1 times in the database while nvqd is
		# stopped (its jobs go on): large queues in seconds rather than hours
		one=$("$B/nvq" -s "$D/sock" submit --parsable -g 0 --after "$first" true)
		# gone, its database closed (its socket goes first)
		kill "$pid"; wait "$pid" 2>/dev/null || true
		sqlite3 "$D/nvq.db" "WITH RECURSIVE k(i) AS (SELECT $one + 1 UNION ALL SELECT i + 1
		    FROM k WHERE i < $one + $N - 1) INSERT INTO jobs (id, uid, gid, user, name,
		    command, argv, cwd, state, gpus, priority, after, stdout_path, stderr_path,
		    submitted_at) SELECT i, uid, gid, user, name, command, argv, cwd, state, gpus,
		    priority, after, stdout_path, stderr_path, submitted_at FROM jobs, k
		    WHERE id = $one"
		"$B/nvqd" -c "$D/nvq.ini" 2>> "$D/nvqd.log" &
		for _ in $(seq 600); do "$B/nvq" -s "$D/sock" gpus > /dev/null 2>&1 && break; sleep 0.1; done
	else
		for c in $(seq 8); do
			( for _ in $(seq $((N / 8))); do
				"$B/nvq" -s "$D/sock" submit --parsable -g 0 --after "$first" true > /dev/null
			done ) &
		done
		wait $(jobs -p | tail -8) 2>/dev/null || true
	fi
	pending=$("$B/nvq" -s "$D/sock" list --json 2>/dev/null | grep -c '"PENDING"' || true)
	list=$(for _ in 1 2 3 4 5; do ms "$B/nvq" -s "$D/sock" list; done | median)
	# the first rows: until nvq printed its first line (it does once a reply came)
	firstrows=$(for _ in 1 2 3 4 5; do first_ms "$B/nvq" -s "$D/sock" list; done | median)
	rows=$({ "$B/nvq" -s "$D/sock" list 2> /dev/null || true; } | tail -n +2 | wc -l)
	show=$(for _ in 1 2 3 4 5; do ms "$B/nvq" -s "$D/sock" show "$first"; done | median)
	echo "$B: $pending pending; nvq list ${list} ms for $rows rows, first rows ${firstrows} ms," \
	    "nvq show ${show} ms (medians of 5)"
	# not nvq cancel: its dependents would be cancelled one by one, for minutes
	pkill -9 -f "$D/" 2>/dev/null || true
	pkill -9 -f "$W/" 2>/dev/null || true
	wait 2>/dev/null || true
done
