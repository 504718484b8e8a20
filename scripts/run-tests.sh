#!/bin/sh
# Run test commands, pass their TAP through, and total the results.
#
# Each argument is one command (a test binary or a quoted shell command) that
# prints TAP.  Every command is bounded by TEST_TIMEOUT seconds (default 600).
# A command that exits non-zero without a "not ok" line counts as one failure,
# so a crash or a timeout is never silent.  The last line is
#   N passed, N failed, N skipped
# and the exit status is non-zero if anything failed.
set -u
timeout_s=${TEST_TIMEOUT:-600}
pass=0 fail=0 skip=0
failed_cmds=""
log=$(mktemp)
trap 'rm -f "$log"' EXIT

for cmd in "$@"; do
	echo "# ---- $cmd"
	t0=$(date +%s)
	timeout -k 10 "$timeout_s" sh -c "$cmd" >"$log" 2>&1
	rc=$?
	cat "$log"
	echo "# ---- $(($(date +%s) - t0)) s"
	p=$(grep -E '^ok [0-9]+' "$log" | grep -vc '# SKIP')
	s=$(grep -E '^ok [0-9]+.*# SKIP' "$log" | wc -l)
	f=$(grep -Ec '^not ok [0-9]+' "$log")
	if [ "$rc" -ne 0 ] && [ "$f" -eq 0 ]; then
		why="exited with status $rc"
		[ "$rc" -eq 124 ] && why="timed out after ${timeout_s}s"
		echo "not ok - $cmd $why"
		f=1
	fi
	[ "$f" -gt 0 ] && failed_cmds="$failed_cmds
#   $cmd"
	pass=$((pass + p)) fail=$((fail + f)) skip=$((skip + s))
done

[ -n "$failed_cmds" ] && echo "# failed:$failed_cmds"
echo "$pass passed, $fail failed, $skip skipped"
[ "$fail" -eq 0 ]
