#!/bin/bash
# ckpt_probe.sh [BUILD]: nvq-ckpt against a PyTorch process holding 1 GiB,
# outside nvq (docs/gpu-results.md has what it found):
#   - ROUNDS (3) rounds of its wall time beside the "ok" it prints (seconds
#     from its main()), suspend with and without NVML's check (-n) and
#     resume; ALT=BUILD2 runs another build's in turn;
#   - a fresh process's dlopen of libcuda and cuInit, with the holder
#     running and checkpointed;
#   - WARM_ROUNDS (2) pairs: a restore from a process that called cuInit
#     while the holder ran, against nvq-ckpt resume, each after WAIT (0.5)
#     seconds checkpointed;
#   - where strace is installed, its view of a suspend.
cd "$(dirname "$0")/../.." || exit 1
B=${1:-build}
. tests/gpu/lib.sh
T=$(mktemp -d /tmp/nvq-ckprobe.XXXXXX)
python3 tests/gpu/holder.py 1 60 "$T/p" > "$T/out" 2>&1 &
pid=$!
trap 'kill $pid 2>/dev/null' EXIT
wait_progress "$T/p" 5 "$pid" || { echo "holder never ran"; cat "$T/out"; exit 1; }
ck() {	# LABEL ARGS...
	local t0 t1 out
	t0=$(now); out=$("$PWD/$B/nvq-ckpt" "${@:2}" 2>&1); t1=$(now)
	echo "$1: wall $(awk -v a="$t0" -v b="$t1" 'BEGIN { printf "%.3f", b - a }') s; $(echo "$out" | tr '\n' ' ')"
}
for r in $(seq ${ROUNDS:-3}); do
	for b in $B ${ALT:-}; do
		B=$b ck "$b suspend -n" -n libnvidia-ml.so.1 suspend "$pid"; sleep 0.5
		B=$b ck "$b resume" resume "$pid"; sleep 1
		B=$b ck "$b suspend" suspend "$pid"; sleep 0.5
		B=$b ck "$b resume" resume "$pid"; sleep 1
	done
done
# a fresh process's dlopen of libcuda, cuInit and one state query, with
# the holder running and with it checkpointed (nothing else on the GPU)
init() {
	python3 -c 'import ctypes, sys, time
t0 = time.time(); l = ctypes.CDLL("libcuda.so.1"); t1 = time.time()
r = l.cuInit(0); t2 = time.time()
st = ctypes.c_int(-1); q = l.cuCheckpointProcessGetState(int(sys.argv[1]), ctypes.byref(st)); t3 = time.time()
print("%s: dlopen %.3f s, cuInit %.3f s (%d), state %.3f s (%d: %d)" % (sys.argv[2], t1 - t0, t2 - t1, r, t3 - t2, q, st.value))' "$pid" "$1"
}
echo "persistence mode: $(nvidia-smi --query-gpu=persistence_mode --format=csv,noheader -i 0)"
for r in 1 2; do
	init "holder running"
	"$PWD/$B/nvq-ckpt" suspend "$pid" > /dev/null
	init "holder checkpointed"
	"$PWD/$B/nvq-ckpt" resume "$pid" > /dev/null
	sleep 0.5
done
# the restore from a process that called cuInit while the holder still ran
# (warm), against nvq-ckpt resume (its cuInit while the holder is
# checkpointed), in turns, each after WAIT seconds checkpointed
for r in $(seq "${WARM_ROUNDS:-2}"); do
	python3 -c 'import ctypes, subprocess, sys, time
l = ctypes.CDLL("libcuda.so.1"); t0 = time.time(); l.cuInit(0); t1 = time.time()
pid, ck = int(sys.argv[1]), sys.argv[2]
subprocess.run([ck, "suspend", str(pid)], stdout=subprocess.DEVNULL, check=True)
time.sleep(float(sys.argv[3]))
a = ctypes.create_string_buffer(64); t2 = time.time()
r1 = l.cuCheckpointProcessRestore(pid, a); t3 = time.time()
r2 = l.cuCheckpointProcessUnlock(pid, a); t4 = time.time()
print("warm process: cuInit %.3f s before; restore %.3f s (%d), unlock %.3f s (%d): %.3f s" % (t1 - t0, t3 - t2, r1, t4 - t3, r2, t4 - t2))' \
	    "$pid" "$PWD/$B/nvq-ckpt" "${WAIT:-0.5}"
	sleep 1
	"$PWD/$B/nvq-ckpt" suspend "$pid" > /dev/null; sleep "${WAIT:-0.5}"
	t0=$(now); out=$("$PWD/$B/nvq-ckpt" resume "$pid" | tr '\n' ' '); t1=$(now)
	echo "nvq-ckpt resume: wall $(el "$t0" "$t1") s; $out"
	sleep 1
done
if command -v strace > /dev/null; then
	strace -f -tt -T -o "$T/st" "$PWD/$B/nvq-ckpt" -n libnvidia-ml.so.1 suspend "$pid" > /dev/null
	echo "strace, suspend -n: the last 25 lines and the slowest 15 calls:"
	tail -25 "$T/st"
	grep -o '<[0-9.]*>$' "$T/st" | tr -d '<>' | sort -g | tail -5 | tr '\n' ' '; echo
	awk -F'<' '{ t = $NF; sub(/>$/, "", t); if (t + 0 > 0.005) print }' "$T/st" | head -15
	sleep 0.5; "$PWD/$B/nvq-ckpt" resume "$pid" > /dev/null
fi
kill $pid
