/* SPDX-License-Identifier: MIT */
/*
 * The requester's side of the destination agent (docs/dest-agent.md, step
 * 4's pure half): what one connection may have outstanding at a listener's
 * agent, where each request goes, and which request an answer is for.  No
 * verbs and no I/O: the backend writes what this says with RDMA WRITEs,
 * rings with the count it gives, and hands in the answer records it finds
 * in its completion ring.
 *
 * Credits.  Three things bound what may be outstanding, each from the
 * handshake (lib/verbs/common/wire.h, version 3):
 *   - the request ring: the agent reads descriptors in ring order, so the
 *     descriptor at position p may be written once the agent has read
 *     position p - ring_slots; an answer to the request at position q
 *     proves it read every position up to q;
 *   - the completion ring: the agent writes one answer per request, so no
 *     more than cq_slots requests may be unanswered;
 *   - staging: a put's payload stays in its slot until the put is
 *     performed, which its answer proves;
 *   - a stream's window: the agent takes numbers up to window - 1 past its
 *     next, and while the stream runs its next is at least the lowest
 *     unanswered number of the stream (it performs in order).  After a
 *     stop the agent answers -ECANCELED without moving its next, and
 *     refuses what is past its window: all cancelled anyway, until the
 *     resume.
 * Everything a request needs - its number, its table entry, its staging
 * slot, its share of the ring and of the completion ring - is taken at
 * once, when the operation is submitted (oms_agent_client_take(), in
 * program order); only its ring position is given when it is posted
 * (oms_agent_client_post()), which may be later (the source orderer held
 * it: L36).  Taking the credits with the number is what keeps a late
 * request from deadlocking: requests posted after it, waiting at the
 * agent for its number, hold staging and ring credits, and it already
 * has its own.  A request whose operation the orderer cancelled is posted
 * all the same, as a NOP with OMS_AD_F_CANCEL, so the stream stops there
 * as it must.
 *
 * Answers.  A request's tag names its table entry and the entry's
 * generation; entries are reused oldest first, so a tag returns only
 * after max_out x (2^20 - 1) requests.  An answer record whose tag is not
 * that of an outstanding request (forged, stale or repeated) is refused
 * with -EPROTO and changes nothing.  The agent answers a descriptor it
 * could not decode with tag 0, which no request carries: -EBADMSG, and
 * that request will never be answered - the ring is not what this side
 * wrote, so the connection is to be torn down.
 *
 * Resume.  oms_agent_client_resume() gives a request to post like any
 * other: a NOP with OMS_AD_F_RESUME naming the new run's first number.
 * In the ring it follows every descriptor of the old run and precedes
 * every one of the new, so the agent resumes the stream at the right
 * place whatever is still in flight.
 *
 * Not thread-safe: the context's lock serialises callers.
 */
#ifndef OMS_AGENT_CLIENT_H
#define OMS_AGENT_CLIENT_H

#include <stdint.h>

#define OMS_AGENT_CLIENT_MAX	4096u	/* requests outstanding at most */

struct oms_agent_client_cfg {
	uint32_t ring_slots;	/* power of two, 16..4096 */
	uint32_t cq_slots;	/* power of two, 16..4096 */
	uint32_t stage_slots;	/* 1..4096 (0: no puts) */
	uint16_t nstreams;	/* 1..64 */
	uint16_t window;	/* power of two, 1..256 */
};

/* One request: what take() gives, and where post() puts it. */
struct oms_agent_req {
	uint32_t tag;		/* put it in the descriptor */
	uint32_t stage_slot;	/* a put's payload slot; UINT32_MAX: none */
	uint16_t stream;	/* UINT16_MAX: no number */
	uint16_t seq;		/* its number (a resume: the new run's first) */
	uint8_t resume;		/* post it as a NOP with OMS_AD_F_RESUME */
	uint8_t pad[3];
	uint32_t ring_slot;	/* post: slot = pos % ring_slots */
	uint64_t pos;		/* post: its ring position */
};

struct oms_agent_client_stats {
	uint64_t taken, posted, answered;
	uint64_t no_credit;	/* -EAGAIN from take */
	uint64_t bad_answers;	/* -EPROTO records */
	uint64_t torn;		/* -EBADMSG records */
};

struct ac_entry;
struct ac_stream;

struct oms_agent_client {
	struct oms_agent_client_cfg cfg;
	uint32_t max_out;		/* min(ring, cq): the credit of both */
	struct ac_entry *ent;		/* [max_out] */
	uint32_t *free_ent, nfree_ent;	/* a FIFO from free_head */
	uint32_t free_head;
	uint32_t *free_stage, nfree_stage;
	struct ac_stream *st;		/* [nstreams] */
	uint64_t next_pos;		/* the next ring position */
	uint64_t unrung;		/* posted since the last doorbell */
	uint32_t unposted;		/* taken, not yet posted */
	uint32_t outstanding;		/* taken, not yet answered */
	struct oms_agent_client_stats s;
};

/* 0, -EINVAL (a number out of range), -ENOMEM. */
int oms_agent_client_init(struct oms_agent_client *cl,
			  const struct oms_agent_client_cfg *cfg);
void oms_agent_client_destroy(struct oms_agent_client *cl);

/*
 * Take what one request needs: a table entry (its tag), a staging slot if
 * @put, a ring and a completion credit, and, unless @stream is
 * UINT16_MAX, @stream's next number in program order.  @cookie is the
 * caller's, returned with the answer.  0 with *@req; -EAGAIN (no credit:
 * the stream has a window of numbers unanswered, or the ring, the
 * completion ring or staging is full - answers free them; nothing
 * taken); -EINVAL (also a put on a connection given no staging).
 */
int oms_agent_client_take(struct oms_agent_client *cl, int put,
			  uint16_t stream, uint64_t cookie,
			  struct oms_agent_req *req);

/*
 * Post a request taken before: its ring position goes into @req (always
 * available: take reserved it).  Write the descriptor there, then ring.
 * 0, -EINVAL (@req is not a request taken and not yet posted).
 */
int oms_agent_client_post(struct oms_agent_client *cl,
			  struct oms_agent_req *req);

/* The doorbell by count: requests posted since the last call (the
 * immediate of the WRITE_WITH_IMM that rings). */
uint32_t oms_agent_client_ring(struct oms_agent_client *cl);

/*
 * An answer record (OMS_AD_ANSWER_LEN bytes, agent_desc.h) the
 * agent wrote: 0 with the request's *@cookie, *@status and *@old (an
 * atomic's value before), its credits returned; -EPROTO (a record that
 * is malformed or answers no outstanding request: counted, nothing
 * changes); -EBADMSG (tag 0: the agent could not decode a descriptor of
 * ours; tear the connection down); -EINVAL.
 */
int oms_agent_client_answer(struct oms_agent_client *cl, const void *rec,
			    uint64_t *cookie, int *status, uint64_t *old);

/*
 * The requester resumed (oms_ctx_resume()): @stream starts a new run.
 * Fills *@req with the resuming request (its tag, the new run's first
 * number, resume = 1): post it, write a NOP with OMS_AD_F_RESUME and that
 * number, ring.  Numbers still unanswered are given up: their answers, if
 * any come, still return their credits.  0, -EBUSY (a number of the
 * stream is taken and not yet posted: post it first, a cancelled op as a
 * cancelling NOP), -EAGAIN (no table entry: answers free them), -EINVAL.
 */
int oms_agent_client_resume(struct oms_agent_client *cl, uint16_t stream,
			    uint64_t cookie, struct oms_agent_req *req);

/*
 * Give back a request taken and not posted that carries no number (its
 * operation will not be sent).  A numbered one cannot be given back: the
 * number is the stream's, so post it as a cancelling NOP.  0, -EINVAL.
 */
int oms_agent_client_untake(struct oms_agent_client *cl,
			    const struct oms_agent_req *req);

/*
 * Give a request taken and not yet posted the caller's @cookie (one
 * taken ahead of its operation: a number reserved for an operation the
 * source orderer still holds).  0, -EINVAL.
 */
int oms_agent_client_cookie(struct oms_agent_client *cl,
			    const struct oms_agent_req *req, uint64_t cookie);

/* The lowest number of @stream not yet answered (its next number when
 * every one is): every member below it has been answered.  0 for a bad
 * stream. */
uint16_t oms_agent_client_low(const struct oms_agent_client *cl,
			      uint16_t stream);

/* Requests taken and not answered. */
uint32_t oms_agent_client_outstanding(const struct oms_agent_client *cl);

#endif
