// SPDX-License-Identifier: MIT
/*
 * Bad input to the emulated device: out-of-range addresses, wrong keys,
 * wrong destinations, missing rights, oversize and malformed commands, a
 * full submission ring and a bogus doorbell.  Each becomes an error
 * completion (or a refused call); target memory and the guard bytes around
 * the region are untouched; the device keeps running and serves good
 * operations afterwards.
 *
 * A test of internals (INTERNAL_TESTS in the Makefile): it includes
 * lib/ headers to reach what the public API does not show.
 */
#include <errno.h>
#include <sched.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "harness.h"
#include "oms.h"
#include "oms_emu.h"
#include "emu/emu.h"

#define WORDS 64
#define GUARD 16

FIXTURE(dev)
{
	struct oms_emu *emu;
	struct oms_ctx *ini, *tgt;
	struct oms_mr *mr, *ro;
	struct oms_rmr r, rro;
	uint64_t buf[GUARD + WORDS + GUARD];
	uint64_t robuf[8];
};

FIXTURE_SETUP(dev)
{
	struct oms_ctx_attr a = oms_ctx_attr_default();
	struct oms_emu_attr ea = {
		.size = sizeof(ea), .comp_mask = OMS_EMU_ATTR_CHAOS,
		.chaos_seed = 0xbad,
	};

	/* The test's own device: raw queues and freezes below reach it. */
	ASSERT_EQ(0, oms_emu_create(&ea, &self->emu));
	a.comp_mask = OMS_CTX_ATTR_NODE | OMS_CTX_ATTR_EMU;
	a.emu = self->emu;
	ASSERT_EQ(0, oms_ctx_create(&a, &self->ini));
	a.node = 1;
	ASSERT_EQ(0, oms_ctx_create(&a, &self->tgt));
	memset(self->buf, 0x5c, sizeof(self->buf));
	memset(self->robuf, 0x5c, sizeof(self->robuf));
	ASSERT_EQ(0, oms_mr_reg(self->tgt, self->buf + GUARD, WORDS * 8,
				OMS_ACCESS_ALL, &self->mr));
	ASSERT_EQ(0, oms_mr_remote(self->mr, &self->r));
	ASSERT_EQ(0, oms_mr_reg(self->tgt, self->robuf, sizeof(self->robuf),
				OMS_ACCESS_REMOTE_READ, &self->ro));
	ASSERT_EQ(0, oms_mr_remote(self->ro, &self->rro));
}

FIXTURE_TEARDOWN(dev)
{
	oms_ctx_destroy(self->ini);
	oms_ctx_destroy(self->tgt);
	/* after its contexts: a device refuses to go while one lives */
	oms_emu_destroy(self->emu);
}

static int untouched(const uint64_t *p, size_t n)
{
	for (size_t i = 0; i < n; i++)
		if (p[i] != 0x5c5c5c5c5c5c5c5cull)
			return 0;
	return 1;
}

/* After the bad ones, a good put and get still work. */
static int still_serves(struct oms_ctx *ini, const struct oms_rmr *r)
{
	uint64_t v = 77, got = 0;

	if (oms_put(ini, r, 0, &v, 8, OMS_STORE_STRONG) ||
	    oms_fence(ini, r->dest) ||
	    oms_get(ini, &got, r, 0, 8, OMS_READ_ACQUIRE) || oms_quiet(ini))
		return 0;
	return got == 77;
}

TEST_F(dev, out_of_range_addresses)
{
	struct oms_rmr far = self->r;
	uint64_t v = 1, old, got[4];

	far.len = 1 << 20;
	ASSERT_EQ(0, oms_put(self->ini, &far, WORDS * 8, &v, 8,
			     OMS_STORE_WEAK));
	ASSERT_EQ(-EFAULT, oms_quiet(self->ini));
	/* a strong store now would follow the failure: resume first */
	ASSERT_EQ(0, oms_ctx_resume(self->ini));
	ASSERT_EQ(0, oms_put(self->ini, &far, WORDS * 8 - 8, got, 16,
			     OMS_STORE_STRONG));
	ASSERT_EQ(-EFAULT, oms_quiet(self->ini));
	ASSERT_EQ(0, oms_ctx_resume(self->ini));
	ASSERT_EQ(0, oms_get(self->ini, got, &far, WORDS * 8, 8, 0));
	ASSERT_EQ(-EFAULT, oms_quiet(self->ini));
	ASSERT_EQ(0, oms_atomic_fadd(self->ini, &far, 4096, 1, &old));
	ASSERT_EQ(-EFAULT, oms_quiet(self->ini));
	ASSERT_TRUE(untouched(self->buf, GUARD + WORDS + GUARD));
	ASSERT_EQ(0, oms_ctx_resume(self->ini));
	ASSERT_TRUE(still_serves(self->ini, &self->r));
	ASSERT_TRUE(untouched(self->buf, GUARD));
	ASSERT_TRUE(untouched(self->buf + GUARD + WORDS, GUARD));
}

TEST_F(dev, wrong_keys_destinations_rights)
{
	struct oms_stats st = { .size = sizeof(st) };
	struct oms_rmr bad = self->r;
	uint64_t v = 1;

	bad.key++;
	ASSERT_EQ(0, oms_put(self->ini, &bad, 0, &v, 8, OMS_STORE_WEAK));
	ASSERT_EQ(-EACCES, oms_quiet(self->ini));
	bad = self->r;
	bad.region = 1000;
	ASSERT_EQ(0, oms_put(self->ini, &bad, 0, &v, 8, OMS_STORE_WEAK));
	ASSERT_EQ(-EACCES, oms_quiet(self->ini));
	bad = self->r;
	bad.dest = 3;			/* the region lives on node 1 */
	ASSERT_EQ(0, oms_put(self->ini, &bad, 0, &v, 8, OMS_STORE_WEAK));
	ASSERT_EQ(-EFAULT, oms_quiet(self->ini));
	ASSERT_EQ(0, oms_put(self->ini, &self->rro, 0, &v, 8,
			     OMS_STORE_WEAK));
	ASSERT_EQ(-EPERM, oms_quiet(self->ini));
	ASSERT_EQ(0, oms_atomic_cas(self->ini, &self->rro, 0, 0, 1, NULL));
	ASSERT_EQ(-EPERM, oms_quiet(self->ini));
	ASSERT_EQ(0, oms_ctx_stats(self->ini, &st));
	ASSERT_EQ(2, st.key_drops);
	ASSERT_EQ(0, st.outstanding);
	ASSERT_TRUE(untouched(self->buf, GUARD + WORDS + GUARD));
	ASSERT_TRUE(untouched(self->robuf, 8));
	ASSERT_EQ(0, oms_ctx_resume(self->ini));
	ASSERT_TRUE(still_serves(self->ini, &self->r));
}

static uint8_t huge[2 << 20];

/* Raw commands straight into a device queue. */
static int raw(struct emu_queue *q, const struct oms_wr *wr, struct oms_wc *wc)
{
	int n = 0;

	if (emu_q_post(q, wr) || emu_q_ring(q, 1))
		return -1;
	for (int spin = 0; !n && spin < 2000000; spin++) {
		n = emu_q_poll(q, wc, 1, NULL);
		if (!n)
			sched_yield();
	}
	return n == 1 ? 0 : -1;
}

TEST_F(dev, oversize_and_malformed_commands)
{
	struct emu_queue *q;
	struct oms_rmr big;
	struct oms_wc wc;
	uint64_t v = 9;
	struct oms_wr wr = {
		.op = OMS_WR_PUT, .dest = self->r.dest, .region = self->r.region,
		.key = self->r.key, .len = 8, .local = (uintptr_t)&v,
	};

	ASSERT_EQ(0, emu_queue_open(self->emu, 0, 8, &q));
	wr.len = EMU_MAX_OP + 1;
	ASSERT_EQ(0, raw(q, &wr, &wc));
	ASSERT_EQ(-EMSGSIZE, wc.status);
	wr.len = 0;
	ASSERT_EQ(0, raw(q, &wr, &wc));
	ASSERT_EQ(-EMSGSIZE, wc.status);
	wr.len = 8;
	wr.op = 0x77;
	ASSERT_EQ(0, raw(q, &wr, &wc));
	ASSERT_EQ(-EINVAL, wc.status);
	wr.op = OMS_WR_FADD;
	wr.off = 4;			/* misaligned atomic */
	ASSERT_EQ(0, raw(q, &wr, &wc));
	ASSERT_EQ(-EINVAL, wc.status);
	wr.op = OMS_WR_PUT;
	wr.off = UINT64_MAX - 4;	/* wraps */
	ASSERT_EQ(0, raw(q, &wr, &wc));
	ASSERT_EQ(-EFAULT, wc.status);
	/* API side: more than the device takes is refused up front */
	big = self->r;
	big.len = sizeof(huge);
	ASSERT_EQ(-EMSGSIZE, oms_put(self->ini, &big, 0, huge, sizeof(huge),
				     OMS_STORE_WEAK));
	ASSERT_TRUE(untouched(self->buf, GUARD + WORDS + GUARD));
	wr.off = 0;
	ASSERT_EQ(0, raw(q, &wr, &wc));
	ASSERT_EQ(0, wc.status);
	ASSERT_EQ(9, self->buf[GUARD]);
	emu_queue_close(self->emu, q);
	ASSERT_TRUE(still_serves(self->ini, &self->r));
}

TEST_F(dev, full_ring_and_bogus_doorbell)
{
	struct oms_emu *d = self->emu;
	struct oms_ctx_attr a = oms_ctx_attr_default();
	struct oms_ctx *nb;
	struct emu_queue *q;
	struct oms_wc wc[16];
	uint64_t v[9] = { 0 };
	int got = 0;

	ASSERT_EQ(0, emu_queue_open(d, 0, 8, &q));
	emu_dev_freeze(d, 1);
	for (uint32_t i = 0; i < 8; i++) {
		struct oms_wr wr = {
			.op = OMS_WR_PUT, .slot = i, .dest = self->r.dest,
			.region = self->r.region, .key = self->r.key,
			.off = 8 * i, .len = 8, .local = (uintptr_t)&v[i],
		};

		ASSERT_EQ(0, emu_q_post(q, &wr));
	}
	ASSERT_EQ(-ENOSPC, emu_q_post(q, &(struct oms_wr){ .op = OMS_WR_NOP }));
	/* A doorbell claiming more than the ring holds is refused. */
	__atomic_store_n(&q->doorbell, 8 + 100, __ATOMIC_RELEASE);
	emu_dev_freeze(d, 0);
	/* Let the device look at the queue: two passes of its loop, however
	 * loaded the machine is (a fixed sleep was not enough). */
	for (uint64_t hb = __atomic_load_n(&d->heartbeat, __ATOMIC_ACQUIRE);
	     __atomic_load_n(&d->heartbeat, __ATOMIC_ACQUIRE) < hb + 3;)
		usleep(1000);
	ASSERT_EQ(0, emu_q_poll(q, wc, 16, NULL));
	ASSERT_GT(q->cons.refused, 0);
	ASSERT_TRUE(untouched(self->buf, GUARD + WORDS + GUARD));
	__atomic_store_n(&q->doorbell, 0, __ATOMIC_RELEASE);
	ASSERT_EQ(0, emu_q_ring(q, 8));
	for (int spin = 0; got < 8 && spin < 2000000; spin++) {
		got += emu_q_poll(q, wc + got, 16 - got, NULL);
		sched_yield();
	}
	ASSERT_EQ(8, got);
	emu_queue_close(d, q);

	/* The context layer: NONBLOCK says -EAGAIN when the queue is full. */
	a.comp_mask = OMS_CTX_ATTR_QDEPTH | OMS_CTX_ATTR_FLAGS |
		      OMS_CTX_ATTR_EMU;
	a.queue_depth = 8;
	a.emu = d;
	a.flags = OMS_CTX_F_NONBLOCK;
	ASSERT_EQ(0, oms_ctx_create(&a, &nb));
	emu_dev_freeze(d, 1);
	for (int i = 0; i < 8; i++)
		ASSERT_EQ(0, oms_put(nb, &self->r, 8 * i, &v[8], 8,
				     OMS_STORE_WEAK));
	ASSERT_EQ(-EAGAIN, oms_put(nb, &self->r, 0, &v[8], 8, OMS_STORE_WEAK));
	emu_dev_freeze(d, 0);
	ASSERT_EQ(0, oms_quiet(nb));
	ASSERT_EQ(0, oms_ctx_destroy(nb));
	ASSERT_TRUE(still_serves(self->ini, &self->r));
}

TEST_HARNESS_MAIN
