# apps/oms_probe across the two guests (sourced by rxe-guest.sh, which
# defines tap, wait_file, up_when, bdir, shared, me and peer): what Soft-RoCE
# orders, measured with plain verbs.  Guest a is the responder
# (oms_probe --server, one client, then it exits); guest b runs the verbs
# target and checks its JSON report: every probe measured, the checks the
# verdicts rest on, a READ then a WRITE with IBV_SEND_FENCE never
# reordered (RC's rule: exit 1 otherwise), the costs timed.  What rxe
# orders beyond that is reported, not asserted: it is the answer the tool
# exists to give.
probe_port=18540
probe_bin=$bdir/apps/oms_probe

probe_server() {
	[ -x "$probe_bin" ] || { touch "$shared/probe-up"; return 0; }
	timeout -k 5 900 "$probe_bin" --server --bind "$me" -p $probe_port \
		--timeout-ms 120000 >/run/probe-server.log 2>&1 &
	ppid=$!
	# the client connects once the server listens: connection attempts
	# made before that can reach the listener late, as stale requests
	up_when $ppid /run/probe-server.log 'oms_probe server on' probe-up
	wait $ppid
	rc=$?
	sed 's/^/# probe server: /' /run/probe-server.log | tail -n 5
	[ $rc -eq 0 ]
	tap $? "oms_probe --server: served the verbs probe and exited 0 (exit $rc)"
}

probe_client() {
	[ -x "$probe_bin" ] || return 0
	# the server starts once the kvs suite is done, and says when it
	# listens; --timeout-ms bounds each completion and the connection
	wait_file "$shared/probe-up" 900
	timeout -k 5 900 "$probe_bin" "$peer" -p $probe_port \
		--targets verbs --rounds $probe_rounds --cost-rounds $probe_cost_rounds \
		--timeout-ms 120000 --json >/run/probe.json 2>/run/probe.err
	rc=$?
	[ $rc -eq 0 ] || sed 's/^/# probe: /' /run/probe.err | tail -n 5
	tap $rc "oms_probe $peer --targets verbs: exit 0 (exit $rc)"
	# the report, as a table in the log
	while read -r line; do
		echo "# probe $(json_num "$line" probe): $(json_num "$line" verdict)" \
			"checks $(json_num "$line" checks) violations" \
			"$(json_num "$line" violations) cost $(json_num "$line" cost_ns) ns" \
			"$(json_num "$line" note)"
	done </run/probe.json
	prec() { grep "\"probe\":\"$1\"," /run/probe.json | head -n 1; }
	for p in device read_data_in_order write_data_in_order relaxed_ordering_mr; do
		r=$(prec $p)
		[ "$(json_num "$r" measured)" = true ] && [ -n "$(json_num "$r" value)" ]
		tap $? "oms_probe verbs: capability $p reported ($(json_num "$r" value))"
	done
	for p in write_write write_within completion flag_other_qp read_within \
		read_read war_nofence war_fence; do
		r=$(prec $p)
		[ "$(json_num "$r" measured)" = true ] && [ "$(json_num "$r" rounds)" -gt 0 ]
		tap $? "oms_probe verbs: $p ran $(json_num "$r" rounds) rounds: $(json_num "$r" verdict) ($(json_num "$r" violations) of $(json_num "$r" checks))"
	done
	for p in read_within war_nofence war_fence; do
		c=$(json_num "$(prec $p)" checks)
		[ "${c:-0}" -gt 0 ]
		tap $? "oms_probe verbs: $p rests on ${c:-0} checks (> 0)"
	done
	r=$(prec war_fence)
	[ "$(json_num "$r" violations)" = 0 ]
	tap $? "L33 on rxe: READ(X) then WRITE(X)|IBV_SEND_FENCE never returns the later value ($(json_num "$r" violations) of $(json_num "$r" checks))"
	for p in cost_write cost_read cost_write_flush cost_read_write cost_read_fence_write; do
		c=$(json_num "$(prec $p)" cost_ns)
		awk -v c="${c:-0}" 'BEGIN { exit !(c > 0) }'
		tap $? "oms_probe verbs: $p timed (${c:-?} ns median)"
	done
}
