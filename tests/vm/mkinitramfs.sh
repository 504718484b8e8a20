#!/bin/sh
# Build the guest's initramfs: busybox-static, the virtio/9p/overlay modules
# of the installed kernel, and tests/vm/init.  Written to build/, never
# committed.
#
# usage: mkinitramfs.sh KVER OUT.cpio.gz
set -eu
kver=${1:?usage: $0 KVER OUT}
out=${2:?usage: $0 KVER OUT}
here=$(cd "$(dirname "$0")" && pwd)
mods="virtio_ring virtio virtio_pci_legacy_dev virtio_pci_modern_dev virtio_pci
netfs fscache 9pnet 9pnet_virtio 9p overlay"

bb=$(command -v busybox || true)
[ -n "$bb" ] && file -L "$bb" 2>/dev/null | grep -q 'statically linked' ||
	bb=/bin/busybox
[ -x "$bb" ] || { echo "mkinitramfs: busybox-static not installed" >&2; exit 1; }

tmp=$(mktemp -d)
trap 'rm -rf "$tmp" "$out.$$.tmp"' EXIT
mkdir -p "$tmp/bin" "$tmp/lib/modules" "$tmp/proc" "$tmp/sys" "$tmp/dev" \
	"$tmp/lower" "$tmp/upper" "$tmp/newroot"
cp "$bb" "$tmp/bin/busybox"
: >"$tmp/modules.list"
for m in $mods; do
	f=$(find "/lib/modules/$kver/kernel" -name "$m.ko*" | head -n 1)
	[ -n "$f" ] || { echo "mkinitramfs: module $m not found" >&2; exit 1; }
	cp "$f" "$tmp/lib/modules/"
	echo "$(basename "$f")" >>"$tmp/modules.list"
done
cp "$here/init" "$tmp/init"
chmod 755 "$tmp/init" "$tmp/bin/busybox"
mkdir -p "$(dirname "$out")"
# Several guests may boot at once: build aside, then rename atomically.
(cd "$tmp" && find . | cpio -o -H newc --quiet) | gzip -1 >"$out.$$.tmp"
mv "$out.$$.tmp" "$out"
