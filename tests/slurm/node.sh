# node.sh: a node that runs nvqd of its own, sourced by check.sh: the
# plugin installed as the guide says with nvqd=SOCKET, so that each
# --gpu-mem step is handed to the node's nvqd, which follows it beside its
# own jobs. Uses check.sh's check, ROOT, B, F and W.

node_dir=$(mktemp -d /tmp/nvq-node.XXXXXX)
chmod 755 "$node_dir"
export FAKE_CKPT_DIR=$node_dir/ckpt
mkdir -p "$FAKE_CKPT_DIR" && chmod 777 "$FAKE_CKPT_DIR"
# the node's two fake GPUs of 4 shards, 1G each, as nvqd's virtual GPUs
printf '[daemon]\nsocket = %s/sock\ndatabase = %s/nvq.db\nspool = %s/spool\nlog_level = debug\n' \
    "$node_dir" "$node_dir" "$node_dir" > "$node_dir/nvq.ini"
printf '[gpus]\nvirtual = 2x4G\ncuda_library = %s/libcuda.so.1\n[scheduler]\nrevoke_timeout = 3s\n' \
    "$F/fake" >> "$node_dir/nvq.ini"
"$ROOT/$B/nvqd" -c "$node_dir/nvq.ini" >> "$node_dir/nvqd.log" 2>&1 &
node_pid=$!
for _ in $(seq 100); do [ -S "$node_dir/sock" ] && break; sleep 0.05; done
contrib/slurm/install.sh "$ROOT/$B/libnvq-hook.so" 1G /var/spool/nvq/slurm "$node_dir/sock" > /dev/null ||
    echo "FAIL - install.sh with nvqd="
nn() { "$ROOT/$B/nvq" -s "$node_dir/sock" "$@"; }
ncol() { sqlite3 "$node_dir/nvq.db" "SELECT $2 FROM jobs WHERE $1"; }
count() { cat "$1" 2> /dev/null || echo 0; }
growing() { local a b; a=$(count "$1"); sleep "$2"; b=$(count "$1"); [ "$b" -gt "$a" ] && echo grows || echo still; }
# sbatch as the unprivileged user
nsb() { (cd "$W/u" && runuser -u nobody -- env "LD_LIBRARY_PATH=$F/fake" "FAKE_CKPT_DIR=$FAKE_CKPT_DIR" \
    sbatch --parsable "$@"); }
# until_node WHERE: the node's nvqd has a RUNNING job matching the SQL condition (30 s at most)
until_node() {
	local i
	for i in $(seq 300); do
		[ -n "$(ncol "$1 AND state = 'RUNNING'" id)" ] && return 0
		sleep 0.1
	done
	return 1
}

echo "== a node that runs nvqd"
s1=$(nsb -o "$W/u/n1.out" --gres=shard:2 --gpu-mem=2G --wrap "$F/fake_job launch 20 $W/u/n1.count 1073741824")
until_node "slurm_id = $s1"
n1=$(ncol "slurm_id = $s1" id)
# linked, and its use reported (the hook reports every second)
for _ in $(seq 100); do nn show --json "$n1" | head -1 | grep -q '"gpu_used":1073741824' && break; sleep 0.1; done
g1=$(ncol "id = $n1" gpu_uuids)
echo "    Slurm job $s1 is nvqd's job $n1 on $g1: $(nn list | awk -v id="$n1" '$1 == id')"
check "a --gpu-mem step becomes a job of the node's nvqd, RUNNING, its user's, on the GPU Slurm gave it" \
    sh -c "[ '$(ncol "id = $n1" "state || ' ' || user || ' ' || name || ' ' || slurm_step")' = \
    'RUNNING nobody slurm-$s1.batch batch' ] && echo '$g1' | grep -q '^GPU-0000'"
shown=$(nn show --json "$n1" | head -1)
check "its processes link to nvqd (hook_pids), which sees its 1G in use" \
    sh -c "echo '$shown' | grep -q '\"hook_pids\":\"[0-9]' && echo '$shown' | grep -q '\"gpu_used\":1073741824'"
gi=${g1: -1}
gpus=$(nn gpus | awk -v i="$gi" '$1 == i')
echo "    nvq gpus: $gpus"
check "nvq gpus counts its 2G on that GPU, 1G of it used" sh -c "echo '$gpus' | grep -qE ' 2G +1G +0B +1$'"
top=$(nn top | sed -n '/^RUNNING/,/^$/p' | grep "slurm-$s1.batch")
echo "    nvq top: $top"
check "nvq top shows it among the node's running jobs" test -n "$top"
# the node's own jobs fit beside it, or wait
l1=$(nn submit -g 1 -m 1G -w "$gi" -- sleep 30 | sed -n 's/^Submitted job \([0-9]*\).*/\1/p')
l2=$(nn submit -g 1 -m 3G -w "$gi" -- sleep 30 | sed -n 's/^Submitted job \([0-9]*\).*/\1/p')
sleep 1
w2=$(nn list | awk -v id="$l2" '$1 == id')
echo "    the node's own: $(nn list | awk -v id="$l1" '$1 == id'); $w2"
check "a local -m 1G job shares the GPU with the step; a -m 3G one waits for it" \
    sh -c "[ '$(ncol "id = $l1" state)' = RUNNING ] && [ '$(ncol "id = $l2" state)' = PENDING ] &&
    echo '$w2' | grep -q '$n1'"
nn cancel "$l1" "$l2" > /dev/null
# hold and suspend act on the step's processes; cancel is Slurm's
out=$(nn hold "$n1" 2>&1)
check "nvq hold of the step: its launches stop ($out)" test "$(growing "$W/u/n1.count" 0.6)" = still
nn release "$n1" > /dev/null
check "nvq release: they go on" test "$(growing "$W/u/n1.count" 0.6)" = grows
out=$(nn suspend "$n1" 2>&1)
for _ in $(seq 100); do [ "$(ncol "id = $n1" state)" = SUSPENDED ] && break; sleep 0.1; done
check "nvq suspend of the step: SUSPENDED, its launches stop ($out)" \
    sh -c "[ '$(ncol "id = $n1" state)' = SUSPENDED ] && [ '$(growing "$W/u/n1.count" 0.6)' = still ]"
nn resume "$n1" > /dev/null 2>&1
for _ in $(seq 100); do [ "$(ncol "id = $n1" state)" = RUNNING ] && break; sleep 0.1; done
check "nvq resume: RUNNING, its launches go on" \
    sh -c "[ '$(ncol "id = $n1" state)' = RUNNING ] && [ '$(growing "$W/u/n1.count" 0.6)' = grows ]"
out=$(nn cancel "$n1" 2>&1); rc=$?
echo "    $out"
check "nvq cancel of the step is refused" test "$rc" != 0
check "... naming scancel" grep -q "scancel $s1" <<< "$out"
st1=$(slurm_state "$s1")
for _ in $(seq 50); do [ "$(ncol "id = $n1" state)" != RUNNING ] && break; sleep 0.1; done
r1=$(sqlite3 "$node_dir/nvq.db" "SELECT j.state, r.exit_code, g.peak_gpu_mem FROM jobs j JOIN runs r ON
    r.job_id = j.id JOIN run_gpus g ON g.run_id = r.id WHERE j.id = $n1")
echo "    Slurm: $st1; the node's history: $r1"
check "its end in the node's history: COMPLETED, exit code 0, its peak 1G from the hook's reports" \
    test "$r1" = "COMPLETED|0|1073741824"
# past its budget: the hook's refusal reaches the node's nvqd, which says why it failed
s2=$(nsb -o "$W/u/n2.out" --gres=shard:1 --gpu-mem=1G --wrap "$F/fake_job alloc 2147483648 0")
st2=$(slurm_state "$s2")
for _ in $(seq 50); do [ -n "$(ncol "slurm_id = $s2 AND state = 'FAILED'" id)" ] && break; sleep 0.1; done
why2=$(ncol "slurm_id = $s2" "state || ': ' || reason")
echo "    Slurm: $st2; the node: $why2"
check "a step past its --gpu-mem: FAILED on the node too, out of GPU memory, exit code 1" \
    sh -c "[ $st2 = FAILED ] && echo '$why2' | grep -q '^FAILED: out of GPU memory: asked 2G more with 0B of its -m 1G in use (exit code 1)'"
# no room beside the node's own jobs: the step is refused before it runs
k0=$(nn submit -g 1 -m 3G -w 0 -- sleep 60 | sed -n 's/^Submitted job \([0-9]*\).*/\1/p')
k1=$(nn submit -g 1 -m 3G -w 1 -- sleep 60 | sed -n 's/^Submitted job \([0-9]*\).*/\1/p')
sleep 1
s3=$(nsb -o "$W/u/n3.out" --gres=shard:2 --gpu-mem=2G --wrap "echo ran")
st3=$(slurm_state "$s3")
echo "    Slurm: $st3; $(grep -m1 'refused' "$W/u/n3.out")"
check "a step with no room beside the node's jobs is refused before it runs, saying why" \
    sh -c "[ $st3 = FAILED ] && ! grep -q '^ran' $W/u/n3.out &&
    grep -q 'nvqd on this node refused step $s3.batch: GPU [01] has no room for it' $W/u/n3.out"
nn cancel "$k0" "$k1" > /dev/null
# nvqd restarts while a step runs: it reattaches to slurmstepd and records the end
s4=$(nsb -o "$W/u/n4.out" --gres=shard:1 --gpu-mem=1G --wrap "$F/fake_job alloc 536870912 3")
until_node "slurm_id = $s4"
kill -TERM "$node_pid"; wait "$node_pid"
"$ROOT/$B/nvqd" -c "$node_dir/nvq.ini" >> "$node_dir/nvqd.log" 2>&1 &
node_pid=$!
st4=$(slurm_state "$s4")
for _ in $(seq 50); do [ "$(ncol "slurm_id = $s4" state)" != RUNNING ] && break; sleep 0.1; done
check "a step running across a restart of the node's nvqd: reattached, its end recorded ($st4)" \
    sh -c "[ '$(ncol "slurm_id = $s4" state)' = COMPLETED ] && grep -q 'job $(ncol "slurm_id = $s4" id): still running' $node_dir/nvqd.log"
kill -TERM "$node_pid"; wait "$node_pid"; node_rc=$?
check "the node's nvqd stops cleanly (exit $node_rc)" test "$node_rc" = 0
if grep -qE "AddressSanitizer|runtime error|LeakSanitizer|still had open handles" "$node_dir/nvqd.log"; then
	echo "FAIL - the node's nvqd's log:"
	grep -A5 -E "AddressSanitizer|runtime error|LeakSanitizer|open handles" "$node_dir/nvqd.log" | head -30
	fails=$((fails + 1))
fi
# the plugin as it was: no nvqd=
contrib/slurm/install.sh "$ROOT/$B/libnvq-hook.so" 1G /var/spool/nvq/slurm > /dev/null
unset FAKE_CKPT_DIR
rm -rf "$node_dir"
