# liboms: ordered remote memory operations.  See README.md.
#
#   make          library, apps, benchmarks, examples, man pages
#   make tests    the test programs (plain and ASan/UBSan) and fuzzers
#   make check    every test at quick bounds, TAP, ending in "N passed, N failed"
#   make check-full  the same tests at full bounds, on every kernel (CI)
#   make demo     the main job
#   make kmod     oms.ko against the installed Debian kernel headers
#   make install  PREFIX=/usr/local DESTDIR=   (make uninstall: the same files)
#
# Sources are discovered per directory: one test per file in tests/, one
# program per file in apps/ and bench/ (oms_probe's parts: apps/probe/).
# mk/*.mk add areas with their own rules (the kernel module and its guest
# tests); they may append commands to CHECK_CMDS, each of which must print
# TAP.  scripts/run-tests.sh runs them
# CHECK_JOBS at a time (default 2): commands never share a file.

VERSION_MAJOR := 2
VERSION := $(VERSION_MAJOR).2.0
PREFIX ?= /usr/local
LIBDIR ?= $(PREFIX)/lib
INCDIR ?= $(PREFIX)/include
BINDIR ?= $(PREFIX)/bin
B := build

CC ?= cc
CLANG ?= clang
CFLAGS ?= -O2 -g
WARN := -Wall -Wextra -Werror -Wshadow -Wstrict-prototypes -Wmissing-prototypes
LIB_CFLAGS := -std=gnu11 -D_GNU_SOURCE -fvisibility=hidden -pthread $(WARN)
BASE_CFLAGS := $(LIB_CFLAGS) -Iinclude -Ilib -I$(B)
ASAN_FLAGS := -O1 -g -fsanitize=address,undefined -fno-omit-frame-pointer \
	-fno-sanitize-recover=all
# liboms itself needs only these: rdma-core and libnuma are loaded at run
# time by the verbs backend (lib/verbs/common/rdma_lib.h), so the library,
# the apps and the benchmarks run where they are not installed.  Tests that
# call verbs or libnuma themselves link LIBS.
LIB_LDLIBS := -pthread -ldl
LIBS := $(LIB_LDLIBS) -libverbs -lrdmacm -lnuma
HARNESS := $(B)/kselftest/kselftest_harness.h
TEST_CFLAGS := -I$(B)/kselftest -Itests -Wno-unused-parameter -Wno-sign-compare \
	-Wno-missing-prototypes

ifeq ($(V),1)
Q :=
msg = @true
else
Q := @
msg = @printf '  %-7s %s\n' "$(1)" "$(2)";
endif

LIB_SRCS := $(sort $(wildcard lib/*/*.c lib/*/*/*.c))
LIB_OBJS := $(LIB_SRCS:%.c=$(B)/obj/%.o)
LIB_PIC_OBJS := $(LIB_SRCS:%.c=$(B)/pic/%.o)
LIB_ASAN_OBJS := $(LIB_SRCS:%.c=$(B)/asan/%.o)
# What the machine's headers offer (scripts/config-header.sh), checked on
# every make and rewritten only when it changes: every object depends on it.
CONFIG_H := $(B)/oms_config.h
LIB_HDRS := $(wildcard include/*.h lib/*.h lib/*/*.h lib/*/*/*.h) $(CONFIG_H)

TEST_SRCS := $(sort $(filter-out tests/helpers.c tests/lab.c tests/ordering_model.c \
	tests/engine_model.c,$(wildcard tests/*.c)))
TEST_SHARED := tests/helpers.c tests/lab.c tests/ordering_model.c
TEST_SHARED_HDRS := tests/harness.h tests/helpers.h tests/lab.h tests/ordering_model.h \
	tests/engine_model.h tests/agent_seal.h

# Tests of internals: they include lib/ headers (each says so in its first
# comment) and link the engine's model fabrics (tests/engine_model.c).
# Every other test checks public behaviour and is compiled with the
# public headers only (-Iinclude, no -Ilib): a public test that reaches
# into the library does not compile (tests/layers.sh shows it).
INTERNAL_TESTS := emu_bad_input emu_device_order emu_region_slot_reuse \
	engine_explorer engine_explorer_mixed engine_fabric engine_rlsq \
	engine_dest_stream engine_rob engine_store_order engine_wc_chan \
	kvs_remote_write \
	litmus_destination litmus_emu_completion litmus_emu_mmio litmus_emu_reads \
	litmus_fence_quiet litmus_responder \
	litmus_store_classes tx_mlx5_wqe tx_nic tx_queue verbs_ack_timeout \
	verbs_private_data agent_client agent_desc agent_loop agent_hold agent_turns \
	crc32c \
	engine_stream verbs_carrier
TEST_INC_PUBLIC := -Iinclude
TEST_INC_INTERNAL := -Iinclude -Ilib -I$(B)
is_internal = $(filter $(INTERNAL_TESTS),$(1))
test_inc = $(if $(call is_internal,$(1)),$(TEST_INC_INTERNAL),$(TEST_INC_PUBLIC))
test_srcs = $(TEST_SHARED) $(if $(call is_internal,$(1)),tests/engine_model.c)
TESTS := $(TEST_SRCS:tests/%.c=$(B)/tests/%)
TESTS_ASAN := $(TEST_SRCS:tests/%.c=$(B)/tests-asan/%)
BENCH_SRCS := $(sort $(wildcard bench/*.c))
BENCHES := $(BENCH_SRCS:bench/%.c=$(B)/bench/%)
EXAMPLE_SRCS := $(sort $(wildcard examples/*.c))
EXAMPLES := $(EXAMPLE_SRCS:examples/%.c=$(B)/examples/%)
APP_SRCS := $(sort $(wildcard apps/*.c))
APPS := $(APP_SRCS:apps/%.c=$(B)/apps/%)
FUZZ_SRCS := $(sort $(wildcard tests/fuzz/*.c))
FUZZERS := $(FUZZ_SRCS:tests/fuzz/%.c=$(B)/fuzz/%)
# The tier of check-run: quick (make check) or full (make check-full).  One
# suite, two sets of bounds: every test program and guest suite runs in
# both; quick divides the instances per forbidden outcome by 100
# (tests/helpers.h, OMS_CHECK_TIER), runs the explorers' short tiers, the
# fuzzers for seconds and the guest suites on the default kernel only
# (HACKING.md, "Two tiers").
CHECK_TIER ?= full
ifeq ($(CHECK_TIER),quick)
FUZZ_SECONDS ?= 10
else
FUZZ_SECONDS ?= 60
endif

# liboms.a defines the exported calls only, as liboms.so does (a user's
# program may have its own vb_post or emu_now); liboms-internal.a keeps
# every name, for the tests of internals and the benchmarks of the
# engine and the agent, which call what is not exported.
STATIC := $(B)/liboms.a
INTERNAL := $(B)/liboms-internal.a
SHARED := $(B)/liboms.so.$(VERSION)
SONAME := liboms.so.$(VERSION_MAJOR)

# Commands run by `make check`; each prints TAP.  mk/*.mk may append.
CHECK_CMDS :=

.PHONY: all lib print-layer-cflags print-layer-srcs print-test-cflags print-internal-tests tests check check-full check-run demo demo-run deps install uninstall clean fuzz \
	figures bench-compare \
	headers-check
all: lib $(APPS) $(BENCHES) $(EXAMPLES)

lib: $(STATIC) $(INTERNAL) $(SHARED)

deps:
	$(Q)sh scripts/deps.sh

$(CONFIG_H): FORCE
	$(Q)sh scripts/config-header.sh "$(CC)" $@ $(VERSION)

.PHONY: FORCE
FORCE:

$(HARNESS):
	$(call msg,EXTRACT,kselftest)
	$(Q)sh scripts/kselftest-headers.sh $(B)/kselftest

# Layers the build enforces.  A library object sees the include path of
# its layer (LAYER_INC), not all of lib/, from a directory of links made
# for the layer:
#   engine  its own headers and the store-class numbering (oms_order.h);
#   kvs     the public headers, its own, lib/util/ and ctx_users.h (the
#           one door into the context layer) - it is built over the API;
#   tx      MMIO transmit: the public headers, its own, lib/util/, the
#           engine (the transmit receiver's reorder buffer) and the generated
#           oms_config.h - no context layer, no backend.
#   emu     the emulated device: the public headers, its own, the backend
#           interface (backend.h), the engine and lib/util/;
#   agent   the destination agent's core (lib/agent/): the public headers,
#           its own, the engine (reorder buffer, response hold) and
#           lib/util/ - no verbs, no backend, no context layer;
#   verbs   the verbs backend, in four rooms, each with the public
#           headers, backend.h and lib/util/ - a backend sees a context
#           only through backend.h's view, never the context layer's
#           structs (oms_priv.h):
#           verbs_common (lib/verbs/common/: the device, QP set-up, the
#             wire format, peers) with its own and the agent's headers;
#           verbs_initiator (lib/verbs/initiator/) with common's, its own,
#             the agent's headers and the engine's serial-number compare
#             (engine/serial.h, nothing else of the engine);
#           verbs_listener (lib/verbs/listener/) with common's, its own
#             and the agent's headers - not the initiator's;
#           verbs (lib/verbs/backend.c, the operations table over both
#             sides) with all of lib/verbs/;
#   core    the context layer (lib/core/): the public headers, oms_priv.h,
#           ctx_users.h, backend.h, the engine, lib/util/ and oms_config.h
#           - it reaches a backend only through its operations table.
# So an engine file that includes oms_priv.h, a backend or oms.h, a KVS
# file that includes oms_priv.h or the engine, a transmit file or a
# backend that includes oms_priv.h or another backend, a verbs listener
# file that includes the initiator's headers (or the reverse), or a
# context-layer file that includes a backend's headers, does not compile.
# tests/layers.sh shows it (make print-layer-cflags LAYER=<layer>).  Only
# the tests of internals and the fuzzers see all of lib/.
LAYER_INC := -Iinclude -Ilib -I$(B)
# A layer's sources: those under its folder (lib/<layer>/, or
# LAYER_PATH_<layer>), but a folder of its own layer's (LAYER_SUBS_<layer>).
layer_path = $(or $(LAYER_PATH_$(1)),$(1))
layer_srcs = $(filter-out $(foreach d,$(LAYER_SUBS_$(1)),lib/$(d)/%), \
	$(filter lib/$(call layer_path,$(1))/%,$(LIB_SRCS)))
layer_objs = $(foreach k,obj pic asan,$(patsubst %.c,$(B)/$(k)/%.o, \
	$(call layer_srcs,$(1))))
LAYER_PATH_verbs_common := verbs/common
LAYER_PATH_verbs_initiator := verbs/initiator
LAYER_PATH_verbs_listener := verbs/listener
LAYER_SUBS_verbs := verbs/common verbs/initiator verbs/listener
# Per layer: its include path, and the link its directory is made by.
LAYER_INC_engine := -I$(B)/layers/engine
LAYER_INC_kvs := -Iinclude -I$(B)/layers/kvs
LAYER_INC_tx := -Iinclude -I$(B)/layers/tx
LAYER_INC_emu := -Iinclude -I$(B)/layers/emu
LAYER_INC_agent := -Iinclude -I$(B)/layers/agent
LAYER_INC_verbs := -Iinclude -I$(B)/layers/verbs
LAYER_INC_verbs_common := -Iinclude -I$(B)/layers/verbs_common
LAYER_INC_verbs_initiator := -Iinclude -I$(B)/layers/verbs_initiator
LAYER_INC_verbs_listener := -Iinclude -I$(B)/layers/verbs_listener
LAYER_INC_core := -Iinclude -I$(B)/layers/core
LAYER_LINK_engine := $(B)/layers/engine/oms_order.h
LAYER_LINK_kvs := $(B)/layers/kvs/ctx_users.h
LAYER_LINK_tx := $(B)/layers/tx/oms_config.h
LAYER_LINK_emu := $(B)/layers/emu/backend.h
LAYER_LINK_agent := $(B)/layers/agent/oms_order.h
LAYER_LINK_verbs := $(B)/layers/verbs/backend.h
LAYER_LINK_verbs_common := $(B)/layers/verbs_common/backend.h
LAYER_LINK_verbs_initiator := $(B)/layers/verbs_initiator/backend.h
LAYER_LINK_verbs_listener := $(B)/layers/verbs_listener/backend.h
LAYER_LINK_core := $(B)/layers/core/oms_config.h
LAYERS := engine kvs tx emu agent verbs verbs_common verbs_initiator \
	verbs_listener core
LAYER_LINKS := $(foreach l,$(LAYERS),$(LAYER_LINK_$(l)))
$(foreach l,$(LAYERS),$(eval $(call layer_objs,$(l)): LAYER_INC := $(LAYER_INC_$(l))))
$(foreach l,$(LAYERS),$(eval $(call layer_objs,$(l)): | $(LAYER_LINK_$(l))))

# A layer's directory: links to the lib/ folders and headers it may see
# (names under lib/, a single header among them when a layer may see
# only that one of a folder), and the rule's target, a link to its first
# prerequisite.  Made again when the Makefile changes, so that a layer
# given a new folder (or losing one) sees it so in a tree built before.
layer_dir = $(Q)rm -rf $(@D) && mkdir -p $(@D) && for d in $(1); do \
		mkdir -p $(@D)/$$(dirname $$d) && \
		ln -sfn $(CURDIR)/lib/$$d $(@D)/$$d || exit 1; done && \
	ln -sf $(CURDIR)/$< $@

$(B)/layers/engine/oms_order.h: include/oms_order.h Makefile
	$(call layer_dir,engine)
$(B)/layers/kvs/ctx_users.h: lib/ctx_users.h Makefile
	$(call layer_dir,kvs util)
$(B)/layers/tx/oms_config.h: $(CONFIG_H) Makefile
	$(call layer_dir,tx util engine)
$(B)/layers/emu/backend.h: lib/backend.h Makefile
	$(call layer_dir,emu engine util)
$(B)/layers/agent/oms_order.h: include/oms_order.h Makefile
	$(call layer_dir,agent engine util)
$(B)/layers/verbs/backend.h: lib/backend.h Makefile
	$(call layer_dir,verbs util)
$(B)/layers/verbs_common/backend.h: lib/backend.h Makefile
	$(call layer_dir,verbs/common util agent)
$(B)/layers/verbs_initiator/backend.h: lib/backend.h Makefile
	$(call layer_dir,verbs/common verbs/initiator util agent engine/serial.h)
$(B)/layers/verbs_listener/backend.h: lib/backend.h Makefile
	$(call layer_dir,verbs/common verbs/listener util agent)
$(B)/layers/core/oms_config.h: $(CONFIG_H) Makefile
	$(call layer_dir,engine util backend.h oms_priv.h ctx_users.h)

print-layer-cflags: $(LAYER_LINKS)
	@echo $(LIB_CFLAGS) $(or $(LAYER_INC_$(LAYER)),$(LAYER_INC))

print-layer-srcs:
	@echo $(call layer_srcs,$(LAYER))

$(B)/obj/%.o: %.c $(LIB_HDRS)
	$(call msg,CC,$<)
	$(Q)mkdir -p $(@D)
	$(Q)$(CC) $(LIB_CFLAGS) $(LAYER_INC) $(CFLAGS) -c -o $@ $<

$(B)/pic/%.o: %.c $(LIB_HDRS)
	$(call msg,CC,$< [pic])
	$(Q)mkdir -p $(@D)
	$(Q)$(CC) $(LIB_CFLAGS) $(LAYER_INC) $(CFLAGS) -fPIC -c -o $@ $<

$(B)/asan/%.o: %.c $(LIB_HDRS)
	$(call msg,CC,$< [asan])
	$(Q)mkdir -p $(@D)
	$(Q)$(CC) $(LIB_CFLAGS) $(LAYER_INC) $(ASAN_FLAGS) -c -o $@ $<

$(INTERNAL): $(LIB_OBJS)
	$(call msg,AR,$@)
	$(Q)rm -f $@ && ar rcs $@ $^

# One relocatable object, its hidden names (everything not OMS_EXPORT)
# made local: a static link sees the exported calls and nothing else.
$(STATIC): $(LIB_OBJS)
	$(call msg,AR,$@)
	$(Q)rm -f $@ $(B)/liboms-static.o
	$(Q)$(CC) -nostdlib -r -o $(B)/liboms-static.o $^
	$(Q)objcopy --localize-hidden $(B)/liboms-static.o
	$(Q)ar rcs $@ $(B)/liboms-static.o

$(B)/liboms-asan.a: $(LIB_ASAN_OBJS)
	$(call msg,AR,$@)
	$(Q)rm -f $@ && ar rcs $@ $^

$(SHARED): $(LIB_PIC_OBJS) lib/liboms.map
	$(call msg,LD,$@)
	$(Q)$(CC) -shared -Wl,-soname,$(SONAME) -Wl,--version-script=lib/liboms.map \
		-Wl,--no-undefined -o $@ $(LIB_PIC_OBJS) $(LIB_LDLIBS)
	$(Q)ln -sf liboms.so.$(VERSION) $(B)/$(SONAME)
	$(Q)ln -sf $(SONAME) $(B)/liboms.so

$(B)/apps/%: apps/%.c $(STATIC) $(LIB_HDRS)
	$(call msg,CC,$@)
	$(Q)mkdir -p $(@D)
	$(Q)$(CC) $(BASE_CFLAGS) $(CFLAGS) -o $@ $< $(STATIC) $(LIB_LDLIBS)

# The examples see only the installed headers' directory, as a user's
# program does (#include <oms.h>).
$(B)/examples/%: examples/%.c $(STATIC) $(LIB_HDRS)
	$(call msg,CC,$@)
	$(Q)mkdir -p $(@D)
	$(Q)$(CC) -std=gnu11 $(WARN) $(CFLAGS) -Iinclude -o $@ $< $(STATIC) \
		$(LIB_LDLIBS)

# oms_probe is several files (apps/probe/) and calls verbs itself: a live
# device is one of what it probes.
PROBE_SRCS := $(sort $(wildcard apps/probe/*.c))
$(B)/apps/oms_probe: apps/oms_probe.c $(PROBE_SRCS) apps/probe/probe.h \
		bench/common/bench_args.c bench/bench_args.h $(STATIC) $(LIB_HDRS)
	$(call msg,CC,$@)
	$(Q)mkdir -p $(@D)
	$(Q)$(CC) $(LIB_CFLAGS) -Iinclude -Ibench -Iapps $(CFLAGS) -o $@ $< \
		$(PROBE_SRCS) bench/common/bench_args.c $(STATIC) $(LIBS)

# ... and with ASan/UBSan, for tests/oms-probe.sh
PROBE_ASAN := $(B)/apps-asan/oms_probe
$(PROBE_ASAN): apps/oms_probe.c $(PROBE_SRCS) apps/probe/probe.h \
		bench/common/bench_args.c bench/bench_args.h $(B)/liboms-asan.a \
		$(LIB_HDRS)
	$(call msg,CC,$@ [asan])
	$(Q)mkdir -p $(@D)
	$(Q)$(CC) $(LIB_CFLAGS) -Iinclude -Ibench -Iapps $(ASAN_FLAGS) -o $@ $< \
		$(PROBE_SRCS) bench/common/bench_args.c $(B)/liboms-asan.a $(LIBS)

BENCH_COMMON := bench/common/bench_args.c bench/common/zipf.c \
		bench/common/link_fit.c bench/common/model_window.c
BENCH_HDRS := bench/bench_util.h bench/bench_args.h bench/bench_zipf.h \
		bench/bench_fit.h bench/model_window.h bench/msg_pass_layout.h
# The benchmarks of the engine's and the agent's own loops call them
# directly, not through the exported calls.
BENCH_OF_INTERNALS := agent engine
# The names make install gives the programs in BINDIR (man pages: mk/man.mk).
INST_PROG_NAMES := $(APP_SRCS:apps/%.c=%) \
	$(patsubst %,oms_%,$(filter-out $(BENCH_OF_INTERNALS),$(BENCH_SRCS:bench/%.c=%))) \
	$(patsubst %,oms_%_bench,$(BENCH_OF_INTERNALS))
bench_lib = $(if $(filter $(BENCH_OF_INTERNALS),$(1)),$(INTERNAL),$(STATIC))
$(B)/bench/%: bench/%.c $(BENCH_COMMON) $(STATIC) $(INTERNAL) $(LIB_HDRS) \
		$(BENCH_HDRS)
	$(call msg,CC,$@)
	$(Q)mkdir -p $(@D)
	$(Q)$(CC) $(BASE_CFLAGS) $(CFLAGS) -Ibench -o $@ $< \
		$(BENCH_COMMON) $(call bench_lib,$*) $(LIB_LDLIBS) -lm

tests: $(TESTS) $(TESTS_ASAN) $(FUZZERS) $(PROBE_ASAN)

$(B)/tests/%: tests/%.c $(TEST_SHARED) tests/engine_model.c $(TEST_SHARED_HDRS) $(INTERNAL) $(CONFIG_H) $(HARNESS)
	$(call msg,CC,$@)
	$(Q)mkdir -p $(@D)
	$(Q)$(CC) $(LIB_CFLAGS) $(call test_inc,$*) $(CFLAGS) $(TEST_CFLAGS) \
		-o $@ $< $(call test_srcs,$*) $(INTERNAL) $(LIBS)

$(B)/tests-asan/%: tests/%.c $(TEST_SHARED) tests/engine_model.c $(TEST_SHARED_HDRS) $(B)/liboms-asan.a $(CONFIG_H) $(HARNESS)
	$(call msg,CC,$@ [asan])
	$(Q)mkdir -p $(@D)
	$(Q)$(CC) $(LIB_CFLAGS) $(call test_inc,$*) $(ASAN_FLAGS) $(TEST_CFLAGS) \
		-o $@ $< $(call test_srcs,$*) $(B)/liboms-asan.a $(LIBS)

# make print-test-cflags TEST=name: a test's flags; print-internal-tests:
# the tests of internals (tests/layers.sh)
print-test-cflags: $(HARNESS) $(CONFIG_H)
	@echo $(LIB_CFLAGS) $(call test_inc,$(TEST)) $(TEST_CFLAGS)

print-internal-tests:
	@echo $(INTERNAL_TESTS)

# libFuzzer targets: clang only, the library compiled in with the fuzzer.
$(B)/fuzz/%: tests/fuzz/%.c $(LIB_SRCS) $(LIB_HDRS) $(TEST_SHARED) tests/engine_model.c $(TEST_SHARED_HDRS)
	$(call msg,FUZZ,$@)
	$(Q)mkdir -p $(@D)
	$(Q)$(CLANG) -std=gnu11 -D_GNU_SOURCE -g -O1 -Iinclude -Ilib -I$(B) -Itests \
		-fsanitize=fuzzer,address,undefined -fno-sanitize-recover=all \
		-o $@ $< $(TEST_SHARED) tests/engine_model.c $(LIB_SRCS) $(LIBS)

fuzz: $(FUZZERS)
	$(Q)for f in $(FUZZERS); do \
		sh scripts/run-fuzzer.sh $$f tests/fuzz/corpus/$$(basename $$f) $(FUZZ_SECONDS) || exit 1; \
	done

# Every public header compiles on its own and with every other, in both
# orders, as C and as C++ (as liburing and rdma-core check theirs).
CXX ?= g++
headers-check:
	$(call msg,CHECK,public headers alone and in pairs as C and C++)
	$(Q)for a in include/*.h; do for b in "" include/*.h; do \
		src="#include \"$$(basename $$a)\""; \
		[ -n "$$b" ] && src="$$src\n#include \"$$(basename $$b)\""; \
		printf "$$src\n" | $(CC) -std=gnu11 -Iinclude -Wall -Wextra -Werror \
			-x c -fsyntax-only - && \
		printf "$$src\n" | $(CXX) -std=c++17 -Iinclude -Wall -Wextra -Werror \
			-x c++ -fsyntax-only - || \
			{ echo "headers-check: $$a $$b" >&2; exit 1; }; \
	done; done

-include $(sort $(wildcard mk/*.mk))

# The runner starts them in this order, CHECK_JOBS (2) at a time, and
# prints their TAP in this order: the long ones (the guests of mk/*.mk,
# the explorer's long run in the full tier (its short tiers are in
# $(TESTS)), the fuzzers) first, so that the short ones fill
# the gaps at the end instead of the long ones running alone.
CHECK_CMDS := $(CHECK_CMDS) \
	$(if $(filter full,$(CHECK_TIER)),"OMS_MIXED_LONG=1 $(B)/tests/engine_explorer_mixed") \
	$(foreach f,$(FUZZERS),"sh scripts/run-fuzzer.sh $(f) tests/fuzz/corpus/$(notdir $(f)) $(FUZZ_SECONDS)") \
	$(TESTS) $(TESTS_ASAN) \
	"sh scripts/check-exports.sh $(SHARED) $(STATIC)" "sh scripts/check-install.sh" \
	"sh tests/no-rdma-libs.sh $(B)" "sh tests/layers.sh" "sh tests/words.sh" \
	"sh tests/run-tests-progress.sh" \
	"sh tests/examples.sh $(B)" \
	"sh tests/oms-probe.sh $(B)"

# check and demo install what is missing first (as root; anyone else gets
# the apt-get line and make stops), then run in a fresh make, which sees
# the installed packages and kernels (CONFIG_H, tests/vm/kernels.sh).
# The build runs on every CPU unless make was given -j (then its jobserver
# reaches the sub-make through MAKEFLAGS).
check check-full demo:
	$(Q)sh scripts/deps.sh $(if $(filter demo,$@),demo,check)
	$(Q)case " $$MAKEFLAGS" in *" -j"* | *jobserver*) j= ;; *) j=-j$$(nproc) ;; esac; \
		$(MAKE) --no-print-directory $$j \
		$(if $(filter demo,$@),demo-run,check-run CHECK_TIER=$(if $(filter check,$@),quick,full))

check-run: all tests headers-check $(CHECK_DEPS)
	$(Q)OMS_CHECK_TIER=$(CHECK_TIER) bash scripts/run-tests.sh $(CHECK_CMDS)

demo-run: all
	$(Q)sh scripts/demo.sh

# Seed 004's figures that run here, as PNGs in build/figures
# (docs/figures.md); FIG_D=SEC per KVS cell (default 1).
figures: all
	$(Q)sh scripts/figures.sh $(B)/figures

# This tree's bench/engine, mmio_tx and kvs_get against revision REV's, in
# one run, as ratios (scripts/bench-compare.sh; ROUNDS, default 5).
bench-compare: $(BENCHES)
	$(Q)sh scripts/bench-compare.sh $(if $(REV),$(REV),$(error give REV=<commit>)) $(ROUNDS)

# Installed programs load liboms.so.$(VERSION_MAJOR) as a user's program
# does: they are linked again for install (as libtool relinks), against
# the shared library, with a RUNPATH only where the loader does not look
# by itself.  The benchmarks go in with an oms_ prefix, as perftest's do
# with ib_; those of the engine's and the agent's own loops keep what
# they measure linked in and are named for what they are (oms_*_bench).
INST := $(B)/inst
SYSTEM_LIBDIRS := /lib /usr/lib /usr/local/lib /lib64 /usr/lib64 \
	$(wildcard /lib/*-linux-gnu /usr/lib/*-linux-gnu)
INST_RPATH = $(if $(filter $(LIBDIR),$(SYSTEM_LIBDIRS)),,-Wl,-rpath,$(LIBDIR))
INST_APPS := $(APP_SRCS:apps/%.c=$(INST)/apps/%)
INST_BENCHES := $(patsubst %,$(INST)/bench/oms_%,$(filter-out \
	$(BENCH_OF_INTERNALS),$(BENCH_SRCS:bench/%.c=%)))
LDCONFIG ?= ldconfig

$(INST)/apps/%: apps/%.c $(SHARED) $(LIB_HDRS)
	$(call msg,CC,$@)
	$(Q)mkdir -p $(@D)
	$(Q)$(CC) $(BASE_CFLAGS) $(CFLAGS) -o $@ $< $(SHARED) $(INST_RPATH) \
		$(LIB_LDLIBS)

$(INST)/apps/oms_probe: apps/oms_probe.c $(PROBE_SRCS) apps/probe/probe.h \
		bench/common/bench_args.c bench/bench_args.h $(SHARED) $(LIB_HDRS)
	$(call msg,CC,$@)
	$(Q)mkdir -p $(@D)
	$(Q)$(CC) $(LIB_CFLAGS) -Iinclude -Ibench -Iapps $(CFLAGS) -o $@ $< \
		$(PROBE_SRCS) bench/common/bench_args.c $(SHARED) $(INST_RPATH) \
		$(LIBS)

$(INST)/bench/oms_%: bench/%.c $(BENCH_COMMON) $(SHARED) $(LIB_HDRS) \
		$(BENCH_HDRS)
	$(call msg,CC,$@)
	$(Q)mkdir -p $(@D)
	$(Q)$(CC) $(BASE_CFLAGS) $(CFLAGS) -Ibench -o $@ $< $(BENCH_COMMON) \
		$(SHARED) $(INST_RPATH) $(LIB_LDLIBS) -lm

# ldconfig makes the new soname known to the loader; not under DESTDIR,
# whose packager does it on the target.
install: lib $(INST_APPS) $(INST_BENCHES) \
		$(addprefix $(B)/bench/,$(BENCH_OF_INTERNALS))
	install -d $(DESTDIR)$(LIBDIR)/pkgconfig $(DESTDIR)$(INCDIR) \
		$(DESTDIR)$(BINDIR)
	install -m 755 $(INST_APPS) $(INST_BENCHES) $(DESTDIR)$(BINDIR)/
	for b in $(BENCH_OF_INTERNALS); do \
		install -m 755 $(B)/bench/$$b \
			$(DESTDIR)$(BINDIR)/oms_$${b}_bench || exit 1; \
	done
	install -m 644 $(STATIC) $(DESTDIR)$(LIBDIR)/
	install -m 755 $(SHARED) $(DESTDIR)$(LIBDIR)/
	ln -sf liboms.so.$(VERSION) $(DESTDIR)$(LIBDIR)/$(SONAME)
	ln -sf $(SONAME) $(DESTDIR)$(LIBDIR)/liboms.so
	install -m 644 include/*.h $(DESTDIR)$(INCDIR)/
	sed -e 's|@PREFIX@|$(PREFIX)|' -e 's|@LIBDIR@|$(LIBDIR)|' \
	    -e 's|@INCDIR@|$(INCDIR)|' -e 's|@VERSION@|$(VERSION)|' \
	    lib/liboms.pc.in > $(DESTDIR)$(LIBDIR)/pkgconfig/liboms.pc
	$(call run_ldconfig)

# As root, without DESTDIR: ldconfig, or what to do about a LIBDIR the
# loader does not search.
define run_ldconfig
	@if [ -z "$(DESTDIR)" ] && [ "$$(id -u)" = 0 ]; then \
		echo "$(LDCONFIG)"; $(LDCONFIG) || exit 1; \
	fi
	@case " $(SYSTEM_LIBDIRS) " in *" $(LIBDIR) "*) ;; *) \
		echo "liboms: $(LIBDIR) is not where the loader looks: a program" \
		     "linked with liboms needs LD_LIBRARY_PATH=$(LIBDIR), a RUNPATH" \
		     "(-Wl,-rpath,$(LIBDIR)) or $(LIBDIR) in /etc/ld.so.conf.d/" ;; \
	esac
endef

# What install put there, and nothing else (mk/man.mk adds the man pages).
uninstall:
	rm -f $(addprefix $(DESTDIR)$(BINDIR)/,$(notdir $(INST_APPS) $(INST_BENCHES))) \
		$(patsubst %,$(DESTDIR)$(BINDIR)/oms_%_bench,$(BENCH_OF_INTERNALS)) \
		$(DESTDIR)$(LIBDIR)/liboms.a $(DESTDIR)$(LIBDIR)/liboms.so.$(VERSION) \
		$(DESTDIR)$(LIBDIR)/$(SONAME) $(DESTDIR)$(LIBDIR)/liboms.so \
		$(DESTDIR)$(LIBDIR)/pkgconfig/liboms.pc \
		$(addprefix $(DESTDIR)$(INCDIR)/,$(notdir $(wildcard include/*.h)))
	@if [ -z "$(DESTDIR)" ] && [ "$$(id -u)" = 0 ]; then \
		echo "$(LDCONFIG)"; $(LDCONFIG) || exit 1; \
	fi

clean:
	rm -rf $(B)
