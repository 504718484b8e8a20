# examples/msg_verbs between the two guests (sourced by rxe-guest.sh, which
# defines tap, wait_file, up_when, bdir, shared, me and peer): the example
# as its usage gives it, the server (no HOST) on guest a, the client
# (HOST) on guest b, over Soft-RoCE.  The server checks that no flag it
# sees comes before its data, and waits for the client to leave
# (oms_listener_peers) before it closes: the client's last put completes
# only with the server's acknowledgement.
ex_bin=$bdir/examples/msg_verbs

ex_server() {
	[ -x "$ex_bin" ] || { touch "$shared/ex-up"; return 0; }
	timeout -k 5 300 "$ex_bin" --bind "$me" >/run/ex-server.log 2>&1 &
	epid=$!
	up_when $epid /run/ex-server.log 'msg_verbs: listening' ex-up
	wait $epid
	rc=$?
	sed 's/^/# msg_verbs server: /' /run/ex-server.log
	tap $rc "examples/msg_verbs --bind $me (the server): every message's flag after its data, the client gone before the close (exit $rc)"
	touch "$shared/ex-done"
}

ex_client() {
	[ -x "$ex_bin" ] || return 0
	wait_file "$shared/ex-up" 600
	timeout -k 5 300 "$ex_bin" "$peer" >/run/ex-client.log 2>&1
	rc=$?
	sed 's/^/# msg_verbs client: /' /run/ex-client.log
	tap $rc "examples/msg_verbs $peer (the client): sent (exit $rc)"
	wait_file "$shared/ex-done" 300
}
