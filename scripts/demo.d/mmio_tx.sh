#!/bin/sh
# make demo: the MMIO transmit sweep (seed 004, Fig 4), short.  Writes
# $B/mmio_tx.dat and, when gnuplot is installed, $B/mmio_tx.png.
set -eu
B=${B:-build}
echo "== mmio_tx: write-combining transmit, fence per message vs sequence numbers"
"$B/bench/mmio_tx" --ms 40 --reps 3 --verify-mib 8 --dat "$B/mmio_tx.dat"
if command -v gnuplot >/dev/null 2>&1; then
	# columns: size, then (gbps, payload_gbps, verified_gbps) for
	# raw, unfenced, fenced, sequenced
	gnuplot <<EOF
set terminal pngcairo size 900,640 noenhanced
set output "$B/mmio_tx.png"
set title "MMIO transmit into a WC window (liboms mmio_tx)"
set xlabel "bytes written per message"
set ylabel "Gb/s"
set logscale x 2
set logscale y 10
set key outside below
set grid
plot "$B/mmio_tx.dat" using 1:5 with linespoints title "unfenced: written", \
     "$B/mmio_tx.dat" using 1:8 with linespoints title "fence per message: written", \
     "$B/mmio_tx.dat" using 1:11 with linespoints title "sequenced: written", \
     "$B/mmio_tx.dat" using 1:12 with linespoints title "sequenced: payload", \
     "$B/mmio_tx.dat" using 1:13 with linespoints dt 2 title "sequenced: verified in order", \
     "$B/mmio_tx.dat" using 1:10 with linespoints dt 2 title "fence per message: verified in order"
EOF
	echo "   plot: $B/mmio_tx.png"
else
	echo "   (gnuplot not installed: no plot; data in $B/mmio_tx.dat)"
fi
