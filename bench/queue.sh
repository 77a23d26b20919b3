#!/usr/bin/env bash
# queue.sh: nvq against task-spooler (tsp), in one run on one machine.
#
#   submit: N trivial jobs (`true`) submitted with one client process
#           each, from the first submit to the last acknowledgement;
#   run:    the same N jobs from the first submit to the last one finished;
# each with at most 1 job running at a time, and with 16.  (Both queues run
# jobs while they are submitted: tsp cannot hold 1000 queued jobs, as it
# keeps a client process and a connection for each, and stalls near 1000.)
#
# nvqd keeps every state durable ([daemon] sync = full: each submit is on
# disk before it is acknowledged); tsp keeps its queue in memory, and one
# client process per queued job.
# Prints the median of ROUNDS rounds of each, and the ratio tsp/nvq
# (above 1: nvq is faster).  Usage: bench/queue.sh [N] [ROUNDS]
# NVQ_BUILD= a build folder (not rebuilt); TSP= a tsp binary, for hosts
# without the package (the GPU host: tests/gpu/tsp_check.sh); BENCH_TMP=
# the folder the rounds' files go in (/tmp by default): both queues' files
# (nvq's database and spool, tsp's output files) are on its file system,
# whose cost of a new file weighs on both (bench/newfile.py measures it).
# ONE_FILE=1: nvq's jobs write stdout and stderr to one file, as tsp's do.
set -euo pipefail
cd "$(dirname "$0")/.."
N=${1:-1000}
ROUNDS=${2:-3}
ROOT=$PWD
TSP=${TSP:-tsp}
if ! command -v "$TSP" > /dev/null; then
	SUDO=""; [ "$(id -u)" = 0 ] || SUDO=sudo
	$SUDO apt-get install -y -qq task-spooler > /dev/null
fi
[ -n "${NVQ_BUILD:-}" ] || make -s
TSP=$(command -v "$TSP")
tsp() { "$TSP" "$@"; }
# writes into OUT the time at which N of the round's jobs were COMPLETED,
# looking every 10 ms.  Started before the round's first submit, so that
# its own start (Python's: 30 to 50 ms) is not in the time measured; with
# the sqlite3 shell where there is no Python.
completed_at() {	# DB N OUT
	if command -v python3 > /dev/null; then
		python3 -c 'import sqlite3, sys, time
db = sqlite3.connect(sys.argv[1])
while db.execute("SELECT count(*) FROM jobs WHERE state = ?", ("COMPLETED",)).fetchone()[0] != int(sys.argv[2]):
	time.sleep(0.01)
open(sys.argv[3], "w").write("%.6f" % time.time())' "$1" "$2" "$3"
	else
		while [ "$(sqlite3 "$1" "SELECT count(*) FROM jobs WHERE state = 'COMPLETED'")" != "$2" ]; do
			sleep 0.01
		done
		now > "$3"
	fi
}
NVQ=${NVQ_BUILD:-$ROOT/build}/nvq
ONE=()	# with ONE_FILE: -o F -e F, one file (by default spool/ID.out and .err)
NVQD=${NVQ_BUILD:-$ROOT/build}/nvqd
W=$(mktemp -d "${BENCH_TMP:-/tmp}/nvq-bench.XXXXXX")
trap 'kill $(jobs -p) 2>/dev/null || true; [ -z "${TS_SOCKET:-}" ] || tsp -K 2>/dev/null || true; rm -rf "$W"' EXIT

now() { date +%s.%N; }
median() { sort -g | awk '{a[NR] = $1} END {print (NR % 2) ? a[(NR + 1) / 2] : (a[NR / 2] + a[NR / 2 + 1]) / 2}'; }

# Each round in a folder of its own, all removed at the end: on a file
# system that looks past recently freed inodes for each new one (ext4
# without a journal), removing a round's files would slow the next rounds.
RUN=0
start_nvqd() {	# SLOTS [SYNC]
	RUN=$((RUN + 1)); NV=$W/nvq.$RUN; mkdir -p "$NV"
	cat > "$NV/nvq.ini" <<-EOF
	[daemon]
	socket = $NV/sock
	database = $NV/nvq.db
	spool = $NV/spool
	log_level = warn
	sync = ${2:-full}
	[gpus]
	virtual = 1x16G
	[limits]
	max_running_jobs = $1
	EOF
	[ -z "${ONE_FILE:-}" ] || { mkdir -p "$NV/out"; ONE=(-o "$NV/out/%j" -e "$NV/out/%j"); }
	"$NVQD" -c "$NV/nvq.ini" 2> "$NV/log" &
	NVQD_PID=$!
	export NVQ_SOCKET=$NV/sock
	local i
	for ((i = 0; i < 500; i++)); do "$NVQ" list > /dev/null 2>&1 && return 0; sleep 0.02; done
	echo "queue.sh: nvqd did not start:" >&2; cat "$NV/log" >&2
	exit 1
}
stop_nvqd() { kill "$NVQD_PID"; wait "$NVQD_PID" 2>/dev/null || true; }

start_tsp() {	# SLOTS
	RUN=$((RUN + 1)); mkdir -p "$W/tsp.$RUN"
	# tsp keeps a waiting client process per queued job, and by default
	# serves at most 1000 of them (TS_MAXCONN): raise it above N
	export TS_SOCKET=$W/tsp.$RUN/sock TMPDIR=$W/tsp.$RUN TS_MAXCONN=$((N + 100))
	tsp -S "$1" > /dev/null
}
stop_tsp() { tsp -K 2> /dev/null || true; }

nvq_round() {	# SLOTS [SYNC]: prints "submit-seconds run-seconds"
	start_nvqd "$1" "${2:-full}"
	local t0 t1 t2 i poller
	completed_at "$NV/nvq.db" "$N" "$NV/done" &
	poller=$!
	sleep 0.2	# its start, before the first submit
	t0=$(now)
	for ((i = 0; i < N; i++)); do "$NVQ" submit -g 0 "${ONE[@]}" true > /dev/null; done
	t1=$(now)
	wait "$poller"
	t2=$(cat "$NV/done")
	stop_nvqd
	awk -v a="$t0" -v b="$t1" -v c="$t2" 'BEGIN {print b - a, c - a}'
}

tsp_round() {	# SLOTS
	start_tsp "$1"
	local t0 t1 t2 i
	t0=$(now)
	for ((i = 0; i < N; i++)); do tsp true > /dev/null; done
	t1=$(now)
	while [ "$(tsp -l | grep -c ' finished ')" != "$N" ]; do
		sleep 0.01
	done
	t2=$(now)
	stop_tsp
	awk -v a="$t0" -v b="$t1" -v c="$t2" 'BEGIN {print b - a, c - a}'
}

for ((r = 1; r <= ROUNDS; r++)); do
	# alternate who goes first, so that neither always meets a warm cache
	for sys in $( ((r % 2)) && echo "nvq nvqn tsp" || echo "tsp nvqn nvq"); do
		for slots in 1 16; do
			case $sys in
			nvqn) nvq_round $slots normal >> "$W/$sys-$slots" ;;
			*) ${sys}_round $slots >> "$W/$sys-$slots" ;;
			esac
		done
	done
done
echo "nvq vs task-spooler, N=$N jobs, median of $ROUNDS rounds, $(nproc) CPUs, $(uname -r)"
echo "files in $(dirname "$W") ($(findmnt -no FSTYPE -T "$W" 2>/dev/null || echo "file system unknown"))"
echo "nvq: sync = full (every state on disk before it is acknowledged, the default);"
echo "nvq-n: sync = normal (survives a crash of nvqd, not a power cut); tsp: in memory."
[ -z "${ONE_FILE:-}" ] || echo "nvq's jobs: stdout and stderr in one file each (ONE_FILE), as tsp's."
echo "Ratios above 1: nvq is faster."
printf '%-50s %7s %7s %7s %9s %9s\n' "" "nvq" "nvq-n" "tsp" "tsp/nvq" "tsp/nvq-n"
for slots in 1 16; do
	for col in 1 2; do
		a=$(cut -d' ' -f$col "$W/nvq-$slots" | median)
		n=$(cut -d' ' -f$col "$W/nvqn-$slots" | median)
		b=$(cut -d' ' -f$col "$W/tsp-$slots" | median)
		[ $col = 1 ] && label="submit $N, one process each" || label="run $N trivial jobs, end to end"
		printf '%-50s %6.2fs %6.2fs %6.2fs %9.2f %9.2f\n' "$label ($slots at a time)" \
		    "$a" "$n" "$b" "$(awk -v x="$b" -v y="$a" 'BEGIN {print x / y}')" "$(awk -v x="$b" -v y="$n" 'BEGIN {print x / y}')"
	done
done
