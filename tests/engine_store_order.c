// SPDX-License-Identifier: MIT
/*
 * Bad arguments to the store orderer, the op counters and the doorbell
 * ring: each is refused with its errno and changes nothing.
 *
 * A test of internals (INTERNAL_TESTS in the Makefile): it includes
 * lib/ headers to reach what the public API does not show.
 */
#include <errno.h>
#include <string.h>

#include "harness.h"
#include "helpers.h"
#include "engine/store_order.h"
#include "engine/doorbell.h"
#include "engine/op_counter.h"

static const struct oms_so_chan_cfg cfg[] = {
	{ .dest = 0, .kind = OMS_CHAN_POSTED },
	{ .dest = 1, .kind = OMS_CHAN_ACKED },
};

/* Everything observable about an orderer, for before/after comparison. */
struct so_image {
	struct oms_so_counters ctr;
	struct oms_so_chan chan[2];
	uint32_t count, head, all_fences, dest_fences[2];
	int first_error;
};

static void image(const struct oms_so *so, struct so_image *im)
{
	memset(im, 0, sizeof(*im));
	im->ctr = so->ctr;
	memcpy(im->chan, so->chan, sizeof(im->chan));
	im->count = so->count;
	im->head = so->head;
	im->all_fences = so->all_fences;
	memcpy(im->dest_fences, so->dest_fences, sizeof(im->dest_fences));
	im->first_error = so->first_error;
}

FIXTURE(so) {
	struct oms_so so;
	struct so_image before;
};

/* A busy orderer: stores in flight, a strong store held, a flush out. */
FIXTURE_SETUP(so)
{
	struct oms_so_store st = { .len = 8, .cls = OMS_STORE_WEAK };
	struct oms_so_action act[2];
	uint64_t seq;

	ASSERT_EQ(0, oms_so_init(&self->so, 2, cfg, 2, 4));
	ASSERT_EQ(OMS_SO_ISSUE, oms_so_submit(&self->so, &st, &seq));
	st.chan = 1;
	ASSERT_EQ(OMS_SO_ISSUE, oms_so_submit(&self->so, &st, &seq));
	st.cls = OMS_STORE_STRONG;
	ASSERT_EQ(OMS_SO_HELD, oms_so_submit(&self->so, &st, &seq));
	ASSERT_EQ(1, oms_so_progress(&self->so, act, 2));
	ASSERT_EQ(OMS_SO_ACT_FLUSH, act[0].type);
	image(&self->so, &self->before);
}

FIXTURE_TEARDOWN(so)
{
	oms_so_destroy(&self->so);
}

#define EXPECT_UNCHANGED() do {						\
		struct so_image now;					\
		image(&self->so, &now);					\
		ASSERT_EQ(0, memcmp(&self->before, &now, sizeof(now)));	\
	} while (0)

TEST_F(so, submit_bad_store)
{
	struct oms_so_store st = { .len = 8, .cls = OMS_STORE_WEAK };
	uint64_t seq;

	st.chan = 2;
	ASSERT_EQ(-EINVAL, oms_so_submit(&self->so, &st, &seq));
	st.chan = 0;
	st.cls = 4;
	ASSERT_EQ(-EINVAL, oms_so_submit(&self->so, &st, &seq));
	st.cls = OMS_STORE_STRONG;
	st.op = OMS_SO_OP_GET;		/* gets are weak or unordered */
	ASSERT_EQ(-EINVAL, oms_so_submit(&self->so, &st, &seq));
	st.op = OMS_SO_OP_PUT;
	st.acquire = 1;			/* acquire is for gets */
	ASSERT_EQ(-EINVAL, oms_so_submit(&self->so, &st, &seq));
	st.acquire = 0;
	st.cls = OMS_STORE_WEAK;
	st.len = 0;
	ASSERT_EQ(-EINVAL, oms_so_submit(&self->so, &st, &seq));
	st.len = 16;
	st.addr = UINT64_MAX - 8;
	ASSERT_EQ(-EINVAL, oms_so_submit(&self->so, &st, &seq));
	ASSERT_EQ(-EINVAL, oms_so_submit(&self->so, NULL, &seq));
	st.addr = 0;
	ASSERT_EQ(-EINVAL, oms_so_submit(&self->so, &st, NULL));
	ASSERT_EQ(-EINVAL, oms_so_submit(NULL, &st, &seq));
	EXPECT_UNCHANGED();
}

TEST_F(so, ack_and_flush_bad)
{
	/* beyond what was issued, unknown channel, positive status */
	ASSERT_EQ(-EINVAL, oms_so_ack(&self->so, 1, 2, 0));
	ASSERT_EQ(-EINVAL, oms_so_ack(&self->so, 7, 1, 0));
	ASSERT_EQ(-EINVAL, oms_so_ack(&self->so, 1, 1, 5));
	/* wrong token, channel without a flush, unknown channel */
	ASSERT_EQ(-EINVAL, oms_so_flush_done(&self->so, 0, 9, 0));
	ASSERT_EQ(-EINVAL, oms_so_flush_done(&self->so, 1, 0, 0));
	ASSERT_EQ(-EINVAL, oms_so_flush_done(&self->so, 2, 1, 0));
	EXPECT_UNCHANGED();
	/* a stale ack is accepted, counted, and moves nothing else */
	ASSERT_EQ(0, oms_so_ack(&self->so, 1, 1, 0));
	ASSERT_EQ(0, oms_so_ack(&self->so, 1, 0, 0));
	ASSERT_EQ(1, self->so.ctr.stale_acks);
	ASSERT_EQ(1, self->so.chan[1].visible);
}

/* The channel queries the driver uses instead of reading the state: they
 * answer for the channels there are, refuse others, change nothing. */
TEST_F(so, channel_queries)
{
	ASSERT_EQ(1, oms_so_chan_issued(&self->so, 0));
	ASSERT_EQ(1, oms_so_chan_issued(&self->so, 1));
	ASSERT_EQ(0, oms_so_chan_issued(&self->so, 2));
	ASSERT_EQ(OMS_CHAN_POSTED, oms_so_chan_kind(&self->so, 0));
	ASSERT_EQ(OMS_CHAN_ACKED, oms_so_chan_kind(&self->so, 1));
	ASSERT_EQ(-EINVAL, oms_so_chan_kind(&self->so, 2));
	ASSERT_EQ(0, oms_so_failed_chans(&self->so));
	EXPECT_UNCHANGED();
	/* a failure on channel 1 is recorded there, and only there */
	ASSERT_EQ(0, oms_so_fail(&self->so, 1, 0, -EACCES));
	ASSERT_EQ(1u << 1, oms_so_failed_chans(&self->so));
}

TEST_F(so, fence_bad_dest_and_full_queue)
{
	struct oms_so_store st = { .len = 8, .cls = OMS_STORE_STRONG,
				   .chan = 1 };
	uint64_t seq;

	ASSERT_EQ(-EINVAL, oms_so_fence(&self->so, 2));
	ASSERT_EQ(-EINVAL, oms_so_fence(NULL, 0));
	EXPECT_UNCHANGED();
	/* fill the 4-entry hold queue, then both calls say -EAGAIN */
	for (int i = 0; i < 3; i++)
		ASSERT_EQ(OMS_SO_HELD, oms_so_submit(&self->so, &st, &seq));
	image(&self->so, &self->before);
	ASSERT_EQ(-EAGAIN, oms_so_submit(&self->so, &st, &seq));
	ASSERT_EQ(-EAGAIN, oms_so_fence(&self->so, 0));
	EXPECT_UNCHANGED();
	ASSERT_EQ(-EINVAL, oms_so_progress(&self->so, NULL, 1));
}

TEST(so_init_bad_config)
{
	struct oms_so so;
	struct oms_so_chan_cfg bad[2] = { cfg[0], cfg[1] };

	ASSERT_EQ(-EINVAL, oms_so_init(&so, 0, cfg, 2, 4));
	ASSERT_EQ(-EINVAL, oms_so_init(&so, OMS_SO_MAX_CHANNELS + 1, cfg, 2, 4));
	ASSERT_EQ(-EINVAL, oms_so_init(&so, 2, cfg, 1, 4));	/* dest 1 */
	ASSERT_EQ(-EINVAL, oms_so_init(&so, 2, cfg, 2, 0));
	ASSERT_EQ(-EINVAL, oms_so_init(&so, 2, NULL, 2, 4));
	bad[1].kind = 9;
	ASSERT_EQ(-EINVAL, oms_so_init(&so, 2, bad, 2, 4));
}

TEST(op_counter_bad_transitions)
{
	struct oms_op_counter oc, before;

	oms_oc_init(&oc);
	ASSERT_EQ(0, oms_oc_issue(&oc, 2));
	before = oc;
	ASSERT_EQ(-EINVAL, oms_oc_issue(&oc, 0));
	ASSERT_EQ(-EINVAL, oms_oc_advance(&oc, OMS_OC_ISSUED, 3));
	ASSERT_EQ(-EINVAL, oms_oc_advance(&oc, OMS_OC_PROCESSING, 1));
	ASSERT_EQ(-EINVAL, oms_oc_advance(&oc, 7, 1));
	ASSERT_EQ(-EINVAL, oms_oc_fail(&oc, OMS_OC_ISSUED, 0));
	ASSERT_EQ(-EINVAL, oms_oc_fail(&oc, OMS_OC_AWAITING_ACK, -EIO));
	ASSERT_EQ(0, memcmp(&before, &oc, sizeof(oc)));
}

TEST(doorbell_bad_calls)
{
	struct oms_db_ring r, before;

	ASSERT_EQ(-EINVAL, oms_db_init(&r, 0));
	ASSERT_EQ(-EINVAL, oms_db_init(&r, 3));
	ASSERT_EQ(-EINVAL, oms_db_init(&r, 1u << 25));
	ASSERT_EQ(0, oms_db_init(&r, 4));
	ASSERT_GE(oms_db_produce(&r), 0);
	before = r;
	ASSERT_EQ(-EINVAL, oms_db_ring(&r, 2));
	before.refused++;	/* the only change: the refusal is counted */
	ASSERT_EQ(0, memcmp(&before, &r, sizeof(r)));
}

TEST_HARNESS_MAIN
