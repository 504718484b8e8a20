#!/bin/sh
# Runs inside the guest (see run-kmod-tests.sh): load oms.ko with two
# devices, /dev/oms on the first ivshmem BAR by module parameter and
# /dev/oms1 without a window, run the kselftests in order, unload.  Prints TAP;
# a test binary that dies without a "not ok" line still yields one.
#
# Each test binary gets a freshly loaded module, so one that fails or times
# out leaves nothing (an attached window, a held fd) for the next.
#
# usage: run-kmod-guest.sh OMS_KO TESTDIR [debug] [only=NAME,...]
#   only=: the test binaries to run, in order (default: all, below).
#   debug: the debug kernel (KASAN, lockdep: each call is about ten times
#   slower): longer timeouts, a quarter of the fuzzer's calls, and a kmemleak
#   scan once the module is unloaded.
set -u
ko=${1:?usage: $0 OMS_KO TESTDIR [debug] [only=NAME,...]}
dir=${2:?usage: $0 OMS_KO TESTDIR [debug] [only=NAME,...]}
shift 2
kind="" only=""
for a in "$@"; do
	case $a in
	debug) kind=debug ;;
	only=*) only=$(echo "${a#only=}" | tr , ' ') ;;
	esac
done
# Order matters: the data the host checks is written after the fuzzer, and
# detach_live (rmmod, PCI remove/rescan) runs last.  lockdown raises the
# kernel's lockdown for good, so it runs after everything else (below).
tests="compat32 attach caps security msix generation two_windows pci_state directmap bad_input fuzz_ioctl mmap ordered_store doorbell bench killable detach_live"
[ -n "$only" ] && tests=$only
# Bounds for hangs only, far above an idle run's need (the longest binary,
# fuzz_ioctl, takes about a minute): on a loaded 2-core host, two make
# checks side by side, the guest runs several times slower.
per_test_timeout=${OMS_TEST_TIMEOUT:-900}
if [ "$kind" = debug ]; then
	per_test_timeout=2400
	export OMS_FUZZ_DIV=4
fi
# make check's quick tier (boot.sh passes it in): a quarter of the calls
[ "${OMS_CHECK_TIER:-}" = quick ] && export OMS_FUZZ_DIV=${OMS_FUZZ_DIV:-4}
# What a kernel prints when something is wrong (the detectors included).
bad_log="BUG:|WARNING:|Oops|Call Trace|blocked for more than"
. "$(dirname "$0")/tap.sh"

# On the debug kernel, the detectors must be on, or a clean run means
# nothing: KASAN and KFENCE say so at boot, lockdep keeps debug_locks at 1
# until its first report, kmemleak has its file, hung-task its timeout.
if [ "$kind" = debug ]; then
	mount -t debugfs debugfs /sys/kernel/debug 2>/dev/null
	dmesg | grep -q 'KernelAddressSanitizer initialized' &&
		dmesg | grep -q 'kfence: initialized' &&
		grep -q 'debug_locks: *1' /proc/lockdep_stats &&
		[ -e /sys/kernel/debug/kmemleak ] &&
		[ "$(cat /proc/sys/kernel/hung_task_timeout_secs)" -gt 0 ]
	tap $? "debug kernel: KASAN, KFENCE, lockdep, kmemleak and hung-task detection on"
fi

# The ivshmem devices in address order: the first is the suite's (its
# backing file is checked on the host), the second is two_windows' other BAR.
bdf="" bdf2=""
for d in /sys/bus/pci/devices/*; do
	if [ "$(cat "$d/vendor")" = 0x1af4 ] && [ "$(cat "$d/device")" = 0x1110 ]; then
		if [ -z "$bdf" ]; then
			bdf=$(basename "$d")
		elif [ -z "$bdf2" ]; then
			bdf2=$(basename "$d")
		fi
	fi
done
echo "# ivshmem: ${bdf:-none} ${bdf2:-none}"
# Bad module parameters: the load fails and leaves nothing behind.  kmod's
# insmod words EINVAL as "Invalid parameters".
bad_load() {	# bad_load WANT_ERRNO_TEXT PARAMS...
	want=$1
	shift
	err=$(insmod "$ko" "$@" 2>&1)
	rc=$?
	if [ $rc -ne 0 ] && ! grep -q '^oms ' /proc/modules && [ ! -e /dev/oms ] &&
	   echo "$err" | grep -q "$want"; then
		tap 0 "insmod $* refused ($want)"
	else
		echo "# insmod $*: status $rc: $err"
		tap 1 "insmod $* refused ($want)"
	fi
}
bad_load "No such device" pci=0000:fe:1f.7
bad_load "Invalid parameters" pci=not-a-device
bad_load "Invalid parameters" pci=00:03.0 bar=6
# a domain too long for 16 bits: refused, not truncated to 0000:00:03.0
bad_load "Invalid parameters" pci=100000000:00:03.0
bad_load "Invalid parameters" emu_len=12345
bad_load "Invalid parameters" devices=0
bad_load "Invalid parameters" devices=9
[ -n "$bdf" ] && bad_load "No data available" pci="$bdf" bar=1

if [ -n "$bdf" ]; then
	insmod "$ko" pci="$bdf" bar=2 devices=2
	tap $? "insmod oms.ko pci=$bdf bar=2 devices=2"
	export OMS_LOAD_PCI="$bdf" OMS_LOAD_PARAMS="pci=$bdf bar=2 devices=2"
else
	echo "# no ivshmem device: emulated window only"
	insmod "$ko" devices=2
	tap $? "insmod oms.ko devices=2 (emulated window)"
	export OMS_LOAD_PARAMS="devices=2"
fi
export OMS_KO="$ko"
[ -c /dev/oms ] && [ -c /dev/oms1 ] && [ ! -e /dev/oms2 ]
tap $? "/dev/oms and /dev/oms1 exist, /dev/oms2 does not"

mount -t debugfs debugfs /sys/kernel/debug 2>/dev/null
out=/tmp/kmod-test.out
run_test() {	# run_test NAME [last]: last, no fresh module after it
	t=$1
	dm0=$(dmesg | wc -l)
	if [ ! -x "$dir/$t" ]; then
		if [ "$t" = compat32 ]; then
			n=$((n + 1))
			echo "ok $n - compat32 # SKIP not built (no gcc -m32)"
		else
			tap 1 "$t: test binary missing"
		fi
		return
	fi
	echo "# ---- $t"
	timeout -k 5 "$per_test_timeout" "$dir/$t" >"$out" 2>&1
	rc=$?
	cat "$out"
	if [ $rc -ne 0 ] && ! grep -q '^not ok' "$out"; then
		tap 1 "$t exited with status $rc (124 = timeout)"
	fi
	[ $rc -eq 0 ] || failed=1
	bad=$(dmesg | tail -n +$((dm0 + 1)) | grep -E "$bad_log" | head -n 5)
	if [ -n "$bad" ]; then
		echo "$bad" | sed 's/^/# dmesg: /'
		tap 1 "$t: kernel log shows BUG/WARNING/Oops/Call Trace/hung task"
	fi
	[ "${2:-}" = last ] || fresh_module "$t"
}

# Unload and load again with the suite's parameters (detach_live may have
# left it unloaded).  A module that cannot be unloaded (a process of the
# test still holds it) fails here, by name, not in the next test.
# A test killed by its timeout may leave processes that are still exiting
# (closing /dev/oms, unmapping the window): they are killed by name and
# given a bounded while; a module still held after that fails here.
fresh_module() {	# fresh_module AFTER_TEST
	pkill -KILL -f "^$dir/$1( |\$)" 2>/dev/null
	i=0
	while grep -q '^oms ' /proc/modules && ! rmmod oms 2>/dev/null; do
		i=$((i + 1))
		if [ $i -ge 30 ]; then
			rmmod oms
			tap 1 "rmmod oms after $1 (held for 30 s)"
			return
		fi
		sleep 1
	done
	# shellcheck disable=SC2086
	insmod "$ko" $OMS_LOAD_PARAMS || tap 1 "insmod oms.ko after $1"
}

for t in $tests; do
	run_test "$t"
done

if grep -q '^oms ' /proc/modules; then
	rmmod oms
	tap $? "rmmod oms"
fi

# kmemleak (the debug kernel): what the suite left unreferenced, now that
# the module is gone.  Scanned here: lockdown, below, closes debugfs.
# stage2.sh cleared the boot's leftovers; an object is reported once it is
# older than 5 s and unreferenced in two scans.
kml=/sys/kernel/debug/kmemleak
if [ -e $kml ]; then
	sleep 6
	if echo scan >$kml && echo scan >$kml && leaks=$(cat $kml); then
		if [ -z "$leaks" ]; then
			tap 0 "kmemleak: no unreferenced object after the suite"
		else
			echo "$leaks" | head -n 60 | sed 's/^/# kmemleak: /'
			tap 1 "kmemleak: $(echo "$leaks" | grep -c 'unreferenced object') unreferenced objects after the suite"
		fi
	else
		tap 1 "kmemleak: scan failed"
	fi
fi

# Module parameters for an emulated, uncached window; mmio_sweep's INFO
# line must say so, and its sweep must run on it.
if insmod "$ko" uc=1 emu_len=65536; then
	line=$("$dir/mmio_sweep" -t 1 -r 1 2>&1)
	rc=$?
	echo "$line" | sed 's/^/# /'
	echo "$line" | grep -q '^window: emulated, 65536 bytes, uncached;' &&
		[ $rc -eq 0 ]
	tap $? "insmod uc=1 emu_len=65536: uncached emulated window, sweep runs"
	rmmod oms
	tap $? "rmmod oms (emulated window)"
else
	tap 1 "insmod uc=1 emu_len=65536"
fi

# Last, as it cannot be undone: lockdown=integrity at run time (an unsigned
# oms.ko could not be loaded under it), with oms.ko on the ivshmem BAR.
if [ -n "$bdf" ]; then
	insmod "$ko" pci="$bdf" bar=2
	tap $? "insmod oms.ko pci=$bdf bar=2 (before lockdown)"
	run_test lockdown last
	rmmod oms
	tap $? "rmmod oms (locked down)"
fi
exit $failed
