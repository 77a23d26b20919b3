#!/bin/bash
# offload_probe.sh [BUILD] [GIB] [STAGING...]: builds offload_probe.c with the
# GPU machine's gcc and runs it for each staging kind; after each offload
# the driver's checkpoint (nvq-ckpt from BUILD) suspends and resumes what
# is left of the process, timed, before the probe maps its memory back.
cd "$(dirname "$0")/../.." || exit 1
B=${1:-build}; GIB=${2:-30}; shift 2
KINDS=${*:-hostalloc register keep}
P=$(mktemp -d /tmp/nvq-probe.XXXXXX)
trap 'pkill -9 -f "$P/" 2>/dev/null; rm -rf "$P"' EXIT
gcc -O2 -I/usr/local/cuda/include tests/gpu/offload_probe.c -o "$P/probe" \
    -L/usr/local/cuda/lib64/stubs -lcuda -lpthread || exit 1
fails=0
for k in $KINDS; do
	coproc PROBE { "$P/probe" "$GIB" 1024 "$k" 2 pause; }
	ppid=$PROBE_PID
	while IFS= read -r line <&"${PROBE[0]}"; do
		echo "$k: $line"
		case $line in
		"offloaded "*)
			pid=${line#offloaded }
			echo "$k: driver on the rest: $(nvidia-smi --query-gpu=memory.used --format=csv,noheader -i 0) used before;" \
			    "$("$PWD/$B/nvq-ckpt" suspend "$pid" | tr '\n' ' ')"
			echo "$k: after the driver's checkpoint: $(nvidia-smi --query-gpu=memory.used --format=csv,noheader -i 0) used;" \
			    "$("$PWD/$B/nvq-ckpt" resume "$pid" | tr '\n' ' ')"
			echo go >&"${PROBE[1]}";;
		esac
	done
	wait "$ppid" || { echo "FAIL - $k"; fails=$((fails + 1)); }
done
echo "$fails failed"
[ "$fails" = 0 ]
