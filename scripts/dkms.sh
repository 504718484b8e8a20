#!/bin/sh
# Install oms.ko as a DKMS package, or remove it.
#
# usage: dkms.sh install [KVER]   (as root; default: the running kernel)
#        dkms.sh remove
#
# install copies the module's sources (what dkms.conf builds: Kbuild, kmod/,
# the two uapi headers) to /usr/src/oms-VERSION, runs dkms add, build and
# install for KVER, creates the system group "oms" and installs
# kmod/60-oms.rules into /etc/udev/rules.d, so that members of the group may
# open /dev/oms.  remove undoes all of it, for every kernel.  Both are what
# `make dkms-install` / `make dkms-remove` run, and what the guest suite
# runs on each Debian kernel (tests/vm/kmod-dkms-guest.sh).
set -eu
top=$(cd "$(dirname "$0")/.." && pwd)
ver=$(sed -n 's/^PACKAGE_VERSION="\(.*\)"$/\1/p' "$top/dkms.conf")
src=/usr/src/oms-$ver
rules=/etc/udev/rules.d/60-oms.rules

die() { echo "dkms.sh: $*" >&2; exit 1; }
[ -n "$ver" ] || die "no PACKAGE_VERSION in $top/dkms.conf"
[ "$(id -u)" -eq 0 ] || die "run as root (dkms writes /usr/src, /var/lib/dkms and /lib/modules)"
command -v dkms >/dev/null || die "dkms is not installed: apt-get install dkms"

reload_udev() {
	# Only when a udev daemon runs; its rules are read again on the next event.
	udevadm control --reload 2>/dev/null || true
}

case ${1:-} in
install)
	kver=${2:-$(uname -r)}
	[ -d "/lib/modules/$kver/build" ] ||
		die "no headers for $kver: apt-get install linux-headers-$kver"
	# A stale registration of this version (an earlier install) goes first.
	if dkms status "oms/$ver" 2>/dev/null | grep -q .; then
		dkms remove "oms/$ver" --all >/dev/null
	fi
	rm -rf "$src"
	mkdir -p "$src/kmod" "$src/include" "$src/lib/engine"
	cp "$top/dkms.conf" "$top/Kbuild" "$src/"
	cp "$top"/kmod/Kbuild "$top"/kmod/*.c "$top"/kmod/*.h "$src/kmod/"
	rm -f "$src"/kmod/*.mod.c
	cp "$top/include/oms_uapi.h" "$top/include/oms_order.h" "$src/include/"
	cp "$top/lib/engine/wc_chan.h" "$src/lib/engine/"
	dkms add "oms/$ver"
	dkms build "oms/$ver" -k "$kver"
	dkms install "oms/$ver" -k "$kver"
	getent group oms >/dev/null || groupadd --system oms
	install -m 644 "$top/kmod/60-oms.rules" "$rules"
	reload_udev
	;;
remove)
	if dkms status "oms/$ver" 2>/dev/null | grep -q .; then
		dkms remove "oms/$ver" --all
	fi
	rm -rf "$src"
	rm -f "$rules"
	reload_udev
	;;
*)
	echo "usage: $0 install [KVER] | remove" >&2
	exit 2
	;;
esac
