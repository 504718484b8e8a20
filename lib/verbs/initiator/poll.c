// SPDX-License-Identifier: MIT
/*
 * Completions.  A completion names one WR of one QP by its sequence; RC
 * completes a QP's WRs in order, so it also completes every earlier WR of
 * that QP that was posted unsignaled.  Each operation whose last WR is
 * covered gets one struct oms_wc (a get's bounce buffer copied out first,
 * an atomic's old value attached).  An error completion fails its
 * operation with an errno and puts the connection in error: RC performs
 * nothing of the QP after the failed WR (the responder NAKs and drops the
 * rest), so everything still queued on it completes with -ECANCELED at
 * once, the completions the QP flushes are ignored, and later posts fail
 * (post.c).  A flush error seen first (the QP went to error for a reason
 * not reported) is -ECONNRESET, a failure of its own.  When the last
 * signaled WR of a QP completes with unsignaled ones after it, a signaled
 * 0-byte write is posted to cover them, so every operation is reported;
 * the same write rings the doorbell of a QP that stood still too long
 * (kick_if_still: Soft-RoCE can lose the wakeup of a fenced WR).
 */
#include <errno.h>
#include <string.h>

#include "verbs/common/verbs.h"
#include "verbs/initiator/initiator.h"

#define SEQ_MASK 0xffffffffffffull

/*
 * Every WR of @c up to @seq is complete; the one at @seq with @status.
 * Returns whether an operation took @status (not so when the WR at @seq
 * was a covering write, post_cover()).
 */
static int complete_upto(struct vb_ctx *vc, struct vb_conn *c, uint64_t seq,
			 int status)
{
	uint32_t qd = oms_be_view(vc->ctx)->qdepth;
	int took = 0, stop = 0;

	while (c->head != c->tail) {
		struct vb_op *op = &vc->op[c->fifo[c->head % qd]];
		int all = op->posted == op->nwr;

		if (!op->posted || op->first_seq > seq)
			break;
		if (status && !op->status && (!all || seq <= op->last_seq)) {
			op->status = status;
			took = 1;
		}
		if (!all || op->last_seq > seq)
			break;
		c->head++;
		/* finished, or left to finish when its carrier's wait ends;
		 * or the connection stops at it */
		stop = c->car->wrs_done(vc, c, op);
		if (stop)
			break;
	}
	if (seq + 1 > c->done_seq) {
		c->sq_used -= (uint32_t)(seq + 1 - c->done_seq);
		c->done_seq = seq + 1;
	}
	if (stop)
		vb_conn_cancel(vc, c, stop);
	return took;
}

/* A signaled 0-byte write: its completion covers the WRs before it. */
static void post_cover(struct vb_ctx *vc, struct vb_conn *c)
{
	struct ibv_send_wr w, *bad;
	uint32_t ci = (uint32_t)(c - vc->conn);
	int ret;

	memset(&w, 0, sizeof(w));
	w.wr_id = VB_WRID(ci, c->gen, c->next_seq);
	w.opcode = IBV_WR_RDMA_WRITE;
	w.send_flags = IBV_SEND_SIGNALED;
	w.wr.rdma.remote_addr = c->raddr;
	w.wr.rdma.rkey = c->rkey;
	ret = ibv_post_send(c->qp, &w, &bad);
	oms_be_view(vc->ctx)->doorbells++;
	if (ret) {
		vb_conn_fail(vc, c, ret > 0 ? -ret : -EIO);
		return;
	}
	c->next_seq++;
	c->sq_used++;
	c->sig_inflight++;
	c->unsig_run = 0;
}

/*
 * A QP with WRs on it that has not moved for VB_KICK_NS gets a signaled
 * 0-byte WRITE: on Soft-RoCE the doorbell is what runs the requester, and
 * rxe can lose the wakeup of a fenced WR (the requester finds a READ
 * outstanding, the completer finishes it before the requester has said it
 * waits, and nothing runs the requester again): the WR would wait for
 * ever.  On a NIC that does not lose it the WRITE costs nothing: it
 * touches no memory (IB C9-88) and follows everything on the QP.
 */
static void kick_if_still(struct vb_ctx *vc, struct vb_conn *c)
{
	uint64_t now;

	if (c->err || !c->qp || !c->sq_used) {
		c->still_since = 0;
		return;
	}
	now = oms_now_ns();
	if (!c->still_since) {
		c->still_since = now;
		return;
	}
	/* leave the entry vb_feed() keeps for a covering WRITE */
	if (now - c->still_since < VB_KICK_NS || c->sq_used + 2 >= c->sq_depth)
		return;
	post_cover(vc, c);
	c->still_since = now;
}

static void handle(struct vb_ctx *vc, const struct ibv_wc *w)
{
	uint32_t ci = VB_WRID_CONN(w->wr_id);
	struct vb_conn *c = &vc->conn[ci];
	uint64_t seq;

	if (ci >= VB_MAX_CONN || !c->used || c->err ||
	    VB_WRID_GEN(w->wr_id) != (c->gen & 0xfff))
		return;		/* a gone or replaced connection's */
	if (VB_WRID_SEQ(w->wr_id) == VB_SEQ_RECV) {
		int cancel, err = c->car->recv(vc, c, w, &cancel);

		/* an answer to the carrier: it may stop the connection */
		if (err && cancel)
			vb_conn_cancel(vc, c, err);
		else if (err)
			vb_conn_fail(vc, c, err);
		return;
	}
	seq = c->done_seq + ((VB_WRID_SEQ(w->wr_id) - c->done_seq) & SEQ_MASK);
	if (seq >= c->next_seq)
		return;		/* cannot be ours */
	vc->progress++;
	if (w->status != IBV_WC_SUCCESS) {
		int err = vb_wc_status(w->status);

		/* the failed op (finished here, or below if some of its WRs
		 * were never posted) reports err; what RC drops after it is
		 * cancelled: never performed */
		if (complete_upto(vc, c, seq, err)) {
			c->reported = 1;
			vb_conn_cancel(vc, c, err);
		} else {
			vb_conn_fail(vc, c, err);
		}
		return;
	}
	if (c->sig_inflight)
		c->sig_inflight--;
	c->still_since = 0;
	complete_upto(vc, c, seq, 0);
	if (!c->err && !c->sig_inflight && c->next_seq > c->done_seq)
		post_cover(vc, c);
}

/* Take every completion the CQ holds now. */
static void cq_reap(struct vb_ctx *vc)
{
	struct ibv_wc w[32];
	int n;

	if (vc->gone)
		return;
	do {
		n = ibv_poll_cq(vc->cq, 32, w);
		if (n < 0) {
			vc->gone = -EIO;
			break;
		}
		oms_be_view(vc->ctx)->dev_completions += (uint64_t)n;
		for (int i = 0; i < n; i++)
			handle(vc, &w[i]);
	} while (n == 32);
}

int vb_poll(struct oms_ctx *ctx, struct oms_wc *wc, int max,
	    uint64_t *src_done)
{
	struct vb_ctx *vc = VC(ctx);
	int got = 0;

	cq_reap(vc);
	for (int i = 0; i < VB_MAX_CONN; i++) {
		struct vb_conn *c = &vc->conn[i];

		if (!c->used)
			continue;
		if (vc->gone) {
			vb_conn_fail(vc, c, vc->gone);
			continue;
		}
		if (c->peer_left) {
			/* after the completions it sent before it left */
			vb_conn_fail(vc, c, -ECONNRESET);
			continue;
		}
		if (c->feed != c->rung)
			vb_feed(vc, c);	/* what the send queue had no room for */
		kick_if_still(vc, c);
	}
	while (got < max && vc->wc_head != vc->wc_tail)
		wc[got++] = vc->wc[vc->wc_head++ % oms_be_view(ctx)->qdepth];
	*src_done = vc->src_done;
	return got;
}
