#!/bin/sh
# The installed Debian kernels a guest can boot and oms.ko can be built for:
# each release with an image in /boot, modules in /lib/modules and a build
# directory (the headers package).  One per line, oldest first.  The first
# is the default for guests that need only one kernel (boot.sh).
#
# usage: kernels.sh
for d in /lib/modules/*; do
	k=$(basename "$d")
	[ -f "/boot/vmlinuz-$k" ] && [ -d "$d/kernel" ] && [ -d "$d/build" ] &&
		echo "$k"
done 2>/dev/null | sort -V
