#!/bin/sh
# Runs inside the guest: the MMIO_BENCH sweep (mmio_sweep) on the ivshmem
# BAR and on an emulated window, and liboms's bench/mmio_tx on the BAR
# through the mapping and through OMS_IOC_ORDERED_STORE.  Prints the tables
# and one TAP line each.
#
# usage: run-kmod-bench.sh OMS_KO TESTDIR MMIO_TX [mmio_sweep options]
set -u
usage="usage: $0 OMS_KO TESTDIR MMIO_TX [options]"
ko=${1:?$usage}
dir=${2:?$usage}
mmio_tx=${3:?$usage}
shift 3
n=0
bdf=""
for d in /sys/bus/pci/devices/*; do
	[ "$(cat "$d/vendor")" = 0x1af4 ] && [ "$(cat "$d/device")" = 0x1110 ] &&
		bdf=$(basename "$d")
done
for kind in pci emulated; do
	n=$((n + 1))
	if [ "$kind" = pci ]; then
		[ -n "$bdf" ] || { echo "ok $n - # SKIP no ivshmem device"; continue; }
		insmod "$ko" pci="$bdf" bar=2
	else
		insmod "$ko" emu_len=4194304
	fi
	if "$dir/mmio_sweep" "$@"; then
		echo "ok $n - MMIO_BENCH sweep, $kind window"
	else
		echo "not ok $n - MMIO_BENCH sweep, $kind window"
	fi
	if [ "$kind" = pci ]; then
		n=$((n + 1))
		if "$mmio_tx" --window kmod --reps 3 --ms 50 --verify-mib 4; then
			echo "ok $n - mmio_tx, mapped and ioctl paths, $kind window"
		else
			echo "not ok $n - mmio_tx, mapped and ioctl paths, $kind window"
		fi
	fi
	rmmod oms
done
