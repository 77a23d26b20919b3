# t_pty.sh: nvq run on a terminal, as srun --pty: the job's own
# pseudo-terminal (tests/system/pty_drive.py types at nvq run as a user would).

# drive ROWS COLS STEP... -- nvq ARGS...: pty_drive.py on the real nvq
drive() {
	local steps=()
	while [ "$1" != -- ]; do steps+=("$1"); shift; done
	shift
	python3 tests/system/pty_drive.py 24 80 "${steps[@]}" -- "$NVQ_BIN" -s "$T/sock" "$@" |
	    tr -d '\r'
}

# line OUT REGEX: the first line of OUT that matches (grep -E)
line() { echo "$1" | grep -E -m1 "$2"; }

t_pty_ctrl_c() {	# one Ctrl-C is SIGINT for the job, which goes on; two within a second cancel it
	write_config "[gpus]" "virtual = 1x16G"; start_nvqd || return
	local out id
	out=$(drive expect:ready send:'\x03' expect:got-INT sleep:1.5 \
	    run:"sqlite3 $T/nvq.db 'SELECT state FROM jobs ORDER BY id DESC LIMIT 1'" \
	    send:'\x03' expect:got-INT sleep:1.5 send:'\x03\x03' -- \
	    run -g 0 sh -c 'trap "echo got-INT" INT; echo ctty=$(ps -o tty= -p $$)
	    echo ready; while :; do sleep 0.1; done')
	id=$(sqlite3 "$T/nvq.db" "SELECT max(id) FROM jobs")
	expect_none "no step timed out" "$out" "timeout:"
	expect_match "the job's controlling terminal: a pseudo-terminal" "$(line "$out" ^ctty=)" \
	    "^ctty=pts/[0-9]+$"
	expect_match "Ctrl-C reached the job as SIGINT" "$out" "got-INT"
	expect_match "still RUNNING after one Ctrl-C" "$out" "run: RUNNING"
	expect_eq "both, 1.5 s apart, before the cancel" \
	    "$(echo "$out" | sed '/cancelling job/q' | grep -c 'got-INT')" 2
	expect_match "two within a second: cancelled, said so" "$out" \
	    "Ctrl-C twice within a second: cancelling job $id"
	expect_eq "nvq's status 130" "$(line "$out" ^status)" "status 130"
	expect_match "promptly (not after the kill grace)" "$(echo "$out" | sed -n 's/^after_send //p')" \
	    "^[01]\."
	expect_eq "the terminal's modes as they were" "$(line "$out" ^modes)" "modes same"
	wait_state "$id" CANCELLED
}

t_pty_shell() {	# nvq run bash -i: a session with the terminal, job control, its status nvq's
	write_config "[gpus]" "virtual = 1x16G"; start_nvqd || return
	local out ids
	out=$(drive expect:'$ ' send:'tty; echo TTY$((1+1))\r' expect:TTY2 \
	    send:'echo ids=$(ps -o sid=,pgid=,tpgid= -p $$ | tr -s " " :)=$$\r' expect:ids= \
	    expect:'$ ' send:'sleep 30\r' sleep:0.5 send:'\x1a' expect:Stopped \
	    send:'kill -9 %1; wait; echo J$((2+2))\r' expect:J4 \
	    resize:33:101 sleep:0.3 send:'echo size=$(stty size)\r' expect:'size=3' send:'exit 7\r' -- \
	    run -g 0 env PS1='$ ' bash --norc --noprofile -i)
	expect_none "no step timed out" "$out" "timeout:"
	expect_none "job control: no complaint" "$out" "no job control" "cannot set terminal process group"
	expect_match "tty names a pseudo-terminal" "$(line "$out" /dev/)" "/dev/pts/[0-9]+$"
	# sid, pgid, tpgid and bash's pid: a session leader, in the foreground
	ids=$(echo "$out" | sed -n 's/.*ids=:*\([0-9:=]*\)$/\1/p' | tail -1)
	expect_match "its own session, in the foreground ($ids)" "$ids" "^([0-9]+):\1:\1=\1$"
	expect_match "Ctrl-Z stopped its foreground job" "$out" "Stopped +sleep 30"
	expect_match "nvq's new size, the job's terminal's (SIGWINCH)" "$(line "$out" size=[0-9])" \
	    "size=33 101$"
	expect_eq "nvq's status is the job's" "$(line "$out" ^status)" "status 7"
	expect_eq "the terminal's modes as they were" "$(line "$out" ^modes)" "modes same"
}

t_pty_cancel_shell() {	# two Ctrl-C at an interactive shell (which ignores SIGTERM): gone at once
	write_config "[gpus]" "virtual = 1x16G"; start_nvqd || return
	local out id
	out=$(drive expect:'$ ' send:'echo S$((3+3))\r' expect:S6 expect:'$ ' send:'\x03\x03' -- \
	    run -g 0 env PS1='$ ' bash --norc --noprofile -i)
	id=$(sqlite3 "$T/nvq.db" "SELECT max(id) FROM jobs")
	expect_none "no step timed out" "$out" "timeout:"
	expect_eq "nvq's status 130" "$(line "$out" ^status)" "status 130"
	expect_match "promptly" "$(echo "$out" | sed -n 's/^after_send //p')" "^[01]\."
	expect_eq "the terminal's modes as they were" "$(line "$out" ^modes)" "modes same"
	# the hang-up ends the shell: cancelled well within kill_grace (30 s)
	wait_state "$id" CANCELLED 5
}

t_pty_pending() {	# while the job waits its turn the terminal is nvq's: one Ctrl-C cancels it
	write_config "[gpus]" "virtual = 1x16G"; start_nvqd || return
	local out blk id
	blk=$(submit -m 10G sleep 30)
	wait_state "$blk" RUNNING
	out=$(drive expect:'queued and waiting' send:'\x03' -- run -m 10G sh -c 'echo ran')
	id=$(sqlite3 "$T/nvq.db" "SELECT max(id) FROM jobs")
	expect_none "no step timed out" "$out" "timeout:"
	expect_match "cancelled, said so" "$out" "Interrupt: cancelling job $id"
	expect_eq "nvq's status 130" "$(line "$out" ^status)" "status 130"
	expect_match "promptly" "$(echo "$out" | sed -n 's/^after_send //p')" "^[01]\."
	expect_eq "the terminal's modes as they were" "$(line "$out" ^modes)" "modes same"
	wait_state "$id" CANCELLED
	expect_eq "it never ran" "$(line "$out" "^ran$")" ""
	nvq cancel "$blk" > /dev/null
}

t_pty_not_stdout() {	# stdout not a terminal (nvq run cmd > file): no pseudo-terminal, as srun --pty
	write_config "[gpus]" "virtual = 1x16G"; start_nvqd || return
	local out
	out=$(python3 tests/system/pty_drive.py 24 80 -- /bin/sh -c "\"$NVQ_BIN\" -s \"$T/sock\" run -g 0 \
	    sh -c 'ps -o tty= -p \$\$; [ -t 1 ] && echo tty-out; echo plain' > \"$T/out\"; echo rc=\$?" |
	    tr -d '\r')
	expect_match "its status" "$out" "rc=0"
	expect_eq "no controlling terminal; its output in the file, no terminal's \\r" \
	    "$(od -c "$T/out" | head -1)" "$(printf '?\nplain\n' | od -c | head -1)"
	expect_eq "the terminal's modes as they were" "$(line "$out" ^modes)" "modes same"
}
