# perftest beside liboms on one link (sourced by rxe-guest.sh for the
# perftest suite; it defines tap, wait_file, up_when, bdir, shared, me and
# peer).
# Guest a serves: perftest's ib_write_bw / ib_read_bw servers one cell after
# another, and one bench/rdma_ops server throughout.  Guest b measures each
# (op, size) cell three times, back to back: perftest, then liboms
# (rdma_ops: weak puts or relaxed gets) in rounds of a batch and a quiet,
# then liboms streaming (--stream: the depth in flight all the time, as
# perftest keeps its send queue full; --doorbell-batch: one doorbell for
# many work requests, as perftest's post list), with the same size, one
# QP, one thread and the same depth (perftest's tx depth = rdma_ops
# --batch), and prints the three and the two ratios.  Two more runs,
# streaming with --breakdown, with and without the doorbell batch, say
# where liboms's time per operation goes (issuing, progress, yields to
# rxe, the rest; the CPU in user and system mode; doorbells and
# completion entries per operation).
# TAP says whether each cell produced numbers, every rate above zero;
# speed is not a pass criterion.  A perftest run that gives no row or a
# rate of 0 (seen once at READ 256 B: nothing completed in its window) is
# run again, up to $perf_tries tries in all, in step through shared/: for
# try T of a cell the server listens until the client's verdict
# (pt-OP-SIZE-again-T or pt-OP-SIZE-done), stops its listener whatever
# state it is in, and says so (pt-OP-SIZE-end-T); the client waits for
# that before its next try or cell, so no listener outlives its try.
# Each cell's figures also go out as one JSON line ("# perf-json {...}")
# for make perftest-compare to collect.  (pt_try, not n: tap.sh counts
# its tests in n.)
# Then acquire gets (rdma_ops --op acquire, streaming) at the same sizes,
# ordered at the source (OMS_AGENT=0: one fenced READ per 64-byte line)
# and by the server's destination agent (the rdma_ops server runs with
# OMS_AGENT=1), and their ratio; JSON lines "# acq-json {...}".
perf_sizes=${OMS_PERF_SIZES:-64 128 256 512 1024 2048 4096}
perf_dur=${OMS_PERF_DURATION:-2}
perf_depth=128
perf_port=18516		# rdma_ops; perftest keeps its own 18515
perf_tries=3

perf_server() {
	OMS_AGENT=1 "$bdir/bench/rdma_ops" --server --bind "$me" -p $perf_port \
		>/run/rdma_ops.log 2>&1 &
	spid=$!
	# the client starts its cells once this side has come this far: the
	# last suite's server may take a while to go (its connections'
	# teardown), and the client's retries are for one cell's server
	up_when $spid /run/rdma_ops.log 'rdma_ops server:' perf-up
	for op in write read; do
		for s in $perf_sizes; do
			# a perftest server per try of a cell, up until the
			# client's verdict on the try.  Bounded: the client's
			# try is at most 180 s of connects and a 120 s run, and
			# a lost client must not hang us.
			pt_try=1
			while :; do
				timeout -k 5 400 ib_${op}_bw -d rxe0 -F -s "$s" \
					-D "$perf_dur" --report_gbits >/run/pt-srv.log 2>&1 &
				ppid=$!
				i=0
				while [ ! -e "$shared/pt-$op-$s-again-$pt_try" ] &&
					[ ! -e "$shared/pt-$op-$s-done" ]; do
					i=$((i + 1))
					[ $i -gt 4000 ] && break
					sleep 0.1
				done
				# a run that ended on both sides exits by itself
				i=0
				while kill -0 $ppid 2>/dev/null && [ $i -lt 50 ]; do
					i=$((i + 1))
					sleep 0.1
				done
				kill $ppid 2>/dev/null
				wait $ppid ||
					sed "s/^/# perftest server $op $s try $pt_try: /" /run/pt-srv.log | tail -n 3
				touch "$shared/pt-$op-$s-end-$pt_try"
				[ -e "$shared/pt-$op-$s-again-$pt_try" ] &&
					[ $pt_try -lt $perf_tries ] || break
				pt_try=$((pt_try + 1))
			done
		done
	done
	wait_file "$shared/perf-done" 600
	kill -0 $spid 2>/dev/null
	alive=$?
	kill -TERM $spid 2>/dev/null
	wait $spid
	[ $alive -eq 0 ]
	tap $? "rdma_ops --server served the whole comparison"
}

# perftest's result row (its size first): "avg_gbps mpps", or nothing
pt_row() {	# pt_row FILE SIZE
	awk -v s="$2" '$1 == s && NF >= 5 { print $4, $5; exit }' "$1"
}

# One perftest client try of a cell into /run/pt.out, and its CPU ("user
# sys wall" seconds, busybox time) into /run/pt.time: connect again while
# the server is not up, for at most 180 s; a run that printed its result
# row ends the try whatever its exit status.  pt_run OP SIZE
pt_run() {
	pt_t0=$(date +%s)
	while :; do
		busybox time -o /run/pt.time -f "%U %S %e" \
			timeout -k 5 120 ib_$1_bw -d rxe0 -F -s "$2" \
			-D "$perf_dur" --report_gbits "$peer" >/run/pt.out 2>&1
		[ -n "$(pt_row /run/pt.out "$2")" ] && return 0
		[ $(($(date +%s) - pt_t0)) -ge 180 ] && return 1
		sleep 1
	done
}

# 0 when $1 is a number above zero
positive() {
	awk -v v="${1:-x}" 'BEGIN { exit !(v ~ /^[0-9.e+-]+$/ && v + 0 > 0) }'
}

perf_client() {
	wait_file "$shared/perf-up" 900 ||
		echo "# perftest: the server side never said it was up"
	echo "# perftest vs liboms on rxe, 1 QP, 1 thread, depth $perf_depth, $perf_dur s per cell"
	echo "# liboms in rounds (a batch, then quiet: the API's usual loop) and streaming (--stream: a depth in flight all the time, as perftest)"
	echo "# op     bytes  perftest Gb/s   Mpps   rounds Mops  stream Mops  rounds/perftest  stream/perftest"
	for op in write read; do
		for s in $perf_sizes; do
			pt_try=1
			while :; do
				pt_run $op "$s"
				pt=$(pt_row /run/pt.out "$s")
				pm=${pt#* }
				if positive "$pm" || [ $pt_try -ge $perf_tries ]; then
					touch "$shared/pt-$op-$s-done"
					break
				fi
				echo "# perftest ib_${op}_bw $s B, try $pt_try: no rate above 0 ($(tail -n 1 /run/pt.out))"
				touch "$shared/pt-$op-$s-again-$pt_try"
				wait_file "$shared/pt-$op-$s-end-$pt_try" 60 ||
					echo "# perftest server: try $pt_try of $op $s never ended"
				pt_try=$((pt_try + 1))
			done
			positive "$pm" ||
				echo "# perftest ib_${op}_bw $s B, try $pt_try: no rate above 0 ($(tail -n 1 /run/pt.out))"
			# the next cell starts once this one's listener is gone
			wait_file "$shared/pt-$op-$s-end-$pt_try" 60 ||
				echo "# perftest server: try $pt_try of $op $s never ended"
			: >/run/lo.err
			lo=$(liboms_cell "$op" "$s")
			ls=$(liboms_cell "$op" "$s" --stream --doorbell-batch)
			bd=$(liboms_cell "$op" "$s" --stream --doorbell-batch \
				--breakdown)
			bd1=$(liboms_cell "$op" "$s" --stream --breakdown)
			pg=${pt% *}
			lg=$(json_field "$lo" gbps)
			lm=$(json_field "$lo" mops)
			sm=$(json_field "$ls" mops)
			# by message rates: perftest prints Gb/s with two
			# decimals only, its message rate with six
			ratio=$(rate_ratio "$lm" "$pm")
			sratio=$(rate_ratio "$sm" "$pm")
			printf '# %-6s %6s %14s %6s %12s %12s %16s %16s\n' "$op" "$s" \
				"${pg:-?}" "${pm:-?}" "${lm:-?}" "${sm:-?}" "$ratio" "$sratio"
			# where liboms's time goes, per operation (us), beside
			# perftest's time per message, split by its CPU shares
			# over its whole run (user, system: busy polling, it
			# streams all the time; its set-up is a few % of it)
			set -- $(tail -n 1 /run/pt.time 2>/dev/null)
			ptj=$(awk -v m="${pm:-0}" -v u="${1:-x}" -v y="${2:-x}" -v e="${3:-x}" 'BEGIN {
				if (m <= 0) { print "null null null"; exit }
				t = 1 / m
				if (e + 0 > 0 && u ~ /^[0-9.]+$/ && y ~ /^[0-9.]+$/)
					printf "%.1f %.1f %.1f\n", t, t * u / e, t * y / e
				else
					printf "%.1f null null\n", t }')
			set -- $ptj
			bdj=",\"pt_op_us\":${1:-null},\"pt_cpu_user_us\":${2:-null},\"pt_cpu_sys_us\":${3:-null}"
			for k in op_us issue_us progress_us yield_us rest_us cpu_user_us cpu_sys_us timer_ns doorbells_per_op cqes_per_op; do
				v=$(json_field "$bd" $k)
				bdj="$bdj,\"bd_$k\":${v:-null}"
				v=$(json_field "$bd1" $k)
				bdj="$bdj,\"bd1_$k\":${v:-null}"
			done
			echo "# $op $s B, us per op: perftest $1 (CPU user $2, system $3); liboms streaming $(json_field "$bd" op_us) = issue $(json_field "$bd" issue_us) + progress $(json_field "$bd" progress_us) + yield $(json_field "$bd" yield_us) + rest $(json_field "$bd" rest_us) (CPU user $(json_field "$bd" cpu_user_us), system $(json_field "$bd" cpu_sys_us)), doorbells $(json_field "$bd" doorbells_per_op) and CQEs $(json_field "$bd" cqes_per_op) per op; a doorbell per op: $(json_field "$bd1" op_us) us (CPU system $(json_field "$bd1" cpu_sys_us)), doorbells $(json_field "$bd1" doorbells_per_op), CQEs $(json_field "$bd1" cqes_per_op)"
			echo "# perf-json {\"op\":\"$op\",\"size\":$s,\"perftest_gbps\":${pg:-null},\"perftest_mpps\":${pm:-null},\"liboms_gbps\":${lg:-null},\"liboms_mops\":${lm:-null},\"ratio\":$(json_num "$ratio"),\"liboms_stream_mops\":${sm:-null},\"ratio_stream\":$(json_num "$sratio"),\"perftest_tries\":$pt_try$bdj}"
			positive "$pm" && positive "$lm" && positive "$sm" &&
				positive "$(json_field "$bd" op_us)"
			rc=$?
			[ $rc -eq 0 ] || { tail -n 3 /run/pt.out; tail -n 3 /run/lo.err; } |
				sed "s/^/# $op $s: /"
			tap $rc "perftest ib_${op}_bw and liboms rdma_ops --op $op, $s B: both measured, rates above 0 (liboms/perftest rounds $ratio, streaming $sratio)"
		done
	done
	acquire_cells
	touch "$shared/perf-done"
}

# Acquire gets: at the source against the server's agent, per size.
acquire_cells() {
	echo "# acquire gets, streaming, depth $perf_depth: source (OMS_AGENT=0) vs the destination agent"
	echo "# bytes  source Mops  agent Mops  agent/source"
	for s in $perf_sizes; do
		: >/run/lo.err
		src=$(OMS_AGENT=0 liboms_cell acquire "$s" --stream)
		agt=$(liboms_cell acquire "$s" --stream)
		sm=$(json_field "$src" mops)
		am=$(json_field "$agt" mops)
		ratio=$(rate_ratio "$am" "$sm")
		printf '# %6s %12s %11s %13s\n' "$s" "${sm:-?}" "${am:-?}" "$ratio"
		echo "# acq-json {\"size\":$s,\"source_mops\":${sm:-null},\"agent_mops\":${am:-null},\"ratio\":$(json_num "$ratio")}"
		positive "$sm" && positive "$am"
		rc=$?
		[ $rc -eq 0 ] || tail -n 3 /run/lo.err | sed "s/^/# acquire $s: /"
		tap $rc "rdma_ops --op acquire, $s B: at the source and through the agent both measured (agent/source $ratio)"
	done
}

# liboms's figure for one cell, a JSON line:
# liboms_cell OP SIZE [--stream] [--breakdown]
liboms_cell() {
	lc_op=$1 lc_size=$2
	shift 2
	"$bdir/bench/rdma_ops" --client "$peer" -p $perf_port --op "$lc_op" \
		-s "$lc_size" --threads 1 -q 1 --batch $perf_depth "$@" \
		-D "$perf_dur" --timeout-ms 20000 --json 2>>/run/lo.err |
		grep '^{' | head -n 1
}

# a / b with two decimals, or ? when b is not a positive number
rate_ratio() {
	awk -v a="${1:-0}" -v b="${2:-0}" \
		'BEGIN { if (b > 0) printf "%.2f", a / b; else print "?" }'
}

json_num() {
	[ "$1" = "?" ] && echo null || echo "$1"
}

# One field of a one-line JSON object: json_field LINE KEY
json_field() {
	printf '%s\n' "$1" | sed -n "s/.*\"$2\":\([0-9.e+-]*\).*/\1/p"
}
