#!/usr/bin/env bash
# cpu.sh: CPU per job, nvq against task-spooler (tsp), in one run: N trivial
# jobs (`true`), 16 at a time, each submitted by its own client process; the
# machine's CPU time (user, nice, system, irq, softirq from /proc/stat, so
# every process counts: the clients, the daemons, the jobs, the polling)
# from the first submit to the last job's end, divided by N; and nvqd's own.
# nvq runs with sync = normal.  Usage: bench/cpu.sh [N] [ROUNDS] [BUILD]
# (BUILD: a folder of nvq's binaries, absolute; ./build, made, by default)
set -u
cd "$(dirname "$0")/.."
N=${1:-500}; ROUNDS=${2:-2}; B=${3:-$PWD/build}
command -v tsp > /dev/null || { echo "cpu.sh: needs tsp (task-spooler)" >&2; exit 2; }
[ $# -ge 3 ] || make -s
W=$(mktemp -d /tmp/nvq-cpu.XXXXXX)
trap 'kill $(jobs -p) 2>/dev/null; [ -z "${TS_SOCKET:-}" ] || tsp -K 2>/dev/null; rm -rf "$W"' EXIT
cpu() { awk '/^cpu /{print $2 + $3 + $4 + $7 + $8}' /proc/stat; }
per_job() { echo "($2 - $1) * 1000 / $(getconf CLK_TCK) / $N" | bc -l | cut -c1-5; }
for ((r = 1; r <= ROUNDS; r++)); do
	rm -rf "$W/nvq"; mkdir -p "$W/nvq"
	printf '[daemon]\nsocket = %s\ndatabase = %s\nspool = %s\nlog_level = warn\nsync = normal\n[gpus]\nvirtual = 1x16G\n[limits]\nmax_running_jobs = 16\n' \
	    "$W/nvq/sock" "$W/nvq/nvq.db" "$W/nvq/spool" > "$W/nvq/nvq.ini"
	"$B/nvqd" -c "$W/nvq/nvq.ini" 2> "$W/nvq/log" & P=$!
	until "$B/nvq" -s "$W/nvq/sock" list > /dev/null 2>&1; do sleep 0.02; done
	c0=$(cpu)
	for ((i = 0; i < N; i++)); do "$B/nvq" -s "$W/nvq/sock" submit -g 0 true > /dev/null; done
	until [ "$(sqlite3 "$W/nvq/nvq.db" "SELECT count(*) FROM jobs WHERE state = 'COMPLETED'")" = "$N" ]; do
		sleep 0.01
	done
	c1=$(cpu); d=$(awk '{print $14 + $15}' "/proc/$P/stat")
	kill "$P"; wait "$P" 2> /dev/null
	echo "round $r nvq: $(per_job "$c0" "$c1") ms CPU per job (nvqd $(per_job 0 "$d") ms)"
	export TS_SOCKET=$W/ts TMPDIR=$W TS_MAXCONN=$((N + 100))
	tsp -S 16 > /dev/null
	c0=$(cpu)
	for ((i = 0; i < N; i++)); do tsp true > /dev/null; done
	until [ "$(tsp -l | grep -c ' finished ')" = "$N" ]; do sleep 0.01; done
	c1=$(cpu)
	tsp -K 2> /dev/null; unset TS_SOCKET
	echo "round $r tsp: $(per_job "$c0" "$c1") ms CPU per job"
done
