// SPDX-License-Identifier: MIT
/*
 * A region slot of the emulated device given to a new registration while
 * an operation admitted for the slot's previous registration still waits
 * to execute: its key was checked at intake, then the region was
 * deregistered and the slot reused before the operation ran.  Such a put,
 * atomic or get must fail with -EACCES (the revoked-region error of
 * docs/ordering.md, "Failures") and touch neither the new region nor, for
 * a get, the initiator's buffer: region slots carry a generation that is
 * checked when the operation executes, not only the key at intake.
 *
 * The device thread is parked and the test steps the device by hand, so
 * "after intake, before execution" is exact; the control (no reuse) shows
 * the same steps do perform the operation.
 *
 * A test of internals (INTERNAL_TESTS in the Makefile): it includes
 * lib/ headers to reach what the public API does not show.
 */
#include <errno.h>
#include <string.h>
#include <unistd.h>

#include "harness.h"
#include "oms.h"
#include "oms_emu.h"
#include "emu/emu.h"

#define WORDS 8
#define OLD_FILL 0x11
#define NEW_FILL 0xa5
#define DST_FILL 0x5c

FIXTURE(reuse)
{
	struct oms_emu *dev;
	struct emu_queue *q;		/* the initiator: node 0 */
	struct oms_ctx *owner;		/* node 1 */
	struct oms_mr *mr;
	struct oms_rmr old;		/* the first registration */
	uint64_t oldbuf[WORDS], newbuf[WORDS], dst[WORDS];
};

/* As t_emu_ctx() of helpers.c (a 60 s liveness timeout: the device is
 * parked at times), on @dev. */
static struct oms_ctx *ctx_on(struct oms_emu *dev, uint32_t node)
{
	struct oms_ctx_attr a = oms_ctx_attr_default();
	struct oms_ctx *ctx = NULL;

	a.comp_mask = OMS_CTX_ATTR_BACKEND | OMS_CTX_ATTR_NODE |
		      OMS_CTX_ATTR_TIMEOUT | OMS_CTX_ATTR_EMU;
	a.backend = OMS_BACKEND_EMU;
	a.node = node;
	a.timeout_ms = 60000;
	a.emu = dev;
	return oms_ctx_create(&a, &ctx) ? NULL : ctx;
}

FIXTURE_SETUP(reuse)
{
	memset(self->oldbuf, OLD_FILL, sizeof(self->oldbuf));
	memset(self->newbuf, NEW_FILL, sizeof(self->newbuf));
	memset(self->dst, DST_FILL, sizeof(self->dst));
	/* The test's own device: it parks the thread and steps it. */
	ASSERT_EQ(0, oms_emu_create(NULL, &self->dev));
	ASSERT_NE(NULL, self->dev);
	self->owner = ctx_on(self->dev, 1);
	ASSERT_NE(NULL, self->owner);
	ASSERT_EQ(0, emu_queue_open(self->dev, 0, 8, &self->q));
	ASSERT_EQ(0, oms_mr_reg(self->owner, self->oldbuf,
				sizeof(self->oldbuf), OMS_ACCESS_ALL,
				&self->mr));
	ASSERT_EQ(0, oms_mr_remote(self->mr, &self->old));
}

FIXTURE_TEARDOWN(reuse)
{
	emu_dev_freeze(self->dev, 0);
	emu_queue_close(self->dev, self->q);
	oms_ctx_destroy(self->owner);
	/* after its context: a device refuses to go while one lives */
	oms_emu_destroy(self->dev);
}

/*
 * Stop the device thread between steps: it checks the freeze only at the
 * top of its loop, so wait until its heartbeat stands still.
 */
static void park(struct oms_emu *dev)
{
	uint64_t hb;

	emu_dev_freeze(dev, 1);
	do {
		hb = __atomic_load_n(&dev->heartbeat, __ATOMIC_ACQUIRE);
		usleep(5000);
	} while (hb != __atomic_load_n(&dev->heartbeat, __ATOMIC_ACQUIRE));
}

/* Post and ring @wr, and let the device take it (key checked here). */
static void intake(struct oms_emu *dev, struct emu_queue *q,
		   const struct oms_wr *wr)
{
	emu_q_post(q, wr);
	emu_q_ring(q, 1);
	pthread_mutex_lock(&dev->lock);
	emu_intake(dev, q);
	pthread_mutex_unlock(&dev->lock);
}

/* Step the device by hand until @q's one operation completes: its status,
 * or 1 if it never does. */
static int execute(struct oms_emu *dev, struct emu_queue *q)
{
	struct oms_wc wc;

	for (int step = 0; step < 100; step++) {
		pthread_mutex_lock(&dev->lock);
		emu_exec_pool(dev, q);
		emu_reads_step(dev);
		emu_deliver_acks(dev, q);
		pthread_mutex_unlock(&dev->lock);
		if (emu_q_poll(q, &wc, 1, NULL) == 1)
			return wc.status;
	}
	return 1;
}

/* The old region goes and a new one takes its slot. */
static int reuse_slot(struct __test_metadata *_metadata,
		      FIXTURE_DATA(reuse) *self)
{
	struct oms_rmr now;

	if (oms_mr_dereg(self->mr) ||
	    oms_mr_reg(self->owner, self->newbuf, sizeof(self->newbuf),
		       OMS_ACCESS_ALL, &self->mr) ||
	    oms_mr_remote(self->mr, &now))
		return -1;
	/* the premise: the very slot the operation named */
	EXPECT_EQ(self->old.region, now.region);
	return now.region == self->old.region ? 0 : -1;
}

static int all_bytes(const uint64_t *p, int fill)
{
	const unsigned char *b = (const unsigned char *)p;

	for (size_t i = 0; i < WORDS * sizeof(*p); i++)
		if (b[i] != fill)
			return 0;
	return 1;
}

static struct oms_wr op_on(const struct oms_rmr *r, uint8_t op, void *local)
{
	return (struct oms_wr){
		.op = op, .dest = r->dest, .region = r->region, .key = r->key,
		.off = 8, .len = 8, .local = (uintptr_t)local, .a1 = 1,
	};
}

/*
 * Admit @op (key checked) on the first registration; if @started, let it
 * leave the pool too (a get is then in the read engine); then, unless
 * @keep, give the slot to a new registration; then let it execute.
 * Returns its completion status (1: none; -1: the slot was not reused).
 */
static int across_reuse(struct __test_metadata *_metadata,
			FIXTURE_DATA(reuse) *self, uint8_t op, void *local,
			int started, int keep)
{
	struct oms_wr wr = op_on(&self->old, op, local);

	park(self->dev);
	intake(self->dev, self->q, &wr);
	if (started) {
		pthread_mutex_lock(&self->dev->lock);
		emu_exec_pool(self->dev, self->q);
		pthread_mutex_unlock(&self->dev->lock);
	}
	if (!keep && reuse_slot(_metadata, self))
		return -1;
	return execute(self->dev, self->q);
}

TEST_F(reuse, control_put_without_reuse_is_performed)
{
	uint64_t v = 0x0102030405060708ull;

	ASSERT_EQ(0, across_reuse(_metadata, self, OMS_WR_PUT, &v, 0, 1));
	EXPECT_EQ(v, self->oldbuf[1]);
}

TEST_F(reuse, put_admitted_before_slot_reuse_fails)
{
	uint64_t v = 0x0102030405060708ull;

	EXPECT_EQ(-EACCES, across_reuse(_metadata, self, OMS_WR_PUT, &v, 0,
					0));
	EXPECT_TRUE(all_bytes(self->newbuf, NEW_FILL));
	EXPECT_TRUE(all_bytes(self->oldbuf, OLD_FILL));
}

TEST_F(reuse, atomic_admitted_before_slot_reuse_fails)
{
	EXPECT_EQ(-EACCES, across_reuse(_metadata, self, OMS_WR_FADD, NULL, 0,
					0));
	EXPECT_TRUE(all_bytes(self->newbuf, NEW_FILL));
}

TEST_F(reuse, get_admitted_before_slot_reuse_fails)
{
	EXPECT_EQ(-EACCES, across_reuse(_metadata, self, OMS_WR_GET, self->dst,
					0, 0));
	/* nothing of the new region reached the initiator */
	EXPECT_TRUE(all_bytes(self->dst, DST_FILL));
}

TEST_F(reuse, get_reading_across_slot_reuse_fails)
{
	/* already handed to the read engine when the slot changes hands */
	EXPECT_EQ(-EACCES, across_reuse(_metadata, self, OMS_WR_GET, self->dst,
					1, 0));
	EXPECT_TRUE(all_bytes(self->dst, DST_FILL));
}

TEST_HARNESS_MAIN
