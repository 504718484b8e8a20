#!/bin/sh
# scripts/run-tests.sh tells of each command when it ends, not when its
# turn to be printed comes, and of a long command's parts as they pass.
# The commands wait on the runner's own output, so the order of the lines
# is the test, not how fast this machine runs them.  TAP.
set -u
top=$(cd "$(dirname "$0")/.." && pwd)
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
out=$tmp/out
echo "1..3"

# first: a part, then nothing more until the runner has reported it as
# running; second: done at once, held behind the first for printing
first="echo 'ok 1 - part one'; n=0; while ! grep -q '^# \[.*\] running' $out"
first="$first && [ \$n -lt 600 ]; do sleep 0.1; n=\$((n + 1)); done"
first="$first; echo 'ok 2 - part two'"
second="echo 'ok 1 - quick'"
CHECK_JOBS=2 bash "$top/scripts/run-tests.sh" "$first" "$second" >"$out" 2>&1
line() { grep -n "$1" "$out" | head -n 1 | cut -d: -f1; }

quick=$(line '^# \[1/2\] ok echo .ok 1 - quick.')
held=$(line '^# ---- echo .ok 1 - part one')
if [ -n "$quick" ] && [ -n "$held" ] && [ "$quick" -lt "$held" ]; then
	echo "ok 1 - a command that ends is told at once ([1/2]), before the one printed first ends"
else
	sed 's/^/# /' "$out"
	echo "not ok 1 - the quick command's progress line"
fi
if grep -q '^# \[1/2\] running .*: 1 passed, 0 failed so far$' "$out"; then
	echo "ok 2 - a long command's parts are told as they pass"
else
	sed 's/^/# /' "$out"
	echo "not ok 2 - no progress line for the running command"
fi
if grep -q '^# \[2/2\] ok echo .ok 1 - part one.* (.* s: 2 passed, 0 failed, 0 skipped)$' "$out" &&
   tail -n 1 "$out" | grep -q '^3 passed, 0 failed, 0 skipped$'; then
	echo "ok 3 - each command's line counts its TAP, and the total closes the run"
else
	sed 's/^/# /' "$out"
	echo "not ok 3 - the counts"
fi
