# t_slurmenv.sh: what is left of issue 42 on the Slurm side: an array's
# shape in its tasks (SLURM_ARRAY_TASK_COUNT, _MIN, _MAX, _STEP, kept
# across a restart of nvqd), SLURM_CLUSTER_NAME ([cluster] name), and
# Slurm's --signal [B:]SIG@TIME: a warning TIME seconds before the time
# limit, to every process of the job or (B:) to its batch shell alone, once
# a run, across a restart of nvqd, from the command line or a #SBATCH line.
# Sourced by run.sh (helpers in lib.sh).

se_env_job() {	# FILE: a job that writes its array's variables to FILE.ID
	cat > "$T/env.sh" <<'EOF'
#!/bin/sh
echo "job=$SLURM_JOB_ID array=$SLURM_ARRAY_JOB_ID task=$SLURM_ARRAY_TASK_ID count=$SLURM_ARRAY_TASK_COUNT min=$SLURM_ARRAY_TASK_MIN max=$SLURM_ARRAY_TASK_MAX step=$SLURM_ARRAY_TASK_STEP cluster=$SLURM_CLUSTER_NAME" > "$1.$SLURM_ARRAY_TASK_ID"
EOF
	chmod +x "$T/env.sh"
}

t_slurmenv_array_shape() {	# --array 1-7:3 and --array 3,5,9: Slurm's variables in each task
	write_config; start_nvqd || return
	se_env_job
	local a b i k
	a=$(submit -g 0 --array 1-7:3 "$T/env.sh" "$T/a") || { fail "not submitted"; return; }
	b=$(submit -g 0 --array 3,5,9 "$T/env.sh" "$T/b") || { fail "not submitted"; return; }
	for i in 0 1 2; do
		wait_state "$((a + i))" COMPLETED || return
		wait_state "$((b + i))" COMPLETED || return
	done
	# the tasks of 1-7:3 are 1, 4, 7: ids a, a+1, a+2
	se_tasks "1-7:3" "$a" "$T/a" "1 4 7" "count=3 min=1 max=7 step=3"
	# a list: no stride, 1 as Slurm says
	se_tasks "3,5,9" "$b" "$T/b" "3 5 9" "count=3 min=3 max=9 step=1"
}

se_tasks() {	# SPEC ARRAY FILE INDEXES SHAPE: each task's line, in order of its id
	local k=0 i
	for i in $4; do
		expect_eq "$1, task $i" "$(cat "$3.$i")" \
		    "job=$(($2 + k)) array=$2 task=$i $5 cluster=$(hostname)"
		k=$((k + 1))
	done
}

t_slurmenv_array_restart() {	# the shape is the stored array's: a task started after a restart has it
	write_config "[cluster]" "name = lab-one"; start_nvqd || return
	se_env_job
	local a
	a=$(submit -g 0 --hold --array 0-10:5%1 "$T/env.sh" "$T/r") || { fail "not submitted"; return; }
	stop_nvqd
	start_nvqd || return
	nvq release "${a}_" > /dev/null || fail "nvq release ${a}_"
	wait_state "$((a + 2))" COMPLETED || return
	expect_eq "task 10, started after the restart" "$(cat "$T/r.10")" \
	    "job=$((a + 2)) array=$a task=10 count=3 min=0 max=10 step=5 cluster=lab-one"
	# no array: none of the array's variables
	a=$(submit -g 0 sh -c 'echo "count=${SLURM_ARRAY_TASK_COUNT-unset} cluster=$SLURM_CLUSTER_NAME" > "$0"' "$T/one")
	wait_state "$a" COMPLETED || return
	expect_eq "a job of no array, [cluster] name" "$(cat "$T/one")" "count=unset cluster=lab-one"
}

se_trap_job() {	# a job that writes when it gets USR1, and when it starts
	cat > "$T/trap.sh" <<'EOF'
#!/bin/bash
# $1: where; the batch shell and a child each note a USR1 (seconds since the epoch)
date +%s.%N > "$1.start"
sh -c 'trap "date +%s.%N >> $0.child" USR1; while :; do sleep 0.1; done' "$1" &
trap 'date +%s.%N >> "$1.shell"' USR1
while :; do wait; done
EOF
	chmod +x "$T/trap.sh"
}

se_lines() { [ -f "$1" ] && wc -l < "$1" || echo 0; }

t_slurmenv_warn() {	# --signal USR1@3 with --time 6: USR1 3 s before the limit, to all, then TIMEOUT
	write_config; start_nvqd || return
	se_trap_job
	local a at
	a=$(submit -g 0 -t 6s --signal USR1@3 "$T/trap.sh" "$T/w") || { fail "not submitted"; return; }
	expect_eq "stored" "$(sqlite3 "$T/nvq.db" "SELECT warn_signal, warn_time, warn_batch FROM jobs WHERE id = $a")" "10|3|0"
	wait_state "$a" TIMEOUT 15 || return
	expect_eq "the batch shell got USR1 once" "$(se_lines "$T/w.shell")" 1
	expect_eq "its child too" "$(se_lines "$T/w.child")" 1
	at=$(awk -v s="$(cat "$T/w.start")" '{ printf "%.0f", ($1 - s) * 10 }' "$T/w.shell")
	# 3 s after the start, in tenths: 2.5 s to 4 s (the start file is written a little late)
	expect_match "about 3 s before the 6 s limit (tenths after its start)" "$at" "^(2[5-9]|3[0-9]|40)$"
	expect_match "the log says so" "$(grep "before its time limit" "$T/nvqd.log")" \
	    "job $a: 3 s before its time limit, sending SIGUSR1"
}

t_slurmenv_warn_batch() {	# B:USR1@2: the batch shell alone, not its child
	write_config; start_nvqd || return
	se_trap_job
	local a
	a=$(submit -g 0 -t 4s --signal B:USR1@2 "$T/trap.sh" "$T/b") || { fail "not submitted"; return; }
	wait_state "$a" TIMEOUT 15 || return
	expect_eq "the batch shell got USR1" "$(se_lines "$T/b.shell")" 1
	expect_eq "its child did not" "$(se_lines "$T/b.child")" 0
}

t_slurmenv_warn_restart() {	# a restart of nvqd before the warning keeps it; one after does not repeat it
	write_config; start_nvqd || return
	se_trap_job
	local a
	a=$(submit -g 0 -t 8s --signal USR1@5 "$T/trap.sh" "$T/r") || { fail "not submitted"; return; }
	wait_state "$a" RUNNING || return
	sleep 1
	stop_nvqd
	start_nvqd || return
	# the warning at 3 s, from the restarted nvqd
	local i
	for i in $(seq 60); do [ -s "$T/r.shell" ] && break; sleep 0.1; done
	expect_eq "warned after the restart" "$(se_lines "$T/r.shell")" 1
	expect_match "recorded" "$(sqlite3 "$T/nvq.db" "SELECT warned_at IS NOT NULL FROM jobs WHERE id = $a")" 1
	stop_nvqd
	start_nvqd || return
	wait_state "$a" TIMEOUT 15 || return
	expect_eq "not warned again by the next nvqd" "$(se_lines "$T/r.shell")" 1
}

t_slurmenv_warn_sbatch() {	# #SBATCH --signal=B:USR1@2 in a script submitted unchanged; refusals
	write_config; start_nvqd || return
	mkdir -p "$T/wd"
	cat > "$T/wd/warn.sbatch" <<'EOF'
#!/bin/bash
#SBATCH --signal=B:USR1@2
#SBATCH --job-name=warned
#SBATCH --time=0:04
#SBATCH -G 0
#SBATCH -o warn.out
trap 'echo "USR1 at $SECONDS s"; exit 0' USR1
echo started
sleep 30 &
wait
EOF
	local a out rc
	a=$(cd "$T/wd" && nvq submit --parsable warn.sbatch) || { fail "not submitted"; return; }
	wait_state "$a" COMPLETED 15 || return
	expect_match "the script's trap ran 2 s before its 4 s limit" "$(cat "$T/wd/warn.out")" \
	    $'^started\nUSR1 at [12] s$'
	# a bare SIG on a #SBATCH line is Slurm's warning, 60 s before: the job needs a limit
	printf '#!/bin/sh\n#SBATCH --signal=USR2\n#SBATCH --time=5\ntrue\n' > "$T/wd/bare.sbatch"
	a=$(cd "$T/wd" && nvq submit --parsable -g 0 bare.sbatch) || { fail "bare: not submitted"; return; }
	expect_eq "#SBATCH --signal=USR2: Slurm's 60 s" \
	    "$(sqlite3 "$T/nvq.db" "SELECT warn_signal, warn_time, ifnull(preempt_signal, 'none') FROM jobs WHERE id = $a")" "12|60|none"
	# and on the command line a bare SIG keeps nvq's meaning
	a=$(submit -g 0 --hold --signal USR2 true)
	expect_eq "--signal USR2: nvq's preemption signal" \
	    "$(sqlite3 "$T/nvq.db" "SELECT ifnull(warn_signal, 'none'), preempt_signal FROM jobs WHERE id = $a")" "none|12"
	local n
	n=$(sqlite3 "$T/nvq.db" "SELECT count(*) FROM jobs")
	out=$(nvq submit -g 0 -t 10s --signal R:USR1@5 true 2>&1); rc=$?
	expect_eq "R: refused" "$rc:$out" "2:nvq: --signal R:USR1@5: R: lets a job overlap a reservation; nvq has no reservations (leave R: out)"
	out=$(nvq submit -g 0 --signal USR1@5 true 2>&1); rc=$?
	expect_eq "no time limit: refused" "$rc:$out" "2:nvq: --signal USR1@5: the job has no time limit (-t, --time) to be warned before"
	printf '#!/bin/sh\n#SBATCH --signal=USR1@99999\ntrue\n' > "$T/wd/bad.sbatch"
	out=$(cd "$T/wd" && nvq submit -g 0 bad.sbatch 2>&1); rc=$?
	expect_eq "a bad TIME on a #SBATCH line" "$rc:$out" "2:nvq: bad.sbatch, line 2: --signal USR1@99999: @99999: not a number of seconds before the time limit (0 to 65535)"
	expect_eq "nothing stored" "$(sqlite3 "$T/nvq.db" "SELECT count(*) FROM jobs")" "$n"
}

t_slurmenv_slurm_passes() {	# engine = slurm: -p/--partition, -A/--account and --signal go on to sbatch
	mkdir -p "$T/bin"
	# a fake Slurm: sbatch says what it was given, squeue knows nothing yet
	cat > "$T/bin/sbatch" <<EOF2
#!/bin/sh
printf '%s\n' "\$@" > "$T/sbatch.\$\$"
mv "$T/sbatch.\$\$" "$T/sbatch.args.\$(ls "$T" | grep -c '^sbatch\.args')"
echo 4242
EOF2
	printf '#!/bin/sh\nexit 0\n' > "$T/bin/squeue"
	cp "$T/bin/squeue" "$T/bin/scontrol"
	cp "$T/bin/squeue" "$T/bin/scancel"
	chmod +x "$T/bin/"*
	write_config "[cluster]" "engine = slurm" "slurm_bin = $T/bin" "partition = batch"
	start_nvqd || return
	mkdir -p "$T/wd"
	cat > "$T/wd/pass.sbatch" <<'EOF2'
#!/bin/sh
#SBATCH -p gpu
#SBATCH -A acme
#SBATCH --signal=B:USR1@30
#SBATCH --time=5
#SBATCH -G 0
true
EOF2
	local a i
	a=$(cd "$T/wd" && nvq submit --parsable -o "$T/wd/o" pass.sbatch) || { fail "not submitted"; return; }
	for i in $(seq 100); do [ -f "$T/sbatch.args.0" ] && break; sleep 0.05; done
	expect_match "#SBATCH -p gpu -A acme --signal=B:USR1@30: sbatch's arguments" \
	    "$(tr '\n' ' ' < "$T/sbatch.args.0")" "--time=0:05:00 --partition=gpu --account=acme --signal=B:10@30 $"
	expect_eq "stored" "$(sqlite3 "$T/nvq.db" "SELECT partition, account FROM jobs WHERE id = $a")" "gpu|acme"
	# without them, [cluster] partition and no account; the command line over #SBATCH
	a=$(submit -g 0 -o "$T/wd/o2" true) || { fail "not submitted"; return; }
	for i in $(seq 100); do [ -f "$T/sbatch.args.1" ] && break; sleep 0.05; done
	expect_match "none given: [cluster] partition" "$(tr '\n' ' ' < "$T/sbatch.args.1")" "--partition=batch $"
	a=$(cd "$T/wd" && nvq submit --parsable --partition debug --account=other -o "$T/wd/o3" pass.sbatch)
	for i in $(seq 100); do [ -f "$T/sbatch.args.2" ] && break; sleep 0.05; done
	expect_match "the command line wins" "$(tr '\n' ' ' < "$T/sbatch.args.2")" "--partition=debug --account=other "
	local out rc
	out=$(nvq submit -g 0 --partition 'a b' true 2>&1); rc=$?
	expect_eq "a partition that is not a name" "$rc:$out" "2:nvq: --partition a b: not a name (1 to 64 letters, digits, _ . , -)"
}

t_slurmenv_warn_suspended() {	# a job suspended past its warning's moment is warned after its resume, on running time
	[ -x "$FAKE_JOB" ] || { fail "build tests/fake_job first"; return; }
	ckpt_config "[scheduler]" "kill_grace = 1s"
	start_nvqd || return
	local a el
	# WINCH: a signal the fake job ignores, so that only nvqd's record tells when it came
	a=$(fsubmit -m 10G -t 4s --signal WINCH@2 "$FAKE_JOB" launch 60 "$T/a")
	wait_count "$T/a" || return
	wait_field "$a" hook_pids '^[0-9]+$'
	nvq suspend "$a" > /dev/null
	sleep 3
	expect_eq "not warned while suspended past its moment" \
	    "$(sqlite3 "$T/nvq.db" "SELECT warned_at IS NULL FROM jobs WHERE id = $a")" 1
	nvq resume "$a" > /dev/null
	wait_state "$a" RUNNING
	wait_state "$a" TIMEOUT 10 || return
	el=$(sqlite3 "$T/nvq.db" "SELECT warned_at - started_at - run_suspended FROM jobs WHERE id = $a")
	expect_eq "warned after about 2 s of running ($el)" \
	    "$(awk -v x="$el" 'BEGIN { print (x >= 1.5 && x < 3.5) }')" 1
}
