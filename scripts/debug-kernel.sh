#!/bin/sh
# Build (once) the debug guest kernel from the linux-source-6.1
# package: tinyconfig + tests/vm/debug-kernel.config (KASAN, KFENCE,
# lockdep, DEBUG_ATOMIC_SLEEP, kmemleak, hung-task detection).  The result is
# cached outside the checkout, keyed by a hash of the config fragment, the
# source package version and the compiler, so every checkout on the machine
# shares it and a changed fragment rebuilds it.
#
# usage: debug-kernel.sh [-q | --dir]
#   Builds if needed, then prints the kernel's object directory (bzImage at
#   arch/x86/boot/bzImage; oms.ko builds against it with
#   `make -C DIR M=...`).  -q: no progress messages.  --dir: only print
#   the directory the current configuration builds into (it may not exist
#   yet); DIR/.oms-built exists once the build is complete.
#
# Environment: OMS_KERNEL_CACHE (default $XDG_CACHE_HOME/liboms or
# ~/.cache/liboms), JOBS (default: nproc).
set -eu
quiet=0 dironly=0
case ${1:-} in
-q) quiet=1 ;;
--dir) dironly=1 ;;
esac
here=$(cd "$(dirname "$0")/.." && pwd)
frag=$here/tests/vm/debug-kernel.config
say() { [ $quiet -eq 1 ] || echo "debug-kernel: $*" >&2; }

tar=$(ls /usr/src/linux-source-6.1*.tar.xz 2>/dev/null | head -n 1)
[ -n "$tar" ] || [ $dironly -eq 1 ] || { echo "debug-kernel: /usr/src/linux-source-6.1.tar.xz not found (make deps)" >&2; exit 1; }
srcver=$(dpkg-query -W -f='${Version}' linux-source-6.1 2>/dev/null || echo none)
# The key is the fragment's settings, not its comments: a reworded comment
# does not cost a kernel build.
key=$( { grep -v -e '^#' -e '^[[:space:]]*$' "$frag"; echo "$srcver";
	gcc --version | head -n 1; } | sha256sum | cut -c1-16)
cache=${OMS_KERNEL_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/liboms}
src=$cache/linux-source-6.1-$srcver
obj=$cache/debug-kernel-$key
if [ $dironly -eq 1 ]; then
	echo "$obj"
	exit 0
fi

for t in flex bison bc gcc make openssl; do
	command -v $t >/dev/null ||
		{ echo "debug-kernel: $t not installed (make deps)" >&2; exit 1; }
done
[ -f /usr/include/libelf.h ] ||
	{ echo "debug-kernel: libelf-dev not installed (make deps)" >&2; exit 1; }
# The lockdown LSM selects MODULE_SIG: sign-file and extract-cert need it.
[ -f /usr/include/openssl/opensslv.h ] ||
	{ echo "debug-kernel: libssl-dev not installed (make deps)" >&2; exit 1; }

mkdir -p "$cache"

if [ -f "$obj/.oms-built" ]; then
	echo "$obj"
	exit 0
fi

# One build per machine at a time: a second checkout waits for the first.
exec 9>"$cache/.lock"
flock 9
if [ -f "$obj/.oms-built" ]; then
	echo "$obj"
	exit 0
fi

start=$(date +%s)
if [ ! -f "$src/.oms-extracted" ]; then
	say "extracting $tar"
	rm -rf "$src" "$src.tmp"
	mkdir -p "$src.tmp"
	tar -C "$src.tmp" --strip-components=1 -xJf "$tar"
	: >"$src.tmp/.oms-extracted"
	mv "$src.tmp" "$src"
fi

say "configuring $obj"
rm -rf "$obj"
mkdir -p "$obj"
jobs=${JOBS:-$(nproc)}
kmake() { make -s -C "$src" O="$obj" ARCH=x86_64 LOCALVERSION=-oms-debug "$@"; }
kmake tinyconfig >"$obj/config.log" 2>&1
"$src/scripts/kconfig/merge_config.sh" -m -O "$obj" "$obj/.config" "$frag" \
	>>"$obj/config.log" 2>&1
kmake olddefconfig >>"$obj/config.log" 2>&1

# Every line of the fragment must have survived olddefconfig: a detector
# that silently fell out (a missing dependency) would make the run vacuous.
bad=0
while IFS= read -r line; do
	case $line in
	CONFIG_*=*) want=$line ;;
	"# CONFIG_"*" is not set") want=$line ;;
	*) continue ;;
	esac
	opt=$(printf %s "$want" | sed -E 's/^# (CONFIG_[A-Z0-9_]+) is not set$/\1/; s/=.*//')
	have=$(grep -E "^(# )?$opt[= ]" "$obj/.config" || echo "# $opt is not set")
	if [ "$have" != "$want" ]; then
		echo "debug-kernel: $want did not take (have: $have)" >&2
		bad=1
	fi
done <"$frag"
[ $bad -eq 0 ] || exit 1

say "building with $jobs jobs (a cold build takes tens of minutes)"
kmake -j"$jobs" bzImage modules_prepare >"$obj/build.log" 2>&1 ||
	{ tail -n 30 "$obj/build.log" >&2; exit 1; }
# Module.symvers for an all-built-in kernel: produced by `make modules`.
kmake -j"$jobs" modules >>"$obj/build.log" 2>&1 ||
	{ tail -n 30 "$obj/build.log" >&2; exit 1; }
echo $(( $(date +%s) - start )) >"$obj/build-seconds"
: >"$obj/.oms-built"
# Older configurations' builds are a gigabyte each: keep only this one.
for d in "$cache"/debug-kernel-*; do
	[ "$d" = "$obj" ] || rm -rf "$d"
done
say "built in $(cat "$obj/build-seconds") s"
echo "$obj"
