# The fault soak across the two guests (sourced by rxe-guest.sh, which
# defines tap, wait_file, up_when, bdir, shared, me, peer and here).
#
# Guest a serves: a KVS server with a writer whose listeners run the
# destination agent (kvs_get --server, OMS_AGENT=1), the long-lived
# process, and msg_pass --server (its agents and its consumer, which
# counts every flag it finds before its message), the one restarted.  It
# samples both every 10 s: RSS, open descriptors and registered memory
# (the MRs `rdma resource show mr` lists for the pid).
#
# Guest b runs the clients, each restarted by a loop when it dies:
# soak_mp twice (slot 0 plain, slot 1 numbered through the agents), which
# resume and reconnect in the same context when they can
# (tests/verbs/soak_mp.c), and kvs_get clients of the four correct
# protocols, a new process each couple of seconds.  Meanwhile a fault loop
# runs cycles of four faults, each followed by a wait until every client
# made progress again:
#
#   kill     SIGKILL to soak_mp slot 0 and to the running kvs_get client
#   flap     b's cable pulled for longer than the clients' timeout, then
#            plugged again (the host's QEMU monitor takes the NIC's link
#            down: carrier lost, `rdma link` says the Soft-RoCE port is
#            DOWN).  Not `ip link set down` inside the guest: Soft-RoCE
#            then fails the send of any connection-manager message (no
#            route) by moving its GSI queue pair to error for good, and
#            no connection can be made from that host again until the
#            rxe device is re-created (docs/verbs.md)
#   pause    the KVS server stopped (SIGSTOP) for longer than the timeout,
#            then continued
#   restart  msg_pass --server killed, away for longer than the timeout,
#            then started again
#
# OMS_SOAK_S: how long the fault loop runs (whole cycles, two at least:
# the first is the warm-up).  Reports operations done, errors by kind,
# reconnects, every fault's recovery, and the series; TAP: nothing torn,
# no flag before its data, every error one the man pages name, every
# client back after every fault, and the long-lived server's RSS,
# descriptors and registered memory within 5 % of their value after
# warm-up.
soak_kvs_port=18560
soak_mp_port=18570
soak_tmo=10000		# the clients' and servers' timeout_ms
soak_away=15		# seconds a fault lasts: more than the timeout
soak_recover=180	# bound on a client's return after a fault (TCG)

# ---- guest a ------------------------------------------------------------

# The bytes of the MRs and the QPs of process PID: `rdma resource show`
# names the thread that made each ("pid T"), so every thread of PID counts.
soak_rdma_of() {	# soak_rdma_of PID: "mr_bytes qps"
	tids=$(ls "/proc/$1/task" 2>/dev/null | tr '\n' ' ')
	{ rdma resource show mr 2>/dev/null | sed 's/^/mr /'
	  rdma resource show qp 2>/dev/null | sed 's/^/qp /'; } |
	awk -v tids=" $tids" '
		{ len = 0; pid = ""
		  for (i = 2; i < NF; i++) {
			if ($i == "mrlen") len = $(i + 1)
			if ($i == "pid") pid = $(i + 1)
		  }
		  if (pid == "" || index(tids, " " pid " ") == 0) next
		  if ($1 == "mr") mr += len; else qp++ }
		END { print mr + 0, qp + 0 }'
}

soak_sample_one() {	# soak_sample_one PID: "rss_kib fds mr_bytes qps"
	rss=$(awk '/^VmRSS:/ { print $2 }' "/proc/$1/status" 2>/dev/null)
	fds=$(ls "/proc/$1/fd" 2>/dev/null | wc -l)
	echo "${rss:-0} $fds $(soak_rdma_of "$1")"
}

# Where the RSS of process PID lies: a line per mapping with resident
# pages, "start KiB threads name" (name: a file, [heap], [stack], or "-"
# for anonymous memory: malloc's arenas and big blocks, thread stacks).
soak_smaps() {	# soak_smaps PID
	n=$(ls "/proc/$1/task" 2>/dev/null | wc -l)
	awk -v n="$n" '
		$1 ~ /^[0-9a-f]+-[0-9a-f]+$/ { split($1, r, "-"); a = r[1]; nm = NF >= 6 ? $6 : "-"; next }
		$1 == "Rss:" && $2 > 0 { print a, $2, n, nm }' "/proc/$1/smaps" 2>/dev/null
}

# The mappings of the KVS server whose resident memory grew most from the
# first cycle's end to the last's, and the threads it had at each.
soak_smaps_growth() {
	last=$(ls /run/soak-smaps.* 2>/dev/null | sed 's/.*\.//' | sort -n | tail -n 1)
	[ -n "$last" ] && [ "$last" != 1 ] || return 0
	echo "# soak: KVS server threads at cycle 1's end $(awk 'NR == 1 { print $3 }' /run/soak-smaps.1), at cycle $last's $(awk 'NR == 1 { print $3 }' "/run/soak-smaps.$last"); the mappings whose resident KiB moved most between them:"
	awk '
		FNR == 1 { f++ }
		f == 1 { a[$1] = $2; nm[$1] = $4; next }
		{ b[$1] = $2; nm[$1] = $4 }
		END {
			for (k in b) if (b[k] != a[k]) print b[k] - a[k], k, a[k] + 0, b[k], nm[k]
			for (k in a) if (!(k in b)) print -a[k], k, a[k], 0, nm[k]
		}' /run/soak-smaps.1 "/run/soak-smaps.$last" |
		sort -k1,1nr | head -n 8 |
		awk '{ printf "# soak:   %+d KiB at %s (%d -> %d) %s\n", $1, $2, $3, $4, $5 }'
}

soak_mp_start() {
	soak_inc=$((soak_inc + 1))
	OMS_AGENT=1 "$bdir/bench/msg_pass" --server --bind "$me" \
		-p $soak_mp_port --timeout-ms $soak_tmo \
		>"/run/soak-mp.$soak_inc.log" 2>&1 &
	soak_mp_pid=$!
	i=0
	until grep -q 'msg_pass server: D1' "/run/soak-mp.$soak_inc.log"; do
		i=$((i + 1))
		[ $i -lt 600 ] && kill -0 $soak_mp_pid 2>/dev/null || return 1
		sleep 0.1
	done
}

soak_server() {
	soak_inc=0
	rm -f "$shared"/soak-*
	OMS_AGENT=1 OMS_AGENT_STATS=1 "$bdir/bench/kvs_get" --server --bind "$me" \
		--port $soak_kvs_port --proto single,validation,farm,pessimistic \
		--size 256 --items 256 --writers 1 --timeout-ms $soak_tmo \
		>/run/soak-kvs.log 2>&1 &
	kvs_pid=$!
	up_when $kvs_pid /run/soak-kvs.log 'server: .*listening' soak-kvs-up
	soak_mp_start
	up=$?
	kill -0 $kvs_pid 2>/dev/null && [ $up -eq 0 ]
	tap $? "soak: msg_pass --server (agents, consumer) and kvs_get --server (writer, agents) serve"
	echo $soak_mp_pid >/run/soak-mp.pid
	touch "$shared/soak-up"
	(	# the series, every 10 s until the client is done
		while [ ! -e "$shared/soak-done" ]; do
			mpp=$(cat /run/soak-mp.pid 2>/dev/null)
			echo "$(cut -d. -f1 /proc/uptime) $([ -e "$shared/soak-warm" ] && echo 1 || echo 0)" \
				"$kvs_pid $(soak_sample_one $kvs_pid)" \
				"${mpp:-0} $(soak_sample_one "${mpp:-0}")" \
				>>/run/soak-series
			sleep 10
		done
	) &
	sampler=$!
	done_n=0
	while [ ! -e "$shared/soak-done" ]; do
		read -r cn kind secs 2>/dev/null <"$shared/soak-cmd" || cn=0
		if [ "$cn" -gt "$done_n" ]; then
			case $kind in
			pause)
				kill -STOP $kvs_pid
				sleep "$secs"
				kill -CONT $kvs_pid ;;
			restart)
				kill -KILL $soak_mp_pid
				wait $soak_mp_pid 2>/dev/null
				sleep "$secs"
				soak_mp_start || echo "# soak: msg_pass --server did not come back"
				echo $soak_mp_pid >/run/soak-mp.pid ;;
			sample)	# the end of cycle $secs, no KVS client connected
				echo "$secs $(cut -d. -f1 /proc/uptime)" \
					"$kvs_pid $(soak_sample_one $kvs_pid)" \
					"$soak_mp_pid $(soak_sample_one $soak_mp_pid)" \
					>>/run/soak-points
				soak_smaps $kvs_pid >"/run/soak-smaps.$secs"
				tids=" $(ls /proc/$kvs_pid/task | tr '\n' ' ')"
				for r in qp cm_id; do
					rdma resource show $r | while read -r l; do
						t=$(echo "$l" | sed -n 's/.* pid \([0-9]*\) .*/\1/p')
						case "$tids" in *" $t "*) echo "# soak: cycle $secs at $(cut -d. -f1 /proc/uptime) s, KVS server $r: $l" ;; esac
					done
				done >>/run/soak-point-qps ;;
			esac
			done_n=$cn
			echo "$cn" >"$shared/soak-ack.tmp" &&
				mv "$shared/soak-ack.tmp" "$shared/soak-ack"
		fi
		sleep 0.2
	done
	wait $sampler
	cp /run/soak-series "$shared/soak-series"
	cp /run/soak-points "$shared/soak-points"
	kill -0 $kvs_pid 2>/dev/null
	kvs_alive=$?
	kill -TERM $kvs_pid $soak_mp_pid 2>/dev/null
	wait $kvs_pid
	kvs_rc=$?
	wait $soak_mp_pid
	mp_rc=$?
	soak_smaps_growth
	cat /run/soak-point-qps 2>/dev/null | sed "s/path-mig-state MIGRATED //; s/ rq-psn [0-9]* sq-psn [0-9]*//"
	grep 'liboms' /run/soak-kvs.log | tail -n 20 | sed 's/^/# soak kvs server: /'
	tail -n 3 /run/soak-kvs.log | sed 's/^/# soak kvs server: /'
	tail -n 1 "/run/soak-mp.$soak_inc.log" | sed 's/^/# soak msg_pass server: /'
	[ $kvs_alive -eq 0 ] && [ $kvs_rc -eq 0 ]
	tap $? "soak: the KVS server lived through every fault and stopped cleanly (exit $kvs_rc)"
	grep -q ' 0 late$' "/run/soak-mp.$soak_inc.log" && [ $mp_rc -eq 0 ]
	tap $? "soak: msg_pass --server's consumer, last start: no flag before its message (exit $mp_rc)"
	touch "$shared/soak-a-done"
}

# ---- guest b ------------------------------------------------------------

# Restart soak_mp SLOT [seq] whenever it ends, until the soak is done; each
# process's output appended to /run/soak-mp-SLOT.out, its state in
# /run/soak-mp-SLOT.state ("pid P msgs ...").
soak_mp_loop() {	# soak_mp_loop SLOT [seq]
	while [ ! -e /run/soak-stop ]; do
		"$bdir/verbs-tests/soak_mp" "$peer" $soak_mp_port "$1" 100000 \
			"/run/soak-mp-$1.state" ${2:-} >>"/run/soak-mp-$1.out" 2>&1 &
		echo $! >"/run/soak-mp-$1.pid"
		wait $!
		echo "exit $?" >>"/run/soak-mp-$1.out"
		[ -e /run/soak-stop ] || sleep 1
	done
}

# kvs_get clients one after the other until the soak is done; a line per
# run in /run/soak-kvs.runs: "I START END RC" (uptime seconds).  None
# starts while /run/soak-kvs-hold exists (it says so in soak-kvs-idle).
soak_kvs_loop() {
	i=0
	while [ ! -e /run/soak-stop ]; do
		if [ -e /run/soak-kvs-hold ]; then	# a sample point
			touch /run/soak-kvs-idle
			sleep 0.2
			continue
		fi
		rm -f /run/soak-kvs-idle
		i=$((i + 1))
		t0=$(cut -d. -f1 /proc/uptime)
		"$bdir/bench/kvs_get" --client "$peer" --port $soak_kvs_port \
			--proto single,validation,farm,pessimistic -s 256 \
			--items 256 -D 2 --timeout-ms $soak_tmo --json \
			>"/run/soak-kvs.$i.json" 2>"/run/soak-kvs.$i.err" &
		echo $! >/run/soak-kvs.pid
		wait $!
		rc=$?
		echo "$i $t0 $(cut -d. -f1 /proc/uptime) $rc" >>/run/soak-kvs.runs
		[ $rc -eq 0 ] || sleep 1
	done
}

# A client's progress mark: soak_mp's "pid rounds", the KVS loop's last
# successful run's start.
soak_mark() {	# soak_mark mp SLOT | soak_mark kvs
	if [ "$1" = mp ]; then
		awk '{ print $2 "." $6 }' "/run/soak-mp-$2.state" 2>/dev/null
	else
		awk '$4 == 0 { s = $2 } END { print s + 0 }' /run/soak-kvs.runs 2>/dev/null
	fi
}

# Wait until every client made progress after the fault that ended at
# uptime T0; prints "NAME SECONDS" each, or "NAME -" past the bound.
soak_wait_back() {	# soak_wait_back T0 MP0 MP1
	rep=""
	for c in mp0 mp1 kvs; do
		while :; do
			now=$(cut -d. -f1 /proc/uptime)
			case $c in
			mp0) m=$(soak_mark mp 0) ok=$([ -n "$m" ] && [ "$m" != "$2" ] && [ "${m#*.}" != 0 ] && echo 1) ;;
			mp1) m=$(soak_mark mp 1) ok=$([ -n "$m" ] && [ "$m" != "$3" ] && [ "${m#*.}" != 0 ] && echo 1) ;;
			kvs) m=$(soak_mark kvs) ok=$([ "$m" -ge "$1" ] && echo 1) ;;
			esac
			[ -n "$ok" ] && rep="$rep $c $((now - $1))" && break
			[ $((now - $1)) -gt $soak_recover ] && rep="$rep $c -" && break
			sleep 0.5
		done
	done
	echo "$rep"
}

# What a client that did not come back was doing.
soak_why() {
	for f in /run/soak-mp-0.state /run/soak-mp-1.state; do
		echo "# soak: $f: $(cat $f 2>/dev/null)"
	done
	tail -n 3 /run/soak-mp-0.out /run/soak-mp-1.out /run/soak-kvs.runs 2>/dev/null | sed 's/^/# soak: /'
	last=$(tail -n 1 /run/soak-kvs.runs | cut -d' ' -f1)
	tail -n 3 "/run/soak-kvs.$last.err" 2>/dev/null | sed 's/^/# soak: kvs err: /'
	echo "# soak: $(rdma link show rxe0/1); ping: $(busybox ping -c 1 -W 1 "$peer" >/dev/null 2>&1 && echo yes || echo no)"
	ip route | sed 's/^/# soak: route: /'
}

# Ask guest a for a fault (pause, restart) or a sample, and wait until it
# is done.  The requests are numbered, in order.
soak_cmd_n=0
soak_ask() {	# soak_ask KIND ARG
	soak_cmd_n=$((soak_cmd_n + 1))
	echo "$soak_cmd_n $1 $2" >"$shared/soak-cmd.tmp" &&
		mv "$shared/soak-cmd.tmp" "$shared/soak-cmd"
	i=0
	until [ "$(cat "$shared/soak-ack" 2>/dev/null)" = "$soak_cmd_n" ]; do
		i=$((i + 1))
		[ $i -gt $(((soak_away + 120) * 10)) ] && return 1
		sleep 0.1
	done
}

# The end of a cycle: every client back, no KVS client connected (the
# loop held, the last one gone a few seconds since): guest a samples its
# servers in a state comparable from cycle to cycle.
soak_point() {	# soak_point CYCLE
	touch /run/soak-kvs-hold
	wait_file /run/soak-kvs-idle 120
	sleep 3
	soak_ask sample "$1" || echo "# soak: guest a did not sample cycle $1"
	rdma resource show qp | sed "s/^/# soak: cycle $1, b's QP: /; s/path-mig-state MIGRATED //; s/ rq-psn [0-9]* sq-psn [0-9]*//"
	ps -eo pid,stat,comm | grep -v ' ps$' | awk '$3 ~ /kvs_get|soak_mp/' | sed "s/^/# soak: cycle $1, b's process: /"
	rm -f /run/soak-kvs-hold
}

soak_fault() {	# soak_fault N KIND
	case $2 in
	kill)
		kill -KILL "$(cat /run/soak-mp-0.pid)" "$(cat /run/soak-kvs.pid)" 2>/dev/null ;;
	flap)
		# the host pulls b's cable (run-rxe-tests.sh, link-b): carrier
		# lost, Soft-RoCE's port DOWN, nothing sent meanwhile arrives
		rm -f "$shared/link-b-result"
		# renamed into place: the host reads it once the name exists
		echo $soak_away >"$shared/link-b.tmp" &&
			mv "$shared/link-b.tmp" "$shared/link-b"
		sleep 3
		st=$(rdma link show rxe0/1 | sed -n 's/.* state \([A-Z_]*\).*/\1/p')
		wait_file "$shared/link-b-result" $((soak_away + 60)) ||
			echo "# soak: the host did not answer fault $1 (flap)"
		i=0
		until rdma link show rxe0/1 | grep -q 'state ACTIVE'; do
			i=$((i + 1))
			[ $i -gt 300 ] && break
			sleep 0.1
		done
		echo "# soak: fault $1 flap: rxe0/1 $st while down, $(rdma link show rxe0/1 | sed -n 's/.* state \([A-Z_]*\).*/\1/p') after" ;;
	pause | restart)
		soak_ask "$2" $soak_away || echo "# soak: guest a did not answer fault $1 ($2)" ;;
	esac
}

soak_client() {
	dur=${OMS_SOAK_S:-600}
	rm -f /run/soak-*
	wait_file "$shared/soak-up" 600
	tap $? "soak: the servers on guest a are up"
	# the loops' own stderr (the shell's "Killed") kept out of the TAP
	soak_mp_loop 0 2>>/run/soak-loops.err & l0=$!
	soak_mp_loop 1 seq 2>>/run/soak-loops.err & l1=$!
	soak_kvs_loop 2>>/run/soak-loops.err & lk=$!
	t_start=$(cut -d. -f1 /proc/uptime)
	nf=0 cycle=0 lost=0
	while :; do
		cycle=$((cycle + 1))
		for kind in kill flap pause restart; do
			nf=$((nf + 1))
			sleep 5	# clients at work before the fault
			soak_fault $nf $kind
			t_end=$(cut -d. -f1 /proc/uptime)
			m0=$(soak_mark mp 0) m1=$(soak_mark mp 1)
			back=$(soak_wait_back "$t_end" "$m0" "$m1")
			echo "# soak: cycle $cycle fault $nf $kind: back after (s):$back"
			case $back in *-*) lost=$((lost + 1)) && soak_why ;; esac
		done
		soak_point $cycle
		[ $cycle -eq 1 ] && touch "$shared/soak-warm"
		now=$(cut -d. -f1 /proc/uptime)
		[ $cycle -ge 2 ] && [ $((now - t_start)) -ge "$dur" ] && break
	done
	touch /run/soak-stop
	kill -TERM "$(cat /run/soak-mp-0.pid)" "$(cat /run/soak-mp-1.pid)" 2>/dev/null
	wait $l0 $l1 $lk
	echo "# soak: $cycle cycles, $nf faults in $(($(cut -d. -f1 /proc/uptime) - t_start)) s"
	touch "$shared/soak-done"
	tap $lost "soak: every client made progress again after each of $nf faults ($lost faults not)"

	# what the message-passing clients did: the last line of each
	# process is its JSON; sum over processes
	mp_sum=$(cat /run/soak-mp-0.out /run/soak-mp-1.out | grep '^{' | perl -ne '
		our (%e, $m, $r, $c, $l, $u);
		$m += $1 if /"msgs":(\d+)/; $r += $1 if /"reconnects":(\d+)/;
		$c += $1 if /"contexts":(\d+)/; $l += $1 if /"late":(\d+)/;
		$u += $1 if /"unexpected":(\d+)/;
		$e{$1} += $2 while /"(\w+:E\w+)":(\d+)/g;
		END { printf "msgs %d reconnects %d contexts %d late %d unexpected %d errors %s\n",
			$m, $r, $c, $l, $u, join(" ", map { "$_=$e{$_}" } sort keys %e) }')
	echo "# soak: soak_mp: $mp_sum"
	echo "# soak: soak_mp processes: $(grep -c '^{' /run/soak-mp-0.out) slot 0, $(grep -c '^{' /run/soak-mp-1.out) slot 1 (killed ones print nothing)"
	late=$(echo "$mp_sum" | sed -n 's/.* late \([0-9]*\) .*/\1/p')
	unexp=$(echo "$mp_sum" | sed -n 's/.* unexpected \([0-9]*\) .*/\1/p')
	# the state files of killed processes still hold their late count
	for s in /run/soak-mp-0.state /run/soak-mp-1.state; do
		l=$(awk '{ print $12 }' "$s" 2>/dev/null)
		[ "${l:-0}" -gt "${late:-0}" ] && late=$l
	done
	[ "${late:-1}" -eq 0 ]
	tap $? "soak: message passing, ${late:-?} flags seen before their message (consumer's count, read by the clients)"
	[ "${unexp:-1}" -eq 0 ]
	tap $? "soak: soak_mp met only errors the man pages name for these faults (${unexp:-?} others)"

	# the KVS clients: gets and torn values from every run's JSON; the
	# failures by the error they printed
	kvs_sum=$(perl -e '
		use POSIX qw(strerror);
		use Errno;
		my %name;
		for my $n (qw(ECONNRESET ENOTCONN ETIMEDOUT ECANCELED ECONNREFUSED
			      EHOSTUNREACH ENODEV EUSERS EREMOTEIO EIO)) {
			$name{strerror(eval "Errno::$n()")} = $n;
		}
		my ($runs, $gets, $torn, %k) = (0, 0, 0);
		open my $rf, "<", "/run/soak-kvs.runs" or die;
		while (<$rf>) {
			my ($i, $t0, $t1, $rc) = split;
			$runs++;
			local $/;
			if (open my $f, "<", "/run/soak-kvs.$i.json") {
				my $t = <$f> // "";
				$gets += $1 while $t =~ /"gets":(\d+)/g;
				$torn += $1 while $t =~ /"torn":(\d+)/g;
			}
			next unless $rc;
			my $er = "";
			if (open my $f, "<", "/run/soak-kvs.$i.err") { $er = <$f> // "" }
			my $kind;
			for my $s (keys %name) { $kind = $name{$s} if index($er, $s) >= 0 }
			$kind //= "watchdog" if $er =~ /no get completed in the watchdog/;
			$kind //= $rc == 137 ? "killed" : "other";
			$k{$kind}++;
		}
		printf "runs %d gets %d torn %d failures %s\n", $runs, $gets, $torn,
			join(" ", map { "$_=$k{$_}" } sort keys %k) || "none";')
	echo "# soak: kvs_get: $kvs_sum"
	torn=$(echo "$kvs_sum" | sed -n 's/.* torn \([0-9]*\) .*/\1/p')
	gets=$(echo "$kvs_sum" | sed -n 's/.* gets \([0-9]*\) .*/\1/p')
	[ "${torn:-1}" -eq 0 ] && [ "${gets:-0}" -gt 0 ]
	tap $? "soak: kvs_get clients, ${gets:-0} gets, ${torn:-?} torn values"
	# every error named, and named by a man page of the tree
	bad=""
	for e in $(echo "$mp_sum $kvs_sum" | grep -o 'E[A-Z]*\|other\|watchdog\|killed' | sort -u); do
		case $e in
		watchdog | killed) ;;	# kvs_get(1)'s own bound; the kill fault
		other) bad="$bad other" ;;
		*) grep -q -- "-$e" "$here"/../../man/*.md || bad="$bad $e" ;;
		esac
	done
	[ -z "$bad" ]
	tap $? "soak: every error a man page names${bad:+ (not:$bad)}"
	[ -n "$bad" ] && grep -h '^kvs_get:' /run/soak-kvs.*.err | sort | uniq -c | head -n 5 | sed 's/^/# /'

	# the series guest a sampled: the long-lived KVS server flat after
	# warm-up; msg_pass --server's reported per start
	wait_file "$shared/soak-a-done" 120
	soak_series_check "$shared/soak-series" "$shared/soak-points"
}

# The series: every 10 s (uptime warm kvs_pid rss fds mr qps mp_pid rss fds
# mr qps), and at the end of each cycle (cycle uptime kvs_pid rss fds mr qps
# mp_pid rss fds mr qps).  The KVS server's values at the end of each cycle
# after the first within 5 % of those at the end of the first (the
# warm-up); msg_pass --server's printed (it is restarted each cycle).
soak_series_check() {	# soak_series_check SERIES POINTS
	[ -s "$2" ] || { tap 1 "soak: no samples from guest a"; return; }
	echo "# soak: every 10 s (uptime s, warm, KVS server pid RSS KiB fds MR B QPs, msg_pass server pid RSS KiB fds MR B QPs), one in six:"
	awk 'NR % 6 == 1' "$1" | sed 's/^/# soak:   /'
	echo "# soak: at the end of each cycle (cycle, uptime s, then as above):"
	sed 's/^/# soak:   /' "$2"
	res=$(awk '
	NR == 1 { br = $4; bf = $5; bm = $6; next }
	{
		n++
		for (i = 4; i <= 6; i++) {
			b = i == 4 ? br : i == 5 ? bf : bm
			d = b ? ($i - b) / b : ($i != 0)
			if (d < 0) d = -d
			if (d > worst[i]) worst[i] = d
		}
	} END {
		printf "%d cycles after warm-up; after it RSS %d KiB, %d fds, %d MR B; worst RSS %.1f %%, fds %.1f %%, MR %.1f %%\n",
			n, br, bf, bm, 100 * worst[4], 100 * worst[5], 100 * worst[6]
		exit !(n >= 1 && worst[4] <= 0.05 && worst[5] <= 0.05 && worst[6] <= 0.05)
	}' "$2")
	rc=$?
	echo "# soak: KVS server: $res"
	# the QPs: none left behind by a requester that vanished (the
	# liveness probe), in the short form too
	qps=$(awk 'NR == 1 { b = $7 } $7 > b { bad = bad " cycle " $1 ": " $7 } END { print b ":" bad }' "$2")
	[ -z "${qps#*:}" ]
	tap $? "soak: the KVS server holds no more QPs at any cycle's end than at the first's (${qps%%:*})${qps#*:}"
	# the rule holds from the second cycle on: a vanished requester's
	# connection is found by the probe within three timeouts, its QP
	# and memory go then (its id waits for the CM on the teardown
	# thread, holding neither), and the agent's completion queues
	# shrink back once the connections that grew them are gone
	tap $rc "soak: the KVS server's RSS, descriptors and registered memory within 5 % of their value after warm-up"
}
