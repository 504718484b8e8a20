#!/bin/sh
# Runs inside the guest (see run-tx-tests.sh): load oms.ko on BAR 2 of the
# ivshmem device the host placed at BDF, run the transmit program, unload.
# Prints TAP; the program's own lines come first.
#
# usage: run-tx-guest.sh OMS_KO BDF TXG_GUEST
set -u
ko=${1:?usage: $0 OMS_KO BDF TXG_GUEST}
bdf=${2:?usage: $0 OMS_KO BDF TXG_GUEST}
guest=${3:?usage: $0 OMS_KO BDF TXG_GUEST}
dev=/sys/bus/pci/devices/$bdf
out=/tmp/txg.out
failed=0

id="$(cat "$dev/vendor" "$dev/device" 2>/dev/null | tr '\n' ' ')"
if [ "$id" != "0x1af4 0x1110 " ]; then
	echo "not ok 1 - $bdf is the ivshmem device 1af4:1110 (found '$id')"
	exit 1
fi
if ! insmod "$ko" pci="$bdf" bar=2; then
	echo "not ok 1 - insmod oms.ko pci=$bdf bar=2"
	exit 1
fi
echo "ok 1 - insmod oms.ko pci=$bdf bar=2"

timeout -k 5 "${OMS_TEST_TIMEOUT:-600}" "$guest" >"$out" 2>&1
rc=$?
cat "$out"
if [ $rc -ne 0 ]; then
	failed=1
	grep -q '^not ok' "$out" ||
		echo "not ok 2 - txg_guest exited with status $rc (124 = timeout)"
fi
if rmmod oms; then
	echo "ok 3 - rmmod oms"
else
	echo "not ok 3 - rmmod oms"
	failed=1
fi
exit $failed
