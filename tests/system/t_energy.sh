# t_energy.sh: each run's energy per GPU (issue 44), from the fake NVML's
# energy counter and per-process utilisation, which the tests drive through
# the files FAKE_NVML_ENERGY ("INDEX MILLIJOULES") and FAKE_NVML_UTIL
# ("INDEX PID PERCENT"): a job alone gets the GPU's whole delta, two jobs
# on one GPU split it by their utilisation, no counter is unknown (NULL,
# never 0), and a restart of nvqd mid-job keeps what was counted.  Sourced
# by run.sh (helpers in lib.sh).

energy_config() {	# [GPUS]: fake NVML GPUs with a counter, polled every second
	write_config "[gpus]" "nvml_library = $HELPERS/libfake-nvml.so.1" "poll = 1s"
	export FAKE_NVML_GPUS=${1:-1x16G} FAKE_NVML_PROCS=$T/procs
	export FAKE_NVML_ENERGY=$T/energy FAKE_NVML_UTIL=$T/util
	: > "$T/procs"
	: > "$T/util"
}

energy_unset() { unset FAKE_NVML_GPUS FAKE_NVML_PROCS FAKE_NVML_ENERGY FAKE_NVML_UTIL; }

run_energy() {	# ID: its last run's energy rows, "UUID-TAIL ENERGY HOW" per GPU
	sqlite3 "$T/nvq.db" "SELECT substr(e.gpu_uuid, -1) || ' ' || coalesce(e.energy, 'NULL') ||
	    ' ' || e.how FROM run_energy e JOIN runs r ON r.id = e.run_id WHERE r.job_id = $1
	    ORDER BY e.gpu_uuid"
}

t_energy_alone() {	# a job alone on its GPU: the counter's whole delta while it ran
	energy_config 2x16G
	printf '0 5000000\n1 1000000\n' > "$T/energy"
	start_nvqd || return
	local a
	a=$(submit -g 1 sh -c "while [ ! -e $T/go ]; do sleep 0.05; done")
	wait_state "$a" RUNNING
	local g; g=$(field "$a" gpu_uuids); g=${g: -1}
	sleep 1.2
	# while it runs: 3600 J on its GPU, 7000 J on the other, which no job holds
	if [ "$g" = 0 ]; then printf '0 8600000\n1 8000000\n'; else printf '0 12000000\n1 4600000\n'; fi > "$T/energy"
	sleep 1.5
	expect_eq "saved while it runs (a poll's write)" "$(run_energy "$a")" "$g 3600.0 alone"
	# 3600 J more just before it ends: read at its end, not left to a poll
	if [ "$g" = 0 ]; then printf '0 12200000\n1 8000000\n'; else printf '0 12000000\n1 8200000\n'; fi > "$T/energy"
	touch "$T/go"
	wait_state "$a" COMPLETED
	expect_eq "its GPU's whole delta, alone" "$(run_energy "$a")" "$g 7200.0 alone"
	expect_eq "the run's total" "$(sqlite3 "$T/nvq.db" "SELECT energy || ' ' || energy_how
	    FROM runs WHERE job_id = $a")" "7200.0 alone"
	expect_match "nvq show: the run's energy in Wh, and how" "$(nvq show "$a" | grep '^run ')" \
	    " energy=2.00 Wh energy_how=alone gpu_energy=GPU-fa4e0000-0000-0000-0000-00000000000$g 2.00 Wh alone$"
	expect_match "nvq show --json: joules" "$(nvq show --json "$a")" '"energy": *"7200.000"'
	stop_nvqd
	energy_unset
}

t_energy_shared() {	# two jobs on one GPU: parts by utilisation that add up to the delta
	energy_config 1x16G
	echo "0 0" > "$T/energy"
	start_nvqd || return
	local a b pa pb
	a=$(submit -m 4G sh -c 'sleep 3301 & wait')
	b=$(submit -m 4G sh -c 'sleep 3302 & wait')
	wait_state "$a" RUNNING
	wait_state "$b" RUNNING
	sleep 0.3
	pa=$(below "$(shim_pid "$a")" '^sleep 3301$'); pb=$(below "$(shim_pid "$b")" '^sleep 3302$')
	# NVML sees A's process at 75% of the SMs, B's at 25%
	printf '0 %s 75\n0 %s 25\n' "$pa" "$pb" > "$T/util"
	sleep 1.2
	echo "0 1000000" > "$T/energy"	# 1000 J while both ran
	sleep 1.5
	nvq cancel "$a" "$b" > /dev/null
	wait_state "$a" CANCELLED
	wait_state "$b" CANCELLED
	expect_eq "A: 3/4 of the delta, shared" "$(run_energy "$a")" "0 750.0 shared"
	expect_eq "B: 1/4 of it, shared" "$(run_energy "$b")" "0 250.0 shared"
	expect_eq "their parts add up to the GPU's delta" "$(sqlite3 "$T/nvq.db" "SELECT sum(energy)
	    FROM runs WHERE job_id IN ($a, $b)")" "1000.0"
	expect_match "nvq show says how" "$(nvq show "$b" | grep '^run ')" \
	    " energy=250 J energy_how=shared "
	stop_nvqd
	energy_unset
}

t_energy_unknown() {	# no counter (older boards, virtual GPUs): unknown, NULL, never 0
	energy_config 1x16G
	rm -f "$T/energy"	# the fake's counter: not supported
	start_nvqd || return
	local a; a=$(submit -g 1 true)
	wait_state "$a" COMPLETED
	expect_eq "stored as NULL, unknown" "$(run_energy "$a")" "0 NULL unknown"
	expect_eq "the run's total is NULL too" "$(sqlite3 "$T/nvq.db" "SELECT coalesce(energy,
	    'NULL') || ' ' || energy_how FROM runs WHERE job_id = $a")" "NULL unknown"
	expect_match "nvq show: unknown" "$(nvq show "$a" | grep '^run ')" \
	    " energy=unknown energy_how=unknown "
	stop_nvqd
	energy_unset
	# virtual GPUs have no counter either
	write_config
	start_nvqd || return
	a=$(submit -g 1 true)
	wait_state "$a" COMPLETED
	expect_eq "virtual GPUs: unknown" "$(run_energy "$a")" "0 NULL unknown"
	stop_nvqd
}

t_energy_restart() {	# nvqd killed mid-job and started again: the energy goes on from there
	energy_config 1x16G
	echo "0 1000000" > "$T/energy"
	start_nvqd || return
	local a; a=$(submit -g 1 sh -c "while [ ! -e $T/go ]; do sleep 0.05; done")
	wait_state "$a" RUNNING
	sleep 1.2
	echo "0 2000000" > "$T/energy"	# 1000 J with nvqd there
	sleep 1.5
	kill -9 "$NVQD_PID"; wait "$NVQD_PID" 2> /dev/null; NVQD_PID=""
	echo "0 3000000" > "$T/energy"	# 1000 J while nvqd was away
	start_nvqd || return
	wait_state "$a" RUNNING
	sleep 1.2
	echo "0 3500000" > "$T/energy"	# 500 J with the new nvqd
	sleep 1.2
	touch "$T/go"
	wait_state "$a" COMPLETED
	expect_eq "all of it, before, during and after the restart" "$(run_energy "$a")" \
	    "0 2500.0 alone"
	stop_nvqd
	energy_unset
}

t_energy_suspended_restart() {	# a job suspended across a restart of nvqd gets none of what the GPU used meanwhile
	[ -x "$FAKE_JOB" ] || { fail "build tests/fake_job first"; return; }
	energy_config 1x80G
	export FAKE_CKPT_DIR=$T/ckpt
	mkdir -p "$FAKE_CKPT_DIR"
	write_config "[gpus]" "nvml_library = $HELPERS/libfake-nvml.so.1" \
	    "cuda_library = $FAKE_LIB/libcuda.so.1" "poll = 1s"
	echo "0 1000000" > "$T/energy"
	start_nvqd || return
	local a b
	a=$(fsubmit -m 10G "$FAKE_JOB" launch 120 "$T/a")
	wait_count "$T/a" || return
	b=$(fsubmit -m 10G "$FAKE_JOB" launch 120 "$T/b")
	wait_count "$T/b" || return
	wait_field "$b" hook_pids '^[0-9]+$' || return
	expect_eq "suspend B" "$(nvq suspend "$b" 2>&1)" "job $b suspended"
	sleep 1.5
	echo "0 2000000" > "$T/energy"	# 1000 J while A runs alone, B suspended, nvqd there
	sleep 2.2
	kill -9 "$NVQD_PID"; wait "$NVQD_PID" 2> /dev/null; NVQD_PID=""
	echo "0 3000000" > "$T/energy"	# 1000 J more while nvqd was away, B still suspended
	start_nvqd || return
	expect_eq "B still suspended" "$(state "$b")" SUSPENDED
	sleep 1.5
	nvq cancel "$a" "$b" > /dev/null
	wait_state "$a" CANCELLED 40
	wait_state "$b" CANCELLED 40
	expect_eq "A ran alone all along: all 2000 J" "$(run_energy "$a")" "0 2000.0 alone"
	expect_eq "B was suspended all along: none" "$(run_energy "$b")" "0 0.0 alone"
	stop_nvqd
	energy_unset
	unset FAKE_CKPT_DIR
}

t_energy_stats() {	# nvq stats: energy per user and per job name beside GPU-hours, unknown where any part is
	energy_config 2x16G
	echo "0 1000000" > "$T/energy"	# GPU 1 has no counter
	start_nvqd || return
	local a b
	a=$(submit -n train -w GPU-fa4e0000-0000-0000-0000-000000000000 sh -c \
	    "while [ ! -e $T/go ]; do sleep 0.05; done")
	wait_state "$a" RUNNING
	sleep 1.2
	echo "0 8200000" > "$T/energy"	# 7200 J: 2 Wh
	sleep 1.2
	touch "$T/go"
	wait_state "$a" COMPLETED
	local out; out=$(nvq stats)
	expect_match "per user: all known, 2 Wh beside the GPU-hours" "$(echo "$out" | grep '^root ')" \
	    "^root +1 +1 +[0-9.]+ +2.00 Wh "
	expect_match "per job name" "$(echo "$out" | grep '^root  *train ')" " +1 +[0-9.]+ +2.00 Wh$"
	b=$(submit -n nocount -w GPU-fa4e0000-0000-0000-0000-000000000001 true)
	wait_state "$b" COMPLETED
	out=$(nvq stats)
	expect_match "per user: one run unknown makes the sum unknown" "$(echo "$out" | grep '^root ')" \
	    "^root +2 +2 +[0-9.]+ +unknown "
	expect_match "per job name: the known one stays known" "$(echo "$out" | grep '^root  *train ')" \
	    " 2.00 Wh$"
	expect_match "per job name: the other unknown" "$(echo "$out" | grep '^root  *nocount ')" " unknown$"
	out=$(nvq stats --json)
	expect_match "JSON: the known part, how many unknown, no kWh" "$out" \
	    '"energy": *7200(\.0+)?, *"gpu_runs": *2, *"energy_unknown": *1, *"kwh": *"unknown"'
	expect_match "JSON: per name, kWh where known" "$out" '"name": *"train".*"kwh": *0\.002'
	stop_nvqd
	energy_unset
}
