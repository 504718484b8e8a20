# Ordering across three hosts (sourced by rxe-guest.sh, which defines tap,
# wait_file, up_when, bdir, shared, me and peer; run by run-rxe-tests.sh's
# suite three, three guests on one network): verbs-tests/three_hosts in
# its three roles.  Guest a is the data host, guest c the flag host (with
# the reader, which reads guest a), guest b the writer, whose TAP holds
# the tests (L02 across hosts, one-sided and through both agents, and the
# control without ordering).  Then the key-value store with clients on two
# hosts: kvs_get's server on guest a (its agent, a writer updating the
# items), its clients on guests b and c at once, Single Read, Validation
# and FaRM: gets served to both, none torn.  Pessimistic is not run here:
# with its clients on two hosts, a get of it can go unanswered until the
# context's timeout (-ETIMEDOUT; docs/verbs.md, "Tests").
three_port=7481
three_bin=$bdir/verbs-tests/three_hosts
data_host=10.77.0.1
flag_host=10.77.0.4

# three_host ROLE FILE: serve as the data or flag host until the writer
# says quit; FILE in the shared directory once it listens.  The data
# host's agent runs one serving thread (the requesters of both hosts then
# share its turns: what the fairness test holds it to) and prints its
# statistics at close.
three_host() {
	if [ "$1" = flag ]; then
		extra="$data_host $three_port"
		# the reader connects to the data host first
		wait_file "$shared/three-data-up" 600
	else
		extra=""
	fi
	# shellcheck disable=SC2086 # extra: two words or none
	OMS_AGENT_STATS=1 OMS_AGENT_THREADS=1 \
		timeout -k 5 1200 "$three_bin" "$1" $three_port 1180 $extra \
		>"/run/three-$1.log" 2>&1 &
	tpid=$!
	up_when $tpid "/run/three-$1.log" 'host listening' "$2"
	wait $tpid
	rc=$?
	sed "s/^/# three_hosts $1: /" "/run/three-$1.log" | tail -n 5
	[ $rc -eq 0 ]
	tap $? "three_hosts: the $1 host served the writer and quit when told (exit $rc)"
}

three_data() {
	three_host data three-data-up
	three_fairness
	three_kvs_server
}

# The data host's agent, from its statistics line: the two hosts'
# floods (three_hosts' agent_serves_the_requesters_of_two_hosts_in_turn)
# made backlogs wait behind each other, and none waited past round-robin's
# bound.  A count of the agent's, which the guests' CPU shares cannot move.
three_fairness() {
	line=$(grep 'liboms: agent: .* turns after waiting' /run/three-data.log | tail -n 1)
	waited=$(printf '%s\n' "$line" | sed -n 's/.*; \([0-9]*\) turns after waiting.*/\1/p')
	most=$(printf '%s\n' "$line" | sed -n 's/.*at most \([0-9]*\) descriptors (the round-robin bound then \([0-9]*\)).*/\1 of \2/p')
	past=$(printf '%s\n' "$line" | sed -n 's/.*, \([0-9]*\) turns past the bound.*/\1/p')
	[ "${waited:-0}" -gt 0 ] 2>/dev/null && [ "$past" = 0 ]
	tap $? "three_hosts: the data host's agent took the two hosts' backlogs in turn: ${waited:-?} turns waited behind the other's, at most ${most:-?} descriptors, ${past:-?} past round-robin's bound"
}

three_flag() {
	three_host flag three-flag-up
	three_kvs_client c
}

three_writer() {
	wait_file "$shared/three-data-up" 600 &&
		wait_file "$shared/three-flag-up" 600
	tap $? "three_hosts: the data and flag hosts listen"
	OMS_RXE_DATA_HOST=$data_host OMS_RXE_FLAG_HOST=$flag_host \
		OMS_RXE_PORT=$three_port timeout -k 5 1200 "$three_bin" 2>&1 |
		grep --line-buffered -v '^TAP version\|^1\.\.'
	three_kvs_client b
}

# kvs_get's server (rxe-kvs.sh's, on the data host) until both clients
# are done
three_kvs_server() {
	[ -x "$bdir/bench/kvs_get" ] || return 0
	OMS_AGENT=1 OMS_AGENT_STATS=1 "$bdir/bench/kvs_get" --server --bind "$me" \
		--port $kvs_port --proto all --size 64 --items 256 --writers 1 \
		--remote-write --timeout-ms 20000 >/run/kvs-server.log 2>&1 &
	kpid=$!
	wait_file "$shared/kvs3-b-done" 900
	stop_when_done $kpid kvs3-c-done
	sed 's/^/# kvs server: /' /run/kvs-server.log | grep -v "updates/s$" | tail -n 30
	[ $done_rc -eq 0 ] && [ $alive -eq 0 ]
	tap $? "kvs_get --server served the clients of two hosts until both were done (exit $rc on SIGTERM)"
}

# three_kvs_client ME: once the server answers and the other host's
# client is ready too, every ordering protocol for the same time
three_kvs_client() {
	[ -x "$bdir/bench/kvs_get" ] || return 0
	other=$([ "$1" = b ] && echo c || echo b)
	k=$bdir/bench/kvs_get
	i=0
	while ! "$k" --client $data_host --port $kvs_port --proto single --size 64 \
		--items 256 --threads 1 --qps 1 --batch 4 --duration 0.2 \
		--timeout-ms 20000 --json >/dev/null 2>&1; do
		i=$((i + 1))
		[ $i -gt 60 ] && break
		sleep 1
	done
	touch "$shared/kvs3-$1-ready"
	wait_file "$shared/kvs3-$other-ready" 600
	for p in single validation farm; do
		out=$("$k" --client $data_host --port $kvs_port --proto $p --size 64 \
			--items 256 --threads 1 --qps 2 --batch 8 --duration 1 \
			--timeout-ms 20000 --json 2>/run/kvs3-$p.err)
		rc=$?
		line=$(printf '%s\n' "$out" | grep '^{' | head -n 1)
		echo "# kvs $p from host $1: $line"
		sed "s/^/# kvs $p stderr: /" /run/kvs3-$p.err | tail -n 5
		gets=$(json_num "$line" gets)
		torn=$(json_num "$line" torn)
		[ $rc -eq 0 ] && [ "${gets:-0}" -gt 0 ] 2>/dev/null && [ "$torn" = 0 ]
		tap $? "kvs_get --client --proto $p from host $1 beside host $other's: $gets gets, torn ${torn:-?} == 0"
	done
	touch "$shared/kvs3-$1-done"
}
