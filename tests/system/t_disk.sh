# t_disk.sh: what one user can do to everyone through the disk (issue 11).
# A full file system under the database and the spool must not lose a
# job's end or a cancel; an environment is deleted as soon as its job can
# no longer start, and the private database gives the room back.

t_disk_full_records() {	# the disk filled by a job: ends and cancels still recorded, submits refused
	small_fs fs 24m || return
	write_config
	sed -i "s#^database = .*#database = $T/fs/nvq.db#; s#^spool = .*#spool = $T/fs/spool#" "$T/nvq.ini"
	start_nvqd || { umount "$T/fs"; return; }
	local five long filler out rc i
	five=$(submit -g 0 sh -c 'sleep 3; exit 5')
	long=$(submit -g 0 sleep 300)
	wait_state "$five" RUNNING; wait_state "$long" RUNNING
	# a job writes until the disk is full, as `yes` does, and ends (write error)
	filler=$(submit -g 0 -o "$T/fs/yes.out" yes)
	wait_state "$filler" FAILED 10
	expect_eq "it took the disk" "$(( $(stat -c %s "$T/fs/yes.out") > 15000000 ))" 1
	expect_eq "and its end is recorded as the write error it was" "$(field "$filler" exit_code)" 1
	out=$(nvq submit -g 0 true 2>&1); rc=$?
	expect_eq "a submit on a full disk is refused" "$rc" 1
	expect_match "with the reason" "$out" "cannot store the job: .*(disk is full|database or disk is full).*; nothing was queued"
	out=$(nvq cancel "$long" 2>&1); rc=$?
	expect_eq "root's cancel works on a full disk" "$rc" 0
	expect_eq "and says nothing wrong" "$out" ""
	wait_state "$long" CANCELLED 10
	wait_state "$five" FAILED 10
	expect_eq "a job that ended while the disk was full has its exit code" "$(field "$five" exit_code)" 5
	expect_eq "nvqd still serves" "$(nvq list > /dev/null 2>&1; echo $?)" 0
	rm -f "$T/fs/yes.out"
	expect_match "submits work again once there is room" "$(submit -g 0 true)" "^[0-9]+$"
	stop_nvqd
	expect_eq "integrity" "$(sqlite3 "$T/fs/nvq.db" "PRAGMA integrity_check")" ok
	expect_eq "the ends are in the history" \
	    "$(sqlite3 "$T/fs/nvq.db" "SELECT group_concat(state || ':' || coalesce(exit_code, '-'), ' ') FROM jobs WHERE id IN ($five, $long)")" \
	    "FAILED:5 CANCELLED:-"
	umount "$T/fs"
}

env_rows() {	# IDS: how many of these jobs' environments the private database holds
	sqlite3 "$T/nvq.db.private" "SELECT count(*) FROM job_env WHERE job_id IN ($1)"
}
private_size() {	# bytes of the private database and its WAL
	cat "$T/nvq.db.private" "$T/nvq.db.private-wal" 2>/dev/null | wc -c
}

t_env_gone() {	# environments go once a job cannot start; the private database shrinks
	write_config; start_nvqd || return
	local blocker ids="" id i big before
	blocker=$(submit -g 2 sleep 300)
	wait_state "$blocker" RUNNING
	# 600 kB each, in variables under the kernel's 128 kB a string
	big=$(head -c 100000 /dev/zero | tr '\0' x)
	for i in $(seq 8); do
		id=$(B1=$big B2=$big B3=$big B4=$big B5=$big B6=$big submit -g 1 true)
		ids="$ids${ids:+,}$id"
	done
	expect_eq "pending jobs keep their environments" "$(env_rows "$ids")" 8
	before=$(private_size)
	expect_eq "which take room" "$(( before > 4000000 ))" 1
	for id in ${ids//,/ }; do nvq cancel "$id"; done
	sleep 0.3
	expect_eq "cancelled before they started: their environments are gone" "$(env_rows "$ids")" 0
	expect_eq "and the room is given back (was $before bytes)" "$(( $(private_size) < 1500000 ))" 1
	expect_eq "the running job's stays" "$(env_rows "$blocker")" 1
	# a job that fails its dependency never starts either
	id=$(B1=$big submit -g 1 --after "$blocker" true)
	nvq cancel "$blocker"; wait_state "$blocker" CANCELLED 10
	wait_state "$id" CANCELLED 5
	expect_eq "a job cancelled by its dependency: gone too" "$(env_rows "$id")" 0
	# a finished job's goes with those of the jobs ending within 50 ms of it
	expect_eq "a job that ran, once it ended: gone too" "$(envs_left "job_id = $blocker")" 0
	id=$(B1=$big submit -g 1 true); wait_state "$id" COMPLETED 5
	expect_eq "one that completed: gone too" "$(envs_left "job_id = $id")" 0
}

# The file system under the database turns read-only while nvqd runs, as
# ext4 does after an error (remount,abort); the admin repairs it and
# restarts nvqd.
check_read_only_fs() {
	truncate -s 32M "$T/ext.img" && mkfs.ext4 -q "$T/ext.img" 2>/dev/null &&
	    mkdir -p "$T/ro" && mount -o loop "$T/ext.img" "$T/ro" || {
		skip "needs loop devices and ext4"
		return
	}
	# sync = full: what is acknowledged is on the disk, as a repair keeps no more
	sed -i "s#^database = .*#database = $T/ro/nvq.db#; s#^sync = .*#sync = full#" "$T/nvq.ini"
	start_nvqd || { umount "$T/ro"; return; }
	local run out rc acked
	run=$(submit -g 0 sh -c 'sleep 1; exit 5'); wait_state "$run" RUNNING
	acked=$(sqlite3 "$T/ro/nvq.db" "SELECT count(*) FROM jobs")
	mount -o remount,abort "$T/ro" 2> /dev/null
	expect_match "the file system is read-only" "$(awk -v m="$T/ro" '$2 == m { print $4 }' /proc/mounts)" "(^ro,|emergency_ro)"
	out=$(nvq submit -g 0 true 2>&1); rc=$?
	expect_eq "a submit to a read-only database fails" "$rc" 1
	expect_match "and says why" "$out" "cannot store the job: .*(readonly|I/O).*; nothing was queued"
	sleep 1.5	# the running job ends meanwhile
	expect_eq "still serving" "$(nvq list > /dev/null 2>&1; echo $?)" 0
	expect_eq "its end waits" "$(state "$run")" RUNNING
	kill -TERM "$NVQD_PID"; wait "$NVQD_PID"; NVQD_PID=""
	umount "$T/ro" || fail "cannot unmount the file system"
	mount -o loop "$T/ext.img" "$T/ro" || fail "cannot mount it again"
	start_nvqd || { umount "$T/ro"; return; }
	wait_state "$run" FAILED 5
	expect_eq "its exit code, recorded after the repair" "$(field "$run" exit_code)" 5
	expect_eq "nothing acknowledged was lost" "$(sqlite3 "$T/ro/nvq.db" "SELECT count(*) FROM jobs")" "$acked"
	stop_nvqd
	expect_eq "integrity" "$(sqlite3 "$T/ro/nvq.db" "PRAGMA integrity_check")" ok
	umount "$T/ro"
}

t_disk_trouble() {	# a full disk or a read-only database: submits refused, jobs run on, nothing lost
	small_fs db 3m || return
	write_config
	sed -i "s#^database = .*#database = $T/db/nvq.db#" "$T/nvq.ini"
	start_nvqd || { umount "$T/db"; return; }
	local run ok out rc i
	run=$(submit -g 0 sh -c 'sleep 1.5; exit 7')
	ok=$(submit -g 0 true); wait_state "$ok" COMPLETED
	wait_state "$run" RUNNING
	# fill the file system the database is on
	dd if=/dev/zero of="$T/db/filler" bs=64k 2> /dev/null
	for i in $(seq 50); do
		out=$(nvq submit -g 0 true 2>&1); rc=$?
		[ $rc != 0 ] && break
	done
	expect_eq "a submit on a full disk fails" "$rc" 1
	expect_match "and says why" "$out" "cannot store the job: (database or disk is full|the database's disk has .* free: .* stay free for recording ends and cancels); nothing was queued"
	local acked; acked=$(sqlite3 "$T/db/nvq.db" "SELECT count(*) FROM jobs" 2>/dev/null)
	sleep 1.5	# the running job ends while the disk is full
	expect_eq "nvqd runs on" "$(nvq list > /dev/null 2>&1; echo $?)" 0
	rm -f "$T/db/filler"
	wait_state "$run" FAILED 5
	expect_eq "its end is recorded once there is room" "$(field "$run" exit_code)" 7
	expect_eq "nothing acknowledged was lost" "$(sqlite3 "$T/db/nvq.db" "SELECT count(*) FROM jobs")" "$acked"
	expect_match "submits work again" "$(submit -g 0 true)" "^[0-9]+$"
	stop_nvqd
	expect_eq "integrity" "$(sqlite3 "$T/db/nvq.db" "PRAGMA integrity_check")" ok
	umount "$T/db"
	check_read_only_fs
}

t_flushes() {	# sync = full: one flush per submit, one per job run one after another, and an end alone synced
	command -v strace > /dev/null || { skip "strace is not installed: the flushes cannot be counted"; return; }
	write_config "[limits]" "max_running_jobs = 1"
	sed -i "s/^sync = normal$/sync = full/" "$T/nvq.ini"
	start_nvqd || return
	local first i n spid last
	first=$(submit -g 0 sleep 300); wait_state "$first" RUNNING
	strace -f -y -e trace=fsync,fdatasync -p "$NVQD_PID" -o "$T/strace.submit" 2> /dev/null &
	spid=$!; sleep 0.5
	kill -0 "$spid" 2> /dev/null || { skip "strace cannot attach here (ptrace refused?)"; stop_nvqd; return; }
	for i in $(seq 20); do last=$(submit -g 0 true); done
	kill -INT "$spid"; wait "$spid" 2> /dev/null
	# each call once: strace splits one that another process interrupts
	# into "fdatasync(... <unfinished ...>" and "<... fdatasync resumed>"
	n=$(grep -c 'fdatasync(\|fsync(' "$T/strace.submit")
	echo "    20 submits one after another: $n flushes ($(grep -c 'private-wal' "$T/strace.submit") of the private database)"
	expect_eq "one flush per submit" "$(( n >= 20 && n <= 22 ))" 1
	strace -f -y -e trace=fsync,fdatasync -p "$NVQD_PID" -o "$T/strace.run" 2> /dev/null &
	spid=$!; sleep 0.5
	nvq cancel "$first" > /dev/null
	wait_state "$last" COMPLETED 20
	sleep 0.3
	kill -INT "$spid"; wait "$spid" 2> /dev/null
	n=$(grep -c 'fdatasync(\|fsync(' "$T/strace.run")
	echo "    a cancel and 20 jobs run one after another: $n flushes"
	expect_eq "one flush per job that ends as the next starts" "$(( n >= 21 && n <= 24 ))" 1
	# a job alone: its start's commit, then its end with no start after it, synced on its own
	strace -f -y -e trace=fsync,fdatasync -p "$NVQD_PID" -o "$T/strace.one" 2> /dev/null &
	spid=$!; sleep 0.5
	last=$(submit -g 0 true); wait_state "$last" COMPLETED
	sleep 0.3
	kill -INT "$spid"; wait "$spid" 2> /dev/null
	expect_eq "a lone job: its start and its end synced" "$(grep -c 'nvq\.db-wal>' "$T/strace.one")" 2
	stop_nvqd
}

t_checkpoint_thread() {	# the WAL goes back into the database files on a thread of nvqd's own, never in its loop
	command -v strace > /dev/null || { skip "strace is not installed: the writes cannot be seen"; return; }
	write_config; start_nvqd || return
	local spid i db more=0
	strace -f -y -e trace=pwrite64,fdatasync,fsync -p "$NVQD_PID" -o "$T/strace.ckpt" 2> /dev/null &
	spid=$!; sleep 0.5
	kill -0 "$spid" 2> /dev/null || { skip "strace cannot attach here (ptrace refused?)"; stop_nvqd; return; }
	# 8 environments of 600 kB (an array would store one): the private
	# database's log passes 1000 pages
	local big k
	big=$(head -c 100000 /dev/zero | tr '\0' x)
	for k in $(seq 8); do
		B1=$big B2=$big B3=$big B4=$big B5=$big B6=$big submit --hold -g 0 true > /dev/null
	done
	db="pwrite64([0-9]*</[^>]*/nvq\.db\(\.private\)\?>"
	for i in $(seq 50); do
		grep -q "$db" "$T/strace.ckpt" && break
		submit --hold -g 0 true > /dev/null; more=$((more + 1)); sleep 0.1
	done
	kill -INT "$spid"; wait "$spid" 2> /dev/null
	echo "    $(grep -c "$db" "$T/strace.ckpt") page writes into the database files"
	expect_eq "the log was copied back into the database files" \
	    "$(( $(grep -c "$db" "$T/strace.ckpt") > 0 ))" 1
	expect_eq "none of them by the loop's thread" "$(grep -c "^$NVQD_PID $db" "$T/strace.ckpt")" 0
	expect_eq "nor a sync of them" "$(grep -c "^$NVQD_PID f\(data\)\?sync([0-9]*</[^>]*/nvq\.db\(\.private\)\?>" \
	    "$T/strace.ckpt")" 0
	expect_eq "nvqd serves on" "$(nvq list > /dev/null; echo $?)" 0
	expect_eq "the jobs are there" "$(sqlite3 "$T/nvq.db" "SELECT count(*) FROM jobs")" "$(( 8 + more ))"
	stop_nvqd
	expect_eq "integrity" "$(sqlite3 "$T/nvq.db" "PRAGMA integrity_check")" ok
}

t_power_cut() {	# sync = full: submits whose main commit a power cut took come back from the private one
	write_config "[limits]" "max_running_jobs = 1"
	sed -i "s/^sync = normal$/sync = full/" "$T/nvq.ini"
	start_nvqd || return
	local first i ids=()
	first=$(submit -g 0 sleep 300); wait_state "$first" RUNNING
	# the state a power cut can leave: what was synced up to here...
	kill -STOP "$NVQD_PID"
	cp "$T/nvq.db" "$T/snap.db"; cp "$T/nvq.db-wal" "$T/snap.db-wal"
	kill -CONT "$NVQD_PID"
	for i in 1 2 3; do ids+=("$(FOO="bar $i" submit -g 0 sh -c 'echo "$FOO" > '"$T"'/ran.$NVQ_JOB_ID')"); done
	# ...and the acknowledged submits' main commit lost: only the private one was synced
	kill -9 "$NVQD_PID"; wait "$NVQD_PID" 2> /dev/null; NVQD_PID=""
	cp "$T/snap.db" "$T/nvq.db"; cp "$T/snap.db-wal" "$T/nvq.db-wal"; rm -f "$T/nvq.db-shm"
	expect_eq "the main database lost them" "$(sqlite3 "$T/nvq.db" "SELECT count(*) FROM jobs WHERE id >= ${ids[0]}")" 0
	start_nvqd || return
	expect_match "nvqd says so" "$(cat "$T/nvqd.log")" "3 submitted jobs put back from the private database"
	for i in 0 1 2; do
		expect_eq "job ${ids[$i]} is back" "$(state "${ids[$i]}")" PENDING
	done
	expect_eq "with its first event" "$(sqlite3 "$T/nvq.db" "SELECT count(*) FROM events WHERE job_id >= ${ids[0]} AND state = 'PENDING'")" 3
	nvq cancel "$first" > /dev/null
	for i in 0 1 2; do
		wait_state "${ids[$i]}" COMPLETED 10
		expect_eq "job ${ids[$i]} ran with its environment" "$(cat "$T/ran.${ids[$i]}" 2>/dev/null)" "bar $((i + 1))"
	done
	expect_eq "no copy left" "$(sqlite3 "$T/nvq.db.private" "SELECT count(*) FROM jobs_copy")" 0
	expect_eq "integrity" "$(sqlite3 "$T/nvq.db" "PRAGMA integrity_check")" ok
	stop_nvqd
}

# trace_writes: nvqd's pwrite64 calls, traced into $T/strace.w until
# trace_stop; fails if strace cannot attach (ptrace refused?)
trace_writes() {
	strace -x -s 8 -e trace=pwrite64 -yy -p "$NVQD_PID" -o "$T/strace.w" 2> /dev/null &
	TRACE_PID=$!; sleep 0.5
	kill -0 "$TRACE_PID" 2> /dev/null
}
trace_stop() { sleep 0.2; kill -INT "$TRACE_PID"; wait "$TRACE_PID" 2> /dev/null; }
# wal_commits WAL: the commits traced into WAL (nvq.db-wal, nvq.db.private-wal):
# a frame header (24 bytes) whose second word, the database's size in
# pages, is not zero marks the last frame of a commit
wal_commits() {
	grep "/$1>, \"" "$T/strace.w" | grep ', 24, ' |
	    grep -vc 'wal>, "\(\\x..\)\{4\}\\x00\\x00\\x00\\x00"' || true
}

t_env_batch() {	# the environments of jobs that end close together go in one commit, not one each
	command -v strace > /dev/null || { skip "strace is not installed"; return; }
	# one at a time: a pass per end, so one commit per job before
	write_config "[limits]" "max_running_jobs = 1"; start_nvqd || return
	local commits t0 ms
	submit --hold --array 1-32 -g 0 true > /dev/null
	trace_writes || { skip "strace cannot attach here (ptrace refused?)"; return; }
	t0=$(date +%s%N)
	nvq release 1_ > /dev/null
	nvq wait $(seq 1 32) > /dev/null
	ms=$(( ($(date +%s%N) - t0) / 1000000 ))
	expect_eq "all ended, their environments gone" "$(envs_left "job_id BETWEEN 1 AND 32")" 0
	trace_stop
	commits=$(wal_commits nvq.db.private-wal)
	echo "    ($commits commits to the private database for 32 jobs one at a time in $ms ms)"
	# a batch waits 50 ms for the ends after its first: one commit per 50 ms at
	# most (and the release's); one per job only where each job takes 50 ms
	expect_eq "at most one commit per 50 ms" "$(( commits >= 1 && commits <= ms / 50 + 3 ))" 1
	if [ "$ms" -ge 1500 ]; then
		skip "the jobs took $ms ms here: too slow to tell batches from one commit per job"
		return
	fi
	expect_eq "fewer commits than jobs" "$(( commits < 32 ))" 1
}

t_end_start_commit() {	# one at a time, a job's end and the next one's start go in one commit
	command -v strace > /dev/null || { skip "strace is not installed"; return; }
	write_config "[limits]" "max_running_jobs = 1"; start_nvqd || return
	local commits n=24
	submit --hold --array "1-$n" -g 0 sh -c 'sleep 0.05; exit $((NVQ_ARRAY_INDEX % 3))' > /dev/null
	trace_writes || { skip "strace cannot attach here (ptrace refused?)"; return; }
	nvq release 1_ > /dev/null
	nvq wait $(seq 1 $n) > /dev/null
	trace_stop
	# the release, the first start, then one a turn, and the last end; 2 a turn before
	commits=$(wal_commits nvq.db-wal)
	echo "    ($commits commits to the main database for $n jobs one at a time)"
	expect_eq "about one commit a job" "$(( commits >= n && commits < n + n / 2 ))" 1
	expect_eq "every end recorded, with its exit code" "$(sqlite3 "$T/nvq.db" "SELECT
	    group_concat(exit_code, '') FROM (SELECT exit_code FROM jobs ORDER BY id)")" \
	    "$(for i in $(seq 1 $n); do printf %d $((i % 3)); done)"
	expect_eq "and every run" "$(sqlite3 "$T/nvq.db" "SELECT count(*) FROM runs
	    WHERE ended_at IS NOT NULL AND ended_at >= started_at")" "$n"
}

t_end_start_full() {	# an end and the next start fail to commit together (disk full): the end alone is recorded, the start waits
	small_fs db 3m || return
	write_config "[limits]" "max_running_jobs = 1"
	sed -i "s#^database = .*#database = $T/db/nvq.db#" "$T/nvq.ini"
	start_nvqd || { umount "$T/db"; return; }
	local a b
	a=$(submit -g 0 sh -c 'sleep 1.5; exit 5')
	b=$(submit -g 0 true)
	wait_state "$a" RUNNING
	dd if=/dev/zero of="$T/db/filler" bs=64k 2> /dev/null
	wait_state "$a" FAILED 5
	expect_eq "the end is recorded on the full disk" "$(field "$a" exit_code)" 5
	sleep 0.5
	expect_eq "the next job waits, its start not recorded" "$(state "$b")" PENDING
	rm -f "$T/db/filler"
	wait_state "$b" COMPLETED 5
	expect_eq "and runs once there is room" "$(state "$b")" COMPLETED
	expect_eq "each with its run" "$(sqlite3 "$T/db/nvq.db" "SELECT count(*) FROM runs
	    WHERE job_id IN ($a, $b) AND ended_at IS NOT NULL")" 2
	expect_match "the end and the start failed together, the end went alone" \
	    "$(grep -c "the ends of 1 jobs cannot be committed .*one by one" "$T/nvqd.log")" "^[1-9]"
	# the standby handed the job before that commit was called off: it undid its setup
	local sb
	sb=$(sed -n "s/.*job $b: its start is not committed: its prepared supervisor \([0-9]*\) is called off.*/\1/p" "$T/nvqd.log" | head -1)
	expect_match "the standby it was handed to was called off" "$sb" "^[0-9]+$"
	expect_eq "and is gone, reaped" "$(ps -o stat= -p "${sb:-1}" 2> /dev/null)" ""
	# (made since this test began: a shim of an earlier test killed by SIGKILL may have had the pid)
	expect_eq "leaving no memory account" "$(find /dev/shm -maxdepth 1 -name "nvq-share-$sb-*" \
	    -newer "$T/nvq.ini" | wc -l)" 0
	expect_eq "nor cgroup" "$(find /sys/fs/cgroup -maxdepth 6 -name "job-$b-$sb" 2> /dev/null | wc -l)" 0
	stop_nvqd
	expect_eq "integrity" "$(sqlite3 "$T/db/nvq.db" "PRAGMA integrity_check")" ok
	umount "$T/db"
}
