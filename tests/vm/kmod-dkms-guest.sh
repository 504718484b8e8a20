#!/bin/sh
# Runs inside a guest booted on an installed Debian kernel
# (run-kmod-dkms.sh): the packaged module as a user installs it.  scripts/dkms.sh install (dkms add,
# build and install for the running kernel, the "oms" group, the udev
# rule), modprobe from /lib/modules/.../updates/dkms, /dev/oms as udev makes
# it, a non-root member of the group storing through it while a non-member
# is refused, then scripts/dkms.sh remove leaves nothing behind.  The
# guest's root is a tmpfs overlay: nothing reaches the host.
#
# usage: kmod-dkms-guest.sh TESTDIR     prints TAP
set -u
dir=${1:?usage: $0 TESTDIR}
bdf=""
for d in /sys/bus/pci/devices/*; do
	[ "$(cat "$d/vendor")" = 0x1af4 ] && [ "$(cat "$d/device")" = 0x1110 ] &&
		bdf=$(basename "$d")
done
top=$(cd "$(dirname "$0")/../.." && pwd)
kver=$(uname -r)
ver=$(sed -n 's/^PACKAGE_VERSION="\(.*\)"$/\1/p' "$top/dkms.conf")
log=/tmp/dkms.log
tap_prefix="dkms: "
. "$top/tests/vm/tap.sh"
show() { tail -n "${2:-15}" "$1" | sed 's/^/#   /'; }

if ! command -v dkms >/dev/null; then
	echo "ok 1 - dkms # SKIP dkms not installed (make deps)"
	exit 0
fi

t0=$(date +%s)
sh "$top/scripts/dkms.sh" install >$log 2>&1
rc=$?
[ $rc -eq 0 ] || show $log 30
tap $rc "scripts/dkms.sh install: add, build and install oms/$ver for $kver ($(($(date +%s) - t0)) s)"

path=$(modinfo -k "$kver" -n oms 2>/dev/null)
mver=$(modinfo -k "$kver" -F version oms 2>/dev/null)
magic=$(modinfo -k "$kver" -F vermagic oms 2>/dev/null | cut -d' ' -f1)
echo "# $path: version $mver, vermagic $magic"
case $path in */updates/dkms/oms.ko*) ok=0 ;; *) ok=1 ;; esac
[ $ok -eq 0 ] && [ "$mver" = "$ver" ] && [ "$magic" = "$kver" ]
tap $? "modinfo finds oms.ko $ver for $kver under updates/dkms"

# udev applies the rule when the module creates the device.
mkdir -p /run/udev
/lib/systemd/systemd-udevd --daemon >/dev/null 2>&1
udev=$?
params=""
[ -n "$bdf" ] && params="pci=$bdf bar=2"
# shellcheck disable=SC2086
modprobe oms $params
tap $? "modprobe oms $params"
[ $udev -eq 0 ] && udevadm settle -t 60
perm=$(stat -c '%G %a' /dev/oms 2>/dev/null)
[ $udev -eq 0 ] && [ "$perm" = "oms 660" ]
tap $? "udev rule: /dev/oms is group oms, mode 0660 (got '$perm')"

# Drop root: uid nobody, no capabilities, then with and without the group.
gid=$(getent group oms | cut -d: -f3)
as_nobody() {	# as_nobody GROUPS CMD...
	g=$1
	shift
	setpriv --reuid=65534 --regid=65534 --groups="$g" --inh-caps=-all \
		--bounding-set=-all "$@"
}
as_nobody "$gid" "$dir/mmio_sweep" -t 1 -r 1 >$log 2>&1
rc=$?
show $log 3
[ $rc -eq 0 ] && grep -q '^window: ' $log
tap $? "a non-root member of group oms opens /dev/oms and runs mmio_sweep"
as_nobody 65534 sh -c 'exec 3<>/dev/oms' 2>$log
rc=$?
[ -c /dev/oms ] && [ $rc -ne 0 ] && grep -qi 'permission denied' $log
tap $? "a non-root user outside group oms is refused (EACCES)"

modprobe -r oms
tap $? "modprobe -r oms"
udevadm control --exit 2>/dev/null

sh "$top/scripts/dkms.sh" remove >$log 2>&1
rc=$?
[ $rc -eq 0 ] || show $log
left=""
[ -n "$(find "/lib/modules/$kver" -name 'oms.ko*')" ] && left="$left module"
modinfo -k "$kver" -n oms >/dev/null 2>&1 && left="$left modules.dep"
[ -e "/usr/src/oms-$ver" ] && left="$left /usr/src/oms-$ver"
[ -e /etc/udev/rules.d/60-oms.rules ] && left="$left udev-rule"
[ -n "$(dkms status oms 2>/dev/null)" ] && left="$left dkms-status"
[ $rc -eq 0 ] && [ -z "$left" ]
tap $? "scripts/dkms.sh remove leaves nothing behind${left:+ (left:$left)}"
exit $failed
