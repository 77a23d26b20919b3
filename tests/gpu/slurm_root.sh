#!/bin/sh
# slurm_root.sh: unpacks Debian 12's Slurm 22.05 and munge into DIR (default
# .devslurm), for tests/gpu/slurm_check.sh on a GPU host that has neither
# and no package registry: run it where apt works, then carry DIR there.
# Usage: tests/gpu/slurm_root.sh [DIR]
set -eu
dir=${1:-.devslurm}
w=$(mktemp -d)
(cd "$w" && apt-get download slurmctld slurmd slurm-client slurm-wlm-basic-plugins libslurm38 \
    munge libmunge2 libhwloc15 liblua5.1-0 libnuma1 liblz4-1 libdbus-1-3)
rm -rf "$dir"
for d in "$w"/*.deb; do dpkg -x "$d" "$dir"; done
rm -rf "$w"
du -sh "$dir"
