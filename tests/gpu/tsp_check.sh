#!/usr/bin/env bash
# tsp_check.sh: bench/queue.sh (nvq against task-spooler, 1000 trivial
# jobs, 1 and 16 at a time, sync = full and normal) on the GPU host, whose
# 16 CPUs and journalled ext4 are a server's, not the 2-CPU development
# machine's.  The host has no package registry: TSP names a tsp binary
# (Debian's task-spooler, libc only: `apt-get download task-spooler`,
# `dpkg-deb -x`), .devtsp/tsp by default.  No GPU is used: virtual GPUs.
# Usage: tests/gpu/tsp_check.sh [BUILD_DIR] [N] [ROUNDS]
set -eu
cd "$(dirname "$0")/../.."
B=${1:-build}
export TSP=${TSP:-$PWD/.devtsp/tsp}
[ -x "$TSP" ] || { echo "tsp_check: no tsp at $TSP (see the top of this file)"; exit 2; }
echo "$(nproc) CPUs; $(uname -r); / on $(findmnt -no FSTYPE,OPTIONS / | cut -c1-60)"
NVQ_BUILD=$PWD/$B bash bench/queue.sh "${2:-1000}" "${3:-3}"
