#!/bin/sh
# make demo: ordered DMA reads on the emulated device with the paper's
# latency model (seed 004, Fig 5): unordered, NIC, RC and RC-opt.
set -eu
B=${B:-build}
v() { awk -f scripts/demo.d/verdict.awk -v want=mops -v key=mode -v val="$1" \
	-v key2=size -v val2=64 "$B/demo-reads.json"; }
echo "== Ordered DMA reads: where the order of a read's lines is kept (emulated"
echo "   device, the paper's latencies, model time)"
"$B/bench/ordered_read" --out_json "$B/demo-reads.json"
awk -v u="$(v unordered)" -v n="$(v nic)" -v r="$(v rc)" -v o="$(v rc-opt)" 'function x(a, b) { return b > 0 ? a / b : 0 }
BEGIN {
	printf "   verdict at 64 B: ordering at the root complex with speculation (RC-opt) %.1fx\n", x(o, n)
	printf "            ordering at the NIC (one line at a time) and %.2fx unordered reads\n", x(o, u)
}'
