#!/bin/sh
# The main job, as `make demo` runs it: what liboms measures on this machine.
set -eu
B=${B:-build}
echo "liboms demo: what ordering at the destination buys, measured on this machine"
echo
for extra in scripts/demo.d/*.sh; do
	[ -f "$extra" ] && sh "$extra"
	echo
done
echo "Next: make check (the tests), make figures (the paper's figures), two hosts"
echo "over RDMA (README, Quickstart), build/bench/engine (the ordering engine's own cost)."
exit 0
