// SPDX-License-Identifier: MIT
/*
 * A connection's requests to its listener's destination agent
 * (docs/dest-agent.md, "Layers", 4; the agent's side is
 * listener/agent_srv.c).  The hello asks for the agent unless OMS_AGENT=0,
 * and says where the agent's answers go: a completion ring of 16-byte
 * records that only the agent writes, each with a WRITE_WITH_IMM that
 * this side's receive completion announces.  A listener that runs no
 * agent answers without its block, and the connection stays one-sided.
 *
 * What takes the agent today: acquire gets.  The agent reads the lines in
 * address order on the destination's CPU, with a load-load barrier between
 * lines, and writes them back into a landing buffer (the slot's bounce
 * buffer through a second, remote-writable registration, or the get's
 * own buffer registered for it): one round trip where source ordering
 * took one fenced READ per line.  Each request is a 64-byte descriptor
 * (lib/agent/agent_desc.h) written into the agent's ring with RDMA WRITE;
 * the last descriptor of a chain is a WRITE_WITH_IMM whose immediate is
 * how many were written since the last doorbell (the doorbell by count).
 * The requester's book (lib/agent/client.h) gives each its ring slot,
 * its tag and its credit, and matches the answers.
 *
 * Order on the connection.  The agent performs what it reads in ring
 * order, so requests to it keep their order among themselves.  A
 * one-sided operation after a request to the agent would not wait for it
 * (the agent performs it when it reads it, and a READ or WRITE behind it
 * on the QP does not wait for that): it is held back until every request
 * to the agent is answered, so that an acquire orders what follows it
 * (backend.h) and a write after a get of the same bytes is not performed
 * first.  A request after one-sided operations needs nothing: RC places
 * the QP's earlier WRITEs before the descriptor, and OMS_WR_F_FENCE is
 * IBV_SEND_FENCE on it, which waits for earlier READs and atomics.
 *
 * Failures.  A request the agent answers with an error fails like a WR of
 * the QP that failed: the operation reports the error, the connection
 * goes to error and everything after it is cancelled (an in-order
 * channel, backend.h).  An answer that matches no request is counted and
 * ignored; an answer with tag 0 (the agent could not decode what this
 * side wrote) fails the connection with -EPROTO.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "verbs/common/verbs.h"
#include "verbs/initiator/initiator.h"
#include "verbs/common/wire.h"
#include "agent/agent_desc.h"
#include "agent/client.h"
#include "engine/serial.h"

struct vb_areq {
	struct oms_agent_client cl;
	int live;			/* the listener gave its block */
	uint8_t *cq;			/* answer records, remote write */
	struct ibv_mr *cq_mr;
	uint32_t cq_slots;
	uint64_t cq_pos;		/* the next record to read */
	uint8_t *desc;			/* descriptors to WRITE from */
	struct ibv_mr *desc_mr;
	uint8_t *land;			/* [ring_slots][VB_BOUNCE]: where the
					 * agent writes gets back, this
					 * connection's alone (remote write) */
	struct ibv_mr *land_mr;
	int failed;			/* an error answer came: feed nothing
					 * more; the connection stops when
					 * the failed request's WRs are done */
	struct oms_vw_agent blk;
	enum oms_ad_fmt fmt;		/* its descriptors (the accept's) */
	uint32_t out;			/* requests taken, not answered */
	uint32_t unrung;		/* descriptors in the open chain */
	/*
	 * DEST_SEQ through the agent (docs/dest-agent.md): every operation
	 * of the connection is a request.  The engine numbers an operation
	 * when it is submitted and may post a later number first (it holds
	 * the earlier one: L36); the book numbers in take order, so a post
	 * takes every number up to its own, the ones of operations not yet
	 * posted kept in resv[] with their credits (and a staging slot each)
	 * until they come.
	 */
	int seq;
	uint16_t seq_base;		/* the engine's number of the agent's 0 */
	uint16_t seq_lo;		/* the oldest number still this stream's */
	uint16_t seq_span;		/* numbers in flight at most (qdepth) */
	uint16_t seq_next;		/* the next number the book gives */
	struct oms_agent_req resv[OMS_AD_MAX_WINDOW];
	uint64_t resv_ok[OMS_AD_MAX_WINDOW / 64];
	uint32_t flushes;		/* flushes waiting for their members */
	uint64_t unnum_queued;		/* unnumbered puts queued (post()) */
	uint64_t unnum_answered;	/* and answered: in ring order */
};

static int agent_refused(void)
{
	const char *e = getenv("OMS_AGENT");

	return e && !strcmp(e, "0");
}

/*
 * Before the QP: the hello's block and the receives the QP needs (the
 * return value: 1 when the agent is not asked for).
 */
uint32_t vb_areq_hello(struct vb_ctx *vc, struct vb_conn *c,
		       struct oms_vw_hello *h)
{
	uint32_t qd = oms_be_view(vc->ctx)->qdepth;
	struct vb_areq *a;
	uint32_t slots = 16;

	if (agent_refused())
		return 1;
	while (slots < qd && slots < VB_AGENT_CQ_MAX)
		slots <<= 1;
	a = calloc(1, sizeof(*a));
	if (!a)
		return 1;
	if (posix_memalign((void **)&a->cq, 64,
			   (size_t)slots * OMS_AD_ANSWER_LEN))
		goto err;
	memset(a->cq, 0, (size_t)slots * OMS_AD_ANSWER_LEN);
	a->cq_mr = ibv_reg_mr(vc->pd, a->cq, (size_t)slots * OMS_AD_ANSWER_LEN,
			      IBV_ACCESS_LOCAL_WRITE |
			      IBV_ACCESS_REMOTE_WRITE);
	if (!a->cq_mr)
		goto err;
	a->cq_slots = slots;
	c->ag = a;
	/* offer CRC32C descriptors: a listener that does not know them
	 * answers without the flag, and FNV-1a it is */
	h->flags = OMS_VW_F_AGENT | OMS_VW_F_AGENT_CRC32C;
	h->cq.addr = (uintptr_t)a->cq;
	h->cq.rkey = a->cq_mr->rkey;
	h->cq.slots = slots;
	return slots;
err:
	free(a->cq);
	free(a);
	return 1;
}

static int post_recv(struct vb_ctx *vc, struct vb_conn *c)
{
	struct ibv_recv_wr r, *bad;

	memset(&r, 0, sizeof(r));
	r.wr_id = VB_WRID(c - vc->conn, c->gen, VB_SEQ_RECV);
	return ibv_post_recv(c->qp, &r, &bad) ? -EIO : 0;
}

/* The QP exists: a receive for every answer the agent may owe. */
int vb_areq_recvs(struct vb_ctx *vc, struct vb_conn *c)
{
	if (!c->ag)
		return 0;
	for (uint32_t i = 0; i < c->ag->cq_slots; i++)
		if (post_recv(vc, c))
			return -EIO;
	return 0;
}

/* The accept came: an agent block starts the book, none frees it all. */
int vb_areq_start(struct vb_ctx *vc, struct vb_conn *c,
		  const struct oms_vw_region *reg)
{
	struct vb_areq *a = c->ag;
	uint32_t qd = oms_be_view(vc->ctx)->qdepth;
	struct oms_agent_client_cfg cfg;
	size_t dlen;
	int err;

	if (!a)
		return 0;
	if (!(reg->flags & OMS_VW_F_AGENT)) {
		c->agent_busy = !!(reg->flags & OMS_VW_F_AGENT_BUSY);
		vb_areq_free(c);	/* the connection stays one-sided */
		return 0;
	}
	a->blk = reg->agent;
	a->fmt = (enum oms_ad_fmt)oms_vw_desc_fmt(reg->flags);
	cfg = (struct oms_agent_client_cfg){
		.ring_slots = a->blk.ring_slots,
		.cq_slots = a->cq_slots,
		.stage_slots = a->blk.stage_slots,
		.nstreams = a->blk.nstreams,
		.window = a->blk.window,
	};
	err = oms_agent_client_init(&a->cl, &cfg);
	if (err)
		return err;
	a->live = 1;
	dlen = (size_t)a->blk.ring_slots * OMS_AD_LEN;
	if (posix_memalign((void **)&a->desc, 64, dlen))
		return -ENOMEM;
	a->desc_mr = ibv_reg_mr(vc->pd, a->desc, dlen, IBV_ACCESS_LOCAL_WRITE);
	if (!a->desc_mr)
		return vb_errno(-ENOMEM);
	dlen = (size_t)a->blk.ring_slots * VB_BOUNCE;
	if (posix_memalign((void **)&a->land, 4096, dlen))
		return -ENOMEM;
	a->land_mr = ibv_reg_mr(vc->pd, a->land, dlen, IBV_ACCESS_LOCAL_WRITE |
				IBV_ACCESS_REMOTE_WRITE);
	if (!a->land_mr)
		return vb_errno(-ENOMEM);
	(void)qd;
	return 0;
}

void vb_areq_free(struct vb_conn *c)
{
	struct vb_areq *a = c->ag;

	if (!a)
		return;
	if (a->live)
		oms_agent_client_destroy(&a->cl);
	if (a->desc_mr)
		ibv_dereg_mr(a->desc_mr);
	if (a->land_mr)
		ibv_dereg_mr(a->land_mr);
	free(a->land);
	if (a->cq_mr)
		ibv_dereg_mr(a->cq_mr);
	free(a->desc);
	free(a->cq);
	free(a);
	c->ag = NULL;
}

/*
 * The context numbers its operations to this destination (DEST_SEQ): the
 * listener's agent must run its reorder buffer, as nothing else here can
 * (0), or the connection is refused: -EOPNOTSUPP (the listener runs no
 * agent, or one that gives too little room), -EUSERS (its agent had no
 * slot for this connection: docs/dest-agent.md, "Sharing").  @base: the
 * engine's next number for the destination, which is the agent's 0.
 */
int vb_areq_seq_start(struct vb_conn *c, uint64_t base, uint32_t qdepth)
{
	struct vb_areq *a = c->ag;

	/*
	 * Every operation in flight may hold a number, a staging slot and a
	 * request of the book while one held at the source waits for its
	 * turn: the agent must give room for all of them (an older
	 * listener gives 16 staging slots), or a held number could find no
	 * credit behind the ones posted before it.
	 */
	if (!a && c->agent_busy)
		return -EUSERS;
	if (!a || !a->live || a->blk.stage_slots < qdepth ||
	    a->blk.ring_slots < qdepth || a->cl.max_out < qdepth ||
	    a->blk.window < OMS_AD_MAX_WINDOW)
		return -EOPNOTSUPP;
	a->seq = 1;
	a->seq_base = (uint16_t)base;
	a->seq_lo = (uint16_t)base;
	a->seq_span = (uint16_t)qdepth;
	return 0;
}

int vb_areq_is_seq(const struct vb_conn *c)
{
	return c->ag && c->ag->live && c->ag->seq;
}

/* Does @wr go to the agent? */
int vb_areq_wants(const struct vb_conn *c, const struct oms_wr *wr)
{
	if (!c->ag || !c->ag->live)
		return 0;
	if (c->ag->seq)
		return wr->op != OMS_WR_RESUME;
	return wr->op == OMS_WR_GET &&
	       (wr->flags & (OMS_WR_F_ACQUIRE | OMS_WR_F_RESP_ORDERED));
}

/* A put's bytes go through a staging slot of the agent: its length. */
uint32_t vb_areq_max_put(const struct vb_conn *c)
{
	return vb_areq_is_seq(c) ? c->ag->blk.stage_len : UINT32_MAX;
}

/*
 * Has every member numbered below flush @op's count been answered, and
 * every unnumbered put posted before it (answered in ring order: the
 * agent performs them on arrival)?
 */
static int flush_covered(const struct vb_areq *a, const struct vb_op *op)
{
	uint16_t upto = (uint16_t)(op->wr.seq - a->seq_base);

	return oms_serial_at_or_after(oms_agent_client_low(&a->cl, 0), upto) &&
	       a->unnum_answered >= op->ag.unnum;
}

/*
 * Is numbered @wr this connection's?  One of an earlier connection at the
 * same index (its generation, or a number from before this stream's
 * first) must not touch this stream: it fails alone, -ENOTCONN.
 */
int vb_areq_seq_ours(struct vb_conn *c, const struct oms_wr *wr,
		     uint32_t region)
{
	struct vb_areq *a = c->ag;
	uint16_t d;

	if (!vb_areq_is_seq(c) || !(wr->flags & OMS_WR_F_SEQ) ||
	    wr->op == OMS_WR_FLUSH)
		return 1;
	d = oms_serial_ahead((uint16_t)wr->seq, a->seq_lo);
	if (wr->region != region ||
	    !oms_serial_at_or_after((uint16_t)wr->seq, a->seq_lo))
		return 0;
	/*
	 * The numbers in flight to a destination span at most the queue
	 * depth: the engine gives no number that far past one it still
	 * holds.  So once this one is that far past seq_lo, nothing older
	 * than it minus the span is in flight, an earlier connection's
	 * least of all, and the bound moves up with the stream (16-bit
	 * numbers wrap: a fixed bound would refuse the stream's own after
	 * 32768 of them).
	 */
	if (d > a->seq_span)
		a->seq_lo = (uint16_t)(wr->seq - a->seq_span);
	return 1;
}

/* Where the agent lands a get: the connection's landing slot of its ring
 * position (given at take: vb_areq_take()), or the get's own buffer
 * registered for remote write when it is larger. */
int vb_areq_prepare(struct vb_ctx *vc, struct vb_conn *c, struct vb_op *op)
{
	void *p = (void *)(uintptr_t)op->wr.local;

	op->ag.on = 1;
	op->nwr = 1;
	switch (op->wr.op) {
	case OMS_WR_PUT:
		/* its bytes to the staging slot, then the descriptor */
		if (op->wr.len > c->ag->blk.stage_len)
			return -EMSGSIZE;
		op->nwr = 2;
		return 0;	/* the caller maps the source */
	case OMS_WR_NOP:
		return 0;
	case OMS_WR_FLUSH:
		op->ag.flush = 1;		/* vb_areq_flush() takes it */
		return 0;
	case OMS_WR_FADD:
	case OMS_WR_CAS:
		op->loc = VB_LOC_LAND;	/* the old value lands there */
		return 0;
	default:
		break;
	}
	if (op->wr.len <= VB_BOUNCE) {
		op->loc = VB_LOC_LAND;
		return 0;
	}
	op->tmp = ibv_reg_mr(vc->pd, p, op->wr.len, IBV_ACCESS_LOCAL_WRITE |
			     IBV_ACCESS_REMOTE_WRITE);
	if (!op->tmp)
		return vb_errno(-ENOMEM);
	op->loc = VB_LOC_TMP;
	op->lbuf = p;
	op->lkey = op->tmp->rkey;	/* for the agent: an rkey */
	return 0;
}

/*
 * May @op be fed now?  A request to the agent needs its credit (taken
 * here, once); a one-sided operation waits until the agent has answered
 * every request before it.
 */
int vb_areq_blocked(const struct vb_conn *c, const struct vb_op *op)
{
	struct vb_areq *a = c->ag;

	if (!a || !a->live)
		return 0;
	if (a->failed)
		return 1;	/* stopping: the failed request's WRs first */
	/*
	 * An acquire orders every later operation; and whatever a request
	 * is, an error answer stops the connection, so nothing after it may
	 * have been performed (a flush, too, must not complete before it).
	 */
	if (!op->ag.on)
		return a->out != 0;
	return 0;
}

/* The number @op has in the agent's stream, its credits taken in order
 * (vb_areq's comment). */
static int take_seq(struct vb_areq *a, struct vb_op *op,
		    struct oms_agent_req *r)
{
	uint16_t n = (uint16_t)(op->wr.seq - a->seq_base);

	while (oms_serial_at_or_after(n, a->seq_next)) {
		uint16_t k = a->seq_next % OMS_AD_MAX_WINDOW;
		int err = oms_agent_client_take(&a->cl, 1, 0, UINT64_MAX,
						&a->resv[k]);

		if (err)
			return err;	/* -EAGAIN: answers bring credit */
		a->resv_ok[k / 64] |= 1ull << (k % 64);
		a->seq_next++;
	}
	if (oms_serial_ahead(a->seq_next, n) > OMS_AD_MAX_WINDOW ||
	    !(a->resv_ok[n % OMS_AD_MAX_WINDOW / 64] &
	      (1ull << (n % 64))))
		return -EPROTO;	/* a number posted twice: a bug upstream */
	*r = a->resv[n % OMS_AD_MAX_WINDOW];
	return oms_agent_client_cookie(&a->cl, r, op->wr.slot);
}

/* What @op's request needs (its tag, number, staging slot, credits);
 * 0, or -EAGAIN (no credit). */
static int take(struct vb_conn *c, struct vb_op *op)
{
	struct vb_areq *a = c->ag;
	int numbered = a->seq && (op->wr.flags & OMS_WR_F_SEQ);
	struct oms_agent_req r;
	int err;

	if (numbered)
		err = take_seq(a, op, &r);
	else
		err = oms_agent_client_take(&a->cl, op->wr.op == OMS_WR_PUT,
					    UINT16_MAX, op->wr.slot, &r);
	if (err)
		return err;
	if (numbered) {
		uint16_t k = (uint16_t)(op->wr.seq - a->seq_base) %
			     OMS_AD_MAX_WINDOW;

		a->resv_ok[k / 64] &= ~(1ull << (k % 64));
	}
	a->out++;
	op->ag.tag = r.tag;
	op->ag.stage = r.stage_slot;
	return 0;
}

/*
 * Its ring position, when its descriptor is written: the doorbell counts
 * what was posted in the book, so a put is posted there only with its
 * descriptor, not with its bytes (a chain may end between the two).
 */
static int post_req(struct vb_areq *a, struct vb_op *op)
{
	struct oms_agent_req r = { .tag = op->ag.tag };

	if (oms_agent_client_post(&a->cl, &r))
		return -EPROTO;	/* taken and not posted: cannot happen */
	op->ag.ring = r.ring_slot;
	return 0;
}

static uint8_t desc_op(uint8_t op)
{
	switch (op) {
	case OMS_WR_PUT:
		return OMS_AD_PUT;
	case OMS_WR_GET:
		return OMS_AD_GET;
	case OMS_WR_FADD:
		return OMS_AD_FADD;
	case OMS_WR_CAS:
		return OMS_AD_CAS;
	default:
		return OMS_AD_NOP;
	}
}

/* @op's descriptor, its request taken. */
static struct oms_ad_desc desc_of(const struct vb_areq *a,
				  const struct vb_op *op)
{
	const struct oms_wr *wr = &op->wr;
	struct oms_ad_desc d = {
		.op = desc_op(wr->op),
		.tag = op->ag.tag,
	};

	if (a->seq) {
		/* an in-order channel: nothing after a failure (L37) */
		d.flags |= OMS_AD_F_CHAIN;
		if (wr->flags & OMS_WR_F_SEQ) {
			d.flags |= OMS_AD_F_SEQ;
			d.seq = (uint16_t)(wr->seq - a->seq_base);
		}
	}
	if (d.op == OMS_AD_NOP) {
		if (wr->flags & OMS_WR_F_CANCEL)
			d.flags |= OMS_AD_F_CANCEL;
		return d;
	}
	d.key = wr->key;
	d.len = d.op == OMS_AD_PUT || d.op == OMS_AD_GET ? (uint32_t)wr->len :
								  8u;
	d.off = wr->off;
	if (d.op == OMS_AD_PUT) {
		d.stage = op->ag.stage;
		return d;
	}
	if (d.op == OMS_AD_GET) {
		if (wr->flags & OMS_WR_F_ACQUIRE)
			d.flags |= OMS_AD_F_ACQUIRE;
		if (wr->flags & OMS_WR_F_RESP_ORDERED)
			d.flags |= OMS_AD_F_RESP_ORDERED;
	} else {
		d.a1 = wr->a1;
		d.a2 = wr->a2;
	}
	d.lrkey = op->lkey;
	d.laddr = (uintptr_t)op->lbuf;
	return d;
}

/*
 * WR @k of @op into @w/@sge: a put's bytes to its staging slot (k = 0)
 * and then, for every request, its descriptor.  The request is taken at
 * its first WR; 0, -EAGAIN (no credit: nothing taken), or another error
 * (the caller fails the connection).  Sets *@desc for the descriptor.
 */
int vb_areq_take(struct vb_conn *c, struct vb_op *op, uint32_t k,
		 struct ibv_send_wr *w, struct ibv_sge *sge, int *desc)
{
	struct vb_areq *a = c->ag;
	struct oms_ad_desc d;
	uint8_t *slot;

	memset(w, 0, sizeof(*w));
	*desc = 0;
	if (!k) {
		int err = take(c, op);

		if (err)
			return err;
	}
	if (!k && op->wr.op == OMS_WR_PUT) {
		/* RC places this WRITE before the descriptor's */
		sge->addr = (uintptr_t)op->lbuf;
		sge->length = (uint32_t)op->wr.len;
		sge->lkey = op->lkey;
		w->sg_list = sge;
		w->num_sge = 1;
		w->opcode = IBV_WR_RDMA_WRITE;
		w->wr.rdma.remote_addr = a->blk.stage_addr +
			(uint64_t)op->ag.stage * a->blk.stage_len;
		w->wr.rdma.rkey = a->blk.stage_rkey;
		if (op->fence_first)
			w->send_flags |= IBV_SEND_FENCE;
		return 0;
	}
	if (post_req(a, op))
		return -EPROTO;
	if (op->loc == VB_LOC_LAND) {
		/* its slot is free: the request that had it was answered,
		 * and its bytes copied out then */
		op->lbuf = a->land + (size_t)op->ag.ring * VB_BOUNCE;
		op->lkey = a->land_mr->rkey;
	}
	d = desc_of(a, op);
	slot = a->desc + (size_t)op->ag.ring * OMS_AD_LEN;
	if (oms_ad_encode(slot, &d, a->fmt))
		return -EPROTO;	/* cannot happen (checked at post): the
				 * ring slot is spent, the caller fails the
				 * connection */
	sge->addr = (uintptr_t)slot;
	sge->length = OMS_AD_LEN;
	sge->lkey = a->desc_mr->lkey;
	w->sg_list = sge;
	w->num_sge = 1;
	w->opcode = IBV_WR_RDMA_WRITE;
	w->wr.rdma.remote_addr = a->blk.ring_addr +
				 (uint64_t)op->ag.ring * OMS_AD_LEN;
	w->wr.rdma.rkey = a->blk.ring_rkey;
	if (op->fence_first && !k)
		w->send_flags |= IBV_SEND_FENCE;
	a->unrung++;
	*desc = 1;
	return 0;
}

/* The last descriptor of a chain rings: its immediate is the count. */
void vb_areq_doorbell(struct vb_conn *c, struct ibv_send_wr *w)
{
	struct vb_areq *a = c->ag;

	w->opcode = IBV_WR_RDMA_WRITE_WITH_IMM;
	w->imm_data = htonl(oms_agent_client_ring(&a->cl));
	a->unrung = 0;
}

uint32_t vb_areq_outstanding(const struct vb_conn *c)
{
	return c->ag && c->ag->live ? c->ag->out : 0;
}

/* An operation to the agent is done: its WRs and its answer. */
static void finish(struct vb_ctx *vc, struct vb_op *op, int status)
{
	op->ag.waiting = 0;
	op->ag.on = 0;
	vb_op_finish(vc, op, status);
}

/*
 * A flush of a numbered connection: done once every member below its
 * count has been answered, which is known here, from the answers.  It
 * asks nothing of the agent and puts nothing on the QP (where it would
 * wait behind requests it does not cover, which may wait at the agent
 * for an operation posted after it, and cost a round trip even when
 * its members are answered already): done now, or waiting, off the
 * connection's ring, until an answer covers it (flushes_check()) or the
 * connection stops (vb_areq_fail_waiting()).
 */
/* An unnumbered put of a numbered connection is queued: later flushes
 * wait for its answer too. */
void vb_areq_unnum_queued(struct vb_conn *c, const struct oms_wr *wr)
{
	if (vb_areq_is_seq(c) && wr->op == OMS_WR_PUT &&
	    !(wr->flags & OMS_WR_F_SEQ))
		c->ag->unnum_queued++;
}

void vb_areq_flush(struct vb_ctx *vc, struct vb_conn *c, struct vb_op *op)
{
	struct vb_areq *a = c->ag;

	op->ag.unnum = a->unnum_queued;
	if (!a->failed && flush_covered(a, op)) {
		finish(vc, op, 0);
		return;
	}
	op->ag.waiting = 1;
	a->flushes++;
}

/* Flushes whose members have all been answered are done (with an error
 * answer the connection stops instead, and they are cancelled). */
static void flushes_check(struct vb_ctx *vc, struct vb_conn *c)
{
	struct vb_areq *a = c->ag;
	uint32_t qd = oms_be_view(vc->ctx)->qdepth;
	uint32_t ci = (uint32_t)(c - vc->conn);

	if (c->err || !a || !a->flushes || a->failed)
		return;
	for (uint32_t s = 0; s < qd && a->flushes; s++) {
		struct vb_op *op = &vc->op[s];

		if (!op->ag.flush || !op->ag.waiting || op->wr.dest != ci ||
		    !flush_covered(a, op))
			continue;
		a->flushes--;
		finish(vc, op, 0);
	}
}

/* One answer record: the request it answers, finished if its WRs are.
 * 0, or the connection's failure (vb_areq_recv()). */
static int one_answer(struct vb_ctx *vc, struct vb_conn *c, const void *rec,
		      int *cancel)
{
	struct vb_areq *a = c->ag;
	uint64_t cookie, old;
	struct vb_op *op;
	int status, err;

	err = oms_agent_client_answer(&a->cl, rec, &cookie, &status, &old);
	if (err == -EBADMSG)
		return -EPROTO;
	if (err || cookie >= oms_be_view(vc->ctx)->qdepth)
		return 0;	/* counted by the book; nothing changes */
	a->out--;
	op = &vc->op[cookie];
	if (!op->ag.on || op->ag.answered)
		return 0;
	if (a->failed && !status)
		status = -ECANCELED;	/* after the refusal: not reported */
	if (a->seq && !(op->wr.flags & OMS_WR_F_SEQ) &&
	    op->wr.op == OMS_WR_PUT)
		a->unnum_answered++;
	/* an op that failed here went as a cancelling NOP: its own error,
	 * whatever the agent said of the NOP (one that ignores numbers
	 * performs it), and the connection stops there */
	if (op->status)
		status = op->status;
	op->ag.answered = 1;
	op->ag.status = status;
	if (!status && op->loc == VB_LOC_LAND) {
		/* its slot is reused next */
		if (op->wr.op == OMS_WR_GET)
			memcpy((void *)(uintptr_t)op->wr.local, op->lbuf,
			       op->wr.len);
		else	/* an atomic's old value */
			memcpy(&vc->result[op->wr.slot], op->lbuf, 8);
	}
	if (status && !op->status)
		op->status = status;
	if (!status) {
		if (op->ag.waiting)
			finish(vc, op, 0);
		return 0;
	}
	/*
	 * An in-order channel stops at its first failure, but what was
	 * posted before this request completes by its own completions (an
	 * unsignaled put before it was performed): once its WRs are done,
	 * the rest of the connection is cancelled (here, or when
	 * complete_upto() reaches it: vb_areq_stop_at()).
	 */
	c->reported = 1;
	if (a->failed)
		return 0;	/* a later one: cancelled with the rest */
	a->failed = 1;
	if (!op->ag.waiting)
		return 0;
	finish(vc, op, status);
	*cancel = 1;
	return status;
}

/*
 * complete_upto() reached @op, whose WRs are done: 1 when its answer was
 * an error, so the connection stops here (the caller cancels the rest).
 */
int vb_areq_wait_answer(struct vb_op *op)
{
	if (!op->ag.on || op->ag.answered)
		return 0;
	op->ag.waiting = 1;	/* done when answered */
	return 1;
}

int vb_areq_stop_at(const struct vb_op *op)
{
	return op->ag.on && op->ag.answered && op->ag.status;
}

int vb_areq_recv(struct vb_ctx *vc, struct vb_conn *c, const struct ibv_wc *w,
		 int *cancel)
{
	uint32_t n;
	int err;

	*cancel = 0;
	if (!c->ag || !c->ag->live || c->err)
		return 0;
	if (w->status != IBV_WC_SUCCESS)
		return vb_wc_status(w->status);
	if (w->opcode != IBV_WC_RECV_RDMA_WITH_IMM)
		return -EPROTO;
	vc->progress++;
	n = ntohl(w->imm_data);
	if (n < OMS_AD_IMM_TAG_MIN && n > c->ag->cq_slots)
		return -EPROTO;
	if (post_recv(vc, c))
		return -EIO;
	if (n >= OMS_AD_IMM_TAG_MIN) {
		/* the bytes of the request tagged n landed with it: OK */
		struct oms_ad_answer ok = { .tag = n };
		uint8_t rec[OMS_AD_ANSWER_LEN];

		oms_ad_answer_encode(rec, &ok);
		err = one_answer(vc, c, rec, cancel);
		if (!err)
			flushes_check(vc, c);
		return err;
	}
	for (uint32_t i = 0; i < n; i++) {
		struct vb_areq *a = c->ag;

		err = one_answer(vc, c, a->cq + (size_t)(a->cq_pos++ %
			a->cq_slots) * OMS_AD_ANSWER_LEN, cancel);
		if (err)
			return err;
		/* a flush its members' answers cover is done before an
		 * error later in the batch stops the connection */
		flushes_check(vc, c);
	}
	return 0;
}

/* The connection failed: requests whose WRs were done wait no more. */
void vb_areq_fail_waiting(struct vb_ctx *vc, struct vb_conn *c, int err)
{
	uint32_t qd = oms_be_view(vc->ctx)->qdepth;
	uint32_t ci = (uint32_t)(c - vc->conn);

	for (uint32_t s = 0; s < qd; s++) {
		struct vb_op *op = &vc->op[s];

		if (op->ag.waiting && op->wr.dest == ci)
			finish(vc, op, op->status ? op->status : err);
	}
	if (c->ag) {
		c->ag->out = 0;
		c->ag->flushes = 0;
	}
}
