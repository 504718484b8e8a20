// SPDX-License-Identifier: MIT
/*
 * A listener's agent connections, opened and closed (docs/dest-agent.md,
 * "Sharing"): the slot a requester gets on a serving thread, the memory
 * it is given, its QP on that thread's completion queues.
 *
 * Opening is two halves so that the connection manager's slow work never
 * holds a serving thread (agent_pool.c): vb_agent_conn_prepare() maps and
 * registers the connection's memory and touches nothing the thread
 * serves; vb_agent_conn_install() takes a slot, opens the core's
 * connection and makes the QP, under the thread's lock.  Closing likewise:
 * vb_agent_conn_detach() under the lock, vb_agent_conn_discard() after.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#include "verbs/listener/agent_int.h"

static uint32_t pow2_at_least(uint32_t v)
{
	uint32_t p = 16;

	while (p < v && p < 4096)
		p <<= 1;
	return p;
}

/*
 * A connection's buffers are pages of their own, mapped at accept and
 * unmapped at close: registered (so pinned) memory leaves with its
 * connection instead of staying in the allocator's heap (a server that
 * lives through thousands of requesters would keep the most it ever had),
 * and never shares a page with other data.  Zeroed by the kernel.
 */
static void *pages_map(size_t len)
{
	void *p = mmap(NULL, len, PROT_READ | PROT_WRITE,
		       MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

	return p == MAP_FAILED ? NULL : p;
}

static void pages_unmap(void *p, size_t len)
{
	if (p)
		munmap(p, len);
}

/*
 * @s's part of a listener's slot count (agent_pool.c decides): *@c gets
 * its connections, those of node @peer, and the one idle longest that may
 * be taken (no work owed, no doorbell with work for VA_IDLE_TIMEOUTS
 * context timeouts; a failed one first, its disconnect being due), only
 * among @peer's own when @own.  Under the serving thread's lock.
 */
void vb_agent_census(struct va_srv *s, uint32_t peer, int own,
		     struct vb_agent_census *c)
{
	uint64_t now = oms_now_ns();
	uint64_t limit = VA_IDLE_TIMEOUTS * va_timeout_ns(s);

	*c = (struct vb_agent_census){ .limit_ns = limit };
	for (uint32_t i = 0; i < s->nlive; i++) {
		struct va_conn *ac = s->live[i];
		uint64_t idle;

		c->used++;
		c->mine += ac->peer == peer;
		if (own && ac->peer != peer)
			continue;
		idle = now - ac->rung_ns;
		if (!ac->err && (ac->backlog || ac->inflight || ac->sq_used ||
				 ac->npend || idle < limit))
			continue;
		if (ac->err)
			idle = UINT64_MAX;
		if (idle > c->idle_ns) {
			c->idle_ns = idle;
			c->victim = ac;
			c->victim_failed = !!ac->err;
		}
	}
}

/*
 * A connection whose hello asked for the agent (@h), on @s's device: its
 * memory, mapped and registered, and what the core and the QP will need.
 * Touches nothing that a thread serves: no lock.  -ENOMEM.
 *
 * What it registers: its request ring (64 bytes a slot) and as many
 * staging slots of VA_STAGE_LEN (remote write), and its bytes back ring
 * (VA_OUT_MIN, grown on a large get up to VA_OUT_LEN) and answer records
 * (16 bytes a slot of the requester's completion ring), local only.  A
 * requester with 16 slots costs 129 KiB; one with 256 (liboms's default
 * depth), 1.1 MiB; at most 3.1 MiB, once it has asked for a 1 MiB get.
 */
int vb_agent_conn_prepare(struct va_srv *s, const struct oms_vw_hello *h,
			  struct va_conn **out)
{
	uint32_t slots = h->cq.slots < VA_MAX_SLOTS ? h->cq.slots :
			 VA_MAX_SLOTS;
	struct va_conn *ac = calloc(1, sizeof(*ac));

	if (!ac)
		return -ENOMEM;
	ac->s = s;
	ac->idx = UINT32_MAX;
	ac->aid = UINT32_MAX;
	oms_turn_wait_init(&ac->wait);
	ac->ring_slots = pow2_at_least(slots);
	/* a numbered request holds a ring slot and, a put, a staging slot
	 * until answered: as many as the ring, no more */
	ac->stage_slots = ac->ring_slots;
	ac->fmt = (enum oms_ad_fmt)oms_vw_desc_fmt(h->flags);
	ac->cq = h->cq;
	ac->mem_len = (size_t)ac->ring_slots * OMS_AD_LEN +
		      (size_t)ac->stage_slots * VA_STAGE_LEN;
	ac->out_cap = VA_OUT_MIN;
	ac->out_len = ac->out_cap + (size_t)h->cq.slots * OMS_AD_ANSWER_LEN;
	ac->mem = pages_map(ac->mem_len);
	ac->out = pages_map(ac->out_len);
	if (!ac->mem || !ac->out)
		goto err;
	ac->rmr = ibv_reg_mr(s->vc->pd, ac->mem, ac->mem_len,
			     IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE);
	ac->lmr = ibv_reg_mr(s->vc->pd, ac->out, ac->out_len,
			     IBV_ACCESS_LOCAL_WRITE);
	if (!ac->rmr || !ac->lmr)
		goto err;
	*out = ac;
	return 0;
err:
	vb_agent_conn_discard(ac);
	return -ENOMEM;
}

/* @s's registered memory moved by @d bytes: its peak, for the report. */
static void reg_count(struct va_srv *s, int64_t d)
{
	s->reg_bytes = (uint64_t)((int64_t)s->reg_bytes + d);
	if (s->reg_bytes > s->reg_peak) {
		s->reg_peak = s->reg_bytes;
		s->nlive_peak = s->nlive;
	}
}

/* Sends a connection may have in flight: what admit() may reserve for a
 * full ring, and a chain; and the liveness probe's slot (va_probe_idle). */
static uint32_t send_depth(const struct va_conn *ac)
{
	return VA_WR_PER_REQ * ac->ring_slots + 2 * VA_CHAIN + 1;
}

/*
 * Room on @cq for @more completions beside @used: a completion queue
 * that overflows fails every connection of its thread, so each thread
 * counts what its connections may complete at once (the receives posted,
 * the sends in flight) and grows its queues to hold it, up to the
 * device's limit.  0, or -EUSERS (the thread is full).
 */
static int cq_room(struct va_srv *s, struct ibv_cq *cq, uint32_t used,
		   uint32_t more)
{
	int max = s->vc->dattr.max_cqe > 0 ? s->vc->dattr.max_cqe : 4096;
	uint64_t want = 2 * ((uint64_t)used + more);

	if ((uint64_t)used + more <= (uint64_t)cq->cqe)
		return 0;
	if ((uint64_t)used + more > (uint64_t)max)
		return -EUSERS;
	return ibv_resize_cq(cq, want < (uint64_t)max ? (int)want : max) ?
	       -EUSERS : 0;
}

/*
 * @cq back to twice what @used needs (at least its first size) once it
 * holds more than twice that: a burst of connections grew it, and the
 * device's memory for it (mapped into this process: resident) would stay
 * for the process's life.  Between the two bounds nothing moves, so a
 * connection coming and going at a boundary resizes nothing.  A failure
 * (more completions waiting than the smaller queue holds) leaves it as it
 * is until the next QP goes.
 */
static void cq_shrink(struct ibv_cq *cq, uint32_t used)
{
	uint64_t want = 2 * (uint64_t)used;

	if (want < VA_CQ_FIRST)
		want = VA_CQ_FIRST;
	if ((uint64_t)cq->cqe > 2 * want)
		ibv_resize_cq(cq, (int)want);
}

void vb_agent_qp_gone(struct va_srv *s)
{
	s->nqp--;
	s->fit_due = 1;
}

/* Only once every QP that is no longer served is destroyed: one detached
 * but still there can flush its work requests into the queues, beyond
 * what the live ones are counted for. */
void va_cq_fit(struct va_srv *s)
{
	if (!s->fit_due || s->nqp != s->nlive)
		return;
	s->fit_due = 0;
	cq_shrink(s->rcq, s->recv_used);
	cq_shrink(s->scq, s->send_used);
}

int va_post_recv(struct va_conn *ac)
{
	struct ibv_recv_wr r, *bad;

	memset(&r, 0, sizeof(r));
	r.wr_id = VA_WRID(ac->idx, ac->gen, 0, 0);
	return ibv_post_recv(ac->id->qp, &r, &bad) ? -EIO : 0;
}

/* @ac's QP on @id, on its thread's completion queues, with a receive per
 * ring slot.  0, -ENOMEM, -EIO. */
static int conn_qp(struct va_conn *ac, struct rdma_cm_id *id)
{
	struct va_srv *s = ac->s;
	struct ibv_qp_init_attr qa;

	memset(&qa, 0, sizeof(qa));
	qa.send_cq = s->scq;
	qa.recv_cq = s->rcq;
	qa.qp_type = IBV_QPT_RC;
	qa.cap.max_send_wr = send_depth(ac);
	qa.cap.max_recv_wr = ac->ring_slots;
	qa.cap.max_send_sge = 1;
	qa.cap.max_recv_sge = 1;
	if (rdma_create_qp(id, s->vc->pd, &qa))
		return vb_errno(-ENOMEM);
	ac->id = id;
	/* what the queues were counted for, whatever the QP's own depth */
	ac->sq_depth = send_depth(ac) - 1;
	for (uint32_t r = 0; r < ac->ring_slots; r++) {
		if (va_post_recv(ac)) {
			rdma_destroy_qp(id);
			ac->id = NULL;
			return -EIO;
		}
	}
	s->nqp++;
	return 0;
}

/*
 * Prepared @ac into a free slot of @s, the core's connection and its QP
 * on @id; *@blk says what to tell the requester.  Under @s's lock.
 * -EUSERS (no free slot, or no room on its completion queues: another
 * thread may have it), -ENOMEM, -EIO; on failure @ac is as prepared.
 */
int vb_agent_conn_install(struct va_conn *ac, struct va_srv *s,
			  struct rdma_cm_id *id, struct oms_vw_agent *blk)
{
	struct oms_agent_conn_attr ca = {
		.nstreams = 1, .window = OMS_AD_MAX_WINDOW, .fmt = ac->fmt,
		.stage_slots = ac->stage_slots, .stage_len = VA_STAGE_LEN,
	};
	size_t ring_len = (size_t)ac->ring_slots * OMS_AD_LEN;
	uint32_t i;
	int err;

	for (i = 0; i < VA_MAX_CONNS && s->conn[i]; i++)
		;
	if (i == VA_MAX_CONNS ||
	    cq_room(s, s->rcq, s->recv_used, ac->ring_slots) ||
	    cq_room(s, s->scq, s->send_used, send_depth(ac)))
		return -EUSERS;
	if ((uint64_t)s->rcq->cqe + (uint64_t)s->scq->cqe > s->cqe_peak)
		s->cqe_peak = (uint64_t)s->rcq->cqe + (uint64_t)s->scq->cqe;
	ac->s = s;
	/* the requester's node, as this process's contexts name it when
	 * they send it puts (peers.c) */
	ca.peer = (uint32_t)vb_peer_id((struct sockaddr *)
				       &id->route.addr.dst_addr);
	ca.stage = ac->mem + ring_len;
	err = oms_agent_conn_open(s->ag, &ca, &ac->aid);
	if (err) {
		ac->aid = UINT32_MAX;
		return err;
	}
	ac->idx = i;
	ac->gen = s->gen[i];
	ac->peer = ca.peer;
	ac->progress_ns = ac->rung_ns = oms_now_ns();
	err = conn_qp(ac, id);
	if (err) {
		oms_agent_conn_close(s->ag, ac->aid);
		ac->aid = UINT32_MAX;
		ac->idx = UINT32_MAX;
		return err;
	}
	s->conn[i] = ac;
	s->by_aid[ac->aid] = ac;
	ac->live_at = s->nlive;
	s->live[s->nlive++] = ac;
	reg_count(s, (int64_t)(ac->mem_len + ac->out_len));
	s->recv_used += ac->ring_slots;
	s->send_used += send_depth(ac);
	*blk = (struct oms_vw_agent){
		.ring_addr = (uintptr_t)ac->mem,
		.ring_rkey = ac->rmr->rkey,
		.ring_slots = ac->ring_slots,
		.stage_addr = (uintptr_t)(ac->mem + ring_len),
		.stage_rkey = ac->rmr->rkey,
		.stage_slots = ac->stage_slots,
		.stage_len = VA_STAGE_LEN,
		.nstreams = 1,
		.window = OMS_AD_MAX_WINDOW,
	};
	return 0;
}

/*
 * Mark @ac failed; its QP goes to error, so nothing more leaves it.
 *
 * Then say goodbye: the requester's CM fails what it has outstanding at
 * once, not at its next request's retries.  A connection that fails in
 * service has had traffic on its QP (a doorbell, an answer's completion),
 * so it is established from our side even when the CM has not yet taken the
 * requester's RTU (still on its way, or lost and due again only after the
 * REP is resent): the kernel's CM sends no DREQ before it has, and
 * drops the disconnect without a word.  Telling it of the traffic first
 * (COMM_EST, the IB way for data seen before the RTU) makes it
 * established, so the DREQ goes; when the RTU was already taken this is
 * a no-op (-EISCONN).
 */
void va_conn_broken(struct va_conn *ac, int err)
{
	struct ibv_qp_attr a = { .qp_state = IBV_QPS_ERR };

	if (ac->err)
		return;
	if (err != -ECONNRESET) {	/* not the requester's own goodbye */
		fprintf(stderr, "liboms: agent: connection %u closed: %s\n",
			ac->idx, strerror(-err));
		ac->s->broken++;
	}
	ac->err = err;
	ac->npend = 0;
	ac->chain_lands = ac->lands;
	if (ac->id && ac->id->qp) {
		ibv_modify_qp(ac->id->qp, &a, IBV_QP_STATE);
		rdma_notify(ac->id, IBV_EVENT_COMM_EST);
		rdma_disconnect(ac->id);
	}
}

/* Did the agent close @ac (a stall, a broken protocol, a failed or
 * overdue probe, a failed QP)?  Its listener then takes it apart.  Under
 * the serving thread's lock. */
int vb_agent_conn_failed(const struct va_conn *ac)
{
	return ac->err != 0;
}

/*
 * The requester left (or the listener closes): drop what it had, free its
 * slot; its QP goes to error and is the caller's to destroy, before
 * vb_agent_conn_discard() frees the memory its WRs name.  Under the
 * serving thread's lock.
 */
void vb_agent_conn_detach(struct va_conn *ac)
{
	struct va_srv *s = ac->s;
	struct ibv_qp_attr a = { .qp_state = IBV_QPS_ERR };

	/* nothing more leaves the QP; what it had flushes with this
	 * generation, which the thread no longer serves */
	if (!ac->err && ac->id && ac->id->qp)
		ibv_modify_qp(ac->id->qp, &a, IBV_QP_STATE);
	ac->err = ac->err ? ac->err : -ECONNRESET;
	ac->npend = 0;
	if (ac->aid != UINT32_MAX) {
		oms_agent_conn_close(s->ag, ac->aid);
		s->by_aid[ac->aid] = NULL;
		ac->aid = UINT32_MAX;
	}
	if (ac->idx != UINT32_MAX) {
		s->conn[ac->idx] = NULL;
		s->gen[ac->idx]++;
		ac->idx = UINT32_MAX;
		s->live[ac->live_at] = s->live[--s->nlive];
		s->live[ac->live_at]->live_at = ac->live_at;
		reg_count(s, -(int64_t)(ac->mem_len + ac->out_len));
		s->recv_used -= ac->ring_slots;
		s->send_used -= send_depth(ac);
	}
	ac->id = NULL;
}

int va_out_grow(struct va_conn *ac, uint64_t want)
{
	uint32_t cap = ac->out_cap;
	size_t rec = ac->out_len - ac->out_cap, len;
	struct ibv_mr *mr;
	uint8_t *p;

	while (cap < want && cap < VA_OUT_LEN)
		cap <<= 1;
	len = cap + rec;
	p = pages_map(len);
	if (!p)
		return -ENOMEM;
	mr = ibv_reg_mr(ac->s->vc->pd, p, len, IBV_ACCESS_LOCAL_WRITE);
	if (!mr) {
		pages_unmap(p, len);
		return -ENOMEM;
	}
	ibv_dereg_mr(ac->lmr);
	pages_unmap(ac->out, ac->out_len);
	reg_count(ac->s, (int64_t)len - (int64_t)ac->out_len);
	ac->lmr = mr;
	ac->out = p;
	ac->out_len = len;
	ac->out_cap = cap;
	return 0;
}

/* Free a connection prepared, or detached: its memory.  No lock. */
void vb_agent_conn_discard(struct va_conn *ac)
{
	if (ac->rmr)
		ibv_dereg_mr(ac->rmr);
	if (ac->lmr)
		ibv_dereg_mr(ac->lmr);
	pages_unmap(ac->mem, ac->mem_len);
	pages_unmap(ac->out, ac->out_len);
	free(ac);
}

/* Detach and discard, for a thread that is no longer running; @id's QP,
 * if any, destroyed between. */
void vb_agent_conn_close(struct va_conn *ac)
{
	struct rdma_cm_id *id = ac->id;
	struct va_srv *s = ac->s;

	vb_agent_conn_detach(ac);
	if (id && id->qp) {
		rdma_destroy_qp(id);
		vb_agent_qp_gone(s);
	}
	vb_agent_conn_discard(ac);
}
