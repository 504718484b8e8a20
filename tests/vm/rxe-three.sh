# Ordering across three hosts (sourced by rxe-guest.sh, which defines tap,
# wait_file, up_when, bdir, shared, me and peer; run by run-rxe-tests.sh's
# suite three, three guests on one network): verbs-tests/three_hosts in
# its three roles.  Guest a is the data host, guest c the flag host (with
# the reader, which reads guest a), guest b the writer, whose TAP holds
# the tests (L02 across hosts, one-sided and through both agents, and the
# control without ordering).
three_port=7481
three_bin=$bdir/verbs-tests/three_hosts
data_host=10.77.0.1
flag_host=10.77.0.4

# three_host ROLE FILE: serve as the data or flag host until the writer
# says quit; FILE in the shared directory once it listens
three_host() {
	if [ "$1" = flag ]; then
		extra="$data_host $three_port"
		# the reader connects to the data host first
		wait_file "$shared/three-data-up" 600
	else
		extra=""
	fi
	# shellcheck disable=SC2086 # extra: two words or none
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
}

three_flag() {
	three_host flag three-flag-up
}

three_writer() {
	wait_file "$shared/three-data-up" 600 &&
		wait_file "$shared/three-flag-up" 600
	tap $? "three_hosts: the data and flag hosts listen"
	OMS_RXE_DATA_HOST=$data_host OMS_RXE_FLAG_HOST=$flag_host \
		OMS_RXE_PORT=$three_port timeout -k 5 1200 "$three_bin" 2>&1 |
		grep --line-buffered -v '^TAP version\|^1\.\.'
}
