#!/bin/sh
# Run one libFuzzer target for a bounded time over its committed corpus and
# report the result as a single TAP test.
#
# usage: run-fuzzer.sh FUZZER CORPUS_DIR SECONDS
set -u
fuzzer=$1 corpus=$2 secs=$3
name=$(basename "$fuzzer")
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
# New inputs go to a scratch directory; the committed corpus is only read.
"$fuzzer" -max_total_time="$secs" -print_final_stats=1 -timeout=10 \
	-artifact_prefix="$work/" "$work" "$corpus" >"$work/log" 2>&1
rc=$?
execs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$work/log")
echo "TAP version 13"
echo "1..1"
if [ "$rc" -eq 0 ]; then
	echo "# $name: ${execs:-?} executions in ${secs}s, no invariant broken"
	echo "ok 1 fuzz_$name"
else
	tail -n 40 "$work/log" | sed 's/^/# /'
	echo "not ok 1 fuzz_$name"
fi
