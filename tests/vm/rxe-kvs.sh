# bench/kvs_get across the two guests (sourced by rxe-guest.sh, which
# defines tap, wait_file, bdir, shared, me and peer).  Guest a runs one server
# with every protocol's table and a writer thread, its tables open to
# clients' updates (--remote-write), its listeners running the destination
# agent (OMS_AGENT=1); guest b runs a short client per protocol and checks
# its JSON (Single Read's acquire gets ordered by the agent), Single Read
# again with the acquires ordered at the source (OMS_AGENT=0: the client
# does not ask for the agent), then one per correct protocol that also
# updates items over RDMA (--read-pct 80: CAS lock, WRITE, release store),
# then runs one more client while
# the host stops guest a's CPUs: the client must exit non-zero, saying
# why, within 5 s of the stop.  Last, README's two-host lines as they are
# there: its server (no -s) on guest a, its client (-s 64,1024 --proto
# all) on guest b.
kvs_port=18515
kvs_protos="single validation farm pessimistic broken"

# A server's life: until the client writes $shared/FILE (900 s at most),
# then SIGTERM; done_rc 0 if it wrote it, alive 0 if the server was still
# up then, rc its exit status.  stop_when_done PID FILE
stop_when_done() {
	wait_file "$shared/$2" 900
	done_rc=$?
	kill -0 "$1" 2>/dev/null
	alive=$?
	kill -TERM "$1" 2>/dev/null
	wait "$1"
	rc=$?
}

kvs_server() {
	# --bind: the writer connects to its own listener through the NIC
	# (rxe is on the wire's interface, not on loopback); with
	# --remote-write it locks and writes every table that way, so its
	# context gets the clients' 20 s: a loaded host stops this TCG guest
	# for seconds, and a 2 s timeout once failed the writer (and the
	# server with it) mid-suite
	OMS_AGENT=1 OMS_AGENT_STATS=1 "$bdir/bench/kvs_get" --server --bind "$me" \
		--port $kvs_port --proto all \
		--size 64,1024 --items 256 --writers ${OMS_KVS_WRITERS:-1} --remote-write \
		--timeout-ms 20000 >/run/kvs-server.log 2>&1 &
	stop_when_done $! kvs-done
	sed 's/^/# kvs server: /' /run/kvs-server.log | tail -n 20
	[ $done_rc -eq 0 ] && [ $alive -eq 0 ]
	tap $? "kvs_get --server served every protocol until the client was done (exit $rc on SIGTERM)"
	kvs_readme_server
}

# README's "Two hosts with RDMA" line for ROLE (server, client), as a user
# types it there: readme_line ROLE
readme_line() {
	sed -n "s/^    $1\\$ //p" "$here/../../README.md" | head -n 1
}

# The installed names README uses (oms_kvs_get), on PATH: the tree's
# binaries under them
readme_path() {
	mkdir -p /run/oms-bin
	ln -sf "$(cd "$bdir" && pwd)/bench/kvs_get" /run/oms-bin/oms_kvs_get
	echo "/run/oms-bin:$PATH"
}

# README's server line on guest a, as it is there (no -s: the server
# serves what the client asks for) until the client is done.
kvs_readme_server() {
	line=$(readme_line server)
	echo "# README server line: ${line:-none}"
	rm -f /run/kvs-readme-server.log
	# OMS_TIMEOUT_MS: the line as it is, with the clients' 20 s of the
	# parts above (this TCG guest is a thousand times slower than a host)
	# shellcheck disable=SC2086
	OMS_TIMEOUT_MS=20000 PATH=$(readme_path) timeout -k 5 900 ${line:-false} \
		>/run/kvs-readme-server.log 2>&1 &
	up_when $! /run/kvs-readme-server.log 'server: .*listening' kvs-readme-up
	stop_when_done $! kvs-readme-done
	sed 's/^/# README kvs server: /' /run/kvs-readme-server.log | tail -n 5
	[ $done_rc -eq 0 ] && [ $alive -eq 0 ] &&
		grep -q "tables (value sizes [0-9,]*64,[0-9,]*1024[,0-9]* B)" /run/kvs-readme-server.log
	tap $? "README's '$line': served 64 and 1024 B, no -s given, until the client was done"
}

# README's client line on guest b, SERVER_ADDRESS guest a's address: every
# protocol it asks for at both its sizes, gets counted, none torn but
# broken's (which may be).
kvs_readme_client() {
	line=$(readme_line client | sed "s/SERVER[A-Z_]*/$peer/")
	echo "# README client line: ${line:-none}"
	wait_file "$shared/kvs-readme-up" 900
	# shellcheck disable=SC2086
	OMS_TIMEOUT_MS=20000 PATH=$(readme_path) timeout -k 5 900 ${line:-false} \
		>/run/kvs-readme.out 2>/run/kvs-readme.err
	rc=$?
	sed 's/^/# README kvs client: /' /run/kvs-readme.out
	sed 's/^/# README kvs client stderr: /' /run/kvs-readme.err | tail -n 5
	touch "$shared/kvs-readme-done"
	ok=0
	[ $rc -eq 0 ] || ok=1
	for sz in 64 1024; do
		for pr in single validation farm pessimistic broken; do
			awk -v s=$sz -v p=$pr '$1 == s && $2 == p && $5 > 0 &&
				(p == "broken" || $(NF - 1) == 0) { f = 1 }
				END { exit !f }' /run/kvs-readme.out ||
				{ echo "# no $pr row of $sz B with gets (and 0 torn)"; ok=1; }
		done
	done
	tap $ok "README's '$line': every protocol at 64 and 1024 B from the server started with no -s (exit $rc)"
}

# One JSON field of a one-line object: json_num LINE KEY
json_num() {
	printf '%s\n' "$1" | sed -n "s/.*\"$2\"[[:space:]]*:[[:space:]]*\"\{0,1\}\([^,\"}]*\).*/\1/p"
}

# One cell ($cell_s s), its JSON line: kvs_cell PROTO SIZE [0] (0: OMS_AGENT=0,
# the client asks for no agent)
kvs_cell() {
	no_agent=${3:-}
	env ${no_agent:+OMS_AGENT=0} "$bdir/bench/kvs_get" --client "$peer" --port $kvs_port --proto "$1" \
		--size "$2" --items 256 --threads 1 --qps 2 --batch 8 --duration $cell_s \
		--timeout-ms 20000 --json 2>/run/kvs-cell.err | grep '^{' | head -n 1
	sed "s/^/# kvs $1 $2 stderr: /" /run/kvs-cell.err | tail -n 5 >&2
}

# Single Read with the acquires at the source: kvs_single_source SIZE;
# its gets in $src_gets, and a TAP line
kvs_single_source() {
	line=$(kvs_cell single "$1" 0)
	echo "# kvs single $1 B (source): $line"
	src_gets=$(json_num "$line" gets)
	[ "$(json_num "$line" torn)" = 0 ] && [ "$(json_num "$line" ordering)" = source ] &&
		[ "${src_gets:-0}" -gt 0 ] 2>/dev/null
	tap $? "kvs_get --client --proto single --size $1 over rxe, acquire at the source (OMS_AGENT=0): $src_gets gets, torn 0"
}

# The index of the RoCE v2 GID of RDMA device $1's port 1 that is IPv4
# address $2 (::ffff:a.b.c.d, as sysfs writes it), or nothing.
gid_index_of() {
	p=/sys/class/infiniband/$1/ports/1
	set -- "$1" $(echo "$2" | tr . ' ')
	want=$(printf '0000:0000:0000:0000:0000:ffff:%02x%02x:%02x%02x' "$2" "$3" "$4" "$5")
	for f in "$p"/gids/*; do
		i=$(basename "$f")
		[ "$(cat "$f" 2>/dev/null)" = "$want" ] &&
			[ "$(cat "$p/gid_attrs/types/$i" 2>/dev/null)" = "RoCE v2" ] &&
			{ echo "$i"; return; }
	done
}

# perftest's -d, -i, -x on a real device: the GID of this guest's address
# gives the source address of the connection; a port or GID the device
# does not have is refused, saying so.
kvs_device_flags() {
	dev=$(ls /sys/class/infiniband | head -n 1)
	gid=$(gid_index_of "$dev" "$me")
	echo "# kvs: device $dev, GID ${gid:-?} is $me"
	out=$("$bdir/bench/kvs_get" -d "$dev" -i 1 -x "${gid:-0}" "$peer" \
		--port $kvs_port --proto single --size 64 --items 256 --threads 1 \
		--qps 1 --batch 4 --duration 0.5 --timeout-ms 20000 --json \
		2>/run/kvs-dev.err | grep '^{' | head -n 1)
	sed 's/^/# kvs -d -x stderr: /' /run/kvs-dev.err | tail -n 3
	[ -n "$gid" ] && [ "$(json_num "$out" torn)" = 0 ] &&
		[ "$(json_num "$out" gets)" -gt 0 ] 2>/dev/null
	tap $? "kvs_get -d $dev -i 1 -x $gid HOST over rxe (perftest's flags): $(json_num "$out" gets) gets from GID $gid's address"
	# the GID decides the source: from the link-local IPv6 one, the
	# IPv4 server cannot be reached (not taken and ignored)
	ll=$(cd /sys/class/infiniband/$dev/ports/1/gids && grep -l '^fe80' * | head -n 1)
	"$bdir/bench/kvs_get" -d "$dev" -x "${ll:-0}" "$peer" --port $kvs_port \
		--proto single --duration 0.2 --timeout-ms 5000 >/dev/null \
		2>/run/kvs-dev.err
	rc=$?
	sed 's/^/# kvs -x link-local stderr: /' /run/kvs-dev.err | tail -n 2
	[ -n "$ll" ] && [ $rc -eq 1 ] && grep -q "is an IPv6 address, the listener's is IPv4" /run/kvs-dev.err
	tap $? "kvs_get -d $dev -x $ll (fe80::, IPv6) to an IPv4 server: refused, saying so (exit $rc): the GID is the source"
	for bad in "-d $dev -i 2:has no such port" \
		"-d $dev -x 999:has no GID there" \
		"-d nosuchdev0:no such RDMA device"; do
		flag=${bad%%:*}
		"$bdir/bench/kvs_get" $flag "$peer" --port $kvs_port \
			--proto single --duration 0.2 --timeout-ms 20000 \
			>/dev/null 2>/run/kvs-dev.err
		rc=$?
		[ $rc -ne 0 ] && grep -q "${bad#*:}" /run/kvs-dev.err
		tap $? "kvs_get $flag over rxe: refused (exit $rc), says '${bad#*:}'"
	done
}

kvs_client() {
	k=$bdir/bench/kvs_get
	# the server may still be starting: retry (bounded)
	i=0
	while ! "$k" --client "$peer" --port $kvs_port --proto single --size 64 --items 256 \
		--threads 1 --qps 1 --batch 4 --duration 0.2 --timeout-ms 20000 --json >/dev/null 2>&1; do
		i=$((i + 1))
		[ $i -gt 60 ] && break
		sleep 1
	done
	agent_gets=0 farm_gets=0 val_gets=0
	for p in $kvs_protos; do
		# A loaded host can stop this TCG guest for seconds: 20 s
		# before a silent server counts as dead, as in litmus_rxe.
		out=$("$k" --client "$peer" --port $kvs_port --proto $p --size 64 --items 256 \
			--threads 1 --qps 2 --batch 8 --duration $cell_s --timeout-ms 20000 \
			--json 2>/run/kvs-$p.err)
		rc=$?
		line=$(printf '%s\n' "$out" | grep '^{' | head -n 1)
		echo "# kvs $p: $line"
		sed "s/^/# kvs $p stderr: /" /run/kvs-$p.err | tail -n 5
		ok=1
		[ $rc -eq 0 ] && [ -n "$line" ] || ok=0
		for key in proto size mops gbps p50_us p99_us torn; do
			[ -n "$(json_num "$line" $key)" ] || ok=0
		done
		[ "$(json_num "$line" proto)" = "$p" ] || ok=0
		[ "$(json_num "$line" size)" = 64 ] || ok=0
		mops=$(json_num "$line" mops)
		torn=$(json_num "$line" torn)
		gets=$(json_num "$line" gets)
		# TCG: a few hundred gets/s, so mops may print as 0.000
		[ "${gets:-0}" -gt 0 ] 2>/dev/null || ok=0
		note=""
		case $p in
		single) agent_gets=$gets note=", acquire ordered by the agent"
			[ "$(json_num "$line" ordering)" = agent ] || ok=0 ;;
		farm) farm_gets=$gets ;;
		validation) val_gets=$gets ;;
		esac
		if [ "$p" = broken ]; then
			tap $((1 - ok)) "kvs_get --client --proto broken over rxe: JSON parsed ($gets gets, $torn torn, logged only)"
		else
			[ "$torn" = 0 ] || ok=0
			tap $((1 - ok)) "kvs_get --client --proto $p over rxe: JSON parsed, $gets gets ($mops M/s), torn $torn == 0$note"
		fi
	done

	# The same Single Read with its acquires ordered at the source (one
	# fenced READ per line instead of one request to the agent), and at
	# 1 KiB (17 lines) beside FaRM.
	kvs_single_source 64
	echo "# kvs single read of 64 B in $cell_s s: agent $agent_gets gets, source $src_gets, farm $farm_gets, validation $val_gets"
	line=$(kvs_cell single 1024)
	echo "# kvs single 1024 B (agent): $line"
	agent1k=$(json_num "$line" gets)
	[ "$(json_num "$line" torn)" = 0 ] && [ "$(json_num "$line" ordering)" = agent ] &&
		[ "${agent1k:-0}" -gt 0 ] 2>/dev/null
	tap $? "kvs_get --client --proto single --size 1024 over rxe, acquire ordered by the agent: $agent1k gets, torn 0"
	kvs_single_source 1024
	src1k=$src_gets
	line=$(kvs_cell farm 1024)
	echo "# kvs farm 1024 B: $line"
	farm1k=$(json_num "$line" gets)
	[ "$(json_num "$line" torn)" = 0 ] && [ "${farm1k:-0}" -gt 0 ] 2>/dev/null
	tap $? "kvs_get --client --proto farm --size 1024 over rxe: $farm1k gets, torn 0"
	echo "# kvs single read of 1 KiB in $cell_s s: agent $agent1k gets, source $src1k, farm $farm1k"
	kvs_device_flags

	# The full tier only (make check-full, make kvs-compare): it measures
	# more than it checks.
	if [ "${OMS_CHECK_TIER:-}" != quick ]; then
		# Model vs device (kvs_get --calibrate): the emulated device's model
		# fitted to this link, then the same cells on the link and on the
		# model here.  The TAP line checks the JSON, not how close they are.
		# 60 s before a silent server is dead: with a whole make check
		# beside it on the same two cores, a cell once saw no get complete
		# for 21 s.
		out=$("$k" --client "$peer" --port $kvs_port --proto single,validation,farm --size 64,1024 \
			--items 256 --threads 1 --qps 1 --batch 8 --duration $cell_s \
			--timeout-ms 60000 --calibrate --json 2>/run/kvs-cal.err)
		rc=$?
		fit=$(printf '%s\n' "$out" | grep '"calibration":"fit"' | head -n 1)
		echo "# kvs calibration: $fit"
		sed 's/^/# kvs calibration stderr: /' /run/kvs-cal.err | tail -n 5
		ok=1
		[ $rc -eq 0 ] || ok=0
		for key in rtt_ns round64_ns round4k_ns lat_bus_ns link_gbps; do
			[ "$(json_num "$fit" $key)" -gt 0 ] 2>/dev/null || ok=0
		done
		[ -n "$(json_num "$fit" lat_req_ns)" ] || ok=0
		ncell=0
		printf '%s\n' "$out" | grep '"calibration":"cell"' >/run/kvs-cal.cells
		while read -r line; do
			echo "# kvs calibration: $line"
			ncell=$((ncell + 1))
			for key in device_gets model_gets; do
				[ "$(json_num "$line" $key)" -gt 0 ] 2>/dev/null || ok=0
			done
			for key in device_torn model_torn; do
				[ "$(json_num "$line" $key)" = 0 ] || ok=0
			done
		done </run/kvs-cal.cells
		[ $ncell -eq 6 ] || ok=0
		tap $((1 - ok)) "kvs_get --client --calibrate over rxe: model fitted (bus $(json_num "$fit" lat_bus_ns) ns, $(json_num "$fit" lat_req_ns) ns per request, $(json_num "$fit" link_gbps) Gb/s), $ncell cells on both, torn 0"
	fi

	# Remote writers over verbs: the client's updates race the server's
	# writer (both lock through the NIC) and the client's own gets.
	for p in single validation farm pessimistic; do
		out=$("$k" --client "$peer" --port $kvs_port --proto $p --size 64 --items 16 \
			--threads 1 --qps 1 --batch 8 --duration $cell_s --timeout-ms 20000 \
			--read-pct 80 --json 2>/run/kvs-rw-$p.err)
		rc=$?
		line=$(printf '%s\n' "$out" | grep '^{' | head -n 1)
		echo "# kvs --read-pct 80 $p: $line"
		sed "s/^/# kvs rw $p stderr: /" /run/kvs-rw-$p.err | tail -n 5
		gets=$(json_num "$line" gets)
		upd=$(json_num "$line" updates)
		torn=$(json_num "$line" torn)
		[ $rc -eq 0 ] && [ "${gets:-0}" -gt 0 ] 2>/dev/null &&
			[ "${upd:-0}" -gt 0 ] 2>/dev/null && [ "$torn" = 0 ]
		tap $? "kvs_get --client --proto $p --read-pct 80 over rxe: $upd remote updates, $gets gets, torn $torn == 0"
	done

	# The server host stops answering mid-run (for 16 s).  --timeout-ms
	# 8000: the default 2 s once expired before the stop, while guest a
	# was busy with its writer's NIC traffic, and the client was gone
	# before the test began.  The watch looks every 64 calls: on a host
	# busy with two make checks a starved guest made those looks seconds
	# apart, and a 10 s stop ended before one saw 8 s pass; 16 s leaves
	# the watch twice its timeout.
	"$k" --client "$peer" --port $kvs_port --proto single --size 64 --items 256 \
		--threads 1 --qps 1 --batch 8 --duration 60 --timeout-ms 8000 \
		>/run/kvs-stop.out \
		2>/run/kvs-stop.err &
	cpid=$!
	sleep 3
	kill -0 $cpid 2>/dev/null
	running=$?
	rm -f "$shared/a-stopped" "$shared/a-stop-result"
	# renamed into place: the host reads it as soon as the name exists
	# (written in place, it once read it empty and stopped guest a for
	# its default 5 s, which the client's 8 s timeout rightly outlived)
	echo 16 >"$shared/stop-a.tmp" && mv "$shared/stop-a.tmp" "$shared/stop-a"
	wait_file "$shared/a-stopped" 60
	t0=$(date +%s.%N)
	i=0
	while kill -0 $cpid 2>/dev/null && [ $i -lt 300 ]; do
		sleep 0.1
		i=$((i + 1))
	done
	wait $cpid 2>/dev/null
	rc=$?
	kill -0 $cpid 2>/dev/null && { kill -KILL $cpid; rc=255; }
	t=$(awk -v a="$t0" -v b="$(date +%s.%N)" 'BEGIN { printf "%.1f", b - a }')
	msg=$(grep -v '^\[\|progress' /run/kvs-stop.err | tail -n 1)
	echo "# kvs with the server host stopped: exit $rc after $t s: $msg"
	# what the host's monitor said of guest a: stopped, then running
	wait_file "$shared/a-stop-result" 60
	host=$(cat "$shared/a-stop-result" 2>/dev/null)
	echo "# the host's monitor: guest a ${host:-?}"
	[ $running -eq 0 ] && [ $rc -ne 0 ] && [ $rc -ne 255 ] && [ -n "$msg" ] &&
		awk -v t="$t" 'BEGIN { exit !(t < 20) }' &&
		case $host in paused*running*) true ;; *) false ;; esac
	# The context's timeout is 8 s; 20 s is for a loaded host, where the
	# guest itself runs slowly.  A hang runs into the 30 s bound above.
	tap $? "kvs_get --client: server host stopped mid-run -> exit $rc within 20 s ($t s) with a message"
	touch "$shared/kvs-done"
	kvs_readme_client
}
