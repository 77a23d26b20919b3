#!/usr/bin/env bash
# quickstart.sh: installs what nvq needs (Debian), builds it, starts nvqd for
# this user with its state in ./.nvq (NVQ_HOME), and submits a first job.
# It uses the GPUs NVML finds, or two virtual 16G GPUs where there is none.
set -euo pipefail
cd "$(dirname "$0")/.."
ROOT=$PWD
PKGS="build-essential musl-tools libsqlite3-dev libuv1-dev libinih-dev libcmocka-dev libmicrohttpd-dev libcjson-dev sqlite3 procps"
# and what `make test` drives nvq with (small): a terminal multiplexer, shells, man
PKGS="$PKGS python3 strace tmux zsh man-db groff-base util-linux passwd"

missing=$(dpkg-query -W -f='${Status} ${Package}\n' $PKGS 2>/dev/null |
    awk '$3 != "installed" {print $4}'; for p in $PKGS; do
    dpkg-query -W "$p" > /dev/null 2>&1 || echo "$p"; done)
if [ -n "$missing" ]; then
	SUDO=""
	[ "$(id -u)" = 0 ] || SUDO=sudo
	echo "== installing: $(echo $missing | tr '\n' ' ')"
	$SUDO apt-get update -qq
	DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq --no-install-recommends $missing
fi

echo "== building"
make -s

NVQ_HOME=${NVQ_HOME:-$ROOT/.nvq}
mkdir -p "$NVQ_HOME"
if [ ! -e "$NVQ_HOME/nvq.ini" ]; then
	{
		echo "[daemon]"
		echo "socket = $NVQ_HOME/nvqd.sock"
		echo "database = $NVQ_HOME/nvq.db"
		echo "spool = $NVQ_HOME/spool"
		if ! ldconfig -p 2>/dev/null | grep -q 'libnvidia-ml.so.1 '; then
			echo "[gpus]"
			echo "# no NVML on this machine: two virtual GPUs"
			echo "virtual = 2x16G"
		fi
	} > "$NVQ_HOME/nvq.ini"
fi
export NVQ_SOCKET=$NVQ_HOME/nvqd.sock
NVQ="$ROOT/build/nvq"

if ! "$NVQ" list > /dev/null 2>&1; then
	echo "== starting nvqd (log: $NVQ_HOME/nvqd.log)"
	setsid "$ROOT/build/nvqd" -c "$NVQ_HOME/nvq.ini" >> "$NVQ_HOME/nvqd.log" 2>&1 < /dev/null &
	echo $! > "$NVQ_HOME/nvqd.pid"
	for _ in $(seq 100); do "$NVQ" list > /dev/null 2>&1 && break; sleep 0.1; done
fi

echo "== the GPUs"
"$NVQ" gpus
echo "== submitting a first job"
id=$("$NVQ" submit --parsable -n hello -m 1G -- sh -c \
    'echo "hello from job $NVQ_JOB_ID on GPU $CUDA_VISIBLE_DEVICES with $NVQ_GPU_MEM bytes"')
# On a busy queue the job waits: say for what, each time that changes.
said=""
while :; do
	info=$("$NVQ" show "$id")
	state=$(awk '$1 == "state" { print $2 }' <<< "$info")
	case $state in PENDING|RUNNING|SUSPENDED) ;; *) break ;; esac
	why=$(awk '$1 == "wait" { $1 = ""; sub(/^ +/, ""); print }' <<< "$info")
	line="job $id is $state${why:+: $why}"
	if [ "$line" != "$said" ]; then
		echo "   $line"
		said=$line
	fi
	sleep 0.5
done
"$NVQ" wait "$id"
"$NVQ" list -a
echo "== its output"
"$NVQ" log "$id"
cat <<EOT

nvqd is running (pid $(cat "$NVQ_HOME/nvqd.pid" 2>/dev/null || echo '?')). To use it:
    export NVQ_SOCKET=$NVQ_SOCKET PATH=$ROOT/build:\$PATH
    nvq submit -m 4G -- python3 train.py
Stop it with: kill \$(cat $NVQ_HOME/nvqd.pid)
EOT
