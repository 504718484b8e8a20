#!/bin/sh
# Install the Debian packages liboms needs, or print the command that would.
#
# Run as root it installs what is missing (apt-get update first, once); run as
# anyone else it prints the exact apt-get line and exits non-zero if something
# is missing, so `make` fails early with a clear message instead of half-way.
#
# usage: deps.sh [demo|check]
#   demo: what `make` and `make demo` need (a compiler, the rdma-core and
#   libnuma headers, pandoc for the man pages, gnuplot for the pictures);
#   check (the default): everything the tests need besides (kernels, QEMU,
#   the kernel source, clang's fuzzer, dkms, perftest).
set -eu
what=${1:-check}
case $what in
demo | check) ;;
*) echo "usage: deps.sh [demo|check]" >&2; exit 2 ;;
esac

# make and make demo
DEMO_PKGS="
build-essential
gnuplot-nox
groff-base
ibverbs-providers
libibverbs-dev
libnuma-dev
librdmacm-dev
pandoc
pkg-config
rdma-core
"

# linux-image/headers-amd64 are Debian 12's 6.1; the 6.12 pair is the other
# kernel Debian 12 ships, and oms.ko's guest suite runs on both.  flex,
# bison, bc, libelf-dev, libssl-dev and openssl build the debug guest kernel
# from linux-source-6.1 (its lockdown LSM selects module signing, whose
# tools need OpenSSL).
# pkg-config and file: make check builds an example through liboms.pc and
# checks how binaries are linked.  dkms and udev: the guest suite installs
# the packaged module with dkms and checks the udev rule for /dev/oms.
# pandoc converts man/*.md into the man pages at build time; groff-base
# renders them for make check.  iproute2: the guests, which run on the
# host's root file system, set up their links and Soft-RoCE devices with
# ip and rdma.
PKGS="
bc
bison
build-essential
busybox-static
clang
dkms
file
flex
gnuplot-nox
groff-base
ibverbs-providers
ibverbs-utils
iproute2
kmod
libclang-rt-14-dev
libelf-dev
libssl-dev
libibverbs-dev
libnuma-dev
librdmacm-dev
linux-headers-amd64
linux-headers-6.12-amd64
linux-image-amd64
linux-image-6.12-amd64
linux-source-6.1
openssl
pandoc
perftest
pkg-config
qemu-system-x86
rdma-core
rdmacm-utils
udev
xz-utils
"

[ "$what" = demo ] && PKGS=$DEMO_PKGS

missing=""
for p in $PKGS; do
	if ! dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed"; then
		missing="$missing $p"
	fi
done

[ -z "$missing" ] && exit 0

cmd="apt-get install -y --no-install-recommends$missing"
if [ "$(id -u)" -ne 0 ]; then
	echo "liboms: missing Debian packages. Run as root:" >&2
	echo "  apt-get update && $cmd" >&2
	exit 1
fi
echo "liboms: installing:$missing" >&2
export DEBIAN_FRONTEND=noninteractive
apt-get update -qq
# shellcheck disable=SC2086
apt-get install -y -qq --no-install-recommends $missing >/dev/null
