#!/bin/sh
# Runs inside the guest (see run-tx-tests.sh): for each path, load oms.ko
# on BAR 2 of that path's ivshmem device, run the transmit program, unload.
# The mapped path stores into the module's mapping of the BAR; the ioctl
# path hands the module OMS_IOC_ORDERED_STORE vectors (txg_guest --ioctl).
# Each path has its own device and backing file, so the host checks each.
# Then bench/mmio_tx runs on a third device over both paths, its verified
# pass reading the BAR back, and its JSON is checked (order, not speed);
# apps/oms_probe's kmod target times each fence and flush there.
# Prints TAP; the program's own lines come first.
#
# usage: run-tx-guest.sh OMS_KO BDF_MAPPED BDF_IOCTL TXG_GUEST BDF_BENCH MMIO_TX
set -u
usage="usage: $0 OMS_KO BDF_MAPPED BDF_IOCTL TXG_GUEST BDF_BENCH MMIO_TX"
ko=${1:?$usage}
bdf_map=${2:?$usage}
bdf_ioctl=${3:?$usage}
guest=${4:?$usage}
bdf_bench=${5:?$usage}
mmio_tx=${6:?$usage}
out=/tmp/txg.out
. "$(dirname "$0")/tap.sh"

run_path() {	# run_path NAME BDF [txg_guest flags]
	name=$1 bdf=$2
	shift 2
	dev=/sys/bus/pci/devices/$bdf
	id="$(cat "$dev/vendor" "$dev/device" 2>/dev/null | tr '\n' ' ')"
	if [ "$id" != "0x1af4 0x1110 " ]; then
		tap 1 "$name: $bdf is the ivshmem device 1af4:1110 (found '$id')"
		return
	fi
	if ! insmod "$ko" pci="$bdf" bar=2; then
		tap 1 "$name: insmod oms.ko pci=$bdf bar=2"
		return
	fi
	tap 0 "$name: insmod oms.ko pci=$bdf bar=2"
	timeout -k 5 "${OMS_TEST_TIMEOUT:-600}" "$guest" "$@" >"$out" 2>&1
	rc=$?
	cat "$out"
	if [ $rc -ne 0 ]; then
		failed=1
		grep -q '^not ok' "$out" ||
			tap 1 "$name: txg_guest exited with status $rc (124 = timeout)"
	fi
	rmmod oms
	tap $? "$name: rmmod oms"
}

# mmio_tx's record of MODE on PATH (one JSON line), or nothing.
record() {
	grep "\"mode\":\"$1\"" /tmp/mmio.json | grep "\"path\":\"$2\""
}

# apps/oms_probe's kmod target on the same window: what each fence and
# flush costs on the mapped path and through the module (its JSON, not
# its speed, is checked).
run_probe() {
	probe=$(dirname "$mmio_tx")/../apps/oms_probe
	[ -x "$probe" ] || return 0
	timeout -k 5 300 "$probe" --local --targets kmod --cost-rounds 200 --json \
		>/tmp/probe.json 2>/tmp/probe.err
	rc=$?
	[ $rc -eq 0 ] || sed 's/^/# probe: /' /tmp/probe.err | tail -n 5
	sed -n 's/.*"probe":"\([a-z_]*\)".*"cost_ns":\([0-9.]*\),"value":"\([^"]*\)".*/# probe \1: \2 ns \3/p' \
		/tmp/probe.json
	ok=$rc
	grep -q '"probe":"window",.*"measured":true' /tmp/probe.json || ok=1
	for p in mmio ioctl; do
		for c in weak strong flush; do
			grep "\"probe\":\"cost_${p}_$c\"," /tmp/probe.json |
				grep -q '"measured":true,.*"cost_ns":[1-9]' || ok=1
		done
	done
	tap $ok "oms_probe --local --targets kmod: the window found, weak/strong/flush timed on the mapped and ioctl paths"
}

run_bench() {
	if ! insmod "$ko" pci="$bdf_bench" bar=2; then
		tap 1 "mmio_tx: insmod oms.ko pci=$bdf_bench bar=2"
		return
	fi
	timeout -k 5 "${OMS_TEST_TIMEOUT:-600}" "$mmio_tx" --window kmod \
		-s 64,512 --ms 20 --reps 1 --verify-mib 1 --json >/tmp/mmio.json
	tap $? "mmio_tx --window kmod, both paths, ran to the end"
	# the figures, for the log: mode path size Gb/s x-unfenced sys/msg
	sed 's/.*"mode":"\([a-z]*\)".*"path":"\([a-z]*\)","size":\([0-9]*\).*"gbps":\([0-9.e+-]*\),.*"ratio_vs_unfenced":\([0-9.]*\).*"syscalls_per_msg":\([0-9.]*\).*/# \1 \2 \3 B: \4 Gb\/s written, x unfenced \5, syscalls\/msg \6/' \
		/tmp/mmio.json
	for path in mapped ioctl; do
		ok=0
		for mode in fenced sequenced; do
			r=$(record $mode $path)
			[ "$(printf '%s\n' "$r" | grep -c '"verified":1,')" -eq 2 ] &&
			[ "$(printf '%s\n' "$r" | grep -c '"out_of_order":0,"lost":0,"corrupted":0,"dropped":0,')" -eq 2 ] ||
				ok=1
		done
		tap $ok "mmio_tx $path: fenced and sequenced verified whole and in order at 64 and 512 B (read back from the BAR)"
		# control: the same check fails without the ordering
		r=$(record unfenced $path)
		[ "$(printf '%s\n' "$r" | grep -c '"verified":1,')" -eq 2 ] &&
		[ "$(printf '%s\n' "$r" | grep -c '"out_of_order":0,')" -eq 0 ]
		tap $? "mmio_tx $path: control, unfenced: the verifier sees messages out of order at both sizes"
	done
	r=$(record unfenced ioctl; record fenced ioctl; record sequenced ioctl)
	[ "$(printf '%s\n' "$r" | grep -c '"syscalls_per_msg":0.00000,')" -eq 0 ] &&
	[ "$(printf '%s\n' "$r" | grep -c '"syscalls_per_msg":')" -eq 6 ]
	tap $? "mmio_tx ioctl: every record counts system calls"
	r=$(record unfenced mapped; record fenced mapped; record sequenced mapped)
	[ "$(printf '%s\n' "$r" | grep -c '"syscalls_per_msg":0.00000,')" -eq 6 ]
	tap $? "mmio_tx mapped: no system call on the mapped path"
	run_probe
	rmmod oms
	tap $? "mmio_tx: rmmod oms"
}

run_path mapped "$bdf_map"
run_path ioctl "$bdf_ioctl" --ioctl
run_bench
exit $failed
