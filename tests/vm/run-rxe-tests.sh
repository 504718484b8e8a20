#!/bin/sh
# `make check` entry for the verbs backend on two hosts: boot two QEMU
# guests at once (boot.sh, TCG, one CPU each), joined by a virtual wire
# (a socket pair, an e1000 NIC each with its own MAC), each with
# Soft-RoCE on it (rxe-guest.sh); guest a serves, guest b runs the
# clients.  A shared directory (9p) carries the guests' rendezvous files;
# a guest may also ask the host to stop guest a's CPUs for a while through
# its QEMU monitor (the file stop-a holds the seconds): a server host that
# stops answering; or to take guest b's link down for a while (link-b):
# a pulled cable.  Prints both guests' TAP, numbered as one.
#
# Suite three boots three guests on one network instead (rxe-three.sh):
# ordering across hosts.
#
# usage: run-rxe-tests.sh BUILD_DIR [check|perftest|probe|msgpass|litmus|kvs|soak|three]
# (the guests' suite, rxe-guest.sh: the tests, perftest beside liboms,
# oms_probe, msg_pass, the fault soak for OMS_SOAK_S seconds)
set -u
bdir=${1:?usage: $0 BUILD_DIR [SUITE]}
suite=${2:-check}
here=$(cd "$(dirname "$0")" && pwd)
tmo=${OMS_RXE_TIMEOUT:-2700}	# TCG guests: the litmus suite takes minutes, more under load
nic=${OMS_RXE_NIC:-e1000}	# virtio-net-pci stalls under load (docs/verbs.md)

skip() { echo "ok 1 # SKIP $*"; exit 0; }
command -v qemu-system-x86_64 >/dev/null || skip "qemu-system-x86_64 not installed"
[ -x "$bdir/verbs-tests/rxe_server" ] || skip "build the guest programs first (make verbs-tests)"
ls /lib/modules/*/kernel/drivers/infiniband/sw/rxe/rdma_rxe.ko* >/dev/null 2>&1 ||
	skip "no rdma_rxe module in /lib/modules"

mkdir -p build/vm
# The last run's consoles: this suite's own.  make check runs the
# three-host suite beside the two-host one, so their consoles have
# different names (rxe3-*, rxe-*) and neither removes the other's.
if [ "$suite" = three ]; then
	logs=rxe3
	rm -f build/vm/rxe3-[abc]-*.log
else
	logs=rxe
	rm -f build/vm/rxe-[ab]-*.log
fi
work=$(cd build/vm && mktemp -d "$(pwd)/rxe.XXXXXX")
trap 'rm -rf "$work"' EXIT INT TERM
mkdir "$work/shared"

# The guests run nothing but this suite: mitigations=off spares TCG the
# kernel's speculation barriers (7 % of the suite's time, measured).

# The wire: a connected socket pair, one end inherited by each QEMU
# (-netdev socket,fd=N), so neither waits for the other to listen.  Suite
# three boots a third guest, c, and each guest's end goes to a hub on the
# host instead, which sends every frame one guest's NIC sends to the two
# others (QEMU's socket netdev frames each packet with its length, a
# 32-bit big-endian word): one Ethernet segment for three hosts.
perl -MSocket -MFcntl -MIO::Select -e '
	my ($here, $bdir, $work, $tmo, $nic, $suite, $logs) = @ARGV;
	my (@pids, @guests, @hub);
	my @roles = $suite eq "three" ? ("a", "b", "c") : ("a", "b");
	my @share = ("-fsdev", "local,id=sh,path=$work/shared,security_model=none",
		     "-device", "virtio-9p-pci,fsdev=sh,mount_tag=omsshared");
	if (@roles == 2) {
		socketpair(my $x, my $y, AF_UNIX, SOCK_STREAM, 0) or die "socketpair: $!";
		@guests = ($x, $y);
	} else {
		for (@roles) {
			socketpair(my $g, my $h, AF_UNIX, SOCK_STREAM, 0) or die "socketpair: $!";
			push @guests, $g;
			push @hub, $h;
		}
	}
	fcntl($_, F_SETFD, 0) for @guests;
	for my $i (0 .. $#roles) {
		my $role = $roles[$i];
		my $mine = $guests[$i];
		my @mon = $role eq "c" ? () :
			("-monitor", "unix:$work/$role.mon,server=on,wait=off");
		my $pid = fork() // die "fork: $!";
		if (!$pid) {
			close $_ for grep { $_ != $mine } @guests, @hub;
			open STDOUT, ">", "$work/$role.tap";
			open STDERR, ">&STDOUT";
			exec "sh", "$here/boot.sh", "-t", $tmo, "-s", "1", "-a", "mitigations=off",
			     "-n", "$logs-$role-" . ($work =~ s/.*\.//r), "$here/rxe-guest.sh", $role, $bdir, $suite,
			     "--", "-netdev", "socket,id=n0,fd=" . fileno($mine),
			     "-device", "$nic,netdev=n0,mac=52:54:00:77:00:0" . ($i + 1),
			     @share, @mon;
			die "exec: $!";
		}
		push @pids, $pid;
	}
	close $_ for @guests;
	my $hub;
	if (@hub) {
		$hub = fork() // die "fork: $!";
		if (!$hub) {
			my $sel = IO::Select->new(@hub);
			my %in = map { fileno($_) => "" } @hub;
			while ($sel->count) {
				for my $h ($sel->can_read) {
					my $n = sysread($h, my $b, 65536);
					if (!$n) {	# that guest is gone
						$sel->remove($h);
						next;
					}
					my $buf = \$in{fileno($h)};
					$$buf .= $b;
					while (length($$buf) >= 4) {
						my $len = unpack("N", $$buf);
						last if length($$buf) < 4 + $len;
						my $frame = substr($$buf, 0, 4 + $len, "");
						for my $o ($sel->handles) {
							next if $o == $h;
							my $off = 0;
							while ($off < length($frame)) {
								my $w = syswrite($o, $frame, length($frame) - $off, $off);
								last unless defined $w;
								$off += $w;
							}
						}
					}
				}
			}
			exit 0;
		}
		close $_ for @hub;
	}
	waitpid($_, 0) for @pids;
	if ($hub) {
		kill "TERM", $hub;
		waitpid($hub, 0);
	}' "$here" "$bdir" "$work" "$tmo" "$nic" "$suite" "$logs" &
ppid=$!

# Stop guest a's CPUs when asked (a server host that goes silent).  The
# monitor's answer is read before the socket closes: a loaded QEMU that
# sees the hang-up with the command still unread drops the command (a CI
# run once went on with guest a never stopped).  Prints "info status".
monitor() {	# monitor GUEST COMMAND
	perl -MIO::Socket::UNIX -e '
		my $s = IO::Socket::UNIX->new(Peer => $ARGV[0])
			or die "monitor $ARGV[0]: $!\n";
		my $buf = "";
		sub upto {	# read until the prompt follows a match of $re
			my ($re) = @_;
			my $end = time + 30;
			while (time < $end) {
				my $rin = "";
				vec($rin, fileno($s), 1) = 1;
				next unless select(my $r = $rin, undef, undef, 1);
				sysread($s, my $c, 4096) or die "monitor closed\n";
				$buf .= $c;
				return 1 if $buf =~ /$re.*\(qemu\) /s;
			}
			die "monitor: no answer in 30 s\n";
		}
		upto(qr/QEMU/);
		print $s "$ARGV[1]\n";
		$buf = "";
		upto(qr/\Q$ARGV[1]\E/);
		print $s "info status\n";
		$buf = "";
		upto(qr/VM status: \S+/);
		$buf =~ /VM status: (\S+)/ and print "$1\n";
		close $s' "$work/$1.mon" "$2" 2>&1
}
while kill -0 $ppid 2>/dev/null; do
	# the guests rename stop-a and link-b into place: whole once seen
	if [ -f "$work/shared/stop-a" ]; then
		secs=$(cat "$work/shared/stop-a")
		rm -f "$work/shared/stop-a" "$work/shared/a-stop-result"
		# said first: the guest's clock starts no later than the stop
		echo "stopping" >"$work/shared/a-stopped"
		st=$(monitor a stop)
		sleep "${secs:-5}"
		ct=$(monitor a cont)
		# what guest b's test reports: "paused running" when it worked;
		# renamed into place, so the guest never reads it half written
		echo "$st $ct" | tr '\n' ' ' >"$work/shared/a-stop-result.tmp"
		mv "$work/shared/a-stop-result.tmp" "$work/shared/a-stop-result"
		echo "# host: guest a stopped for ${secs:-5} s: $st, then $ct" \
			>>"$work/host.log"
	fi
	# Pull guest b's cable for a while when asked (link-b holds the
	# seconds): its NIC loses carrier, as a link that goes down between
	# the host and its switch; link-b-result says "down up" once over.
	if [ -f "$work/shared/link-b" ]; then
		secs=$(cat "$work/shared/link-b")
		rm -f "$work/shared/link-b" "$work/shared/link-b-result"
		monitor b "set_link n0 off" >/dev/null && lt=down || lt=failed
		sleep "${secs:-5}"
		monitor b "set_link n0 on" >/dev/null && lt="$lt up" || lt="$lt failed"
		echo "$lt" >"$work/shared/link-b-result.tmp"
		mv "$work/shared/link-b-result.tmp" "$work/shared/link-b-result"
		echo "# host: guest b's link down for ${secs:-5} s: $lt" >>"$work/host.log"
	fi
	sleep 0.2
done
wait $ppid
cat "$work/host.log" 2>/dev/null
awk '
	/^(not )?ok [0-9]+/ {
		ok = ($0 !~ /^not /)
		sub(/^(not )?ok [0-9]+ ?/, "")
		n++
		if (!ok) bad++
		printf "%s %d %s\n", ok ? "ok" : "not ok", n, $0
		next
	}
	{ print }
	END { exit bad > 0 }' "$work/a.tap" "$work/b.tap" \
	$([ "$suite" = three ] && echo "$work/c.tap")
