#!/usr/bin/env bash
# chain_trace.sh: where one job's turn goes, step by step, from the kernel's
# own trace (ftrace: system calls, forks, execs, exits; no ptrace, so the
# processes run at their speed).  N jobs of bench/stamp.c run one at a time
# (max_running_jobs = 1, sync = normal); for each turn, from nvqd handing
# the job to the standby shim to the next such hand-off, the median of each
# step:
#   handoff -> standby recvmsg   the standby shim wakes with the job
#   -> shim clone                its setup (ticket, status file, cgroup, ...)
#   -> job first syscall         the job's process runs
#   -> job execve                its setup (output files, credentials, ...)
#   -> exec done, -> main        the kernel's exec, then the dynamic loader,
#                                the hook and libc up to main()
#   -> job exit, -> shim wakes   the job's end, and its supervisor told
#   -> shim tells (or exits)     the supervisor's record, and nvqd told
#                                (the standby's socket, else the exit)
#   -> nvqd wakes                nvqd awake
#   -> next handoff              nvqd: the end's and the start's commits
# Where the next job was prepared ahead (nvqd handed it to the standby, and
# its process waits at its gate, before its turn: engine_ahead), a turn is
# from nvqd's word 'g' to the next instead:
#   go -> shim takes its ticket  the standby wakes on the word
#   -> job execve                the gate opened: the job's process execs
#   ...                          then as above, to
#   -> next go                   nvqd: one commit for the end and the start
# NVQD=1 also prints nvqd's own system calls in one turn, SHIM=1 the
# standby's (every system call and page fault); SUBMITS=1 keeps a
# client submitting (held jobs, one process each, as bench/queue.sh's loop)
# while the chain runs, to see what submits cost it; QUEUE=1 traces
# bench/queue.sh's one-at-a-time round instead: N jobs of `true` (found
# through PATH), each submitted by its own nvq, running as they come.
# Needs root
# (tracefs).  Usage: bench/chain_trace.sh [BUILD] [N]  (BUILD: build)
set -euo pipefail
cd "$(dirname "$0")/.."
B=$(cd "${1:-build}" && pwd); N=${2:-40}
T=/sys/kernel/tracing
[ "$(id -u)" = 0 ] || { echo "chain_trace.sh: needs root (ftrace)" >&2; exit 2; }
[ -d $T/events ] || mount -t tracefs nodev $T
D=$(mktemp -d /tmp/nvq-trace.XXXXXX)
trap 'echo 0 > $T/tracing_on; echo > $T/set_event; echo > $T/trace; kill $(jobs -p) 2>/dev/null || true; rm -rf "$D"' EXIT
cc -O2 -o "$D/stamp" bench/stamp.c
. bench/lib.sh
BENCH_NVQ=$B/nvq
bench_nvqd "$D/q" "$B/nvqd" "sync = normal" "[gpus]" "virtual = 1x16G" "[limits]" \
    "max_running_jobs = 1"
[ "${QUEUE:-0}" = 1 ] ||
	"$B/nvq" -s "$D/q/sock" submit --hold --array "1-$N" -g 0 -o "$D/out.%j" "$D/stamp" > /dev/null
echo 0 > $T/tracing_on; echo > $T/trace; echo 64000 > $T/buffer_size_kb
echo > $T/set_event
for e in sched:sched_process_fork sched:sched_process_exec sched:sched_process_exit \
    ${SHIM:+raw_syscalls:sys_enter exceptions:page_fault_user}; do
	echo "$e" >> $T/set_event
done
for s in sendmsg sendto recvmsg recvfrom clone clone3 execve openat mkdir rmdir rename pwrite64 write \
    exit_group epoll_wait rt_sigtimedwait wait4 unlink ppoll fdatasync; do
	echo "syscalls:sys_enter_$s" >> $T/set_event; echo "syscalls:sys_exit_$s" >> $T/set_event
done
if [ "${SUBMITS:-0}" = 1 ]; then
	while :; do "$B/nvq" -s "$D/q/sock" submit --hold -g 0 true > /dev/null || break; done &
	sleep 0.2
fi
echo 1 > $T/tracing_on
if [ "${QUEUE:-0}" = 1 ]; then
	t0=$(date +%s%N)
	for ((i = 0; i < N; i++)); do "$B/nvq" -s "$D/q/sock" submit -g 0 true > /dev/null; done
	t1=$(date +%s%N)
	"$B/nvq" -s "$D/q/sock" wait $(seq 1 "$N") > /dev/null
	echo "$N submits in $(( (t1 - t0) / 1000000 )) ms, all ended $(( ($(date +%s%N) - t0) / 1000000 )) ms after the first"
else
	"$B/nvq" -s "$D/q/sock" release 1_ > /dev/null
	"$B/nvq" -s "$D/q/sock" wait $(seq 1 "$N") > /dev/null
fi
echo 0 > $T/tracing_on; echo > $T/set_event
cp $T/trace "$D/trace"; echo > $T/trace; [ -z "${KEEP:-}" ] || cp "$D/trace" "$KEEP"
python3 - "$D/trace" "${NVQD:-0}" "${SHIM:-0}" <<'PY'
import re, sys
ev = []		# (time, comm, pid, name, rest); name "sys_X" on entry, "sys_X ->" on return
for l in open(sys.argv[1]):
    m = re.match(r'\s*(.+?)-(\d+)\s+\[\d+\]\s+\S+\s+([\d.]+): (.*)', l)
    if not m:
        continue
    rest = m.group(4)
    if rest.startswith('sys_'):
        n = re.match(r'(sys_\w+)(\(| -> )(.*)', rest)
        if not n:
            continue
        name, rest = n.group(1) + ('' if n.group(2) == '(' else ' ->'), n.group(3)
    else:
        name, _, rest = rest.partition(': ')
    ev.append((float(m.group(3)), m.group(1), int(m.group(2)), name, rest))
def job_end(first, shim, child):
    """From the job's exec to nvqd awake after its end: what every turn has."""
    exd = first(lambda e: e[2] == child and e[3] == 'sched_process_exec')
    wr = first(lambda e: e[2] == child and e[0] > exd[0] and (e[3] == 'sys_write' or
               e[3] == 'sys_exit_group'))
    jx = first(lambda e: e[2] == child and e[3] == 'sched_process_exit')
    sw = first(lambda e: e[2] == shim and e[0] > jx[0])
    # nvqd learns of the end from the shim's socket, or else its exit (pidfd)
    tell = first(lambda e: e[2] == shim and e[0] > jx[0] and (e[3] == 'sys_sendto' or
                 e[3] == 'sched_process_exit'))
    nw = first(lambda e: e[1].startswith('nvqd') and e[0] > tell[0] and
               e[3] == 'sys_epoll_wait ->')
    return (('-> exec done', exd), ('-> main', wr), ('-> job exit', jx), ('-> shim wakes', sw),
            ('-> shim tells (or exits)', tell), ('-> nvqd wakes', nw))

def handoff_turn(first):
    """From nvqd's hand-off of the job to the standby."""
    rv = first(lambda e: e[3] == 'sys_recvmsg' and e[1].startswith('nvq-shim'))
    shim = rv[2]
    cl = first(lambda e: e[2] == shim and e[3] in ('sys_clone3', 'sys_clone'))
    fork = first(lambda e: e[3] == 'sched_process_fork' and e[2] == shim)
    child = int(re.search(r'child_pid=(\d+)', fork[4]).group(1))
    c1 = first(lambda e: e[2] == child)
    ex = first(lambda e: e[2] == child and e[3] == 'sys_execve')
    return (('handoff -> standby recvmsg', rv), ('-> shim clone', cl),
            ('-> job first syscall', c1), ('-> job execve', ex)) + job_end(first, shim, child)

forks = {}
for e in ev:
    if e[3] == 'sched_process_fork':
        m = re.search(r'child_pid=(\d+)', e[4])
        if m:
            forks[int(m.group(1))] = e[2]

def go_turn(first):
    """From nvqd's word 'g': the standby woken by it takes its ticket; its
    job's process (a fork of it, made before the word) execs."""
    rn = first(lambda e: e[3] == 'sys_rename' and e[1].startswith('nvq-shim'))
    shim = rn[2]
    ex = first(lambda e: e[3] == 'sys_execve' and forks.get(e[2]) == shim)
    return (('go -> shim takes its ticket', rn), ('-> job execve', ex)) + \
        job_end(first, shim, ex[2])

def turns(marks, head, last):
    steps = {}
    for a, b in zip(marks, marks[1:]):
        seg = ev[a:b + 1]
        first = lambda f: next(e for e in seg if f(e))
        try:
            named = head(first) + ((last, ev[b]),)
        except (StopIteration, KeyError):
            continue
        prev = ev[a][0]
        for n, e in named:
            steps.setdefault(n, []).append(e[0] - prev)
            prev = e[0]
        steps.setdefault('turn', []).append(ev[b][0] - ev[a][0])
    return steps

ho = [k for k, e in enumerate(ev) if e[3] == 'sys_sendmsg' and e[1].startswith('nvqd')]
# Prepared ahead (the standby has the job, and its process waits at its
# gate, before the turn): the turn is then from nvqd's word 'g' (a one-byte
# sendto) to the next, and the hand-offs fall anywhere in it.
go = [k for k, e in enumerate(ev) if e[3] == 'sys_sendto' and e[1].startswith('nvqd') and
      re.search(r'len: (0x)?0*1,', e[4])]
if len(go) > len(ho) // 2:
    steps = turns(go, go_turn, '-> next go')
    ho = go
else:
    steps = turns(ho, handoff_turn, '-> next handoff')
med = lambda v: sorted(v)[len(v) // 2] * 1e3
mean = lambda v: sum(v) / len(v) * 1e3
print("%d turns traced:                 median     mean" % len(steps.get('turn', [])))
for n, v in steps.items():
    print("  %-28s %7.3f  %7.3f ms" % (n, med(v), mean(v)))
if sys.argv[3] == '1' and len(ho) > 2:
    a = ho[len(ho) // 2]; t0 = ev[a][0]
    rv = next(e for e in ev[a:] if e[3] == 'sys_recvmsg' and e[1].startswith('nvq-shim'))
    print("the standby, from its hand-off to the job's process (ms after the hand-off):")
    for t, comm, pid, name, rest in ev[a:]:
        if pid != rv[2] or t < rv[0] or name.endswith('->'):
            continue
        print("  %8.3f  %-22s %s" % ((t - t0) * 1e3, name, rest[:60]))
        if name == 'sched_process_fork':
            break
if sys.argv[2] == '1' and len(ho) > 2:
    b = ho[len(ho) // 2]; tb = ev[b][0]; me = ev[b][2]
    tells = [e[0] for e in ev if e[0] < tb and e[1].startswith('nvq-shim') and
             e[3] in ('sys_sendto', 'sched_process_exit')]
    start = max(tells) if tells else tb - 0.001
    print("nvqd, from the shim telling the end to the next hand-off (ms before it):")
    nw = 0
    for t, comm, pid, name, rest in ev:
        if pid != me or t < start or t > tb:
            continue
        if name.startswith('sys_pwrite64'):
            nw += 1
            continue
        if nw:
            print("  %8.3f  (%d pwrite64: pages of a commit)" % ((t - tb) * 1e3, nw // 2)); nw = 0
        if not name.endswith('->'):
            print("  %8.3f  %-22s %s" % ((t - tb) * 1e3, name, rest[:50]))
PY
