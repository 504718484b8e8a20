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
 *    listener's flush word (common/dev.c, initiator/conn.c,
 *    listener/listen.c);
 *  - post() queues an operation on its connection, ring() turns what is
 *    queued into work requests with one ibv_post_send per QP
 *    (initiator/post.c), poll() reaps the CQ; one signaled completion
 *    completes every earlier unsignaled request of its QP, and one struct
 *    oms_wc is made per operation (initiator/poll.c);
 *  - acquire gets are ordered at the source: one RDMA READ per 64-byte
 *    line in address order, each with IBV_SEND_FENCE, and the next WR
 *    after an acquire fenced too; OMS_WR_F_FENCE is IBV_SEND_FENCE on an
 *    operation's first WR;
 *  - a QP in error fails every operation it still holds, and every later
 *    one, with an errno; nothing waits for a peer that is gone.
 *
 * This header is what both sides share (lib/verbs/common/): the context
 * that dev.c makes, with the initiator's connections and operations in
 * it, and the calls of common/ (the device, QP set-up, errors, source
 * addresses, peers).  The initiator's calls are in
 * initiator/initiator.h, the listener's in listener/listener.h; neither
 * side includes the other's.  Not exported; lib/verbs/ only.
 */
#ifndef OMS_VERBS_H
#define OMS_VERBS_H

#include <pthread.h>
#include <stdint.h>

#include "verbs/common/rdma_lib.h"	/* rdma-core, loaded at run time */

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

/* One connection: an RC QP to one remote region (a destination). */
struct vb_conn {
	int used;
	uint16_t gen;		/* tells completions of a reused index apart */
	const struct vb_carrier_ops *car;	/* set when established
						 * (initiator.h) */
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

/* dev.c: the device side of a context */
int vb_dev_open(struct oms_ctx *ctx);
void vb_dev_close(struct oms_ctx *ctx);
int vb_numa_node(const struct vb_ctx *vc);

/* src_addr.c */
int vb_src_addr_pick(struct vb_ctx *vc, const struct oms_be_rdma_want *w);
int vb_src_addr_fits(const struct vb_ctx *vc, const struct sockaddr *dst);
int vb_port_check(const struct vb_ctx *vc, const struct rdma_cm_id *id,
		  const char *what);
int vb_src_addr_bind(const struct vb_ctx *vc, const char *port,
		     struct sockaddr_storage *ss);

/* qp.c: how either side sets a QP up */
uint8_t vb_ack_timeout(uint32_t timeout_ms);
int vb_set_ack_timeout(struct vb_ctx *vc, struct rdma_cm_id *id);
uint8_t vb_rd_atomic(int dev_max);
int vb_qp_create(struct vb_ctx *vc, struct rdma_cm_id *id, uint32_t sq,
		 uint32_t rq, uint32_t *max_inline);

/* err.c: at the bottom, calling nothing of the backend */
int vb_errno(int fallback);
int vb_wc_status(enum ibv_wc_status st);

/* peers.c: nodes by address, and the puts on the wire to them */
struct sockaddr;
int vb_peer_id(const struct sockaddr *sa);
void vb_pw_add(struct vb_pw *pw, uint32_t peer);
void vb_pw_del(struct vb_pw *pw);
void vb_pw_scan(void (*fn)(void *arg, const struct vb_pw *pw,
			   uint64_t posted, uint64_t done), void *arg);

#endif
