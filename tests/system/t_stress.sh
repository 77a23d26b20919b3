# t_stress.sh: nvqd under load: floods of connections, 50 clients at once,
# kill -9 during a storm of submits.  Sourced by run.sh (helpers in lib.sh).

t_flood() {	# a user with a thousand silent connections does not stop nvqd serving others
	write_config; start_nvqd || return
	local as=() t0 t1 out a
	if [ "$(id -u)" = 0 ] && command -v setpriv > /dev/null; then
		chmod 755 "$T"
		as=(setpriv --reuid=65534 --regid=65534 --clear-groups --)
	fi
	"${as[@]}" "$HELPERS/flood" "$T/sock" 1000 3 > "$T/flood.out" &
	local fpid=$!
	for i in $(seq 100); do grep -q connected "$T/flood.out" && break; sleep 0.05; done
	t0=$(date +%s.%N)
	out=$(nvq list 2>&1); expect_eq "nvq list answers" "$?" 0
	a=$(submit -g 0 true); nvq wait "$a"; expect_eq "a job runs" "$?" 0
	t1=$(date +%s.%N)
	expect_eq "within a second" "$(awk -v a="$t0" -v b="$t1" 'BEGIN { print (b - a < 1) }')" 1
	wait "$fpid"
	if [ ${#as[@]} -gt 0 ]; then
		expect_eq "the flooder kept 256" "$(grep '^open' "$T/flood.out")" "open 256"
		expect_eq "the rest refused" "$(grep '^closed' "$T/flood.out")" "closed 744"
		expect_eq "logged once, not once per refusal" \
		    "$(grep -c 'uid 65534 has 256 connections' "$T/nvqd.log")" 1
	fi
	expect_eq "nvqd still serves" "$(nvq list > /dev/null 2>&1; echo $?)" 0
}

t_chaos() {	# 50 kill -9 of nvqd during a storm of submits: nothing acknowledged lost, nothing run twice
	write_config
	[ "${CHAOS_SYNC:-}" = full ] && sed -i "s/^sync = normal$/sync = full/" "$T/nvq.ini"
	start_nvqd || return
	local rounds=${NVQ_CHAOS_ROUNDS:-50} r k stop="$T/stop" spid=()
	# each job says it ran, and ends with an exit code it owes to its id
	local job='echo $NVQ_JOB_ID >> '"$T"'/ran; sleep 0.$((NVQ_JOB_ID % 3)); exit $((NVQ_JOB_ID % 7))'
	for k in 1 2 3 4; do
		(
			while [ ! -e "$stop" ]; do
				id=$("$NVQ_BIN" -s "$T/sock" submit --parsable -g 0 sh -c "$job" 2>/dev/null) &&
				    echo "$id" >> "$T/acked.$k"
			done
		) &
		spid+=($!)
	done
	for r in $(seq "$rounds"); do
		sleep "0.$(printf '%03d' $((RANDOM % 400)))"
		kill -9 "$NVQD_PID"; wait "$NVQD_PID" 2>/dev/null; NVQD_PID=""
		start_nvqd || break
	done
	touch "$stop"; wait "${spid[@]}"
	local acked ran
	acked=$(cat "$T"/acked.* | sort -n | uniq | wc -l)
	# everything ends
	for k in $(seq 600); do
		[ "$(sqlite3 "$T/nvq.db" "SELECT count(*) FROM jobs WHERE state IN ('PENDING', 'RUNNING')")" = 0 ] && break
		sleep 0.1
	done
	echo "    $rounds rounds, $acked jobs acknowledged, $(sqlite3 "$T/nvq.db" "SELECT count(*) FROM jobs") stored;" \
	    "starts voided $(grep -c 'never started; pending again' "$T/nvqd.log")," \
	    "shims found $(grep -c 'found its supervisor' "$T/nvqd.log")," \
	    "reattached $(grep -c 'reattached' "$T/nvqd.log")"
	expect_eq "all ended" "$(sqlite3 "$T/nvq.db" "SELECT count(*) FROM jobs WHERE state IN ('PENDING', 'RUNNING')")" 0
	expect_eq "many were acknowledged" "$(( acked > 100 ))" 1
	local missing=0 id
	for id in $(cat "$T"/acked.*); do
		[ "$(sqlite3 "$T/nvq.db" "SELECT count(*) FROM jobs WHERE id = $id")" = 1 ] || missing=$((missing + 1))
	done
	expect_eq "every acknowledged job is stored" "$missing" 0
	expect_eq "none ran twice" "$(sort "$T/ran" | uniq -d | wc -l)" 0
	expect_eq "one run each" "$(sqlite3 "$T/nvq.db" "SELECT count(*) FROM (SELECT job_id FROM runs
	    GROUP BY job_id HAVING count(*) > 1)")" 0
	expect_eq "every job ran" "$(sort -u "$T/ran" | wc -l)" "$(sqlite3 "$T/nvq.db" "SELECT count(*) FROM jobs")"
	local wrong="WHERE exit_code IS NOT id % 7 OR state != CASE WHEN id % 7 = 0 THEN 'COMPLETED' ELSE 'FAILED' END"
	expect_eq "every end has its real exit code" "$(sqlite3 "$T/nvq.db" "SELECT count(*) FROM jobs $wrong")" 0
	sqlite3 "$T/nvq.db" "SELECT '    wrong end: job ' || id || ' ' || state || ' exit ' || ifnull(exit_code, 'none') ||
	    ' (' || ifnull(reason, '') || ')' FROM jobs $wrong LIMIT 5"
	sqlite3 "$T/nvq.db" "SELECT '      event ' || job_id || ' ' || state || ' ' || ifnull(reason, '') FROM events
	    WHERE job_id IN (SELECT id FROM jobs $wrong LIMIT 5)"
	expect_eq "integrity" "$(sqlite3 "$T/nvq.db" "PRAGMA integrity_check")" ok
	[ "${CHAOS_SYNC:-}" = full ] && echo "    put back from the private database: $(grep -c 'put back from the private' "$T/nvqd.log") times"
	stop_nvqd
	sleep 0.2
	expect_eq "no process of the test is left" "$(pgrep -f "$T" | wc -l)" 0
}

t_chaos_full() {	# the same with sync = full: a submit's main commit (not synced) may be cut off and put back
	CHAOS_SYNC=full NVQ_CHAOS_ROUNDS=${NVQ_CHAOS_ROUNDS:-25} t_chaos
}

t_load() {	# 50 clients x 200 submits at once: every one acknowledged and stored, once
	write_config "[limits]" "max_running_jobs = 8"
	start_nvqd || return
	"$HELPERS/load" "$T/sock" 50 200 "$T/ids" > "$T/load.out"
	expect_eq "no submit failed" "$?" 0
	sed 's/^/    /' "$T/load.out" | grep -E "acknowledged|per_second|p50|p99"
	expect_eq "10000 acknowledged" "$(grep '^acknowledged' "$T/load.out")" "acknowledged 10000"
	expect_eq "10000 distinct ids" "$(sort -u "$T/ids" | wc -l)" 10000
	expect_eq "every one stored" "$(sqlite3 "$T/nvq.db" "SELECT count(*) FROM jobs WHERE id IN
	    ($(paste -sd, "$T/ids"))")" 10000
	expect_eq "and nothing else" "$(sqlite3 "$T/nvq.db" "SELECT count(*) FROM jobs")" 10000
}

t_submit_batch() {	# submits read in one loop turn are stored in one commit; each client gets its own id
	write_config
	start_nvqd || return
	local lp
	# nvqd stopped: 20 clients connect and send their SUBMIT; it reads them in one turn
	kill -STOP "$NVQD_PID"
	"$HELPERS/load" "$T/sock" 20 1 "$T/ids" > "$T/load.out" &
	lp=$!
	sleep 1
	kill -CONT "$NVQD_PID"
	wait "$lp"
	expect_eq "20 acknowledged" "$(grep '^acknowledged' "$T/load.out")" "acknowledged 20"
	expect_eq "each with its own id" "$(sort -u "$T/ids" | wc -l)" 20
	expect_match "stored together" "$(cat "$T/nvqd.log")" "([2-9]|1[0-9]|20) submits stored in one commit"
	expect_eq "those and nothing else stored" "$(sqlite3 "$T/nvq.db" "SELECT count(*) FROM jobs
	    WHERE id IN ($(paste -sd, "$T/ids"))"),$(sqlite3 "$T/nvq.db" "SELECT count(*) FROM jobs")" 20,20
	local id
	for id in $(cat "$T/ids"); do wait_state "$id" COMPLETED || return; done
}

# a storm of submits and kill -9 that starves every other test of the CPU
# (lc jobs' beats went stale beside it: t_lcbe_*): one at a time, alone
ALONE+=(t_chaos t_chaos_full)
