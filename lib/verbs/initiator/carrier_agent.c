// SPDX-License-Identifier: MIT
/*
 * The agent's carrier: a connection whose listener gave it its agent
 * (agent_req.c has the requests, their order and their answers).  What
 * the agent takes (acquire and class-2 gets; every operation of a
 * DEST_SEQ connection) goes to it as a request; the rest goes one-sided,
 * through the RC carrier's parts (carrier_rc.c), once the agent has
 * answered every request before it.
 */
#include <errno.h>

#include "verbs/common/verbs.h"
#include "verbs/initiator/initiator.h"

/* A request to the listener's agent: its landing, its source's bytes. */
static int prepare_req(struct vb_ctx *vc, struct vb_conn *c, struct vb_op *op)
{
	int err;

	if ((op->wr.op == OMS_WR_FADD || op->wr.op == OMS_WR_CAS) &&
	    op->raddr % 8)
		return -EINVAL;
	err = vb_areq_prepare(vc, c, op);
	if (err)
		return err;
	if (op->wr.op == OMS_WR_PUT)	/* its bytes go to a staging slot */
		return vb_map_local(vc, op, 0);
	if (!op->src_counted) {	/* no local bytes to read */
		op->src_counted = 1;
		vc->src_done++;
	}
	return 0;
}

static int prepare(struct vb_ctx *vc, struct vb_conn *c, struct vb_op *op)
{
	int err = vb_op_remote(vc, c, op);

	if (err)
		return err;
	if (vb_areq_wants(c, &op->wr))
		return prepare_req(vc, c, op);
	return vb_rc_local(vc, c, op);
}

static void agent_post(struct vb_ctx *vc, struct vb_conn *c, struct vb_op *op)
{
	const struct oms_wr *wr = &op->wr;
	int err;

	if (!vb_areq_seq_ours(c, wr, VB_REGION(wr->dest, c->gen))) {
		/* a number of an earlier connection at this index */
		vb_op_finish(vc, op, -ENOTCONN);
		return;
	}
	err = prepare(vc, c, op);
	if (err && vb_areq_is_seq(c) && (wr->flags & OMS_WR_F_SEQ) &&
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
		return;
	}
	if (vb_areq_is_flush(op)) {	/* answered here, off the QP */
		vb_areq_flush(vc, c, op);
		return;
	}
	vb_areq_unnum_queued(c, wr);
	vb_queue(vc, c, op);
}

static int agent_wr(struct vb_ctx *vc, struct vb_conn *c, struct vb_op *op,
		    uint32_t k, struct ibv_send_wr *w, struct ibv_sge *sge)
{
	int desc, err;

	if (vb_areq_blocked(c, op))
		return -EAGAIN;	/* one-sided, behind the agent's answers */
	if (!vb_areq_is_req(op))
		return vb_rc_wr(vc, c, op, k, w, sge);
	err = vb_areq_take(c, op, k, w, sge, &desc);
	if (err)
		return err;	/* -EAGAIN: no credit, answers bring it */
	/* the chain's last descriptor rings the agent's doorbell */
	return desc ? VB_WR_DOORBELL : 0;
}

static int agent_wrs_done(struct vb_ctx *vc, struct vb_conn *c,
			  struct vb_op *op)
{
	(void)c;
	if (vb_areq_wait_answer(op))
		return 0;	/* done when answered */
	vb_op_finish(vc, op, op->status);
	/* the agent refused it: everything before it is done, everything
	 * after it is cancelled */
	return vb_areq_stop_at(op) ? op->status : 0;
}

/* The agent orders acquire reads and holds class-2 answers while it
 * serves the connection (it may stop: then the initiator does). */
static uint32_t agent_dest_caps(const struct vb_conn *c)
{
	uint32_t f = OMS_CAP_ACQUIRE_READ | OMS_CAP_STRONG_STORE;

	if (vb_areq_wants(c, &(struct oms_wr){ .op = OMS_WR_GET,
					       .flags = OMS_WR_F_ACQUIRE }))
		return f | OMS_CAP_DEST_ORDER_AGENT | OMS_CAP_RESP_HOLD;
	return f | OMS_CAP_ACQUIRE_AT_SOURCE;
}

/* A numbered connection's puts go through a staging slot of the agent. */
static uint64_t agent_max_put(const struct vb_conn *c)
{
	return vb_areq_is_seq(c) ? vb_areq_max_put(c) : OMS_MAX_OP_LEN;
}

const struct vb_carrier_ops vb_carrier_agent = {
	.post = agent_post,
	.wr = agent_wr,
	.doorbell = vb_areq_doorbell,
	.wrs_done = agent_wrs_done,
	.recv = vb_areq_recv,
	.stop = vb_areq_fail_waiting,
	.seq_start = vb_areq_seq_start,
	.held = vb_areq_outstanding,
	.dest_caps = agent_dest_caps,
	.max_put = agent_max_put,
};
