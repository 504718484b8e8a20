// SPDX-License-Identifier: MIT
/*
 * The emulated device's latency model reproduces the shape of seed 004's
 * Fig 5 (what bench/ordered_read measures in full): with Table 2
 * latencies, speculative ordering at the root complex (RC-opt) reads as
 * fast as unordered reads, ordering at the NIC is far slower, and the
 * blocking root complex is in between.  Short runs, generous bounds: this
 * guards the model, the benchmark gives the figures.  The bounds are
 * separations of 2x or more, because the wall clock also measures the
 * CPU: on a loaded machine under ASan the device thread falls behind the
 * model and every mode slows (RC-opt vs unordered, about 1.00x in
 * bench/ordered_read, has been seen at 0.87x here), while the ordering
 * costs it guards are round trips that no CPU speed hides.
 */
#include <sched.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "harness.h"
#include "oms.h"
#include "oms_emu.h"

#define REGION (256u << 10)

/*
 * Wall ns per model ns.  The stop-and-wait modes (NIC, RC) need the
 * device's thread at every read: at 200, a machine whose two cores were
 * busy with a second make check and a kernel build starved them for
 * minutes, so every read's wake-up, milliseconds late, read as that many
 * microseconds of model time.  At 2000 a wake-up a millisecond late is
 * half a model microsecond.  Under ASan the device thread does each step
 * about three times slower: three times the wall time again.  The figures
 * are model time, so the shape asked for is the same.
 */
#if defined(__SANITIZE_ADDRESS__)
#define TIME_SCALE 6000
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define TIME_SCALE 6000
#endif
#endif
#ifndef TIME_SCALE
#define TIME_SCALE 2000
#endif

static uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

/* Responder NIC service time per request for the next runs; 0 = none. */
static uint32_t nic_req_ns;

/*
 * Reads kept in flight.  The parallel modes (relaxed, RC-opt) need many to
 * fill the link's bandwidth-delay product.  The stop-and-wait modes (NIC,
 * RC) serve one line at a time: a few lines beyond the bus round trip keep
 * them busy, and more would only make the final quiet wait for each of
 * them in turn (at 4 KiB, hundreds of model microseconds apiece).
 */
#define LINES_IN_FLIGHT_SERIAL	32

static int reads_in_flight(uint32_t order, unsigned flags, uint32_t size)
{
	uint32_t lines = (size + 63) / 64;

	if (flags == OMS_READ_RELAXED || order == OMS_ORDER_RC_OPT)
		return 256;
	return lines >= LINES_IN_FLIGHT_SERIAL / 2 ? 2 :
	       (int)(LINES_IN_FLIGHT_SERIAL / lines);
}

/* Model-time Gb/s of reads of @size with @order and @flags. */
static double gbps_once(uint32_t order, unsigned flags, uint32_t size,
		   uint64_t wall_ms)
{
	struct oms_ctx_attr a = oms_ctx_attr_default();
	uint8_t *mem = aligned_alloc(64, REGION), *dst = aligned_alloc(64, REGION);
	struct oms_ctx *ini, *tgt;
	struct oms_emu *emu;
	struct oms_mr *mr;
	struct oms_rmr r;
	uint64_t issued = 0, off = 0, t0, t1, done = 0;
	int out = 0, window = reads_in_flight(order, flags, size);
	const uint32_t scale = TIME_SCALE;
	struct oms_emu_attr ea = {
		.size = sizeof(ea),
		.comp_mask = OMS_EMU_ATTR_LATENCY | OMS_EMU_ATTR_READ_ORDER |
			     OMS_EMU_ATTR_NIC_RATE,
		.lat_req_ns = nic_req_ns,
		.lat_bus_ns = 200, .lat_rc_ns = 17, .lat_mem_ns = 50,
		.link_gbps = 100, .time_scale = scale,
		.read_order = order, .rlsq_entries = 256,
	};

	if (oms_emu_create(&ea, &emu))
		return -1;
	a.comp_mask = OMS_CTX_ATTR_EMU | OMS_CTX_ATTR_NODE;
	a.emu = emu;
	memset(mem, 3, REGION);
	if (oms_ctx_create(&a, &ini))
		return -1;
	a.node = 1;
	if (oms_ctx_create(&a, &tgt) ||
	    oms_mr_reg(tgt, mem, REGION, OMS_ACCESS_ALL, &mr) ||
	    oms_mr_remote(mr, &r))
		return -1;
	t0 = now_ns();
	do {
		while (out < window) {
			if (oms_get(ini, dst + off, &r, off, size, flags))
				return -1;
			off = (off + size) % REGION;
			issued++;
			out++;
		}
		out = oms_progress(ini);
		if (out < 0)
			return -1;
		done = issued - (uint64_t)out;
		sched_yield();
		t1 = now_ns();
	} while (t1 - t0 < wall_ms * 1000000ull || done < 8);
	oms_quiet(ini);
	oms_ctx_destroy(ini);
	oms_ctx_destroy(tgt);
	oms_emu_destroy(emu);
	free(mem);
	free(dst);
	return (double)done * size * 8 * scale / (double)(t1 - t0);
}

/* Best of two short runs: the machine is shared and noisy. */
static double gbps(uint32_t order, unsigned flags, uint32_t size,
		   uint64_t wall_ms)
{
	double a = gbps_once(order, flags, size, wall_ms);
	double b = gbps_once(order, flags, size, wall_ms);

	return a > b ? a : b;
}

struct fig5 {
	double un, nic, rc, opt;	/* Gb/s, model time: the best seen */
};

static double best_of(double a, double b)
{
	return a > b ? a : b;
}

/*
 * One more measurement of the four modes at @s, kept as the best of each
 * so far; 1 when the best figures have the shape.  A starved device
 * thread only ever lowers a figure (it loses model time it cannot win
 * back when its reads in flight are capped, as RC-opt's RLSQ caps them),
 * so the best of several measurements is each mode's own rate; a broken
 * model has the wrong shape in its best figures too.
 */
static int shape_holds(struct __test_metadata *_metadata, uint32_t s,
		       struct fig5 *b)
{
	b->un = best_of(b->un, gbps(OMS_ORDER_RC, OMS_READ_RELAXED, s, 60));
	b->nic = best_of(b->nic, gbps(OMS_ORDER_NIC, OMS_READ_ACQUIRE, s, 60));
	b->rc = best_of(b->rc, gbps(OMS_ORDER_RC, OMS_READ_ACQUIRE, s, 60));
	b->opt = best_of(b->opt, gbps(OMS_ORDER_RC_OPT, OMS_READ_ACQUIRE, s,
				      60));
	TH_LOG("%u B, best so far: unordered %.1f, NIC %.2f, RC %.2f, "
	       "RC-opt %.1f Gb/s (model time)", s, b->un, b->nic, b->rc,
	       b->opt);
	return b->un > 0 && b->opt > 0.5 * b->un && b->opt > 2 * b->rc &&
	       b->nic < 0.1 * b->un && b->rc < 0.5 * b->un &&
	       b->rc > 2 * b->nic;
}

/*
 * How long a figure that a starved device thread can miss is measured
 * again: a neighbour that keeps both cores busy (a kernel build beside
 * make check) starves every try of a few seconds, so the tries go on for
 * RETRY_S, with a pause between them for its burst to pass.  A broken
 * model misses every time and fails after RETRY_S.
 */
#define RETRY_S		90
#define RETRY_PAUSE_US	200000

TEST(fig5_shape)
{
	static const uint32_t sizes[] = { 64, 4096 };

	/* warm up: page in, wake the CPUs */
	ASSERT_GT(gbps(OMS_ORDER_RC, OMS_READ_RELAXED, 64, 60), 0);
	for (int i = 0; i < 2; i++) {
		const uint64_t end = now_ns() + RETRY_S * 1000000000ull;
		struct fig5 b = { 0 };

		while (!shape_holds(_metadata, sizes[i], &b)) {
			ASSERT_LT(now_ns(), end)
				TH_LOG("shape not seen in %d s", RETRY_S);
			TH_LOG("shape not seen, measuring again");
			usleep(RETRY_PAUSE_US);
		}
	}
}

/*
 * The responder NIC's message rate (lat_req_ns): small reads can never
 * complete faster than one per service time, in model time, however the
 * CPU runs (an upper bound a starved device thread cannot break), and
 * without the limit the same reads run more than twice as fast.  That
 * second figure is a lower bound a starved device thread can miss (seen
 * under ASan with two make checks on two cores: 12 M/s): it is measured
 * again for up to RETRY_S, as in fig5_shape; a broken model misses every
 * time.
 */
TEST(nic_request_rate)
{
	const double req_ns = 100, mgets_cap = 1e3 / req_ns;
	const uint64_t end = now_ns() + RETRY_S * 1000000000ull;
	double free_rate, capped;

	nic_req_ns = 0;
	for (;;) {
		free_rate = gbps(OMS_ORDER_RC_OPT, OMS_READ_ACQUIRE, 64, 60) *
			    1e3 / (64 * 8);
		if (free_rate > 2 * mgets_cap || now_ns() >= end)
			break;
		TH_LOG("free rate %.2f M/s: measuring again", free_rate);
		usleep(RETRY_PAUSE_US);
	}
	nic_req_ns = (uint32_t)req_ns;
	capped = gbps(OMS_ORDER_RC_OPT, OMS_READ_ACQUIRE, 64, 60) * 1e3 /
		 (64 * 8);
	nic_req_ns = 0;
	TH_LOG("64 B acquire reads: %.2f M/s free, %.2f M/s with a %.0f ns "
	       "NIC service time (cap %.2f M/s)", free_rate, capped, req_ns,
	       mgets_cap);
	ASSERT_GT(capped, 0);
	ASSERT_LE(capped, mgets_cap * 1.01);
	ASSERT_GT(free_rate, 2 * mgets_cap);
}

TEST_HARNESS_MAIN
