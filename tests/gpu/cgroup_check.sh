#!/usr/bin/env bash
# cgroup_check.sh [BUILD]: --mem and -c enforced on a host of pure cgroup v2
# (Ubuntu's; the GPU machines), where nvqd runs in a cgroup delegated to it
# as systemd's Delegate=yes gives one (nvqd(8) CGROUPS).  No GPU is used
# (virtual GPUs), but CI's hybrid host cannot show it: run it where
# /sys/fs/cgroup is cgroup2 with memory and cpu, as root.  Checks: nvqd
# steps into its leaf nvqd/; a job's memory.max and cpu.max are its --mem and
# -c; a job past its --mem FAILED with the OOM reason; a restarted nvqd,
# started in the leaf as systemd 254+'s DelegateSubgroup=nvqd starts it,
# takes the running job back with its limits; an nvqd under an older systemd
# (INVOCATION_ID, no subgroup) stays in the unit's cgroup and says --mem and
# -c are not enforced.
set -u
cd "$(dirname "$0")/../.."
B=${1:-build}
. tests/gpu/lib.sh
[ "$(id -u)" = 0 ] || { echo "SKIP - needs root (jobs' cgroups are nvqd's as root)"; exit 0; }
gpu_own_cgroup || { echo "SKIP - no cgroup v2 with memory and cpu here"; exit 0; }
CG=$NVQD_CGROUP
gpu_nvqd cgroup "[gpus]" "virtual = 1x16G" "[resources]" "cpus = 8" "memory = 8G"
cleanup() {
	kill "$NVQD_PID" "${SD_PID:-}" 2> /dev/null
	pkill -9 -f "$T/" 2> /dev/null
	gpu_cgroup_gone
	find "$CG-sd" -depth -type d -exec rmdir {} + 2> /dev/null
}
trap cleanup EXIT
state() { "$NVQ" show --json "$1" | head -1 | grep -o '"state": *"[A-Z_]*"' | grep -o '[A-Z_]*"$' | tr -d '"'; }
rel=${CG#/sys/fs/cgroup}
echo "    nvqd's cgroup: $(sed -n 's/^0:://p' /proc/$NVQD_PID/cgroup)"
check "nvqd stepped into its leaf" grep -qx "0::$rel/nvqd" /proc/$NVQD_PID/cgroup
check "jobs' cgroups under the delegated one" grep -q "jobs run in cgroups under $CG/nvq$" "$T/nvqd.log"
check "no warning about controllers" sh -c "! grep -q 'controller for jobs' \"$T/nvqd.log\""
grep "host memory limits\|controller" "$T/nvqd.log" | sed 's/^/    log: /'
# a job's limits as the kernel holds them
cat > "$T/limits.sh" <<'EOF'
cg=/sys/fs/cgroup$(sed -n 's/^0:://p' /proc/self/cgroup)
echo "memory.max $(cat $cg/memory.max) cpu.max $(cat $cg/cpu.max)"
EOF
id=$("$NVQ" submit --parsable -g 0 -c 2 --mem 300M bash "$T/limits.sh")
"$NVQ" wait "$id" > /dev/null 2>&1
out=$("$NVQ" log "$id" 2>&1)
echo "    job $id: $out"
check "memory.max = --mem 300M" grep -q "memory.max 314572800 " <<< "$out"
check "cpu.max = -c 2" grep -q "cpu.max 200000 100000" <<< "$out"
# past its --mem: killed by the kernel in its cgroup, told so
o=$("$NVQ" submit --parsable -g 0 --mem 200M python3 -c 'b = bytearray(800 << 20); print(len(b))')
"$NVQ" wait "$o" > /dev/null 2>&1
check "over its --mem: FAILED" test "$(state "$o")" = FAILED
check "with the OOM reason" grep -q "over its --mem 200M of host memory" <<< "$("$NVQ" show "$o")"
# restart: the next nvqd starts in the leaf (DelegateSubgroup=nvqd) and takes the job back
cat > "$T/long.sh" <<'EOF'
cg=/sys/fs/cgroup$(sed -n 's/^0:://p' /proc/self/cgroup)
sleep 4
echo "after restart: memory.max $(cat $cg/memory.max) cpu.max $(cat $cg/cpu.max)"
EOF
l=$("$NVQ" submit --parsable -g 0 -c 1 --mem 100M bash "$T/long.sh")
for _ in $(seq 50); do [ "$(state "$l")" = RUNNING ] && break; sleep 0.1; done
kill "$NVQD_PID"; wait "$NVQD_PID" 2> /dev/null
sh -c 'echo $$ > "$0/nvqd/cgroup.procs" && exec "$@"' "$CG" "$NVQD" -c "$T/nvq.ini" 2> "$T/nvqd2.log" &
NVQD_PID=$!
for _ in $(seq 100); do "$NVQ" list > /dev/null 2>&1 && break; sleep 0.1; done
check "restarted in the leaf: same jobs' cgroups" grep -q "jobs run in cgroups under $CG/nvq$" "$T/nvqd2.log"
check "the running job taken back" test "$(state "$l")" = RUNNING
"$NVQ" wait "$l" > /dev/null 2>&1
out=$("$NVQ" log "$l" 2>&1)
echo "    job $l: $out"
check "COMPLETED with its limits" bash -c "test '$(state "$l")' = COMPLETED && grep -q 'memory.max 104857600 cpu.max 100000 100000' <<< '$out'"
# an older systemd: INVOCATION_ID set and not in a leaf: stays, and says so
mkdir -p "$CG-sd"
printf '[daemon]\nsocket = %s/sd.sock\ndatabase = %s/sd.db\nspool = %s/sd-spool\n[gpus]\nvirtual = 1x16G\n' \
    "$T" "$T" "$T" > "$T/sd.ini"
INVOCATION_ID=cgroupcheck sh -c 'echo $$ > "$0/cgroup.procs" && exec "$@"' "$CG-sd" "$NVQD" -c "$T/sd.ini" 2> "$T/sd.log" &
SD_PID=$!
for _ in $(seq 100); do NVQ_SOCKET=$T/sd.sock "$NVQ" list > /dev/null 2>&1 && break; sleep 0.1; done
check "older systemd: nvqd stays in the unit's cgroup" grep -qx "0::$rel-sd" /proc/$SD_PID/cgroup
check "and says --mem is not enforced, with the way out" grep -q "DelegateSubgroup=nvqd" "$T/sd.log"
if [ "$fails" -gt 0 ]; then
	echo "    --- first job: $("$NVQ" show 1 2>&1 | grep -i 'state\|reason' | tr '\n' ' ')"
	echo "    --- nvqd's logs:"; tail -n 25 "$T/nvqd.log" "$T/nvqd2.log" 2> /dev/null | sed 's/^/    /'
fi
echo "cgroup_check: $fails failed"
exit $((fails > 0))
