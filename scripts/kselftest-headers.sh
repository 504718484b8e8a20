#!/bin/sh
# Extract the kselftest harness (and checkpatch.pl with its data files) from
# the linux-source-6.1 tarball into the build tree.  These files belong to the
# kernel; they are never committed here.
#
# usage: kselftest-headers.sh OUTDIR
set -eu
out=${1:?usage: $0 OUTDIR}
tar=$(ls /usr/src/linux-source-6.1*.tar.xz 2>/dev/null | head -n 1)
if [ -z "$tar" ]; then
	echo "kselftest-headers: /usr/src/linux-source-6.1.tar.xz not found (make deps)" >&2
	exit 1
fi
top=$(basename "$tar" .tar.xz)
mkdir -p "$out"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
tar -C "$tmp" -xJf "$tar" \
	"$top/tools/testing/selftests/kselftest_harness.h" \
	"$top/tools/testing/selftests/kselftest.h" \
	"$top/scripts/checkpatch.pl" \
	"$top/scripts/spelling.txt" \
	"$top/scripts/const_structs.checkpatch"
cp "$tmp/$top/tools/testing/selftests/kselftest_harness.h" \
   "$tmp/$top/tools/testing/selftests/kselftest.h" "$out/"
mkdir -p "$out/scripts"
cp "$tmp/$top/scripts/checkpatch.pl" "$tmp/$top/scripts/spelling.txt" \
   "$tmp/$top/scripts/const_structs.checkpatch" "$out/scripts/"
