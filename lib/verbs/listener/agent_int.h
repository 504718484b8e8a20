/* SPDX-License-Identifier: MIT */
/*
 * The inside of a listener's destination agent, shared by its parts:
 * agent_srv.c serves (doorbells, rings, admission, answers), agent_watch.c
 * closes stalls and probes quiet connections, and agent_conn.c opens and
 * closes connections (slots, memory, QPs, a failed one's goodbye) under
 * both.  One struct va_srv is one serving thread's: its connections, its
 * completion queues and its core (lib/agent/agent.h, not thread-safe);
 * agent_pool.c runs several and says which thread may touch which.  A
 * header of its own, not agent_srv.c's, so that the parts below the
 * serving rounds see the structs without standing on them.
 */
#ifndef OMS_VERBS_LISTENER_AGENT_INT_H
#define OMS_VERBS_LISTENER_AGENT_INT_H

#include "verbs/listener/listener_int.h"
#include "agent/agent.h"
#include "agent/turns.h"
#include "verbs/common/wire.h"

#define VA_MAX_CONNS	256		/* connections per serving thread */
#define VA_MAX_SLOTS	256u		/* request ring slots per connection */
#define VA_STAGE_LEN	4096u		/* a staging slot (one per ring
					 * slot: a DEST_SEQ requester's
					 * numbers in flight) */
#define VA_OUT_MIN	(64u << 10)	/* the bytes back ring at accept */
#define VA_OUT_LEN	(2u << 20)	/* ... grown to at most: >= a get */
#define VA_CQ_FIRST	1024		/* a thread's queues at start: grown
					 * as its connections need */
#define VA_CHAIN	64		/* WRs per ibv_post_send */
#define VA_PROBE_N	0xffu		/* a wr_id's count that marks the
					 * liveness probe: above any chain's */
#define VA_QUANTUM	16u		/* descriptors a connection's turn */
#define VA_IDLE_TIMEOUTS 4		/* idle this many context timeouts: a
					 * slot another requester may take */
#define VA_WR_PER_REQ	4u		/* bytes back (two WRs when they wrap
					 * the ring) and two of records */

/*
 * wr_id of a chain's last WR, the only one signaled: connection,
 * generation, how many WRs the chain had, and where its bytes end in out
 * (RC completes a QP's WRs in order: its completion frees them all).
 */
#define VA_POS_MASK	((1ull << 40) - 1)
#define VA_WRID(i, gen, n, pos) ((uint64_t)((i) & 0xff) << 56 |	\
				 (uint64_t)((gen) & 0xff) << 48 |	\
				 (uint64_t)((n) & 0xff) << 40 |		\
				 ((pos) & VA_POS_MASK))
#define VA_WRID_IDX(id)	((uint32_t)((id) >> 56))
#define VA_WRID_GEN(id)	((uint8_t)((id) >> 48))
#define VA_WRID_N(id)	((uint32_t)((id) >> 40) & 0xff)
#define VA_WRID_POS(id)	((id) & VA_POS_MASK)

struct va_conn {
	struct va_srv *s;
	struct rdma_cm_id *id;
	uint32_t idx;		/* in s->conn[] */
	uint32_t live_at;	/* in s->live[] */
	uint8_t gen;
	uint32_t aid;		/* the core's connection id */
	int err;		/* the QP failed or the requester misbehaved */
	uint8_t *mem;		/* ring | staging (remote write) */
	size_t mem_len;
	struct ibv_mr *rmr;
	uint8_t *out;		/* out_cap bytes back | answer records */
	size_t out_len;
	uint32_t out_cap;	/* VA_OUT_MIN, grown up to VA_OUT_LEN */
	uint32_t stage_slots;	/* as many as ring slots */
	struct ibv_mr *lmr;
	uint32_t ring_slots;
	enum oms_ad_fmt fmt;	/* its descriptors, as the hello offered */
	uint64_t ring_pos;	/* the next descriptor to read */
	uint64_t out_head, out_tail;	/* free-running, bytes */
	uint64_t ans_pos;	/* answers made */
	uint64_t ans_sent;	/* of which in a chain posted */
	uint32_t sq_depth, sq_used;
	uint32_t peer;		/* the requester's node (peers.c) */
	uint32_t backlog;	/* rung, not yet handed to the core */
	struct oms_turn_wait wait;	/* since when its backlog waits
					 * for its turn (turns.h) */
	uint32_t inflight;	/* handed to the core, not yet answered */
	uint64_t resv_bytes;	/* bytes back the inflight may still land */
	uint32_t resv_wr;	/* WRs they and their answers may still take */
	uint32_t release_wr;	/* of which the next chain posted frees */
	uint64_t progress_ns;	/* last descriptor taken or send completed */
	uint64_t rung_ns;	/* last doorbell with work (or the connect) */
	uint64_t probe_ns;	/* last liveness probe posted or answered */
	int probing;		/* one in flight (its own send slot) */
	/* the open chain: bytes back, then the answer records */
	struct ibv_send_wr pend[VA_CHAIN];
	struct ibv_sge psge[VA_CHAIN];
	uint32_t npend;
	/* the k-th successful get or atomic answered is the k-th WRITE of
	 * bytes back (the core lands and completes in the same order); one
	 * still in the chain becomes its own answer (agent_desc.h) */
	uint64_t lands;		/* WRITEs of bytes back, ever */
	uint64_t lands_answered;
	uint64_t chain_lands;	/* lands before the open chain */
	uint8_t land_at[VA_CHAIN];	/* its WR, per land in the chain */
	struct oms_vw_cq cq;	/* the requester's completion ring */
};

struct va_srv {
	struct vb_ctx *vc;
	struct oms_agent *ag;
	struct va_hold *hold;	/* this process's puts, for the core's hold */
	int hold_global;	/* OMS_AGENT_F_HOLD_GLOBAL */
	struct ibv_comp_channel *cch;
	struct ibv_cq *rcq;	/* doorbells: receive completions */
	struct ibv_cq *scq;	/* the agent's writes */
	int scq_armed;		/* its completions wake the thread */
	struct oms_turns turns;	/* whose turn, and round-robin's count */
	struct va_conn *conn[VA_MAX_CONNS];	/* by index: a wr_id's */
	uint8_t gen[VA_MAX_CONNS];
	struct va_conn *live[VA_MAX_CONNS];	/* the same, packed: what
						 * every round walks */
	uint32_t nlive;
	struct va_conn *by_aid[OMS_AGENT_MAX_CONNS];
	uint64_t doorbells, answers, chains;	/* descriptors: turns.taken */
	uint64_t probes, probe_fails;	/* liveness probes answered, failed
					 * or overdue */
	uint64_t broken;	/* connections it closed (va_conn_broken) */
	uint64_t reg_bytes;	/* its connections' registered memory */
	uint64_t reg_peak;	/* ... at most, and their count then */
	uint32_t nlive_peak;
	uint32_t recv_used;	/* receives its connections may complete */
	uint32_t send_used;	/* sends they may have in flight */
	uint32_t nqp;		/* QPs on its queues: the live ones' and
				 * those detached, not yet destroyed */
	int fit_due;		/* a QP went: the queues may shrink */
	uint64_t cqe_peak;	/* both queues' entries, at most */
};

/* agent_conn.c: mark @ac failed, its QP to error, the requester told;
 * one receive for a doorbell on @ac's QP. */
void va_conn_broken(struct va_conn *ac, int err);
int va_post_recv(struct va_conn *ac);
/* agent_watch.c: stalls closed, quiet connections probed (rounds). */
void va_reap_stalled(struct va_srv *s);
void va_probe_idle(struct va_srv *s);

/* @s's queues, both just found empty, shrunk to what its connections
 * need when a burst of them left them much larger (agent_conn.c). */
void va_cq_fit(struct va_srv *s);

/* @ac's bytes ring grown to hold @want bytes (agent_conn.c); nothing of
 * it may be on the wire.  0 or -ENOMEM (the ring as it was). */
int va_out_grow(struct va_conn *ac, uint64_t want);

_Static_assert(VA_MAX_CONNS <= 256 && VA_MAX_CONNS <= OMS_AGENT_MAX_CONNS,
	       "a wr_id's connection index is 8 bits; the core's table");
_Static_assert(VB_AGENT_CONNS_MAX <= VA_MAX_CONNS * 64,
	       "a listener's connections fit its threads' tables");

/* The context's timeout, in ns: how long a requester may owe progress. */
static inline uint64_t va_timeout_ns(const struct va_srv *s)
{
	return (uint64_t)oms_be_view(s->vc->ctx)->attr->timeout_ms * 1000000ull;
}

#endif
