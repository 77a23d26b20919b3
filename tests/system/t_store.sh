# t_store.sh: what a submit keeps in nvqd's files, and what one user can
# do to everyone with it (issue 39): an array's tasks share one stored
# environment and command; [limits] max_stored bounds what a user's active
# jobs keep, in bytes, restarts too; submits never spend the room kept for
# ends and cancels, nor does a user's hold or release, even after nvqd
# restarts on a full disk; one submit over it is refused alone; a cancel
# works on a full disk.

# store_big_env: STORE_ENV (the caller's local array), an environment of 8
# variables of 120 kB (960 kB: as much as max_env's 1M lets through, each
# variable under the kernel's 128 kB)
store_big_env() {
	local v i
	v=$(head -c 119990 /dev/zero | tr '\0' x)
	STORE_ENV=(PATH=/usr/bin:/bin)
	for i in 1 2 3 4 5 6 7 8; do STORE_ENV+=("B$i=$v"); done
}
# store_nvqd_on_fs SIZE: nvqd with its database and spool on a file system
# of SIZE of its own (T/fs), started; fails (the file system unmounted) if not
store_nvqd_on_fs() {
	small_fs fs "$1" || return 1
	write_config
	sed -i "s#^database = .*#database = $T/fs/nvq.db#; s#^spool = .*#spool = $T/fs/spool#" "$T/nvq.ini"
	start_nvqd || { umount "$T/fs"; return 1; }
}
# store_fill N: up to N held submits of STORE_ENV's 960 kB, until one is
# refused; sets the caller's out and rc (the last), ids (those stored, by commas)
store_fill() {
	local i
	for i in $(seq "$1"); do
		out=$(env -i "${STORE_ENV[@]}" "$NVQ_BIN" -s "$T/sock" submit --parsable --hold -g 0 true 2>&1)
		rc=$?
		[ $rc != 0 ] && break
		ids="$ids${ids:+,}$out"
	done
}
# store_submit_as USER ARGS...: nvq submit --parsable as USER, with the STORE_ENV environment
store_submit_as() {
	local u=$1; shift
	as_user "$u" env -i "${STORE_ENV[@]}" "$NVQ_BIN" -s "$T/sock" submit --parsable "$@"
}
# store_shared_left: the shared environments and links left once there are
# none, or after 2 s (deleted in batches, as envs_left says)
store_shared_left() {
	local i n
	for i in $(seq 40); do
		n=$(sqlite3 "$T/nvq.db.private" "SELECT (SELECT count(*) FROM array_env) +
		    (SELECT count(*) FROM task_env)")
		[ "$n" = 0 ] && break
		sleep 0.05
	done
	echo "$n"
}
store_avail_kb() { df -k --output=avail "$1" | tail -1 | tr -d ' '; }

t_store_array_flood() {	# an --array of 40 or 450 tasks with a 960 kB environment cannot fill the disk; others submit, owner and root cancel
	make_users || { skip "cannot make test users"; return; }
	chmod 755 "$T"
	store_nvqd_on_fs 48m || return
	local -a STORE_ENV; store_big_env
	local a1 a2 out rc other
	# 40 held tasks: 38 MB as 40 copies, which a 48 MB disk took
	a1=$(store_submit_as nvqta --hold --array 1-40 -g 0 true 2>&1)
	expect_match "an array is stored (its environment once)" "$a1" "^[0-9]+$"
	sleep 0.5	# the checkpoint of the private database's log, if any
	other=$(as_user nvqtb "$NVQ_BIN" -s "$T/sock" submit --parsable --hold -g 0 true 2>&1)
	expect_match "another user's ordinary submit is stored" "$other" "^[0-9]+$"
	# the reviewer's: 450 held tasks, 432 MB as 450 copies
	a2=$(store_submit_as nvqta --hold --array 1-450 -g 0 true 2>&1)
	expect_match "and an array of 450" "$a2" "^[0-9]+$"
	[[ $a1 =~ ^[0-9]+$ ]] || a1=0; [[ $a2 =~ ^[0-9]+$ ]] || a2=0
	sleep 0.5
	expect_eq "the file system keeps most of its room (KiB free)" \
	    "$(( $(store_avail_kb "$T/fs") > 30000 ))" 1
	other=$(as_user nvqtb "$NVQ_BIN" -s "$T/sock" submit --parsable --hold -g 0 true 2>&1)
	expect_match "another user's submit after it is stored" "$other" "^[0-9]+$"
	# now another program fills the file system
	dd if=/dev/zero of="$T/fs/filler" bs=64k 2> /dev/null
	out=$(as_user nvqtb "$NVQ_BIN" -s "$T/sock" submit -g 0 true 2>&1); rc=$?
	expect_eq "on the full disk a submit is refused" "$rc" 1
	expect_match "with the reason" "$out" "cannot store the job: .*; nothing was queued"
	out=$(as_user nvqta "$NVQ_BIN" -s "$T/sock" cancel "${a1}_" 2>&1); rc=$?
	expect_eq "the owner cancels the array on the full disk ($out)" "$rc" 0
	out=$(nvq cancel "${a2}_" 2>&1); rc=$?
	expect_eq "root cancels the other ($out)" "$rc" 0
	expect_eq "every task is recorded CANCELLED" "$(sqlite3 "$T/fs/nvq.db" "SELECT count(*)
	    FROM jobs WHERE array_id IN ($a1, $a2) AND state = 'CANCELLED'")" 490
	expect_eq "nvqd still serves" "$(nvq list > /dev/null 2>&1; echo $?)" 0
	expect_eq "the arrays' environments are gone, on the full disk too" \
	    "$(sqlite3 "$T/fs/nvq.db.private" "SELECT count(*) FROM array_env")" 0
	rm -f "$T/fs/filler"
	expect_match "submits work again once there is room" "$(submit --hold -g 0 true)" "^[0-9]+$"
	stop_nvqd
	expect_eq "integrity" "$(sqlite3 "$T/fs/nvq.db" "PRAGMA integrity_check")" ok
	umount "$T/fs"
}

t_store_headroom() {	# submits stop short of the room kept for ends and cancels, with the reason
	store_nvqd_on_fs 24m || return
	local -a STORE_ENV; store_big_env
	local i id out rc ids=""
	# 960 kB each, no array: each stores its own, until the disk's headroom
	store_fill 40
	expect_eq "a submit is refused before the disk is full" "$rc" 1
	expect_match "saying how much room it would take and what stays free" "$out" \
	    "cannot store the job: the database's disk has .* free: this would take about .*, and .* stay free for recording ends and cancels; nothing was queued"
	expect_eq "the room kept is free (KiB)" "$(( $(store_avail_kb "$T/fs") >= 1024 ))" 1
	expect_match "a small submit still fits" "$(submit --hold -g 0 true)" "^[0-9]+$"
	for id in ${ids//,/ }; do
		out=$(nvq cancel "$id" 2>&1) || fail "cancel of $id: $out"
	done
	expect_eq "all recorded" "$(sqlite3 "$T/fs/nvq.db" "SELECT count(*) FROM jobs
	    WHERE id IN ($ids) AND state = 'CANCELLED'")" "$(echo "${ids//,/ }" | wc -w)"
	stop_nvqd
	umount "$T/fs"
}

t_store_shared() {	# an array's tasks store their environment and command once, and run with them
	write_config "[limits]" "max_running_jobs = 1"
	start_nvqd || return
	local arr big i got
	big=$(head -c 100000 /dev/zero | tr '\0' y)
	arr=$(B1=$big B2=$big B3=$big FOO=bar submit --hold --array 1-50 -g 0 \
	    sh -c 'echo "$NVQ_ARRAY_INDEX $FOO ${#B1}" > "$0/out.$NVQ_ARRAY_INDEX"' "$T")
	expect_match "submitted" "$arr" "^[0-9]+$"
	expect_eq "one environment for the 50 tasks" \
	    "$(sqlite3 "$T/nvq.db.private" "SELECT count(*) FROM array_env")" 1
	expect_eq "no copy of its own for any task" \
	    "$(sqlite3 "$T/nvq.db.private" "SELECT count(*) FROM job_env")" 0
	expect_eq "each task linked to it" \
	    "$(sqlite3 "$T/nvq.db.private" "SELECT count(*) FROM task_env WHERE array_id = $arr")" 50
	expect_eq "the private database holds it once (under 1 MB)" \
	    "$(( $(cat "$T/nvq.db.private" "$T/nvq.db.private-wal" 2>/dev/null | wc -c) < 1000000 ))" 1
	expect_eq "one command stored for the 50" "$(sqlite3 "$T/nvq.db" "SELECT count(*) FROM jobs
	    WHERE array_id = $arr AND command != ''")" 1
	expect_eq "which every task reads (job_commands)" "$(sqlite3 "$T/nvq.db" "SELECT count(DISTINCT
	    c.command) || ':' || count(*) FROM job_commands c JOIN jobs j ON j.id = c.id WHERE
	    j.array_id = $arr AND c.command LIKE 'sh -c %'")" "1:50"
	expect_match "and nvq show of the last task" "$(field "$((arr + 49))" command)" "^sh -c "
	# one task cancelled: the others still need the environment
	nvq cancel "$((arr + 1))" > /dev/null
	expect_eq "a task cancelled: its link goes" \
	    "$(sqlite3 "$T/nvq.db.private" "SELECT count(*) FROM task_env")" 49
	expect_eq "the environment stays for the others" \
	    "$(sqlite3 "$T/nvq.db.private" "SELECT count(*) FROM array_env")" 1
	nvq release "${arr}_" > /dev/null
	nvq wait $(seq "$arr" "$((arr + 49))") > /dev/null 2>&1
	got=""
	for i in 1 3 50; do got="$got$(cat "$T/out.$i" 2>/dev/null);"; done
	expect_eq "the tasks ran with their command and environment" "$got" \
	    "1 bar 100000;3 bar 100000;50 bar 100000;"
	expect_eq "all the tasks ran but the cancelled one" \
	    "$(sqlite3 "$T/nvq.db" "SELECT count(*) FROM jobs WHERE array_id = $arr AND state = 'COMPLETED'")" 49
	expect_eq "the last one gone, the environment goes, and every link" "$(store_shared_left)" 0
	stop_nvqd
}

t_store_restart() {	# nvq restart of many jobs stores the restarter's environment once
	write_config; start_nvqd || return
	local ids="" i id big out
	for i in $(seq 20); do
		id=$(submit -g 0 sh -c 'echo "$FOO ${#B1}" > "$0/out.$NVQ_JOB_ID"; [ -n "$FOO" ]' "$T")
		ids="$ids${ids:+ }$id"
	done
	nvq wait $ids > /dev/null 2>&1
	expect_eq "20 failed" "$(sqlite3 "$T/nvq.db" "SELECT count(*) FROM jobs WHERE state = 'FAILED'")" 20
	big=$(head -c 100000 /dev/zero | tr '\0' z)
	# at once: the last ones' environments may not be deleted yet (a batch waits 50 ms)
	FOO=again B1=$big B2=$big B3=$big nvq restart $ids > /dev/null
	expect_eq "one environment for the 20" "$(sqlite3 "$T/nvq.db.private" "SELECT count(*)
	    FROM array_env") $(sqlite3 "$T/nvq.db.private" "SELECT count(*) FROM job_env")" "1 0"
	expect_eq "under a key of its own, linked from each" "$(sqlite3 "$T/nvq.db.private" "SELECT
	    count(*) FROM task_env t JOIN array_env a ON a.array_id = t.array_id WHERE a.array_id < 0")" 20
	nvq wait $ids > /dev/null 2>&1
	expect_eq "they ran with it" "$(cat "$T"/out.* | sort | uniq -c | awk '{ print $1, $2, $3 }')" "20 again 100000"
	expect_eq "and it went with the last" "$(envs_left) $(store_shared_left)" "0 0"
	stop_nvqd
}

t_store_user_bound() {	# [limits] max_stored: a user's jobs keep at most so much; an array counts its environment once; root is exempt
	make_users || { skip "cannot make test users"; return; }
	chmod 755 "$T"
	write_config "[limits]" "max_stored = 3M"
	start_nvqd || return
	local -a STORE_ENV; store_big_env
	local a b c out rc arr
	a=$(store_submit_as nvqta --hold -g 0 true); b=$(store_submit_as nvqta --hold -g 0 true)
	c=$(store_submit_as nvqta --hold -g 0 true)
	expect_match "three jobs of 960 kB fit in 3M" "$a $b $c" "^[0-9]+ [0-9]+ [0-9]+$"
	out=$(store_submit_as nvqta --hold -g 0 true 2>&1); rc=$?
	expect_eq "a fourth is refused" "$rc" 1
	expect_match "saying why" "$out" \
	    "nvqta's jobs keep 2\.[0-9]+M in nvqd's files and this submit would add 9[0-9]{2}K, over \[limits\] max_stored \(3M\); nothing was queued"
	expect_match "another user is not held to nvqta's" \
	    "$(as_user nvqtb env -i "${STORE_ENV[@]}" "$NVQ_BIN" -s "$T/sock" submit --parsable --hold -g 0 true)" "^[0-9]+$"
	# --stdin: a task per line, each its own command, each counted
	local line; line="true $(head -c 1000 /dev/zero | tr '\0' e)"
	out=$(yes "$line" | head -3000 | as_user nvqtb "$NVQ_BIN" -s "$T/sock" submit --hold -g 0 --stdin 2>&1)
	expect_match "3000 lines of 1 kB are counted line by line: refused" "$out" \
	    "nvqtb's jobs keep 9[0-9]{2}K in nvqd's files and this submit would add [4-9]\.[0-9]M, over"
	out=$(yes "$line" | head -500 | as_user nvqtb "$NVQ_BIN" -s "$T/sock" submit --parsable --hold -g 0 --stdin 2>&1)
	expect_match "500 fit" "$out" "^[0-9]+$"
	expect_match "root is exempt" "$(env -i "${STORE_ENV[@]}" "$NVQ_BIN" -s "$T/sock" submit --parsable --hold -g 0 true)" "^[0-9]+$"
	out=$(store_submit_as nvqta --hold --array 1-1000 -g 0 true 2>&1); rc=$?
	expect_eq "an array is refused as well" "$rc" 1
	as_user nvqta "$NVQ_BIN" -s "$T/sock" cancel "$a" "$b" > /dev/null
	arr=$(store_submit_as nvqta --hold --array 1-1000 -g 0 true 2>&1)
	expect_match "once two ended, an array of 1000 fits: its environment counts once" "$arr" "^[0-9]+$"
	out=$(store_submit_as nvqta --hold -g 0 true 2>&1); rc=$?
	expect_eq "and the bound is reached again" "$rc" 1
	# what is counted comes back with a restart of nvqd, from the database
	stop_nvqd; start_nvqd || return
	out=$(store_submit_as nvqta --hold -g 0 true 2>&1); rc=$?
	expect_eq "after a restart too" "$rc" 1
	expect_match "counted from the database" "$out" "nvqta's jobs keep 2\.[0-9]+M"
	as_user nvqta "$NVQ_BIN" -s "$T/sock" cancel "${arr}_" > /dev/null
	expect_match "the array cancelled, its room comes back" "$(store_submit_as nvqta --hold -g 0 true 2>&1)" "^[0-9]+$"
	stop_nvqd
}

t_store_cwd() {	# a working directory longer than a path is refused (each task would keep a copy)
	write_config; start_nvqd || return
	local out ver
	# a submit frame as nvq would send it, but for its working directory
	ver=$(sed -n 's/^#define PROTO_VERSION[[:space:]]*\([0-9]*\).*/\1/p' common/proto.h)
	out=$(python3 -c '
import struct, sys
def s(k, v):
	v = v.encode() + b"\0"
	return b"s" + bytes([len(k)]) + k.encode() + struct.pack(">I", len(v)) + v
body = s("cwd", "/" + "d" * 5000) + s("arg", "true") + b"i\x04gpus" + struct.pack(">q", 0)
sys.stdout.buffer.write(struct.pack(">IHH", len(body), int(sys.argv[1]), 3) + body)' "$ver" |
	    "$HELPERS/rawsend" "$T/sock")
	expect_match "refused" "$out" "error: the working directory is longer than 4095 bytes; nothing was queued"
	expect_eq "nothing stored" "$(sqlite3 "$T/nvq.db" "SELECT count(*) FROM jobs")" 0
	stop_nvqd
}

t_store_reserve_restart() {	# nvqd restarted on a full disk without its reserve keeps the headroom, and makes the reserve once there is room
	store_nvqd_on_fs 24m || return
	stop_nvqd
	# the reserve spent on a full disk (it goes at 0); nvqd restarted with 600 kB free
	rm -f "$T/fs/nvq.db.reserve"
	fallocate -l $(( ($(store_avail_kb "$T/fs") - 600) * 1024 )) "$T/fs/filler"
	start_nvqd || { umount "$T/fs"; return; }
	rm -f "$T/fs/filler"
	local -a STORE_ENV; store_big_env
	local i id out rc ids=""
	store_fill 30
	expect_eq "a submit is refused before the disk is full" "$rc" 1
	expect_match "by the headroom, not by a full disk" "$out" \
	    "cannot store the job: the database's disk has .* free: this would take about .*, and .* stay free for recording ends and cancels; nothing was queued"
	expect_eq "the reserve was made again once there was room" \
	    "$(stat -c %s "$T/fs/nvq.db.reserve" 2>/dev/null)" $(( 24 * 1024 * 1024 / 16 ))
	for id in ${ids//,/ }; do
		out=$(nvq cancel "$id" 2>&1) || { fail "cancel of $id: $out"; break; }
	done
	stop_nvqd
	umount "$T/fs"
}

t_store_reserve_partial() {	# what a spent reserve kept serves a cancel on a full disk after nvqd restarts
	store_nvqd_on_fs 24m || return
	local p out rc half=$(( 24 * 1024 * 1024 / 32 ))
	p=$(submit --hold -g 0 true)
	stop_nvqd
	# half of the reserve spent, nvqd restarted on a disk too full to make it whole
	truncate -s "$half" "$T/fs/nvq.db.reserve"
	fallocate -l $(( ($(store_avail_kb "$T/fs") - 600) * 1024 )) "$T/fs/filler"
	start_nvqd || { umount "$T/fs"; return; }
	dd if=/dev/zero of="$T/fs/filler2" bs=64k 2> /dev/null
	out=$(nvq cancel "$p" 2>&1); rc=$?
	expect_eq "a cancel on the full disk is recorded ($out)" "$rc" 0
	expect_eq "CANCELLED" "$(sqlite3 "$T/fs/nvq.db" "SELECT state FROM jobs WHERE id = $p")" CANCELLED
	expect_eq "with what the reserve kept" "$(( $(stat -c %s "$T/fs/nvq.db.reserve" 2>/dev/null || echo 0) < half ))" 1
	rm -f "$T/fs/filler" "$T/fs/filler2"
	stop_nvqd
	umount "$T/fs"
}

t_store_reserve_users() {	# a user's hold and release on a full disk never spend the reserve kept for ends and cancels
	make_users || { skip "cannot make test users"; return; }
	chmod 755 "$T"
	store_nvqd_on_fs 24m || return
	local long long2 p whole i out rc refused=0
	long=$(submit -g 0 sleep 300); long2=$(submit -g 0 sleep 300)
	# released, it still waits for long2
	p=$(as_user nvqta "$NVQ_BIN" -s "$T/sock" submit --parsable --hold -g 0 --after "$long2" true)
	wait_state "$long" RUNNING
	whole=$(stat -c %s "$T/fs/nvq.db.reserve")
	dd if=/dev/zero of="$T/fs/filler" bs=64k 2> /dev/null
	for i in $(seq 25); do
		as_user nvqta "$NVQ_BIN" -s "$T/sock" release "$p" > /dev/null 2>&1 || refused=$((refused + 1))
		as_user nvqta "$NVQ_BIN" -s "$T/sock" hold "$p" > /dev/null 2>&1 || refused=$((refused + 1))
	done
	expect_eq "some of them found the disk full" "$(( refused > 0 ))" 1
	expect_eq "the reserve is whole after them" "$(stat -c %s "$T/fs/nvq.db.reserve" 2>/dev/null)" "$whole"
	out=$(nvq cancel "$long" 2>&1); rc=$?
	expect_eq "root's cancel works on the full disk ($out)" "$rc" 0
	wait_state "$long" CANCELLED 10
	if [ "$(stat -c %s "$T/fs/nvq.db.reserve" 2>/dev/null)" != "$whole" ]; then
		# the cancel took some of the reserve: a user's changes wait for room
		out=$(as_user nvqta "$NVQ_BIN" -s "$T/sock" release "$p" 2>&1); rc=$?
		expect_eq "a release while the reserve is in use is refused" "$rc" 1
		expect_match "saying why" "$out" "the database's disk is full"
	fi
	expect_eq "the user's job waits, as it was" "$(state "$p")" PENDING
	rm -f "$T/fs/filler"
	nvq cancel "$long2" > /dev/null
	stop_nvqd
	umount "$T/fs"
}

t_store_headroom_turn() {	# one submit over the disk's headroom is refused alone, not with every submit of its loop turn
	store_nvqd_on_fs 24m || return
	local keep big small
	# what stays free: the reserve (a sixteenth of 24M), and 1M more
	keep=$(( 24 * 1024 / 16 ))
	fallocate -l $(( ($(store_avail_kb "$T/fs") - keep - 1024) * 1024 )) "$T/fs/filler"
	# both sent while nvqd is stopped: read in one loop turn
	kill -STOP "$NVQD_PID"
	nvq submit --parsable --hold -g 0 --array 1-4000 true > "$T/big" 2>&1 &
	big=$!
	nvq submit --parsable --hold -g 0 true > "$T/small" 2>&1 &
	small=$!
	sleep 1
	kill -CONT "$NVQD_PID"
	wait "$big"; wait "$small"
	expect_match "the array of 4000 is over the headroom" "$(cat "$T/big")" \
	    "the database's disk has .* free: this would take about .*; nothing was queued"
	expect_match "the small submit beside it is stored" "$(cat "$T/small")" "^[0-9]+$"
	rm -f "$T/fs/filler"
	stop_nvqd
	umount "$T/fs"
}

t_store_restart_bound() {	# nvq restart counts the restarted jobs' commands against [limits] max_stored
	make_users || { skip "cannot make test users"; return; }
	chmod 755 "$T"
	write_config "[limits]" "max_stored = 1M"
	start_nvqd || return
	local arg i id ids="" out rc
	arg=$(head -c 60000 /dev/zero | tr '\0' a)
	# ten jobs of 128 kB (argv, and its command as shown) one after the other: each ends at once
	for i in $(seq 10); do
		id=$(as_user nvqta env -i PATH=/usr/bin:/bin "$NVQ_BIN" -s "$T/sock" submit --parsable -g 0 false "$arg" "$arg")
		as_user nvqta "$NVQ_BIN" -s "$T/sock" wait "$id" > /dev/null 2>&1
		ids="$ids${ids:+ }$id"
	done
	expect_eq "ten ended" "$(sqlite3 "$T/nvq.db" "SELECT count(*) FROM jobs WHERE state = 'FAILED'")" 10
	out=$(as_user nvqta env -i PATH=/usr/bin:/bin "$NVQ_BIN" -s "$T/sock" restart $ids 2>&1); rc=$?
	expect_eq "their restart, 1.2M, is refused" "$rc" 1
	expect_match "saying why" "$out" "this restart would add 1\.[0-9]+M, over \[limits\] max_stored \(1M\); nothing was restarted"
	stop_nvqd
}

t_store_bytes_restart() {	# what a user's jobs keep is counted in bytes after nvqd restarts too, not in characters
	make_users || { skip "cannot make test users"; return; }
	chmod 755 "$T"
	write_config "[limits]" "max_stored = 1M"
	start_nvqd || return
	local line out rc
	# --stdin: 55 tasks of a line of 2700 characters of 3 bytes, each its own
	# command and argv: 17 kB a task, 5.5 kB of it counted in characters
	line="true $(head -c 2700 /dev/zero | tr '\0' x | sed 's/x/€/g')"
	out=$(yes "$line" | head -55 | as_user nvqta env -i PATH=/usr/bin:/bin "$NVQ_BIN" -s "$T/sock" submit --parsable --hold -g 0 --stdin 2>&1)
	expect_match "55 fit" "$out" "^[0-9]+$"
	out=$(yes "$line" | head -20 | as_user nvqta env -i PATH=/usr/bin:/bin "$NVQ_BIN" -s "$T/sock" submit --hold -g 0 --stdin 2>&1); rc=$?
	expect_eq "20 more are refused" "$rc" 1
	stop_nvqd; start_nvqd || return
	out=$(yes "$line" | head -20 | as_user nvqta env -i PATH=/usr/bin:/bin "$NVQ_BIN" -s "$T/sock" submit --hold -g 0 --stdin 2>&1); rc=$?
	expect_eq "and after nvqd restarts" "$rc" 1
	expect_match "counted in bytes" "$out" "nvqta's jobs keep 9[0-9]{2}K in nvqd's files"
	stop_nvqd
}

t_store_auto_array() {	# -m auto by command finds the runs of an array's tasks, which store their command once
	[ -x "$FAKE_JOB" ] || { fail "build tests/fake_job first"; return; }
	write_config; start_nvqd || return
	local arr out
	# the first task fails: the runs to find are its later tasks'
	arr=$(fsubmit -m 2G -n arr --array 1-3 sh -c "$FAKE_JOB alloc 1073741824 1; [ \$NVQ_ARRAY_INDEX != 1 ]")
	nvq wait "$arr" "$((arr + 1))" "$((arr + 2))" > /dev/null 2>&1
	expect_eq "tasks 2 and 3 completed" "$(sqlite3 "$T/nvq.db" "SELECT group_concat(state) FROM
	    jobs WHERE array_id = $arr AND array_index > 1")" "COMPLETED,COMPLETED"
	out=$(LD_LIBRARY_PATH=$FAKE_LIB nvq submit --parsable -m auto -n other sh -c \
	    "$FAKE_JOB alloc 1073741824 1; [ \$NVQ_ARRAY_INDEX != 1 ]" 2>&1)
	expect_match "by command: a task's peak" "$out" "-m auto: 1\.[0-9]+G, the peak of job ($((arr + 1))|$((arr + 2))) \(1G\)"
	stop_nvqd
}
