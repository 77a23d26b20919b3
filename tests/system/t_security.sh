# t_security.sh: users against each other: jobs run as their submitter,
# others cannot act on them.  Sourced by run.sh (helpers in lib.sh).

# nvqd as root in a user namespace that maps no other uid: dropping to the
# submitter's uid fails there, and the job must fail without running.
check_failed_drop() {
	if ! unshare -Ur true 2>/dev/null; then
		skip "needs user namespaces"
		return
	fi
	# the unmapped submitter is 65534 in there; its spool folder is made here
	mkdir -p -m 700 "$T/spool/65534"; chown 65534 "$T/spool/65534"
	unshare -Ur "$NVQD" -c "$T/nvq.ini" >> "$T/nvqd.log" 2>&1 &
	NVQD_PID=$!
	local i a
	for i in $(seq 100); do nvq list > /dev/null 2>&1 && break; sleep 0.05; done
	a=$(as_user nvqta "$NVQ_BIN" -s "$T/sock" submit --parsable -g 0 \
	    sh -c 'id -u > '"$T"'/shared/dropped')
	wait_state "$a" FAILED
	expect_match "a failed drop fails the job" "$(field "$a" reason)" "^cannot set (the groups of|gid|uid)"
	expect_eq "which never ran" "$([ -e "$T/shared/dropped" ] && echo ran)" ""
	expect_eq "its exit code" "$(field "$a" exit_code)" 126
}

t_users() {	# as root, a job runs as its submitter; others cannot cancel it
	if [ "$(id -u)" != 0 ] || ! command -v setpriv > /dev/null; then
		skip "needs root and setpriv"
		return
	fi
	chmod 755 "$T"
	write_config; start_nvqd || return
	local as_nobody="setpriv --reuid=65534 --regid=65534 --groups=65534,4 --"
	local a out
	a=$(cd /tmp && $as_nobody "$NVQ_BIN" -s "$T/sock" submit --parsable -g 0 \
	    sh -c 'id -u; id -g; id -G; sleep 30')
	wait_state "$a" RUNNING; sleep 0.3
	expect_eq "uid, gid and groups of the submitter" "$(nvq log "$a")" "65534
65534
65534 4"
	expect_eq "its owner" "$(field "$a" uid)" 65534
	expect_eq "its output belongs to it" "$(stat -c %u "$(field "$a" stdout_path)")" 65534
	expect_eq "its spool folder is its own" "$(stat -c '%u %a' "$T/spool/65534")" "65534 700"
	local b; b=$(submit -g 0 sleep 30)
	out=$($as_nobody "$NVQ_BIN" -s "$T/sock" cancel "$b" 2>&1)
	expect_match "another user's job cannot be cancelled" "$out" "belongs to root; only its owner or root may cancel it"
	expect_eq "it still runs" "$(state "$b")" RUNNING
	$as_nobody "$NVQ_BIN" -s "$T/sock" cancel "$a"
	wait_state "$a" CANCELLED
	expect_match "cancelled by its owner" "$(field "$a" reason)" "cancelled by nobody"
	nvq cancel "$b"; wait_state "$b" CANCELLED
}

t_security() {	# user A's jobs are safe from user B; jobs run as exactly their submitter
	if [ "$(id -u)" != 0 ] || ! command -v setpriv > /dev/null || ! command -v useradd > /dev/null ||
	    ! make_users; then
		skip "needs root, setpriv and useradd"
		return
	fi
	chmod 755 "$T"
	write_config; start_nvqd || return
	local a b out rc verb
	a=$(as_user nvqta env SECRET_OF_A=hunter2 "$NVQ_BIN" -s "$T/sock" submit --parsable -g 0 \
	    sh -c 'id -u; id -g; id -G; sleep 30')
	b=$(as_user nvqtb "$NVQ_BIN" -s "$T/sock" submit --parsable -g 0 sleep 30)
	wait_state "$a" RUNNING; wait_state "$b" RUNNING; sleep 0.3
	expect_eq "A's job runs with A's uid, gid and groups" "$(nvq log "$a" | tr '\n' ' ')" \
	    "$(id -u nvqta) $(id -g nvqta) $(id -G nvqta) "
	expect_eq "and its processes are A's" "$(ps -o uid= --ppid "$(shim_pid "$a")" | tr -d ' ')" "$(id -u nvqta)"
	# B acting on A's job: every verb refused, the job untouched
	for verb in cancel hold release; do
		out=$(as_user nvqtb "$NVQ_BIN" -s "$T/sock" "$verb" "$a" 2>&1); rc=$?
		expect_eq "B may not $verb A's job" "$rc" 1
		expect_match "and is told why ($verb)" "$out" "belongs to nvqta; only its owner or root may $verb it"
	done
	expect_eq "A's job still runs" "$(state "$a")" RUNNING
	expect_eq "not held" "$(sqlite3 "$T/nvq.db" "SELECT held FROM jobs WHERE id = $a")" 0
	out=$(as_user nvqtb "$NVQ_BIN" -s "$T/sock" submit -g 0 -p 101 true 2>&1)
	expect_match "B may not go above max_priority" "$out" "above \[limits\] max_priority \(0\)"
	# A's environment: not in the shared database, not readable by B
	expect_eq "not in the database others read" "$(grep -c hunter2 "$T/nvq.db" "$T/nvq.db-wal" 2>/dev/null | awk -F: '{ s += $2 } END { print s }')" 0
	expect_eq "the private database is root's alone" "$(stat -c '%U %a' "$T/nvq.db.private")" "root 600"
	out=$(as_user nvqtb cat "$T/nvq.db.private" 2>&1); expect_match "B cannot read it" "$out" "Permission denied"
	out=$(as_user nvqtb cat "/proc/$(below "$(shim_pid "$a")" '^sleep 30$' | cut -d' ' -f1)/environ" 2>&1)
	expect_match "nor the job's environment in /proc" "$out" "Permission denied"
	out=$(as_user nvqtb ls "$T/spool/$(id -u nvqta)" 2>&1)
	expect_match "nor A's spool folder" "$out" "Permission denied"
	expect_match "B still reads the history with sqlite3" \
	    "$(as_user nvqtb sqlite3 -readonly "$T/nvq.db" "SELECT count(*) FROM jobs" 2>&1)" "^[0-9]+$"
	# a planted symlink for an output file is not followed
	mkdir -m 1777 "$T/shared"; echo root-data > "$T/rootfile"; chmod 644 "$T/rootfile"
	ln -s "$T/rootfile" "$T/shared/out.txt"; chown -h nvqtb "$T/shared/out.txt"
	out=$(as_user nvqta "$NVQ_BIN" -s "$T/sock" submit --parsable -g 0 -o "$T/shared/out.txt" \
	    sh -c 'echo written > '"$T"'/shared/ran')
	wait_state "$out" FAILED
	# (the kernel's protected_symlinks may refuse it before O_NOFOLLOW does)
	expect_match "the job fails" "$(field "$out" reason)" "cannot open $T/shared/out.txt: (Too many levels of symbolic links|Permission denied)"
	expect_eq "the target is untouched" "$(cat "$T/rootfile")" root-data
	expect_eq "the job never ran" "$([ -e "$T/shared/ran" ] && echo ran)" ""
	# a link A planted in A's own folder, to a file A owns: O_NOFOLLOW
	mkdir "$T/adir"; echo a-data > "$T/adir/afile"; ln -s "$T/adir/afile" "$T/adir/out.txt"
	chown -R -h nvqta "$T/adir"
	out=$(as_user nvqta "$NVQ_BIN" -s "$T/sock" submit --parsable -g 0 -o "$T/adir/out.txt" true)
	wait_state "$out" FAILED
	expect_match "not followed" "$(field "$out" reason)" "cannot open $T/adir/out.txt: Too many levels of symbolic links"
	expect_eq "its target untouched" "$(cat "$T/adir/afile")" a-data
	# a working directory replaced by a link before the job starts
	mkdir "$T/adir/work"; chown nvqta "$T/adir/work"
	local first; first=$(as_user nvqta "$NVQ_BIN" -s "$T/sock" submit --parsable -g 0 sleep 1)
	out=$(cd "$T/adir/work" && setpriv --reuid=nvqta --regid="$(id -g nvqta)" --init-groups -- \
	    "$NVQ_BIN" -s "$T/sock" submit --parsable -g 0 --after "$first" pwd)
	mv "$T/adir/work" "$T/adir/work.real"; ln -s "$T/adir/work.real" "$T/adir/work"
	wait_state "$out" FAILED 5
	expect_match "a linked working directory is not entered" "$(field "$out" reason)" \
	    "cannot enter $T/adir/work: (Too many levels of symbolic links|Not a directory)"
	# admins: members of [security] admin_group may act on any job
	printf '[security]\nadmin_group = nvqtadm\n' >> "$T/nvq.ini"; kill -HUP "$NVQD_PID"; sleep 0.3
	as_user nvqtb "$NVQ_BIN" -s "$T/sock" cancel "$a"
	expect_eq "an admin may cancel A's job" "$?" 0
	wait_state "$a" CANCELLED
	expect_match "by the admin" "$(field "$a" reason)" "cancelled by nvqtb"
	out=$(as_user nvqta "$NVQ_BIN" -s "$T/sock" cancel "$b" 2>&1)
	expect_match "A is no admin" "$out" "only its owner, root or members of nvqtadm may cancel it"
	nvq cancel "$b"; wait_state "$b" CANCELLED
	stop_nvqd
	check_failed_drop
}

t_run_terminals() {	# two users who take every terminal slot they may cannot keep nvq run from others
	if [ "$(id -u)" != 0 ] || ! command -v setpriv > /dev/null || ! command -v useradd > /dev/null ||
	    ! make_users; then
		skip "needs root, setpriv and useradd"
		return
	fi
	chmod 755 "$T"
	write_config; start_nvqd || return
	local ha hb pa pb out i
	ha=$(as_user nvqta "$NVQ_BIN" -s "$T/sock" submit --parsable --hold -g 0 true)
	hb=$(as_user nvqtb "$NVQ_BIN" -s "$T/sock" submit --parsable --hold -g 0 true)
	# each asks on as many connections as a user may open (256) and passes nothing
	as_user nvqta "$HELPERS/attach" "$T/sock" "$ha" 0 hold 256 8 > "$T/a.out" & pa=$!
	as_user nvqtb "$HELPERS/attach" "$T/sock" "$hb" 0 hold 256 8 > "$T/b.out" & pb=$!
	for i in $(seq 300); do [ -s "$T/a.out" ] && [ -s "$T/b.out" ] && break; sleep 0.05; done
	# (the slots they took last for 5 s)
	out=$(echo hello | nvq run -g 0 cat 2>&1)
	expect_eq "nvq run still gets its stdin to the job" "$out" hello
	expect_eq "nvqta got its 16" "$(head -1 "$T/a.out")" "ready 16 refused 240"
	expect_eq "and was told why" "$(sed -n 2p "$T/a.out")" \
	    "nvqta is passing 16 terminals to nvqd already, the most a user may; try again"
	expect_eq "nvqtb got its own 16 all the same" "$(head -1 "$T/b.out")" "ready 16 refused 240"
	kill "$pa" "$pb" 2> /dev/null; wait "$pa" "$pb" 2> /dev/null
	expect_eq "their jobs still wait for nvq run" "$(field "$ha" held)$(field "$hb" held)" 11
	nvq cancel "$ha" "$hb" > /dev/null
}

# PID: what its first mapping's first 4 bytes read as, for whoever runs it
# (python's bytes, b'\x7fELF' for a program's header), or the error.
mem_peek() {
	python3 -c 'import sys
pid = sys.argv[1]
try:
    start = int(open("/proc/%s/maps" % pid).readline().split("-")[0], 16)
    with open("/proc/%s/mem" % pid, "rb") as f:
        f.seek(start)
        print(f.read(4))
except OSError as e:
    print("error", e.errno)' "$1"
}

t_prepared_undumpable() {	# the job's process waiting as its user beside its root supervisor (one memory) is not the user's to read
	if [ "$(id -u)" != 0 ] || ! command -v setpriv > /dev/null || ! command -v useradd > /dev/null ||
	    ! command -v python3 > /dev/null || ! make_users; then
		skip "needs root, setpriv, useradd and python3"
		return
	fi
	local was
	was=$(cat /proc/sys/fs/suid_dumpable 2> /dev/null)
	# with 1, a process that dropped root's uid may be traced by that uid
	if [ -z "$was" ] || ! echo 1 2> /dev/null > /proc/sys/fs/suid_dumpable; then
		skip "cannot set fs.suid_dumpable"
		return
	fi
	prepared_undumpable
	echo "$was" > /proc/sys/fs/suid_dumpable
}

prepared_undumpable() {
	chmod 755 "$T"
	write_config "[limits]" "max_running_jobs = 1"; start_nvqd || return
	local a b pb child i ta
	ta=$(id -u nvqta)
	# nvqta's second job waits for its first (max_running_jobs is per user)
	a=$(as_user nvqta "$NVQ_BIN" -s "$T/sock" submit --parsable -g 0 sleep 30)
	wait_state "$a" RUNNING || return
	b=$(as_user nvqta "$NVQ_BIN" -s "$T/sock" submit --parsable -g 0 sleep 30)
	pb=$(ahead_pid "$b")
	[ -n "$pb" ] || { fail "job $b was not prepared ahead"; return; }
	# its process: nvqta's now, waiting for its turn in the supervisor's memory
	for i in $(seq 100); do
		child=$(pgrep -P "$pb" | head -1)
		[ -n "$child" ] && [ "$(awk '/^Uid:/ { print $2 }' /proc/"$child"/status 2> /dev/null)" = "$ta" ] &&
		    break
		sleep 0.02
	done
	expect_eq "the prepared process is nvqta's, its supervisor root's" \
	    "$(awk '/^Uid:/ { print $2 }' /proc/"$child"/status 2> /dev/null) $(awk '/^Uid:/ {
	    print $2 }' /proc/"$pb"/status) $(state "$b")" "$ta 0 PENDING"
	expect_eq "nvqta cannot read its memory (the supervisor's)" \
	    "$(as_user nvqta bash -c "$(declare -f mem_peek); mem_peek $child")" "error 13"
	nvq cancel "$a" > /dev/null
	wait_state "$b" RUNNING || return
	expect_eq "the same process runs the job" "$(pgrep -P "$pb" | head -1)" "$child"
	expect_eq "whose memory, once its own, is nvqta's to read" \
	    "$(as_user nvqta bash -c "$(declare -f mem_peek); mem_peek $child")" "b'\\x7fELF'"
	nvq cancel "$b" > /dev/null
}
