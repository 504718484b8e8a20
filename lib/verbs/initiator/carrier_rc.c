// SPDX-License-Identifier: MIT
/*
 * The one-sided carrier: each operation is RDMA on the connection's RC QP,
 * and nothing at the destination takes part.
 *
 *   put    RDMA WRITE: inline when it fits the QP's max_inline_data, zero
 *          copy when the source lies in a registered region of the
 *          context, else through the slot's bounce buffer, else (too big)
 *          a registration of the source for this operation only;
 *   get    RDMA READ, into a registered region, the bounce buffer (copied
 *          out at completion) or a registration of its own; an acquire
 *          get is one READ per 64-byte line in address order, each with
 *          IBV_SEND_FENCE, and the next WR on the QP (any kind) is fenced
 *          too: acquire ordered at the source;
 *   OMS_WR_F_FENCE  IBV_SEND_FENCE on the operation's first WR;
 *   fadd, cas  the atomics, into the slot's registered 8-byte result;
 *   flush  an 8-byte RDMA READ of the listener's flush word (wire.h):
 *          it touches memory, so its response follows every earlier
 *          WRITE of the QP into memory; a 0-byte READ would not have to;
 *   nop    a 0-byte RDMA WRITE.
 *
 * The agent's carrier (carrier_agent.c) sends what it does not take to
 * its agent through the same parts: vb_op_remote(), vb_rc_local(),
 * vb_rc_wr().
 */
#include <errno.h>
#include <string.h>

#include "verbs/common/verbs.h"
#include "verbs/initiator/initiator.h"

const struct vb_lmr *vb_lmr_find(const struct vb_ctx *vc, const void *p,
				 uint64_t len)
{
	const uint8_t *b = p;

	for (int i = 0; i < VB_MAX_MR; i++) {
		const struct vb_lmr *m = &vc->lmr[i];

		if (m->used && b >= m->addr && len <= m->len &&
		    (uint64_t)(b - m->addr) <= m->len - len)
			return m;
	}
	return NULL;
}

static uint32_t lines_of(uint64_t raddr, uint64_t len)
{
	return (uint32_t)((raddr + len - 1) / VB_LINE - raddr / VB_LINE + 1);
}

/* Where a put's source or a get's destination is for the device. */
int vb_map_local(struct vb_ctx *vc, struct vb_op *op, int dev_writes)
{
	void *p = (void *)(uintptr_t)op->wr.local;
	uint64_t len = op->wr.len;
	const struct vb_lmr *m = vb_lmr_find(vc, p, len);

	if (m) {
		op->loc = VB_LOC_MR;
		op->lbuf = p;
		op->lkey = m->mr->lkey;
		return 0;
	}
	if (len <= VB_BOUNCE) {
		op->loc = VB_LOC_BOUNCE;
		op->lbuf = vc->bounce + (size_t)op->wr.slot * VB_BOUNCE;
		op->lkey = vc->buf_mr->lkey;
		if (!dev_writes) {
			memcpy(op->lbuf, p, len);
			op->src_counted = 1;
			vc->src_done++;
		}
		return 0;
	}
	op->tmp = ibv_reg_mr(vc->pd, p, len,
			     dev_writes ? IBV_ACCESS_LOCAL_WRITE : 0);
	if (!op->tmp)
		return vb_errno(-ENOMEM);
	op->loc = VB_LOC_TMP;
	op->lbuf = p;
	op->lkey = op->tmp->lkey;
	return 0;
}

/* Where @op lands at the destination, checked against @c's region; one
 * WR, its key and its fence, until its carrier says otherwise. */
int vb_op_remote(const struct vb_ctx *vc, const struct vb_conn *c,
		 struct vb_op *op)
{
	const struct oms_wr *wr = &op->wr;
	uint32_t ci = (uint32_t)(c - vc->conn);

	op->nwr = 1;
	op->rkey = wr->key;
	op->fence_first = (wr->flags & OMS_WR_F_FENCE) != 0;
	switch (wr->op) {
	case OMS_WR_PUT:
	case OMS_WR_GET:
	case OMS_WR_FADD:
	case OMS_WR_CAS:
		if (wr->region != VB_REGION(ci, c->gen))
			return -ENOTCONN;	/* a replaced connection's */
		if (wr->off > c->rlen || wr->len > c->rlen - wr->off)
			return -EFAULT;
		op->raddr = c->raddr + wr->off;
		return 0;
	case OMS_WR_FLUSH:
		op->raddr = c->flush_addr;
		op->rkey = c->flush_rkey;
		return 0;
	case OMS_WR_NOP:
		op->raddr = c->raddr;
		op->rkey = c->rkey;
		return 0;
	default:
		return -EINVAL;
	}
}

/* How the QP reaches @op's local bytes, and how many WRs it becomes. */
int vb_rc_local(struct vb_ctx *vc, const struct vb_conn *c, struct vb_op *op)
{
	const struct oms_wr *wr = &op->wr;

	switch (wr->op) {
	case OMS_WR_PUT:
		if (wr->len <= c->max_inline) {
			op->loc = VB_LOC_INLINE;
			op->lbuf = (void *)(uintptr_t)wr->local;
			return 0;
		}
		return vb_map_local(vc, op, 0);
	case OMS_WR_GET:
		/* a class-2 answer is held by the listener's agent (seed
		 * 002); without one nobody can hold it */
		if (wr->flags & OMS_WR_F_RESP_ORDERED)
			return c->agent_busy ? -EUSERS : -EOPNOTSUPP;
		if (wr->flags & OMS_WR_F_ACQUIRE)
			op->nwr = lines_of(op->raddr, wr->len);
		break;
	case OMS_WR_FADD:
	case OMS_WR_CAS:
		if (op->raddr % 8)
			return -EINVAL;
		/* fall through */
	case OMS_WR_FLUSH:
		op->loc = VB_LOC_RESULT;
		op->lbuf = &vc->result[wr->slot];
		op->lkey = vc->buf_mr->lkey;
		break;
	default:
		break;
	}
	/* No local bytes to read: the source is done with now. */
	op->src_counted = 1;
	vc->src_done++;
	if (wr->op == OMS_WR_GET)
		return vb_map_local(vc, op, 1);
	return 0;
}

/* WR @k of a get: the whole range, or line @k of an acquire. */
static void get_wr(const struct vb_op *op, uint32_t k, struct ibv_send_wr *w,
		   struct ibv_sge *sge)
{
	uint64_t line, s, e;

	w->opcode = IBV_WR_RDMA_READ;
	if (op->nwr == 1 && !(op->wr.flags & OMS_WR_F_ACQUIRE))
		return;
	line = op->raddr / VB_LINE + k;
	s = k ? line * VB_LINE : op->raddr;
	e = (line + 1) * VB_LINE;
	if (e > op->raddr + op->wr.len)
		e = op->raddr + op->wr.len;
	w->wr.rdma.remote_addr = s;
	sge->addr += s - op->raddr;
	sge->length = (uint32_t)(e - s);
	/* each line after the ones before it */
	w->send_flags |= IBV_SEND_FENCE;
}

/* Fill @w/@sge for WR @k of @op: VB_WR_SIGNAL when it must be signaled. */
int vb_rc_wr(struct vb_ctx *vc, struct vb_conn *c, struct vb_op *op,
	     uint32_t k, struct ibv_send_wr *w, struct ibv_sge *sge)
{
	const struct oms_wr *wr = &op->wr;
	int sig = 0;

	memset(w, 0, sizeof(*w));
	sge->addr = (uintptr_t)op->lbuf;
	sge->length = (uint32_t)wr->len;
	sge->lkey = op->lkey;
	w->sg_list = sge;
	w->num_sge = 1;
	w->wr.rdma.remote_addr = op->raddr;
	w->wr.rdma.rkey = op->rkey;
	/*
	 * IBV_SEND_FENCE holds a WR until every earlier READ and atomic of
	 * the QP has completed, and the send queue behind it: what the
	 * context layer asks with OMS_WR_F_FENCE (a write after a read of
	 * the same bytes, a release, a write after an acquire), and what an
	 * acquire get asks of whatever comes next on its QP (A1: RC lets a
	 * WRITE or a READ overtake an earlier READ's data otherwise).
	 */
	if (!k && (op->fence_first || c->acq_fence))
		w->send_flags |= IBV_SEND_FENCE;
	if (k + 1 == op->nwr)
		c->acq_fence = wr->op == OMS_WR_GET &&
			       (wr->flags & OMS_WR_F_ACQUIRE);
	switch (wr->op) {
	case OMS_WR_PUT:
		w->opcode = IBV_WR_RDMA_WRITE;
		if (op->loc == VB_LOC_INLINE)
			w->send_flags |= IBV_SEND_INLINE;
		sig = op->loc == VB_LOC_TMP;
		break;
	case OMS_WR_GET:
		get_wr(op, k, w, sge);
		sig = k + 1 == op->nwr;
		break;
	case OMS_WR_FADD:
	case OMS_WR_CAS:
		w->opcode = wr->op == OMS_WR_FADD ?
			    IBV_WR_ATOMIC_FETCH_AND_ADD :
			    IBV_WR_ATOMIC_CMP_AND_SWP;
		w->wr.atomic.remote_addr = op->raddr;
		w->wr.atomic.rkey = op->rkey;
		w->wr.atomic.compare_add = wr->a1;
		w->wr.atomic.swap = wr->a2;
		sge->length = 8;
		sig = 1;
		break;
	case OMS_WR_FLUSH:
		w->opcode = IBV_WR_RDMA_READ;
		sge->length = 8;
		sig = 1;
		break;
	default:	/* nop */
		w->opcode = IBV_WR_RDMA_WRITE;
		w->num_sge = 0;
		sig = 1;
		break;
	}
	(void)vc;
	return sig ? VB_WR_SIGNAL : 0;
}

static void rc_post(struct vb_ctx *vc, struct vb_conn *c, struct vb_op *op)
{
	int err = vb_op_remote(vc, c, op);

	if (!err)
		err = vb_rc_local(vc, c, op);
	if (err)
		vb_op_finish(vc, op, err);
	else
		vb_queue(vc, c, op);
}

/* RC completes a QP's WRs in order: an operation whose WRs are done is. */
static int rc_wrs_done(struct vb_ctx *vc, struct vb_conn *c, struct vb_op *op)
{
	(void)c;
	vb_op_finish(vc, op, op->status);
	return 0;
}

/* No receive is posted on a one-sided connection's QP: nothing to do. */
static int rc_recv(struct vb_ctx *vc, struct vb_conn *c,
		   const struct ibv_wc *w, int *cancel)
{
	(void)vc;
	(void)c;
	(void)w;
	*cancel = 0;
	return 0;
}

/* Everything a one-sided connection holds is on its ring. */
static void rc_stop(struct vb_ctx *vc, struct vb_conn *c, int err)
{
	(void)vc;
	(void)c;
	(void)err;
}

/* Numbered operations need the listener's reorder buffer: its agent's,
 * which this connection does not have (busy: it asked, and got no slot). */
static int rc_seq_start(struct vb_conn *c, uint64_t base, uint32_t qdepth)
{
	(void)base;
	(void)qdepth;
	return c->agent_busy ? -EUSERS : -EOPNOTSUPP;
}

/* Nothing is held off the ring; the initiator orders acquire reads, one
 * fenced READ per line, and nobody holds answers; a put is one WRITE. */
static uint32_t rc_held(const struct vb_conn *c)
{
	(void)c;
	return 0;
}

static uint32_t rc_dest_caps(const struct vb_conn *c)
{
	(void)c;
	return OMS_CAP_ACQUIRE_READ | OMS_CAP_STRONG_STORE |
	       OMS_CAP_ACQUIRE_AT_SOURCE;
}

static uint64_t rc_max_put(const struct vb_conn *c)
{
	(void)c;
	return OMS_MAX_OP_LEN;
}

const struct vb_carrier_ops vb_carrier_rc = {
	.post = rc_post,
	.wr = vb_rc_wr,
	.doorbell = NULL,	/* vb_rc_wr() flags no doorbell */
	.wrs_done = rc_wrs_done,
	.recv = rc_recv,
	.stop = rc_stop,
	.seq_start = rc_seq_start,
	.held = rc_held,
	.dest_caps = rc_dest_caps,
	.max_put = rc_max_put,
};
