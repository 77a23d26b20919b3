#!/usr/bin/env bash
# export_check.sh [BUILD_DIR]: memory a job exports itself with
# cuMemExportToShareableHandle, as NCCL shares its buffers between ranks.
# (1) Outside nvq, with the real driver: process A makes 256 MiB with
# cuMemCreate and exports it; process B takes the descriptor (pidfd_getfd)
# and maps it.  nvq-ckpt suspends both, as nvqd would (with the NVML check),
# and resumes them; each then reads the memory.  This says what the driver's
# checkpoint does with such memory (on the H100, driver 580: the suspend
# works, the importer's restore fails with 801, not supported).  (2) In nvq: A alone as a job; its hook
# reports the exported bytes, and nvq suspend must be refused with the
# reason before anything is touched.  Run on a machine with an NVIDIA GPU.
set -u
cd "$(dirname "$0")/../.."
B=${1:-build}
. tests/gpu/lib.sh
gpu_nvqd export "log_level = debug"
cat > "$T/vmm.py" <<'PY'
# vmm.py export READY SECONDS | import READY SECONDS PID FD
import ctypes as C, os, sys, time
cu = C.CDLL("libcuda.so.1"); libc = C.CDLL(None, use_errno=True)
U64, P = C.c_ulonglong, C.POINTER
for name, args in [("cuMemCreate", [P(U64), C.c_size_t, C.c_void_p, U64]),
                   ("cuMemAddressReserve", [P(U64), C.c_size_t, C.c_size_t, U64, U64]),
                   ("cuMemMap", [U64, C.c_size_t, C.c_size_t, U64, U64]),
                   ("cuMemSetAccess", [U64, C.c_size_t, C.c_void_p, C.c_size_t]),
                   ("cuMemsetD32_v2", [U64, C.c_uint, C.c_size_t]),
                   ("cuMemcpyDtoH_v2", [C.c_void_p, U64, C.c_size_t]),
                   ("cuMemExportToShareableHandle", [C.c_void_p, U64, C.c_int, U64]),
                   ("cuMemImportFromShareableHandle", [P(U64), C.c_void_p, C.c_int])]:
    getattr(cu, name).argtypes = args
def ck(r, what):
    if r != 0:
        print("%s: CUDA error %d" % (what, r), flush=True); sys.exit(1)
class Loc(C.Structure): _fields_ = [("type", C.c_int), ("id", C.c_int)]
class Prop(C.Structure):
    _fields_ = [("type", C.c_int), ("handles", C.c_int), ("loc", Loc), ("win32", C.c_void_p),
                ("flags", C.c_ubyte * 8)]
class Access(C.Structure): _fields_ = [("loc", Loc), ("flags", C.c_int)]
N = 256 << 20
ck(cu.cuInit(0), "cuInit")
dev, ctx = C.c_int(), C.c_void_p()
ck(cu.cuDeviceGet(C.byref(dev), 0), "cuDeviceGet")
ck(cu.cuDevicePrimaryCtxRetain(C.byref(ctx), dev), "retain")
ck(cu.cuCtxSetCurrent(ctx), "cuCtxSetCurrent")
h, va = U64(), U64()
if sys.argv[1] == "export":
    prop = Prop(type=1, handles=1, loc=Loc(1, 0))
    ck(cu.cuMemCreate(C.byref(h), N, C.byref(prop), 0), "cuMemCreate")
else:
    pidfd = libc.syscall(434, int(sys.argv[4]), 0)
    fd = libc.syscall(438, pidfd, int(sys.argv[5]), 0)
    if pidfd < 0 or fd < 0:
        print("pidfd_getfd: errno %d" % C.get_errno(), flush=True); sys.exit(1)
    ck(cu.cuMemImportFromShareableHandle(C.byref(h), C.c_void_p(fd), 1), "import")
ck(cu.cuMemAddressReserve(C.byref(va), N, 0, 0, 0), "reserve")
ck(cu.cuMemMap(va.value, N, 0, h.value, 0), "map")
acc = Access(loc=Loc(1, 0), flags=3)
ck(cu.cuMemSetAccess(va.value, N, C.byref(acc), 1), "access")
if sys.argv[1] == "export":
    ck(cu.cuMemsetD32_v2(va.value, 7, N // 4), "memset")
    fd = C.c_int()
    ck(cu.cuMemExportToShareableHandle(C.byref(fd), h.value, 1, 0), "export")
    line = "%d %d" % (os.getpid(), fd.value)
else:
    line = "imported"
cu.cuCtxSynchronize()
with open(sys.argv[2], "w") as f: f.write(line + "\n")
time.sleep(float(sys.argv[3]))
buf = (C.c_uint * 1024)()
ok = all(cu.cuMemcpyDtoH_v2(buf, va.value + off, 4096) == 0 and all(x == 7 for x in buf)
         for off in (0, N // 2, N - 4096))
print("%s: memory %s" % (sys.argv[1], "intact" if ok else "NOT intact"), flush=True)
sys.exit(0 if ok else 1)
PY
apps() { nvidia-smi --query-compute-apps=pid,used_memory --format=csv,noheader | grep -E "^($1|$2)," | tr '\n' ' '; }

echo "(1) the driver's checkpoint of exported and imported memory, outside nvq"
python3 "$T/vmm.py" export "$T/a.ready" 25 > "$T/a.out" 2>&1 & pa=$!
for _ in $(seq 300); do [ -s "$T/a.ready" ] && break; sleep 0.1; done
read -r apid afd < "$T/a.ready"
python3 "$T/vmm.py" import "$T/b.ready" 20 "$apid" "$afd" > "$T/b.out" 2>&1 & pb=$!
for _ in $(seq 300); do [ -s "$T/b.ready" ] && break; sleep 0.1; done
echo "    ready: exporter $(cat "$T/a.ready"), importer $(cat "$T/b.ready" 2>/dev/null || cat "$T/b.out")"
echo "    nvidia-smi: $(apps "$pa" "$pb")"
"$B/nvq-ckpt" -n libnvidia-ml.so.1 suspend "$pa" "$pb" > "$T/ckpt" 2>&1; rc=$?
echo "    nvq-ckpt suspend: rc $rc: $(tr '\n' ' ' < "$T/ckpt")"
echo "    nvidia-smi after: $(apps "$pa" "$pb")"
if [ "$rc" = 0 ]; then
	"$B/nvq-ckpt" resume "$pa" "$pb" > "$T/ckpt2" 2>&1
	echo "    nvq-ckpt resume: rc $?: $(tr '\n' ' ' < "$T/ckpt2")"
fi
for _ in $(seq 400); do kill -0 "$pa" 2>/dev/null || kill -0 "$pb" 2>/dev/null || break; sleep 0.1; done
kill -9 "$pa" "$pb" 2>/dev/null && echo "    (still there 40 s later: killed)"
echo "    after: $(cat "$T/a.out" "$T/b.out" | tr '\n' ' ')"

echo "(2) in nvq: a job that exported memory is not suspended"
a=$("$NVQ" submit --parsable -m 4G -o "$T/out" -e "$T/err" -- python3 "$T/vmm.py" export "$T/j.ready" 15)
for _ in $(seq 600); do [ -s "$T/j.ready" ] && break; sleep 0.1; done
sleep 1.5	# the hook's report
out=$("$NVQ" suspend "$a" 2>&1); rc=$?
echo "    nvq suspend: rc $rc: $out"
check "nvq suspend is refused" test "$rc" != 0
check "and says why" grep -q "cuMemExportToShareableHandle" <<< "$out"
check "the job runs on" test "$("$NVQ" show "$a" | awk '$1 == "state" {print $2}')" = RUNNING
"$NVQ" wait "$a" > /dev/null 2>&1
echo "    job: $(cat "$T/out")"
check "the job completed with its memory intact" grep -q "^export: memory intact" "$T/out"
echo "export check: $fails failed"
[ "$fails" = 0 ]
