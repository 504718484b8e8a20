#!/bin/sh
# Build the guest's initramfs: busybox-static, the virtio/9p/overlay modules
# of the installed kernel, and tests/vm/init.  Written to build/, never
# committed.
#
# usage: mkinitramfs.sh KVER OUT.cpio.gz
#   KVER "-": no modules (a kernel with those drivers built in).
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
[ "$kver" = - ] && mods=""
for m in $mods; do
	f=$(find "/lib/modules/$kver/kernel" -name "$m.ko*" | head -n 1)
	if [ -z "$f" ]; then
		# Built in on this kernel (6.12: virtio; fscache is part of netfs).
		grep -q "/$m.ko\$" "/lib/modules/$kver/modules.builtin" 2>/dev/null && continue
		case $m in fscache) continue ;; esac
		echo "mkinitramfs: module $m not found for $kver" >&2
		exit 1
	fi
	# busybox insmod takes plain .ko files; Debian's 6.12 ships .ko.xz.
	case $f in
	*.ko.xz) xz -dc "$f" >"$tmp/lib/modules/$m.ko" ;;
	*.ko.zst) zstd -qdc "$f" >"$tmp/lib/modules/$m.ko" ;;
	*) cp "$f" "$tmp/lib/modules/$m.ko" ;;
	esac
	echo "$m.ko" >>"$tmp/modules.list"
done
cp "$here/init" "$tmp/init"
chmod 755 "$tmp/init" "$tmp/bin/busybox"
mkdir -p "$(dirname "$out")"
# Several guests may boot at once: build aside, then rename atomically.
(cd "$tmp" && find . | cpio -o -H newc --quiet) | gzip -1 >"$out.$$.tmp"
mv "$out.$$.tmp" "$out"
