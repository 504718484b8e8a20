#!/bin/sh
# Runs inside one of the guests of run-rxe-tests.sh: bring up the
# virtio NIC on the wire with its address, a Soft-RoCE device on it, mount
# the shared directory, then play the role.  Prints TAP.
#
#   a  the server host: rxe_server until the client makes it die, then the
#      kvs_get servers (if built), one per protocol, then oms_probe --server,
#      msg_pass --server, then perftest's and rdma_ops's servers
#   b  the client host: the agent's forged-request tests and the verbs
#      litmus tests against a, then kvs_get,
#      then oms_probe's verbs target (rxe-probe.sh), msg_pass's producer
#      (rxe-msgpass.sh), examples/msg_verbs (rxe-examples.sh), then
#      perftest beside liboms at 64 B and 4 KiB
#      (rxe-perftest.sh), then, in the full tier, the fault soak at its
#      shortest (rxe-soak.sh)
#
# SUITE perftest (make perftest-compare) plays rxe-perftest.sh instead:
# perftest and liboms's rdma_ops side by side on the same link; SUITE probe
# (make probe-rxe) only oms_probe's verbs target (rxe-probe.sh); SUITE
# msgpass only msg_pass (rxe-msgpass.sh); SUITE litmus only the litmus
# server and client (make rxe-litmus); SUITE kvs only kvs_get
# (rxe-kvs.sh); SUITE soak only the fault soak (rxe-soak.sh), for
# OMS_SOAK_S seconds.  SUITE three (three guests, a third with role c)
# plays rxe-three.sh: a the data host, c the flag host, b the writer.
#
# usage: rxe-guest.sh a|b|c BUILD_DIR [check|perftest|...|three]
set -u
role=${1:?usage: $0 a|b|c BUILD_DIR [SUITE]}
bdir=${2:?usage: $0 a|b|c BUILD_DIR [SUITE]}
suite=${3:-check}
here=$(cd "$(dirname "$0")" && pwd)
port=7471
tap_prefix="$role: "
. "$here/tap.sh"

case $role in
a) me=10.77.0.1 peer=10.77.0.2 ;;
b) me=10.77.0.2 peer=10.77.0.1 me2=10.77.0.3 ;;
c) me=10.77.0.4 peer=10.77.0.1 ;;	# suite three's third host
*) echo "not ok 1 - unknown role $role"; exit 1 ;;
esac

for m in virtio_net e1000 ib_uverbs rdma_ucm rdma_rxe; do
	modprobe "$m" || { tap 1 "modprobe $m"; exit 1; }
done
ifc=""
for d in /sys/class/net/*; do
	[ -e "$d/device" ] && ifc=$(basename "$d") && break
done
[ -n "$ifc" ] || { tap 1 "no network interface"; exit 1; }
ip link set lo up
ip addr add "$me/24" dev "$ifc" && ip link set "$ifc" up &&
	rdma link add rxe0 type rxe netdev "$ifc" &&
	# b's second address: another node to the server's agent (hold_rxe)
	{ [ -z "${me2:-}" ] || ip addr add "$me2/24" dev "$ifc"; }
rc=$?
i=0
while [ $rc -eq 0 ] && ! rdma link show rxe0/1 2>/dev/null | grep -q 'state ACTIVE'; do
	i=$((i + 1))
	[ $i -gt 100 ] && rc=1 && break
	sleep 0.1
done
tap $rc "rxe0 on $ifc ($me) is ACTIVE"
[ $rc -eq 0 ] || exit 1
echo "# $(rdma link show rxe0/1)"
# What verbs needs, seen through the overlay of the host root: the rxe
# provider and its driver file, librdmacm, the device nodes.
missing=""
for f in /etc/libibverbs.d/rxe.driver /dev/infiniband/uverbs0 /dev/infiniband/rdma_cm; do
	[ -e "$f" ] || missing="$missing $f"
done
ls /usr/lib/*/libibverbs/librxe-rdmav*.so >/dev/null 2>&1 || missing="$missing librxe"
ls /usr/lib/*/librdmacm.so.1 >/dev/null 2>&1 || missing="$missing librdmacm"
[ -z "$missing" ]
tap $? "verbs user space present (rxe provider, librdmacm, /dev/infiniband)${missing:+; missing:$missing}"
i=0
until busybox ping -c 1 -W 1 "$peer" >/dev/null 2>&1; do
	i=$((i + 1))
	[ $i -gt 30 ] && break
done
[ $i -le 30 ]
tap $? "the wire: $peer answers ping"
shared=/run/shared
mkdir -p $shared
mount -t 9p -o trans=virtio,version=9p2000.L,cache=none omsshared $shared
tap $? "shared directory mounted"

# A server started in the background (PID) says in LOG that it listens
# (PATTERN): then create FILE in the shared directory, for the client on
# the other guest to start on.  Bounded: a server that dies or never says
# it still creates FILE after 60 s, and the client fails on its own.
up_when() {	# up_when PID LOG PATTERN FILE
	i=0
	until grep -q "$3" "$2" 2>/dev/null; do
		i=$((i + 1))
		kill -0 "$1" 2>/dev/null && [ $i -lt 600 ] || break
		sleep 0.1
	done
	touch "$shared/$4"
}

# The bounds of the measuring parts (kvs_get, msg_pass, oms_probe): a
# cell's seconds and the probe's rounds, shorter under `make check`
# (OMS_CHECK_TIER=quick), which checks what they report, not how fast.
if [ "${OMS_CHECK_TIER:-}" = quick ]; then
	cell_s=0.2 probe_rounds=64 probe_cost_rounds=15
else
	cell_s=1 probe_rounds=512 probe_cost_rounds=100
fi

# The time report of the client's parts: "# time: PART N s" (the guest's
# clock), so the slow part of this suite is seen at once.
part_t0=0
part_done() {	# part_done NAME
	part_t1=$(cut -d. -f1 /proc/uptime)
	echo "# time: $1 $((part_t1 - part_t0)) s"
	part_t0=$part_t1
}

# Wait (bounded) for a file the other guest or the host writes.
wait_file() {	# wait_file PATH SECONDS
	i=0
	while [ ! -e "$1" ]; do
		i=$((i + 1))
		[ $i -gt $(($2 * 10)) ] && return 1
		sleep 0.1
	done
}

# One piece alone: its file, and the server and client functions it
# defines (json_num, which they use, is rxe-kvs.sh's).
case $suite in
probe) part=rxe-probe.sh server=probe_server client=probe_client ;;
kvs) part=rxe-kvs.sh server=kvs_server client=kvs_client ;;
msgpass) part=rxe-msgpass.sh server=mp_server client=mp_client ;;
perftest) part=rxe-perftest.sh server=perf_server client=perf_client ;;
examples) part=rxe-examples.sh server=ex_server client=ex_client ;;
soak) part=rxe-soak.sh server=soak_server client=soak_client ;;
three) part=rxe-three.sh server=three_data client=three_writer \
	third=three_flag ;;
*) part= ;;
esac
if [ -n "$part" ]; then
	. "$here/rxe-kvs.sh"
	. "$here/$part"
	case $role in
	a) $server ;;
	b) $client ;;
	c) ${third:?suite $suite has no third host} ;;
	esac
	exit 0
fi
[ "$role" = c ] && { tap 1 "suite $suite has no third host"; exit 1; }

if [ "$role" = a ]; then
	# Bounds for hangs only: on a loaded 2-core host (two make checks)
	# the suite has taken four times its idle time.
	timeout -k 5 2360 "$bdir/verbs-tests/rxe_server" $port 2340 >/run/server.log 2>&1
	rc=$?
	sed 's/^/# server: /' /run/server.log
	# 137: it killed itself when the last litmus test asked (SIGKILL)
	[ $rc -eq 137 ]
	tap $? "rxe_server served the litmus client until it was told to die (status $rc)"
	[ "$suite" = litmus ] && exit 0
	[ -x "$bdir/bench/kvs_get" ] && [ -f "$here/rxe-kvs.sh" ] &&
		. "$here/rxe-kvs.sh" && kvs_server
	. "$here/rxe-probe.sh" && probe_server
	. "$here/rxe-msgpass.sh" && mp_server
	. "$here/rxe-examples.sh" && ex_server
	# perftest beside liboms, two sizes a op (make perftest-compare
	# runs every size): the TAP says both measured, not how fast.  The
	# full tier only: a measurement more than a check.
	OMS_PERF_SIZES=${OMS_PERF_SIZES:-64 4096} OMS_PERF_DURATION=1
	[ "${OMS_CHECK_TIER:-}" = quick ] ||
		{ . "$here/rxe-perftest.sh" && perf_server; }
	# the fault soak, at its shortest (two cycles of faults): the full
	# tier only (make soak-rxe runs it for as long as asked)
	[ "${OMS_CHECK_TIER:-}" = quick ] ||
		{ . "$here/rxe-soak.sh" && soak_server; }
	touch $shared/a-done
else
	part_done "boot and set-up"
	# the agent against a forging requester first: litmus_rxe's last
	# test makes the server die
	OMS_RXE_SERVER=$peer OMS_RXE_AGENT_PORT=$((port + 1)) timeout -k 5 300 \
		"$bdir/verbs-tests/agent_forge" 2>&1 |
		grep --line-buffered -v '^TAP version\|^1\.\.'
	part_done agent_forge
	# each requester served on its own: idle, dead, silent, flooding
	OMS_RXE_SERVER=$peer OMS_RXE_AGENT_PORT=$((port + 1)) \
		OMS_RXE_PORT=$port OMS_RXE_MANY_PORT=$((port + 5)) \
		timeout -k 5 600 \
		"$bdir/verbs-tests/agent_share" 2>&1 |
		grep --line-buffered -v '^TAP version\|^1\.\.'
	part_done agent_share
	# seed 002's hold through the agent: the server puts back to us
	OMS_RXE_SERVER=$peer OMS_RXE_PORT=$port \
		OMS_RXE_AGENT_PORT=$((port + 1)) OMS_RXE_SELF=$me \
		OMS_RXE_SELF2=$me2 \
		OMS_RXE_BACK_PORT=$((port + 2)) \
		OMS_RXE_GLOBAL_PORT=$((port + 3)) timeout -k 5 900 \
		"$bdir/verbs-tests/hold_rxe" 2>&1 |
		grep --line-buffered -v '^TAP version\|^1\.\.'
	part_done hold_rxe
	# sequence numbers through the agent's reorder buffer (DEST_SEQ)
	OMS_RXE_SERVER=$peer OMS_RXE_PORT=$port \
		OMS_RXE_AGENT_PORT=$((port + 1)) \
		OMS_RXE_NOORDER_PORT=$((port + 4)) timeout -k 5 900 \
		"$bdir/verbs-tests/seq_rxe" 2>&1 |
		grep --line-buffered -v '^TAP version\|^1\.\.'
	part_done seq_rxe
	OMS_RXE_SERVER=$peer OMS_RXE_PORT=$port \
		OMS_RXE_AGENT_PORT=$((port + 1)) OMS_RXE_SHARED=$shared \
		timeout -k 5 2320 \
		"$bdir/verbs-tests/litmus_rxe" 2>&1 |
		grep --line-buffered -v '^TAP version\|^1\.\.'
	part_done litmus_rxe
	[ "$suite" = litmus ] && exit 0
	[ -x "$bdir/bench/kvs_get" ] && [ -f "$here/rxe-kvs.sh" ] &&
		. "$here/rxe-kvs.sh" && kvs_client
	part_done kvs_get
	. "$here/rxe-probe.sh" && probe_client
	part_done oms_probe
	. "$here/rxe-msgpass.sh" && mp_client
	part_done msg_pass
	. "$here/rxe-examples.sh" && ex_client
	part_done examples
	OMS_PERF_SIZES=${OMS_PERF_SIZES:-64 4096} OMS_PERF_DURATION=1
	[ "${OMS_CHECK_TIER:-}" = quick ] ||
		{ . "$here/rxe-perftest.sh" && perf_client; }
	part_done perftest
	[ "${OMS_CHECK_TIER:-}" = quick ] ||
		{ OMS_SOAK_S=${OMS_SOAK_S:-0} && . "$here/rxe-soak.sh" && soak_client; }
	part_done soak
	touch $shared/b-done
	wait_file $shared/a-done 900
fi
exit 0
