#!/bin/bash
# staging_probe.sh [GIB]: builds staging_probe.c with the GPU machine's gcc
# and runs it (see there): what each step of a suspend's host staging costs.
cd "$(dirname "$0")/../.." || exit 1
GIB=${1:-30}
P=$(mktemp -d /tmp/nvq-probe.XXXXXX)
trap 'rm -rf "$P"' EXIT
gcc -O2 -I/usr/local/cuda/include tests/gpu/staging_probe.c -o "$P/probe" \
    -L/usr/local/cuda/lib64/stubs -lcuda -lpthread || exit 1
echo "THP: $(cat /sys/kernel/mm/transparent_hugepage/enabled); shmem: $(cat /sys/kernel/mm/transparent_hugepage/shmem_enabled 2>/dev/null)"
echo "$(nproc) CPUs; $(grep MemAvailable /proc/meminfo)"
"$P/probe" "$GIB"
