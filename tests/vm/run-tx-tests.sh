#!/bin/sh
# `make check` entry for liboms transmitting through oms.ko (its mapped
# window and its ioctl path): boot the Debian kernel in QEMU with two
# ivshmem-plain devices, each backed by a fresh file in /dev/shm; in the
# guest send the test streams through the oms.ko window, once through its
# mapping and once through its ioctls (run-tx-guest.sh, txg_guest), then
# read each backing file on the host with liboms's transmit receiver and check
# every message (txg_check).  A third device carries bench/mmio_tx on both
# paths (checked in the guest).  Prints TAP.
#
# usage: run-tx-tests.sh OMS_KO TXG_GUEST TXG_CHECK MMIO_TX
set -u
bdf_map=0000:00:10.0	# where the ivshmem devices are put: addr=0x10
bdf_ioctl=0000:00:11.0	# addr=0x11
bdf_bench=0000:00:12.0	# addr=0x12
usage="usage: $0 OMS_KO TXG_GUEST TXG_CHECK MMIO_TX"
ko=${1:?$usage}
guest=${2:?$usage}
check=${3:?$usage}
mmio_tx=${4:?$usage}
here=$(cd "$(dirname "$0")" && pwd)
shm_map=$(mktemp /dev/shm/oms-tx-XXXXXXXX) || { echo "not ok 1 - mktemp in /dev/shm"; exit 1; }
shm_ioctl=$(mktemp /dev/shm/oms-tx-XXXXXXXX) || { rm -f "$shm_map"; echo "not ok 1 - mktemp in /dev/shm"; exit 1; }
shm_bench=$(mktemp /dev/shm/oms-tx-XXXXXXXX) || { rm -f "$shm_map" "$shm_ioctl"; echo "not ok 1 - mktemp in /dev/shm"; exit 1; }
trap 'rm -f "$shm_map" "$shm_ioctl" "$shm_bench"' EXIT INT TERM
truncate -s 4M "$shm_map" "$shm_ioctl"
truncate -s 1M "$shm_bench"

# Boot the kernel OMS_KO was built for.
KVER=$(modinfo -F vermagic "$ko" | cut -d' ' -f1)
export KVER
sh "$here/boot.sh" -t "${OMS_VM_TIMEOUT:-1200}" -n tx-guest \
	"$here/run-tx-guest.sh" "$ko" "$bdf_map" "$bdf_ioctl" "$guest" \
	"$bdf_bench" "$mmio_tx" -- \
	-object "memory-backend-file,id=txgm,share=on,mem-path=$shm_map,size=4M" \
	-device ivshmem-plain,memdev=txgm,addr=0x10 \
	-object "memory-backend-file,id=txgi,share=on,mem-path=$shm_ioctl,size=4M" \
	-device ivshmem-plain,memdev=txgi,addr=0x11 \
	-object "memory-backend-file,id=txgb,share=on,mem-path=$shm_bench,size=1M" \
	-device ivshmem-plain,memdev=txgb,addr=0x12
rc=$?
"$check" "$shm_map" mapped || rc=1
"$check" "$shm_ioctl" ioctl || rc=1
exit $rc
