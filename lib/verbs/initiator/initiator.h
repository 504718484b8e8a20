/* SPDX-License-Identifier: MIT */
/*
 * The initiator's calls (lib/verbs/initiator/): connections
 * (oms_connect), posting, completions and the two carriers a connection
 * reaches its destination with.  The structs they work on (struct vb_op,
 * struct vb_conn) are common/verbs.h's, because the context that dev.c
 * makes holds them.  The listener never includes this header: the build
 * compiles lib/verbs/listener/ without lib/verbs/initiator/ on its
 * include path (tests/layers.sh), so that the two sides meet only in
 * common/ and in the backend's table (backend.c).
 */
#ifndef OMS_VERBS_INITIATOR_H
#define OMS_VERBS_INITIATOR_H

#include "verbs/common/verbs.h"

/* What a carrier's wr() says of the WR it filled (else a negative errno). */
#define VB_WR_SIGNAL	1	/* its completion carries a result */
#define VB_WR_DOORBELL	2	/* a chain's last one: to doorbell() */

/*
 * A connection's carrier: how its operations reach the destination,
 * chosen once, when the connection is established (conn.c): the one-sided
 * RC carrier (carrier_rc.c) or requests to the listener's agent
 * (carrier_agent.c over agent_req.c).  post.c and poll.c call through it
 * once per operation, WR and completion, and never ask which it is.
 */
struct vb_carrier_ops {
	/*
	 * Take @op for usable connection @c: queue it (vb_queue()) for the
	 * feed, or finish it at once (vb_op_finish()) with the error it
	 * cannot be carried with, or keep it off the ring until the carrier
	 * itself finishes it (an agent's flush).
	 */
	void (*post)(struct vb_ctx *vc, struct vb_conn *c, struct vb_op *op);
	/*
	 * WR @k of queued @op into @w/@sge (its wr_id and signaling are the
	 * caller's): VB_WR_* flags; -EAGAIN when @op may not go yet (the
	 * feed stops until a completion or an answer comes); another errno
	 * fails the connection.
	 */
	int (*wr)(struct vb_ctx *vc, struct vb_conn *c, struct vb_op *op,
		  uint32_t k, struct ibv_send_wr *w, struct ibv_sge *sge);
	/*
	 * A chain goes to the QP: @w is the last WR of it that wr() flagged
	 * VB_WR_DOORBELL, to be made the doorbell.  NULL when wr() never
	 * flags one.
	 */
	void (*doorbell)(struct vb_conn *c, struct ibv_send_wr *w);
	/*
	 * Every WR of @op is complete and it is off the connection's ring:
	 * finish it, or leave it to finish when what it waits for comes.
	 * 0, or the errno at which the connection stops (everything after
	 * @op is cancelled).
	 */
	int (*wrs_done)(struct vb_ctx *vc, struct vb_conn *c,
			struct vb_op *op);
	/*
	 * A receive completed on @c's QP: 0, or the connection's failure for
	 * the caller to make (*@cancel: what it holds is cancelled, the
	 * failure reported already).
	 */
	int (*recv)(struct vb_ctx *vc, struct vb_conn *c,
		    const struct ibv_wc *w, int *cancel);
	/* @c failed with @err, its ring emptied: whatever the carrier keeps
	 * off the ring finishes (its own status, else @err). */
	void (*stop)(struct vb_ctx *vc, struct vb_conn *c, int err);
	/*
	 * The context numbers @c's operations (DEST_SEQ), its next number
	 * @base, at most @qdepth in flight: 0 when the carrier keeps their
	 * order at the destination, else the errno that refuses the
	 * connection.
	 */
	int (*seq_start)(struct vb_conn *c, uint64_t base, uint32_t qdepth);
	/* Operations the carrier holds off @c's ring (requests waiting
	 * for their answers): the context is busy while there are any. */
	uint32_t (*held)(const struct vb_conn *c);
	/* What @c's destination does for the context: OMS_CAP_* of
	 * oms_dest_caps() (who orders acquire reads, who holds answers). */
	uint32_t (*dest_caps)(const struct vb_conn *c);
	/* The longest put @c carries in one operation. */
	uint64_t (*max_put)(const struct vb_conn *c);
};

/* op.c: at the bottom of the initiator */
void vb_op_finish(struct vb_ctx *vc, struct vb_op *op, int status);

/* conn.c */
int vb_connect(struct oms_ctx *ctx, const char *host, const char *port,
	       uint32_t timeout_ms, struct oms_rmr *rmr);
void vb_conn_events(struct vb_ctx *vc);
void vb_conn_destroy(struct vb_ctx *vc, struct vb_conn *c);
void vb_conn_fail(struct vb_ctx *vc, struct vb_conn *c, int err);
void vb_conn_cancel(struct vb_ctx *vc, struct vb_conn *c, int err);

/* agent_req.c: a connection's requests to its listener's agent */
struct oms_vw_hello;
struct oms_vw_region;
uint32_t vb_areq_hello(struct vb_ctx *vc, struct vb_conn *c,
		       struct oms_vw_hello *h);
int vb_areq_recvs(struct vb_ctx *vc, struct vb_conn *c);
int vb_areq_start(struct vb_ctx *vc, struct vb_conn *c,
		  const struct oms_vw_region *reg);
void vb_areq_free(struct vb_conn *c);
int vb_areq_seq_start(struct vb_conn *c, uint64_t base, uint32_t qdepth);
int vb_areq_seq_ours(struct vb_conn *c, const struct oms_wr *wr,
		     uint32_t region);
void vb_areq_unnum_queued(struct vb_conn *c, const struct oms_wr *wr);
int vb_areq_is_seq(const struct vb_conn *c);
uint32_t vb_areq_max_put(const struct vb_conn *c);
int vb_areq_wants(const struct vb_conn *c, const struct oms_wr *wr);
int vb_areq_prepare(struct vb_ctx *vc, struct vb_conn *c, struct vb_op *op);
int vb_areq_blocked(const struct vb_conn *c, const struct vb_op *op);
void vb_areq_flush(struct vb_ctx *vc, struct vb_conn *c, struct vb_op *op);
int vb_areq_take(struct vb_conn *c, struct vb_op *op, uint32_t k,
		 struct ibv_send_wr *w, struct ibv_sge *sge, int *desc);
void vb_areq_doorbell(struct vb_conn *c, struct ibv_send_wr *w);
uint32_t vb_areq_outstanding(const struct vb_conn *c);
/* An answer came in: 0, or the connection's failure (*@cancel: what it
 * holds is cancelled, the failure reported already) for the caller to
 * make (vb_conn_fail, vb_conn_cancel). */
int vb_areq_recv(struct vb_ctx *vc, struct vb_conn *c,
		 const struct ibv_wc *w, int *cancel);
void vb_areq_fail_waiting(struct vb_ctx *vc, struct vb_conn *c, int err);
int vb_areq_stop_at(const struct vb_op *op);
/* complete_upto() reached @op, whose WRs are done: 1 if it waits for its
 * answer still (marked so), 0 if it may finish now. */
int vb_areq_wait_answer(struct vb_op *op);
static inline int vb_areq_is_req(const struct vb_op *op)
{
	return op->ag.on;
}

static inline int vb_areq_is_flush(const struct vb_op *op)
{
	return op->ag.flush;
}

/* post.c */
int vb_post(struct oms_ctx *ctx, const struct oms_wr *wr);
int vb_ring(struct oms_ctx *ctx, uint32_t n);
void vb_feed(struct vb_ctx *vc, struct vb_conn *c);

/* @op joins @c's ring of operations, fed to the QP in order. */
static inline void vb_queue(struct vb_ctx *vc, struct vb_conn *c,
			    const struct vb_op *op)
{
	c->fifo[c->tail++ % oms_be_view(vc->ctx)->qdepth] = op->wr.slot;
}

/* carrier_rc.c: the one-sided carrier, and its parts the agent's uses */
extern const struct vb_carrier_ops vb_carrier_rc;
const struct vb_lmr *vb_lmr_find(const struct vb_ctx *vc, const void *p,
				 uint64_t len);
int vb_map_local(struct vb_ctx *vc, struct vb_op *op, int dev_writes);
int vb_op_remote(const struct vb_ctx *vc, const struct vb_conn *c,
		 struct vb_op *op);
int vb_rc_local(struct vb_ctx *vc, const struct vb_conn *c,
		struct vb_op *op);
int vb_rc_wr(struct vb_ctx *vc, struct vb_conn *c, struct vb_op *op,
	     uint32_t k, struct ibv_send_wr *w, struct ibv_sge *sge);

/* carrier_agent.c: requests to the listener's agent (agent_req.c) */
extern const struct vb_carrier_ops vb_carrier_agent;

/* poll.c */
int vb_poll(struct oms_ctx *ctx, struct oms_wc *wc, int max,
	    uint64_t *src_done);

/* rmr.region of a connection's region: its index and generation, so a
 * descriptor of a connection that was replaced is refused. */
#define VB_REGION(ci, gen)	((uint32_t)(ci) | (uint32_t)((gen) & 0xfff) << 8)

/* wr_id: connection, its generation and the WR's sequence on the QP */
#define VB_WRID(ci, gen, seq) \
	((uint64_t)(ci) << 60 | (uint64_t)((gen) & 0xfff) << 48 | \
	 ((seq) & 0xffffffffffffull))
#define VB_WRID_CONN(id)	((uint32_t)((id) >> 60))
#define VB_WRID_GEN(id)		((uint16_t)(((id) >> 48) & 0xfff))
#define VB_WRID_SEQ(id)		((id) & 0xffffffffffffull)
#define VB_SEQ_RECV		0xffffffffffffull	/* a receive's wr_id:
							 * an agent's answer */

#endif
