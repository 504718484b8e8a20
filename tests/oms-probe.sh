#!/bin/sh
# apps/oms_probe on this host: the emulated device and (absent here) the
# oms.ko window; the verbs target runs between the two Soft-RoCE guests
# (tests/vm/rxe-probe.sh).  What is checked is the JSON report, never a
# speed:
#   in order     the emulated device without chaos: every row measured,
#                no violation in one initiator's patterns, the checks the
#                verdicts rest on;
#   reordering   the control: with --chaos the same write patterns show
#                violations (the detector sees a reorder when there is
#                one), while the rows the contract requires (completion,
#                a fenced write after a read) still show none;
#   sanitizers   the same targets built with ASan/UBSan: no report;
#   no module    the kmod target says why it measured nothing;
#   bad flags    exit 2, the flag named on stderr, no report: an option
#                of another role or of a target not probed, the old
#                client's spelling (--server HOST);
#   no peer      the server and a client with no RDMA device, or a HOST
#                that does not resolve: exit 1, why, nothing probed.
# TAP, the plan last.
#
# usage: sh tests/oms-probe.sh BUILD_DIR
set -u
probe=${1:-build}/apps/oms_probe
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
n=0
fails=0

tap() {
	n=$((n + 1))
	if [ "$1" -eq 0 ]; then
		echo "ok $n - $2"
	else
		echo "not ok $n - $2"
		fails=$((fails + 1))
		sed 's/^/#   stderr: /' "$tmp/err" 2>/dev/null | head -n 5
	fi
}

# The record of probe $2 of target $1 in $tmp/out, and one field of it.
rec() { grep "\"target\":\"$1\",\"probe\":\"$2\"," "$tmp/out" | head -n 1; }
field() {	# field RECORD KEY
	printf '%s\n' "$1" |
		sed -n "s/.*\"$2\":\"\{0,1\}\([^,\"}]*\).*/\1/p" | head -n 1
}
num() { v=$(field "$(rec "$1" "$2")" "$3"); echo "${v:--1}"; }

if [ ! -x "$probe" ]; then
	echo "ok 1 # SKIP $probe not built"
	echo "1..1"
	exit 0
fi
# oms_probe calls verbs itself (a live device is one of its targets): where
# rdma-core is not installed it cannot start at all
"$probe" --help >/dev/null 2>&1
if [ $? -eq 127 ]; then
	echo "ok 1 # SKIP $probe cannot start (libibverbs or librdmacm not installed)"
	echo "1..1"
	exit 0
fi

# one initiator's patterns: in order on a device without chaos
ordering="write_write completion read_within read_read war_nofence war_fence"
costs="cost_write cost_read cost_write_flush cost_read_write cost_read_fence_write"

# 1. in order: no chaos
timeout 300 "$probe" --local --targets emu --rounds 1024 --cost-rounds 50 --json \
	>"$tmp/out" 2>"$tmp/err"
rc=$?
tap $rc "oms_probe --local --targets emu: exit 0"
bad=""
while read -r line; do
	for k in '"bench":"oms_probe"' '"target":"emu"' '"probe":' '"litmus":' \
		'"rule":' '"measured":' '"violations":' '"verdict":' '"liboms":'; do
		case $line in *"$k"*) ;; *) bad="$bad missing $k;" ;; esac
	done
done <"$tmp/out"
[ -s "$tmp/out" ] && [ -z "$bad" ]
tap $? "oms_probe --json: every record names the probe, its litmus id, rule, verdict and the metadata${bad:+ ($bad)}"
for p in $ordering; do
	m=$(field "$(rec emu "$p")" measured)
	v=$(num emu "$p" violations)
	[ "$m" = true ] && [ "$v" -eq 0 ]
	tap $? "emu in order: $p measured, 0 violations (measured=$m violations=$v)"
done
# two initiators (two QPs): no order between them even on an in-order
# device, which serves its queues in turn - measured, not asserted
m=$(field "$(rec emu flag_other_qp)" measured)
[ "$m" = true ]
tap $? "emu in order: flag_other_qp measured ($(num emu flag_other_qp violations) of $(num emu flag_other_qp checks): two QPs are not ordered)"
for p in write_write completion read_within war_fence; do
	c=$(num emu "$p" checks)
	[ "$c" -gt 0 ]
	tap $? "emu in order: $p rests on $c checks (> 0)"
done
for p in $costs; do
	c=$(field "$(rec emu "$p")" cost_ns)
	awk -v c="${c:-0}" 'BEGIN { exit !(c > 0) }'
	tap $? "emu: $p timed ($c ns)"
done

# 2. the control: the device reorders (chaos); required rows still hold
timeout 300 "$probe" --local --targets emu --chaos 7 --rounds 1024 --cost-rounds 10 \
	--json >"$tmp/out" 2>"$tmp/err"
rc=$?
tap $rc "oms_probe --local --targets emu --chaos 7: exit 0 (no required order violated)"
for p in write_write flag_other_qp; do
	v=$(num emu "$p" violations)
	verdict=$(field "$(rec emu "$p")" verdict)
	[ "$v" -gt 0 ] && [ "$verdict" = reorders ]
	tap $? "emu chaos: $p reorders ($v violations, verdict '$verdict'): the probe sees what it looks for"
done
for p in completion war_fence; do
	v=$(num emu "$p" violations)
	c=$(num emu "$p" checks)
	[ "$v" -eq 0 ] && [ "$c" -gt 0 ]
	tap $? "emu chaos: $p holds (0 of $c) - L15 / L33 are the contract, chaos or not"
done

# 2b. the same under ASan/UBSan (make builds build/apps-asan/oms_probe):
# every target's code path on this host, no report from the sanitizers
asan=${1:-build}/apps-asan/oms_probe
if [ -x "$asan" ]; then
	timeout 600 "$asan" --local --targets emu,kmod --chaos 3 --rounds 256 \
		--cost-rounds 10 --dev "$tmp/no-such-node" --json \
		>"$tmp/out" 2>"$tmp/err"
	rc=$?
	[ $rc -eq 0 ] && ! grep -q 'Sanitizer\|runtime error' "$tmp/err" &&
		[ "$(grep -c '"target":"emu"' "$tmp/out")" -ge 10 ]
	tap $? "oms_probe under ASan/UBSan: emu (chaos) and kmod targets, exit 0, no sanitizer report (exit $rc)"
else
	tap 1 "$asan is built"
fi

# 3. no oms.ko on this host (the kmod guest suite runs it with one)
timeout 60 "$probe" --local --targets kmod --dev "$tmp/no-such-node" --json \
	>"$tmp/out" 2>"$tmp/err"
rc=$?
r=$(rec kmod window)
[ $rc -eq 0 ] && [ "$(field "$r" measured)" = false ] &&
	case $(field "$r" note) in *"not loaded"*) true ;; *) false ;; esac
tap $? "oms_probe --local --targets kmod without the module: exit 0, window not measured, the note says why"

# 4. bad flags: exit 2, the flag named, nothing measured
bad_case() {	# bad_case FLAG-NAMED ARGS...
	want=$1
	shift
	timeout 60 "$probe" "$@" >"$tmp/out" 2>"$tmp/err"
	rc=$?
	[ $rc -eq 2 ] && grep -q -- "$want" "$tmp/err" && ! grep -q '"bench"' "$tmp/out"
	tap $? "oms_probe $* -> exit 2 naming $want (exit $rc)"
}
bad_case --targets --local --targets verbs
bad_case --rounds --local --rounds 33
bad_case --rounds --local --rounds abc
bad_case --targets --local --targets emu,nic
bad_case --targets --server --targets emu
bad_case --targets --listen --targets emu
bad_case --targets nosuchhost.invalid --targets emu,kmod
bad_case --bind --local --bind 127.0.0.1
bad_case --chaos --local --chaos -1
bad_case --chaos --local --targets kmod --chaos 3
bad_case --dev --local --targets emu --dev /dev/oms
bad_case --rounds --local --targets kmod -n 64
bad_case --port --local -p 7000
bad_case --local --listen --local
bad_case --ib-dev --local --ib-dev rxe0
# the old client (--server HOST) is refused with the new spelling
bad_case "the client is now 'oms_probe HOST'" --server somehost --targets verbs
bad_case "the client is now 'oms_probe HOST'" --server=somehost
timeout 60 "$probe" --help >"$tmp/out" 2>"$tmp/err"
rc=$?
[ $rc -eq 0 ] && grep -q -- "also --listen" "$tmp/out" &&
	grep -q "^usage: oms_probe \[--server\]" "$tmp/out" &&
	grep -q "^       oms_probe \[options\] HOST" "$tmp/out" &&
	grep -q "^       oms_probe --local" "$tmp/out"
tap $? "oms_probe --help: exit 0, the three roles, --listen still the server"
# the roles that need a peer, without one: refused with what to do
if [ -z "$(ls /sys/class/infiniband 2>/dev/null)" ]; then
	for args in "" --listen 127.0.0.1; do
		# shellcheck disable=SC2086
		timeout 60 "$probe" $args >"$tmp/out" 2>"$tmp/err"
		rc=$?
		[ $rc -eq 1 ] && [ ! -s "$tmp/out" ] &&
			grep -q "^oms_probe: no RDMA device in /sys/class/infiniband: .*Soft-RoCE.*'oms_probe --local'" "$tmp/err"
		tap $? "oms_probe ${args:-(no HOST)} without an RDMA device: exit 1 ($rc), no probe, says what to load and --local"
	done
fi
timeout 60 "$probe" nosuchhost.invalid >"$tmp/out" 2>"$tmp/err"
rc=$?
[ $rc -eq 1 ] && [ ! -s "$tmp/out" ] &&
	grep -q "^oms_probe: cannot resolve nosuchhost.invalid" "$tmp/err"
tap $? "oms_probe HOST that does not resolve: exit 1 ($rc), says so, probes nothing else"

echo "1..$n"
[ $fails -eq 0 ]
