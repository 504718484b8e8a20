#!/bin/sh
# The figures' verbs counterparts, drawn from the records of runs between
# the two Soft-RoCE guests (make figures-verbs runs them first; either
# record may be missing, and its figures are then skipped):
#
#   $B/perftest-compare.json  (make perftest-compare)
#     fig3-verbs        WRITE / READ K ops/s by size: perftest's ib_*_bw
#                       beside liboms's rdma_ops in rounds and streaming
#     fig3-verbs-ratio  liboms/perftest by size
#     fig3-verbs-time   where liboms's time per operation goes (rdma_ops
#                       --stream --breakdown), perftest's time per message
#                       beside it
#     fig3-verbs-cpu    CPU per operation, user and system, both programs
#   $B/acquire-compare.json   (the same run)
#     fig5-verbs        acquire gets by size: ordered at the source vs by
#                       the server's destination agent
#   $B/kvs-compare.json       (make kvs-compare: kvs_get --calibrate)
#     fig7-verbs        KVS gets per protocol and size on the link and on
#                       the emulated device's model fitted to it
#
# All wall time on the link, one run per cell, except fig7-verbs' model
# bars, which are model time.
#
# usage: sh scripts/figures-verbs.sh [OUT]    (env: B build dir)
set -eu
B=${B:-build}
OUT=${1:-$B/figures}
mkdir -p "$OUT"
command -v gnuplot >/dev/null 2>&1 ||
	{ echo "figures-verbs: gnuplot is needed (apt-get install gnuplot-nox, or make deps)" >&2; exit 1; }

. "$(dirname "$0")/figures-lib.sh"

drawn=0

# has FILE: a record file with at least one JSON line
has() {
	if [ -s "$1" ] && grep -q '^{' "$1"; then
		return 0
	fi
	echo "figures-verbs: no records in $1, its figures skipped" >&2
	return 1
}

# kilo: the third column (M ops/s) x 1000, for rates of thousands
kilo() {
	awk '{ printf "%s %s %s\n", $1, $2, ($3 == "?" || $3 == "null") ? "NaN" : $3 * 1000 }'
}

pt=$B/perftest-compare.json
if has "$pt"; then
	# perftest's row is in Gb/s and M msg/s; liboms's in M ops/s
	{
		jcol size op perftest_mpps <"$pt" | awk '{ print $1, "perftest-" $2, $3 }'
		jcol size op liboms_mops <"$pt" | awk '{ print $1, "liboms-" $2, $3 }'
		jcol size op liboms_stream_mops <"$pt" | awk '{ print $1, "liboms-" $2 "-stream", $3 }'
	} | kilo | pivot "perftest-write liboms-write liboms-write-stream perftest-read liboms-read liboms-read-stream" \
		>"$OUT/fig3-verbs.dat"
	plot fig3-verbs "Fig 3 on verbs: 1 QP, 1 thread, depth 128, Soft-RoCE" \
		"bytes per operation" "K ops/s (wall time)" x \
		"perftest-write liboms-write liboms-write-stream perftest-read liboms-read liboms-read-stream"

	{
		jcol size op ratio <"$pt" | awk '{ print $1, $2 "-rounds", $3 }'
		jcol size op ratio_stream <"$pt" | awk '{ print $1, $2 "-stream", $3 }'
	} | awk '{ if ($3 == "null" || $3 == "?") $3 = "NaN"; print }' |
		pivot "write-rounds write-stream read-rounds read-stream" >"$OUT/fig3-verbs-ratio.dat"
	{
		gp_head fig3-verbs-ratio "liboms / perftest on the same link, by size (message rates)" \
			"bytes per operation" "liboms / perftest (wall time rates)"
		gp_log x
		# from 0: a ratio's distance from 1 reads true only on a full axis
		echo "set yrange [0:*]"
		echo "set offsets graph 0.04, graph 0.04, graph 0.05, 0"
		gp_lines "$OUT/fig3-verbs-ratio.dat" \
			"write-rounds write-stream read-rounds read-stream"
	} | gnuplot
	echo "figures: $OUT/fig3-verbs-ratio.png"

	# a bar per cell: liboms's parts stacked, perftest's time as a point
	# (records of a run before --breakdown have no parts: no figure)
	if grep -q '"bd_issue_us":[0-9]' "$pt"; then
		jcol op size bd_issue_us bd_progress_us bd_yield_us bd_rest_us perftest_mpps <"$pt" |
			awk '{ for (i = 3; i <= 6; i++) if ($i == "null" || $i == "?") $i = "NaN"
			       pt = ($7 + 0 > 0) ? 1 / $7 : "NaN"
			       print $1 "-" $2, $3, $4, $5, $6, pt }' >"$OUT/fig3-verbs-time.dat"
		{
			gp_head fig3-verbs-time "liboms streaming, us per operation (rdma_ops --breakdown)" \
				"operation and bytes" "us per operation (wall time)"
			gp_bars
			echo "set style data histograms"
			echo "set style histogram rowstacked"
			echo "set style fill solid 0.7 border -1"
			echo "set boxwidth 0.7"
			echo "plot '$OUT/fig3-verbs-time.dat' using 2:xtic(1) title 'issue (oms_put/get)', \
	'' using 3 title 'progress (poll, completions)', '' using 4 title 'yield (CPU to rxe)', \
	'' using 5 title 'rest of the loop', '' using 0:6 with points pt 7 ps 1.3 lc rgb '#000000' title 'perftest, per message'"
		} | gnuplot
		echo "figures: $OUT/fig3-verbs-time.png"
		drawn=$((drawn + 1))
	fi

	# CPU per operation, user and system, liboms (streaming, rusage) and
	# perftest (busybox time over its run, by its shares)
	if grep -q '"pt_cpu_user_us":[0-9]' "$pt"; then
		jcol op size bd_cpu_user_us pt_cpu_user_us bd_cpu_sys_us pt_cpu_sys_us <"$pt" |
			awk '{ for (i = 3; i <= 6; i++) if ($i == "null" || $i == "?") $i = "NaN"
			       print $1 "-" $2, $3, $4, $5, $6 }' >"$OUT/fig3-verbs-cpu.dat"
		{
			gp_head fig3-verbs-cpu "CPU per operation, user and system" \
				"operation and bytes" "CPU us per operation"
			gp_bars
			echo "set style data histograms"
			echo "set style histogram clustered gap 1"
			echo "set style fill solid 0.7 border -1"
			echo "plot '$OUT/fig3-verbs-cpu.dat' using 2:xtic(1) title 'liboms user', \
'' using 3 title 'perftest user', '' using 4 title 'liboms system', '' using 5 title 'perftest system'"
		} | gnuplot
		echo "figures: $OUT/fig3-verbs-cpu.png"
		drawn=$((drawn + 1))
	fi
	drawn=$((drawn + 2))
fi

acq=$B/acquire-compare.json
if has "$acq"; then
	{
		jcol size source_mops <"$acq" | awk '{ print $1, "source", $2 }'
		jcol size agent_mops <"$acq" | awk '{ print $1, "agent", $2 }'
	} | kilo | pivot "source agent" >"$OUT/fig5-verbs.dat"
	# log y: the source's rate halves with each doubling of size
	plot fig5-verbs "Fig 5 on verbs: acquire gets, streaming, at the source vs by the destination agent" \
		"bytes per read" "K gets/s (wall time, log scale)" xy "source agent"
	drawn=$((drawn + 1))
fi

kv=$B/kvs-compare.json
if has "$kv"; then
	grep '"calibration":"cell"' "$kv" | jcol proto size device_mops model_mops |
		awk '{ printf "%s-%s %s %s\n", $1, $2, $3 * 1000, $4 * 1000 }' >"$OUT/fig7-verbs.dat"
	set -- $(grep '"calibration":"fit"' "$kv" | jcol lat_bus_ns lat_req_ns link_gbps_fit | head -n 1)
	fit_bus=$(awk -v v="${1:-0}" 'BEGIN { printf "%.0f", v / 1000 }')
	fit_req=$(awk -v v="${2:-0}" 'BEGIN { printf "%.0f", v / 1000 }')
	fit_link=$(awk -v v="${3:-0}" 'BEGIN { printf "%.3g", v }')
	f7t="KVS gets: the link (wall time) and the model fitted to it (model time)"
	{
		gp_head fig7-verbs "$f7t" "protocol and value bytes" "K gets/s"
		gp_bars
		# the fit on a second line of the title (gnuplot's \n, not the shell's)
		printf 'set title "%s\\n%s"\n' "$f7t" \
			"the fit: bus $fit_bus us, $fit_req us per request, link $fit_link Gb/s"
		echo "set style data histograms"
		echo "set style histogram clustered gap 1"
		echo "set style fill solid 0.7 border -1"
		echo "plot '$OUT/fig7-verbs.dat' using 2:xtic(1) title 'device (rxe)', '' using 3 title 'model'"
	} | gnuplot
	echo "figures: $OUT/fig7-verbs.png"
	drawn=$((drawn + 1))
fi

[ $drawn -gt 0 ] || { echo "figures-verbs: nothing to draw: run make perftest-compare or make kvs-compare first" >&2; exit 1; }
echo "figures-verbs: $drawn figures in $OUT"
