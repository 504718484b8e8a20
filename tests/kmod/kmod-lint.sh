#!/bin/sh
# Lint oms.ko as TAP: checkpatch.pl (from linux-source-6.1, extracted into
# build/kselftest/ by the Makefile) on kmod/, and a clean W=1 build of a copy
# of the sources with no compiler warning.
#
# usage: kmod-lint.sh KDIR
set -u
kdir=${1:?usage: $0 KDIR}
cp=build/kselftest/scripts/checkpatch.pl
echo "1..2"

srcs=$(ls kmod/*.c kmod/*.h | grep -v '\.mod\.c$')
out=$(perl "$cp" --no-tree --strict --quiet --show-types -f $srcs kmod/Kbuild 2>&1)
if [ $? -eq 0 ] && [ -z "$out" ]; then
	echo "ok 1 - checkpatch --strict clean on kmod/ ($(echo $srcs | wc -w) files)"
else
	echo "$out" | sed 's/^/# /'
	echo "not ok 1 - checkpatch on kmod/"
fi

w1=build/kmod-w1
rm -rf "$w1" && mkdir -p "$w1" && cp -r Kbuild kmod include "$w1/" &&
	find "$w1" -name '*.o' -o -name '*.ko' -o -name '.*.cmd' -o -name '*.mod*' |
	xargs rm -f
# A fresh make: under `make -j check` the inherited jobserver would add
# its own "warning:" line.
log=$(env -u MAKEFLAGS -u MFLAGS -u MAKELEVEL \
	make -C "$kdir" M="$(cd "$w1" && pwd)" W=1 modules 2>&1)
rc=$?
warn=$(echo "$log" | grep -c 'warning:')
if [ $rc -eq 0 ] && [ "$warn" -eq 0 ] && [ -f "$w1/kmod/oms.ko" ]; then
	echo "ok 2 - make kmod W=1: oms.ko built with no warning"
else
	echo "$log" | grep -E 'warning:|error:' | sed 's/^/# /'
	echo "not ok 2 - make kmod W=1 (status $rc, $warn warnings)"
fi
