# t_config.sh: the configuration and what it reaches: the example file,
# SIGHUP, NVML through dlopen, schema upgrades.  Sourced by run.sh (helpers
# in lib.sh).

t_fake_nvml() {	# NVML via dlopen: GPUs, UUIDs, use outside the queue and by jobs
	write_config "[gpus]" "nvml_library = $HELPERS/libfake-nvml.so.1" "poll = 1s"
	export FAKE_NVML_GPUS=2x16G FAKE_NVML_PROCS=$T/procs
	: > "$T/procs"
	start_nvqd || return
	expect_match "GPUs found" "$(nvq gpus)" "GPU-fa4e0000-0000-0000-0000-000000000001 +Fake GPU"
	# a process outside the queue takes 6G of GPU 0
	sleep 3191 & local outsider=$!
	echo "0 $outsider $((6 << 30))" > "$T/procs"
	local a; a=$(submit -m 5G sh -c 'sleep 3192 & sleep 3194; wait')
	wait_state "$a" RUNNING
	sleep 0.3
	# two processes of the job use 3G and 1G of its GPU
	local p1 p2 g
	p1=$(below "$(shim_pid "$a")" '^sleep 3192$'); p2=$(below "$(shim_pid "$a")" '^sleep 3194$')
	g=$(field "$a" gpu_uuids); g=${g: -1}
	printf '0 %s %s\n%s %s %s\n%s %s %s\n' "$outsider" $((6 << 30)) "$g" "$p1" $((3 << 30)) \
	    "$g" "$p2" $((1 << 30)) > "$T/procs"
	sleep 1.5
	# GPU 0: 16G, less 5%, less the outsider's 6G: a 9.2G budget; the job
	# went there (best fit); its own 4G is USED, not outside use
	expect_eq "the job went to the GPU with less room" "$g" 0
	expect_match "GPU 0: budget, demanded, used by the queue, outside" "$(nvq gpus | grep '^0 ')" \
	    " 16G +9.2G +5G +4G +6G +$a$"
	expect_eq "outside processes counted" \
	    "$(nvq gpus --json | grep -o '"outside_procs":[0-9]*' | head -1)" '"outside_procs":1'
	expect_match "GPU 1 untouched, no job" "$(nvq gpus | grep '^1 ')" " 16G +15.2G +0B +0B +0B$"
	expect_eq "the job's use is its processes' together" "$(field "$a" gpu_used)" $((4 << 30))
	expect_match "nvq list shows used/asked" "$(nvq list | awk -v id="$a" '$1 == id')" " 4G/5G "
	# one process lets go of its memory: the use falls, the peak stays
	printf '0 %s %s\n%s %s %s\n' "$outsider" $((6 << 30)) "$g" "$p1" $((1 << 30)) > "$T/procs"
	sleep 1.5
	expect_eq "use now" "$(field "$a" gpu_used)" $((1 << 30))
	expect_eq "peak so far" "$(field "$a" gpu_peak)" $((4 << 30))
	kill $outsider
	nvq cancel "$a"
	wait_state "$a" CANCELLED
	expect_eq "the run's peak is stored" \
	    "$(sqlite3 "$T/nvq.db" "SELECT peak_gpu_mem FROM runs WHERE job_id = $a")" $((4 << 30))
	unset FAKE_NVML_GPUS FAKE_NVML_PROCS
}

t_config_example() {	# etc/nvq.ini is what the key table prints
	expect_eq "etc/nvq.ini matches nvqd --print-config" \
	    "$("$NVQD" --print-config | diff - etc/nvq.ini && echo same)" same
	expect_eq "it loads" "$("$NVQD" -n -c etc/nvq.ini)" "etc/nvq.ini: ok"
}

t_readme_ini() {	# the README's configuration, as written, loads; comments after values are cut
	local made=0 out
	# the group it names, made for the test where the machine has none
	getent group gpuadmin > /dev/null || { groupadd gpuadmin && made=1; } || return
	awk '/^```ini/ { f = 1; next } /^```/ { if (f) exit } f' README.md > "$T/readme.ini"
	expect_match "the README has its example" "$(cat "$T/readme.ini")" "virtual = 2x80G +# "
	out=$("$NVQD" -n -c "$T/readme.ini" 2>&1)
	expect_eq "it loads" "$out" "$T/readme.ini: ok"
	[ "$made" = 1 ] && groupdel gpuadmin
	# a comment after a value goes, # or ;, after a space or a tab; one inside a value stays
	printf '[gpus]\nvirtual = 3x8G\t; three\n' > "$T/c.ini"
	expect_eq "a ; after a tab" "$("$NVQD" -n -c "$T/c.ini" 2>&1)" "$T/c.ini: ok"
	write_config "[gpus]" "virtual = 2x8G   # two"
	start_nvqd || return
	expect_eq "two GPUs, not a bad value" "$(nvq gpus | grep -c '^ *[0-9]')" 2
	out=$(printf '[scheduler]\nreserve = 2G;x\n' > "$T/b.ini"; "$NVQD" -n -c "$T/b.ini" 2>&1)
	expect_match "a ; inside a value is the value's" "$out" '"2G;x" is not'
}

t_reload() {	# SIGHUP reloads limits; a bad file keeps the old settings
	write_config "[limits]" "max_running_jobs = 1"
	start_nvqd || return
	local a b
	a=$(submit -g 0 sleep 30); b=$(submit -g 0 sleep 30)
	wait_state "$a" RUNNING; sleep 0.2
	expect_eq "limited" "$(state "$b")" PENDING
	write_config "[limits]" "max_running_jobs = 0"
	kill -HUP "$NVQD_PID"
	wait_state "$b" RUNNING
	echo "bogus" >> "$T/nvq.ini"
	kill -HUP "$NVQD_PID"; sleep 0.2
	expect_match "bad reload kept" "$(cat "$T/nvq.ini" > /dev/null; cat "$T/nvqd.log")" "reload: .*keeping the running configuration"
	expect_eq "still serving" "$(state "$a")" RUNNING
	nvq cancel "$a" "$b"
}

t_schema_upgrade() {	# an older database is upgraded in place; a newer one refused
	write_config
	sqlite3 "$T/nvq.db" < schema/001_init.sql
	sqlite3 "$T/nvq.db" "PRAGMA user_version = 1; INSERT INTO jobs (uid, gid, user, name,
	    command, argv, cwd, state, gpus, stdout_path, stderr_path, submitted_at, ended_at,
	    exit_code) VALUES (0, 0, 'root', 'old', 'true', x'7472756500', '/', 'COMPLETED', 0,
	    '/dev/null', '/dev/null', 1000, 1001, 0)"
	start_nvqd || return
	local want; want=$(ls schema/[0-9]*.sql | wc -l)
	expect_eq "upgraded" "$(sqlite3 "$T/nvq.db" "PRAGMA user_version")" "$want"
	expect_eq "the old job is kept" "$(field 1 name) $(field 1 state)" "old COMPLETED"
	local a; a=$(submit -g 0 true); nvq wait "$a"
	expect_eq "new jobs get the next id" "$a" 2
	stop_nvqd
	sqlite3 "$T/nvq.db" "PRAGMA user_version = 99"
	local out; out=$("$NVQD" -c "$T/nvq.ini" 2>&1)
	expect_match "a newer database is refused" "$out" "schema version 99, newer than this nvqd's $want"
	sqlite3 "$T/nvq.db" "PRAGMA user_version = $want"
	expect_eq "and left as it was" "$(sqlite3 "$T/nvq.db" "SELECT count(*) FROM jobs")" 2
}
