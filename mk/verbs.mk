# The verbs backend on two QEMU guests joined by a virtual wire, with
# Soft-RoCE (rdma_rxe) in each (tests/vm/, docs/verbs.md).
#
#   make verbs-tests   the guest programs (tests/verbs/) into build/verbs-tests
#   make rxe-check     boot both guests and run them (also part of make check)
#   make perftest-compare  perftest's ib_write_bw / ib_read_bw beside liboms's
#                      rdma_ops on the same link, 64 B - 4 KiB, the ratio per
#                      cell, and where liboms's time goes; records in
#                      build/perftest-compare.json, figures in build/figures
#   make kvs-compare   the guests' KVS suite; kvs_get --calibrate's records
#                      (the model fitted to the link, the cells on both) in
#                      build/kvs-compare.json, its figure in build/figures
#   make figures-verbs both of the above: the figures' verbs counterparts
#                      (docs/figures.md, "On verbs")
#   make rxe-litmus    only the litmus programs (litmus_rxe against
#                      rxe_server, the agent's tests among them)
#   make probe-rxe     apps/oms_probe's verbs target between the guests (what
#                      Soft-RoCE orders; also part of make check's rxe run)
#   make rxe-three     three guests on one network (tests/vm/rxe-three.sh):
#                      ordering across hosts (also part of make check)
#   make soak-rxe      the fault soak (tests/vm/rxe-soak.sh) for SOAK_S
#                      seconds (default 3600): servers, clients and a loop
#                      of faults between the guests; its shortest form is
#                      part of make check-full's rxe run
#
# tests/verbs/ holds programs that only make sense on a host with an RDMA
# device and a peer: they are built here, not as host kselftests.

VERBS_TEST_SRCS := $(sort $(filter-out tests/verbs/rxe_server.c, \
	$(wildcard tests/verbs/*.c)))
VERBS_TESTS := $(VERBS_TEST_SRCS:tests/verbs/%.c=$(B)/verbs-tests/%)
VERBS_SERVER := $(B)/verbs-tests/rxe_server

.PHONY: verbs-tests rxe-check rxe-litmus perftest-compare probe-rxe \
	kvs-compare figures-verbs soak-rxe rxe-three

verbs-tests: $(VERBS_TESTS) $(VERBS_SERVER)

$(B)/verbs-tests/%: tests/verbs/%.c bench/msg_pass_layout.h tests/verbs/rxe_proto.h tests/verbs/rxe_client.h tests/verbs/raw_peer.h tests/harness.h tests/helpers.c tests/helpers.h $(INTERNAL) $(HARNESS)
	$(call msg,CC,$@)
	$(Q)mkdir -p $(@D)
	$(Q)$(CC) $(BASE_CFLAGS) $(CFLAGS) $(TEST_CFLAGS) -Itests/verbs -Ibench -o $@ $< \
		tests/helpers.c $(INTERNAL) $(LIBS)

rxe-check: all verbs-tests
	$(Q)sh tests/vm/run-rxe-tests.sh $(CURDIR)/$(B)

rxe-litmus: all verbs-tests
	$(Q)sh tests/vm/run-rxe-tests.sh $(CURDIR)/$(B) litmus

probe-rxe: all verbs-tests
	$(Q)sh tests/vm/run-rxe-tests.sh $(CURDIR)/$(B) probe

rxe-three: verbs-tests
	$(Q)sh tests/vm/run-rxe-tests.sh $(CURDIR)/$(B) three

SOAK_S ?= 3600
soak-rxe: all verbs-tests
	$(Q)OMS_SOAK_S=$(SOAK_S) OMS_RXE_TIMEOUT=$$(($(SOAK_S) + 1800)) \
		sh tests/vm/run-rxe-tests.sh $(CURDIR)/$(B) soak | tee $(B)/soak-rxe.log

perftest-compare: all verbs-tests
	$(Q)sh tests/vm/run-rxe-tests.sh $(CURDIR)/$(B) perftest | tee $(B)/perftest-compare.log
	$(Q)sed -n 's/^# perf-json //p' $(B)/perftest-compare.log >$(B)/perftest-compare.json
	$(Q)sed -n 's/^# acq-json //p' $(B)/perftest-compare.log >$(B)/acquire-compare.json
	$(Q)echo "perftest-compare: $(B)/perftest-compare.json"
	$(Q)if command -v gnuplot >/dev/null; then B=$(B) sh scripts/figures-verbs.sh $(B)/figures; \
	else echo "perftest-compare: no gnuplot, no figures (make deps)"; fi

kvs-compare: all verbs-tests
	$(Q)sh tests/vm/run-rxe-tests.sh $(CURDIR)/$(B) kvs | tee $(B)/kvs-compare.log
	$(Q)sed -n 's/^# kvs calibration: \({.*\)/\1/p' $(B)/kvs-compare.log >$(B)/kvs-compare.json
	$(Q)echo "kvs-compare: $(B)/kvs-compare.json"
	$(Q)if command -v gnuplot >/dev/null; then B=$(B) sh scripts/figures-verbs.sh $(B)/figures; \
	else echo "kvs-compare: no gnuplot, no figures (make deps)"; fi

# one after the other, whatever -j says: each boots the same two guests
figures-verbs: all verbs-tests
	$(Q)$(MAKE) --no-print-directory perftest-compare
	$(Q)$(MAKE) --no-print-directory kvs-compare

CHECK_DEPS += verbs-tests
# First: the longest command of make check (two TCG guests, minutes of
# litmus), so that the runner overlaps everything else with it.
CHECK_CMDS := "sh tests/vm/run-rxe-tests.sh $(CURDIR)/$(B)" $(CHECK_CMDS) \
	"sh tests/vm/run-rxe-tests.sh $(CURDIR)/$(B) three"
