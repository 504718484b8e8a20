#!/bin/sh
# make figures: the figures of seed 004 that run on this machine, each from
# one run of a benchmark in bench/ (--json), as a table (.dat) and a PNG
# (gnuplot) in $OUT.  docs/figures.md shows them beside the paper's shape.
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
#   fig7   KVS gets by value size (64 B..8 KiB, 4 readers, batch 32)
#   fig8   Validation vs Single Read (16 readers, batch 32, 64 B..8 KiB)
#   fig10  MMIO transmit with a fence every N messages, / unfenced (64 B)
#
# KVS and read figures are on the emulated device with the paper's Table 2
# latencies (model time); MMIO figures are wall time into a WC mapping of
# memory.  Compare modes within a figure: one run measured them together.
#
# usage: sh scripts/figures.sh [OUT]    (env: B build dir, FIG_D seconds per
#                                        KVS cell, default 1)
set -eu
B=${B:-build}
OUT=${1:-$B/figures}
D=${FIG_D:-1}
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
	gp_head fig2 "Fig 2: doorbell to request + data at the NIC, 64 B (dma_pattern, model time)" \
		"model ns" "fraction of writes"
	# the bulk of every curve: a descheduled device thread's outliers
	# (model time is wall time / scale) would stretch the axis
	xmax=$(jcol p90_ns <"$OUT/fig2.json" | awk '$1 > m { m = $1 } END { print int(m * 1.5) + 1 }')
	echo "set xrange [0:$xmax]"
	printf "plot "
	i=0
	for p in $patterns; do
		[ $i -gt 0 ] && printf ", "
		printf "'%s' index %d using 1:2 with lines title '%s'" "$OUT/fig2.dat" $i "$p"
		i=$((i + 1))
	done
	echo
} | gnuplot
echo "figures: $OUT/fig2.png"

for q in 1 2; do
	"$B/bench/rdma_ops" --local --backend emu -s 64 --threads 1,2,4,8,16 \
		-q $q --batch 32 -D "$D" --timeout-ms 60000 --json
done >"$OUT/fig3.json"
jcol threads op qps mops <"$OUT/fig3.json" | awk '{ print $1, $2 "-" $3 "qp", $4 }' |
	pivot "write-1qp write-2qp read-1qp read-2qp" >"$OUT/fig3.dat"
plot fig3 "Fig 3: remote WRITE / READ through liboms (rdma_ops, 64 B, batch 32)" \
	"threads" "M ops/s" 1 "write-1qp write-2qp read-1qp read-2qp"

# Fig 4 and Fig 10: one mmio_tx run measures every mode and the fence-every
# points together
"$B/bench/mmio_tx" --ms 40 --reps 3 --verify-mib 8 --batch 16 \
	--fence-every 1,2,4,8,16,32,64,128 --json >"$OUT/mmio_tx.json"
grep '"mode":"\(raw\|unfenced\|fenced\|sequenced\)"' "$OUT/mmio_tx.json" |
	jcol size mode gbps | pivot "raw unfenced fenced sequenced" >"$OUT/fig4.dat"
plot fig4 "Fig 4: MMIO transmit (mmio_tx, batch 16)" "bytes per message" \
	"Gb/s written" 1 "raw unfenced fenced sequenced"
grep '"mode":"fence_every"' "$OUT/mmio_tx.json" | grep '"size":64,' |
	jcol fence_every mode ratio_vs_unfenced | pivot "fence_every" >"$OUT/fig10.dat"
plot fig10 "Fig 10: a fence every N messages, 64 B (mmio_tx)" \
	"messages per fence" "x unfenced" 1 "fence_every"

"$B/bench/ordered_read" -a --ms "$(awk -v d="$D" 'BEGIN { print int(d * 200) }')" \
	--json >"$OUT/ordered_read.json"
jcol size mode gbps <"$OUT/ordered_read.json" |
	pivot "unordered nic rc rc-opt" >"$OUT/fig5.dat"
plot fig5 "Fig 5: ordered DMA reads (ordered_read, model time)" \
	"bytes per read" "Gb/s" 1 "unordered nic rc rc-opt"

# Fig 6: Single Read gets with reads ordered at the NIC, the RC or RC-opt,
# one kvs_get run per mode (the device's ordering mode is per process);
# "x mode M gets/s" lines, pivoted into a column per mode
orders="nic rc rc-opt"
fig6() {	# fig6 NAME XKEY TITLE XLABEL ARGS... (sh: no locals, own names)
	f6=$1 f6x=$2 f6t=$3 f6l=$4
	shift 4
	: >"$OUT/$f6.raw"
	for ord in $orders; do
		kvs "$f6-$ord" --proto single --order "$ord" "$@"
		jcol "$f6x" mops <"$OUT/$f6-$ord.json" |
			awk -v o="$ord" '{ print $1, o, $2 }' >>"$OUT/$f6.raw"
	done
	pivot "$orders" <"$OUT/$f6.raw" >"$OUT/$f6.dat"
	plot "$f6" "$f6t" "$f6l" "M gets/s" 1 "$orders"
}
fig6 fig6a size "Fig 6a: Single Read gets, 1 client, batch 100 (model time)" \
	"value bytes" -s 64,256,1024 --threads 1 --batch 100
fig6 fig6b threads "Fig 6b: Single Read gets by clients, 256 B, batch 100" \
	"clients (1 QP each)" -s 256 --threads 1,2,4,8,16 --batch 100
fig6 fig6c size "Fig 6c: Single Read gets, 16 clients, batch 500" \
	"value bytes" -s 64,256 --threads 16 --batch 500

kvs fig7 --proto all -a --threads 4 --batch 32
jcol size proto mops <"$OUT/fig7.json" | pivot "$protos" >"$OUT/fig7.dat"
plot fig7 "Fig 7: KVS gets by value size (4 readers, batch 32)" \
	"value bytes" "M gets/s" 1 "$protos"

kvs fig8 --proto single,validation -a --threads 16 --batch 32
jcol size proto mops <"$OUT/fig8.json" | pivot "single validation" >"$OUT/fig8.dat"
plot fig8 "Fig 8: Validation vs Single Read (16 readers, batch 32)" \
	"value bytes" "M gets/s" 1 "single validation"

# every KVS cell: torn values from the correct protocols must be 0
bad=$(cat "$OUT"/fig6?-*.json "$OUT"/fig7.json "$OUT"/fig8.json |
	grep -v '"proto":"broken"' | grep -vc '"torn":0,' || true)
[ "$bad" = 0 ] || { echo "figures: $bad KVS cells returned torn values" >&2; exit 1; }
echo "figures: done in $OUT (data: *.dat, raw: *.json)"
