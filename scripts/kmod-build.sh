#!/bin/sh
# Build oms.ko for one kernel into its own directory: a copy of the sources
# (kbuild writes its objects beside them, so two kernels never share one
# tree), with W=1.  A failed build fails; warnings are kept in build.log,
# where tests/kmod/kmod-lint.sh reports them as a failed test.  The guest
# suite for that kernel loads exactly this oms.ko.
#
# usage: kmod-build.sh KDIR OUTDIR
#   leaves OUTDIR/oms.ko, OUTDIR/build.log and OUTDIR/kernel.release
set -u
kdir=${1:?usage: $0 KDIR OUTDIR}
out=${2:?usage: $0 KDIR OUTDIR}
top=$(cd "$(dirname "$0")/.." && pwd)
[ -f "$kdir/Makefile" ] || { echo "kmod-build: no kernel build tree at $kdir" >&2; exit 1; }
rm -rf "$out/src" "$out/oms.ko"
mkdir -p "$out/src/kmod" "$out/src/include" "$out/src/lib/engine"
cp "$top/Kbuild" "$out/src/"
cp "$top"/kmod/Kbuild "$top"/kmod/*.c "$top"/kmod/*.h "$out/src/kmod/"
rm -f "$out"/src/kmod/*.mod.c
cp "$top/include/oms_uapi.h" "$top/include/oms_order.h" "$out/src/include/"
cp "$top/lib/engine/wc_chan.h" "$out/src/lib/engine/"
src=$(cd "$out/src" && pwd)
# A fresh make: an inherited jobserver would add its own "warning:" line.
env -u MAKEFLAGS -u MFLAGS -u MAKELEVEL \
	make -C "$kdir" M="$src" W=1 modules >"$out/build.log" 2>&1
rc=$?
if [ $rc -ne 0 ]; then
	grep -E 'warning:|error:' "$out/build.log" | head -n 40 >&2
	echo "kmod-build: oms.ko for $kdir failed (status $rc; log $out/build.log)" >&2
	exit 1
fi
cp "$src/kmod/oms.ko" "$out/oms.ko"
# The release the module will load into, as the module itself records it.
modinfo -F vermagic "$out/oms.ko" | cut -d' ' -f1 >"$out/kernel.release"
exit 0
