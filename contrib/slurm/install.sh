#!/bin/sh
# install.sh: builds nvq's SPANK plugin and puts it into Slurm on this node.
# Usage (as root, from the nvq source tree, on every node and on the hosts
# where users run sbatch/srun/salloc):
#   contrib/slurm/install.sh [HOOK [SHARD_SIZE [PEAKS [NVQD]]]]
# HOOK: nvq's hook on the nodes (default /usr/libexec/nvq/libnvq-hook.so);
# SHARD_SIZE: the GPU memory one shard stands for (default 1G);
# PEAKS: where each step's peak GPU memory is written, for nvqd with
# [cluster] engine = slurm to read ([cluster] peaks; default
# /var/spool/nvq/slurm, made here: root's, 0755); NVQD: the socket of
# this node's own nvqd, if it runs one (/run/nvq/nvqd.sock), so that it
# follows the node's Slurm steps beside its own jobs.
set -eu
hook=${1:-/usr/libexec/nvq/libnvq-hook.so}
shard=${2:-1G}
peaks=${3:-/var/spool/nvq/slurm}
nvqd=${4:+ nvqd=$4}
conf=${SLURM_CONF:-/etc/slurm/slurm.conf}
plugdir=$(dirname "$(find /usr/lib -name 'select_cons_tres.so' -path '*slurm*' | head -1)")
[ -d "$plugdir" ] || { echo "install.sh: Slurm's plugin folder not found" >&2; exit 1; }
[ -f /usr/include/slurm/spank.h ] || { echo "install.sh: slurm/spank.h missing: apt-get install libslurm-dev" >&2; exit 1; }
make -s spank
install -d -m 755 "$peaks"
install -m 755 build/spank_nvq.so "$plugdir/spank_nvq.so"
stack=$(dirname "$conf")/plugstack.conf
line="required $plugdir/spank_nvq.so hook=$hook shard_size=$shard peaks=$peaks$nvqd"
# one line for nvq, replaced if it is there
touch "$stack"
grep -v 'spank_nvq.so' "$stack" > "$stack.new" || true
echo "$line" >> "$stack.new"
mv "$stack.new" "$stack"
echo "install.sh: $plugdir/spank_nvq.so, and in $stack:"
echo "  $line"
