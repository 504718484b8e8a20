// SPDX-License-Identifier: MIT
/*
 * Every queue depth oms_ctx_create(3) allows works with sequence-numbered
 * destinations (OMS_CTX_F_DEST_SEQ, a dest_seq_mask bit): the flushes such
 * a context sends for itself have slots of their own, so the caller's
 * puts neither hang (a blocking context) nor get -EAGAIN (a NONBLOCK one)
 * with fewer than queue_depth operations in flight.  The control is a
 * context without sequenced destinations, which the same checks hold for.
 */
#include <errno.h>
#include <string.h>

#include "harness.h"
#include "oms.h"

struct pair {
	struct oms_ctx *ini, *tgt;
	struct oms_mr *mr;
	struct oms_rmr r;
	uint64_t mem[512];
};

static int pair_open(struct pair *p, uint32_t depth, uint32_t flags,
		     uint32_t seq_mask)
{
	struct oms_ctx_attr a = oms_ctx_attr_default();
	int err;

	memset(p, 0, sizeof(*p));
	a.comp_mask |= OMS_CTX_ATTR_QDEPTH | OMS_CTX_ATTR_FLAGS |
		       OMS_CTX_ATTR_TIMEOUT | OMS_CTX_ATTR_NODE;
	a.queue_depth = depth;
	a.flags = flags;
	a.timeout_ms = 10000;
	if (seq_mask) {
		a.comp_mask |= OMS_CTX_ATTR_DEST_SEQ;
		a.dest_seq_mask = seq_mask;
	}
	err = oms_ctx_create(&a, &p->ini);
	if (err)
		return err;
	a = oms_ctx_attr_default();
	a.comp_mask |= OMS_CTX_ATTR_NODE;
	a.node = 1;
	err = oms_ctx_create(&a, &p->tgt);
	if (!err)
		err = oms_mr_reg(p->tgt, p->mem, sizeof(p->mem), OMS_ACCESS_ALL,
				 &p->mr);
	if (!err)
		err = oms_mr_remote(p->mr, &p->r);
	return err;
}

static void pair_close(struct pair *p)
{
	if (p->mr)
		oms_mr_dereg(p->mr);
	if (p->tgt)
		oms_ctx_destroy(p->tgt);
	if (p->ini)
		oms_ctx_destroy(p->ini);
}

FIXTURE(depth) {
	struct pair p;
};

FIXTURE_VARIANT(depth) {
	uint32_t flags, seq_mask;
};

FIXTURE_VARIANT_ADD(depth, dest_seq) { .flags = OMS_CTX_F_DEST_SEQ };
FIXTURE_VARIANT_ADD(depth, seq_mask_bit) { .seq_mask = 1u << 1 };
FIXTURE_VARIANT_ADD(depth, control_acked) { .flags = 0 };

FIXTURE_SETUP(depth) { }
FIXTURE_TEARDOWN(depth) { }

/* Blocking: three depths' worth of weak and strong puts, then quiet:
 * every one lands, none hangs. */
TEST_F(depth, every_depth_takes_three_depths_of_puts)
{
	for (uint32_t d = 8; d <= 256; d *= 2) {
		struct pair *p = &self->p;
		int err = pair_open(p, d, variant->flags, variant->seq_mask);

		ASSERT_EQ(0, err) TH_LOG("depth %u: %s", d, strerror(-err));
		for (uint64_t i = 0; i < 3 * d; i++) {
			uint64_t v = i + 1;

			ASSERT_EQ(0, oms_put(p->ini, &p->r, 8 * (i % 512), &v,
					     8, i % 4 ? OMS_STORE_WEAK :
					     OMS_STORE_STRONG))
				TH_LOG("depth %u, put %llu", d,
				       (unsigned long long)i);
			/* a local buffer is reused only after the fence */
			ASSERT_EQ(0, oms_fence_local(p->ini));
		}
		ASSERT_EQ(0, oms_quiet(p->ini)) TH_LOG("depth %u", d);
		/* the last put of each word is what it holds */
		for (uint64_t k = 0; k < 512 && k < 3 * d; k++) {
			uint64_t last = (3 * d - 1 - k) / 512 * 512 + k;

			EXPECT_EQ(last + 1, p->mem[k]);
		}
		pair_close(p);
	}
}

/* NONBLOCK: -EAGAIN only once queue_depth operations are in flight. */
TEST_F(depth, eagain_only_with_the_depth_in_flight)
{
	static uint64_t v[256];

	for (uint32_t d = 8; d <= 256; d *= 2) {
		struct pair *p = &self->p;
		uint32_t n = 0;
		int err = pair_open(p, d, variant->flags | OMS_CTX_F_NONBLOCK,
				    variant->seq_mask);

		ASSERT_EQ(0, err);
		while ((err = oms_put(p->ini, &p->r, 8 * (n % 256), &v[n % 256],
				      8, OMS_STORE_WEAK)) == 0 && n < 4 * d)
			n++;
		/* refused only when the depth's slots are all in use:
		 * after at least that many puts */
		if (err == -EAGAIN)
			EXPECT_GE(n, d) TH_LOG("depth %u: -EAGAIN after %u "
					       "puts", d, n);
		EXPECT_TRUE(err == 0 || err == -EAGAIN);
		EXPECT_EQ(0, oms_quiet(p->ini));
		pair_close(p);
	}
}

TEST_HARNESS_MAIN
