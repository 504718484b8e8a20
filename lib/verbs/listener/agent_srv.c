// SPDX-License-Identifier: MIT
/*
 * The destination agent on a verbs listener (docs/dest-agent.md, "Layers"):
 * the transport around the agent's core (lib/agent/agent.h), as one
 * serving thread runs it.  A listener started with OMS_AGENT=1 in its
 * environment runs one or more (agent_pool.c), each with a struct va_srv
 * and a core of its own, driven only from that thread; agent_conn.c opens
 * and closes their connections.
 *
 * Per connection that asks for it (a version-3 hello) the listener
 * registers, on its own protection domain:
 *   - the request ring (64-byte descriptors) and the staging slots, which
 *     only the requester writes (remote write);
 *   - the bytes in flight back to it (answers' data, answer records),
 *     local only;
 * (agent_conn.c says how much) and gives the connection's QP completion
 * queues of its serving thread's own: receives (the doorbells) on one
 * with a completion channel that the thread sleeps on, sends (what the
 * agent writes back) on another that is reaped as room is needed.
 *
 * A doorbell is a WRITE_WITH_IMM whose immediate is a count: the
 * descriptors written into the ring since the last one, read here in ring
 * order, each copied out of the ring before it is decoded (the requester
 * cannot change it under the agent's feet) and handed to the core.  A
 * count larger than the ring is a requester that ignored its credit: the
 * connection is closed.  What the core lands (a get's bytes, an atomic's
 * old value) goes back by RDMA WRITE into the requester's landing buffer;
 * each completion becomes a 16-byte answer record for the requester's
 * completion ring (wire.h's hello).  Per round (the doorbells the
 * completion channel woke the thread for) each connection gets one chain,
 * one ibv_post_send: the bytes back, then the round's records in one
 * WRITE (two when they wrap the ring), the last a WRITE_WITH_IMM whose
 * immediate is their count, so that one receive completion at the
 * requester says they are all there.  RC delivers a QP's writes in order,
 * so a get's bytes are in place before its answer.  Only a chain's last
 * WR is signaled.
 *
 * Sharing (docs/dest-agent.md, "Sharing").  The thread serves every
 * connection dealt to it and never waits for one:
 *   - a doorbell only counts descriptors into the connection's backlog;
 *     the backlogs are then taken round-robin, VA_QUANTUM at a time
 *     (lib/agent/turns.h), so a requester that floods gets its turn and
 *     no more;
 *   - a descriptor is handed to the core only when its connection has
 *     room for everything its answer can take (admit()): the bytes it may
 *     land, the WRs of those bytes and of answer records, a record slot.
 *     The room is reserved until the answer goes, so land() always finds
 *     it and nothing ever waits for a send queue or the bytes ring; a
 *     connection without room keeps its backlog until its requester's
 *     acknowledgements free some (the send queue's completions wake the
 *     thread while a backlog waits);
 *   - a connection that owes work (a backlog, sends not acknowledged) and
 *     makes no progress for the context's timeout is closed: a requester
 *     that died or keeps no receives posted frees its slot;
 *   - the listener's slots (agent_pool.c: OMS_AGENT_CONNS, three in four
 *     of them for one node); a new requester that finds none takes the
 *     slot of the one idle longest (no work owed, no doorbell with work
 *     for VA_IDLE_TIMEOUTS context timeouts), or is told that the agent
 *     is busy (wire.h's OMS_VW_F_AGENT_BUSY: -EUSERS where it needs the
 *     agent).
 * The requester's credits (lib/agent/client.h) keep its outstanding
 * requests at most min(ring, completion ring) slots, and a backlog past
 * the ring is a requester that ignored them: the connection is closed.
 * A requester that goes away puts its QP in error: what it had
 * outstanding is dropped (oms_agent_conn_close()), and nothing of it is
 * written again.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "verbs/listener/agent_int.h"
#include "verbs/listener/probe.h"
#include "util/barrier.h"

int vb_agent_wanted(void)
{
	const char *e = getenv("OMS_AGENT");

	return e && !strcmp(e, "1");
}

/* The requester broke the protocol: fail its QP and say goodbye, so it
 * learns at once (its CM sees the disconnect) rather than at its next
 * request's retries. */
static void conn_refuse(struct va_conn *ac, const char *why)
{
	fprintf(stderr, "liboms: agent: %s: connection closed\n", why);
	va_conn_broken(ac, -EPROTO);
}

static void send_done(struct va_srv *s, const struct ibv_wc *w)
{
	uint32_t i = VA_WRID_IDX(w->wr_id);
	struct va_conn *ac = i < VA_MAX_CONNS ? s->conn[i] : NULL;
	uint32_t n = VA_WRID_N(w->wr_id);
	uint64_t end;

	if (!ac || ac->gen != VA_WRID_GEN(w->wr_id) || ac->err)
		return;		/* a closed or failed connection's */
	if (w->status != IBV_WC_SUCCESS) {
		if (n == VA_PROBE_N)
			s->probe_fails++;
		va_conn_broken(ac, vb_wc_status(w->status));
		return;
	}
	if (n == VA_PROBE_N) {	/* the requester is there */
		s->probes++;
		ac->probing = 0;
		ac->probe_ns = oms_now_ns();
		return;
	}
	if (!n)
		return;		/* not a chain's last WR */
	ac->sq_used -= n <= ac->sq_used ? n : ac->sq_used;
	ac->progress_ns = oms_now_ns();
	end = ac->out_tail + ((VA_WRID_POS(w->wr_id) - ac->out_tail) &
			      VA_POS_MASK);
	if (end <= ac->out_head)
		ac->out_tail = end;
}

/* Reap the agent's send completions; 0, or -EIO (the CQ failed). */
static int reap_sends(struct va_srv *s)
{
	struct ibv_wc w[32];
	int n;

	do {
		n = ibv_poll_cq(s->scq, 32, w);
		if (n < 0)
			return -EIO;
		for (int i = 0; i < n; i++)
			send_done(s, &w[i]);
	} while (n == 32);
	return 0;
}

/* Append one WRITE of @len bytes at @laddr from @lbuf to the chain. */
static struct ibv_send_wr *append(struct va_conn *ac, const void *lbuf,
				  uint32_t len, uint64_t raddr, uint32_t rkey)
{
	struct ibv_send_wr *w = &ac->pend[ac->npend];
	struct ibv_sge *sge = &ac->psge[ac->npend++];

	memset(w, 0, sizeof(*w));
	/* unsignaled, but a failed or flushed WR completes all the same:
	 * it must name its connection (a count of 0 frees nothing) */
	w->wr_id = VA_WRID(ac->idx, ac->gen, 0, ac->out_head);
	sge->addr = (uintptr_t)lbuf;
	sge->length = len;
	sge->lkey = ac->lmr->lkey;
	w->opcode = IBV_WR_RDMA_WRITE;
	w->sg_list = sge;
	w->num_sge = 1;
	w->wr.rdma.remote_addr = raddr;
	w->wr.rdma.rkey = rkey;
	return w;
}

/*
 * Post the chain: the bytes back, then the answer records made since the
 * last chain (one WRITE, two when they wrap the requester's ring), the last
 * with WRITE_WITH_IMM and their count: one receive completion there for
 * the lot.  Only the chain's last WR is signaled.  0, or the error.
 */
static int flush(struct va_conn *ac)
{
	uint32_t nans = (uint32_t)(ac->ans_pos - ac->ans_sent);
	struct ibv_send_wr *w = NULL, *bad;
	int ret;

	if (ac->err)
		return ac->err;
	if (nans) {
		uint32_t first = (uint32_t)(ac->ans_sent % ac->cq.slots);
		uint32_t k = nans < ac->cq.slots - first ? nans :
			     ac->cq.slots - first;

		w = append(ac, ac->out + ac->out_cap +
			   (size_t)first * OMS_AD_ANSWER_LEN,
			   k * OMS_AD_ANSWER_LEN,
			   ac->cq.addr + (uint64_t)first * OMS_AD_ANSWER_LEN,
			   ac->cq.rkey);
		if (k < nans)	/* the rest from the ring's start */
			w = append(ac, ac->out + ac->out_cap,
				   (nans - k) * OMS_AD_ANSWER_LEN,
				   ac->cq.addr, ac->cq.rkey);
		w->opcode = IBV_WR_RDMA_WRITE_WITH_IMM;
		w->imm_data = htonl(nans);
	}
	if (!ac->npend)
		return 0;
	/* admit() reserved these WRs: the queue has room, unless the
	 * books are wrong; then this connection alone fails */
	if (ac->sq_used + ac->npend > ac->sq_depth) {
		va_conn_broken(ac, -ENOBUFS);
		return ac->err;
	}
	for (uint32_t i = 0; i + 1 < ac->npend; i++)
		ac->pend[i].next = &ac->pend[i + 1];
	w = &ac->pend[ac->npend - 1];
	w->next = NULL;
	w->send_flags |= IBV_SEND_SIGNALED;
	w->wr_id = VA_WRID(ac->idx, ac->gen, ac->npend, ac->out_head);
	ret = ibv_post_send(ac->id->qp, ac->pend, &bad);
	if (ret) {
		va_conn_broken(ac, ret > 0 ? -ret : -EIO);
		return ac->err;
	}
	ac->sq_used += ac->npend;
	ac->npend = 0;
	ac->chain_lands = ac->lands;
	ac->ans_sent = ac->ans_pos;
	ac->resv_wr -= ac->release_wr <= ac->resv_wr ? ac->release_wr :
		       ac->resv_wr;
	ac->release_wr = 0;
	ac->s->chains++;
	return 0;
}

/*
 * Room for @len more bytes back, and two WRs for them, on @ac: what
 * admit() reserved for the op being landed.  Posts the chain when it is
 * full; never waits.  0, or the connection's error, or -ENOBUFS (more than
 * the bytes ring of gets waited behind one sequence gap: admit() let the
 * one filling it in on credit).
 */
static int room(struct va_conn *ac, uint32_t len)
{
	if (ac->err)
		return ac->err;
	if (ac->npend + 2 + 2 > VA_CHAIN && flush(ac))
		return ac->err ? ac->err : -EIO;
	if (ac->out_head + len - ac->out_tail > ac->out_cap)
		return -ENOBUFS;
	return 0;
}

/* The core's land(): a get's bytes or an atomic's old value, back; two
 * WRITEs when they wrap the bytes ring. */
static int va_land(void *arg, uint32_t conn, uint64_t laddr, uint32_t lrkey,
		   const void *src, uint32_t len)
{
	struct va_srv *s = arg;
	struct va_conn *ac = conn < OMS_AGENT_MAX_CONNS ? s->by_aid[conn] :
			     NULL;
	uint32_t at, first;
	int err;

	if (!ac)
		return -ENOTCONN;
	if (len > VA_OUT_LEN)
		return -EMSGSIZE;
	err = room(ac, len);
	if (err)
		return err;
	at = (uint32_t)(ac->out_head % ac->out_cap);
	first = len < ac->out_cap - at ? len : ac->out_cap - at;
	memcpy(ac->out + at, src, first);
	append(ac, ac->out + at, first, laddr, lrkey);
	if (first < len) {
		memcpy(ac->out, (const uint8_t *)src + first, len - first);
		append(ac, ac->out, len - first, laddr + first, lrkey);
	}
	ac->out_head += len;
	/* its answer rides on the last of them */
	ac->land_at[ac->lands++ - ac->chain_lands] = (uint8_t)(ac->npend - 1);
	ac->resv_bytes -= len <= ac->resv_bytes ? len : ac->resv_bytes;
	ac->resv_wr -= 2 <= ac->resv_wr ? 2 : ac->resv_wr;
	return 0;
}

/* Answer records that may wait unsent: the requester's ring, and a count
 * below the smallest tag. */
static uint32_t max_records(const struct va_conn *ac)
{
	return ac->cq.slots < OMS_AD_IMM_TAG_MIN ? ac->cq.slots :
	       OMS_AD_IMM_TAG_MIN - 1;
}

/*
 * One answer.  A get or atomic that succeeded had its bytes written back
 * (va_land()); if that WRITE is still in the open chain it becomes
 * the answer: a WRITE_WITH_IMM of the request's tag, no record.  (It is,
 * unless room() had to post the chain early because the bytes in flight
 * filled the out ring: doorbell() answers before a chain is full.)  Any
 * other answer is a record, sent with the connection's next chain.
 */
static void answer(struct va_conn *ac, const struct oms_agent_cpl *c)
{
	struct oms_ad_answer a = { .tag = c->tag, .status = c->status,
				   .old = c->old };
	uint32_t slot = (uint32_t)(ac->ans_pos % ac->cq.slots);
	uint8_t *rec = ac->out + ac->out_cap +
		       (size_t)slot * OMS_AD_ANSWER_LEN;
	uint32_t max_rec = max_records(ac);
	int lands = c->op == OMS_AD_GET || c->op == OMS_AD_FADD ||
		    c->op == OMS_AD_CAS;

	/* what admit() reserved for it: a landed op gave back its bytes
	 * and two WRs in va_land(); the rest goes with this chain */
	ac->inflight -= ac->inflight ? 1 : 0;
	if (lands && c->status) {
		uint64_t b = c->op == OMS_AD_GET ? c->len : 8;

		ac->resv_bytes -= b <= ac->resv_bytes ? b : ac->resv_bytes;
	}
	ac->release_wr += lands && !c->status ? VA_WR_PER_REQ - 2 :
			  VA_WR_PER_REQ;
	if (!c->status && lands) {
		uint64_t k = ac->lands_answered++;

		/* ... and no record waits in the chain: the requester takes
		 * answers in the order they arrive, a record at the chain's
		 * end after the WRITEs before it */
		if (k >= ac->chain_lands && k < ac->lands &&
		    ac->ans_pos == ac->ans_sent &&
		    c->tag >= OMS_AD_IMM_TAG_MIN) {
			struct ibv_send_wr *w =
				&ac->pend[ac->land_at[k - ac->chain_lands]];

			w->opcode = IBV_WR_RDMA_WRITE_WITH_IMM;
			w->imm_data = htonl(c->tag);
			return;
		}
	}
	if (oms_ad_answer_encode(rec, &a))
		return;
	ac->ans_pos++;
	/* a full ring's worth waits for nobody: the requester's credits
	 * never let more be owed, but a chain must not outgrow itself, and
	 * a count must stay below the smallest tag */
	if (ac->npend + 2 >= VA_CHAIN || ac->ans_pos - ac->ans_sent >= max_rec)
		flush(ac);
}

/* Send what the core finished: each connection's answers (and the
 * bytes before them) in one chain. */
static void answer_all(struct va_srv *s)
{
	struct oms_agent_cpl c[32];
	int n;

	if (oms_agent_held(s->ag))
		va_hold_sync(s->hold, -1);	/* acks that let answers go */
	while ((n = oms_agent_poll(s->ag, c, 32)) > 0) {
		for (int i = 0; i < n; i++) {
			struct va_conn *ac = c[i].conn < OMS_AGENT_MAX_CONNS ?
					     s->by_aid[c[i].conn] : NULL;

			if (ac && !ac->err)
				answer(ac, &c[i]);
		}
		s->answers += (uint64_t)n;
	}
	for (uint32_t i = 0; i < s->nlive; i++) {
		struct va_conn *ac = s->live[i];

		if (!ac->err && (ac->npend || ac->ans_pos != ac->ans_sent))
			flush(ac);
	}
}

/* Bytes an answer to descriptor @d may land (0 for one the core will
 * refuse as torn: it lands nothing).  The core decodes the same bytes. */
static uint32_t land_need(const struct va_conn *ac, const uint8_t *d)
{
	struct oms_ad_desc dd;

	if (oms_ad_decode(d, &dd, ac->fmt))
		return 0;
	if (dd.op == OMS_AD_GET)
		return dd.len;
	return dd.op == OMS_AD_FADD || dd.op == OMS_AD_CAS ? 8 : 0;
}

/*
 * Room on @ac for an op that may land @need bytes and its answer: bytes,
 * WRs and a record slot beside everything already reserved.  A connection
 * with nothing in flight is let in on credit, so that an op filling a
 * sequence gap is never kept out by the members waiting for it (room()).
 */
static int admit(const struct va_conn *ac, uint32_t need)
{
	uint64_t used = ac->out_head - ac->out_tail;

	if (ac->inflight + (uint32_t)(ac->ans_pos - ac->ans_sent) + 1 >
	    max_records(ac))
		return 0;
	if (ac->sq_used + ac->npend + ac->resv_wr + VA_WR_PER_REQ >
	    ac->sq_depth)
		return 0;
	return used + ac->resv_bytes + need <= ac->out_cap ||
	       (!used && !ac->sq_used && !ac->npend);
}

/*
 * The bytes ring is small at accept (VA_OUT_MIN) and grows, up to
 * VA_OUT_LEN, when a get needs more than it has and nothing of the ring
 * is on the wire (no bytes, no chain, no send in flight): what most
 * connections register stays small, and a connection that asks for
 * large gets pays for them once.  A ring that cannot grow keeps its size:
 * the get goes in on credit as before (admit()).
 */
static void grow_for(struct va_conn *ac, uint32_t need)
{
	if (ac->out_head == ac->out_tail && !ac->sq_used && !ac->npend &&
	    ac->out_cap < VA_OUT_LEN && ac->resv_bytes + need > ac->out_cap)
		va_out_grow(ac, ac->resv_bytes + need);
}

/*
 * @ac's turn (turns.h): up to @most descriptors of its backlog, in ring
 * order, while it has room.  Each is copied out of the ring before it is
 * decoded (the requester cannot change it under the agent's feet).
 * Returns how many it took.
 */
static uint32_t take(struct va_srv *s, struct va_conn *ac, uint32_t most)
{
	uint8_t d[OMS_AD_LEN];
	uint32_t n = 0;

	oms_barrier_from_device();	/* the ring's bytes after the doorbell */
	while (n < most && ac->backlog && !ac->err) {
		const uint8_t *slot = ac->mem +
			(size_t)(ac->ring_pos % ac->ring_slots) * OMS_AD_LEN;
		uint32_t need;

		memcpy(d, slot, sizeof(d));	/* decoded from our copy */
		need = land_need(ac, d);
		grow_for(ac, need);
		if (!admit(ac, need))
			break;
		ac->resv_bytes += need;
		ac->resv_wr += VA_WR_PER_REQ;
		ac->inflight++;
		ac->ring_pos++;
		ac->backlog--;
		n++;
		while (oms_agent_submit(s->ag, ac->aid, d) == -EAGAIN)
			answer_all(s);		/* completions full: send */
		/* a full chain goes with its answers in it (each bytes'
		 * WRITE its own answer), before room() must post it bare */
		if (ac->npend + 2 * 2 + 2 >= VA_CHAIN)
			answer_all(s);
	}
	if (n)
		ac->progress_ns = oms_now_ns();
	return n;
}

/* The live connections, as the turns see them (turns.h). */
static uint32_t turn_nlive(void *owner)
{
	return ((struct va_srv *)owner)->nlive;
}

static struct oms_turn_wait *turn_wait(void *owner, uint32_t k)
{
	return &((struct va_srv *)owner)->live[k]->wait;
}

static int turn_ready(void *owner, uint32_t k)
{
	const struct va_conn *ac = ((struct va_srv *)owner)->live[k];

	return ac->backlog && !ac->err;
}

static uint32_t turn_take(void *owner, uint32_t k, uint32_t most)
{
	struct va_srv *s = owner;

	return take(s, s->live[k], most);
}

static const struct oms_turn_ops va_turn_ops = {
	.nlive = turn_nlive,
	.wait = turn_wait,
	.ready = turn_ready,
	.take = turn_take,
};

/* Every backlog, round-robin, until none can move. */
static void take_all(struct va_srv *s)
{
	oms_turns_run(&s->turns, &va_turn_ops, s);
}

/* A doorbell: @n descriptors were written since the last one. */
static void doorbell(struct va_srv *s, struct va_conn *ac, uint32_t n)
{
	s->doorbells++;
	if (n > ac->ring_slots - ac->backlog) {
		fprintf(stderr, "liboms: agent: %u descriptors rung beside %u "
			"not yet taken, in a ring of %u\n", n, ac->backlog,
			ac->ring_slots);
		conn_refuse(ac, "more descriptors rung than the ring holds");
		return;
	}
	if (va_post_recv(ac)) {
		va_conn_broken(ac, -EIO);
		return;
	}
	ac->backlog += n;
	/* idleness is judged by work: a doorbell that brings none does not
	 * keep a slot out of the idle rule's reach */
	if (n)
		ac->rung_ns = oms_now_ns();
}

static void recv_done(struct va_srv *s, const struct ibv_wc *w)
{
	uint32_t i = VA_WRID_IDX(w->wr_id);
	struct va_conn *ac = i < VA_MAX_CONNS ? s->conn[i] : NULL;

	if (!ac || ac->gen != VA_WRID_GEN(w->wr_id) || ac->err)
		return;
	if (w->status != IBV_WC_SUCCESS) {
		va_conn_broken(ac, vb_wc_status(w->status));
		return;
	}
	if (w->opcode != IBV_WC_RECV_RDMA_WITH_IMM ||
	    !(w->wc_flags & IBV_WC_WITH_IMM)) {
		conn_refuse(ac, "a SEND where doorbells are WRITE_WITH_IMM");
		return;
	}
	doorbell(s, ac, ntohl(w->imm_data));
}

/* Does a send completion matter to anyone: a connection's backlog that
 * waits for its requester's acknowledgements, or a liveness probe's? */
static int sends_awaited(const struct va_srv *s)
{
	for (uint32_t i = 0; i < s->nlive; i++)
		if (!s->live[i]->err &&
		    (s->live[i]->backlog || s->live[i]->probing))
			return 1;
	return 0;
}

/* Take the completion channel's events, of either queue. */
static void take_events(struct va_srv *s)
{
	struct ibv_cq *cq;
	void *cctx;

	while (!ibv_get_cq_event(s->cch, &cq, &cctx)) {
		ibv_ack_cq_events(cq, 1);
		if (cq == s->scq)
			s->scq_armed = 0;
	}
}

/*
 * One round: take doorbells, take the backlogs, answer, reap the sends
 * (which may make room for a backlog), until nothing moves.  Then arm the
 * doorbells' queue and look once more, and arm the sends' queue too while
 * a backlog waits for them.  (Polling on for a while after the last
 * doorbell was tried: on a guest whose one CPU the host's writer and
 * Soft-RoCE share, it cost more than the wakeups it saved.)
 */
static int round_trip(struct va_srv *s)
{
	struct ibv_wc w[16];
	int n, armed = 0;

	for (;;) {
		n = ibv_poll_cq(s->rcq, 16, w);
		if (n < 0)
			return -EIO;
		for (int i = 0; i < n; i++)
			recv_done(s, &w[i]);
		take_all(s);
		answer_all(s);
		if (reap_sends(s))
			return -EIO;
		take_all(s);
		answer_all(s);
		if (n)
			continue;
		if (armed)
			break;
		va_cq_fit(s);	/* both queues just found empty */
		/* arm, then look once more: a doorbell between the last poll
		 * and the arming raises no event */
		if (ibv_req_notify_cq(s->rcq, 0))
			return -EIO;
		if (!s->scq_armed && sends_awaited(s)) {
			if (ibv_req_notify_cq(s->scq, 0))
				return -EIO;
			s->scq_armed = 1;
		}
		armed = 1;
	}
	va_reap_stalled(s);
	va_probe_idle(s);
	/* a probe just posted: its completion must wake the thread */
	if (!s->scq_armed && sends_awaited(s)) {
		if (ibv_req_notify_cq(s->scq, 0))
			return -EIO;
		s->scq_armed = 1;
	}
	return 0;
}

/* The completion channel woke the thread (doorbells, or sends that a
 * backlog waited for). */
int vb_agent_service(struct va_srv *s)
{
	take_events(s);
	return round_trip(s);
}

int vb_agent_fd(const struct va_srv *s)
{
	return s->cch->fd;
}

/* A round with no event: what the hold let go, out; stalls closed.  0 or
 * -EIO. */
int vb_agent_tick(struct va_srv *s)
{
	return round_trip(s);
}

/* The core's sync(): the puts on the wire, up to now, into its hold;
 * -ENOBUFS when those that can hold @peer's answer did not all fit. */
static int va_sync(void *arg, uint32_t peer)
{
	struct va_srv *s = arg;

	return va_hold_sync(s->hold, s->hold_global ? -1 : (int)peer);
}

int vb_agent_create(struct vb_ctx *vc, const struct oms_be_region *served,
		    struct va_srv **out)
{
	struct oms_agent_ops ops = { .land = va_land, .sync = va_sync };
	struct oms_agent_attr attr = { 0 };
	const struct oms_ctx_attr *ca = oms_be_view(vc->ctx)->attr;
	int max_cqe = vc->dattr.max_cqe > 0 ? vc->dattr.max_cqe : 4096;
	int cqe = VA_CQ_FIRST < max_cqe ? VA_CQ_FIRST : max_cqe;
	struct va_srv *s = calloc(1, sizeof(*s));
	int err;

	if (!s)
		return -ENOMEM;
	s->vc = vc;
	oms_turns_init(&s->turns, VA_QUANTUM);
	ops.arg = s;
	/* the hold's scope is the listening context's (seed 002, L24) */
	if (ca->flags & OMS_CTX_F_HOLD_GLOBAL)
		attr.flags |= OMS_AGENT_F_HOLD_GLOBAL;
	s->hold_global = !!(attr.flags & OMS_AGENT_F_HOLD_GLOBAL);
	/* the control of the litmus tests: numbers ignored, acquire read
	 * as relaxed, nothing held (a listener made on a context that
	 * orders nothing) */
	if (ca->flags & OMS_CTX_F_NO_ORDERING)
		attr.flags |= OMS_AGENT_F_NO_ORDER;
	err = oms_agent_create(&attr, &ops, &s->ag);
	if (err)
		goto err_free;
	err = va_hold_create(s->ag, &s->hold);
	if (err)
		goto err_agent;
	err = oms_agent_region_add(s->ag, served->addr, served->len,
				   served->rmr.key, served->rmr.access);
	if (err)
		goto err_agent;
	err = -ENOMEM;
	s->cch = ibv_create_comp_channel(vc->verbs);
	if (!s->cch)
		goto err_agent;
	if (fcntl(s->cch->fd, F_SETFL,
		  fcntl(s->cch->fd, F_GETFL) | O_NONBLOCK) < 0) {
		err = -EIO;
		goto err_cch;
	}
	/* grown as connections come (agent_conn.c's cq_room()) */
	s->rcq = ibv_create_cq(vc->verbs, cqe, NULL, s->cch, 0);
	if (!s->rcq)
		goto err_cch;
	s->scq = ibv_create_cq(vc->verbs, cqe, NULL, s->cch, 0);
	if (!s->scq)
		goto err_rcq;
	if (ibv_req_notify_cq(s->rcq, 0)) {
		err = -EIO;
		goto err_scq;
	}
	s->cqe_peak = (uint64_t)s->rcq->cqe + (uint64_t)s->scq->cqe;
	*out = s;
	return 0;

err_scq:
	ibv_destroy_cq(s->scq);
err_rcq:
	ibv_destroy_cq(s->rcq);
err_cch:
	ibv_destroy_comp_channel(s->cch);
err_agent:
	va_hold_destroy(s->hold);
	oms_agent_destroy(s->ag);
err_free:
	free(s);
	return err;
}

/*
 * A connection's buffers are pages of their own, mapped at accept and
 * unmapped at close: registered (so pinned) memory leaves with its
 * connection instead of staying in the allocator's heap (a server that
 * lives through thousands of requesters would keep the most it ever had),
 * and never shares a page with other data.  Zeroed by the kernel.
 */
/* What @s did, added into *@st (the pool's report at close). */
void vb_agent_stats_add(const struct va_srv *s, struct vb_agent_stats *st)
{
	struct oms_agent_stats core;

	oms_agent_stats(s->ag, &core);
	st->doorbells += s->doorbells;
	st->descs += s->turns.taken;
	st->answers += s->answers;
	st->chains += s->chains;
	st->turns_waited += s->turns.st.waited;
	st->behind_past += s->turns.st.past;
	if (s->turns.st.behind_max > st->behind_max) {
		st->behind_max = s->turns.st.behind_max;
		st->behind_bound = s->turns.st.behind_bound;
	}
	st->refused += core.refused;
	st->key_drops += core.key_drops;
	st->probes += s->probes;
	st->probe_fails += s->probe_fails;
	st->reg_peak += s->reg_peak;
	st->conns_at_peak += s->nlive_peak;
	st->cqe_peak += s->cqe_peak;
	st->cqe_end += (uint64_t)s->rcq->cqe + (uint64_t)s->scq->cqe;
}

/* Connections @s closed on its own (a stall, a broken protocol, a probe):
 * a count that moves when the listener has one to take apart. */
uint64_t vb_agent_broken(const struct va_srv *s)
{
	return s->broken;
}

struct va_srv *vb_agent_conn_srv(const struct va_conn *ac)
{
	return ac->s;
}

void vb_agent_destroy(struct va_srv *s)
{
	while (s->nlive)	/* each close takes one out */
		vb_agent_conn_close(s->live[s->nlive - 1]);
	ibv_destroy_cq(s->scq);
	ibv_destroy_cq(s->rcq);
	ibv_destroy_comp_channel(s->cch);
	oms_agent_destroy(s->ag);
	va_hold_destroy(s->hold);
	free(s);
}
