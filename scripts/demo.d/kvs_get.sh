#!/bin/sh
# make demo: KVS gets (seed 004 Fig 7) on the emulated device with the
# latency model: Single Read, Validation, FaRM (with the strip),
# Pessimistic and the broken baseline at 64 B, one run, ratios at the end.
# The responder NIC serves one request per 29 model ns (1 / 34.76 M/s, the
# paper's Single Read rate on ConnectX-6 Dx): small gets are bound by the
# NIC's request rate, as on the real card.
# Full figures and what they mean: bench/RESULTS.md, docs/kvs.md.
set -eu
B=${B:-build}
echo "== kvs_get: KVS get protocols, 64 B values (emulated device, Table 2 latencies)"
"$B/bench/kvs_get" --local --proto all --size 64 --threads 4 --duration 1 --runs 2 \
	--nic-req-ns 29
