# t_lcbe.sh: latency-critical (--class lc) and best-effort jobs on a shared
# GPU (issue 43), against the fake libcuda: be launches wait while an lc
# job there has work (FAKE_KERNEL_US keeps the fake GPU busy after each
# launch), go on when it idles or dies, jobs on the other GPU are untouched,
# a be process cannot raise the page, and lc is the INI's to give.
# Sourced by run.sh (helpers in lib.sh).

lcbe_users() {	# the test users, and the test's folder open to them; 0, or 1 (skipped)
	[ "$(id -u)" = 0 ] && command -v setpriv > /dev/null && make_users ||
	    { skip "needs root, setpriv and useradd"; return 1; }
	chmod 755 "$T"
}

lcbe_config() {	# both GPUs shared, lc for everyone, a be launch waits up to 60 s
	write_config "[class lc]" "users = *" "be_max_wait = ${1:-60000}"
}

# lcbe_pair SECONDS: a be job launching for 60 s on GPU 0 (BE, counting into
# $T/be), then an lc job launching for SECONDS beside it (LC, $T/lc), the
# fake GPU busy 50 ms after each of its launches (so that a busy machine
# pausing the lc process a while does not idle it); checks that be waits.
lcbe_pair() {
	[ -x "$FAKE_JOB" ] || { fail "build tests/fake_job first"; return 1; }
	BE=$(fsubmit -m 1G "$FAKE_JOB" launch 60 "$T/be")
	wait_count "$T/be" || return 1
	LC=$(FAKE_KERNEL_US=50000 fsubmit --class lc -m 1G "$FAKE_JOB" launch "$1" "$T/lc")
	wait_count "$T/lc" || return 1
	wait_field "$LC" hook_pids '^[0-9]+$' || return 1
	sleep 0.2
	expect_eq "be waits while lc is busy" "$(growing "$T/be" 0.8)" still
}

t_lcbe_yield() {	# be launches stop while the lc job is busy and resume when it is done
	lcbe_config; start_nvqd || return
	local be lc i out
	lcbe_pair 5 || return
	be=$BE lc=$LC
	expect_eq "on the same GPU" "$(field "$lc" gpu_uuids)" "$(field "$be" gpu_uuids)"
	expect_eq "stored as lc" "$(sqlite3 "$T/nvq.db" "SELECT coalesce(lc, 0) FROM jobs WHERE id
	    IN ($be, $lc) ORDER BY id")" "0
1"
	expect_eq "nvq list's class column" "$(nvq list --format id,class | awk 'NR > 1 { print $2 }' |
	    tr '\n' ' ')" "be lc "
	expect_eq "lc runs" "$(growing "$T/lc" 0.3)" grows
	sleep 0.3	# a report of the wait under way (every 100 ms)
	for i in $(seq 20); do
		out=$(nvq gpus)
		[[ $out == *"busy: be waits"* ]] && break
		sleep 0.1
	done
	expect_match "nvq gpus says which job is lc, and busy" "$out" \
	    " $be,$lc \(lc $lc, busy: be waits\)|$lc,$be \(lc $lc, busy: be waits\)"
	expect_match "nvq show: lc's launch latencies while it runs" "$(nvq show "$lc")" \
	    "latency_class +lc.*lc_p50_ns +[0-9.]+us.*lc_p99_ns +[0-9.]+us.*lc_p999_ns +[0-9.]+us"
	expect_match "and be's time yielding" "$(nvq show "$be" | tr '\n' ' ')" \
	    "latency_class +be .*be_yield_us +[0-9]+\.[0-9]{3}s"
	nvq wait "$lc" > /dev/null
	expect_eq "be goes on once lc ended" "$(growing "$T/be" 0.5)" grows
	nvq cancel "$be" > /dev/null
	wait_state "$be" CANCELLED
	expect_match "be's time yielding is recorded" "$(sqlite3 "$T/nvq.db" "SELECT be_yield_us
	    FROM jobs WHERE id = $be")" "^[0-9]{6,}$"
	expect_match "lc's launch latencies are recorded" "$(sqlite3 "$T/nvq.db" "SELECT
	    lc_p50_ns > 0 AND lc_p99_ns >= lc_p50_ns AND lc_p999_ns >= lc_p99_ns FROM jobs
	    WHERE id = $lc")" "^1$"
}

t_lcbe_idle() {	# an lc job idle between requests lets be run in between, at most of its rate
	[ -x "$FAKE_JOB" ] || { fail "build tests/fake_job first"; return; }
	lcbe_config; start_nvqd || return
	local be lc a b c d
	be=$(fsubmit -m 1G "$FAKE_JOB" launch 30 "$T/be")
	wait_count "$T/be" || return
	a=$(count "$T/be"); sleep 1; b=$(count "$T/be")
	# a request every 200 ms: busy some 10 ms (its launches) + 5 ms (the last kernel)
	lc=$(FAKE_KERNEL_US=5000 fsubmit --class lc -m 1G "$FAKE_JOB" bursts 20 "$T/lc")
	wait_count "$T/lc" || true
	c=$(count "$T/be"); sleep 1; d=$(count "$T/be")
	expect_eq "lc serves requests" "$(growing "$T/lc" 0.5)" grows
	# alone $((b - a)) launches a second; beside an lc job busy ~10% of the time
	expect_eq "be keeps at least half its rate beside it ($((b - a)) alone, $((d - c)) \
beside)" "$(( (d - c) * 2 >= b - a ))" 1
	nvq cancel "$be" "$lc" > /dev/null
}

t_lcbe_crash() {	# an lc job killed with SIGKILL mid-work never leaves be blocked
	lcbe_config; start_nvqd || return
	local be lc pid t0 t1
	lcbe_pair 60 || return
	be=$BE lc=$LC pid=$(field "$LC" hook_pids)
	t0=$(count "$T/be")
	kill -9 "$pid"
	sleep 1
	t1=$(count "$T/be")
	expect_eq "be launches within a second of the kill" "$(( t1 > t0 + 50 ))" 1
	wait_state "$lc" FAILED
	expect_eq "and goes on" "$(growing "$T/be" 0.3)" grows
	nvq cancel "$be" > /dev/null
}

t_lcbe_other_gpu() {	# be jobs on the other GPU never wait for an lc job
	[ -x "$FAKE_JOB" ] || { fail "build tests/fake_job first"; return; }
	lcbe_config; start_nvqd || return
	local be1 be2 lc
	# 10G each: the lc job and be1 on one GPU, be2 alone on the other
	lc=$(FAKE_KERNEL_US=50000 fsubmit --class lc -m 6G "$FAKE_JOB" launch 30 "$T/lc")
	wait_count "$T/lc" || return
	be1=$(fsubmit -m 6G "$FAKE_JOB" launch 30 "$T/be1")
	be2=$(fsubmit -m 10G "$FAKE_JOB" launch 30 "$T/be2")
	wait_count "$T/be2" || return
	expect_eq "be1 shares lc's GPU" "$(field "$be1" gpu_uuids)" "$(field "$lc" gpu_uuids)"
	expect_eq "be2 is on the other" "$([ "$(field "$be2" gpu_uuids)" != "$(field "$lc" \
	    gpu_uuids)" ] && echo yes)" yes
	expect_eq "be1 waits" "$(growing "$T/be1" 0.5)" still
	expect_eq "be2 goes on" "$(growing "$T/be2" 0.5)" grows
	nvq cancel "$lc" "$be1" "$be2" > /dev/null
}

t_lcbe_bound() {	# a be launch waits at most be_max_wait, then goes on
	[ -x "$FAKE_JOB" ] || { fail "build tests/fake_job first"; return; }
	lcbe_config 200; start_nvqd || return
	local be lc a b
	lc=$(FAKE_KERNEL_US=50000 fsubmit --class lc -m 1G "$FAKE_JOB" launch 30 "$T/lc")
	wait_count "$T/lc" || return
	be=$(fsubmit -m 1G "$FAKE_JOB" launch 30 "$T/be")
	sleep 1.5
	a=$(count "$T/be"); sleep 2; b=$(count "$T/be")
	# 2 s at one launch per 200 ms: about 10, far from the ~2000 of a free GPU
	expect_eq "one launch per bound: $a then $b" "$(( b - a >= 5 && b - a <= 20 ))" 1
	nvq cancel "$lc" "$be" > /dev/null
}

t_lcbe_readonly() {	# a be process cannot raise its page, whatever it tries; lc has its GPU's alone
	[ -x "$FAKE_JOB" ] || { fail "build tests/fake_job first"; return; }
	lcbe_users || return
	lcbe_config; start_nvqd || return
	local j b out
	j=$(as_user nvqta env LD_LIBRARY_PATH="$FAKE_LIB" "$NVQ_BIN" -s "$T/sock" submit \
	    --parsable -m 1G "$FAKE_JOB" poke)
	nvq wait "$j" > /dev/null
	out=$(nvq log "$j" 2>&1)
	expect_eq "its GPU's page alone; every way to write it is denied; nvqd's live page, read-only" \
	    "$out" "poke: pages=1 store=denied mprotect=denied map_files=denied proc_mem=denied \
truncate=denied live=1 live_store=denied"
	# an lc job writes its own GPU's page, and has no other GPU's
	j=$(fsubmit --parsable --class lc -m 1G "$FAKE_JOB" poke)
	nvq wait "$j" > /dev/null
	out=$(nvq log "$j" 2>&1)
	expect_match "an lc process has its GPU's page alone, writable" "$out" "^poke: pages=1 store=written"
	# but not to be cut short: a SIGBUS for nvqd and every be process of its GPU
	expect_match "an lc process cannot truncate it, and has no live page" "$out" \
	    "truncate=denied live=0 live_store=none$"
	expect_eq "nvqd lives on" "$(nvq list > /dev/null 2>&1; echo $?)" 0
	# an lc job raising every word it can reach stalls nobody on another GPU
	b=$(fsubmit -m 10G -w 1 "$FAKE_JOB" launch 30 "$T/b1")
	wait_count "$T/b1" || return
	j=$(POKE_HOLD=5 fsubmit --parsable --class lc -m 1G -w 0 "$FAKE_JOB" poke)
	wait_state "$j" RUNNING
	sleep 0.5
	expect_eq "a be job on the other GPU goes on" "$(growing "$T/b1" 0.8)" grows
	nvq cancel "$j" "$b" > /dev/null
}

t_lcbe_who() {	# lc is refused, with one line and nothing stored, for a user the INI does not name
	lcbe_users || return
	write_config "[class lc]" "users = nvqtb"
	start_nvqd || return
	local out rc n
	out=$(as_user nvqta "$NVQ_BIN" -s "$T/sock" submit --class lc -g 0 true 2>&1); rc=$?
	expect_eq "refused (exit 1, as --qos's refusal)" "$rc" 1
	expect_eq "says why, in one line" "$out" "nvq: --class lc: you may not submit \
latency-critical jobs (nvq.ini's [class lc] users and groups); nothing was queued"
	n=$(sqlite3 "$T/nvq.db" "SELECT count(*) FROM jobs")
	expect_eq "nothing stored" "$n" 0
	out=$(as_user nvqtb "$NVQ_BIN" -s "$T/sock" submit --parsable --class lc -g 0 true 2>&1)
	expect_match "a user named may" "$out" "^[0-9]+$"
	out=$(as_user nvqta "$NVQ_BIN" -s "$T/sock" submit --parsable --class be -g 0 true 2>&1)
	expect_match "be is everyone's" "$out" "^[0-9]+$"
	out=$(nvq submit --class xx -g 0 true 2>&1); rc=$?
	expect_eq "a class that is not one: exit 2" "$rc" 2
	expect_eq "and one line" "$out" "nvq: --class xx: not a class (lc: latency-critical, be: \
best-effort, the default)"
	write_config "[class lc]"
	stop_nvqd; start_nvqd || return
	out=$(as_user nvqtb "$NVQ_BIN" -s "$T/sock" submit --class lc -g 0 true 2>&1); rc=$?
	expect_eq "nobody named: root alone" "$rc" 1
	out=$(nvq submit --parsable --class lc -g 0 true 2>&1)
	expect_match "root may" "$out" "^[0-9]+$"
}

t_lcbe_limit() {	# [class lc] max_jobs_per_user counts a user's active lc jobs; be is not counted
	lcbe_users || return
	write_config "[class lc]" "users = nvqta" "max_jobs_per_user = 2"
	start_nvqd || return
	local a b out rc
	a=$(as_user nvqta "$NVQ_BIN" -s "$T/sock" submit --parsable --class lc -g 0 sleep 30)
	b=$(as_user nvqta "$NVQ_BIN" -s "$T/sock" submit --parsable --class lc -g 0 --hold true)
	out=$(as_user nvqta "$NVQ_BIN" -s "$T/sock" submit --class lc -g 0 true 2>&1); rc=$?
	expect_eq "a third is refused" "$rc" 1
	expect_eq "saying why" "$out" "nvq: --class lc: you have 2 latency-critical jobs: \
[class lc] max_jobs_per_user is 2; nothing was queued"
	out=$(as_user nvqta "$NVQ_BIN" -s "$T/sock" submit --class lc --array 1-2 -g 0 true \
	    2>&1); rc=$?
	expect_match "an array counts its tasks" "$out" "and ask for more"
	out=$(as_user nvqta "$NVQ_BIN" -s "$T/sock" submit --parsable -g 0 true 2>&1)
	expect_match "be is not counted" "$out" "^[0-9]+$"
	nvq cancel "$b" > /dev/null
	wait_state "$b" CANCELLED
	b=$(as_user nvqta "$NVQ_BIN" -s "$T/sock" submit --parsable --class lc -g 0 sleep 30 2>&1)
	expect_match "one ended: one more may come" "$b" "^[0-9]+$"
	# counted again from the database after a restart
	stop_nvqd; start_nvqd || return
	out=$(as_user nvqta "$NVQ_BIN" -s "$T/sock" submit --class lc -g 0 true 2>&1); rc=$?
	expect_match "still counted after a restart" "$rc $out" "^1 .*you have 2 latency-critical"
	# nvq restart of finished lc jobs counts them too: two at the limit, none restarted
	local c d
	c=$(as_user nvqta "$NVQ_BIN" -s "$T/sock" submit --parsable -g 0 true)
	nvq wait "$c" > /dev/null
	sqlite3 "$T/nvq.db" "UPDATE jobs SET lc = 1 WHERE id = $c"
	out=$(as_user nvqta "$NVQ_BIN" -s "$T/sock" restart "$c" 2>&1); rc=$?
	expect_match "nvq restart past the limit: refused" "$rc $out" \
	    "^1 .*over \\[class lc\\] max_jobs_per_user \\(2\\); nothing was restarted"
	expect_eq "and not restarted" "$(nvq show "$c" | awk '$1 == "state" {print $2}')" COMPLETED
	nvq cancel "$a" > /dev/null
	wait_state "$a" CANCELLED
	out=$(as_user nvqta "$NVQ_BIN" -s "$T/sock" restart "$c" 2>&1); rc=$?
	expect_eq "under the limit: restarted" "$rc" 0
	nvq cancel "$b" "$c" > /dev/null 2>&1
}

t_lcbe_default() {	# [scheduler] default_class = lc: lc for those who may, be for the others; #NVQ --class
	lcbe_users || return
	write_config "[scheduler]" "default_class = lc" "[class lc]" "users = nvqtb"
	start_nvqd || return
	local a b c
	a=$(as_user nvqta "$NVQ_BIN" -s "$T/sock" submit --parsable -g 0 true)
	b=$(as_user nvqtb "$NVQ_BIN" -s "$T/sock" submit --parsable -g 0 true)
	c=$(as_user nvqtb "$NVQ_BIN" -s "$T/sock" submit --parsable --class be -g 0 true)
	expect_eq "the default is lc only for a user who may" "$(sqlite3 "$T/nvq.db" "SELECT
	    group_concat(coalesce(lc, 0), ' ') FROM (SELECT lc FROM jobs WHERE id IN ($a, $b, $c)
	    ORDER BY id)")" "0 1 0"
	printf '#!/bin/sh\n#NVQ --class lc -g 0\ntrue\n' > "$T/lc.sh"
	chmod 755 "$T/lc.sh"
	a=$(nvq submit --parsable "$T/lc.sh")
	expect_eq "#NVQ --class lc" "$(sqlite3 "$T/nvq.db" "SELECT lc FROM jobs WHERE id = $a")" 1
}

t_lcbe_restart() {	# after a restart of nvqd both jobs take its new page: be still waits for lc
	lcbe_config; start_nvqd || return
	local be be2 lc
	# 20 s: on a loaded machine a 10 s lc job could end before be2's check
	lcbe_pair 20 || return
	be=$BE lc=$LC
	stop_nvqd; start_nvqd || return
	wait_field "$lc" hook_pids '^[0-9]+$' || return
	wait_field "$be" hook_pids '^[0-9]+$' || return
	sleep 0.5
	expect_eq "lc runs on" "$(growing "$T/lc" 0.3)" grows
	expect_eq "be still waits" "$(growing "$T/be" 0.8)" still
	# a be job started now has only the new page: lc must be raising it there
	be2=$(fsubmit -m 1G "$FAKE_JOB" launch 60 "$T/be2")
	wait_field "$be2" hook_pids '^[0-9]+$' || return
	sleep 0.5
	expect_eq "a be job started since waits too" "$(growing "$T/be2" 0.8)" still
	nvq wait "$lc" > /dev/null
	expect_eq "and goes on once lc ended" "$(growing "$T/be" 0.5)" grows
	expect_eq "both" "$(growing "$T/be2" 0.5)" grows
	nvq cancel "$be" "$be2" > /dev/null
}

t_lcbe_hold() {	# an lc job held by nvq hold raises nothing: be runs meanwhile
	lcbe_config; start_nvqd || return
	local be lc
	lcbe_pair 60 || return
	be=$BE lc=$LC
	expect_match "hold lc" "$(nvq hold "$lc")" "held"
	sleep 0.3
	expect_eq "be runs while lc is held" "$(growing "$T/be" 0.8)" grows
	nvq release "$lc" > /dev/null
	sleep 0.3
	expect_eq "and waits again once it is released" "$(growing "$T/be" 0.8)" still
	nvq cancel "$be" "$lc" > /dev/null
}

t_lcbe_hold_be() {	# a 2-rank be job yielding to lc is held at once: its ranks stop yielding, no SIGSTOP
	[ -x "$FAKE_JOB" ] || { fail "build tests/fake_job first"; return; }
	# be launches may wait 30 s for lc, far past revoke_timeout
	write_config "[class lc]" "users = *" "be_max_wait = 30000" "[scheduler]" "revoke_timeout = 3s"
	start_nvqd || return
	local be lc out t0 t1 i
	be=$(fsubmit --parsable -g 2 -m 2G "$FAKE_JOB" ddp 2 300 "$T/d")
	wait_field "$be" hook_pids '^[0-9]+,[0-9]+$' || return
	wait_count "$T/d.rank0" || return
	lc=$(FAKE_KERNEL_US=50000 fsubmit --class lc -m 1G -w 0 "$FAKE_JOB" launch 60 "$T/lc")
	wait_count "$T/lc" || return
	sleep 0.3
	expect_eq "both be ranks wait while lc is busy on GPU 0" \
	    "$(growing "$T/d.rank0" 0.5) $(growing "$T/d.rank1" 0.1)" "still still"
	t0=${EPOCHREALTIME/./}
	out=$(nvq hold "$be" 2>&1)
	t1=${EPOCHREALTIME/./}
	expect_eq "held, drained" "$out" "job $be held: its GPU work has drained"
	expect_eq "within revoke_timeout, not be_max_wait" "$(( (t1 - t0) < 3000000 ))" 1
	expect_eq "no SIGSTOP" "$(grep -c SIGSTOP "$T/nvqd.log")" 0
	nvq release "$be" > /dev/null
	nvq cancel "$lc" > /dev/null
	wait_state "$lc" CANCELLED
	expect_eq "be goes on once lc is gone" "$(growing "$T/d.rank0" 0.8)" grows
	touch "$T/d.stop"
	wait_state "$be" COMPLETED 20
	expect_match "every rank ended after the same step" "$(nvq log "$be" | tail -1)" '^ddp ok [0-9]+$'
}

# page_keeper PID SECONDS: another process takes PID's writable lc/be page
# (as root, through /proc/PID/map_files; a user's own process could be sent
# the descriptor) and raises every bit and beat in it for SECONDS
page_keeper() {
	python3 - "$1" "$2" <<'PY' &
import mmap, os, re, struct, sys, time
pid, secs = sys.argv[1], float(sys.argv[2])
for line in open("/proc/%s/maps" % pid):
    if "nvq-lcbe" in line and "rw" in line.split()[1]:
        rng = line.split()[0]
        break
else:
    sys.exit("no writable page in %s" % pid)
fd = os.open("/proc/%s/map_files/%s" % (pid, rng), os.O_RDWR)
m = mmap.mmap(fd, 4096)
end = time.time() + secs
while time.time() < end:
    now = time.monotonic_ns()
    m[0:512] = struct.pack("64Q", *([(1 << 64) - 1] * 64))		# up[64]
    m[512:1024] = struct.pack("64Q", *([now] * 64))			# beat[64]
    time.sleep(0.01)
PY
	KEEPER=$!
}

t_lcbe_page_kept() {	# a writable page kept past its lc job's end stalls no be job: nvqd's live page says who is lc
	[ -x "$FAKE_JOB" ] || { fail "build tests/fake_job first"; return; }
	command -v python3 > /dev/null || { skip "needs python3"; return; }
	[ "$(id -u)" = 0 ] || { skip "needs root (to open another process's mapping)"; return; }
	lcbe_config; start_nvqd || return
	local be lc pid
	be=$(fsubmit --parsable -m 1G -w 0 "$FAKE_JOB" launch 60 "$T/be")
	wait_count "$T/be" || return
	lc=$(POKE_HOLD=2 fsubmit --parsable --class lc -m 1G -w 0 "$FAKE_JOB" poke)
	wait_field "$lc" hook_pids '^[0-9]+$' || return
	pid=$(field "$lc" hook_pids)
	for _ in $(seq 40); do grep -q nvq-lcbe "/proc/$pid/maps" 2> /dev/null && break; sleep 0.05; done
	page_keeper "$pid" 6
	sleep 0.5
	expect_eq "be waits while the lc job raises its page" "$(growing "$T/be" 0.5)" still
	wait_state "$lc" COMPLETED 10
	sleep 0.3
	expect_eq "the keeper still raises it" "$(kill -0 "$KEEPER" 2> /dev/null && echo yes)" yes
	expect_eq "be goes on once the lc job ended" "$(growing "$T/be" 0.8)" grows
	wait "$KEEPER"
	nvq cancel "$be" > /dev/null
}

t_lcbe_user_slots() {	# one user's lc processes take at most 32 of the host's 64 slots; another user's lc job still gets one
	[ -x "$FAKE_JOB" ] || { fail "build tests/fake_job first"; return; }
	lcbe_users || return
	lcbe_config; start_nvqd || return
	local k ids="" n o
	# three lc jobs of root's, 12 processes each, each its own link to nvqd
	for k in 1 2 3; do
		ids="$ids $(fsubmit --parsable --class lc -m 1G -w 0 sh -c \
		    'for i in $(seq 12); do "$0" launch 6 "$1.$i" & done; wait' "$FAKE_JOB" "$T/u$k")"
	done
	for _ in $(seq 150); do
		[ "$(grep -c "more than 32 lc processes of user root" "$T/nvqd.log")" -ge 4 ] && break
		sleep 0.1
	done
	n=$(grep -c "more than 32 lc processes of user root" "$T/nvqd.log")
	expect_eq "the 33rd to 36th of root's are not given a slot" "$n" 4
	mkdir -m 777 "$T/o"
	o=$(as_user nvqta env LD_LIBRARY_PATH="$FAKE_LIB" "$NVQ_BIN" -s "$T/sock" submit --parsable \
	    --class lc -m 1G -w 1 "$FAKE_JOB" launch 2 "$T/o/n")
	wait_count "$T/o/n" || return
	wait_field "$o" hook_pids '^[0-9]+$' || return
	expect_eq "nvqta's lc job gets a slot" \
	    "$(grep -c "job $o: more than\|more than 64 lc processes" "$T/nvqd.log")" 0
	nvq wait $ids "$o" > /dev/null
}

t_lcbe_capture() {	# the lc watcher never synchronizes while a CUDA graph is being captured
	[ -x "$FAKE_JOB" ] || { fail "build tests/fake_job first"; return; }
	lcbe_config; start_nvqd || return
	local lc
	lc=$(FAKE_KERNEL_US=2000 fsubmit --class lc -m 1G "$FAKE_JOB" capture 1)
	nvq wait "$lc" > /dev/null
	expect_eq "the capture survives" "$(nvq log "$lc")" "capture ok"
}

t_lcbe_job_slots() {	# one lc job's processes take at most 16 of the host's 64 slots; another lc job still gets one
	[ -x "$FAKE_JOB" ] || { fail "build tests/fake_job first"; return; }
	lcbe_config; start_nvqd || return
	local j k n
	# 20 processes of one lc job, each its own link to nvqd (64M each: -m 2G holds them all)
	j=$(fsubmit --parsable --class lc -m 2G -w 0 sh -c \
	    'for i in $(seq 20); do "$0" launch 4 "$1.$i" & done; wait' "$FAKE_JOB" "$T/many")
	for _ in $(seq 100); do
		[ "$(grep -c "job $j: more than 16 lc processes of one job" "$T/nvqd.log")" -ge 4 ] && break
		sleep 0.1
	done
	n=$(grep -c "job $j: more than 16 lc processes of one job" "$T/nvqd.log")
	expect_eq "the 17th to 20th processes are not given a slot" "$n" 4
	k=$(fsubmit --parsable --class lc -m 1G -w 1 "$FAKE_JOB" launch 2 "$T/other")
	wait_count "$T/other" || return
	expect_eq "another lc job still gets one" \
	    "$(grep -c "job $k: more than\|more than 64 lc processes" "$T/nvqd.log")" 0
	nvq wait "$j" "$k" > /dev/null
}
