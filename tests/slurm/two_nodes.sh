# two_nodes.sh: two Slurm nodes, each slurmd in a network namespace of its
# own (addresses 10.213.0.11 and .12 on a bridge that only this machine
# has), sourced by check.sh after the one-node checks: the same plugin,
# nvqd in front of them, jobs spread over both nodes' GPUs, a job that
# waits, per-node peaks in the history. Uses check.sh's check, ROOT, B,
# F, W and nq-like helpers of its own.

two_net=10.213.0
two_up() {
	local n
	ip link add nvqbr0 type bridge && ip addr add "$two_net.1/24" dev nvqbr0 && ip link set nvqbr0 up ||
	    return 1
	for n in 1 2; do
		ip netns add "nvqn$n" && ip link add "nvqv$n" type veth peer name "nvqv${n}p" &&
		    ip link set "nvqv${n}p" netns "nvqn$n" && ip link set "nvqv$n" master nvqbr0 &&
		    ip link set "nvqv$n" up && ip netns exec "nvqn$n" ip link set lo up &&
		    ip netns exec "nvqn$n" ip addr add "$two_net.1$n/24" dev "nvqv${n}p" &&
		    ip netns exec "nvqn$n" ip link set "nvqv${n}p" up || return 1
	done
}
two_down() {
	local n p
	for n in 1 2; do
		p=$(cat "/run/slurmd.n$n.pid" 2> /dev/null) && kill "$p" 2> /dev/null
	done
	p=$(cat /run/slurmctld.pid 2> /dev/null) && kill "$p" 2> /dev/null
	sleep 0.5
	for n in 1 2; do ip netns del "nvqn$n" 2> /dev/null; ip link del "nvqv$n" 2> /dev/null; done
	ip link del nvqbr0 2> /dev/null
	rm -f /run/slurmd.n[12].pid
}

echo "== two nodes, each slurmd in a network namespace"
SLURM_CI_KEEP_MUNGE=1 bash .ci/slurm-setup.sh stop > /dev/null 2>&1	# the one-node cluster; munged stays
two_down
if ! two_up; then
	echo "FAIL - network namespaces: cannot make them here (ip netns, veth, bridge)"
	fails=$((fails + 1))
	two_down
	return 0
fi
conf=/etc/slurm/slurm.conf
cp "$conf" "$W/slurm.conf.one"
cp /etc/slurm/gres.conf "$W/gres.conf.one"
# the one-node file with the nodes' lines, the controller's address and
# per-node daemon files changed
sed -e "s/^SlurmctldHost=\([^(]*\)(.*)/SlurmctldHost=\1($two_net.1)/" \
    -e 's|^SlurmdSpoolDir=.*|SlurmdSpoolDir=/var/spool/slurmd.%n|' \
    -e 's|^SlurmdPidFile=.*|SlurmdPidFile=/run/slurmd.%n.pid|' \
    -e 's|^SlurmdLogFile=.*|SlurmdLogFile=/var/log/slurm/slurmd.%n.log|' \
    -e '/^NodeName=/d' -e '/^PartitionName=/d' "$W/slurm.conf.one" > "$conf"
grep -q '^SlurmdParameters=config_overrides' "$conf" || echo "SlurmdParameters=config_overrides" >> "$conf"
{
	echo "NodeName=n1 NodeAddr=$two_net.11 CPUs=4 RealMemory=1000 Gres=gpu:2,shard:8 State=UNKNOWN"
	echo "NodeName=n2 NodeAddr=$two_net.12 CPUs=4 RealMemory=1000 Gres=gpu:2,shard:8 State=UNKNOWN"
	echo "PartitionName=debug Nodes=n[1-2] Default=YES MaxTime=INFINITE State=UP"
} >> "$conf"
sed -e 's/^NodeName=[^ ]* /NodeName=n[1-2] /' "$W/gres.conf.one" > /etc/slurm/gres.conf
mkdir -p /var/spool/slurmd.n1 /var/spool/slurmd.n2
slurmctld -c
for _ in $(seq 100); do scontrol ping > /dev/null 2>&1 && break; sleep 0.1; done
# nsenter, not ip netns exec: that remounts /sys, hiding the cgroup file system slurmd needs
nsenter --net=/run/netns/nvqn1 slurmd -N n1
nsenter --net=/run/netns/nvqn2 slurmd -N n2
for _ in $(seq 150); do
	[ "$(sinfo -h -o '%T' -n n1,n2 | sort -u | xargs)" = idle ] && break
	sleep 0.2
done
sinfo -N -o '%N %T %G' | sed 's/^/    /'
check "two nodes up, each slurmd in its own network namespace" \
    sh -c "[ \"\$(sinfo -h -N -o '%N %T' | xargs)\" = 'n1 idle n2 idle' ] &&
    ip netns pids nvqn1 | grep -qx \"\$(cat /run/slurmd.n1.pid)\" &&
    ip netns pids nvqn2 | grep -qx \"\$(cat /run/slurmd.n2.pid)\""

# nvqd in front of both, as the guide configures it
two_dir=$(mktemp -d /tmp/nvq-two.XXXXXX)
chmod 755 "$two_dir"
{
	printf '[daemon]\nsocket = %s/sock\ndatabase = %s/nvq.db\nspool = %s/spool\n' \
	    "$two_dir" "$two_dir" "$two_dir"
	printf '[gpus]\nvirtual = 1x16G\n'
	sed -n '/^\[cluster\]$/,/^```$/p' contrib/slurm/README.md | grep -v '^```'
} > "$two_dir/nvq.ini"
rm -rf /var/spool/nvq/slurm/[0-9]*
"$ROOT/$B/nvqd" -c "$two_dir/nvq.ini" > "$two_dir/nvqd.log" 2>&1 &
two_pid=$!
for _ in $(seq 100); do [ -S "$two_dir/sock" ] && break; sleep 0.05; done
tq() { (cd "$W/u" && runuser -u nobody -- env "LD_LIBRARY_PATH=$F/fake" \
    "$ROOT/$B/nvq" -s "$two_dir/sock" "$@"); }
tcol() { sqlite3 "$two_dir/nvq.db" "SELECT $2 FROM jobs WHERE id = $1"; }
# 3G jobs: one per GPU (4 shards each), four GPUs on two nodes; a fifth waits
for i in 1 2 3 4 5; do
	t[$i]=$(tq submit -n two -g 1 -m 3G -- "$F/fake_job" alloc 2147483648 4 |
	    sed -n 's/^Submitted job \([0-9]*\).*/\1/p')
done
for _ in $(seq 300); do
	[ "$(sqlite3 "$two_dir/nvq.db" "SELECT count(*) FROM jobs WHERE name = 'two' AND
	    state = 'RUNNING'")" = 4 ] && break
	sleep 0.1
done
on=$(sqlite3 "$two_dir/nvq.db" "SELECT group_concat(gpu_uuids, ' ') FROM (SELECT gpu_uuids FROM jobs
    WHERE name = 'two' AND state = 'RUNNING' ORDER BY gpu_uuids)")
w5=$(tq list | awk '$4 == "PENDING"')
echo "    four running on: $on; waiting: $w5"
check "four -m 3G jobs through nvq run on the four GPUs of the two nodes" test "$on" = "n1:0 n1:1 n2:0 n2:1"
check "a fifth waits for a GPU with room" sh -c "echo '$w5' | grep -q 'Slurm job [0-9]*: Resources'"
for i in 1 2 3 4 5; do tq wait "${t[$i]}"; done
peaks=$(sqlite3 "$two_dir/nvq.db" "SELECT group_concat(g.gpu_uuid || '=' || g.peak_gpu_mem, ' ') FROM
    (SELECT g.gpu_uuid, g.peak_gpu_mem FROM jobs j JOIN runs r ON r.job_id = j.id JOIN run_gpus g
    ON g.run_id = r.id WHERE j.name = 'two' AND j.state = 'COMPLETED' ORDER BY j.id) g")
echo "    their peaks: $peaks"
check "all five completed, each with its peak from its node's plugin" \
    sh -c "[ \$(echo '$peaks' | grep -o '=2147483648' | wc -l) = 5 ] && echo '$peaks' | grep -q 'n1:' &&
    echo '$peaks' | grep -q 'n2:'"
kill -TERM "$two_pid"; wait "$two_pid"
check "nvqd in front of two nodes stopped cleanly" sh -c "! grep -qE 'open handles|Sanitizer|runtime error' $two_dir/nvqd.log"
two_down
rm -rf "$two_dir" /var/spool/slurmd.n1 /var/spool/slurmd.n2
cp "$W/slurm.conf.one" "$conf"
cp "$W/gres.conf.one" /etc/slurm/gres.conf
