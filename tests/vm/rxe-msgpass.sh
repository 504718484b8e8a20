# bench/msg_pass across the two guests (sourced by rxe-guest.sh, which
# defines tap, wait_file, up_when, bdir, shared, me and peer; json_num comes from
# rxe-kvs.sh): data to one destination, a flag to another, on two RC
# connections of Soft-RoCE.  Guest a owns both destinations and is the
# consumer (its CPU polls the flag, then reads the data where it landed);
# guest b produces in every mode and checks the JSON: every ordered mode
# (quiet, strong, strong-seq through the server's destination agents,
# fence) checked by the consumer and never late.  The unordered control is measured, not asserted: on one
# link and one responder the flag rarely overtakes the data.
mp_port=18550
mp_bin=$bdir/bench/msg_pass

mp_server() {
	[ -x "$mp_bin" ] || { touch "$shared/mp-up"; return 0; }
	# bounded: a server whose shutdown hangs must not hold the guest
	timeout -k 5 1500 "$mp_bin" --server --bind "$me" -p $mp_port \
		--timeout-ms 60000 >/run/mp-server.log 2>&1 &
	mpid=$!
	# tell the client once both destinations listen
	up_when $mpid /run/mp-server.log 'msg_pass server: D1' mp-up
	wait_file "$shared/mp-done" 900
	done_rc=$?
	kill -0 $mpid 2>/dev/null
	alive=$?
	t0=$(date +%s)
	kill -TERM $mpid 2>/dev/null
	wait $mpid
	rc=$?
	sed 's/^/# msg_pass server: /' /run/mp-server.log | tail -n 3
	echo "# msg_pass server: $(($(date +%s) - t0)) s from SIGTERM to its exit"
	[ $done_rc -eq 0 ] && [ $alive -eq 0 ] && [ $rc -eq 0 ]
	tap $? "msg_pass --server: both destinations and the consumer served the client (exit $rc on SIGTERM)"
}

mp_client() {
	[ -x "$mp_bin" ] || { touch "$shared/mp-done"; return 0; }
	wait_file "$shared/mp-up" 1200
	i=0
	# the server comes up once the probe is done: retry the connection
	while :; do
		timeout -k 5 600 "$mp_bin" --client "$peer" -p $mp_port \
			-s 64,4096 --threads 1,2 -D $cell_s --window 16 \
			--timeout-ms 60000 --json \
			>/run/mp.json 2>/run/mp.err
		rc=$?
		[ $rc -eq 0 ] && break
		# the server comes up after the probe's, which may wait up to
		# ten minutes for a probe client that failed
		grep -q 'cannot set up the connections' /run/mp.err &&
			[ $i -lt 360 ] || break
		i=$((i + 1))
		sleep 2
	done
	touch "$shared/mp-done"
	[ $rc -eq 0 ] || sed 's/^/# msg_pass: /' /run/mp.err | tail -n 5
	tap $rc "msg_pass --client $peer: every mode ran, no ordered mode late (exit $rc)"
	for s in 64 4096; do
		for th in 1 2; do
			cell="\"size\":$s,\"threads\":$th,"
			for m in quiet strong strong-seq fence unordered; do
				r=$(grep "\"mode\":\"$m\",$cell" /run/mp.json)
				echo "# msg_pass $m $s B x $th: $(json_num "$r" mmsgs) M msgs/s," \
					"x quiet $(json_num "$r" ratio_vs_quiet)," \
					"$(json_num "$r" late) late of $(json_num "$r" checks)"
			done
			ok=0
			for m in quiet strong strong-seq fence; do
				r=$(grep "\"mode\":\"$m\",$cell" /run/mp.json)
				[ -n "$r" ] && [ "$(json_num "$r" late)" = 0 ] &&
					[ "$(json_num "$r" checks)" -gt 0 ] || ok=1
			done
			tap $ok "msg_pass over rxe, $s B, $th producer thread(s): quiet, strong, strong-seq (the agents' reorder buffers) and fence checked by the consumer and never late"
		done
	done
}
