# t_sched.sh: how jobs are admitted: packing, serial GPUs, all-or-nothing
# placement, priority and aging, user limits, --after.  Sourced by run.sh
# (helpers in lib.sh).

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
	expect_match "gpus: nothing demanded of the free GPU, no job there" \
	    "$(nvq gpus --format idx,demanded,jobs | tail -1)" "^1 +0B$"
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
	expect_match "b waits" "$(nvq list | awk -v id="$b" '$1 == id')" "PENDING.*Dependency \(afterok:$a\)"
	wait_state "$b" COMPLETED
	expect_eq "b started after a ended" \
	    "$(awk -v s="$(field "$b" started_at)" -v e="$(field "$a" ended_at)" 'BEGIN{print (s >= e)}')" 1
	local e2; e2=$(submit -g 0 --after "$d" true)
	wait_state "$d" CANCELLED
	expect_eq "d's reason" "$(field "$d" reason)" "DependencyNeverSatisfied (afterok:$c ended FAILED)"
	wait_state "$e2" CANCELLED
	expect_eq "a chain is cancelled link by link" "$(field "$e2" reason)" \
	    "DependencyNeverSatisfied (afterok:$d ended CANCELLED)"
	expect_match "unknown dependency" "$(nvq submit --after 999 true 2>&1)" "no such job 999"
}

t_after_many() {	# a job thousands wait --after: they wait while it is suspended, end together when it fails
	[ -x "$FAKE_JOB" ] || { fail "build tests/fake_job first"; return; }
	ckpt_config
	start_nvqd || return
	local a b t0 t1
	linked_launcher 10G || return
	a=$JOB
	b=$(submit -g 0 --after "$a" true)
	expect_eq "a suspended job" "$(nvq suspend "$a")" "job $a suspended"
	submit -g 0 --after "$a" true > /dev/null	# dependencies are looked at again
	sleep 0.5
	expect_eq "is waited for, not taken as ended" "$(state "$b")" PENDING
	expect_match "its dependents wait" "$(nvq list | awk -v id="$b" '$1 == id')" "Dependency"
	nvq resume "$a" > /dev/null
	wait_state "$a" RUNNING
	stop_nvqd
	# 3000 more waiting for it: copies of b (after the one submitted above), made
	# while nvqd is stopped (a runs on)
	sqlite3 "$T/nvq.db" "WITH RECURSIVE k(i) AS (SELECT $b + 2 UNION ALL SELECT i + 1 FROM k
	    WHERE i < $b + 3001) INSERT INTO jobs (id, uid, gid, user, name, command, argv, cwd,
	    state, gpus, priority, after, stdout_path, stderr_path, submitted_at) SELECT i, uid,
	    gid, user, name, command, argv, cwd, state, gpus, priority, after, stdout_path,
	    stderr_path, submitted_at FROM jobs, k WHERE id = $b"
	start_nvqd || return
	expect_eq "all 3002 wait" "$(nvq list --state PENDING | tail -n +2 | wc -l)" 3002
	t0=$(date +%s.%N)
	nvq cancel "$a" > /dev/null
	wait_state "$b" CANCELLED 20
	for _ in $(seq 200); do
		[ "$(sqlite3 "$T/nvq.db" "SELECT count(*) FROM jobs WHERE state = 'PENDING'")" = 0 ] &&
		    break
		sleep 0.1
	done
	t1=$(date +%s.%N)
	echo "    (3002 dependents cancelled in $(awk -v a="$t0" -v b="$t1" 'BEGIN { printf "%.2f", b - a }') s)"
	expect_eq "every one cancelled" "$(sqlite3 "$T/nvq.db" "SELECT count(*) FROM jobs
	    WHERE state = 'CANCELLED' AND reason = 'DependencyNeverSatisfied (afterok:$a ended CANCELLED)'")" 3002
	expect_eq "each with its event" "$(sqlite3 "$T/nvq.db" "SELECT count(*) FROM events
	    WHERE state = 'CANCELLED' AND reason = 'DependencyNeverSatisfied (afterok:$a ended CANCELLED)'")" 3002
	expect_eq "no environment is left" "$(envs_left)" 0
	expect_match "nvqd answers" "$(nvq gpus)" "GPU-"
}

# fs_round: a whole-GPU blocker, then 6 short jobs of nvqta, then 6 of
# nvqtb, all queued before the blocker ends; prints the users in the order
# their jobs started.
fs_round() {
	local blk u i ids=()
	blk=$(submit sleep 30); wait_state "$blk" RUNNING
	for u in nvqta nvqta nvqta nvqta nvqta nvqta nvqtb nvqtb nvqtb nvqtb nvqtb nvqtb; do
		ids+=("$(as_user "$u" "$NVQ_BIN" -s "$T/sock" submit --parsable sleep 0.2)")
	done
	nvq cancel "$blk" > /dev/null
	for i in "${ids[@]}"; do wait_state "$i" COMPLETED 30 || return; done
	sqlite3 "$T/nvq.db" "SELECT group_concat(user, ' ') FROM (SELECT j.user FROM runs r \
	    JOIN jobs j ON j.id = r.job_id WHERE j.id >= ${ids[0]} ORDER BY r.started_at)"
}

t_fairshare() {	# two users on one GPU take turns by their recent use; off: first come first served
	[ "$(id -u)" = 0 ] && command -v setpriv > /dev/null && make_users ||
	    { skip "needs root and setpriv to make users"; return; }
	chmod 755 "$T"
	write_config "[gpus]" "virtual = 1x16G" "[scheduler]" "fairshare = on" \
	    "fairshare_halflife = 1h" "fairshare_weight = 100"
	start_nvqd || return
	local order first b
	order=$(fs_round) || return
	echo "    fair share on, starts: $order"
	first=$(echo "$order" | cut -d' ' -f1-6)
	b=$(echo "$first" | tr ' ' '\n' | grep -c nvqtb)
	# nvqtb's jobs came after all of nvqta's, yet take every other turn
	[ "$b" -ge 2 ] && [ "$b" -le 4 ] ||
	    fail "fair share: the first 6 starts were '$first' ($b of nvqtb), wanted 2 to 4"
	expect_match "nvq shares" "$(nvq shares)" "fair share on \(half-life 1h, weight 100\)"
	# both used about as much: each one's GPU-hours within 40% of the other's
	local ha hb
	ha=$(sqlite3 "$T/nvq.db" "SELECT sum(r.gpu_share * (r.ended_at - r.started_at - \
	    r.suspended_time)) FROM runs r JOIN jobs j ON j.id = r.job_id WHERE j.user = 'nvqta'")
	hb=$(sqlite3 "$T/nvq.db" "SELECT sum(r.gpu_share * (r.ended_at - r.started_at - \
	    r.suspended_time)) FROM runs r JOIN jobs j ON j.id = r.job_id WHERE j.user = 'nvqtb'")
	python3 -c "import sys; a, b = $ha, $hb; sys.exit(0 if 0.6 < a / b < 1.0 / 0.6 else 1)" ||
	    fail "GPU-seconds used: nvqta $ha, nvqtb $hb"
	# what nvq show, list and shares say while both wait (nvqta has used more)
	local blk a1 b1
	blk=$(submit sleep 30); wait_state "$blk" RUNNING
	a1=$(as_user nvqta "$NVQ_BIN" -s "$T/sock" submit --parsable sleep 0)
	b1=$(as_user nvqtb "$NVQ_BIN" -s "$T/sock" submit --parsable sleep 0)
	expect_match "show: the fair-share term" "$(nvq show "$a1")" \
	    "fair_share +\+[0-9.]+ priority: nvqta used [0-9]+% of the GPU time of the 3 users"
	expect_match "list: the shares line" "$(nvq list | tail -1)" \
	    "^fair share among 3 users with jobs \(a share is 33%\): .*nvqta used [0-9]+%, \+[0-9.]+.*nvqtb used [0-9]+%"
	expect_match "shares: a row per user" "$(nvq shares)" \
	    "nvqta +[0-9.]+ +[0-9]+% +33% +\+[0-9.]+"
	nvq cancel "$blk" "$a1" "$b1" > /dev/null
	wait_state "$a1" CANCELLED; wait_state "$b1" CANCELLED
	# the usage survives a restart: read back from runs
	local before after
	before=$(nvq shares --json | grep -o '"uid":[0-9]*,"user":"[^"]*","queued":[01],"gpu_hours":"[0-9.]*"' |
	    grep -v '"uid":0,' | sort)
	stop_nvqd; start_nvqd || return
	after=$(nvq shares --json | grep -o '"uid":[0-9]*,"user":"[^"]*","queued":[01],"gpu_hours":"[0-9.]*"' |
	    grep -v '"uid":0,' | sort)
	[ -n "$before" ] && [ "$(echo "$before" | wc -l)" = 2 ] ||
	    fail "shares before the restart: '$before'"
	# the same users, and each one's GPU-hours within a rounding step (0.0001, as
	# printed) and 10% of what they were: the live figure counts to nvqd's
	# record of an end, the one read back to the supervisor's
	expect_eq "usage read back after a restart" "$(python3 - "$before" "$after" <<-'PY'
	import re, sys
	def users(text):
	    return {u: float(h) for u, h in re.findall(r'"uid":(\d+),.*?"gpu_hours":"([0-9.]+)"', text)}
	b, a = users(sys.argv[1]), users(sys.argv[2])
	ok = b.keys() == a.keys() and all(a[u] > 0 and abs(a[u] - b[u]) <= 0.0001 + 0.1 * b[u] for u in b)
	print("same" if ok else "before %s, after %s" % (b, a))
	PY
	)" same
	# off (SIGHUP): first come, first served, all of nvqta's before nvqtb's
	write_config "[gpus]" "virtual = 1x16G" "[scheduler]" "fairshare = off"
	kill -HUP "$NVQD_PID"; sleep 0.3
	order=$(fs_round) || return
	expect_eq "fair share off" "$order" "nvqta nvqta nvqta nvqta nvqta nvqta nvqtb nvqtb nvqtb nvqtb nvqtb nvqtb"
}
