// SPDX-License-Identifier: MIT
/*
 * The root complex's read entries (the RLSQ's, seed 004) shared by many
 * queues, checked against the latency model's arithmetic:
 *
 *   NIC ordering: the source orders its own reads, so a queue's ordered
 *     reads wait at its NIC, one at a time, and take no entry while they
 *     wait: eight queues of 1024 ordered lines in all, four times the
 *     entries, read side by side, each as fast as it would alone;
 *   RC ordering: the ordered reads wait in the entries, which go round
 *     the queues a get at a time: the same eight queues side by side, and
 *     another queue's reads that came after a queue's first 64 and before
 *     its next 64 are answered between them, not after both.
 *
 * Without the turns, or with NIC-ordered reads holding entries while they
 * wait, a queue that posts first holds every entry and the others wait
 * for all of its reads.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "harness.h"
#include "oms.h"
#include "oms_emu.h"

#define QUEUES		8
#define GETS		32		/* each queue's, all posted at once */
#define LINES		4		/* 256 B gets */
#define BUS_NS		200u
#define RC_NS		17u
#define MEM_NS		50u
/* NIC ordering: every line is a round trip from the NIC */
#define NIC_LINE_NS	(2 * BUS_NS + RC_NS + MEM_NS)
#define RC_LINE_NS	(RC_NS + MEM_NS)
/* a 256 B response on the responder's 100 Gb/s link, ps */
#define LINK_PS		(LINES * 64 * 8 * 10)

struct rig {
	struct oms_emu *emu;
	struct oms_ctx *srv, *q[QUEUES];
	struct oms_mr *mr;
	struct oms_rmr rmr;
	uint8_t *mem;
	uint8_t buf[QUEUES][2 * 64][LINES * 64];
};

static int rig_open(struct rig *r, uint32_t order)
{
	struct oms_emu_attr ea = {
		.size = sizeof(ea),
		.comp_mask = OMS_EMU_ATTR_LATENCY | OMS_EMU_ATTR_READ_ORDER,
		.lat_bus_ns = BUS_NS, .lat_rc_ns = RC_NS, .lat_mem_ns = MEM_NS,
		.link_gbps = 100, .time_scale = 1,
		.read_order = order, .rlsq_entries = 256,
	};
	struct oms_ctx_attr a = oms_ctx_attr_default();
	int err;

	memset(r, 0, sizeof(*r));
	err = oms_emu_create(&ea, &r->emu);
	a.comp_mask = OMS_CTX_ATTR_EMU | OMS_CTX_ATTR_NODE |
		      OMS_CTX_ATTR_QDEPTH;
	a.emu = r->emu;
	a.queue_depth = 256;
	a.node = 1;
	r->mem = aligned_alloc(4096, 1 << 16);
	if (!err)
		err = r->mem ? oms_ctx_create(&a, &r->srv) : -ENOMEM;
	if (!err)
		err = oms_mr_reg(r->srv, r->mem, 1 << 16, OMS_ACCESS_ALL,
				 &r->mr);
	if (!err)
		err = oms_mr_remote(r->mr, &r->rmr);
	a.node = 0;
	for (uint32_t i = 0; i < QUEUES && !err; i++)
		err = oms_ctx_create(&a, &r->q[i]);
	return err;
}

static void rig_close(struct rig *r)
{
	for (uint32_t i = 0; i < QUEUES; i++)
		if (r->q[i])
			oms_ctx_destroy(r->q[i]);
	if (r->mr)
		oms_mr_dereg(r->mr);
	if (r->srv)
		oms_ctx_destroy(r->srv);
	if (r->emu)
		oms_emu_destroy(r->emu);
	free(r->mem);
}

static uint64_t now_ns(struct rig *r)
{
	uint64_t t = 0;

	oms_emu_thread_time(r->emu, &t);
	return t;
}

/* @n ordered 256 B gets on queue @i, from get number @from on. */
static int post(struct rig *r, uint32_t i, uint32_t from, uint32_t n)
{
	int err = 0;

	for (uint32_t k = from; k < from + n && !err; k++)
		err = oms_get(r->q[i], r->buf[i][k], &r->rmr,
			      (uint64_t)(k % 64) * LINES * 64, LINES * 64,
			      OMS_READ_ACQUIRE);
	return err;
}

/*
 * @QUEUES queues, each @GETS ordered gets of four lines, all posted at
 * once, under read ordering @order; model ns until every one has
 * completed, or 0.  @line_ns: what one line costs its queue.
 */
static uint64_t side_by_side(uint32_t order, uint64_t line_ns)
{
	static struct rig r;
	const uint64_t alone = (uint64_t)GETS * LINES * line_ns;
	uint64_t t0, t = 0;
	int err = rig_open(&r, order);

	t0 = now_ns(&r);
	for (uint32_t i = 0; i < QUEUES && !err; i++)
		err = post(&r, i, 0, GETS);
	for (uint32_t i = 0; i < QUEUES && !err; i++)
		err = oms_quiet(r.q[i]);
	if (!err)
		t = now_ns(&r) - t0;
	fprintf(stderr, "# %s ordering, %u queues x %u ordered 256 B gets (%u lines, "
	       "256 entries): %llu model ns; one queue's lines one at a time: "
	       "%llu ns\n", order == OMS_ORDER_NIC ? "NIC" : "RC", QUEUES, GETS,
	       QUEUES * GETS * LINES, (unsigned long long)t,
	       (unsigned long long)alone);
	rig_close(&r);
	return t;
}

/* NIC ordering: each queue's lines go one at a time, the queues side by
 * side, each as fast as alone; the queues' last responses leave together
 * and share the responder's link. */
TEST(nic_ordered_queues_side_by_side)
{
	const uint64_t want = (uint64_t)GETS * LINES * NIC_LINE_NS +
			      QUEUES * LINK_PS / 1000;
	uint64_t t = side_by_side(OMS_ORDER_NIC, NIC_LINE_NS);

	EXPECT_GE(t, want);
	EXPECT_LE(t, want + 1);
}

/* RC ordering: the waiting lines hold entries, four times more lines
 * than entries; the entries go round the queues, so each queue still has
 * its next line at the root complex when the one before it is done.  On
 * top of the lines: the request's bus crossing, the last responses on
 * the link, the bus back. */
TEST(rc_ordered_queues_side_by_side)
{
	const uint64_t want = BUS_NS + (uint64_t)GETS * LINES * RC_LINE_NS +
			      QUEUES * LINK_PS / 1000 + BUS_NS;
	uint64_t t = side_by_side(OMS_ORDER_RC, RC_LINE_NS);

	EXPECT_GE(t, want);
	EXPECT_LE(t, want + 1);
}

/* The thread's model time moves on by a put's round trip (a put takes
 * no read entry). */
static int tick(struct rig *r)
{
	static uint64_t word;
	int err = oms_put(r->q[QUEUES - 1], &r->rmr, 1 << 15, &word,
			  sizeof(word), OMS_STORE_UNORDERED);

	return err ? err : oms_quiet(r->q[QUEUES - 1]);
}

/*
 * RC ordering, where ordered reads wait in the entries: queue 0 posts 64
 * ordered gets of four lines (every entry); a little later queue 1 posts
 * 64; later still queue 0 posts 64 more.  The entries queue 0's first
 * reads free go to both queues in turn, so queue 1 is done
 * about a batch after queue 0's first, and queue 0 about a batch after
 * that; if queue 0's later reads could take them first, queue 1 would
 * wait for both of queue 0's batches.
 */
TEST(rc_ordered_entries_go_round)
{
	static struct rig r;
	const uint64_t batch = 64ull * LINES * RC_LINE_NS;
	uint64_t t0, t_b, t_a;

	ASSERT_EQ(0, rig_open(&r, OMS_ORDER_RC));
	t0 = now_ns(&r);
	ASSERT_EQ(0, post(&r, 0, 0, 64));
	ASSERT_EQ(0, tick(&r));
	ASSERT_EQ(0, post(&r, 1, 0, 64));
	ASSERT_EQ(0, tick(&r));
	ASSERT_EQ(0, post(&r, 0, 64, 64));
	ASSERT_EQ(0, oms_quiet(r.q[1]));
	t_b = now_ns(&r);
	ASSERT_EQ(0, oms_quiet(r.q[0]));
	t_a = now_ns(&r);
	TH_LOG("RC ordering, 64 gets of 256 B on queue 0, then 64 on queue "
	       "1, then 64 on queue 0: queue 1 done at %llu model ns, queue 0 "
	       "at %llu (%llu ns a batch's lines one after another)",
	       (unsigned long long)(t_b - t0), (unsigned long long)(t_a - t0),
	       (unsigned long long)batch);
	EXPECT_LE(t_b - t0, batch + 2000);
	EXPECT_GE(t_a - t0, 2 * batch);
	EXPECT_LE(t_a - t0, 2 * batch + 2000);
	rig_close(&r);
}

TEST_HARNESS_MAIN
