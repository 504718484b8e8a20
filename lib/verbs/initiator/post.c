// SPDX-License-Identifier: MIT
/*
 * Work requests.  post() checks an operation against its connection and
 * hands it to the connection's carrier (carrier_rc.c, carrier_agent.c),
 * which queues it on the connection's ring of slots; ring() lets the QP
 * have what is queued and feeds it (poll() goes on as the send queue
 * empties) as chains of work requests the carrier fills, one
 * ibv_post_send per chain: the context rings once for many operations
 * under OMS_CTX_F_DOORBELL_BATCH.
 *
 * Signaling: a WR is signaled when its completion carries a result (the
 * carrier says so: the last READ of a get, an atomic, a flush), when no
 * signaled WR of the QP is in flight, and at least every VB_SIGNAL_EVERY;
 * RC completes in order, so one signaled completion completes every
 * earlier WR (poll.c).
 */
#include <errno.h>
#include <string.h>

#include "verbs/common/verbs.h"
#include "verbs/initiator/initiator.h"

/*
 * OMS_WR_RESUME: resume the channel to @dest after oms_ctx_resume().  A
 * requester cannot reset an RC QP alone (the responder's QP is in error
 * too and the PSNs are lost), so a connection in error stays so and the
 * resume answers -ENOTCONN: oms_connect() again.  After it every operation
 * to that destination fails on its own with -ENOTCONN (none is behind an
 * unresumed failure any more).  A healthy connection has nothing to
 * resume: 0.
 */
static int resume(struct vb_ctx *vc, uint32_t dest)
{
	struct vb_conn *c;

	vb_conn_events(vc);	/* a disconnect not yet seen */
	if (vc->gone)
		return vc->gone;
	if (dest >= VB_MAX_CONN || !vc->conn[dest].used)
		return -ENOTCONN;
	c = &vc->conn[dest];
	if (!c->err && !c->disconnected)
		return 0;
	c->resumed = 1;
	return -ENOTCONN;
}

/*
 * The status of an operation to a connection in error.  Until the
 * context resumes (an OMS_WR_RESUME), an in-order channel cancels what
 * follows its failure (backend.h): -ECANCELED, once an operation has
 * reported the failure itself; -ENOTCONN for the first when none has (the peer left
 * while the QP was idle), so that a failure is never silent.
 */
static int conn_err(struct vb_conn *c)
{
	int err = c->reported && !c->resumed ? -ECANCELED : -ENOTCONN;

	c->reported = 1;
	return err;
}

/*
 * Hand @wr to its connection's carrier.  An operation the connection
 * cannot carry (none there, in error, a stale or out-of-range descriptor)
 * is not refused here: it completes at once with the error, through poll(), so
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
	if (wr->op == OMS_WR_RESUME) {
		vb_op_finish(vc, op, resume(vc, wr->dest));
		return 0;
	}
	if (vc->gone)
		err = vc->gone;
	else if (wr->dest >= VB_MAX_CONN || !vc->conn[wr->dest].used)
		err = -ENOTCONN;
	else if (vc->conn[wr->dest].err)
		err = conn_err(&vc->conn[wr->dest]);
	else
		c = &vc->conn[wr->dest];
	if (err)
		vb_op_finish(vc, op, err);
	else
		c->car->post(vc, c, op);
	return 0;
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

/* The chain @w[0..@n) to the QP, its doorbell WR (@bell, -1: none) made
 * so by the carrier first. */
static void chain_out(struct vb_ctx *vc, struct vb_conn *c,
		      struct ibv_send_wr *w, struct vb_op **ops, int n,
		      int bell)
{
	if (bell >= 0)
		c->car->doorbell(c, &w[bell]);
	post_chain(vc, c, w, ops, n);
}

void vb_feed(struct vb_ctx *vc, struct vb_conn *c)
{
	struct ibv_send_wr w[VB_CHAIN];
	struct ibv_sge sge[VB_CHAIN];
	struct vb_op *ops[VB_CHAIN];
	uint32_t qd = oms_be_view(vc->ctx)->qdepth;
	uint32_t ci = (uint32_t)(c - vc->conn);
	uint32_t chain_sig = 0;	/* signaled WRs in the open chain */
	int n = 0, bell = -1;

	if (c->err || !c->qp)
		return;
	/* one entry stays free for a covering signaled WR (poll.c) */
	while (c->feed != c->rung && c->sq_used + (uint32_t)n + 1 < c->sq_depth) {
		struct vb_op *op = &vc->op[c->fifo[c->feed % qd]];
		uint64_t seq = c->next_seq + (uint64_t)n;
		int f = c->car->wr(vc, c, op, op->posted, &w[n], &sge[n]);
		int sig;

		if (f == -EAGAIN)
			break;	/* it may not go yet: a completion or an
				 * answer lets it */
		if (f < 0) {
			vb_conn_fail(vc, c, f);
			return;
		}
		if (f & VB_WR_DOORBELL)
			bell = n;
		sig = (f & VB_WR_SIGNAL) != 0;
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
			chain_out(vc, c, w, ops, n, bell);
			n = 0;
			bell = -1;
			chain_sig = 0;
			if (c->err)
				return;
		}
	}
	if (n)
		chain_out(vc, c, w, ops, n, bell);
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
