# oms.ko and its tests in guest kernels.
#
#   make kmod [W=1]   build kmod/oms.ko against the installed Debian kernel
#   make kmod-check   checkpatch + a clean W=1 build per kernel, as TAP
#   make dkms-install / dkms-remove   the packaged module (as root)
#   make check-full   also, for every installed Debian kernel and for the
#                     debug kernel: build oms.ko for it, boot it in QEMU
#                     and run tests/kmod/ there (make check: the first
#                     kernel only)
#
# The guest suite's kernels are those of tests/vm/kernels.sh (image,
# modules and headers installed: Debian 12's 6.1 and 6.12 after
# `make deps`) plus the debug kernel of scripts/debug-kernel.sh (6.1 from
# linux-source-6.1 with KASAN, KFENCE, lockdep, kmemleak, hung task).
# Each gets its own build in build/kmod/<release>/, and its guest boots the
# release that build records, so module and kernel match by construction.

# The kernel: the running one, as DKMS (scripts/dkms.sh) picks it; KVER=
# or KDIR= chooses another, and make kmod says so on its own line.
RUNNING_KVER := $(shell uname -r)
KVER ?= $(RUNNING_KVER)
KDIR ?= /lib/modules/$(KVER)/build
KMOD := kmod/oms.ko
KMOD_TEST_SRCS := $(sort $(filter-out tests/kmod/check_backing.c \
	tests/kmod/compat32.c, $(wildcard tests/kmod/*.c)))
KMOD_TESTS := $(KMOD_TEST_SRCS:tests/kmod/%.c=$(B)/kmod-tests/%)
KMOD_CHECKER := $(B)/kmod-tests/check_backing

KMOD_KVERS := $(shell sh tests/vm/kernels.sh)
KMOD_SRCS := Kbuild kmod/Kbuild $(filter-out %.mod.c,$(wildcard kmod/*.c)) \
	$(wildcard kmod/*.h) include/oms_uapi.h include/oms_order.h \
	lib/engine/wc_chan.h scripts/kmod-build.sh
KMOD_PER_KERNEL := $(KMOD_KVERS:%=$(B)/kmod/%/oms.ko)
KDEBUG := $(shell sh scripts/debug-kernel.sh --dir)
KDEBUG_KO := $(B)/kmod/debug/oms.ko

.PHONY: kmod kmod-check kmod-tests kmod-clean kmod-bench dkms-install dkms-remove

# W= on the command line reaches kbuild through MAKEFLAGS.  Without the
# kernel's build tree: what to install, and the kernels that have one.
kmod:
	$(Q)if [ ! -f "$(KDIR)/Makefile" ]; then \
		echo "make kmod: no build tree for kernel $(KVER) at $(KDIR)" >&2; \
		echo "  install its headers (apt-get install linux-headers-$(KVER))," \
		     "or build for a kernel that has them: make kmod KVER=<release>" >&2; \
		echo "  kernels with headers here:" $$(for d in /lib/modules/*/build; do \
			[ -f "$$d/Makefile" ] && basename "$$(dirname "$$d")"; \
			done 2>/dev/null | sort -V) >&2; \
		exit 1; \
	fi
	$(if $(filter $(RUNNING_KVER),$(KVER)),,@echo "make kmod: for kernel $(KVER), not the running $(RUNNING_KVER)")
	$(call msg,KMOD,$(KMOD) [$(KVER)])
	$(Q)$(MAKE) --no-print-directory -C $(KDIR) M=$(CURDIR) modules \
		$(if $(Q),>/dev/null)

kmod-check: $(HARNESS) $(KMOD_PER_KERNEL)
	$(Q)sh tests/kmod/kmod-lint.sh $(KMOD_PER_KERNEL:%/oms.ko=%)

$(B)/kmod/%/oms.ko: $(KMOD_SRCS)
	$(call msg,KMOD,$@)
	$(Q)sh scripts/kmod-build.sh /lib/modules/$*/build $(@D)

# The debug kernel: built once per machine and configuration (cached
# outside the checkout; a cold build is stated in docs/kmod.md).  No
# prerequisites: the directory's name is a hash of the configuration, so a
# changed fragment names a directory that has no .oms-built yet.
$(KDEBUG)/.oms-built:
	$(call msg,KERNEL,$(KDEBUG))
	$(Q)sh scripts/debug-kernel.sh >/dev/null

$(KDEBUG_KO): $(KMOD_SRCS) $(KDEBUG)/.oms-built
	$(call msg,KMOD,$@)
	$(Q)sh scripts/kmod-build.sh $(KDEBUG) $(@D)

kmod-tests: $(KMOD_TESTS) $(KMOD_CHECKER) $(B)/kmod-tests/compat32

$(B)/kmod-tests/%: tests/kmod/%.c tests/kmod/oms_test.h tests/kmod/oms_guest.h tests/kmod/oms_window_fixture.h tests/harness.h include/oms_uapi.h $(HARNESS)
	$(call msg,CC,$@)
	$(Q)mkdir -p $(@D)
	$(Q)$(CC) $(BASE_CFLAGS) $(CFLAGS) $(TEST_CFLAGS) -Itests/kmod -o $@ $<

$(KMOD_CHECKER): tests/kmod/check_backing.c tests/kmod/oms_test.h
	$(call msg,CC,$@)
	$(Q)mkdir -p $(@D)
	$(Q)$(CC) $(BASE_CFLAGS) $(CFLAGS) -Itests/kmod -o $@ $<

# A freestanding i386 binary for the compat_ioctl path (no 32-bit libc
# needed).  Without -m32 support it is left out and the guest skips it.
$(B)/kmod-tests/compat32: tests/kmod/compat32.c tests/kmod/oms_test.h include/oms_uapi.h
	$(call msg,CC,$@ [i386])
	$(Q)mkdir -p $(@D)
	$(Q)$(CC) -m32 -static -nostdlib -ffreestanding -fno-pic -fno-stack-protector \
		-O2 -Wall -Wextra -Werror -Iinclude -Itests/kmod \
		-idirafter /usr/include/$$($(CC) -print-multiarch) -o $@ $< 2>/dev/null || \
		echo "  compat32: $(CC) -m32 failed, the guest will skip it"

# The packaged module (dkms.conf), the "oms" group and the udev rule that
# lets its members open /dev/oms; as root.  KVER: the running kernel unless
# given.  make check runs both in a guest of every Debian kernel.
dkms-install:
	$(Q)sh scripts/dkms.sh install $(if $(filter command line,$(origin KVER)),$(KVER))

dkms-remove:
	$(Q)sh scripts/dkms.sh remove

# kbuild's own clean where the kernel's tree is; its outputs either way.
kmod-clean:
	$(Q)if [ -f "$(KDIR)/Makefile" ]; then \
		$(MAKE) --no-print-directory -C $(KDIR) M=$(CURDIR) clean; \
	fi
	$(Q)rm -f kmod/*.o kmod/*.ko kmod/*.mod kmod/*.mod.c kmod/.*.cmd \
		kmod/modules.order Module.symvers modules.order .*.cmd

# make check (CHECK_TIER=quick): the suite on the first kernel of
# kernels.sh (the machine's default, 6.1 on Debian 12); make check-full:
# on every installed kernel and on the debug kernel, and dkms in a guest of
# every kernel.
ifeq ($(CHECK_TIER),quick)
KMOD_CHECK_KVERS := $(firstword $(KMOD_KVERS))
KMOD_CHECK_KOS := $(KMOD_CHECK_KVERS:%=$(B)/kmod/%/oms.ko)
KMOD_CHECK_DEBUG :=
else
KMOD_CHECK_KVERS := $(KMOD_KVERS)
KMOD_CHECK_KOS := $(KMOD_PER_KERNEL)
KMOD_CHECK_DEBUG := $(KDEBUG_KO)
endif

CHECK_DEPS += kmod-tests $(KMOD_CHECK_KOS) $(KMOD_CHECK_DEBUG)
CHECK_CMDS += "sh tests/kmod/kmod-lint.sh $(KMOD_CHECK_KOS:%/oms.ko=%) $(KMOD_CHECK_DEBUG:%/oms.ko=%)" \
	$(foreach k,$(KMOD_CHECK_KOS),"sh tests/vm/run-kmod-tests.sh $(CURDIR)/$(k) $(CURDIR)/$(B)/kmod-tests") \
	$(if $(KMOD_CHECK_DEBUG),"sh tests/vm/run-kmod-tests.sh -k $(KDEBUG)/arch/x86/boot/bzImage $(CURDIR)/$(KDEBUG_KO) $(CURDIR)/$(B)/kmod-tests") \
	$(if $(filter full,$(CHECK_TIER)),$(foreach k,$(KMOD_CHECK_KVERS),"sh tests/vm/run-kmod-dkms.sh $(k) $(CURDIR)/$(B)/kmod-tests"))

# The MMIO transmit experiment (docs/kmod.md): MMIO_BENCH swept over message
# sizes with fences on and off, in the guest.  Not part of `make check`.
KMOD_BENCH_ARGS ?= -t 256 -r 3
# The guest boots the kernel the module was built for (its vermagic).
KBENCH_KO := $(B)/kmod/$(firstword $(KMOD_KVERS))/oms.ko
kmod-bench: $(KBENCH_KO) kmod-tests $(B)/bench/mmio_tx
	$(Q)shm=$$(mktemp /dev/shm/oms-bench-XXXXXXXX) && truncate -s 4M $$shm && \
	KVER=$$(modinfo -F vermagic $(KBENCH_KO) | cut -d' ' -f1) \
	sh tests/vm/boot.sh -t 1200 -n kmod-bench tests/vm/run-kmod-bench.sh \
		$(CURDIR)/$(KBENCH_KO) $(CURDIR)/$(B)/kmod-tests \
		$(CURDIR)/$(B)/bench/mmio_tx $(KMOD_BENCH_ARGS) -- \
		-object memory-backend-file,id=hm,share=on,mem-path=$$shm,size=4M \
		-device ivshmem-plain,memdev=hm; rc=$$?; rm -f $$shm; exit $$rc
