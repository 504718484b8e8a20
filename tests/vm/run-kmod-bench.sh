#!/bin/sh
# Runs inside the guest: the MMIO_BENCH sweep (mmio_sweep) on the ivshmem
# BAR and on an emulated window.  Prints the tables and one TAP line each.
#
# usage: run-kmod-bench.sh OMS_KO TESTDIR [mmio_sweep options]
set -u
ko=${1:?usage: $0 OMS_KO TESTDIR [options]}
dir=${2:?usage: $0 OMS_KO TESTDIR [options]}
shift 2
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
	rmmod oms
done
