# liboms transmitting through oms.ko in the QEMU guest.
#
#   make tx-guest   boot the guest, send the streams of
#                   tests/tx-guest/txg_stream.h through the oms.ko window on
#                   the ivshmem BAR (mapped and through the ioctls), then
#                   check the backing files on the host; bench/mmio_tx on
#                   both paths in the guest
#   make check      runs the same, after the kmod suite
#
# The guest program and the host checker link liboms; the checker is built
# with ASan/UBSan since it parses what the guest left (and damaged copies).

TXG_GUEST := $(B)/tx-guest/txg_guest
TXG_CHECK := $(B)/tx-guest/txg_check
TXG_HDRS := tests/tx-guest/txg_stream.h $(LIB_HDRS)
# oms.ko as built for the guest's default kernel (mk/kmod.mk).
TXG_KMOD := $(B)/kmod/$(firstword $(KMOD_KVERS))/oms.ko
TXG_BENCH := $(B)/bench/mmio_tx
TXG_CMD := sh tests/vm/run-tx-tests.sh $(CURDIR)/$(TXG_KMOD) \
	$(CURDIR)/$(TXG_GUEST) $(CURDIR)/$(TXG_CHECK) $(CURDIR)/$(TXG_BENCH)

.PHONY: tx-guest

$(TXG_GUEST): tests/tx-guest/txg_guest.c $(TXG_HDRS) $(INTERNAL)
	$(call msg,CC,$@)
	$(Q)mkdir -p $(@D)
	$(Q)$(CC) $(BASE_CFLAGS) $(CFLAGS) -o $@ $< $(INTERNAL) $(LIBS)

$(TXG_CHECK): tests/tx-guest/txg_check.c $(TXG_HDRS) $(B)/liboms-asan.a
	$(call msg,CC,$@ [asan])
	$(Q)mkdir -p $(@D)
	$(Q)$(CC) $(BASE_CFLAGS) $(ASAN_FLAGS) -o $@ $< \
		$(B)/liboms-asan.a $(LIBS)

tx-guest: $(TXG_KMOD) $(TXG_GUEST) $(TXG_CHECK) $(TXG_BENCH)
	$(Q)bash scripts/run-tests.sh "$(TXG_CMD)"

CHECK_DEPS += $(TXG_KMOD) $(TXG_GUEST) $(TXG_CHECK) $(TXG_BENCH) $(B)/apps/oms_probe
CHECK_CMDS += "$(TXG_CMD)"
