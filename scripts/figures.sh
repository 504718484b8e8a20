#!/bin/sh
# make figures: the figures of seed 004 that run on this machine, from
# benchmarks in bench/ (--json), as a table (.dat) and a PNG (gnuplot) in
# $OUT.  docs/figures.md shows them beside the paper's shape.
#
#   fig2   doorbell to the NIC holding request and data, CDF by DMA
#          pattern: all MMIO, one DMA, two unordered, two ordered at the
#          NIC, two ordered at the root complex (dma_pattern, 64 B of data,
#          latency model)
#   fig3   remote WRITE / READ M ops/s by threads, 1 and 2 QPs each, 64 B,
#          batch 32 (rdma_ops; wall time: the emulator's own rate here)
#   fig4   MMIO transmit: Gb/s by message size, fence per message vs
#          sequence numbers (mmio_tx)
#   fig5   ordered DMA reads: Gb/s by read size, unordered / NIC / RC /
#          RC-opt (ordered_read, latency model)
#   fig6a  Single Read gets by value size, reads ordered by the NIC, the
#          root complex (RC) or RC-opt: 1 client, batch 100, 64 B - 1 KiB
#   fig6b  the same by clients (1..16, 256 B, batch 100)
#   fig6c  the same by value size with 16 clients, batch 500, 64 and 256 B
#          (NIC ordering reads one line per round trip, each paced by the
#          device thread: larger cells take minutes of wall time, and on a
#          busy machine far more - run make figures on a quiet one)
#   fig7   KVS gets by value size (64 B..8 KiB, 16 readers, batch 32)
#   fig7-table  the same at 64 B with the responder NIC's request rate
#          (29 ns), for the side-by-side table (scripts/figures-paper.sh)
#   fig8   Validation vs Single Read (16 readers on 15 emulated hosts,
#          batch 32, 64 B..8 KiB)
#   fig10  MMIO transmit with a fence every N messages, / unfenced (64 B)
#
# Figs 6, 7 and 8 are drawn in model time alone (the clients' CPU free,
# kvs_get's default), as the paper's simulator ran Figs 6 and 8; the
# side-by-side table's Fig 7 cell runs the paper's 16 clients with the
# responder NIC's request rate.
#
# Fig 2, 5, 6, 7 and 8 are on the emulated device with the paper's Table 2
# latencies, in model time (the device's own clock, advanced by events:
# kvs_get's records say "time":"model", dma_pattern and ordered_read time
# nothing else); Fig 3 (rdma_ops), 4 and 10 (mmio_tx, a WC mapping of
# memory) are wall time.  Axes say which.  Model time does not move with
# the machine: a model-time figure is the same in every run, so it runs
# once (FIG_MODEL_RUNS); the wall-time figures run FIG_RUNS times and draw
# the median with min..max bars.  Where a figure's point is
# a ratio or a small gap, its axis is a log one.
#
# usage: sh scripts/figures.sh [OUT]    (env: B build dir, FIG_D seconds per
#                                        KVS cell, default 1; FIG_RUNS runs
#                                        of each figure, default 3;
#                                        FIG_MODEL_RUNS of the exact ones,
#                                        default 1)
set -eu
B=${B:-build}
OUT=${1:-$B/figures}
D=${FIG_D:-1}
RUNS=${FIG_RUNS:-3}
MODEL_RUNS=${FIG_MODEL_RUNS:-1}
mkdir -p "$OUT"
command -v gnuplot >/dev/null 2>&1 ||
	{ echo "figures: gnuplot is needed (apt-get install gnuplot-nox, or make deps)" >&2; exit 1; }

. "$(dirname "$0")/figures-lib.sh"

kvs() {	# kvs OUTNAME ARGS...: kvs_get --local --json into $OUT/OUTNAME.json
	kname=$1
	shift
	# a generous timeout: 16 readers x 16 QPs on a 2-core machine
	"$B/bench/kvs_get" --local --backend emu --json -D "$D" \
		--timeout-ms 60000 "$@" \
		>"$OUT/$kname.json" 2>"$OUT/$kname.err" ||
		{ echo "figures: kvs_get $* failed:" >&2; tail -n 3 "$OUT/$kname.err" >&2; exit 1; }
}

# kvs_runs NAME ARGS...: kvs RUNS times (NAME-runN.json, each with its own
# .err), every run's records together in NAME.json; kvs_exact the same
# MODEL_RUNS times, for cells in model time with the clients' CPU free
kvs_runs() {
	kr=$1
	shift
	: >"$OUT/$kr.json"
	run=1
	while [ $run -le "${KR_RUNS:-$RUNS}" ]; do
		kvs "$kr-run$run" "$@"
		cat "$OUT/$kr-run$run.json" >>"$OUT/$kr.json"
		run=$((run + 1))
	done
}

# repeat CMD ARGS...: CMD RUNS times, its outputs one after the other
repeat() {
	rr=0
	while [ $rr -lt "$RUNS" ]; do
		"$@"
		rr=$((rr + 1))
	done
}

protos="single validation farm pessimistic broken"

# Fig 2: a CDF per pattern (dma_pattern --cdf: every sample), one block of
# "ns fraction" per pattern for gnuplot's index
patterns="mmio one-dma two-unordered two-nic two-rc"
"$B/bench/dma_pattern" -s 64 -n 2000 --json --cdf "$OUT/fig2.samples" \
	>"$OUT/fig2.json"
for p in $patterns; do
	awk -v p="$p" '$1 == p { print $3 }' "$OUT/fig2.samples" | sort -g |
		awk '{ v[NR] = $1 } END { for (i = 1; i <= NR; i++) print v[i], i / NR; print ""; print "" }'
done >"$OUT/fig2.dat"
{
	gp_head fig2 "Fig 2: doorbell to request + data at the NIC, 64 B (dma_pattern)" \
		"latency, model ns (log scale)" "fraction of doorbells (CDF)"
	# a log axis: the patterns differ by a round trip or by a few tens of
	# ns, which a linear axis from 0 squeezes together
	echo "set logscale x 10"
	echo "set xtics (100, 150, 200, 300, 400, 500, 700, 1000, 1500, 2000, 3000, 5000)"
	echo "set yrange [0:1.02]"
	echo "set offsets 0, 0, 0, 0"
	# the bulk of every curve: a descheduled device thread's outliers
	# (model time is wall time / scale) would stretch the axis
	xmin=$(jcol p50_ns <"$OUT/fig2.json" | awk 'NR == 1 || $1 < m { m = $1 } END { print int(m * 0.8) }')
	xmax=$(jcol p90_ns <"$OUT/fig2.json" | awk '$1 > m { m = $1 } END { print int(m * 1.5) + 1 }')
	echo "set xrange [$xmin:$xmax]"
	printf "plot "
	i=0
	for p in $patterns; do
		[ $i -gt 0 ] && printf ", "
		printf "'%s' index %d using 1:2 with lines ls %d title '%s'" "$OUT/fig2.dat" $i $((i + 1)) "$p"
		i=$((i + 1))
	done
	echo
} | gnuplot
echo "figures: $OUT/fig2.png"

fig3_run() {	# one run of every Fig 3 cell, its records on stdout
	for q in 1 2; do
		"$B/bench/rdma_ops" --local --backend emu -s 64 --threads 1,2,4,8,16 \
			-q $q --batch 32 -D "$D" --timeout-ms 60000 --json
	done
}
repeat fig3_run >"$OUT/fig3.json"
jcol threads op qps mops <"$OUT/fig3.json" | awk '{ print $1, $2 "-" $3 "qp", $4 }' |
	spread | pivot "write-1qp write-2qp read-1qp read-2qp" 3 >"$OUT/fig3.dat"
plot_spread fig3 "Fig 3: remote WRITE / READ through liboms (rdma_ops, 64 B, batch 32; median, min..max of $RUNS runs)" \
	"threads" "M ops/s (wall time)" x "write-1qp write-2qp read-1qp read-2qp"

# Fig 4 and Fig 10: one mmio_tx run measures every mode and the fence-every
# points together; RUNS runs of one rep each cost what one run of --reps 3
# (a median, no spread) would
repeat "$B/bench/mmio_tx" --ms 40 --reps 1 --verify-mib 8 --batch 16 \
	--fence-every 1,2,4,8,16,32,64,128 --json >"$OUT/mmio_tx.json"
grep '"mode":"\(raw\|unfenced\|fenced\|sequenced\)"' "$OUT/mmio_tx.json" |
	jcol size mode gbps | spread | pivot "raw unfenced fenced sequenced" 3 >"$OUT/fig4.dat"
# log y: a fence per message costs a factor, and a busy machine's slow runs
# would squash the rest against 0
plot_spread fig4 "Fig 4: MMIO transmit (mmio_tx, batch 16; median, min..max of $RUNS runs)" \
	"bytes per message" "Gb/s written (wall time, log scale)" xy "raw unfenced fenced sequenced"
grep '"mode":"fence_every"' "$OUT/mmio_tx.json" | grep '"size":64,' |
	jcol fence_every ratio_vs_unfenced | awk '{ print $1, "fence-every-N", $2 }' |
	spread | pivot "fence-every-N" 3 >"$OUT/fig10.dat"
plot_spread fig10 "Fig 10: a fence every N messages, 64 B (mmio_tx; median, min..max of $RUNS runs)" \
	"messages per fence" "rate / unfenced rate (wall time)" x "fence-every-N"

repeat "$B/bench/ordered_read" -a --ms "$(awk -v d="$D" 'BEGIN { print int(d * 200) }')" \
	--json >"$OUT/ordered_read.json"
jcol size mode gbps <"$OUT/ordered_read.json" |
	spread | pivot "unordered nic rc rc-opt" 3 >"$OUT/fig5.dat"
# log y: NIC, RC and RC-opt are a decade apart each
plot_spread fig5 "Fig 5: ordered DMA reads (ordered_read; median, min..max of $RUNS runs)" \
	"bytes per read" "Gb/s (model time, log scale)" xy "unordered nic rc rc-opt"

# Fig 6: Single Read gets with reads ordered at the NIC, the RC or RC-opt,
# RUNS kvs_get runs per mode (the device's ordering mode is per process);
# "x mode M gets/s" lines, pivoted into a column per mode
orders="nic rc rc-opt"
fig6() {	# fig6 NAME XKEY TITLE XLABEL ARGS... (sh: no locals, own names)
	f6=$1 f6x=$2 f6t=$3 f6l=$4
	shift 4
	: >"$OUT/$f6.raw"
	for ord in $orders; do
		KR_RUNS=$MODEL_RUNS kvs_runs "$f6-$ord" --proto single \
			--order "$ord" --no-cpu-charge "$@"
		jcol "$f6x" mops <"$OUT/$f6-$ord.json" |
			awk -v o="$ord" '{ print $1, o, $2 }' >>"$OUT/$f6.raw"
	done
	spread <"$OUT/$f6.raw" | pivot "$orders" 3 >"$OUT/$f6.dat"
	# log y: the figure is the ratios between the orderings
	plot_spread "$f6" "$f6t (model time: exact)" "$f6l" \
		"M gets/s (model time, log scale)" xy "$orders"
}
fig6 fig6a size "Fig 6a: Single Read gets, 1 client, batch 100" \
	"value bytes" -s 64,256,1024 --threads 1 --batch 100
fig6 fig6b threads "Fig 6b: Single Read gets by clients, 256 B, batch 100" \
	"clients (1 QP each)" -s 256 --threads 1,2,4,8,16 --batch 100
fig6 fig6c size "Fig 6c: Single Read gets, 16 clients, batch 500" \
	"value bytes" -s 64,256 --threads 16 --batch 500

KR_RUNS=$MODEL_RUNS kvs_runs fig7 --proto all -a --threads 16 --batch 32 \
	--no-cpu-charge
jcol size proto mops <"$OUT/fig7.json" | spread | pivot "$protos" 3 >"$OUT/fig7.dat"
# log y: the protocols' gaps are ratios, and the rates fall 60x with size
plot_spread fig7 "Fig 7: KVS gets by value size (16 readers, batch 32, RC-opt; model time: exact)" \
	"value bytes" "M gets/s (model time, log scale)" xy "$protos"

# the paper's table of Fig 7 (64 B, 16 threads on a ConnectX-6 Dx) is
# bound by the NIC's request rate: this cell gives the model that rate
# (29 ns a request, 1 / 34.76 M/s) for the side-by-side table below
KR_RUNS=$MODEL_RUNS kvs_runs fig7-table \
	--proto single,validation,farm,pessimistic -s 64 --threads 16 \
	--batch 32 --nic-req-ns 29

KR_RUNS=$MODEL_RUNS kvs_runs fig8 --proto single,validation -a --threads 16 \
	--hosts 15 --batch 32 --no-cpu-charge
jcol size proto mops <"$OUT/fig8.json" | spread | pivot "single validation" 3 >"$OUT/fig8.dat"
plot_spread fig8 "Fig 8: Validation vs Single Read (16 readers on 15 hosts, batch 32; model time: exact)" \
	"value bytes" "M gets/s (model time, log scale)" xy "single validation"

# every KVS cell: torn values from the correct protocols must be 0 (the
# runs' records, each once: NAME.json holds the NAME-runN.json)
bad=$(cat "$OUT"/fig6?-*[!0-9].json "$OUT"/fig7.json "$OUT"/fig7-table.json \
	"$OUT"/fig8.json |
	grep -v '"proto":"broken"' | grep -vc '"torn":0,' || true)
[ "$bad" = 0 ] || { echo "figures: $bad KVS cells returned torn values" >&2; exit 1; }
echo "figures: the paper's numbers beside this run's (docs/figures.md says more):"
sh "$(dirname "$0")/figures-paper.sh" "$OUT" | tee "$OUT/paper.md"
echo "figures: done in $OUT (data: *.dat, raw: *.json, side by side: paper.md)"
