// SPDX-License-Identifier: MIT
/*
 * The listener's liveness probe of its passive connections.
 *
 * A passive connection never sends: the initiator's one-sided operations
 * are answered by the NIC, not by this process.  So when the initiator
 * vanishes without a disconnect reaching the listener (its host lost the
 * link while its context died, its host was powered off), nothing tells
 * the listener, and the connection's QP and memory stay for ever: a
 * server that lives through such faults grows without bound.
 *
 * So each connection is probed once per interval (the listening context's
 * timeout_ms) with a zero-byte RDMA WRITE to the initiator: an RC peer
 * acknowledges it without touching memory or checking a key (IBA C9-88;
 * the connection manager gives every connected QP remote write access),
 * so a live initiator answers from its NIC, with no CPU and no effect on
 * what it does, and a gone one lets the QP's retries run out
 * (IBV_WC_RETRY_EXC_ERR, after the timeout the QP was given).  The retry
 * count is the initiator's (its connect request's), and Soft-RoCE retries
 * for ever at 7, which liboms's own initiators ask for: so a probe also
 * has a deadline of its own, VB_PROBE_GRACE intervals, past which the
 * initiator counts as gone whatever its QP still tries.  The listener
 * drops a connection whose probe failed or is overdue.  A probe occupies the
 * connection's one send slot; the completions come to a CQ of the
 * listener's own, polled by its thread, never the owner's.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "verbs/listener/probe.h"

int vb_probe_init(struct vb_probe *pb, struct ibv_context *verbs,
		  uint32_t interval_ms)
{
	memset(pb, 0, sizeof(*pb));
	pb->cq = ibv_create_cq(verbs, VB_PROBE_CQ, NULL, NULL, 0);
	if (!pb->cq)
		return vb_errno(-ENOMEM);
	pb->interval_ns = (uint64_t)(interval_ms ? interval_ms : 2000) *
			  1000000ull;
	return 0;
}

void vb_probe_fini(struct vb_probe *pb)
{
	if (pb->cq)
		ibv_destroy_cq(pb->cq);
	pb->cq = NULL;
}

void vb_probe_conn_init(struct vb_probe *pb, struct vb_probe_conn *pc,
			struct ibv_qp *qp, uint64_t now_ns)
{
	memset(pc, 0, sizeof(*pc));
	pc->qp = qp;
	pc->id = ++pb->next_id;
	pc->due_ns = now_ns + pb->interval_ns;
}

/* Probe @pc if it is due and nothing of it is in flight.  A post that
 * fails (the QP in error already) counts as a failed probe: 1. */
int vb_probe_post(struct vb_probe *pb, struct vb_probe_conn *pc,
		  uint64_t now_ns)
{
	struct ibv_send_wr wr, *bad;

	if (pc->posted || now_ns < pc->due_ns ||
	    pb->in_flight >= VB_PROBE_MAX)
		return 0;
	memset(&wr, 0, sizeof(wr));
	wr.wr_id = pc->id;
	wr.opcode = IBV_WR_RDMA_WRITE;
	wr.send_flags = IBV_SEND_SIGNALED;
	wr.num_sge = 0;		/* zero bytes: no address, no key */
	if (ibv_post_send(pc->qp, &wr, &bad))
		return 1;
	pc->posted = 1;
	pc->due_ns = now_ns + VB_PROBE_GRACE * pb->interval_ns;
	pb->in_flight++;
	return 0;
}

/* Is @pc's probe in flight past its deadline: its initiator gone? */
int vb_probe_overdue(const struct vb_probe_conn *pc, uint64_t now_ns)
{
	return pc->posted && now_ns >= pc->due_ns;
}

/*
 * The next probe completion: 0 none, 1 (*@id, *@ok) one.  Its connection
 * may be gone already (dropped with the probe in flight: the flush of its
 * QP completes it): the caller finds it by id, or ignores it.
 */
int vb_probe_reap(struct vb_probe *pb, uint64_t *id, int *ok)
{
	struct ibv_wc wc;

	if (ibv_poll_cq(pb->cq, 1, &wc) <= 0)
		return 0;
	*id = wc.wr_id;
	*ok = wc.status == IBV_WC_SUCCESS;
	if (*ok)
		pb->answered++;
	else if (wc.status != IBV_WC_WR_FLUSH_ERR)	/* not a drop's flush */
		pb->failed++;
	return 1;
}

/* @pc's probe completed: the next one is due an interval on. */
void vb_probe_done(struct vb_probe *pb, struct vb_probe_conn *pc,
		   uint64_t now_ns)
{
	if (pc->posted)
		pb->in_flight--;
	pc->posted = 0;
	pc->due_ns = now_ns + pb->interval_ns;
}

/* @pc is dropped: its probe in flight, if any, no longer counts. */
void vb_probe_forget(struct vb_probe *pb, struct vb_probe_conn *pc)
{
	if (pc->posted)
		pb->in_flight--;
	pc->posted = 0;
}

/* Milliseconds until some connection may be due: the listener's thread
 * waits no longer. */
int vb_probe_wait_ms(const struct vb_probe *pb)
{
	return (int)(pb->interval_ns / 4000000ull) + 1;
}
