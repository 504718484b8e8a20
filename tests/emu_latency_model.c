// SPDX-License-Identifier: MIT
/*
 * The emulated device's latency model gives seed 004's Fig 5 (what
 * bench/ordered_read measures in full), checked against the model's own
 * arithmetic: with Table 2 latencies (200 ns one-way bus, 17 ns root
 * complex, 50 ns memory a line, a 100 Gb/s response link),
 *   unordered and RC-opt reads are bound by the link: 100 Gb/s;
 *   RC acquire reads go one line after another at the root complex:
 *     64 B per 17 + 50 ns, 7.64 Gb/s;
 *   NIC acquire reads go one line per bus round trip:
 *     64 B per 2 x 200 + 17 + 50 ns, 1.10 Gb/s;
 * and the responder NIC's message rate caps small reads at one per
 * lat_req_ns.  The figures are model time, the device's own clock
 * (oms_emu.h): a fixed number of reads gives the same figure on any
 * machine, idle or busy, so each is asserted once, tightly, with no
 * retry.  The reads are timed between two readings of the issuing
 * thread's model time, after a warm-up that fills the pipeline.
 */
#include <stdlib.h>
#include <string.h>

#include "harness.h"
#include "oms.h"
#include "oms_emu.h"

#define REGION (256u << 10)
#define WARM	64		/* reads before the timed ones */
#define READS	2048		/* timed reads (lines of 64 B: 64 B reads) */

/* Model ns per line for the stop-and-wait modes, and the link's. */
#define RC_LINE_NS	(17.0 + 50.0)
#define NIC_LINE_NS	(2 * 200.0 + 17.0 + 50.0)
#define LINK_GBPS	100.0

/* Responder NIC service time per request for the next runs; 0 = none. */
static uint32_t nic_req_ns;

/*
 * Reads kept in flight: the parallel modes need many to fill the link's
 * bandwidth-delay product; the stop-and-wait modes are busy with a few.
 */
static int reads_in_flight(uint32_t order, unsigned flags)
{
	return flags == OMS_READ_RELAXED || order == OMS_ORDER_RC_OPT ?
	       256 : 8;
}

/* Model-time Gb/s of READS reads of @size with @order and @flags; < 0
 * failed. */
static double gbps(uint32_t order, unsigned flags, uint32_t size)
{
	struct oms_ctx_attr a = oms_ctx_attr_default();
	uint8_t *mem = aligned_alloc(64, REGION), *dst = aligned_alloc(64, REGION);
	struct oms_ctx *ini = NULL, *tgt = NULL;
	struct oms_emu *emu = NULL;
	struct oms_mr *mr;
	struct oms_rmr r;
	uint64_t issued = 0, off = 0, t0 = 0, t1 = 0, done = 0;
	int out = 0, window = reads_in_flight(order, flags);
	double rate = -1;
	struct oms_emu_attr ea = {
		.size = sizeof(ea),
		.comp_mask = OMS_EMU_ATTR_LATENCY | OMS_EMU_ATTR_READ_ORDER |
			     OMS_EMU_ATTR_NIC_RATE,
		.lat_req_ns = nic_req_ns,
		.lat_bus_ns = 200, .lat_rc_ns = 17, .lat_mem_ns = 50,
		.link_gbps = 100, .time_scale = 1,
		.read_order = order, .rlsq_entries = 256,
	};

	if (!mem || !dst || oms_emu_create(&ea, &emu))
		goto out;
	a.comp_mask = OMS_CTX_ATTR_EMU | OMS_CTX_ATTR_NODE |
		      OMS_CTX_ATTR_QDEPTH;
	a.emu = emu;
	a.queue_depth = 512;
	memset(mem, 3, REGION);
	if (oms_ctx_create(&a, &ini))
		goto out;
	a.node = 1;
	if (oms_ctx_create(&a, &tgt) ||
	    oms_mr_reg(tgt, mem, REGION, OMS_ACCESS_ALL, &mr) ||
	    oms_mr_remote(mr, &r))
		goto out;
	while (done < WARM + READS) {
		while (out < window) {
			if (oms_get(ini, dst + off, &r, off, size, flags))
				goto out;
			off = (off + size) % REGION;
			issued++;
			out++;
		}
		out = oms_progress(ini);
		if (out < 0)
			goto out;
		if (done < WARM && issued - (uint64_t)out >= WARM)
			oms_emu_thread_time(emu, &t0);
		done = issued - (uint64_t)out;
	}
	oms_emu_thread_time(emu, &t1);
	if (!oms_quiet(ini) && t1 > t0)
		rate = (double)(done - WARM) * size * 8 / (double)(t1 - t0);
out:
	if (ini)
		oms_ctx_destroy(ini);
	if (tgt)
		oms_ctx_destroy(tgt);
	if (emu)
		oms_emu_destroy(emu);
	free(mem);
	free(dst);
	return rate;
}

/* @got within @rel of @want */
#define EXPECT_NEAR_REL(want, got, rel) do {				\
		EXPECT_GE((got), (want) * (1 - (rel)));			\
		EXPECT_LE((got), (want) * (1 + (rel)));			\
	} while (0)

TEST(fig5_arithmetic)
{
	static const uint32_t sizes[] = { 64, 4096 };

	for (int i = 0; i < 2; i++) {
		uint32_t s = sizes[i];
		double un = gbps(OMS_ORDER_RC, OMS_READ_RELAXED, s);
		double nic = gbps(OMS_ORDER_NIC, OMS_READ_ACQUIRE, s);
		double rc = gbps(OMS_ORDER_RC, OMS_READ_ACQUIRE, s);
		double opt = gbps(OMS_ORDER_RC_OPT, OMS_READ_ACQUIRE, s);

		TH_LOG("%u B: unordered %.2f, NIC %.3f, RC %.3f, RC-opt %.2f "
		       "Gb/s (model time)", s, un, nic, rc, opt);
		ASSERT_GT(un, 0);
		ASSERT_GT(nic, 0);
		ASSERT_GT(rc, 0);
		ASSERT_GT(opt, 0);
		/* the link's rate, within its framing */
		EXPECT_NEAR_REL(LINK_GBPS, un, 0.02);
		EXPECT_NEAR_REL(LINK_GBPS, opt, 0.02);
		/* one line at a time: exactly the model's per-line cost */
		EXPECT_NEAR_REL(512 / RC_LINE_NS, rc, 0.02);
		EXPECT_NEAR_REL(512 / NIC_LINE_NS, nic, 0.02);
	}
}

/*
 * The responder NIC's message rate (lat_req_ns): 64 B reads complete at
 * exactly one per service time, where without it they are link bound.
 */
TEST(nic_request_rate)
{
	const double req_ns = 100;
	double free_rate, capped;

	nic_req_ns = 0;
	free_rate = gbps(OMS_ORDER_RC_OPT, OMS_READ_ACQUIRE, 64) * 1e3 /
		    (64 * 8);
	nic_req_ns = (uint32_t)req_ns;
	capped = gbps(OMS_ORDER_RC_OPT, OMS_READ_ACQUIRE, 64) * 1e3 /
		 (64 * 8);
	nic_req_ns = 0;
	TH_LOG("64 B acquire reads: %.2f M/s free, %.3f M/s with a %.0f ns "
	       "NIC service time (model time)", free_rate, capped, req_ns);
	ASSERT_GT(capped, 0);
	EXPECT_NEAR_REL(1e3 / req_ns, capped, 0.005);
	EXPECT_NEAR_REL(LINK_GBPS * 1e3 / 512, free_rate, 0.02);
}

TEST_HARNESS_MAIN
