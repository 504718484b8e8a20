#!/bin/sh
# Lint oms.ko as TAP: checkpatch.pl (from linux-source-6.1, extracted into
# build/kselftest/ by the Makefile) on kmod/, and, for each per-kernel
# build directory given (scripts/kmod-build.sh: a W=1 build), no compiler
# warning in its log; and one version everywhere: the Makefile's VERSION,
# dkms.conf's PACKAGE_VERSION and each build's MODULE_VERSION.
#
# usage: kmod-lint.sh BUILDDIR...
set -u
cp=build/kselftest/scripts/checkpatch.pl
echo "1..$(($# + 2))"

srcs=$(ls kmod/*.c kmod/*.h | grep -v '\.mod\.c$')
# LINUX_VERSION_CODE: checkpatch asks in-tree code not to test kernel
# versions; an out-of-tree module built for 6.1 and 6.12 must, and does so
# only in kmod/oms_compat.h.
out=$(perl "$cp" --no-tree --strict --quiet --show-types --ignore LINUX_VERSION_CODE \
	-f $srcs kmod/Kbuild 2>&1)
rc=$?
# The write-combining channel is kernel code too (the module includes
# it), shared with user space, where only the <stdint.h> types exist.
wc=$(perl "$cp" --no-tree --strict --quiet --show-types \
	--ignore PREFER_KERNEL_TYPES -f lib/engine/wc_chan.h 2>&1) || rc=1
out=$out$wc
if [ $rc -eq 0 ] && [ -z "$out" ]; then
	echo "ok 1 - checkpatch --strict clean on kmod/ ($(echo $srcs | wc -w) files) and lib/engine/wc_chan.h"
else
	echo "$out" | sed 's/^/# /'
	echo "not ok 1 - checkpatch on kmod/"
fi

want=$(sed -n 's/^VERSION := $(VERSION_MAJOR)\(.*\)/\1/p' Makefile)
want=$(sed -n 's/^VERSION_MAJOR := //p' Makefile)$want
dkms=$(sed -n 's/^PACKAGE_VERSION="\(.*\)"/\1/p' dkms.conf)
mods=""
for d in "$@"; do
	mods="$mods $(modinfo -F version "$d/oms.ko" 2>/dev/null || echo none)"
done
bad=0
for v in $dkms $mods; do
	[ "$v" = "$want" ] || bad=1
done
if [ -n "$want" ] && [ -n "$dkms" ] && [ $bad -eq 0 ]; then
	echo "ok 2 - version $want in Makefile, dkms.conf and every oms.ko"
else
	echo "# Makefile $want, dkms.conf '$dkms', MODULE_VERSION:$mods"
	echo "not ok 2 - one version in Makefile, dkms.conf and oms.ko"
fi

n=2
for d in "$@"; do
	n=$((n + 1))
	rel=$(cat "$d/kernel.release" 2>/dev/null || echo "$d")
	warn=missing
	[ -f "$d/build.log" ] && warn=$(grep -c 'warning:' "$d/build.log")
	if [ -f "$d/oms.ko" ] && [ "$warn" = 0 ]; then
		echo "ok $n - oms.ko for $rel: W=1 build with no warning"
	else
		grep -E 'warning:|error:' "$d/build.log" 2>/dev/null | sed 's/^/# /'
		echo "not ok $n - oms.ko for $rel: W=1 build ($warn warnings)"
	fi
done
