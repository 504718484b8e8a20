#!/bin/sh
# Runs inside the guest (see run-tx-tests.sh): for each path, load oms.ko
# on BAR 2 of that path's ivshmem device, run the transmit program, unload.
# The mapped path stores into the module's mapping of the BAR; the ioctl
# path hands the module OMS_IOC_ORDERED_STORE vectors (txg_guest --ioctl).
# Each path has its own device and backing file, so the host checks each.
# Prints TAP; the program's own lines come first.
#
# usage: run-tx-guest.sh OMS_KO BDF_MAPPED BDF_IOCTL TXG_GUEST
set -u
usage="usage: $0 OMS_KO BDF_MAPPED BDF_IOCTL TXG_GUEST"
ko=${1:?$usage}
bdf_map=${2:?$usage}
bdf_ioctl=${3:?$usage}
guest=${4:?$usage}
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

run_path mapped "$bdf_map"
run_path ioctl "$bdf_ioctl" --ioctl
exit $failed
