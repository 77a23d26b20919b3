# t_resources.sh: CPUs and host memory as resources (issue 42): -c and
# --mem admitted against [resources] cpus and memory, the defaults a job
# gets, the variables it sees, its cgroup's limits, and a job over its
# --mem killed by its cgroup (FAILED, with the reason) while another runs on.

# res_running: how many jobs are RUNNING now
res_running() {
	sqlite3 "$T/nvq.db" "SELECT count(*) FROM jobs WHERE state = 'RUNNING'"
}

t_resources_cpus() {	# no more running -c than [resources] cpus; the rest say why
	write_config "[resources]" "cpus = 2"
	start_nvqd || return
	local a b c d big i
	a=$(submit -g 0 -c 1 sleep 30); b=$(submit -g 0 sleep 30)
	wait_state "$a" RUNNING; wait_state "$b" RUNNING
	c=$(submit -g 0 -c 1 sleep 30); d=$(submit -g 0 -c 2 sleep 30)
	sleep 0.5
	expect_eq "the third waits" "$(state "$c")" PENDING
	expect_eq "and says why" "$(field "$c" wait)" "waiting for 1 CPU: 2 of 2 in use"
	expect_eq "two run" "$(res_running)" 2
	expect_match "nvq gpus has the host's line" "$(nvq gpus)" "host: 2 of 2 CPUs, 0B of "
	expect_match "nvq list has a CPUS column" "$(nvq list | head -1)" "MEM +CPUS +ELAPSED"
	expect_match "with the job's" "$(nvq list | awk -v id="$c" '$1 == id')" " 1 +- +waiting"
	expect_eq "a -g 0 job takes 1 CPU unless told" \
	    "$(sqlite3 "$T/nvq.db" "SELECT cpus FROM jobs WHERE id = $b")" 1
	nvq cancel "$a"
	wait_state "$c" RUNNING
	expect_eq "-c 2 waits for its two" "$(state "$d")" PENDING
	expect_eq "and says so" "$(field "$d" wait)" "waiting for 2 CPUs: 2 of 2 in use"
	big=$(nvq submit -g 0 -c 3 true 2>&1); i=$?
	expect_eq "more CPUs than the machine gives: refused" "$i" 1
	expect_eq "with the reason" "$big" "nvq: this job could never run: it asks for 3 CPUs \
and this server gives jobs 2 ([resources] cpus)"
	nvq cancel "$b" "$c" "$d" > /dev/null
}

t_resources_sweep() {	# a --stdin sweep never starts more than the CPUs at once
	write_config "[resources]" "cpus = 2"
	start_nvqd || return
	local i max=0 n
	for i in $(seq 1 30); do echo "sleep 0.3"; done | nvq submit -g 0 --stdin > /dev/null
	for i in $(seq 1 100); do
		n=$(res_running)
		[ "$n" -gt "$max" ] && max=$n
		[ "$(sqlite3 "$T/nvq.db" "SELECT count(*) FROM jobs WHERE state IN \
		    ('PENDING', 'RUNNING')")" = 0 ] && break
		sleep 0.1
	done
	expect_eq "at most 2 at once" "$max" 2
	expect_eq "all of them ran" "$(sqlite3 "$T/nvq.db" \
	    "SELECT count(*) FROM jobs WHERE state = 'COMPLETED'")" 30
}

t_resources_env() {	# what a job asked, in its environment (Slurm's names, MiB) and the database
	write_config "[resources]" "cpus = 8"
	start_nvqd || return
	local a b g
	a=$(submit -g 0 -c 3 --mem 1G sh -c 'echo $NVQ_CPUS $SLURM_CPUS_PER_TASK $SLURM_MEM_PER_NODE')
	b=$(submit -g 0 -c 2 --mem-per-cpu 100M sh -c 'echo $SLURM_MEM_PER_CPU ${SLURM_MEM_PER_NODE:-none}')
	# 2 GPUs: a job of one takes 8 / 2 CPUs unless told
	g=$(submit -g 1 sh -c 'echo $NVQ_CPUS ${SLURM_MEM_PER_NODE:-none}')
	wait_state "$a" COMPLETED; wait_state "$b" COMPLETED; wait_state "$g" COMPLETED
	expect_eq "-c 3 --mem 1G" "$(nvq log "$a")" "3 3 1024"
	expect_eq "--mem-per-cpu 100M" "$(nvq log "$b")" "100 none"
	expect_eq "a GPU job's share of the CPUs" "$(nvq log "$g")" "4 none"
	expect_eq "stored" "$(sqlite3 "$T/nvq.db" "SELECT id, cpus, host_mem, mem_per_cpu FROM jobs \
	    ORDER BY id" | tr '\n' ' ')" "$a|3|1073741824| $b|2|209715200|104857600 $g|4|0| "
	expect_eq "shown" "$(nvq show "$b" | grep -E '^(cpus|host_mem|mem_per_cpu) ' | tr -s ' ' | \
	    tr '\n' ' ')" "cpus 2 host_mem 200M mem_per_cpu 100M "
	expect_eq "as JSON numbers" "$(nvq show --json "$a" | grep -o '"host_mem": *[0-9]*' | head -1)" \
	    '"host_mem":1073741824'
	expect_eq "in list --format" "$(nvq list -a --format id,cpus,host_mem | sed -n 2p | tr -s ' ')" \
	    "$a 3 1G"
}

t_resources_cli() {	# Slurm's spellings: --mem is host memory, -m/--gpu-mem GPU memory
	write_config
	start_nvqd || return
	local out rc a
	out=$(nvq submit --mem 0 true 2>&1); rc=$?
	expect_eq "--mem 0 refused" "$rc" 2
	expect_match "saying why" "$out" "0, Slurm's whole node, is not taken here"
	out=$(nvq submit -c x true 2>&1); rc=$?
	expect_eq "-c x refused" "$rc" 2
	expect_match "-c's message" "$out" "not a number of CPUs"
	out=$(nvq submit --mem 1G --mem-per-cpu 1G true 2>&1); rc=$?
	expect_eq "--mem with --mem-per-cpu refused" "$rc" 2
	a=$(submit --gpu-mem 2G --mem 512 true)
	expect_eq "--gpu-mem is GPU memory, --mem host memory in MiB" "$(sqlite3 "$T/nvq.db" \
	    "SELECT mem_per_gpu, host_mem FROM jobs WHERE id = $a")" "2147483648|536870912"
	out=$(nvq submit --mem 9999T true 2>&1); rc=$?
	expect_eq "more host memory than the machine: refused" "$rc" 1
	expect_match "with the reason" "$out" "of host memory and this server gives jobs"
}

# res_cgroups: whether jobs here get cgroups with a memory and a cpu controller
res_cgroups() {
	[ "$(id -u)" = 0 ] && grep -q "host memory limits (--mem) in" "$T/nvqd.log"
}

t_resources_limits() {	# the job's cgroup holds its --mem and -c
	write_config "[resources]" "cpus = 4"
	start_nvqd || return
	if ! res_cgroups; then
		skip "needs root and cgroups with memory and cpu controllers"
		return
	fi
	local a cg mem cpu
	a=$(submit -g 0 -c 2 --mem 300M sh -c 'cat /proc/self/cgroup; sleep 30')
	wait_state "$a" RUNNING
	sleep 0.3
	cg=$(nvq log "$a")
	# v2 (memory.max, cpu.max) or the v1 hierarchies beside it
	if [ -n "$(sed -n 's/^0::\(.*\)/\1/p' <<< "$cg")" ] &&
	    [ -f "/sys/fs/cgroup$(sed -n 's/^0::\(.*\)/\1/p' <<< "$cg")/memory.max" ]; then
		mem=$(cat "/sys/fs/cgroup$(sed -n 's/^0::\(.*\)/\1/p' <<< "$cg")/memory.max")
		cpu=$(cut -d' ' -f1 "/sys/fs/cgroup$(sed -n 's/^0::\(.*\)/\1/p' <<< "$cg")/cpu.max")
	else
		mem=$(cat "/sys/fs/cgroup/memory$(sed -n 's/^[0-9]*:memory:\(.*\)/\1/p' <<< "$cg")/memory.limit_in_bytes")
		cpu=$(cat "/sys/fs/cgroup/cpu$(sed -n 's/^[0-9]*:\(cpu\|cpu,cpuacct\):\(.*\)/\2/p' <<< "$cg")/cpu.cfs_quota_us")
	fi
	expect_eq "memory limit: --mem" "$mem" 314572800
	expect_eq "CPU quota: 2 CPUs of 100 ms" "$cpu" 200000
	nvq cancel "$a"
	wait_state "$a" CANCELLED
}

t_resources_oom() {	# a job over its --mem is killed by its cgroup, with that reason; others run on
	write_config "[resources]" "cpus = 4"
	start_nvqd || return
	if ! res_cgroups; then
		skip "needs root and cgroups with memory and cpu controllers"
		return
	fi
	local other hog
	other=$(submit -g 0 --mem 100M sleep 30)
	wait_state "$other" RUNNING
	hog=$(submit -g 0 --mem 200M python3 -c 'b = b"x" * (600 << 20); print("not killed")')
	wait_state "$hog" FAILED 20
	expect_eq "the reason" "$(field "$hog" reason)" \
	    "killed: over its --mem 200M of host memory (signal 9)"
	expect_eq "it printed nothing after its allocation" "$(nvq log "$hog")" ""
	expect_eq "the other job runs on" "$(state "$other")" RUNNING
	nvq cancel "$other"
}

t_resources_modify() {	# nvq modify -c and --mem of a pending job
	write_config "[resources]" "cpus = 2"
	start_nvqd || return
	local a b out rc
	a=$(submit -g 0 -c 2 sleep 30); wait_state "$a" RUNNING
	b=$(submit -g 0 -c 1 --mem-per-cpu 100M true)
	nvq modify -c 2 "$b" > /dev/null
	expect_eq "its CPUs, and its memory per CPU with them" "$(sqlite3 "$T/nvq.db" \
	    "SELECT cpus, host_mem FROM jobs WHERE id = $b")" "2|209715200"
	nvq modify --mem 1G "$b" > /dev/null
	expect_eq "--mem replaces --mem-per-cpu" "$(sqlite3 "$T/nvq.db" \
	    "SELECT cpus, host_mem, mem_per_cpu IS NULL FROM jobs WHERE id = $b")" "2|1073741824|1"
	out=$(nvq modify -c 3 "$b" 2>&1); rc=$?
	expect_eq "more CPUs than there are: refused" "$rc" 1
	expect_match "saying why" "$out" "could never run so: 3 CPUs"
	expect_eq "and the reason it waits" "$(field "$b" wait)" "waiting for 2 CPUs: 2 of 2 in use"
	nvq cancel "$a" > /dev/null
	wait_state "$b" COMPLETED
}

t_resources_web() {	# the dashboard's /api/state: the host's pool and each job's -c and --mem
	local port
	port=$(python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
	write_config "[resources]" "cpus = 4" "memory = 8G" "[web]" "listen = 127.0.0.1:$port"
	start_nvqd || return
	local a out
	a=$(submit -g 0 -c 3 --mem 1G sleep 30); wait_state "$a" RUNNING
	out=$(python3 -c 'import json, sys, urllib.request as u
s = json.load(u.urlopen(sys.argv[1], timeout=5))
j = [j for j in s["jobs"] if j["id"] == int(sys.argv[2])][0]
print(s["host"]["cpus"], s["host"]["cpus_used"], s["host"]["memory"], s["host"]["memory_used"],
    j["cpus"], j["host_mem"])' \
	    "http://127.0.0.1:$port/api/state" "$a")
	expect_eq "the host: 3 of 4 CPUs, 1G of 8G; the job's" "$out" \
	    "4 3 8589934592 1073741824 3 1073741824"
	nvq cancel "$a" > /dev/null
}

t_resources_reload() {	# SIGHUP takes [resources] cpus up, and the waiting job starts
	write_config "[resources]" "cpus = 1"
	start_nvqd || return
	local a b
	a=$(submit -g 0 sleep 30); b=$(submit -g 0 sleep 30)
	wait_state "$a" RUNNING
	sleep 0.3
	expect_eq "one CPU: the second waits" "$(state "$b")" PENDING
	write_config "[resources]" "cpus = 2"
	kill -HUP "$NVQD_PID"
	wait_state "$b" RUNNING
	expect_match "said in the log" "$(cat "$T/nvqd.log")" "jobs share 2 CPUs"
	nvq cancel "$a" "$b" > /dev/null
}
