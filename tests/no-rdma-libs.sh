#!/bin/sh
# A program that uses only the emulated device runs where rdma-core and
# libnuma are not installed: apps/oms_info, linked against liboms.so, in a
# chroot that holds the program, liboms and the C library and nothing else.
# Its controls show the chroot really lacks rdma-core: a program linked
# against libibverbs cannot start there, and asking liboms for verbs fails
# with ELIBACC there while on this machine it gets as far as looking for a
# device.  TAP.
#
# usage: no-rdma-libs.sh BUILD_DIR    (needs root for chroot, or unshare -r)
set -u
b=${1:-build}
cc=${CC:-cc}
root=$(mktemp -d)
trap 'rm -rf "$root"' EXIT
echo "1..6"

rdma_re='libibverbs|librdmacm|libnuma'

if readelf -d "$b/liboms.so" | grep NEEDED | grep -Eq "$rdma_re"; then
	readelf -d "$b/liboms.so" | grep NEEDED | sed 's/^/# /'
	echo "not ok 1 - liboms.so needs no rdma-core or libnuma"
else
	echo "ok 1 - liboms.so needs no rdma-core or libnuma"
fi

# The tree: the programs, liboms under its soname and what ldd says they
# need.
mkdir -p "$root/lib" "$root/bin"
$cc -std=gnu11 -Iinclude -o "$root/bin/oms_info" apps/oms_info.c \
	-L"$b" -loms -Wl,-rpath,/lib >"$root/cc.log" 2>&1 &&
$cc -std=gnu11 -o "$root/bin/needs_verbs" -x c - -libverbs >>"$root/cc.log" 2>&1 <<'EOF'
#include <infiniband/verbs.h>
#include <stdio.h>
int main(void)
{
	int n = 0;
	struct ibv_device **l = ibv_get_device_list(&n);

	printf("devices: %d\n", n);
	if (l)
		ibv_free_device_list(l);
	return 0;
}
EOF
[ $? -eq 0 ] || { sed 's/^/# /' "$root/cc.log"; echo "Bail out! cannot build the programs"; exit 1; }
soname=$(readelf -d "$b/liboms.so" | sed -n 's/.*(SONAME).*\[\(.*\)\]/\1/p')
[ -n "$soname" ] || { echo "Bail out! liboms.so has no SONAME"; exit 1; }
cp -L "$b/liboms.so" "$root/lib/$soname"
for f in $(LD_LIBRARY_PATH="$b" ldd "$root/bin/oms_info" | awk '/=> \//{print $3} /^\t\//{print $1}'); do
	mkdir -p "$root$(dirname "$f")"
	cp -L "$f" "$root$f"
done
rm -f "$root/cc.log"
if find "$root" -name '*.so*' | grep -Eq "$rdma_re"; then
	echo "not ok 2 - the chroot holds no rdma-core or libnuma"
else
	echo "ok 2 - the chroot holds no rdma-core or libnuma ($(find "$root" -name '*.so*' | wc -l) libraries)"
fi

if [ "$(id -u)" = 0 ]; then
	in_root="chroot $root"
elif unshare -r true 2>/dev/null; then
	in_root="unshare -r chroot $root"
else
	for i in 3 4 5 6; do
		echo "ok $i # SKIP chroot needs root or user namespaces (unshare -r)"
	done
	exit 0
fi

# run CMD...: its output into $out (and the log), its status into $rc
run() {
	out=$("$@" 2>&1)
	rc=$?
	echo "$out" | sed 's/^/# /'
}

run env -u OMS_BACKEND -u LD_LIBRARY_PATH -u LD_PRELOAD $in_root /bin/oms_info
if [ $rc -eq 0 ] && echo "$out" | grep -q '^backend: *emu' &&
   echo "$out" | grep -q '^round trip: *ok'; then
	echo "ok 3 - oms_info runs on the emulated device in the chroot"
else
	echo "not ok 3 - oms_info runs on the emulated device in the chroot (exit $rc)"
fi

run env OMS_BACKEND=verbs $in_root /bin/oms_info
if [ $rc -ne 0 ] && echo "$out" | grep -q 'shared library'; then
	echo "ok 4 - verbs asked for in the chroot: ELIBACC, said clearly"
else
	echo "not ok 4 - verbs asked for in the chroot: ELIBACC (exit $rc)"
fi

# Controls.  Outside the chroot the same request finds rdma-core and stops
# only for want of a device (or works, on a machine that has one).
run env OMS_BACKEND=verbs LD_LIBRARY_PATH="$b" "$root/bin/oms_info"
if [ $rc -eq 0 ] || echo "$out" | grep -q 'No such device'; then
	echo "ok 5 - control: on this machine verbs loads rdma-core (exit $rc)"
else
	echo "not ok 5 - control: on this machine verbs loads rdma-core"
fi
run $in_root /bin/needs_verbs
if [ $rc -ne 0 ] && echo "$out" | grep -q 'libibverbs'; then
	echo "ok 6 - control: a program linked with -libverbs cannot start in the chroot"
else
	echo "not ok 6 - control: a program linked with -libverbs cannot start in the chroot (exit $rc)"
fi
