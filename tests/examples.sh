#!/bin/sh
# Every program of examples/ runs as README and its own comment say, in one
# process (the emulated device), and exits 0 having checked what it shows:
# hello's flag and data, tx_sequenced's messages in order with no fence,
# kvs_client's gets with nothing torn, msg_verbs's flags never ahead of
# their data (its two processes as two threads here; the Soft-RoCE guests
# run it between two hosts, tests/vm/rxe-guest.sh).  TAP, a line per
# example.
#
# usage: examples.sh BUILD_DIR
set -u
b=${1:-build}
n=0
echo "1..$(ls examples/*.c | wc -l)"
for src in examples/*.c; do
	ex=$(basename "$src" .c)
	n=$((n + 1))
	# in one process: msg_verbs's two sides as two threads
	args=""
	[ "$ex" = msg_verbs ] && args=--local
	# shellcheck disable=SC2086
	out=$(OMS_BACKEND=emu timeout 120 "$b/examples/$ex" $args 2>&1)
	rc=$?
	echo "$out" | sed 's/^/# /'
	if [ $rc -eq 0 ]; then
		echo "ok $n - examples/$ex: $(echo "$out" | tail -n 1)"
	else
		echo "not ok $n - examples/$ex exited with status $rc"
	fi
done
