#!/bin/sh
# `make check` entry for oms.ko: boot the Debian kernel in QEMU with two
# ivshmem-plain devices, each backed by a fresh file in /dev/shm (the
# second at a higher slot, for tests/kmod/two_windows.c), run the module's
# kselftests in the guest (run-kmod-guest.sh), then check on the host what
# the guest wrote into the BAR (check_backing).  The guest also gets an
# e1000 NIC (no peer): a BAR that its driver claims, and a virtio-rng
# device with 512 MSI-X vectors: a BAR of table, PBA and one more page
# (tests/kmod/msix.c).  Prints TAP.
#
# usage: run-kmod-tests.sh [-k IMAGE] OMS_KO TESTDIR
#   OMS_KO was built for one kernel (scripts/kmod-build.sh); the guest boots
#   that kernel: the installed Debian release the module records, or the
#   image given by -k (the debug kernel).  OMS_KMOD_ONLY=NAME,... runs
#   only those test binaries of tests/kmod/ (while working on one).
set -u
image=""
[ "${1:-}" = -k ] && { image=$2; shift 2; }
ko=${1:?usage: $0 [-k IMAGE] OMS_KO TESTDIR}
dir=${2:?usage: $0 OMS_KO TESTDIR}
here=$(cd "$(dirname "$0")" && pwd)
shm=$(mktemp /dev/shm/oms-kmod-XXXXXXXX) || { echo "not ok 1 - mktemp in /dev/shm"; exit 1; }
shm2=$(mktemp /dev/shm/oms-kmod2-XXXXXXXX) || { rm -f "$shm"; echo "not ok 1 - mktemp in /dev/shm"; exit 1; }
trap 'rm -f "$shm" "$shm2"' EXIT INT TERM
truncate -s 4M "$shm" "$shm2"

rel=$(modinfo -F vermagic "$ko" | cut -d' ' -f1)
if [ -n "$image" ]; then
	# The debug kernel is slow under TCG: ACPI's AML interpreter routing
	# PCI interrupts (_PRT) ran into its loop timeout and tripped the
	# soft-lockup detector at boot and at every driver bind; the BIOS's
	# PIRQ table routes them instead.
	set -- -t "${OMS_VM_TIMEOUT:-5000}" -k "$image" -l "$rel" -a acpi=noirq
	kind=debug
else
	export KVER="$rel"
	set -- -t "${OMS_VM_TIMEOUT:-3000}"
	kind=""
fi
sh "$here/boot.sh" -n "kmod-$rel" "$@" \
	"$here/run-kmod-guest.sh" "$ko" "$dir" $kind \
	${OMS_KMOD_ONLY:+"only=$OMS_KMOD_ONLY"} -- \
	-object "memory-backend-file,id=hm,share=on,mem-path=$shm,size=4M" \
	-device ivshmem-plain,memdev=hm -device e1000 \
	-device virtio-rng-pci,vectors=512 \
	-object "memory-backend-file,id=hm2,share=on,mem-path=$shm2,size=4M" \
	-device ivshmem-plain,memdev=hm2,addr=0x1d
rc=$?
"$dir/check_backing" "$shm" || rc=1
exit $rc
