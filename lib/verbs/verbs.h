/* SPDX-License-Identifier: MIT */
/*
 * The verbs backend: the operations table of lib/backend.h over RC queue
 * pairs (librdmacm connections, libibverbs data path).  docs/verbs.md has
 * the design; in short:
 *
 *  - one device per context (OMS_DEVICE, else the first), one protection
 *    domain and one completion queue per context, buffers and the listener
 *    thread on the device's NUMA node (OMS_NUMA_NODE overrides);
 *  - each oms_connect() is one RC QP, one destination (rmr.dest) and one
 *    in-order channel: the context layer's store orderer runs them as
 *    POSTED channels, so a strong store on the same QP goes at once and
 *    one on another QP waits for a flush, an 8-byte RDMA READ of the
 *    listener's flush word (dev.c, conn.c, target/listen.c);
 *  - post() queues an operation on its connection, ring() turns what is
 *    queued into work requests with one ibv_post_send per QP (post.c),
 *    poll() reaps the CQ; one signaled completion completes every earlier
 *    unsignaled request of its QP, and one struct oms_wc is made per
 *    operation (poll.c);
 *  - acquire gets are ordered at the source: one RDMA READ per 64-byte
 *    line in address order, each with IBV_SEND_FENCE, and the next WR
 *    after an acquire fenced too; OMS_WR_F_FENCE is IBV_SEND_FENCE on an
 *    operation's first WR;
 *  - a QP in error fails every operation it still holds, and every later
 *    one, with an errno; nothing waits for a peer that is gone.
 *
 * Not exported; lib/verbs/ only.
 */
#ifndef OMS_VERBS_H
#define OMS_VERBS_H

#include <pthread.h>
#include <stdint.h>

#include "verbs/rdma_lib.h"	/* rdma-core, loaded at run time */

#include "backend.h"
#include "util/clock.h"
#include "util/export.h"

#define VB_MAX_CONN	OMS_MAX_NODES	/* one destination per connection */
#define VB_MAX_MR	256		/* local regions per context */
#define VB_LINE		64		/* acquire: one READ per line */
#define VB_SQ_DEPTH	256		/* send queue entries per QP */
#define VB_SIGNAL_EVERY	32		/* at least one signaled WR per N */
#define VB_CHAIN	32		/* WRs per ibv_post_send */
#define VB_BOUNCE	4096		/* bounce bytes per operation slot */
#define VB_INLINE_WANT	256		/* max_inline_data asked for */
#define VB_ACK_TIMEOUT	15		/* at least 4.096 us << 15 = 134 ms
					 * per try; more when the context's
					 * timeout_ms asks (vb_ack_timeout) */
#define VB_RETRY_CNT	7		/* tries after the first */
#define VB_RD_ATOMIC	128		/* reads/atomics in flight per QP, at
					 * most (the device may allow fewer) */
#define VB_AGENT_CQ_MAX	256		/* an agent's answers owed at most
					 * per connection (its request ring
					 * is no larger: agent_srv.c) */
#define VB_KICK_NS	(200ull * 1000000)	/* a QP that stood still this
						 * long with WRs on it gets a
						 * doorbell (poll.c) */

#define VB_MAX_PEERS	64		/* nodes the agents' holds tell apart
					 * (OMS_AGENT_MAX_PEERS) */

/*
 * One connection's puts on the wire, for the class-2 hold of this
 * process's agents (peers.c): counted when handed to the QP and when
 * completed, acknowledged or failed.
 */
struct vb_pw {
	uint64_t posted;	/* atomic */
	uint64_t done;		/* atomic, <= posted */
	uint64_t serial;	/* the registry's name for it; 0: not in it */
	uint32_t peer;		/* vb_peer_id() of the listener */
	struct vb_pw *next;
};

/* How an operation's local bytes reach the device. */
enum vb_local {
	VB_LOC_NONE = 0,	/* flush, nop */
	VB_LOC_INLINE,		/* put: copied into the WQE at post */
	VB_LOC_BOUNCE,		/* the slot's registered bounce buffer */
	VB_LOC_MR,		/* inside a registered oms_mr: zero copy */
	VB_LOC_TMP,		/* registered for this operation only */
	VB_LOC_RESULT,		/* atomics, flush: the slot's 8-byte word */
	VB_LOC_LAND,		/* an agent's get: its connection's landing
				 * slot, copied out when answered */
};

/* An operation's part that the agent's requests own (agent_req.c): the
 * agent's carrier (carrier_agent.c) asks it through vb_areq_*(). */
struct vb_areq_op {
	uint8_t on;		/* a request to the listener's agent: done
				 * when answered */
	uint8_t answered;	/* its answer came (status in .status) */
	uint8_t waiting;	/* its WRs are done, its answer is not */
	uint8_t flush;		/* a flush of a DEST_SEQ connection: done
				 * when its members are answered, never on
				 * the QP (vb_areq_flush()) */
	int status;
	uint32_t tag;		/* its tag, */
	uint32_t ring;		/* ring slot */
	uint32_t stage;		/* and a put's staging slot */
	uint64_t unnum;		/* a flush: unnumbered puts queued before it */
};

/* One operation of the context (indexed by its slot). */
struct vb_op {
	struct oms_wr wr;
	uint64_t raddr;		/* remote address of the first byte */
	uint64_t first_seq;	/* sequence of its first WR on the QP */
	uint64_t last_seq;	/* of its last WR, once all are posted */
	void *lbuf;		/* local address the WRs use */
	struct ibv_mr *tmp;	/* VB_LOC_TMP */
	uint32_t lkey;
	uint32_t rkey;
	uint32_t nwr;		/* WRs it becomes (lines of an acquire) */
	uint32_t posted;	/* of which handed to the QP */
	int status;
	uint8_t loc;		/* enum vb_local */
	uint8_t src_counted;	/* counted in the source-consumed total */
	uint8_t fence_first;	/* first WR carries IBV_SEND_FENCE */
	uint64_t pw_serial;	/* a put counted in its connection's vb_pw
				 * (that registration's serial), 0: not */
	struct vb_areq_op ag;	/* agent_req.c's alone */
};

struct vb_conn;
struct vb_ctx;

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
};

/* One connection: an RC QP to one remote region (a destination). */
struct vb_conn {
	int used;
	uint16_t gen;		/* tells completions of a reused index apart */
	const struct vb_carrier_ops *car;	/* set when established */
	struct rdma_cm_id *id;
	struct ibv_qp *qp;
	uint32_t max_inline;
	uint32_t sq_depth;
	uint32_t sq_used;	/* WRs posted and not known complete */
	uint64_t next_seq;	/* sequence of the next WR posted */
	uint64_t done_seq;	/* WRs below this are complete */
	uint32_t sig_inflight;	/* signaled WRs posted, not reaped */
	uint32_t unsig_run;	/* unsignaled WRs since the last signaled */
	uint64_t still_since;	/* ns: WRs on it and nothing moved since */
	int acq_fence;		/* an acquire was the last: fence the next WR */
	int err;		/* first error: the QP is unusable */
	int reported;		/* an op completed with the QP's failure:
				 * later ones are cancelled (-ECANCELED) */
	int resumed;		/* OMS_WR_RESUME came after the failure:
				 * later ones fail (-ENOTCONN) */
	int disconnected;	/* the peer said goodbye */
	int peer_left;		/* ... and its completions are taken: fail */
	/* the operations on it, oldest first: a ring of slots */
	uint32_t *fifo;
	uint32_t head, feed, rung, tail; /* free-running; feed: next to
					  * post; rung: the doorbell let
					  * the QP have those before it */
	/* the remote region (rmr.region indexes the same table) */
	uint64_t raddr, rlen;
	uint32_t rkey, raccess;
	/* the listener's flush word: what a flush READs */
	uint64_t flush_addr;
	uint32_t flush_rkey;
	struct vb_areq *ag;	/* the listener's agent serves it */
	int agent_busy;		/* it asked for the agent, which had no
				 * slot for it (-EUSERS where it is needed) */
	struct vb_pw pw;	/* its puts on the wire (peers.c) */
};

struct vb_lmr {			/* a local region (oms_mr_reg) */
	struct ibv_mr *mr;
	uint8_t *addr;
	uint64_t len;
	int used;
};

struct vb_ctx {
	struct oms_ctx *ctx;
	struct ibv_context *verbs;	/* owned by librdmacm */
	struct ibv_pd *pd;
	struct ibv_cq *cq;
	struct ibv_device_attr dattr;
	char dev_name[32];
	int numa_node;			/* -1 unknown */
	/* bounce buffers and atomic results, on the NUMA node */
	uint8_t *buf;
	size_t buf_len;
	int buf_numa;			/* allocated with libnuma */
	struct ibv_mr *buf_mr;
	uint8_t *bounce;		/* [qdepth][VB_BOUNCE] */
	uint64_t *result;		/* [qdepth] */
	struct vb_op *op;		/* [qdepth] */
	struct vb_conn conn[VB_MAX_CONN];
	struct vb_lmr lmr[VB_MAX_MR];
	/* completions made, not yet handed out: a ring of qdepth */
	struct oms_wc *wc;
	uint32_t wc_head, wc_tail;
	uint64_t src_done;		/* operations whose local bytes are done */
	uint64_t progress;		/* moves with every completion and post */
	uint64_t idle_beat;
	int gone;			/* the device is gone */
	struct rdma_event_channel *cm_ch;	/* this context's connections */
	/* the user's port and GID (OMS_PORT, OMS_GID_INDEX; src_addr.c) */
	uint32_t port;			/* 0: the route decides */
	struct sockaddr_storage src;	/* the GID's address, if src_len */
	socklen_t src_len;
};

#define VC(ctx) ((struct vb_ctx *)oms_be_view(ctx)->priv)

/* dev.c */
int vb_dev_open(struct oms_ctx *ctx);
void vb_dev_close(struct oms_ctx *ctx);
int vb_numa_node(const struct vb_ctx *vc);

/* op.c: at the bottom, calling nothing of the backend */
int vb_errno(int fallback);
void vb_op_finish(struct vb_ctx *vc, struct vb_op *op, int status);
int vb_wc_status(enum ibv_wc_status st);

/* target/: the listener, its agent server and hold (target/target.h) */
int vb_listen(struct oms_ctx *ctx, const char *addr, const char *port,
	      const struct oms_be_region *served, void **lpriv);
void vb_listener_close(struct oms_ctx *ctx, void *lpriv);
int vb_listener_peers(struct oms_ctx *ctx, void *lpriv);

/* src_addr.c */
int vb_src_addr_pick(struct vb_ctx *vc, const struct oms_be_rdma_want *w);
int vb_src_addr_fits(const struct vb_ctx *vc, const struct sockaddr *dst);
int vb_port_check(const struct vb_ctx *vc, const struct rdma_cm_id *id,
		  const char *what);
int vb_src_addr_bind(const struct vb_ctx *vc, const char *port,
		     struct sockaddr_storage *ss);

/* conn.c */
int vb_connect(struct oms_ctx *ctx, const char *host, const char *port,
	       uint32_t timeout_ms, struct oms_rmr *rmr);
void vb_conn_events(struct vb_ctx *vc);
void vb_conn_destroy(struct vb_ctx *vc, struct vb_conn *c);
void vb_conn_fail(struct vb_ctx *vc, struct vb_conn *c, int err);
void vb_conn_cancel(struct vb_ctx *vc, struct vb_conn *c, int err);
uint8_t vb_ack_timeout(uint32_t timeout_ms);
int vb_set_ack_timeout(struct vb_ctx *vc, struct rdma_cm_id *id);
uint8_t vb_rd_atomic(int dev_max);
int vb_qp_create(struct vb_ctx *vc, struct rdma_cm_id *id, uint32_t sq,
		 uint32_t rq, uint32_t *max_inline);

/* peers.c: nodes by address, and the puts on the wire to them */
struct sockaddr;
int vb_peer_id(const struct sockaddr *sa);
void vb_pw_add(struct vb_pw *pw, uint32_t peer);
void vb_pw_del(struct vb_pw *pw);
void vb_pw_scan(void (*fn)(void *arg, const struct vb_pw *pw,
			   uint64_t posted, uint64_t done), void *arg);

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
