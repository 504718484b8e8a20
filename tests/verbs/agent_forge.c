// SPDX-License-Identifier: MIT
/*
 * The destination agent against a requester that does not play by the
 * rules (docs/dest-agent.md, "Failures"), over Soft-RoCE in the guests: a
 * test of internals (it speaks the agent's wire format from
 * lib/verbs/wire.h and lib/agent/agent_desc.h with raw librdmacm and
 * libibverbs, not through liboms's initiator).  Against rxe_server's
 * listener with the agent (OMS_RXE_AGENT_PORT):
 *
 *   - a descriptor with a bad check code, an unknown op, a length past the
 *     limit: answered with tag 0 and -EPROTO, nothing landed;
 *   - a wrong key: -EACCES; a range past the region: -ERANGE; nothing
 *     landed, and a forged put with a wrong key wrote nothing;
 *   - a good get after all of these is still served (its bytes land,
 *     answered by their own WRITE_WITH_IMM carrying its tag);
 *   - a doorbell that counts more descriptors than the ring holds: the
 *     agent closes the connection (the requester's QP fails in bounded
 *     time), and a new connection is served; also when the doorbell
 *     comes before the agent's CM has the requester's RTU.
 *
 * Environment: OMS_RXE_SERVER, OMS_RXE_AGENT_PORT; without them every
 * test skips (this program is meant for the guest).
 */
#include <arpa/inet.h>
#include <errno.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <infiniband/verbs.h>
#include <rdma/rdma_cma.h>

#include "harness.h"
#include "oms.h"
#include "rxe_proto.h"
#include "agent/agent_desc.h"
#include "verbs/wire.h"

#define CQ_SLOTS	16u
#define LAND		4096u

struct peer {
	struct rdma_event_channel *ch;
	struct rdma_cm_id *id;
	struct ibv_cq *cq;
	struct ibv_pd *pd;	/* own_qp: ours, else librdmacm's */
	struct ibv_qp *qp;
	int own_qp;		/* a QP librdmacm does not drive */
	struct ibv_mr *mr;
	uint8_t *mem;		/* answers | landing | descriptors */
	struct oms_vw_region reg;
	uint64_t ring_pos;
	uint64_t cq_pos;	/* the next record to read */
	uint32_t pending;	/* records announced, not read */
};

static uint64_t now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000 + (uint64_t)ts.tv_nsec / 1000000;
}

static uint8_t *answers(struct peer *p)	{ return p->mem; }
static uint8_t *landing(struct peer *p)	{ return p->mem + 4096; }
static uint8_t *descs(struct peer *p)	{ return p->mem + 4096 + LAND; }

static int wait_event(struct peer *p, enum rdma_cm_event_type want,
		      struct rdma_cm_event **out)
{
	int err = rdma_get_cm_event(p->ch, out);

	if (err)
		return -errno;
	if ((*out)->event != want) {
		rdma_ack_cm_event(*out);
		return -EPROTO;
	}
	return 0;
}

/* Move our own QP to @state with the CM's attributes for it. */
static int own_qp_to(struct peer *p, enum ibv_qp_state state)
{
	struct ibv_qp_attr a = { .qp_state = state };
	int mask = 0;

	if (rdma_init_qp_attr(p->id, &a, &mask))
		return -errno;
	if (state == IBV_QPS_INIT)	/* the agent answers by WRITE */
		a.qp_access_flags = IBV_ACCESS_REMOTE_WRITE;
	return ibv_modify_qp(p->qp, &a, mask) ? -EIO : 0;
}

/*
 * Connect with a version-3 hello; 0 with the agent's block in p->reg.
 * @hold_rtu: with a QP of our own, which librdmacm does not drive, so the
 * CM reports the agent's REP (CONNECT_RESPONSE) and sends our RTU only at
 * rdma_establish(); the QP is ready to send before that, so the agent can
 * see our traffic before its CM sees the connection established.
 */
static int peer_connect(struct peer *p, int hold_rtu)
{
	struct rdma_addrinfo hints = { .ai_port_space = RDMA_PS_TCP }, *res;
	struct ibv_qp_init_attr qa = { 0 };
	struct rdma_conn_param cp = { 0 };
	struct rdma_cm_event *ev;
	struct oms_vw_hello h = { 0 };
	uint8_t hello[OMS_VW_MAX_LEN];
	int err;

	memset(p, 0, sizeof(*p));
	p->own_qp = hold_rtu;
	if (rdma_getaddrinfo(getenv("OMS_RXE_SERVER"),
			     getenv("OMS_RXE_AGENT_PORT"), &hints, &res))
		return -EHOSTUNREACH;
	p->ch = rdma_create_event_channel();
	if (!p->ch || rdma_create_id(p->ch, &p->id, NULL, RDMA_PS_TCP))
		return -ENOMEM;
	err = rdma_resolve_addr(p->id, NULL, res->ai_dst_addr, 3000) ? -errno :
	      wait_event(p, RDMA_CM_EVENT_ADDR_RESOLVED, &ev);
	rdma_freeaddrinfo(res);
	if (err)
		return err;
	rdma_ack_cm_event(ev);
	err = rdma_resolve_route(p->id, 3000) ? -errno :
	      wait_event(p, RDMA_CM_EVENT_ROUTE_RESOLVED, &ev);
	if (err)
		return err;
	rdma_ack_cm_event(ev);
	p->cq = ibv_create_cq(p->id->verbs, 256, NULL, NULL, 0);
	p->mem = aligned_alloc(4096, 3 * 4096 + LAND);
	if (!p->cq || !p->mem)
		return -ENOMEM;
	memset(p->mem, 0, 3 * 4096 + LAND);
	qa.send_cq = qa.recv_cq = p->cq;
	qa.qp_type = IBV_QPT_RC;
	qa.cap.max_send_wr = 64;
	qa.cap.max_recv_wr = CQ_SLOTS;
	qa.cap.max_send_sge = qa.cap.max_recv_sge = 1;
	if (p->own_qp) {
		p->pd = ibv_alloc_pd(p->id->verbs);
		p->qp = p->pd ? ibv_create_qp(p->pd, &qa) : NULL;
		if (!p->qp)
			return -ENOMEM;
		err = own_qp_to(p, IBV_QPS_INIT);
		if (err)
			return err;
		cp.qp_num = p->qp->qp_num;
	} else {
		if (rdma_create_qp(p->id, NULL, &qa))
			return -errno;
		p->pd = p->id->pd;
		p->qp = p->id->qp;
	}
	p->mr = ibv_reg_mr(p->pd, p->mem, 3 * 4096 + LAND,
			   IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE);
	if (!p->mr)
		return -ENOMEM;
	for (uint32_t i = 0; i < CQ_SLOTS; i++) {
		struct ibv_recv_wr r = { .wr_id = 1 }, *bad;

		if (ibv_post_recv(p->qp, &r, &bad))
			return -EIO;
	}
	h.flags = OMS_VW_F_AGENT;
	h.cq.addr = (uintptr_t)answers(p);
	h.cq.rkey = p->mr->rkey;
	h.cq.slots = CQ_SLOTS;
	cp.private_data = hello;
	cp.private_data_len = (uint8_t)oms_vw_hello_encode(hello, &h);
	cp.initiator_depth = cp.responder_resources = 1;
	cp.retry_count = 7;
	cp.rnr_retry_count = 7;
	if (rdma_connect(p->id, &cp))
		return -errno;
	err = wait_event(p, p->own_qp ? RDMA_CM_EVENT_CONNECT_RESPONSE :
			 RDMA_CM_EVENT_ESTABLISHED, &ev);
	if (err)
		return err;
	err = oms_vw_region_decode(ev->param.conn.private_data,
				   ev->param.conn.private_data_len,
				   OMS_VW_F_AGENT, &p->reg);
	rdma_ack_cm_event(ev);
	if (!err && p->own_qp) {	/* ready to send; no RTU yet */
		err = own_qp_to(p, IBV_QPS_RTR);
		if (!err)
			err = own_qp_to(p, IBV_QPS_RTS);
	}
	if (!err && !(p->reg.flags & OMS_VW_F_AGENT))
		err = -ENOPROTOOPT;	/* that listener runs no agent */
	return err;
}

static void peer_close(struct peer *p)
{
	if (p->qp)
		rdma_disconnect(p->id);
	if (p->own_qp && p->qp)
		ibv_destroy_qp(p->qp);
	else if (p->qp)
		rdma_destroy_qp(p->id);
	if (p->mr)
		ibv_dereg_mr(p->mr);
	if (p->own_qp && p->pd)
		ibv_dealloc_pd(p->pd);
	if (p->cq)
		ibv_destroy_cq(p->cq);
	if (p->id)
		rdma_destroy_id(p->id);
	if (p->ch)
		rdma_destroy_event_channel(p->ch);
	free(p->mem);
}

/*
 * Write @n raw descriptors into the ring and ring with @count (the
 * doorbell's immediate, normally n).
 */
static int send_raw(struct peer *p, const uint8_t (*d)[OMS_AD_LEN],
		    uint32_t n, uint32_t count)
{
	struct ibv_send_wr w[16], *bad;
	struct ibv_sge sge[16];

	for (uint32_t i = 0; i < n; i++) {
		uint32_t slot = (uint32_t)(p->ring_pos++ %
					   p->reg.agent.ring_slots);
		uint8_t *src = descs(p) + (size_t)(i % 64) * OMS_AD_LEN;

		memcpy(src, d[i], OMS_AD_LEN);
		memset(&w[i], 0, sizeof(w[i]));
		sge[i] = (struct ibv_sge){ .addr = (uintptr_t)src,
					   .length = OMS_AD_LEN,
					   .lkey = p->mr->lkey };
		w[i].sg_list = &sge[i];
		w[i].num_sge = 1;
		w[i].opcode = IBV_WR_RDMA_WRITE;
		w[i].wr.rdma.remote_addr = p->reg.agent.ring_addr +
					   (uint64_t)slot * OMS_AD_LEN;
		w[i].wr.rdma.rkey = p->reg.agent.ring_rkey;
		w[i].next = i + 1 < n ? &w[i + 1] : NULL;
	}
	w[n - 1].opcode = IBV_WR_RDMA_WRITE_WITH_IMM;
	w[n - 1].imm_data = htonl(count);
	w[n - 1].send_flags = IBV_SEND_SIGNALED;
	return ibv_post_send(p->qp, w, &bad) ? -EIO : 0;
}

/* An acquire get of @len bytes at @off under @key into the landing. */
static void get_desc(uint8_t *out, struct peer *p, uint32_t key, uint64_t off,
		     uint32_t len, uint32_t tag)
{
	struct oms_ad_desc d = {
		.op = OMS_AD_GET, .flags = OMS_AD_F_ACQUIRE, .key = key,
		.len = len, .off = off, .lrkey = p->mr->rkey,
		.laddr = (uintptr_t)landing(p), .tag = tag,
	};

	if (oms_ad_encode(out, &d))
		memset(out, 0, OMS_AD_LEN);
}

/*
 * The next answer within 10 s: *@tag and *@status (a record, or a
 * WRITE_WITH_IMM of a tag: status 0); -ETIMEDOUT; -ECONNRESET when the
 * QP failed (*@status: the work completion's status).
 */
static int next_answer(struct peer *p, uint32_t *tag, int *status)
{
	uint64_t end = now_ms() + 10000;
	struct ibv_wc wc;

	while (!p->pending) {
		int n = ibv_poll_cq(p->cq, 1, &wc);
		struct ibv_recv_wr r = { .wr_id = 1 }, *bad;
		uint32_t imm;

		if (n < 0)
			return -EIO;
		if (!n) {
			if (now_ms() > end)
				return -ETIMEDOUT;
			usleep(1000);
			continue;
		}
		if (wc.status != IBV_WC_SUCCESS) {
			*status = wc.status;
			return -ECONNRESET;
		}
		if (!(wc.opcode & IBV_WC_RECV))
			continue;	/* our own writes */
		ibv_post_recv(p->qp, &r, &bad);
		imm = ntohl(wc.imm_data);
		if (imm >= OMS_AD_IMM_TAG_MIN) {
			*tag = imm;
			*status = 0;
			return 0;
		}
		p->pending = imm;
	}
	{
		struct oms_ad_answer a;
		int err = oms_ad_answer_decode(answers(p) + (p->cq_pos++ %
					       CQ_SLOTS) * OMS_AD_ANSWER_LEN,
					       &a);

		p->pending--;
		if (err)
			return err;
		*tag = a.tag;
		*status = a.status;
	}
	return 0;
}

FIXTURE(forge)
{
	struct peer p;
};

FIXTURE_SETUP(forge)
{
	uint64_t end = now_ms() + 90000;
	int err;

	if (!getenv("OMS_RXE_SERVER") || !getenv("OMS_RXE_AGENT_PORT"))
		SKIP(return, "OMS_RXE_SERVER/OMS_RXE_AGENT_PORT not set "
		     "(guest test)");
	/* the server may still be starting */
	while ((err = peer_connect(&self->p, 0)) && now_ms() < end) {
		peer_close(&self->p);
		usleep(300000);
	}
	ASSERT_EQ(0, err);
}

FIXTURE_TEARDOWN(forge)
{
	peer_close(&self->p);
}

/* Malformed, wrong key, out of range: each its error, nothing landed;
 * then a good get is served. */
TEST_F(forge, forged_descriptors_refused_then_served)
{
	struct peer *p = &self->p;
	uint8_t d[6][OMS_AD_LEN];
	static const struct { uint32_t tag; int status; } want[] = {
		{ 0, -EPROTO },		/* bad check */
		{ 0, -EPROTO },		/* unknown op */
		{ 0, -EPROTO },		/* length past the limit */
		{ 0x5001, -EACCES },	/* wrong key */
		{ 0x5002, -ERANGE },	/* past the region */
	};
	uint32_t tag;
	int status;

	memset(landing(p), 0xee, 64);
	get_desc(d[0], p, p->reg.rkey, RX_SCRATCH, 8, 0x5000);
	d[0][60] ^= 1;
	get_desc(d[1], p, p->reg.rkey, RX_SCRATCH, 8, 0x5000);
	d[1][0] = 0x7f;
	get_desc(d[2], p, p->reg.rkey, RX_SCRATCH, 8, 0x5000);
	d[2][12] = 0xff, d[2][13] = 0xff, d[2][14] = 0xff, d[2][15] = 0x7f;
	get_desc(d[3], p, p->reg.rkey ^ 0x80, RX_SCRATCH, 8, 0x5001);
	get_desc(d[4], p, p->reg.rkey, RX_REGION - 8, 64, 0x5002);
	ASSERT_EQ(0, send_raw(p, (const uint8_t (*)[OMS_AD_LEN])d, 5, 5));
	for (int i = 0; i < 5; i++) {
		ASSERT_EQ(0, next_answer(p, &tag, &status));
		TH_LOG("answer %d: tag %#x status %d", i, tag, status);
		EXPECT_EQ(want[i].tag, tag);
		EXPECT_EQ(want[i].status, status);
	}
	EXPECT_EQ(0xee, landing(p)[0]);	/* nothing landed */
	get_desc(d[5], p, p->reg.rkey, RX_RES_READY, 8, 0x5003);
	ASSERT_EQ(0, send_raw(p, (const uint8_t (*)[OMS_AD_LEN])&d[5], 1, 1));
	ASSERT_EQ(0, next_answer(p, &tag, &status));
	EXPECT_EQ(0x5003, tag);
	EXPECT_EQ(0, status);
	EXPECT_EQ(1, *(uint64_t *)landing(p));	/* the observer runs */
}

/*
 * The next CM event within 30 s: its type, or -ETIMEDOUT.  A hang bound,
 * not a deadline: the agent's disconnect is a DREQ over Soft-RoCE, and
 * one that is dropped (by the loaded guests' link, or by a CM not yet
 * established, below) is sent again only after the CM's response timeout,
 * about 4 s.  (Two CI runs that saw no event here, with bounds of 10 and
 * 30 s, were the agent's DREQ never sent: see the next test.)
 */
static int next_cm_event(struct peer *p)
{
	struct pollfd pfd = { .fd = p->ch->fd, .events = POLLIN };
	struct rdma_cm_event *ev;
	int type;

	if (poll(&pfd, 1, 30000) != 1 || rdma_get_cm_event(p->ch, &ev))
		return -ETIMEDOUT;
	type = ev->event;
	rdma_ack_cm_event(ev);
	return type;
}

/* A doorbell past the ring: the agent closes the connection, and says
 * so (the requester's CM sees the disconnect); nothing is answered. */
TEST_F(forge, doorbell_past_the_ring_closes)
{
	struct peer *p = &self->p, again;
	uint8_t d[1][OMS_AD_LEN];
	uint64_t t0 = now_ms();
	uint32_t tag;
	int status = 0, ev;

	get_desc(d[0], p, p->reg.rkey, RX_RES_READY, 8, 0x6000);
	ASSERT_EQ(0, send_raw(p, (const uint8_t (*)[OMS_AD_LEN])d, 1,
			      p->reg.agent.ring_slots + 1));
	ev = next_cm_event(p);
	TH_LOG("after the forged doorbell: CM event %d (%s) in %llu ms", ev,
	       ev >= 0 ? rdma_event_str(ev) : "none",
	       (unsigned long long)(now_ms() - t0));
	EXPECT_EQ(RDMA_CM_EVENT_DISCONNECTED, ev);
	EXPECT_NE(0, next_answer(p, &tag, &status));	/* nothing answered */
	/* a new requester is served */
	ASSERT_EQ(0, peer_connect(&again, 0));
	get_desc(d[0], &again, again.reg.rkey, RX_RES_READY, 8, 0x6001);
	ASSERT_EQ(0, send_raw(&again, (const uint8_t (*)[OMS_AD_LEN])d, 1, 1));
	EXPECT_EQ(0, next_answer(&again, &tag, &status));
	EXPECT_EQ(0x6001, tag);
	EXPECT_EQ(0, status);
	peer_close(&again);
}

/* The next CM event other than ESTABLISHED within the bound, as above. */
static int next_cm_change(struct peer *p)
{
	int ev;

	while ((ev = next_cm_event(p)) == RDMA_CM_EVENT_ESTABLISHED)
		;
	return ev;
}

/*
 * The same doorbell, sent before the agent's CM has the requester's RTU:
 * on a loaded link the RTU may come after the first data, or be lost and
 * come again only when the REP is resent; here it is held back until the
 * agent has had the doorbell.  The agent has seen the connection's
 * traffic, so it still says goodbye: its CM takes the connection for
 * established and sends the DREQ.  (Without that, the CM drops the
 * disconnect unsent, and the RTU that follows leaves the requester
 * connected to a QP in error for ever.)  Our CM ignores a DREQ until the
 * RTU is sent, so the one seen is the agent's CM's resend, after its
 * response timeout (about 4 s): within the bound.
 */
TEST_F(forge, doorbell_before_the_rtu_closes)
{
	struct peer held;
	uint8_t d[1][OMS_AD_LEN];
	uint64_t t0;
	struct ibv_wc wc;
	int n = 0, ev;

	ASSERT_EQ(0, peer_connect(&held, 1));
	get_desc(d[0], &held, held.reg.rkey, RX_RES_READY, 8, 0x7000);
	ASSERT_EQ(0, send_raw(&held, (const uint8_t (*)[OMS_AD_LEN])d, 1,
			      held.reg.agent.ring_slots + 1));
	/* the doorbell was acknowledged: it is in the agent's queue */
	for (t0 = now_ms(); !n && now_ms() - t0 < 10000; usleep(1000))
		n = ibv_poll_cq(held.cq, 1, &wc);
	ASSERT_EQ(1, n);
	ASSERT_EQ(IBV_WC_SUCCESS, wc.status);
	sleep(1);			/* the agent's thread takes it */
	t0 = now_ms();
	ASSERT_EQ(0, rdma_establish(held.id));	/* the RTU, at last */
	ev = next_cm_change(&held);
	TH_LOG("doorbell before the RTU: CM event %d (%s) %llu ms after the "
	       "RTU", ev, ev >= 0 ? rdma_event_str(ev) : "none",
	       (unsigned long long)(now_ms() - t0));
	EXPECT_EQ(RDMA_CM_EVENT_DISCONNECTED, ev);
	peer_close(&held);
}

TEST_HARNESS_MAIN
