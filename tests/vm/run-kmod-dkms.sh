#!/bin/sh
# `make check` entry for the packaged module: boot an installed Debian
# kernel in QEMU with an ivshmem-plain device and run kmod-dkms-guest.sh
# there (dkms add/build/install/remove, the udev rule, a non-root user).
# Its own boot, apart from the kmod suite, so that the runner can overlap
# the guest's compile with other tests.  Prints TAP.
#
# usage: run-kmod-dkms.sh KVER TESTDIR
set -u
kver=${1:?usage: $0 KVER TESTDIR}
dir=${2:?usage: $0 KVER TESTDIR}
here=$(cd "$(dirname "$0")" && pwd)
shm=$(mktemp /dev/shm/oms-dkms-XXXXXXXX) || { echo "not ok 1 - mktemp in /dev/shm"; exit 1; }
trap 'rm -f "$shm"' EXIT INT TERM
truncate -s 4M "$shm"
# The ivshmem device's address is fixed by the order of -device options:
# the guest script finds it by vendor and device id.
KVER=$kver sh "$here/boot.sh" -n "dkms-$kver" -t "${OMS_VM_TIMEOUT:-3000}" \
	"$here/kmod-dkms-guest.sh" "$dir" -- \
	-object "memory-backend-file,id=hm,share=on,mem-path=$shm,size=4M" \
	-device ivshmem-plain,memdev=hm
