#!/bin/sh
# Stage 2 of the guest (PID 1 on the overlay of the host root): run the
# guest script with its output prefixed "TAP| ", dump dmesg prefixed
# "DMESG| ", print VM-DONE and power off.  boot.sh parses this.
. "$1"
export PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin
export HOME=/root
# /tmp stays the host's (through the overlay): the project may live there.
mount -t tmpfs tmpfs /run
mkdir -p /dev/shm /dev/pts
# devtmpfs has no /dev/fd (udev or systemd would add it): bash's <(...),
# which dkms uses, needs it.
[ -e /dev/fd ] || ln -s /proc/self/fd /dev/fd
mount -t tmpfs tmpfs /dev/shm
cd "$VM_CWD" || cd /
# kmemleak (debug kernel only): forget what boot left behind, so a scan by
# the script reports only what happened during it.
mount -t debugfs debugfs /sys/kernel/debug 2>/dev/null
[ -w /sys/kernel/debug/kmemleak ] && echo clear >/sys/kernel/debug/kmemleak
echo "VM-BEGIN"
rcfile=/run/.vm-rc
( eval "set -- $VM_ARGS"; sh "$VM_SCRIPT" "$@"; echo $? >"$rcfile" ) 2>&1 |
	sed -u 's/^/TAP| /'
rc=$(cat "$rcfile" 2>/dev/null || echo 255)
dmesg | sed 's/^/DMESG| /'
echo "VM-DONE rc=$rc"
sync
/bin/busybox poweroff -f
