// SPDX-License-Identifier: MIT
/*
 * Work requests.  post() checks an operation against its connection and
 * queues it on the connection's ring of slots; ring() lets the QP have
 * what is queued and feeds it (poll() goes on as the send queue drains)
 * as chains of work requests, one ibv_post_send per chain: the context
 * rings once for many operations under OMS_CTX_F_DOORBELL_BATCH.
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
 * Signaling: a WR is signaled when its completion carries a result (the
 * last READ of a get, an atomic, a flush), when no signaled WR of the QP
 * is in flight, and at least every VB_SIGNAL_EVERY; RC completes in order,
 * so one signaled completion completes every earlier WR (poll.c).
 */
#include <errno.h>
#include <string.h>

#include "verbs/verbs.h"

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
static int map_local(struct vb_ctx *vc, struct vb_op *op, int dev_writes)
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

/* A request to the listener's agent (agent_req.c). */
static int prepare_agent(struct vb_ctx *vc, struct vb_conn *c,
			 struct vb_op *op)
{
	int err;

	if ((op->wr.op == OMS_WR_FADD || op->wr.op == OMS_WR_CAS) &&
	    op->raddr % 8)
		return -EINVAL;
	err = vb_areq_prepare(vc, c, op);
	if (err)
		return err;
	if (op->wr.op == OMS_WR_PUT)	/* its bytes go to a staging slot */
		return map_local(vc, op, 0);
	if (!op->src_counted) {	/* no local bytes to read */
		op->src_counted = 1;
		vc->src_done++;
	}
	return 0;
}

static int prepare(struct vb_ctx *vc, struct vb_conn *c, struct vb_op *op)
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
		break;
	case OMS_WR_FLUSH:
		op->raddr = c->flush_addr;
		op->rkey = c->flush_rkey;
		break;
	case OMS_WR_NOP:
		op->raddr = c->raddr;
		op->rkey = c->rkey;
		break;
	default:
		return -EINVAL;
	}
	if (vb_areq_wants(c, wr))
		return prepare_agent(vc, c, op);
	switch (wr->op) {
	case OMS_WR_PUT:
		if (wr->len <= c->max_inline) {
			op->loc = VB_LOC_INLINE;
			op->lbuf = (void *)(uintptr_t)wr->local;
			return 0;
		}
		return map_local(vc, op, 0);
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
		return map_local(vc, op, 1);
	return 0;
}

/*
 * OMS_WR_RESET: restart the channel to @dest after oms_ctx_resume().  A
 * requester cannot reset an RC QP alone (the responder's QP is in error
 * too and the PSNs are lost), so a connection in error stays so and the
 * reset answers -ENOTCONN: oms_connect() again.  After it every operation
 * to that destination fails on its own with -ENOTCONN (none is behind an
 * unresumed failure any more).  A healthy connection has nothing to
 * restart: 0.
 */
static int reset(struct vb_ctx *vc, uint32_t dest)
{
	struct vb_conn *c;

	vb_conn_events(vc);	/* a disconnect not yet seen */
	if (vc->dead)
		return vc->dead;
	if (dest >= VB_MAX_CONN || !vc->conn[dest].used)
		return -ENOTCONN;
	c = &vc->conn[dest];
	if (!c->err && !c->disconnected)
		return 0;
	c->reset = 1;
	return -ENOTCONN;
}

/*
 * The status of an operation to a connection in error.  Until the
 * context resumes (a RESET), an in-order channel cancels what follows its
 * failure (backend.h): -ECANCELED, once an operation has reported the
 * failure itself; -ENOTCONN for the first when none has (the peer left
 * while the QP was idle), so that a failure is never silent.
 */
static int conn_err(struct vb_conn *c)
{
	int err = c->reported && !c->reset ? -ECANCELED : -ENOTCONN;

	c->reported = 1;
	return err;
}

/*
 * Queue @wr on its connection.  An operation the connection cannot carry
 * (none there, in error, a stale or out-of-range descriptor) is not
 * refused here: it completes at once with the error, through poll(), so
 * the context layer's per-channel acknowledgements stay in step.
 */
int vb_post(struct oms_ctx *ctx, const struct oms_wr *wr)
{
	struct vb_ctx *vc = VC(ctx);
	struct vb_conn *c = NULL;
	struct vb_op *op;
	int err = 0;

	if (wr->slot >= oms_be_view(ctx)->qdepth)
		return -EINVAL;		/* not a slot: cannot complete it */
	op = &vc->op[wr->slot];
	memset(op, 0, sizeof(*op));
	op->wr = *wr;
	if (wr->op == OMS_WR_RESET) {
		vb_op_finish(vc, op, reset(vc, wr->dest));
		return 0;
	}
	if (vc->dead)
		err = vc->dead;
	else if (wr->dest >= VB_MAX_CONN || !vc->conn[wr->dest].used)
		err = -ENOTCONN;
	else if (vc->conn[wr->dest].err)
		err = conn_err(&vc->conn[wr->dest]);
	else
		c = &vc->conn[wr->dest];
	if (c && !vb_areq_seq_ours(c, wr, VB_REGION(wr->dest, c->gen))) {
		/* a number of an earlier connection at this index */
		vb_op_finish(vc, op, -ENOTCONN);
		return 0;
	}
	if (!err)
		err = prepare(vc, c, op);
	if (err && c && vb_areq_is_seq(c) && (wr->flags & OMS_WR_F_SEQ) &&
	    wr->op != OMS_WR_FLUSH) {
		/*
		 * Its number is the agent's stream's: a cancelling NOP fills
		 * it, and stops the stream there as the failure must (the
		 * op reports its own error when the NOP is answered).
		 */
		op->status = err;
		op->wr.op = OMS_WR_NOP;
		op->wr.flags = OMS_WR_F_SEQ | OMS_WR_F_CANCEL;
		op->wr.len = 0;
		err = prepare(vc, c, op);
	}
	if (err) {
		vb_op_finish(vc, op, err);
		return 0;
	}
	if (vb_areq_is_flush(op)) {	/* answered here, off the QP */
		vb_areq_flush(vc, c, op);
		return 0;
	}
	vb_areq_unnum_queued(c, wr);
	c->fifo[c->tail++ % oms_be_view(ctx)->qdepth] = wr->slot;
	return 0;
}

/* Fill @w/@sge for WR @k of @op; returns whether it must be signaled. */
static int build(struct vb_ctx *vc, struct vb_conn *c, struct vb_op *op,
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
		w->opcode = IBV_WR_RDMA_READ;
		if (op->nwr > 1 || (wr->flags & OMS_WR_F_ACQUIRE)) {
			uint64_t line = op->raddr / VB_LINE + k;
			uint64_t s = k ? line * VB_LINE : op->raddr;
			uint64_t e = (line + 1) * VB_LINE;

			if (e > op->raddr + wr->len)
				e = op->raddr + wr->len;
			w->wr.rdma.remote_addr = s;
			sge->addr += s - op->raddr;
			sge->length = (uint32_t)(e - s);
			/* each line after the ones before it */
			w->send_flags |= IBV_SEND_FENCE;
		}
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
	return sig;
}

/* Hand a chain to the QP; on failure the connection is failed. */
static void post_chain(struct vb_ctx *vc, struct vb_conn *c,
		       struct ibv_send_wr *w, struct vb_op **ops, int n)
{
	struct ibv_send_wr *bad = NULL;
	int ret, counted = 0;

	for (int i = 0; i < n; i++) {
		w[i].next = i + 1 < n ? &w[i + 1] : NULL;
		/* a put on the wire holds this process's agents' class-2
		 * answers to that node until it completes (peers.c);
		 * counted before it can complete */
		if (ops[i]->wr.op == OMS_WR_PUT && !ops[i]->pw_serial &&
		    c->pw.serial) {
			ops[i]->pw_serial = c->pw.serial;
			__atomic_fetch_add(&c->pw.posted, 1, __ATOMIC_RELAXED);
			counted = 1;
		}
	}
	/* no store the caller makes after this call is seen before the
	 * count (a release would order only what came before it) */
	if (counted)
		__atomic_thread_fence(__ATOMIC_SEQ_CST);
	ret = ibv_post_send(c->qp, w, &bad);
	oms_be_view(vc->ctx)->doorbells++;
	if (ret) {
		vb_conn_fail(vc, c, ret > 0 ? -ret : -EIO);
		return;
	}
	c->next_seq += (uint64_t)n;
	c->sq_used += (uint32_t)n;
	c->still_since = 0;
	vc->progress += (uint64_t)n;
	for (int i = 0; i < n; i++) {
		if (w[i].send_flags & IBV_SEND_SIGNALED)
			c->sig_inflight++;
		/* inline data was copied by ibv_post_send */
		if (ops[i]->loc == VB_LOC_INLINE && !ops[i]->src_counted) {
			ops[i]->src_counted = 1;
			vc->src_done++;
		}
	}
}

void vb_feed(struct vb_ctx *vc, struct vb_conn *c)
{
	struct ibv_send_wr w[VB_CHAIN];
	struct ibv_sge sge[VB_CHAIN];
	struct vb_op *ops[VB_CHAIN];
	uint32_t qd = oms_be_view(vc->ctx)->qdepth;
	uint32_t ci = (uint32_t)(c - vc->conn);
	uint32_t chain_sig = 0;	/* signaled WRs in the open chain */
	int n = 0, last_ag = -1;

	if (c->err || !c->qp)
		return;
	/* one entry stays free for a covering signaled WR (poll.c) */
	while (c->feed != c->rung && c->sq_used + (uint32_t)n + 1 < c->sq_depth) {
		struct vb_op *op = &vc->op[c->fifo[c->feed % qd]];
		uint64_t seq = c->next_seq + (uint64_t)n;
		int sig = 0;

		if (vb_areq_blocked(c, op))
			break;	/* one-sided, behind the agent's answers */
		if (vb_areq_is_req(op)) {
			int desc, err = vb_areq_take(c, op, op->posted, &w[n],
						     &sge[n], &desc);

			if (err == -EAGAIN)
				break;	/* no credit: answers bring it */
			if (err) {
				vb_conn_fail(vc, c, err);
				return;
			}
			if (desc)
				last_ag = n;
		} else {
			sig = build(vc, c, op, op->posted, &w[n], &sge[n]);
		}

		if (!sig && (c->sig_inflight + chain_sig == 0 ||
			     c->unsig_run + 1 >= VB_SIGNAL_EVERY))
			sig = 1;
		if (sig) {
			w[n].send_flags |= IBV_SEND_SIGNALED;
			chain_sig++;
			c->unsig_run = 0;
		} else {
			c->unsig_run++;
		}
		w[n].wr_id = VB_WRID(ci, c->gen, seq);
		if (!op->posted)
			op->first_seq = seq;
		op->posted++;
		if (op->posted == op->nwr) {
			op->last_seq = seq;
			c->feed++;
		}
		ops[n++] = op;
		if (n == VB_CHAIN) {
			if (last_ag >= 0)
				vb_areq_doorbell(c, &w[last_ag]);
			last_ag = -1;
			post_chain(vc, c, w, ops, n);
			n = 0;
			chain_sig = 0;
			if (c->err)
				return;
		}
	}
	if (last_ag >= 0)
		vb_areq_doorbell(c, &w[last_ag]);
	if (n)
		post_chain(vc, c, w, ops, n);
}

int vb_ring(struct oms_ctx *ctx, uint32_t n)
{
	struct vb_ctx *vc = VC(ctx);

	(void)n;
	for (int i = 0; i < VB_MAX_CONN; i++) {
		if (!vc->conn[i].used)
			continue;
		vc->conn[i].rung = vc->conn[i].tail;
		vb_feed(vc, &vc->conn[i]);
	}
	return 0;
}
