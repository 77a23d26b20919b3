# lib.sh: what the benchmarks share.  Sourced from the repository root.

# The median of the numbers on stdin (the mean of the middle two if even).
median() {
	sort -g | awk '{ a[NR] = $1 } END { print (NR % 2) ? a[(NR + 1) / 2] : (a[NR / 2] + a[NR / 2 + 1]) / 2 }'
}

# Builds nvq and build/load (bench/load.c: clients submitting at once).
bench_load_helper() {
	make -s
	cc -O2 -std=c11 -D_GNU_SOURCE -iquote common -iquote nvq -o build/load bench/load.c \
	    nvq/client.c nvq/fmt.c nvq/num.c nvq/json.c common/esc.c common/proto.c common/parse.c common/paths.c common/fdpass.c -linih
}

# bench_nvqd DIR NVQD [LINE...]: a fresh DIR with a configuration (its
# socket, database and spool in DIR, log_level = warn, then the lines
# given, "[section]" lines too) and NVQD started on it (bench_start).
bench_nvqd() {
	local dir=$1 nvqd=$2
	shift 2
	rm -rf "$dir"; mkdir -p "$dir"
	{
		printf '[daemon]\nsocket = %s/sock\ndatabase = %s/nvq.db\nspool = %s/spool\nlog_level = warn\n' \
		    "$dir" "$dir" "$dir"
		printf '%s\n' "$@"
	} > "$dir/nvq.ini"
	bench_start "$dir" "$nvqd"
}

# bench_start DIR NVQD: NVQD started on DIR's configuration (asked with
# BENCH_NVQ, build/nvq by default, whether it answers; its stderr
# added to DIR/log), its pid in BENCH_PID, once it answers (a minute at
# most: a queue of 100,000 jobs takes seconds to load).
bench_start() {
	local i
	"$2" -c "$1/nvq.ini" 2>> "$1/log" &
	BENCH_PID=$!
	for i in $(seq 1200); do
		"${BENCH_NVQ:-build/nvq}" -s "$1/sock" gpus > /dev/null 2>&1 && return 0
		sleep 0.05
	done
	echo "nvqd did not start:"; cat "$1/log"
	return 1
}

# Stops the nvqd of BENCH_PID (its jobs go on).
bench_stop() {
	kill "$BENCH_PID"; wait "$BENCH_PID" 2> /dev/null || true
}

# nvqd's CPU time so far (user + system) in clock ticks of 10 ms.
bench_cpu_ticks() {
	awk '{ print $14 + $15 }' "/proc/$BENCH_PID/stat"
}

# bench_seed DB ONE TOTAL PENDING: TOTAL copies of job ONE (ids ONE+1 on)
# made in DB while nvqd is stopped: PENDING (an SQL condition on the copy's
# id, i) says which wait, the others are COMPLETED, a second long each.
bench_seed() {
	sqlite3 "$1" "WITH RECURSIVE k(i) AS (SELECT $2 + 1 UNION ALL SELECT i + 1
	    FROM k WHERE i < $2 + $3) INSERT INTO jobs (id, uid, gid, user,
	    name, command, argv, cwd, state, gpus, mem_per_gpu, priority, stdout_path,
	    stderr_path, submitted_at, started_at, ended_at, exit_code)
	    SELECT i, uid, gid, user, name, command, argv, cwd,
	    CASE WHEN $4 THEN 'PENDING' ELSE 'COMPLETED' END, gpus,
	    mem_per_gpu, priority, stdout_path, stderr_path, submitted_at,
	    CASE WHEN $4 THEN NULL ELSE submitted_at END,
	    CASE WHEN $4 THEN NULL ELSE submitted_at + 1 END,
	    CASE WHEN $4 THEN NULL ELSE 0 END FROM jobs, k WHERE id = $2"
}
