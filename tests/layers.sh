#!/bin/sh
# The layers the build enforces (Makefile, LAYER_INC): a source of a layer
# that reaches past the layer's include path does not compile.  Probes are
# compiled the way the Makefile compiles the layer's files (make
# print-layer-cflags LAYER=...); the control compiles a forbidden probe
# with the flags the rest of the library gets, to show that only the
# layer's include path refuses it.  TAP.
#
#   engine  lib/engine/: its own headers and oms_order.h only
#   kvs     lib/kvs/: public headers, its own, lib/util/, ctx_users.h
#   tx      lib/tx/: public headers, its own, lib/util/, the engine and the
#           generated oms_config.h
#   emu     lib/emu/: public headers, its own, backend.h, the engine and
#           lib/util/
#   agent   lib/agent/ (the destination agent's core): public headers, its
#           own, the engine and lib/util/
#   verbs_common     lib/verbs/common/ (what both sides of the verbs
#                    backend use): public headers, its own, backend.h,
#                    lib/util/ and the agent's headers
#   verbs_initiator  lib/verbs/initiator/: the same, common's, its own and
#                    the engine's serial compare alone - not the listener's
#   verbs_listener   lib/verbs/listener/: the same, common's and its own -
#                    not the initiator's
#   verbs            lib/verbs/backend.c (the operations table over both
#                    sides): public headers, backend.h, lib/util/ and all
#                    of lib/verbs/
#   core    lib/core/ (the context layer): public headers, oms_priv.h,
#           ctx_users.h, backend.h, the engine, lib/util/ and oms_config.h
#   tests   tests/*.c of public behaviour: the public headers only (the
#           tests of internals are listed in INTERNAL_TESTS)
#
# usage: layers.sh
set -u
cc=${CC:-cc}
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
flags_engine=$(make -s print-layer-cflags LAYER=engine) &&
flags_kvs=$(make -s print-layer-cflags LAYER=kvs) &&
flags_tx=$(make -s print-layer-cflags LAYER=tx) &&
flags_emu=$(make -s print-layer-cflags LAYER=emu) &&
flags_agent=$(make -s print-layer-cflags LAYER=agent) &&
flags_verbs=$(make -s print-layer-cflags LAYER=verbs) &&
flags_verbs_common=$(make -s print-layer-cflags LAYER=verbs_common) &&
flags_verbs_initiator=$(make -s print-layer-cflags LAYER=verbs_initiator) &&
flags_verbs_listener=$(make -s print-layer-cflags LAYER=verbs_listener) &&
flags_core=$(make -s print-layer-cflags LAYER=core) &&
flags_lib=$(make -s print-layer-cflags) &&
flags_test=$(make -s print-test-cflags TEST=api_connect) &&
flags_itest=$(make -s print-test-cflags TEST=engine_rob) &&
internal=$(make -s print-internal-tests) ||
	{ echo "Bail out! make print-layer-cflags failed"; exit 1; }
echo "1..92"
n=0

# probe NAME FLAGS HEADER...: write $dir/NAME.c including HEADERs; 0 when
# it compiles with FLAGS
probe() {
	name=$1 flags=$2
	shift 2
	: >"$dir/$name.c"
	for h in "$@"; do
		printf '#include "%s"\n' "$h" >>"$dir/$name.c"
	done
	printf 'int probe(void);\nint probe(void) { return 0; }\n' >>"$dir/$name.c"
	$cc $flags -c -o "$dir/$name.o" "$dir/$name.c" >"$dir/$name.log" 2>&1
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

# refused FLAGS BASE LABEL HEADER...: for each HEADER, a probe that
# includes BASE and it must fail to compile for want of HEADER
refused() {
	rflags=$1 rbase=$2 rlabel=$3
	shift 3
	for h in "$@"; do
		r=1
		if ! probe out "$rflags" "$rbase" "$h"; then
			grep -q "$h: No such file" "$dir/out.log" && r=0
		fi
		ok $r "$rlabel$h does not compile" out
	done
}

# a layer's sources: its folder, but a folder that is a layer of its own
# (the Makefile's list)
layer_srcs() {
	make -s print-layer-srcs LAYER=$1 | tr ' ' '\n'
}

# a layer's headers: those of its sources' folders
layer_hdrs() {
	for d in $(layer_srcs $1 | xargs -n1 dirname | sort -u); do
		ls $d/*.h 2>/dev/null
	done
}

# The compiler also looks for a quoted include in the including file's own
# folder, which no -I path governs; so every quoted include of a layer's
# own files must name a file of the public headers, of the layer's
# directory of links, or of the including file's own folder - and never
# "..".
# escapes LAYER FILE...: print each include that leaves the layer
escapes() {
	el=$1
	shift
	for ef in "$@"; do
		sed -n 's/^[[:space:]]*#[[:space:]]*include[[:space:]]*"\([^"]*\)".*/\1/p' "$ef" |
		while read -r inc; do
			case $inc in *..*) echo "$ef: $inc"; continue ;; esac
			[ -e "include/$inc" ] || [ -e "build/layers/$el/$inc" ] ||
				[ -e "$(dirname "$ef")/$inc" ] || echo "$ef: $inc"
		done
	done
}

for layer in engine kvs tx emu agent verbs verbs_common verbs_initiator \
	verbs_listener core; do
	eval "flags=\$flags_$layer"
	# Every source of the layer builds inside it ...
	bad=""
	for f in $(layer_srcs $layer); do
		$cc $flags -c -o /dev/null "$f" >"$dir/src.log" 2>&1 || bad="$bad $f"
	done
	[ -z "$bad" ] && r=0 || r=1
	ok $r "$layer: every source ($(layer_srcs $layer | wc -l) files) compiles inside its layer${bad:+ (not:$bad)}" src
	# ... and the Makefile does compile them so, static, PIC and ASan.
	r=0
	for k in obj pic asan; do
		f=$(layer_srcs $layer | head -1)
		cmd=$(make -n -B "build/$k/${f%.c}.o" 2>&1 | grep -- ' -c ')
		echo "$cmd" | grep -Eq -- "-Ibuild/layers/$layer( |$)" || r=1
		echo "$cmd" | grep -Eq -- '-Ilib( |$)' && r=1
		[ $r = 0 ] || echo "# $k: $cmd"
	done
	ok $r "$layer: make builds its objects with the layer's include path, never -Ilib" none
	# ... and no quoted include reaches past it through the file's folder
	out=$(escapes $layer $(layer_srcs $layer) $(layer_hdrs $layer))
	[ -z "$out" ] && r=0 || r=1
	[ -z "$out" ] || echo "$out" | sed 's/^/# /'
	ok $r "$layer: every quoted include of its files names a file of the layer" none
done

probe inside "$flags_engine" engine/store_order.h engine/rob.h oms_order.h
ok $? "engine: may include engine/*.h and oms_order.h" inside
refused "$flags_engine" engine/store_order.h "engine: a file that includes " oms_priv.h backend.h emu/emu.h verbs/common/verbs.h oms.h

probe inside "$flags_kvs" oms.h oms_kvs.h kvs/kvs_priv.h util/clock.h util/export.h ctx_users.h
ok $? "kvs: may include the public headers, kvs/, util/ and ctx_users.h" inside
refused "$flags_kvs" oms.h "kvs: a file that includes " oms_priv.h backend.h engine/store_order.h emu/emu.h

probe inside "$flags_tx" oms_tx.h oms_uapi.h tx/tx_priv.h util/barrier.h engine/rob.h oms_config.h
ok $? "tx: may include the public headers, tx/, util/, the engine and oms_config.h" inside
refused "$flags_tx" oms_tx.h "tx: a file that includes " oms_priv.h backend.h emu/emu.h verbs/common/verbs.h

probe inside "$flags_emu" oms.h oms_emu.h backend.h emu/emu.h engine/rob.h util/export.h
ok $? "emu: may include the public headers, emu/, backend.h, the engine and util/" inside
refused "$flags_emu" backend.h "emu: a backend file that includes " oms_priv.h verbs/common/verbs.h kvs/kvs_priv.h tx/tx_priv.h

probe inside "$flags_agent" oms.h agent/agent.h agent/agent_desc.h engine/rob.h engine/hold.h util/le.h
ok $? "agent: may include the public headers, agent/, the engine and util/" inside
refused "$flags_agent" oms.h "agent: a file that includes " oms_priv.h backend.h verbs/common/verbs.h emu/emu.h

probe inside "$flags_verbs" oms.h backend.h verbs/common/verbs.h verbs/initiator/initiator.h verbs/listener/listener.h util/barrier.h
ok $? "verbs: the table may include the public headers, all of verbs/, backend.h and util/" inside
refused "$flags_verbs" backend.h "verbs: a backend file that includes " oms_priv.h emu/emu.h engine/store_order.h

probe inside "$flags_verbs_common" oms.h backend.h verbs/common/verbs.h verbs/common/wire.h util/barrier.h agent/agent.h agent/agent_desc.h
ok $? "verbs_common: may include the public headers, verbs/common/, backend.h, util/ and the agent's headers (which need no engine)" inside
refused "$flags_verbs_common" verbs/common/verbs.h "verbs_common: a common file that includes " verbs/initiator/initiator.h verbs/listener/listener.h oms_priv.h engine/store_order.h

probe inside "$flags_verbs_initiator" oms.h verbs/common/verbs.h verbs/common/wire.h verbs/initiator/initiator.h agent/agent_desc.h agent/client.h engine/serial.h util/barrier.h
ok $? "verbs_initiator: may include verbs/common/, verbs/initiator/, the agent's headers and the engine's serial compare" inside
refused "$flags_verbs_initiator" verbs/common/verbs.h "verbs_initiator: an initiator file that includes " verbs/listener/listener.h verbs/listener/listener_int.h oms_priv.h emu/emu.h engine/store_order.h

probe inside "$flags_verbs_listener" oms.h verbs/common/verbs.h verbs/common/wire.h verbs/listener/listener.h verbs/listener/listener_int.h verbs/listener/agent_int.h agent/agent.h util/barrier.h
ok $? "verbs_listener: may include verbs/common/, verbs/listener/ and the agent's headers" inside
refused "$flags_verbs_listener" verbs/common/verbs.h "verbs_listener: a listener file that includes " verbs/initiator/initiator.h oms_priv.h emu/emu.h engine/store_order.h
# The include scan sees what the folder lookup would let through: a
# listener file that climbs into the initiator's folder.
printf '#include "verbs/listener/listener.h"\n#include "../initiator/initiator.h"\n' >"$dir/esc_l.c"
out=$(escapes verbs_listener "$dir/esc_l.c")
[ "$out" = "$dir/esc_l.c: ../initiator/initiator.h" ]
ok $? "verbs_listener: the include scan refuses ../initiator/initiator.h in a listener file" none

probe inside "$flags_core" oms.h oms_priv.h backend.h ctx_users.h engine/store_order.h util/clock.h oms_config.h
ok $? "core: may include the public headers, oms_priv.h, backend.h, ctx_users.h, the engine, util/ and oms_config.h" inside
refused "$flags_core" oms_priv.h "core: a context-layer file that includes " emu/emu.h verbs/common/verbs.h kvs/kvs_priv.h tx/tx_priv.h

# Tests.  Every test outside INTERNAL_TESTS compiles with the public
# include path (so none of them reaches into lib/), and make builds them
# so; a public test that includes a lib/ header does not compile, and a
# test of internals (the control) may.
bad=""
for f in tests/*.c; do
	t=${f#tests/}
	t=${t%.c}
	case " $internal helpers ordering_model engine_model " in
	*" $t "*) continue ;;
	esac
	$cc $flags_test -c -o /dev/null "$f" >"$dir/src.log" 2>&1 || bad="$bad $t"
done
[ -z "$bad" ] && r=0 || r=1
ok $r "tests: every test of public behaviour compiles with the public headers only${bad:+ (not:$bad)}" src
cmd=$(make -n -B build/tests/api_connect build/tests-asan/api_connect 2>&1 |
	sed -e ':a' -e '/\\$/N' -e 's/\\\n//' -e 'ta' | grep -- 'tests/api_connect.c')
r=0
echo "$cmd" | grep -Eq -- '-Ilib( |$)' && r=1
[ "$(echo "$cmd" | grep -c -- '-Iinclude')" = 2 ] || r=1
[ $r = 0 ] || echo "$cmd" | sed 's/^/# /'
ok $r "tests: make builds a public test (plain and ASan) without -Ilib" none
refused "$flags_test" oms.h "tests: a public test that includes " oms_priv.h emu/emu.h engine/store_order.h
# The include scan sees what the folder lookup would let through: a
# context-layer file that includes a backend's header or climbs out.
printf '#include "oms_priv.h"\n#include "emu/emu.h"\n#include "../oms_priv.h"\n' >"$dir/esc.c"
out=$(escapes core "$dir/esc.c")
[ "$(echo "$out" | wc -l)" = 2 ] && echo "$out" | grep -q 'emu/emu.h' &&
	echo "$out" | grep -q '\.\./oms_priv.h'
ok $? "core: the include scan refuses emu/emu.h and ../oms_priv.h in a context-layer file" none
probe ctl "$flags_itest" oms.h emu/emu.h
ok $? "control: a test of internals may include emu/emu.h" ctl

# The control: without a layer's path (what the tests of internals and
# the fuzzers get) the forbidden probes compile.
probe ctl "$flags_lib" engine/store_order.h oms_priv.h
ok $? "control: the same oms_priv.h probe compiles without a layer's path" ctl
probe ctl "$flags_lib" backend.h oms_priv.h emu/emu.h verbs/common/verbs.h
ok $? "control: a backend's and the context layer's headers together compile without a layer's path" ctl
probe ctl "$flags_lib" verbs/listener/listener_int.h verbs/initiator/initiator.h
ok $? "control: the listener's and the initiator's headers together compile without a layer's path" ctl
