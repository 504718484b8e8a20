// SPDX-License-Identifier: MIT
/*
 * The one-sided carrier (lib/verbs/initiator/carrier_rc.c) on a connection
 * made by hand, no device: what post() queues or finishes, and the work
 * requests wr() fills - a put inline, an acquire get as fenced READs line
 * by line with the next request fenced after it, a stale descriptor failed
 * alone, a class-2 get and DEST_SEQ refused with the errno that says why.
 *
 * A test of internals (INTERNAL_TESTS in the Makefile): it includes
 * lib/ headers to reach what the public API does not show.
 */
#include <errno.h>
#include <stdint.h>
#include <string.h>

#include "harness.h"
#include "verbs/common/verbs.h"
#include "verbs/initiator/initiator.h"

#define QD	8
#define RADDR	0x100000ull
#define RKEY	7u
#define LKEY	5u

struct rig {
	struct oms_be_view view;	/* what the context's pointer shows */
	struct vb_ctx vc;
	struct vb_op op[QD];
	struct oms_wc wc[QD];
	uint64_t result[QD];
	uint32_t fifo[QD];
	struct ibv_mr mr;		/* stands for a registration */
	uint8_t lbuf[256];		/* a registered local region */
};

static struct vb_conn *rig_init(struct rig *r)
{
	struct vb_conn *c = &r->vc.conn[0];

	memset(r, 0, sizeof(*r));
	r->view.qdepth = QD;
	r->vc.ctx = (struct oms_ctx *)(void *)&r->view;
	r->vc.op = r->op;
	r->vc.wc = r->wc;
	r->vc.result = r->result;
	r->mr.lkey = LKEY;
	r->vc.buf_mr = &r->mr;
	r->vc.lmr[0] = (struct vb_lmr){ .mr = &r->mr, .addr = r->lbuf,
					.len = sizeof(r->lbuf), .used = 1 };
	c->used = 1;
	c->gen = 3;
	c->car = &vb_carrier_rc;
	c->fifo = r->fifo;
	c->raddr = RADDR;
	c->rlen = 4096;
	c->rkey = RKEY;
	c->max_inline = 64;
	return c;
}

/* @wr into slot @slot, handed to @c's carrier as vb_post() does. */
static struct vb_op *rig_post(struct rig *r, struct vb_conn *c,
			      struct oms_wr wr, uint32_t slot)
{
	struct vb_op *op = &r->op[slot];

	memset(op, 0, sizeof(*op));
	wr.slot = slot;
	op->wr = wr;
	c->car->post(&r->vc, c, op);
	return op;
}

TEST(put_is_one_inline_write)
{
	struct rig r;
	struct vb_conn *c = rig_init(&r);
	uint64_t v = 42;
	struct ibv_send_wr w;
	struct ibv_sge sge;
	struct vb_op *op = rig_post(&r, c, (struct oms_wr){
		.op = OMS_WR_PUT, .region = VB_REGION(0, 3), .key = RKEY,
		.off = 16, .len = 8, .local = (uintptr_t)&v }, 0);

	ASSERT_EQ(1u, c->tail);		/* queued, not finished */
	ASSERT_EQ(0u, r.vc.wc_tail);
	ASSERT_EQ(VB_LOC_INLINE, op->loc);
	ASSERT_EQ(0, c->car->wr(&r.vc, c, op, 0, &w, &sge));
	EXPECT_EQ(IBV_WR_RDMA_WRITE, w.opcode);
	EXPECT_EQ((unsigned)IBV_SEND_INLINE, w.send_flags);
	EXPECT_EQ(RADDR + 16, w.wr.rdma.remote_addr);
	EXPECT_EQ(RKEY, w.wr.rdma.rkey);
	EXPECT_EQ((uintptr_t)&v, sge.addr);
	EXPECT_EQ(8u, sge.length);
	EXPECT_EQ(NULL, vb_carrier_rc.doorbell);	/* never flags one */
}

TEST(acquire_get_is_fenced_reads_per_line)
{
	struct rig r;
	struct vb_conn *c = rig_init(&r);
	struct ibv_send_wr w;
	struct ibv_sge sge;
	/* bytes 60..129: lines 0 (4 bytes), 1 (64) and 2 (2) */
	struct vb_op *op = rig_post(&r, c, (struct oms_wr){
		.op = OMS_WR_GET, .flags = OMS_WR_F_ACQUIRE,
		.region = VB_REGION(0, 3), .key = RKEY, .off = 60, .len = 70,
		.local = (uintptr_t)r.lbuf }, 0);
	static const uint32_t len[] = { 4, 64, 2 };
	uint64_t at = RADDR + 60;

	ASSERT_EQ(1u, c->tail);
	ASSERT_EQ(3u, op->nwr);
	ASSERT_EQ(VB_LOC_MR, op->loc);
	for (uint32_t k = 0; k < 3; k++) {
		int f = c->car->wr(&r.vc, c, op, k, &w, &sge);

		EXPECT_EQ(k == 2 ? VB_WR_SIGNAL : 0, f);
		EXPECT_EQ(IBV_WR_RDMA_READ, w.opcode);
		EXPECT_TRUE(w.send_flags & IBV_SEND_FENCE);
		EXPECT_EQ(at, w.wr.rdma.remote_addr);
		EXPECT_EQ(len[k], sge.length);
		EXPECT_EQ((uintptr_t)r.lbuf + (at - RADDR - 60), sge.addr);
		EXPECT_EQ(LKEY, sge.lkey);
		at += len[k];
	}
	/* whatever follows an acquire on the QP is fenced */
	op = rig_post(&r, c, (struct oms_wr){ .op = OMS_WR_NOP }, 1);
	ASSERT_EQ(2u, c->tail);
	EXPECT_EQ(VB_WR_SIGNAL, c->car->wr(&r.vc, c, op, 0, &w, &sge));
	EXPECT_TRUE(w.send_flags & IBV_SEND_FENCE);
	EXPECT_EQ(0, w.num_sge);
}

TEST(stale_or_outside_fails_alone)
{
	struct rig r;
	struct vb_conn *c = rig_init(&r);
	uint64_t v = 1;

	rig_post(&r, c, (struct oms_wr){ .op = OMS_WR_PUT,
		 .region = VB_REGION(0, 2), .len = 8,
		 .local = (uintptr_t)&v }, 0);
	rig_post(&r, c, (struct oms_wr){ .op = OMS_WR_PUT,
		 .region = VB_REGION(0, 3), .off = 4090, .len = 8,
		 .local = (uintptr_t)&v }, 1);
	ASSERT_EQ(0u, c->tail);		/* nothing queued */
	ASSERT_EQ(2u, r.vc.wc_tail);
	EXPECT_EQ(-ENOTCONN, r.wc[0].status);
	EXPECT_EQ(-EFAULT, r.wc[1].status);
	EXPECT_EQ(0, c->err);		/* the connection lives on */
}

TEST(what_needs_an_agent_is_refused)
{
	struct rig r;
	struct vb_conn *c = rig_init(&r);

	rig_post(&r, c, (struct oms_wr){ .op = OMS_WR_GET,
		 .flags = OMS_WR_F_RESP_ORDERED, .region = VB_REGION(0, 3),
		 .len = 8, .local = (uintptr_t)r.lbuf }, 0);
	EXPECT_EQ(-EOPNOTSUPP, c->car->seq_start(c, 0, QD));
	c->agent_busy = 1;	/* it asked, and the agent had no slot */
	rig_post(&r, c, (struct oms_wr){ .op = OMS_WR_GET,
		 .flags = OMS_WR_F_RESP_ORDERED, .region = VB_REGION(0, 3),
		 .len = 8, .local = (uintptr_t)r.lbuf }, 1);
	EXPECT_EQ(-EUSERS, c->car->seq_start(c, 0, QD));
	ASSERT_EQ(0u, c->tail);
	ASSERT_EQ(2u, r.vc.wc_tail);
	EXPECT_EQ(-EOPNOTSUPP, r.wc[0].status);
	EXPECT_EQ(-EUSERS, r.wc[1].status);
}

TEST_HARNESS_MAIN
