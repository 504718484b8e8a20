#!/bin/sh
# `make check` entry for oms.ko: boot the Debian kernel in QEMU with an
# ivshmem-plain device backed by a fresh file in /dev/shm, run the module's
# kselftests in the guest (run-kmod-guest.sh), then check on the host what
# the guest wrote into the BAR (check_backing).  The guest also gets an
# e1000 NIC (no peer): a BAR that its driver claims.  Prints TAP.
#
# usage: run-kmod-tests.sh OMS_KO TESTDIR
set -u
ko=${1:?usage: $0 OMS_KO TESTDIR}
dir=${2:?usage: $0 OMS_KO TESTDIR}
here=$(cd "$(dirname "$0")" && pwd)
shm=$(mktemp /dev/shm/oms-kmod-XXXXXXXX) || { echo "not ok 1 - mktemp in /dev/shm"; exit 1; }
trap 'rm -f "$shm"' EXIT INT TERM
truncate -s 4M "$shm"

sh "$here/boot.sh" -t "${OMS_VM_TIMEOUT:-330}" -n kmod \
	"$here/run-kmod-guest.sh" "$ko" "$dir" -- \
	-object "memory-backend-file,id=hm,share=on,mem-path=$shm,size=4M" \
	-device ivshmem-plain,memdev=hm -device e1000
rc=$?
"$dir/check_backing" "$shm" || rc=1
exit $rc
