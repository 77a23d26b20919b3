#!/usr/bin/env bash
# run.sh: the system tests.  Each test starts the real nvqd on a temporary
# socket, database and spool (virtual or fake-NVML GPUs) and drives it with
# the real nvq.  The tests live by topic in tests/system/t_TOPIC.sh, as
# t_ functions; their helpers in tests/system/lib.sh.
#
# Usage: run.sh [-j N] [TOPIC | TEST]...   e.g. run.sh hook, run.sh t_packing.
# Without arguments, every test of every topic.  NVQ_BUILD names the build
# folder (build, build-san).  -j N (or NVQ_TEST_JOBS) runs N tests at once,
# each with its own nvqd, folder and jobs; the tests a topic names in ALONE
# (they set machine-wide things, count processes by name, or time what
# a loaded machine would slow) then run one at a time, after the others;
# those in SLOW start first.
# Each test's lines are printed together when it ends, with its seconds.
set -u
cd "$(dirname "$0")/../.."
JOBS=${NVQ_TEST_JOBS:-1}
if [ "${1:-}" = -j ]; then
	JOBS=${2:-}
	shift 2 || true
fi
[[ $JOBS =~ ^[1-9][0-9]?$ ]] || { echo "run.sh: -j takes 1 to 99, not '$JOBS'" >&2; exit 2; }
. tests/system/lib.sh
ALONE=()
SLOW=()

FILES=()
for a in "$@"; do
	if [ -f "tests/system/t_$a.sh" ]; then
		FILES+=("tests/system/t_$a.sh")
	elif f=$(grep -l "^$a() *{" tests/system/t_*.sh 2> /dev/null | head -1) && [ -n "$f" ]; then
		FILES+=("$f")
	else
		echo "run.sh: no topic or test named $a (topics: $(ls tests/system/t_*.sh |
		    sed 's#.*/t_##; s#\.sh$##' | tr '\n' ' '))" >&2
		exit 2
	fi
done
[ $# = 0 ] && FILES=(tests/system/t_*.sh)
# two tests of one name: the file sourced last would hide the other's
dups=$(grep -ho '^t_[a-z0-9_]*() *{' tests/system/t_*.sh | sed 's/().*//' | sort | uniq -d)
if [ -n "$dups" ]; then
	echo "run.sh: tests defined twice: $dups" >&2
	exit 2
fi

for f in $(printf '%s\n' "${FILES[@]}" | sort -u); do
	. "$f"
done

# a topic asked for runs all its tests; a test asked for, itself
if [ $# = 0 ]; then
	TESTS=$(declare -F | awk '{print $3}' | grep '^t_')
else
	TESTS=""
	for a in "$@"; do
		if [ -f "tests/system/t_$a.sh" ]; then
			TESTS+=" $(grep -o '^t_[a-z0-9_]*() *{' "tests/system/t_$a.sh" | sed 's/().*//' | sort)"
		else
			TESTS+=" $a"
		fi
	done
fi
# the users the tests act as, made once here, before tests run at once
[ "$JOBS" -gt 1 ] && [ "$(id -u)" = 0 ] && command -v useradd > /dev/null && make_users

if [ "$JOBS" = 1 ]; then
	for t in $TESTS; do
		run_test "$t"
	done
else
	run_pool "$JOBS" $(for t in $TESTS; do
		[[ " ${SLOW[*]} " == *" $t "* ]] && echo "$t"
	done; for t in $TESTS; do
		[[ " ${ALONE[*]} ${SLOW[*]} " == *" $t "* ]] || echo "$t"
	done)
	run_pool 1 $(for t in $TESTS; do
		[[ " ${ALONE[*]} " == *" $t "* ]] && echo "$t"
	done)
fi
echo
echo "system tests: $PASSED passed, $FAILED failed${FAILS:+: ${FAILS[*]}}, $SKIPPED skipped${SKIPS:+: ${SKIPS[*]}}"
[ $FAILED = 0 ]
