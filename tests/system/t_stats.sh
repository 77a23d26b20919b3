# t_stats.sh: nvq stats against sums worked out by hand over a fixture history.

# stats_fixture NOW: five jobs of alice and bob in the last two hours, one a month old
stats_fixture() {
	local n=$1 G=$((1 << 30))
	sqlite3 "$T/nvq.db" <<SQL
INSERT INTO jobs (id, uid, gid, user, name, command, argv, cwd, state, gpus, mem_per_gpu,
    stdout_path, stderr_path, submitted_at, started_at, ended_at, reason) VALUES
 (1, 1001, 1001, 'alice', 'a1', 'a1', x'00', '/', 'COMPLETED', 1, 8*$G, '/o', '/e', $n-7200, $n-7000, $n-3400, NULL),
 (2, 1001, 1001, 'alice', 'a2', 'a2', x'00', '/', 'FAILED', 1, 4*$G, '/o', '/e', $n-7200, $n-7100, $n-3500, 'exit code 1'),
 (3, 1002, 1002, 'bob', 'b3', 'b3', x'00', '/', 'TIMEOUT', 2, NULL, '/o', '/e', $n-5000, $n-4000, $n-400, 'time limit 01:00:00 reached'),
 (4, 1002, 1002, 'bob', 'b4', 'b4', x'00', '/', 'FAILED', 1, 2*$G, '/o', '/e', $n-3000, $n-2900, $n-2800, 'out of GPU memory: asked 2G more with 0B of its -m 2G in use (exit code 1); try -m 3G'),
 (5, 1001, 1001, 'alice', 'a5', 'a5', x'00', '/', 'CANCELLED', 1, $G, '/o', '/e', $n-200, NULL, $n-100, 'cancelled by alice'),
 (6, 1001, 1001, 'alice', 'a6', 'a6', x'00', '/', 'COMPLETED', 1, $G, '/o', '/e', $n-2600000, $n-2599000, $n-2590000, NULL);
INSERT INTO runs (job_id, gpu_uuids, gpus, mem_per_gpu, started_at, ended_at, state, gpu_share,
    suspended_time, peak_gpu_mem) VALUES
 (1, 'G0', 1, 8*$G, $n-7000, $n-3400, 'COMPLETED', 1.0, 0, 2*$G),
 (2, 'G0', 1, 4*$G, $n-7100, $n-3500, 'FAILED', 0.5, 0, 4*$G),
 (3, 'G0,G1', 2, NULL, $n-4000, $n-400, 'TIMEOUT', 2.0, 1800, 10*$G),
 (4, 'G0', 1, 2*$G, $n-2900, $n-2800, 'FAILED', 0.25, 0, 2*$G),
 (6, 'G0', 1, $G, $n-2599000, $n-2590000, 'COMPLETED', 1.0, 0, $G);
INSERT INTO switches (job_id, kind, why, gpu_uuids, started_at, ended_at, seconds, bytes, ok) VALUES
 (3, 'suspend', 'user', 'G0,G1', $n-3000, $n-2998, 2.0, $G, 1),
 (3, 'resume', 'user', 'G0,G1', $n-1200, $n-1196, 4.0, $G, 1),
 (3, 'suspend', 'user', 'G0,G1', $n-1000, $n-999, 1.0, NULL, 0);
SQL
}

t_stats() {	# nvq stats: GPU-hours, waits, asked vs used, failures, switches, by hand
	write_config
	start_nvqd || return
	stop_nvqd
	stats_fixture "$(date +%s)" || { fail "the fixture"; return; }
	start_nvqd || return
	local j
	j=$(nvq stats --json)
	py() { echo "$j" | python3 -c "import json, sys; d = json.load(sys.stdin); $1"; }
	# alice: (3600 s x 1 GPU + 3600 s x half a GPU) = 1.5 GPU-hours; asked 8G + 4G, used 2G + 4G
	expect_eq "alice" "$(py 'u = [x for x in d["users"] if x["user"] == "alice"][0]; print(u["jobs"], u["runs"], round(u["gpu_hours"], 4), u["failed"], u["asked"] >> 30, u["used"] >> 30)')" \
	    "2 2 1.5 1 12 6"
	# bob: (3600 - 1800 suspended) s x 2 GPUs + 100 s x a quarter = 3625 GPU-seconds
	expect_eq "bob" "$(py 'u = [x for x in d["users"] if x["user"] == "bob"][0]; print(u["runs"], round(u["gpu_hours"], 4), u["failed"], u["measured"], u["asked"] >> 30)')" \
	    "2 $(python3 -c 'print(round(3625 / 3600, 4))') 2 1 2"
	expect_eq "the month-old job is not counted" "$(py 'print(len(d["users"]))')" 2
	# first starts waited 200, 100, 1000, 100 s: nearest rank p50 100, p90 1000, mean 350
	expect_eq "waits" "$(py 'w = d["wait"][0]; print(w["started"], w["p50"], w["p90"], w["p99"], w["max"], w["mean"])')" \
	    "4 100.0 1000.0 1000.0 1000.0 350.0"
	expect_eq "failures" "$(py 'print(sorted((f["state"], f["why"], f["count"]) for f in d["failures"]))')" \
	    "[('CANCELLED', 'cancelled by a user', 1), ('FAILED', 'exit code 1', 1), ('FAILED', 'out of GPU memory', 1), ('TIMEOUT', 'time limit reached', 1)]"
	expect_eq "switches" "$(py 'print([(s["kind"], s["count"], s["ok"], s["mean_s"], s["max_s"], s["bytes"] >> 30) for s in d["switches"]])')" \
	    "[('suspend', 2, 1, 1.5, 2.0, 1), ('resume', 1, 1, 4.0, 4.0, 1)]"
	# -u bob: his runs and waits alone (100 and 1000 s: p50 100, p90 1000)
	j=$(nvq stats --json -u bob)
	expect_eq "-u bob" "$(py 'print([u["user"] for u in d["users"]], d["wait"][0]["started"], d["wait"][0]["p50"], d["wait"][0]["p90"])')" \
	    "['bob'] 2 100.0 1000.0"
	# --since a month and a half: the old job too
	j=$(nvq stats --json --since 45d)
	expect_eq "--since 45d: alice's 3 runs" "$(py 'print([u["runs"] for u in d["users"] if u["user"] == "alice"][0])')" 3
	# the table for people
	local out; out=$(nvq stats)
	expect_match "table: alice" "$out" "alice +2 +2 +1.50 +unknown +1 +12G +6G +2.0x"
	expect_match "table: waits" "$out" "Queue wait of the 4 jobs that first started: median 1m40s, p90 16m40s"
	expect_match "table: a failure" "$out" "FAILED +1  out of GPU memory"
	expect_match "table: resumes" "$out" "resume +1 +1 +4.00s +4.00s +1G"
	expect_match "a bad --since" "$(nvq stats --since lastweek 2>&1)" "not a date"
}

# busy_loop N COMMAND...: N clients of root running COMMAND over and over
# until $T/stop exists; their pids join BUSY
BUSY=()
busy_loop() {
	local n=$1 i; shift
	for i in $(seq "$n"); do
		( while [ ! -e "$T/stop" ]; do "$@" > /dev/null 2>&1; done ) &
		BUSY+=($!)
	done
}
busy_stop() { touch "$T/stop"; wait "${BUSY[@]}"; BUSY=(); rm -f "$T/stop"; }

t_stats_busy() {	# one user's clients looping on nvq stats, sparse listings, restart --failed and -m auto over a million finished jobs: another user's submit stays quick
	make_users || { fail "cannot create users"; return; }
	chmod 755 "$T"
	write_config
	local worst out i
	seed_million || return
	# two of the million are nvqtb's: a listing of his finds them pages apart
	sqlite3 "$T/nvq.db" "UPDATE jobs SET user = 'nvqtb' WHERE id IN ($SEED + 500000, $SEED + 999999)"
	start_nvqd || return
	# 4 clients summing the last 7 days (242,000 runs) over and over
	busy_loop 4 "$NVQ_BIN" -s "$T/sock" stats
	sleep 1
	worst=$(submit_worst nvqta)
	busy_stop
	echo "    (4 clients on nvq stats: the slowest of 5 submits $worst ms)"
	[ "$worst" -lt 500 ] || fail "a submit took $worst ms under 4 clients of nvq stats (wanted < 500)"
	# listings that match none of a million, restart --failed (none failed) and
	# -m auto of a name a million jobs bear (none with a peak)
	busy_loop 1 "$NVQ_BIN" -s "$T/sock" history -u nobody
	busy_loop 1 "$NVQ_BIN" -s "$T/sock" list -a -u nobody
	busy_loop 1 "$NVQ_BIN" -s "$T/sock" restart --failed
	busy_loop 2 "$NVQ_BIN" -s "$T/sock" submit -g 1 -m auto -n seed true
	sleep 1
	worst=$(submit_worst nvqta)
	busy_stop
	echo "    (5 clients on listings, restart --failed and -m auto: the slowest of 5 submits $worst ms)"
	[ "$worst" -lt 500 ] || fail "a submit took $worst ms under 5 clients of listings, restart and -m auto (wanted < 500)"
	# what they are answered is still the history's
	out=$(nvq stats --json --since 45d | python3 -c 'import json, sys
print([(u["user"], u["runs"]) for u in json.load(sys.stdin)["users"] if u["user"] == "root"])')
	expect_eq "nvq stats --since 45d: root's runs, the million but nvqtb's two" "$out" "[('root', 999999)]"
	expect_eq "nvq history -u nvqtb: his two, 500,000 rows apart" \
	    "$(nvq history -u nvqtb --format id | tail -n +2 | tr '\n' ' ')" "$((SEED + 500000)) $((SEED + 999999)) "
	expect_eq "nvq list -a -u nobody: none, and it ends" "$(nvq list -a -u nobody --format id | wc -l)" 1
	expect_match "-m auto: none of the million had a peak" \
	    "$(nvq submit -g 1 -m auto -n seed true 2>&1)" 'no job of yours named "seed"'
	# more than 8 of one user's nvq stats at once: the rest refused, at once
	for i in $(seq 12); do
		nvq stats > "$T/stats.$i" 2>&1 &
		BUSY+=($!)
	done
	wait "${BUSY[@]}"
	BUSY=()
	expect_match "12 at once: some refused" "$(cat "$T"/stats.*)" "nvqd is busy summing the history .*as many of yours as it takes"
	expect_match "12 at once: the others answered" "$(cat "$T"/stats.*)" "GPU time by user"
}

# the longest: started first when tests run at once (run.sh -j)
SLOW+=(t_stats_busy)
