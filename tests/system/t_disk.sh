# t_disk.sh: what one user can do to everyone through the disk (issue 11).
# A full file system under the database and the spool must not lose a
# job's end or a cancel; an environment is deleted as soon as its job can
# no longer start, and the private database gives the room back.

t_disk_full_records() {	# the disk filled by a job: ends and cancels still recorded, submits refused
	if [ "$(id -u)" != 0 ] || ! mkdir -p "$T/fs" || ! mount -t tmpfs -o size=24m tmpfs "$T/fs"; then
		skip "needs root and mount"
		return
	fi
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
}
