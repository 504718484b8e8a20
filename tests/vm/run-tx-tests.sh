#!/bin/sh
# `make check` entry for liboms transmitting through oms.ko (issue 6): boot
# the Debian kernel in QEMU with an ivshmem-plain device backed by a fresh
# file in /dev/shm, send the test streams through the oms.ko window in the
# guest (run-tx-guest.sh, txg_guest), then read the backing file on the
# host with liboms's emulated NIC and check every message (txg_check).
# Prints TAP.
#
# usage: run-tx-tests.sh OMS_KO TXG_GUEST TXG_CHECK
set -u
bdf=0000:00:10.0	# where the ivshmem device is put: addr=0x10
ko=${1:?usage: $0 OMS_KO TXG_GUEST TXG_CHECK}
guest=${2:?usage: $0 OMS_KO TXG_GUEST TXG_CHECK}
check=${3:?usage: $0 OMS_KO TXG_GUEST TXG_CHECK}
here=$(cd "$(dirname "$0")" && pwd)
shm=$(mktemp /dev/shm/oms-tx-XXXXXXXX) || { echo "not ok 1 - mktemp in /dev/shm"; exit 1; }
trap 'rm -f "$shm"' EXIT INT TERM
truncate -s 4M "$shm"

# Boot the kernel OMS_KO was built for.
KVER=$(modinfo -F vermagic "$ko" | cut -d' ' -f1)
export KVER
sh "$here/boot.sh" -t "${OMS_VM_TIMEOUT:-1200}" -n tx-guest \
	"$here/run-tx-guest.sh" "$ko" "$bdf" "$guest" -- \
	-object "memory-backend-file,id=txg,share=on,mem-path=$shm,size=4M" \
	-device ivshmem-plain,memdev=txg,addr=0x10
rc=$?
"$check" "$shm" || rc=1
exit $rc
