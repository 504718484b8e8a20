// SPDX-License-Identifier: MIT
/*
 * OMS_EMU_F_CHARGE_CPU, through the public headers: a client that burns
 * its own CPU time before each get (10 us or 30 us at least, measured
 * each time) loses that much model time per get with the charge on, and none with it off; the time it
 * spends inside liboms waiting for its get is not charged.  A charge
 * without a latency model is refused.
 *
 * Model time is the device's own (oms_emu.h): each get is timed between
 * two readings of the client thread's model time, so a busy machine that
 * deschedules the device or the client changes nothing here.  The CPU
 * burnt is the thread's own CPU clock, which does not run while the
 * thread waits for a core either: the figures are asserted once, every
 * get of a run, with no retry.
 */
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <time.h>

#include "harness.h"
#include "oms.h"
#include "oms_emu.h"

#define ITERS	40
#define US	1000.0

static uint64_t cpu_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

/*
 * The client's own work: at least @ns of this thread's CPU time; returns
 * how much it took.  It overshoots by the last read of the clock, and by
 * more when the kernel handles an interrupt on the thread's time near its
 * end (the kernel charges it to the thread that runs: on a busy VM a
 * rescheduling interrupt is tens of us), so what was burnt is measured,
 * not assumed.
 */
static uint64_t burn(uint64_t ns)
{
	uint64_t t0 = cpu_ns(), t;

	while ((t = cpu_ns()) - t0 < ns)
		;
	return t - t0;
}

struct per_get {
	double least, median;	/* model ns per get from before the burn to
				 * after the get's quiet, less the CPU the
				 * burn took with the charge on */
};

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

/* Model ns per get of a client that burns @burn_ns before each, on a
 * device with the latency model and the charge @on or off; least < 0:
 * failed. */
static struct per_get model_per_get(int on, uint64_t burn_ns)
{
	struct oms_emu_attr ea = {
		.size = sizeof(ea),
		.comp_mask = OMS_EMU_ATTR_LATENCY | OMS_EMU_ATTR_FLAGS,
		.lat_bus_ns = 200, .lat_rc_ns = 17, .lat_mem_ns = 50,
		.link_gbps = 100, .time_scale = 1,
		.flags = on ? OMS_EMU_F_CHARGE_CPU : 0,
	};
	struct oms_ctx_attr a = oms_ctx_attr_default();
	static uint64_t mem[64], buf[8];
	struct oms_ctx *srv = NULL, *cli = NULL;
	struct per_get pg = { .least = -1, .median = -1 };
	double t[ITERS];
	struct oms_emu *e = NULL;
	struct oms_mr *mr = NULL;
	struct oms_rmr r;

	if (oms_emu_create(&ea, &e))
		return pg;
	a.comp_mask = OMS_CTX_ATTR_NODE | OMS_CTX_ATTR_EMU;
	a.emu = e;
	a.node = 1;
	if (oms_ctx_create(&a, &srv))
		goto out;
	a.node = 0;
	if (oms_ctx_create(&a, &cli) ||
	    oms_mr_reg(srv, mem, sizeof(mem), OMS_ACCESS_ALL, &mr) ||
	    oms_mr_remote(mr, &r))
		goto out;
	/* one get first: the first touch of everything is not timed */
	if (oms_get(cli, buf, &r, 0, 64, 0) || oms_quiet(cli))
		goto out;
	for (int i = 0; i < ITERS; i++) {
		uint64_t t0, t1;

		uint64_t burnt;

		oms_emu_thread_time(e, &t0);
		burnt = burn(burn_ns);
		if (oms_get(cli, buf, &r, 64, 64, OMS_READ_ACQUIRE) ||
		    oms_quiet(cli))
			goto out;
		oms_emu_thread_time(e, &t1);
		t[i] = (double)(t1 - t0) - (on ? (double)burnt : 0);
	}
	qsort(t, ITERS, sizeof(t[0]), cmp_double);
	pg.least = t[0];
	pg.median = t[ITERS / 2];
out:
	if (mr)
		oms_mr_dereg(mr);
	if (cli)
		oms_ctx_destroy(cli);
	if (srv)
		oms_ctx_destroy(srv);
	oms_emu_destroy(e);
	return pg;
}

/*
 * Off: every get takes its model latency alone, whatever was burnt.  On:
 * that latency plus the CPU the burn took, never less, and typically no
 * more than a read of the CPU clock and the loop's own few instructions
 * beyond it: time spent waiting in liboms (the get's round trip, in wall
 * time thousands of times its model time on this machine) is not
 * charged.  What the burn took is its own measurement (an interrupt the
 * kernel handled on the thread's time inside it is the thread's CPU time
 * too).  The median, not the most: a get whose client the kernel charged
 * for an interrupt's work outside the burn pays for it.
 */
TEST(client_cpu_costs_model_time_with_the_charge_only)
{
	const uint64_t lo = 10000, hi = 30000;	/* ns of CPU per get */
	struct per_get off_lo = model_per_get(0, lo);
	struct per_get off_hi = model_per_get(0, hi);
	struct per_get on_lo = model_per_get(1, lo);
	struct per_get on_hi = model_per_get(1, hi);
	double lat = off_lo.least;

	ASSERT_GT(off_lo.least, 0);
	ASSERT_GT(off_hi.least, 0);
	ASSERT_GT(on_lo.least, 0);
	ASSERT_GT(on_hi.least, 0);
	TH_LOG("model us per get, least and median: charge off %.3f, %.3f "
	       "(%.0f us burnt), %.3f, %.3f (%.0f us); on, less what was "
	       "burnt: %.3f, %.3f and %.3f, %.3f", off_lo.least / US,
	       off_lo.median / US, lo / US, off_hi.least / US,
	       off_hi.median / US, hi / US, on_lo.least / US,
	       on_lo.median / US, on_hi.least / US, on_hi.median / US);
	/* off: the get's own latency, every time */
	EXPECT_EQ(off_lo.least, off_lo.median);
	EXPECT_EQ(off_lo.least, off_hi.least);
	EXPECT_EQ(off_hi.least, off_hi.median);
	/* on: what was burnt is charged, never less, hardly more */
	EXPECT_GE(on_lo.least, lat);
	EXPECT_GE(on_hi.least, lat);
	EXPECT_LE(on_lo.median, lat + 5 * US);
	EXPECT_LE(on_hi.median, lat + 5 * US);
}

/* The charge needs a clock to charge on: refused without the latency
 * model, with nothing made. */
TEST(charge_without_a_model_is_refused)
{
	struct oms_emu *const sentinel = (struct oms_emu *)&sentinel;
	struct oms_emu *e = sentinel;
	struct oms_emu_attr ea = {
		.size = sizeof(ea), .comp_mask = OMS_EMU_ATTR_FLAGS,
		.flags = OMS_EMU_F_CHARGE_CPU,
	};

	EXPECT_EQ(-EINVAL, oms_emu_create(&ea, &e));
	EXPECT_EQ(sentinel, e);
	ea.comp_mask |= OMS_EMU_ATTR_LATENCY;
	ea.link_gbps = 100;
	ea.time_scale = 0;
	EXPECT_EQ(-EINVAL, oms_emu_create(&ea, &e));
	EXPECT_EQ(sentinel, e);
	ea.time_scale = 1;
	ASSERT_EQ(0, oms_emu_create(&ea, &e));
	EXPECT_EQ(0, oms_emu_destroy(e));
}

TEST_HARNESS_MAIN
