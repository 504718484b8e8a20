/* SPDX-License-Identifier: MIT */
/*
 * A requester of the destination agent spoken by hand, for the guest tests
 * that must do what liboms's initiator never does (forge descriptors,
 * ring past the ring, keep no receives posted, die with requests in
 * flight): raw librdmacm and libibverbs, the wire format of
 * lib/verbs/common/wire.h and lib/agent/agent_desc.h.
 *
 * Memory of a peer: answer records | landing | descriptors to write.
 */
#ifndef OMS_RAW_PEER_H
#define OMS_RAW_PEER_H

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

#include "oms.h"
#include "rxe_proto.h"
#include "agent/agent_desc.h"
#include "verbs/common/wire.h"

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

static inline uint64_t now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000 + (uint64_t)ts.tv_nsec / 1000000;
}

static inline uint8_t *answers(struct peer *p)	{ return p->mem; }
static inline uint8_t *landing(struct peer *p)	{ return p->mem + 4096; }
static inline uint8_t *descs(struct peer *p)	{ return p->mem + 4096 + LAND; }

static inline int wait_event(struct peer *p,
			     enum rdma_cm_event_type want,
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
static inline int own_qp_to(struct peer *p, enum ibv_qp_state state)
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
 * Connect to @port with a version-3 hello; 0 with the agent's block in
 * p->reg, -EUSERS when the agent had no slot (connected one-sided),
 * -ENOPROTOOPT when the listener runs no agent.  @recvs receives are
 * posted for the answers (at most CQ_SLOTS; 0: a requester that keeps
 * none).  @hold_rtu: with a QP of our own, which librdmacm does not drive, so the
 * CM reports the agent's REP (CONNECT_RESPONSE) and sends our RTU only at
 * rdma_establish(); the QP is ready to send before that, so the agent can
 * see our traffic before its CM sees the connection established.
 */
static inline int peer_connect(struct peer *p, const char *port,
			       int hold_rtu, uint32_t recvs)
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
	if (rdma_getaddrinfo(getenv("OMS_RXE_SERVER"), port, &hints, &res))
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
	for (uint32_t i = 0; i < recvs && i < CQ_SLOTS; i++) {
		struct ibv_recv_wr r = { .wr_id = 1 }, *bad;

		if (ibv_post_recv(p->qp, &r, &bad))
			return -EIO;
	}
	h.flags = OMS_VW_F_AGENT | OMS_VW_F_AGENT_CRC32C;	/* the offer */
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
				   h.flags, &p->reg);
	rdma_ack_cm_event(ev);
	if (!err && p->own_qp) {	/* ready to send; no RTU yet */
		err = own_qp_to(p, IBV_QPS_RTR);
		if (!err)
			err = own_qp_to(p, IBV_QPS_RTS);
	}
	if (!err && (p->reg.flags & OMS_VW_F_AGENT_BUSY))
		err = -EUSERS;		/* its agent had no slot for us */
	else if (!err && !(p->reg.flags & OMS_VW_F_AGENT))
		err = -ENOPROTOOPT;	/* that listener runs no agent */
	return err;
}

static inline void peer_close(struct peer *p)
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
static inline int send_raw(struct peer *p,
			   const uint8_t (*d)[OMS_AD_LEN], uint32_t n,
			   uint32_t count)
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
static inline void get_desc(uint8_t *out, struct peer *p, uint32_t key,
			    uint64_t off, uint32_t len, uint32_t tag)
{
	struct oms_ad_desc d = {
		.op = OMS_AD_GET, .flags = OMS_AD_F_ACQUIRE, .key = key,
		.len = len, .off = off, .lrkey = p->mr->rkey,
		.laddr = (uintptr_t)landing(p), .tag = tag,
	};

	/* the format the listener's answer agreed */
	if (oms_ad_encode(out, &d, oms_vw_desc_fmt(p->reg.flags)))
		memset(out, 0, OMS_AD_LEN);
}

/*
 * The next answer within 10 s: *@tag and *@status (a record, or a
 * WRITE_WITH_IMM of a tag: status 0); -ETIMEDOUT; -ECONNRESET when the
 * QP failed (*@status: the work completion's status).
 */
static inline int next_answer(struct peer *p, uint32_t *tag, int *status)
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

#endif
