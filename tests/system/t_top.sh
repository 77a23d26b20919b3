# t_top.sh: nvq top in tmux against a real nvqd, jobs in every state.

# top_screen: what tmux shows of the pane now
top_screen() { tmux -L "$TMUXS" capture-pane -p -t top; }

# top_wait REGEX [SECONDS]: until the screen matches (1 s unless told); 0, or 1
top_wait() {
	local i
	for i in $(seq $(( ${2:-1} * 20 ))); do
		[[ "$(top_screen)" =~ $1 ]] && return 0
		sleep 0.05
	done
	return 1
}

t_top() {	# nvq top: 80x24 and 200x50, every state, updated on a change, q quits
	command -v tmux > /dev/null || { skip "needs tmux (the quickstart installs it)"; return; }
	ckpt_config
	start_nvqd || return
	TMUXS=nvqtest$$
	local run susp pend held out
	run=$(fsubmit -m 30G -n trainer "$FAKE_JOB" launch 120 "$T/r")
	susp=$(fsubmit -m 10G -n paused "$FAKE_JOB" launch 120 "$T/s")
	wait_count "$T/r" || return
	wait_count "$T/s" || return
	wait_field "$susp" hook_pids '^[0-9]+$'
	nvq suspend "$susp" > /dev/null
	pend=$(submit -m 70G -n toobig sleep 10)
	held=$(submit --hold -g 0 -n held true)
	wait_state "$susp" SUSPENDED
	# 80x24, no colour: the GPU's bar, each state with its jobs
	tmux -L "$TMUXS" new-session -d -s top -x 80 -y 24 \
	    "NO_COLOR=1 $NVQ_BIN -s $T/sock top; echo nvq-top-exited-\$?; sleep 30"
	top_wait "RUNNING" 3 || fail "nvq top never drew"
	out=$(top_screen)
	echo "$out" > "$T/screen-80x24"
	expect_match "80x24: the title" "$out" "nvq top +[0-9:]+ +1 GPU +1 running +1 suspended +2 pending +q quits"
	expect_match "80x24: the GPU's bar, its memory, its jobs" "$out" \
	    "GPU 0 +auto +\[#*=+\.+\] +30G/80G +jobs $run"
	expect_match "80x24: the running job" "$out" "$run +root +1 +[0-9.]+[BKMG]/30G +[0-9]+s +trainer"
	expect_match "80x24: the suspended one" "$out" "SUSPENDED.*$susp +root +1 +10G"
	expect_match "80x24: a pending one and why" "$out" "$pend +root +1 +70G +[0-9]+s +needs 70G"
	expect_match "80x24: a held one" "$out" "$held +root +0 +- +[0-9]+s +held"
	expect_match "80x24: the host's CPUs and memory held" "$out" "host: [0-9]+ of 64 CPUs, [0-9.]+[BKMG] of [0-9.]+[KMGT] memory held by jobs"
	expect_eq "80x24: no line past 80 columns" "$(echo "$out" | awk '{ print length($0) }' | sort -n | tail -1)" 80
	expect_eq "80x24: no colour" "$(tmux -L "$TMUXS" capture-pane -e -p -t top | grep -c $'\e\\[3')" 0
	# a change shows within a second: a job ends, another is submitted
	nvq cancel "$pend"
	local new; new=$(submit -m 1G -n newcomer sleep 30)
	top_wait "$new +root +1 .*newcomer|$new +root +1 +1G +[0-9]+s" 1 || fail "the new job not shown within a second"
	top_wait "2 running|1 pending" 1 || fail "the counts not updated within a second"
	expect_eq "the cancelled job is gone" "$(top_screen | grep -c "toobig\|needs 70G")" 0
	# q quits, and the terminal is given back
	tmux -L "$TMUXS" send-keys -t top q
	top_wait "nvq-top-exited-0" 2 || fail "q did not quit: $(top_screen | head -3)"
	tmux -L "$TMUXS" kill-server
	# 200x50, in colour: wide bar, all of it on the screen (a tmux server of its own)
	TMUXS=nvqtest2$$
	tmux -L "$TMUXS" new-session -d -s top -x 200 -y 50 "TERM=xterm $NVQ_BIN -s $T/sock top; sleep 30"
	top_wait "RUNNING" 3 || fail "nvq top never drew at 200x50"
	out=$(top_screen)
	echo "$out" > "$T/screen-200x50"
	expect_match "200x50: a wider bar" "$out" "\[#*=*\.{60,}\]"
	expect_match "200x50: the whole GPU line" "$out" "GPU 0 .* 3[01]G/80G +jobs ([0-9]+,)?$run"
	expect_match "200x50: in colour" "$(tmux -L "$TMUXS" capture-pane -e -p -t top)" $'\e\\[32m'
	# nvqd restarts: nvq top says so, then follows the new one
	stop_nvqd
	top_wait "nvqd does not answer" 3 || fail "nvqd's absence not said"
	start_nvqd || return
	top_wait "RUNNING" 4 || fail "not followed again after nvqd's restart"
	tmux -L "$TMUXS" send-keys -t top q
	sleep 0.3
	tmux -L "$TMUXS" kill-server 2> /dev/null
	nvq cancel "$run" "$susp" "$held" "$new" > /dev/null 2>&1
}
