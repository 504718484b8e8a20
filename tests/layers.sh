#!/bin/sh
# The layers the build enforces (Makefile, LAYER_INC): an engine source
# that reaches past the engine does not compile.  Each probe is compiled
# the way the Makefile compiles lib/engine/*.c (make print-layer-cflags
# LAYER=engine); the control compiles the same probe with the flags every
# other library object gets, to show that only the layer's include path
# refuses it.  TAP.
#
# usage: layers.sh
set -u
cc=${CC:-cc}
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
engine=$(make -s print-layer-cflags LAYER=engine) &&
lib=$(make -s print-layer-cflags) ||
	{ echo "Bail out! make print-layer-cflags failed"; exit 1; }
echo "1..9"
n=0

# compiles NAME FLAGS: 0 when $dir/NAME.c compiles with FLAGS
compiles() {
	$cc $2 -c -o "$dir/$1.o" "$dir/$1.c" >"$dir/$1.log" 2>&1
}

ok() {
	n=$((n + 1))
	if [ "$1" = 0 ]; then
		echo "ok $n - $2"
	else
		sed 's/^/# /' "$dir/$3.log" 2>/dev/null
		echo "not ok $n - $2"
	fi
}

# Every engine source builds inside its layer (what the Makefile does).
bad=""
for f in lib/engine/*.c; do
	$cc $engine -c -o /dev/null "$f" >"$dir/engine.log" 2>&1 || bad="$bad $f"
done
[ -z "$bad" ] && r=0 || r=1
ok $r "every lib/engine/*.c compiles with only the engine's headers${bad:+ (not:$bad)}" engine

# ... and the Makefile does compile them so: for the static, PIC and ASan
# objects alike, the engine's include path and not lib/ nor include/.
r=0
for k in obj pic asan; do
	cmd=$(make -n -B "build/$k/lib/engine/rob.o" 2>&1 | grep -- ' -c ')
	echo "$cmd" | grep -q -- '-Ibuild/layers/engine' || r=1
	echo "$cmd" | grep -Eq -- '-I(lib|include)( |$)' && r=1
	[ $r = 0 ] || echo "# $k: $cmd"
done
ok $r "make builds lib/engine objects (static, PIC, ASan) with the engine's include path only" none

# The engine's own headers and the store classes are in the layer.
printf '#include "engine/store_order.h"\n#include "engine/rob.h"\n#include "oms_order.h"\nint probe(void);\nint probe(void) { return OMS_STORE_STRONG + OMS_SO_MAX_CHANNELS; }\n' \
	>"$dir/inside.c"
compiles inside "$engine"; ok $? "an engine file may include engine/*.h and oms_order.h" inside

# What lies outside the engine does not compile there: the context layer,
# the backend interface, the backends, the public API.
for h in oms_priv.h backend.h emu/emu.h verbs/verbs.h oms.h; do
	printf '#include "engine/store_order.h"\n#include "%s"\nint probe(void);\nint probe(void) { return 0; }\n' "$h" \
		>"$dir/out.c"
	r=1
	if ! compiles out "$engine" && grep -q "$h: No such file" "$dir/out.log"; then
		r=0
	fi
	ok $r "an engine file that includes $h does not compile" out
done

# The control: the library's general flags take the probe that includes
# oms_priv.h, so the refusal above is the layer's, not a broken probe.
printf '#include "engine/store_order.h"\n#include "oms_priv.h"\nint probe(void);\nint probe(void) { return 0; }\n' \
	>"$dir/ctl.c"
compiles ctl "$lib"; ok $? "control: the same oms_priv.h probe compiles with the library's general flags" ctl
