#!/bin/sh
# The library's exports as TAP: liboms.so exports exactly the symbols
# lib/liboms.map names, each with its version; every function declared in
# the public headers (not static inline) is among them; liboms.a defines
# those and no other global name.
#
# usage: check-exports.sh LIBOMS_SO [LIBOMS_A]
set -u
so=${1:?usage: $0 LIBOMS_SO [LIBOMS_A]}
ar=${2:-$(dirname "$so")/liboms.a}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
echo "1..4"

sed -n 's/^[[:space:]]*\(oms_[a-z0-9_]*\);$/\1/p' lib/liboms.map | sort >"$tmp/map"
nm -D --defined-only "$so" | awk '$2 == "T" { print $3 }' >"$tmp/dyn"
sed 's/@.*//' "$tmp/dyn" | sort >"$tmp/exported"
if cmp -s "$tmp/map" "$tmp/exported"; then
	echo "ok 1 - $(wc -l <"$tmp/map") symbols exported, exactly those of lib/liboms.map"
else
	diff "$tmp/map" "$tmp/exported" | sed 's/^/# map vs .so: /'
	echo "not ok 1 - exports differ from lib/liboms.map"
fi

# The node names the soname's major: liboms.so.2 exports LIBOMS_2.x.
major=$(sed -n 's/^VERSION_MAJOR := *//p' Makefile)
if ! grep -v "@@LIBOMS_$major\." "$tmp/dyn" | grep -q .; then
	echo "ok 2 - every export carries a LIBOMS_$major.x version"
else
	grep -v "@@LIBOMS_$major\." "$tmp/dyn" | sed 's/^/# not LIBOMS_'"$major"'.x: /'
	echo "not ok 2 - exports outside LIBOMS_$major.x"
fi

# A declaration: a line (or a continuation) naming oms_x( that is not a
# static inline definition, a macro or a comment.
for h in include/*.h; do
	awk '/^static inline/ { skip = 1 }
	     /^[a-z].*[ *](oms_[a-z0-9_]+)\(/ && !skip {
		match($0, /oms_[a-z0-9_]+\(/)
		print substr($0, RSTART, RLENGTH - 1)
	     }
	     /^}/ || /;$/ { skip = 0 }' "$h"
done | sort -u >"$tmp/declared"
missing=$(comm -23 "$tmp/declared" "$tmp/map")
if [ -z "$missing" ] && [ -s "$tmp/declared" ]; then
	echo "ok 3 - all $(wc -l <"$tmp/declared") calls declared in include/ are exported"
else
	echo "$missing" | sed 's/^/# declared, not exported: /'
	echo "not ok 3 - calls declared in include/ missing from the exports"
fi

# Defined global names of the archive (functions and data), weak too.
nm -g --defined-only "$ar" | awk 'NF == 3 { print $3 }' | sort -u >"$tmp/ar"
if cmp -s "$tmp/map" "$tmp/ar"; then
	echo "ok 4 - liboms.a defines $(wc -l <"$tmp/ar") global names, exactly those of lib/liboms.map"
else
	diff "$tmp/map" "$tmp/ar" | grep '^[<>]' | head -n 20 |
		sed 's/^/# map vs liboms.a: /'
	echo "not ok 4 - liboms.a's global names differ from lib/liboms.map"
fi
