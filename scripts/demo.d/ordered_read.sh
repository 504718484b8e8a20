#!/bin/sh
# make demo: ordered DMA reads on the emulated device with the paper's
# latency model (seed 004, Fig 5): unordered, NIC, RC and RC-opt.
set -eu
B=${B:-build}
echo "== ordered_read: read throughput by ordering mode (emulated device, Table 2 latencies)"
"$B/bench/ordered_read"
