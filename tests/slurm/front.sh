# front.sh: nvq in front of Slurm ([cluster] engine = slurm), sourced by
# check.sh once its Slurm runs with the plugin installed: nvqd configured
# with the [cluster] lines of contrib/slurm/README.md as written, jobs
# submitted with nvq by an unprivileged user, their history in SQLite.
# Uses check.sh's check, ROOT, B, F and W.

front_dir=$(mktemp -d /tmp/nvq-front.XXXXXX)
chmod 755 "$front_dir"
{
	echo "[daemon]"
	echo "socket = $front_dir/sock"
	echo "database = $front_dir/nvq.db"
	echo "spool = $front_dir/spool"
	echo "log_level = debug"
	echo "[gpus]"
	echo "virtual = 1x16G"
	# the guide's lines, as written
	sed -n '/^\[cluster\]$/,/^```$/p' contrib/slurm/README.md | grep -v '^```'
} > "$front_dir/nvq.ini"
grep -q '^engine = slurm$' "$front_dir/nvq.ini" || echo "FAIL - the guide has no [cluster] lines"

front_start() {
	"$ROOT/$B/nvqd" -c "$front_dir/nvq.ini" >> "$front_dir/nvqd.log" 2>&1 &
	FRONT_PID=$!
	local i
	for i in $(seq 100); do
		[ -S "$front_dir/sock" ] && "$ROOT/$B/nvq" -s "$front_dir/sock" list > /dev/null 2>&1 &&
		    return 0
		sleep 0.05
	done
	echo "FAIL - nvqd did not start"; cat "$front_dir/nvqd.log"
}
front_stop() {
	kill -TERM "$FRONT_PID" 2>/dev/null
	wait "$FRONT_PID"
	front_rc=$?
}
# nq ARGS: nvq as the unprivileged user, in a folder of theirs
nq() { (cd "$W/u" && runuser -u nobody -- env "LD_LIBRARY_PATH=$F/fake" \
    "$ROOT/$B/nvq" -s "$front_dir/sock" "$@"); }
# sub ARGS: submits, prints the id
sub() { nq submit "$@" | sed -n 's/^Submitted job \([0-9]*\).*/\1/p'; }
col() { sqlite3 "$front_dir/nvq.db" "SELECT $2 FROM jobs WHERE id = $1"; }
# until_state ID STATE...: waits (30 s at most) for nvq's state of the job to be one of them
until_state() {
	local id=$1 i s; shift
	for i in $(seq 300); do
		s=$(col "$id" state)
		for want in "$@"; do [ "$s" = "$want" ] && return 0; done
		sleep 0.1
	done
	echo "    job $id is $s, not $*"
	return 1
}
mkdir -p "$W/u" && chmod 777 "$W/u"
rm -rf /var/spool/nvq/slurm/[0-9]*	# the plain sbatch jobs' peaks: no nvqd read them
front_start

echo "== nvq in front of Slurm"
# -g 1 -m: shards, one per GiB rounded up, and the budget in the job
a=$(sub -g 1 -m 1536M -o "$W/u/map.out" -- sh -c 'echo NVQ_GPU_MEM=$NVQ_GPU_MEM SHARDS=$SLURM_SHARDS_ON_NODE; sleep 1')
nq wait "$a"; wa=$?
sa=$(col "$a" slurm_id)
check "nvq submit -g 1 -m 1536M: sbatch --gres=shard:2, the job's budget 1536M (Slurm job $sa)" \
    sh -c "[ $wa = 0 ] && scontrol show job $sa | grep -q 'TresPerNode=gres:shard:2' &&
    grep -qx 'NVQ_GPU_MEM=1610612736 SHARDS=2' $W/u/map.out"
ev=$(sqlite3 "$front_dir/nvq.db" "SELECT group_concat(state || ':' || coalesce(reason, ''), ' ')
    FROM events WHERE job_id = $a")
echo "    its events: $ev"
check "... run as the user who submitted it" sh -c "scontrol show job $sa | grep -q 'UserId=nobody('"
check "... its events in nvq's database: submitted, sent to Slurm, running on a GPU, completed" \
    test "$ev" = "PENDING:submitted PENDING:sent to Slurm: job $sa RUNNING:vm:0 COMPLETED:"
# -g 2: whole GPUs, the budget per GPU
b=$(sub -g 2 -m 1G -o "$W/u/whole.out" -- sh -c 'echo CUDA_VISIBLE_DEVICES=$CUDA_VISIBLE_DEVICES NVQ_GPU_MEM=$NVQ_GPU_MEM')
nq wait "$b"; wb=$?
sb=$(col "$b" slurm_id)
check "nvq submit -g 2 -m 1G: sbatch --gres=gpu:2 with the budget per GPU" \
    sh -c "[ $wb = 0 ] && scontrol show job $sb | grep -q 'TresPerNode=gres:gpu:2' &&
    grep -qx 'CUDA_VISIBLE_DEVICES=0,1 NVQ_GPU_MEM=1073741824' $W/u/whole.out"

# 2 GPUs of 4 shards: four jobs of 2G run two to a GPU, a fifth waits for room
for i in 1 2 3 4; do s[$i]=$(sub -n share -g 1 -m 2G -- "$F/fake_job" alloc 1073741824 3); done
s[5]=$(sub -n share -g 1 -m 2G -- "$F/fake_job" alloc 1073741824 0)
for i in 1 2 3 4; do until_state "${s[$i]}" RUNNING; done
on=$(for i in 1 2 3 4; do col "${s[$i]}" gpu_uuids; done | sort | uniq -c | awk '{ print $1 "x" $2 }' | xargs)
wait5=$(nq list | awk -v id="${s[5]}" '$1 == id')
echo "    four running on: $on; the fifth: $wait5"
check "four -m 2G jobs share the two GPUs two by two" test "$on" = "2xvm:0 2xvm:1"
check "a fifth that does not fit waits, and nvq list says why (Slurm's reason)" \
    sh -c "[ '$(col "${s[5]}" state)' = PENDING ] && echo '$wait5' | grep -q 'Slurm job [0-9]*: Resources'"
nq wait "${s[5]}"; w5=$?
check "... and runs once one of them has ended" \
    sh -c "[ $w5 = 0 ] && [ \$(sqlite3 $front_dir/nvq.db \"SELECT count(*) FROM runs WHERE job_id = ${s[5]}
    AND started_at >= (SELECT min(ended_at) FROM runs WHERE job_id IN (${s[1]}, ${s[2]}, ${s[3]}, ${s[4]}))\") = 1 ]"

# past its budget: CUDA's out-of-memory error from the hook
o=$(sub -g 1 -m 1G -- "$F/fake_job" alloc 2147483648 0)
nq wait "$o"; wo=$?
check "past its -m: the hook's out-of-memory error, FAILED with exit code 1 (nvq wait $wo, nvq log)" \
    sh -c "[ $wo = 1 ] && [ '$(col "$o" state)' = FAILED ] && [ '$(col "$o" exit_code)' = 1 ]"
nq log "$o" | grep -qx 'alloc oom'
check "nvq log shows its output: alloc oom" test "${PIPESTATUS[1]}" = 0

# cancel: a running job, and one still waiting behind it
c1=$(sub -g 2 -- sleep 60)
c2=$(sub -g 2 -- sleep 60)
until_state "$c1" RUNNING
sleep 1
check "a job that waits shows as PENDING" test "$(col "$c2" state)" = PENDING
h=$(nq hold "$c2")
sleep 0.5
hr=$(scontrol show job "$(col "$c2" slurm_id)" | grep -o 'Reason=[A-Za-z]*')
r=$(nq release "$c2")
sleep 0.5
rr=$(scontrol show job "$(col "$c2" slurm_id)" | grep -o 'Reason=[A-Za-z]*')
echo "    $h ($hr); $r ($rr)"
check "nvq hold of a pending Slurm job: scontrol hold as its user" \
    sh -c "[ '$h' = 'job $c2 held: it does not start until nvq release' ] && [ '$hr' = Reason=JobHeldUser ]"
check "nvq release: Slurm may start it again" \
    sh -c "[ '$r' = 'job $c2 released: it starts in its turn' ] && [ '$rr' != Reason=JobHeldUser ]"
check "... both in its events" test "$(sqlite3 "$front_dir/nvq.db" "SELECT count(*) FROM events
    WHERE job_id = $c2 AND (reason LIKE 'held by nobody%' OR reason LIKE 'released by nobody%')")" = 2
nq cancel "$c2" "$c1"	# the pending one first: c1's end would start it
nq wait "$c1"; w1=$?
nq wait "$c2"; w2=$?
check "nvq cancel of a running and a pending Slurm job: both CANCELLED, here and in Slurm" \
    sh -c "[ $w1 = 125 ] && [ $w2 = 125 ] &&
    scontrol show job $(col "$c1" slurm_id) | grep -q JobState=CANCELLED &&
    scontrol show job $(col "$c2" slurm_id) | grep -q JobState=CANCELLED &&
    [ '$(col "$c1" reason)' = 'cancelled by nobody' ] &&
    [ \$(sqlite3 $front_dir/nvq.db 'SELECT count(*) FROM runs WHERE job_id = $c2') = 0 ]"

# what Slurm refuses, and what nvq does not ask of it
r=$(sub -g 1 -m 9G -- true)
nq wait "$r"; wr=$?
check "a job Slurm cannot run (-m 9G: 9 shards of 8) ends FAILED with sbatch's words" \
    sh -c "[ $wr = 1 ] && [ '$(col "$r" state)' = FAILED ] &&
    sqlite3 $front_dir/nvq.db 'SELECT reason FROM jobs WHERE id = $r' | grep -q '^sbatch refused it: '"
err=$(nq submit --after "$a" -- true 2>&1); rc=$?
echo "    $err"
check "--after is refused with a reason, nothing stored" \
    sh -c "[ $rc != 0 ] && [ \$(sqlite3 $front_dir/nvq.db 'SELECT count(*) FROM jobs WHERE id > $r') = 0 ]"
check "... the reason names [cluster] engine = slurm" grep -q 'engine = slurm' <<< "$err"

# nvqd stops and starts again while a job runs: its end is still recorded
k=$(sub -g 1 -m 1G -- sleep 3)
until_state "$k" RUNNING
front_stop
check "nvqd stops cleanly with a Slurm job running (exit $front_rc)" test "$front_rc" = 0
front_start
nq wait "$k"; wk=$?
check "... and records its end once started again" sh -c "[ $wk = 0 ] && [ '$(col "$k" state)' = COMPLETED ]"

# nvqd stopped after sbatch took a job and before it stored Slurm's id (made
# so by hand): started again, it finds the job by its comment, not sbatch again
l=$(sub -g 1 -m 1G -- sleep 3)
until_state "$l" RUNNING
sl=$(col "$l" slurm_id)
front_stop
sqlite3 "$front_dir/nvq.db" "DELETE FROM runs WHERE job_id = $l;
    UPDATE jobs SET state = 'PENDING', slurm_id = NULL, started_at = NULL WHERE id = $l"
front_start
nq wait "$l"; wl=$?
check "a job sbatch took just before nvqd stopped is found again (comment nvq:$l), not sent twice" \
    sh -c "[ $wl = 0 ] && [ '$(col "$l" slurm_id)' = '$sl' ] &&
    [ \$(squeue -h -t all -u nobody -o '%k' | grep -cx 'nvq:$l') = 1 ] &&
    grep -q 'job $l: Slurm had taken it as job $sl' $front_dir/nvqd.log"

# the same query on the Slurm front's database and on a local nvqd's
Q="SELECT j.state, r.exit_code, g.peak_gpu_mem FROM jobs j JOIN runs r ON r.job_id = j.id
    JOIN run_gpus g ON g.run_id = r.id WHERE j.name = 'peak'"
p=$(sub -n peak -g 1 -m 2G -- "$F/fake_job" alloc 1073741824 0)
nq wait "$p"
front_stop
local_dir=$(mktemp -d /tmp/nvq-local.XXXXXX)
chmod 755 "$local_dir"
printf '[daemon]\nsocket = %s/sock\ndatabase = %s/nvq.db\nspool = %s/spool\n[gpus]\nvirtual = 1x16G\n' \
    "$local_dir" "$local_dir" "$local_dir" > "$local_dir/nvq.ini"
"$ROOT/$B/nvqd" -c "$local_dir/nvq.ini" > "$local_dir/nvqd.log" 2>&1 &
lpid=$!
for i in $(seq 100); do [ -S "$local_dir/sock" ] && break; sleep 0.05; done
lp=$(cd "$W/u" && runuser -u nobody -- env "LD_LIBRARY_PATH=$F/fake" "$ROOT/$B/nvq" -s "$local_dir/sock" \
    submit -n peak -g 1 -m 2G -- "$F/fake_job" alloc 1073741824 0 | sed -n 's/^Submitted job \([0-9]*\).*/\1/p')
"$ROOT/$B/nvq" -s "$local_dir/sock" wait "$lp"
kill -TERM "$lpid"; wait "$lpid"
qs=$(sqlite3 "$front_dir/nvq.db" "$Q"); ql=$(sqlite3 "$local_dir/nvq.db" "$Q")
echo "    Slurm's job: $qs; the local one: $ql"
check "one query, the same answer from Slurm's job and a local one (state, exit code, peak per GPU)" \
    sh -c "[ '$qs' = 'COMPLETED|0|1073741824' ] && [ '$qs' = '$ql' ]"
check "the plugin's peak records were read and removed" \
    sh -c "[ -z \"\$(ls /var/spool/nvq/slurm)\" ]"
if grep -qE "AddressSanitizer|runtime error|LeakSanitizer|still had open handles" "$front_dir/nvqd.log"; then
	echo "FAIL - nvqd's log:"; grep -A5 -E "AddressSanitizer|runtime error|LeakSanitizer|open handles" "$front_dir/nvqd.log" | head -30
	fails=$((fails + 1))
fi
rm -rf "$front_dir" "$local_dir"
