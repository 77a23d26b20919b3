# t_disk.sh: what one user can do to everyone through the disk (issue 11).
# A full file system under the database and the spool must not lose a
# job's end or a cancel; an environment is deleted as soon as its job can
# no longer start, and the private database gives the room back.

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
