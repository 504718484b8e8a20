// SPDX-License-Identifier: MIT
/*
 * How a verbs context's QPs are made, whichever side makes them: an RC QP
 * on the context's PD and CQ, the ACK timeout that lets the transport
 * wait as long as the context's timeout_ms, and the reads and atomics in
 * flight a QP may ask for.  Here, not in the initiator's conn.c, because
 * the listener sets its passive QPs up with the same rules: a listener
 * that called into conn.c would stand on the initiator.
 */
#include <errno.h>
#include <string.h>

#include "verbs/common/verbs.h"

int vb_qp_create(struct vb_ctx *vc, struct rdma_cm_id *id, uint32_t sq,
		 uint32_t rq, uint32_t *max_inline)
{
	struct ibv_qp_init_attr a;

	for (int tries = 0; tries < 2; tries++) {
		memset(&a, 0, sizeof(a));
		a.send_cq = vc->cq;
		a.recv_cq = vc->cq;
		a.qp_type = IBV_QPT_RC;
		a.cap.max_send_wr = sq;
		a.cap.max_recv_wr = rq;
		a.cap.max_send_sge = 1;
		a.cap.max_recv_sge = 1;
		a.cap.max_inline_data = tries ? 0 : VB_INLINE_WANT;
		if (!rdma_create_qp(id, vc->pd, &a)) {
			*max_inline = a.cap.max_inline_data;
			return 0;
		}
	}
	return vb_errno(-ENOMEM);
}

/*
 * The QP's ACK timeout exponent (4.096 us << t per try): the smallest, from
 * VB_ACK_TIMEOUT up, at which the transport's VB_RETRY_CNT + 1 tries last
 * the context's timeout_ms.  The transport then gives a peer as long as
 * the caller does before declaring it gone (-ETIMEDOUT): a fixed ~1 s
 * failed quiet on a Soft-RoCE guest that a loaded host had stopped for
 * longer, while the context allowed 20 s.
 */
uint8_t vb_ack_timeout(uint32_t timeout_ms)
{
	uint64_t want_ns = (uint64_t)timeout_ms * 1000000ull;
	uint8_t t = VB_ACK_TIMEOUT;

	while (t < 31 && (4096ull << t) * (VB_RETRY_CNT + 1) < want_ns)
		t++;
	return t;
}

int vb_set_ack_timeout(struct vb_ctx *vc, struct rdma_cm_id *id)
{
	uint8_t t = vb_ack_timeout(oms_be_view(vc->ctx)->attr->timeout_ms);

	return rdma_set_option(id, RDMA_OPTION_ID, RDMA_OPTION_ID_ACK_TIMEOUT,
			       &t, sizeof(t)) ? vb_errno(-EINVAL) : 0;
}

uint8_t vb_rd_atomic(int dev_max)
{
	return (uint8_t)(dev_max > 0 && dev_max < VB_RD_ATOMIC ? dev_max :
			 VB_RD_ATOMIC);
}
