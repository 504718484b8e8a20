#!/bin/sh
# Every program of examples/ runs as README and its own comment say, in one
# process (the emulated device), and exits 0 having checked what it shows:
# hello's flag and data, tx_sequenced's messages in order with no fence,
# kvs_client's gets with nothing torn, msg_verbs's flags never ahead of
# their data (the two with a server and a client as two threads here,
# --local; the Soft-RoCE guests run msg_verbs between two hosts,
# tests/vm/rxe-guest.sh).  Then their command lines: --help, nothing they
# do not take, and msg_verbs's and kvs_client's roles as the bench tools'
# (no HOST the server, a HOST a client): a HOST that does not resolve
# said so, a server or client on the emulated device refused unasked and
# warned of when OMS_BACKEND=emu asks for it.  TAP, the plan last.
#
# usage: examples.sh BUILD_DIR
set -u
b=${1:-build}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
# tap, run
. tests/tap-lib.sh

bin() {
	echo "$b/examples/$1"
}

for src in examples/*.c; do
	ex=$(basename "$src" .c)
	# in one process: msg_verbs's and kvs_client's sides as threads
	args=""
	case $ex in msg_verbs|kvs_client) args=--local ;; esac
	# shellcheck disable=SC2086
	out=$(OMS_BACKEND=emu timeout 120 "$b/examples/$ex" $args 2>&1)
	rc=$?
	echo "$out" | sed 's/^/# /'
	[ $rc -eq 0 ]
	tap $? "examples/$ex: $(echo "$out" | tail -n 1) (exit $rc)"
done

# --help, and nothing else they do not take
for ex in hello tx_sequenced msg_verbs kvs_client; do
	run $ex --help
	[ $rc -eq 0 ] && grep -q "^usage: $ex" "$tmp/out" && [ ! -s "$tmp/err" ]
	tap $? "examples/$ex --help: exit 0, its usage on stdout"
	run $ex --bogus
	[ $rc -eq 2 ] && grep -q "^usage: $ex" "$tmp/err" && [ ! -s "$tmp/out" ] &&
		grep -q -- "^$ex: .*'--bogus'" "$tmp/err"
	tap $? "examples/$ex --bogus: exit 2, named, the usage on stderr"
done
for ex in hello tx_sequenced; do
	run $ex extra
	[ $rc -eq 2 ] && grep -q "^$ex: no arguments, 'extra' given" "$tmp/err"
	tap $? "examples/$ex extra: exit 2, it takes no argument"
done
run msg_verbs --server 10.0.0.1
[ $rc -eq 2 ] && grep -q "^msg_verbs: a server takes no HOST.*--server --bind 10.0.0.1" "$tmp/err"
tap $? "examples/msg_verbs --server ADDRESS (its old server): exit 2, says --server --bind ADDRESS"
for a in "--local --bind 127.0.0.1" "--local 127.0.0.1" "a b" "--bind"; do
	# shellcheck disable=SC2086
	run msg_verbs $a
	[ $rc -eq 2 ] && grep -q "^usage: msg_verbs" "$tmp/err" && [ ! -s "$tmp/out" ]
	tap $? "examples/msg_verbs $a: exit 2, said with the usage"
done
for a in "--local 127.0.0.1" "--server 127.0.0.1" "--server --local"; do
	# shellcheck disable=SC2086
	run kvs_client $a
	[ $rc -eq 2 ] && grep -q "^kvs_client: .*one of them" "$tmp/err"
	tap $? "examples/kvs_client $a: exit 2, one role at a time"
done

# The peers' failures, said as the user meets them
for ex in msg_verbs kvs_client; do
	for a in nosuchhost.invalid "--client nosuchhost.invalid"; do
		# shellcheck disable=SC2086
		run $ex $a
		[ $rc -eq 1 ] && grep -q "^$ex: cannot resolve nosuchhost.invalid" "$tmp/err" &&
			! grep -qi "no route" "$tmp/err"
		tap $? "examples/$ex $a (a HOST that does not resolve): exit 1, says it cannot resolve it"
	done
	if [ -z "$(ls /sys/class/infiniband 2>/dev/null)" ]; then
		for a in "" --server 127.0.0.1; do
			# shellcheck disable=SC2086
			run $ex $a
			[ $rc -eq 1 ] && [ ! -s "$tmp/out" ] &&
				grep -q "^$ex: no RDMA device.*emulated device.*rdma-core.*modprobe rdma_rxe.*--local" "$tmp/err"
			tap $? "examples/$ex ${a:-(no HOST: the server)} without an RDMA device: exit 1, refused, what to install or load, and --local"
		done
	fi
done
# Asked for (OMS_BACKEND=emu): the server serves, and warns that no other
# process reaches it; until the timeout stops it
for ex in msg_verbs kvs_client; do
	rm -f "$tmp/out" "$tmp/err"
	OMS_BACKEND=emu timeout -s TERM 3 "$b/examples/$ex" >"$tmp/out" 2>"$tmp/err"
	grep -q "^$ex: warning: .*emulated device.*no other process" "$tmp/err" &&
		grep -Eq "^($ex: listening|serving)" "$tmp/out"
	tap $? "examples/$ex with OMS_BACKEND=emu (asked for): serves, and warns no other process reaches it"
done
echo "1..$n"
