#!/bin/sh
# Install into a DESTDIR tree and build apps/oms_info.c against it the way a
# user does, through pkg-config: linked dynamically, then fully statically
# (gcc -static, pkg-config --static: liboms.a and its Libs.private; rdma-core
# is not among them, the verbs backend loads it at run time), and run both;
# then examples/hello.c, the README's first program, the same way; the
# installed programs load the installed liboms.so; a program with names of
# its own that are the library's internal ones links statically.  TAP.
#
# usage: check-install.sh
set -u
cc=${CC:-cc}
dest=$(mktemp -d)
trap 'rm -rf "$dest"' EXIT
prefix=/usr/local
echo "1..7"

# the benchmarks of the engine's and the agent's loops go in as *_bench
internals=$(sed -n 's/^BENCH_OF_INTERNALS := *//p' Makefile)
benches=$(cd bench && ls *.c | sed 's/\.c$//' | while read -r b; do
	case " $internals " in
	*" $b "*) echo "${b}_bench" ;;
	*) echo "$b" ;;
	esac
done)
if make -s install DESTDIR="$dest" PREFIX=$prefix >"$dest/install.log" 2>&1 &&
   [ -f "$dest$prefix/lib/pkgconfig/liboms.pc" ] &&
   (for b in $benches; do [ -x "$dest$prefix/bin/oms_$b" ] || exit 1; done) &&
   LD_LIBRARY_PATH="$dest$prefix/lib" "$dest$prefix/bin/oms_kvs_get" --help >/dev/null; then
	echo "ok 1 - make install DESTDIR=: library, headers, liboms.pc, the benchmarks as oms_*"
else
	sed 's/^/# /' "$dest/install.log"
	echo "not ok 1 - make install DESTDIR="
fi

# pkg-config answers for the tree as if it were installed at / (a sysroot):
# liboms's paths get the DESTDIR prefix, system ones stay as they are.
export PKG_CONFIG_PATH="$dest$prefix/lib/pkgconfig"
export PKG_CONFIG_SYSROOT_DIR="$dest"
n=1
for how in dynamic static; do
	n=$((n + 1))
	static=""
	[ $how = static ] && static=--static
	# shellcheck disable=SC2086
	flags=$(pkg-config --cflags liboms) &&
		libs=$(pkg-config $static --libs liboms) ||
		{ echo "not ok $n - pkg-config $static liboms"; continue; }
	bin=$dest/oms_info-$how
	# shellcheck disable=SC2086
	if $cc $static -o "$bin" apps/oms_info.c $flags $libs >"$dest/cc.log" 2>&1 &&
	   LD_LIBRARY_PATH="$dest$prefix/lib" "$bin" >"$dest/run.log" 2>&1; then
		if [ $how = static ]; then
			file "$bin" | grep -q 'statically linked'
		else
			LD_LIBRARY_PATH="$dest$prefix/lib" ldd "$bin" | grep -q "$dest.*liboms.so"
		fi ||
			{ echo "not ok $n - apps/oms_info ($how) is not linked as asked"; continue; }
		echo "ok $n - apps/oms_info built through pkg-config ($how) and ran"
	else
		sed 's/^/# /' "$dest/cc.log" "$dest/run.log" | head -n 20
		echo "not ok $n - apps/oms_info through pkg-config ($how)"
	fi
done

# The README's quickstart: the hello example through pkg-config.
flags=$(pkg-config --cflags --libs liboms)
# shellcheck disable=SC2086
if $cc -o "$dest/hello" examples/hello.c $flags >"$dest/cc.log" 2>&1 &&
   LD_LIBRARY_PATH="$dest$prefix/lib" "$dest/hello" >"$dest/run.log" 2>&1 &&
   grep -q '^flag 1, data "hello, ordered world"$' "$dest/run.log"; then
	echo "ok 4 - examples/hello built through pkg-config and ran: $(cat "$dest/run.log")"
else
	sed 's/^/# /' "$dest/cc.log" "$dest/run.log" | head -n 20
	echo "not ok 4 - examples/hello through pkg-config"
fi

# Every installed program but the two that measure internals loads the
# installed liboms.so, the library a user's program loads.
bad=""
for p in "$dest$prefix"/bin/*; do
	case $p in *_bench) continue ;; esac
	LD_LIBRARY_PATH="$dest$prefix/lib" ldd "$p" 2>&1 |
		grep -q "liboms.so.[0-9]* => $dest$prefix/lib/" || bad="$bad ${p##*/}"
done
if [ -z "$bad" ] && ls "$dest$prefix"/bin/oms_kvs_get >/dev/null 2>&1; then
	echo "ok 5 - the installed programs load the installed liboms.so"
else
	echo "not ok 5 - not linked with the installed liboms.so:$bad"
fi

# liboms.a defines the exported calls only: a program may define names
# the library uses inside (the verbs backend's vb_post, the emulated
# device's emu_now) and still link it statically.
cat >"$dest/own_names.c" <<'EOF2'
#include <stdio.h>
#include <oms.h>

int vb_post(void);
unsigned long emu_now(void);

int vb_post(void) { return 7; }
unsigned long emu_now(void) { return 42; }

int main(void)
{
	struct oms_ctx *ctx;
	int err = oms_ctx_create(NULL, &ctx);

	if (err) {
		fprintf(stderr, "oms_ctx_create: %d\n", err);
		return 1;
	}
	printf("%s %d %lu\n", oms_version(), vb_post(), emu_now());
	return oms_ctx_destroy(ctx) ? 1 : 0;
}
EOF2
flags=$(pkg-config --cflags liboms) && libs=$(pkg-config --static --libs liboms)
# shellcheck disable=SC2086
if $cc -static -o "$dest/own_names" "$dest/own_names.c" $flags $libs \
	>"$dest/cc.log" 2>&1 && "$dest/own_names" >"$dest/run.log" 2>&1 &&
   grep -q ' 7 42$' "$dest/run.log"; then
	echo "ok 6 - a program defining vb_post and emu_now links liboms.a statically and runs"
else
	sed 's/^/# /' "$dest/cc.log" "$dest/run.log" | head -n 20
	echo "not ok 6 - a program defining vb_post and emu_now against liboms.a"
fi

# make uninstall takes away exactly what make install put there.
if make -s uninstall DESTDIR="$dest" PREFIX=$prefix >"$dest/uninstall.log" 2>&1; then
	left=$(find "$dest$prefix" -type f -o -type l)
	if [ -z "$left" ]; then
		echo "ok 7 - make uninstall DESTDIR=: nothing installed is left"
	else
		echo "$left" | sed 's/^/# left: /' | head -n 20
		echo "not ok 7 - make uninstall left files"
	fi
else
	sed 's/^/# /' "$dest/uninstall.log"
	echo "not ok 7 - make uninstall DESTDIR="
fi
