# t_sbatch.sh: sbatch scripts submitted unchanged (tests/system/sbatch/):
# their #SBATCH lines' resources, outputs and environment, srun inside a
# job, Slurm's names on nvq's command line, and what is refused (one line,
# exit 2, nothing stored).  t_sbatch_resources and t_sbatch_deps need the
# CPU, host memory and --dependency options of issue 42's other parts.
# Sourced by run.sh (helpers in lib.sh).

SB=$ROOT/tests/system/sbatch

sb_wd() {	# a working folder with the scripts, their logs/ and work/
	mkdir -p "$T/wd/logs" "$T/wd/work"
	cp "$SB"/*.sbatch "$T/wd/"
}

sb_submit() {	# SCRIPT [OPTIONS...]: nvq submit, from the working folder, unchanged
	local s=$1
	shift
	(cd "$T/wd" && PATH=$SB/bin:$PATH nvq submit --parsable "$@" "$s")
}

jobs_count() { sqlite3 "$T/nvq.db" "SELECT count(*) FROM jobs"; }

t_sbatch_train() {	# one-GPU training: name, GPU, time, %j output, Slurm's variables
	write_config; start_nvqd || return
	sb_wd
	local a out host
	a=$(sb_submit train_1gpu.sbatch)
	wait_state "$a" COMPLETED || return
	expect_eq "--job-name" "$(field "$a" name)" "train"
	expect_eq "--gres=gpu:1" "$(field "$a" gpus)" 1
	expect_eq "--time=01:30:00" "$(field "$a" time_limit)" 5400
	expect_eq "--output=%j.out, where it was submitted" "$(field "$a" stdout_path)" "$T/wd/$a.out"
	out=$(cat "$T/wd/$a.out")
	host=$(hostname)
	expect_match "SLURM_JOB_ID, SLURM_JOB_NAME" "$out" "job=$a jobid=$a name=train"
	expect_match "SLURM_GPUS_ON_NODE, SLURM_JOB_GPUS" "$out" "gpus=1 jobgpus=[01] cvd=set"
	expect_match "one node, one task" "$out" "nnodes=1/1 ntasks=1 nodelist=$host"
	expect_match "the node, the submitter" "$out" \
	    "node=$host host=$host user=$(id -un) uid=$(id -u)"
	expect_match "SLURM_SUBMIT_DIR" "$out" "submit_dir=$T/wd pwd=$T/wd"
	expect_match "no array" "$out" "array=none"
	expect_match "stderr with stdout (no --error)" "$out" "stderr line"
}

t_sbatch_array() {	# a sweep array: %A_%a outputs, %N at once, the task's variables
	write_config; start_nvqd || return
	sb_wd
	local a i
	a=$(sb_submit sweep_array.sbatch)
	for i in 0 1 2 3; do wait_state "$((a + i))" COMPLETED || return; done
	expect_eq "the array's tasks" "$(sqlite3 "$T/nvq.db" "SELECT count(*) FROM jobs")" 4
	expect_eq "task 2's log" "$(cat "$T/wd/logs/${a}_2.out")" \
	    "task 2 of $a job $((a + 2)) lr=0.001"
	expect_eq "task 0's log" "$(cat "$T/wd/logs/${a}_0.out")" "task 0 of $a job $a lr=0.1"
	expect_eq "--error=%A_%a.err" "$(field "$((a + 3))" stderr_path)" "$T/wd/logs/${a}_3.err"
	expect_eq "the array's name" "$(field "$((a + 3))" name)" "sweep"
	expect_eq "%2 at once" "$(sqlite3 "$T/nvq.db" "SELECT array_limit FROM jobs WHERE id = $a")" 2
}

t_sbatch_srun() {	# srun inside a job: torchrun once, three labelled tasks, exit statuses
	write_config; start_nvqd || return
	sb_wd
	local a b out
	a=$(sb_submit torchrun_srun.sbatch)
	wait_state "$a" COMPLETED || return
	expect_eq "--gpus-per-node=2" "$(field "$a" gpus)" 2
	expect_eq "torchrun ran once, as one task, with both GPUs" "$(cat "$T/wd/ddp-$a.out")" \
	    "torchrun --nproc_per_node=2 train.py --epochs 1 procid=0 ntasks=1 step_tasks=1 nodeid=0 master=set gpus=2
srun exit 0"
	b=$(sb_submit multitask_label.sbatch)
	wait_state "$b" COMPLETED || return
	out=$(cat "$T/wd/tasks.out")
	expect_eq "-l: three tasks, labelled" "$(grep '^[0-9]: rank' <<< "$out" | sort)" \
	    "0: rank 0 of 3 local 0
1: rank 1 of 3 local 1
2: rank 2 of 3 local 2"
	expect_match "the highest exit status of srun's tasks" "$out" "srun exit 4"
	expect_match "--nodes=2 refused in one line" "$out" \
	    "srun: --nodes 2: this is one server: a step runs on one node"$'\n'"srun --nodes=2 exit 2"
	# a signal's status, and a signal passed on to the tasks
	out=$(cd "$T/wd" && PATH=$ROOT/$BUILD/bin:$PATH srun -n 2 sh -c 'kill -9 $$'; echo "rc=$?")
	expect_eq "a task killed by SIGKILL" "$out" "rc=137"
	out=$(cd "$T/wd" && { PATH=$ROOT/$BUILD/bin:$PATH srun -n 2 sh -c \
	    'trap "echo term \$SLURM_PROCID; exit 5" TERM; sleep 30 & wait' & sleep 0.5;
	    kill -TERM $!; wait $!; echo "rc=$?"; })
	expect_eq "SIGTERM reaches every task" "$(grep term <<< "$out" | sort)" "term 0
term 1"
	expect_match "srun's status after it" "$out" "rc=5"
	out=$(PATH=$ROOT/$BUILD/bin:$PATH srun --partition gpu true 2>&1; echo "rc=$?")
	expect_eq "srun -p refused" "$out" "srun: --partition: this is one server: partitions are Slurm's
rc=2"
}

t_sbatch_env() {	# --export=NONE and ALL,VAR=V; --chdir with %x-%j; #SBATCH, #NVQ, command line
	write_config; start_nvqd || return
	sb_wd
	local a b c d e
	a=$(FOO=bar SLURM_X=kept sb_submit export_none.sbatch)
	b=$(FOO=bar sb_submit export_vars.sbatch)
	c=$(sb_submit chdir_output.sbatch)
	d=$(sb_submit both_directives.sbatch)
	e=$(sb_submit both_directives.sbatch -n from-cli)
	for i in "$a" "$b" "$c" "$d" "$e"; do wait_state "$i" COMPLETED || return; done
	expect_eq "--export=NONE: SLURM_* only" "$(cat "$T/wd/none.out")" \
	    "FOO=unset SLURM_X=kept job=set home=unset"
	expect_eq "--export=ALL,LR=0.5" "$(cat "$T/wd/vars.out")" "FOO=bar LR=0.5"
	expect_eq "--chdir, --output=%x-%j.out there" "$(cat "$T/wd/work/chd-$c.out")" \
	    "pwd=$T/wd/work submit_dir=$T/wd"
	expect_eq "#NVQ over #SBATCH" "$(field "$d" name)" "from-nvq"
	expect_eq "the command line over both" "$(field "$e" name)" "from-cli"
	expect_eq "#SBATCH -t 5 (minutes)" "$(field "$d" time_limit)" 300
	expect_eq "%u in the output" "$(cat "$T/wd/both-$(id -un)-$d.out")" "name=from-nvq"
}

t_sbatch_timeout() {	# --time in Slurm's MM:SS ends the job as TIMEOUT
	write_config; start_nvqd || return
	sb_wd
	local a
	a=$(sb_submit timeout.sbatch)
	expect_eq "--time=0:02" "$(field "$a" time_limit)" 2
	wait_state "$a" TIMEOUT 20 || return
	expect_eq "its output up to the limit" "$(cat "$T/wd/timeout.out")" "started"
}

t_sbatch_other() {	# --requeue, --nice, --mail-type, --exclusive (accepted); a script's default name
	printf '#!/bin/sh\ncat > /dev/null\n' > "$T/sendmail"
	chmod 755 "$T/sendmail"
	write_config "[daemon]" "sendmail = $T/sendmail"
	start_nvqd || return
	sb_wd
	local a b
	a=$(sb_submit requeue_nice_mail.sbatch)
	expect_eq "--nice=10: priority -10" "$(field "$a" priority)" -10
	expect_eq "--requeue" "$(sqlite3 "$T/nvq.db" "SELECT requeue FROM jobs WHERE id = $a")" 1
	expect_eq "--mail-user" "$(sqlite3 "$T/nvq.db" "SELECT mail_user FROM jobs WHERE id = $a")" \
	    "someone@example.org"
	expect_eq "the job is named after its script" "$(field "$a" name)" "requeue_nice_mail.sbatch"
	b=$(cd "$T/wd" && nvq submit --parsable -g 0 --mail-type NONE --mail-user x@example.org true)
	expect_eq "--mail-type NONE: no mail" \
	    "$(sqlite3 "$T/nvq.db" "SELECT ifnull(mail_user, 'none') FROM jobs WHERE id = $b")" none
}

t_sbatch_refused() {	# what one server cannot honour: one line, exit 2, nothing stored
	write_config; start_nvqd || return
	sb_wd
	local s out rc want
	for s in refuse_nodes refuse_partition refuse_account refuse_unknown; do
		out=$(sb_submit "$s.sbatch" 2>&1); rc=$?
		# partitions and accounts: nvqd's to refuse (under engine = slurm it passes them on)
		case $s in refuse_partition|refuse_account) expect_eq "$s: exit" "$rc" 1 ;;
		*) expect_eq "$s: exit" "$rc" 2 ;;
		esac
		expect_eq "$s: one line" "$(wc -l <<< "$out")" 1
		case $s in
		refuse_nodes) want="$s.sbatch, line 3: --nodes 2: this is one server: a job runs on one node" ;;
		refuse_partition) want="--partition gpu: this is one server: partitions are Slurm's" ;;
		refuse_account) want="--account proj123: this is one server: accounts are Slurm's" ;;
		refuse_unknown) want="$s.sbatch, line 3: unknown sbatch option --frobnicate" ;;
		esac
		expect_match "$s: why" "$out" "^nvq: $want"
	done
	expect_eq "nothing stored" "$(jobs_count)" 0
	# Slurm's habits on the command line
	out=$(nvq submit -p gpu true 2>&1); rc=$?
	expect_eq "-p gpu: exit" "$rc" 2
	expect_eq "-p gpu" "$out" "nvq: -p gpu: not a priority (a whole number, higher runs first); -p is nvq's priority: partitions are Slurm's (this is one server)"
	out=$(nvq submit --partition=gpu true 2>&1); rc=$?
	expect_eq "--partition on the command line" "$rc:$out" "1:nvq: --partition gpu: this is one server: partitions are Slurm's (under nvqd's [cluster] engine = slurm, --partition or [cluster] partition picks it); nothing was queued"
	out=$(nvq submit -N 2 true 2>&1); rc=$?
	expect_eq "-N 2" "$rc:$out" "2:nvq: --nodes 2: this is one server: a job runs on one node (-N 1)"
	out=$(nvq submit --mail-type=BEGIN true 2>&1); rc=$?
	expect_eq "--mail-type BEGIN" "$rc:$out" "2:nvq: --mail-type BEGIN: nvq mails only at a job's end"
	out=$(nvq submit --gres=mps:10 true 2>&1); rc=$?
	expect_eq "--gres mps" "$rc" 2
	out=$(nvq submit --gpus-per-task 1 --ntasks 2 true 2>&1); rc=$?
	expect_match "--gpus-per-task with 2 tasks" "$rc:$out" "^2:nvq: --gpus-per-task with --ntasks 2"
	out=$(nvq submit -D /nonexistent true 2>&1); rc=$?
	expect_eq "-D to nowhere" "$rc:$out" "2:nvq: -D /nonexistent: not a directory you can reach"
	expect_eq "still nothing stored" "$(jobs_count)" 0
	# and what it takes: Slurm's names for GPUs and the name
	local a b
	a=$(submit --gpus a100:2 -J named true)
	b=$(submit -G 0 --job-name other true)
	expect_eq "--gpus TYPE:N" "$(field "$a" gpus)" 2
	expect_eq "-J" "$(field "$a" name)" named
	expect_eq "-G 0" "$(field "$b" gpus)" 0
}

t_sbatch_resources() {	# CPUs and host memory from #SBATCH (needs issue 42's -c and --mem)
	write_config; start_nvqd || return
	sb_wd
	local a
	a=$(sb_submit preprocess_cpu.sbatch) || { fail "not submitted"; return; }
	wait_state "$a" COMPLETED || return
	expect_eq "--gres=none" "$(field "$a" gpus)" 0
	expect_eq "--time=10" "$(field "$a" time_limit)" 600
	expect_eq "SLURM_CPUS_PER_TASK, SLURM_MEM_PER_NODE" "$(cat "$T/wd/prep.out")" \
	    "cpus=4 mem=8192 gpus=0"
}

t_sbatch_deps() {	# a chain with --dependency=afterany (needs issue 42's --dependency)
	write_config; start_nvqd || return
	sb_wd
	local a b
	a=$(sb_submit chain_step1.sbatch) || { fail "not submitted"; return; }
	b=$(sb_submit chain_step2.sbatch --dependency=afterany:"$a") || { fail "not submitted"; return; }
	wait_state "$a" FAILED || return
	wait_state "$b" COMPLETED || return
	expect_eq "step2 ran after step1 failed" "$(cat "$T/wd/step2.out")" "step2 ran after step1 ran"
}

# the longest: started first when tests run at once (run.sh -j)
SLOW+=(t_sbatch_srun)
