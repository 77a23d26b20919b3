#!/usr/bin/env bash
# battery.sh [BUILD]: the multi-rank GPU checks a change to the hook or to
# GPU control must pass, one after another, each with its output kept in
# OUT (default /tmp/nvq-battery.XXXXXX, or $OUT where the device runner
# gives one), then a table: check, failures, seconds.  Needs two GPUs.
# CHECKS picks and orders them (default: every one below, about 15 min on
# two H200s; a call to the device runs at most 10: split it, e.g.
# CHECKS="ddp trainer lcbe" then CHECKS="timeslice launchers").
#   ddp        HOLDS=${HOLDS:-10} ddp_hold_loop.sh (cuMem and legacy IPC)
#   trainer    HOLDS=${HOLDS:-10} trainer_hold_loop.sh
#   lcbe       lcbe_hold_check.sh (a be DDP job held beside a busy lc job)
#   timeslice  timeslice_ddp.sh
#   launchers  HOLDS=2 SUSPEND=1 TS=1 launchers_check.sh ${LAUNCHERS:-ddp fsdp trainer accelerate lightning}
set -u
cd "$(dirname "$0")/../.."
B=${1:-build}
export NCCL_NVLS_ENABLE=0
CHECKS=${CHECKS:-ddp trainer lcbe timeslice launchers}
OUT=${OUT:-$(mktemp -d /tmp/nvq-battery.XXXXXX)}
mkdir -p "$OUT"
rows=()
for c in $CHECKS; do
	case $c in
	ddp)	cmd=(env HOLDS="${HOLDS:-10}" bash tests/gpu/ddp_hold_loop.sh "$B") ;;
	trainer) cmd=(env HOLDS="${HOLDS:-10}" bash tests/gpu/trainer_hold_loop.sh "$B") ;;
	lcbe)	cmd=(bash tests/gpu/lcbe_hold_check.sh "$B") ;;
	timeslice) cmd=(bash tests/gpu/timeslice_ddp.sh "$B") ;;
	# shellcheck disable=SC2206
	launchers) cmd=(env HOLDS=2 SUSPEND=1 TS=1 bash tests/gpu/launchers_check.sh "$B"
		    ${LAUNCHERS:-ddp fsdp trainer accelerate lightning}) ;;
	*)	echo "battery.sh: no check named $c (ddp trainer lcbe timeslice launchers)" >&2
		exit 2 ;;
	esac
	echo "== $c: ${cmd[*]}"
	t0=$SECONDS
	"${cmd[@]}" > "$OUT/$c.log" 2>&1
	f=$(sed -n 's/^[a-z_]*: \([0-9]*\) failed$/\1/p' "$OUT/$c.log" | tail -1)
	grep -E "^(ok|FAIL) |took|holds:|ratio|pair|alone|steps" "$OUT/$c.log" | sed 's/^/    /'
	rows+=("$(printf '%-10s %-8s %5d s' "$c" "${f:-none}" $((SECONDS - t0)))")
done
echo
echo "check      failed   time   (logs in $OUT)"
printf '%s\n' "${rows[@]}"
