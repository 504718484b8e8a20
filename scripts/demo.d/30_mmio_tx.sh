#!/bin/sh
# make demo: the MMIO transmit sweep (seed 004, Fig 4), short.  Writes
# $B/mmio_tx.dat and, when gnuplot is installed, $B/mmio_tx.png.
set -eu
B=${B:-build}
v() { awk -f scripts/demo.d/verdict.awk -v want="$1" -v key=mode -v val="$2" \
	-v key2=size -v val2="$3" "$B/demo-tx.json"; }
echo "== MMIO transmit into a write-combining window: a fence per message against"
echo "   sequence numbers that the device reorders (16 messages per call; this CPU)"
"$B/bench/mmio_tx" --ms 40 --reps 3 --verify-mib 8 --batch 16 --dat "$B/mmio_tx.dat" \
	--out_json "$B/demo-tx.json"
awk -v f="$(v gbps fenced 64)" -v q="$(v gbps sequenced 64)" -v r="$(v gbps raw 64)" \
	-v o="$(v out_of_order sequenced 64)" -v ou="$(v out_of_order unfenced 64)" 'function x(a, b) { return b > 0 ? a / b : 0 }
BEGIN {
	printf "   verdict at 64 B: sequenced %.1f Gb/s, %.1fx a fence per message and %.2fx the\n", q, x(q, f), x(q, r)
	printf "            bare copy; %d messages out of order (unfenced: %d)\n", o, ou
}' 
if command -v gnuplot >/dev/null 2>&1; then
	# columns: size, then (gbps, payload_gbps, verified_gbps) for
	# raw, unfenced, fenced, sequenced
	gnuplot <<EOF
set terminal pngcairo size 900,900 noenhanced
set output "$B/mmio_tx.png"
set multiplot layout 2,1 title "MMIO transmit into a WC window (liboms mmio_tx)"
set xlabel "bytes written per message"
set logscale x 2
set key outside right
set grid
set ylabel "Gb/s"
set logscale y 10
plot "$B/mmio_tx.dat" using 1:2 with linespoints dt 3 title "raw NT copy", \
     "$B/mmio_tx.dat" using 1:5 with linespoints title "unfenced: written", \
     "$B/mmio_tx.dat" using 1:8 with linespoints title "fence per message: written", \
     "$B/mmio_tx.dat" using 1:11 with linespoints title "sequenced: written", \
     "$B/mmio_tx.dat" using 1:12 with linespoints title "sequenced: payload", \
     "$B/mmio_tx.dat" using 1:13 with linespoints dt 2 title "sequenced: verified", \
     "$B/mmio_tx.dat" using 1:10 with linespoints dt 2 title "fenced: verified"
# the ratios of one run: to the bare copy, and to unfenced
set ylabel "ratio (written)"
unset logscale y
set yrange [0:1.4]
plot "$B/mmio_tx.dat" using 1:(\$11/\$2) with linespoints title "sequenced / raw", \
     "$B/mmio_tx.dat" using 1:(\$5/\$2) with linespoints title "unfenced / raw", \
     "$B/mmio_tx.dat" using 1:(\$8/\$2) with linespoints title "fenced / raw", \
     "$B/mmio_tx.dat" using 1:(\$11/\$5) with linespoints dt 2 title "sequenced / unfenced"
unset multiplot
EOF
	echo "   picture: $B/mmio_tx.png (top: Gb/s by message size, each mode; bottom: the"
	echo "            modes as ratios to the bare copy, and sequenced to unfenced, one run)"
else
	echo "   (gnuplot not installed: no plot; data in $B/mmio_tx.dat)"
fi
