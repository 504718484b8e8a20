#!/bin/sh
# The main job, as `make demo` runs it: what liboms measures on this machine.
set -eu
B=${B:-build}
echo "== engine: ns per operation of the pure ordering engine"
"$B/bench/engine"
for extra in scripts/demo.d/*.sh; do
	[ -f "$extra" ] && sh "$extra"
done
exit 0
