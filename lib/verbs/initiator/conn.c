// SPDX-License-Identifier: MIT
/*
 * Initiator connections (oms_connect on verbs): resolve the listener's
 * address and route with librdmacm, create an RC QP on this context's PD
 * and CQ, connect with a hello in the private data, and check the region
 * the listener describes in its accept before anything uses it.  Every
 * wait is bounded by the caller's timeout.  The context's event channel
 * also brings disconnects; a connection whose peer left fails what it
 * holds at once (vb_conn_fail) instead of waiting for retries.  A
 * connection's failure is this file's whoever sees it (a completion, an
 * answer of the agent, a post): the QP to error, what it holds finished.
 */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <stdio.h>
#include <string.h>

#include "verbs/common/verbs.h"
#include "verbs/initiator/initiator.h"
#include "verbs/common/wire.h"

#define IB_CM_REJ_INVALID_SERVICE_ID	8	/* nobody listens there */

/*
 * Put @c in error with @err (its QP too: nothing more leaves it) and
 * complete every operation it still holds with its own status, else
 * @rest.  @c->reported records that an operation reported the failure
 * itself, so that later ones may be mere cancellations (post.c).
 */
static void conn_stop(struct vb_ctx *vc, struct vb_conn *c, int err, int rest)
{
	uint32_t qd = oms_be_view(vc->ctx)->qdepth;

	if (!c->err) {
		c->err = err;
		if (c->qp) {
			struct ibv_qp_attr a = { .qp_state = IBV_QPS_ERR };

			ibv_modify_qp(c->qp, &a, IBV_QP_STATE);
		}
	}
	while (c->head != c->tail) {
		struct vb_op *op = &vc->op[c->fifo[c->head % qd]];
		int st = op->status ? op->status : rest;

		if (st != -ECANCELED)
			c->reported = 1;
		vb_op_finish(vc, op, st);
		c->head++;
	}
	c->feed = c->tail;
	c->rung = c->tail;
	c->car->stop(vc, c, rest);
}

void vb_conn_fail(struct vb_ctx *vc, struct vb_conn *c, int err)
{
	conn_stop(vc, c, err, err);
}

/* @c failed with @err, reported already: what it still holds is
 * cancelled. */
void vb_conn_cancel(struct vb_ctx *vc, struct vb_conn *c, int err)
{
	conn_stop(vc, c, err, -ECANCELED);
}

void vb_conn_destroy(struct vb_ctx *vc, struct vb_conn *c)
{
	(void)vc;
	vb_pw_del(&c->pw);	/* its puts hold no class-2 answer now */
	if (c->id) {
		if (c->qp && !c->disconnected)
			rdma_disconnect(c->id);
		if (c->qp)
			rdma_destroy_qp(c->id);
		rdma_destroy_id(c->id);
	}
	vb_areq_free(c);	/* after its QP: nothing lands any more */
	c->id = NULL;
	c->qp = NULL;
	c->used = 0;
}

/* An event of an established connection (not the one being set up). */
static void conn_event(struct vb_ctx *vc, struct rdma_cm_event *ev)
{
	struct vb_conn *c = ev->id->context;

	if (!c || c < vc->conn || c >= vc->conn + VB_MAX_CONN || !c->used ||
	    c->id != ev->id)
		return;
	switch (ev->event) {
	case RDMA_CM_EVENT_DISCONNECTED:
		if (!c->disconnected) {
			c->disconnected = 1;
			rdma_disconnect(c->id);	/* QP to error, DREP */
		}
		/* What the peer acknowledged before it left is done: vb_poll()
		 * takes the completions the CQ holds, then fails the rest. */
		c->peer_left = 1;
		break;
	case RDMA_CM_EVENT_DEVICE_REMOVAL:
		vc->gone = -ENODEV;
		vb_conn_fail(vc, c, -ENODEV);
		break;
	default:
		break;
	}
}

/* Handle what the context's channel holds, without blocking. */
void vb_conn_events(struct vb_ctx *vc)
{
	struct rdma_cm_event *ev;

	if (!vc->cm_ch)
		return;
	while (!rdma_get_cm_event(vc->cm_ch, &ev)) {
		conn_event(vc, ev);
		rdma_ack_cm_event(ev);
	}
}

/*
 * The next event of @id before @deadline (ns); events of other ids are
 * handled on the way.  0 and *@out (to be acked), or -ETIMEDOUT.
 */
static int wait_event(struct vb_ctx *vc, struct rdma_cm_id *id,
		      uint64_t deadline, struct rdma_cm_event **out)
{
	for (;;) {
		struct pollfd pfd = { .fd = vc->cm_ch->fd, .events = POLLIN };
		struct rdma_cm_event *ev;
		uint64_t now = oms_now_ns();
		int ms;

		if (!rdma_get_cm_event(vc->cm_ch, &ev)) {
			if (ev->id == id) {
				*out = ev;
				return 0;
			}
			conn_event(vc, ev);
			rdma_ack_cm_event(ev);
			continue;
		}
		if (errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR)
			return vb_errno(-EIO);
		if (now >= deadline)
			return -ETIMEDOUT;
		ms = (int)((deadline - now + 999999) / 1000000);
		poll(&pfd, 1, ms);
	}
}

/* Wait for @want on @id; the errno a failure event means otherwise. */
static int expect_event(struct vb_ctx *vc, struct rdma_cm_id *id,
			enum rdma_cm_event_type want, uint64_t deadline,
			struct rdma_cm_event **out)
{
	struct rdma_cm_event *ev = NULL;
	int err = wait_event(vc, id, deadline, &ev);

	if (err)
		return err;
	if (ev->event == want) {
		*out = ev;
		return 0;
	}
	switch (ev->event) {
	case RDMA_CM_EVENT_ADDR_ERROR:
	case RDMA_CM_EVENT_ROUTE_ERROR:
		err = -EHOSTUNREACH;
		break;
	case RDMA_CM_EVENT_UNREACHABLE:
		err = ev->status == -ETIMEDOUT ? -ETIMEDOUT : -EHOSTUNREACH;
		break;
	case RDMA_CM_EVENT_REJECTED:
	case RDMA_CM_EVENT_CONNECT_ERROR:
		err = -ECONNREFUSED;
		break;
	case RDMA_CM_EVENT_DEVICE_REMOVAL:
		err = -ENODEV;
		break;
	default:
		err = -EPROTO;
		break;
	}
	rdma_ack_cm_event(ev);
	return err;
}

static int ms_left(uint64_t deadline)
{
	uint64_t now = oms_now_ns();

	return now >= deadline ? 1 : (int)((deadline - now + 999999) / 1000000);
}

/* A free destination: never used, or gone with nothing left on it. */
static struct vb_conn *conn_slot(struct vb_ctx *vc)
{
	for (int i = 0; i < VB_MAX_CONN; i++) {
		struct vb_conn *c = &vc->conn[i];

		if (c->used && c->err && c->head == c->tail)
			vb_conn_destroy(vc, c);
		if (!c->used)
			return c;
	}
	return NULL;
}

static int open_channel(struct vb_ctx *vc)
{
	if (vc->cm_ch)
		return 0;
	vc->cm_ch = rdma_create_event_channel();
	if (!vc->cm_ch)
		return vb_errno(-ENODEV);
	if (fcntl(vc->cm_ch->fd, F_SETFL,
		  fcntl(vc->cm_ch->fd, F_GETFL) | O_NONBLOCK) < 0) {
		rdma_destroy_event_channel(vc->cm_ch);
		vc->cm_ch = NULL;
		return vb_errno(-EIO);
	}
	return 0;
}

/*
 * Why librdmacm could not resolve the way to the listener: no address, no
 * network, no route are all "-EHOSTUNREACH" to the caller (oms_connect(3));
 * a link that is down says -ENETUNREACH or -ENETDOWN here.
 */
static int unreachable(void)
{
	if (errno == ENETUNREACH || errno == ENETDOWN || errno == EADDRNOTAVAIL)
		return -EHOSTUNREACH;
	return vb_errno(-EHOSTUNREACH);
}

/* Resolve, create the QP, connect; the accept's private data in *@reg. */
static int establish(struct vb_ctx *vc, struct vb_conn *c,
		     struct rdma_addrinfo *res, uint64_t deadline,
		     struct oms_vw_region *reg)
{
	struct rdma_conn_param p;
	struct rdma_cm_event *ev;
	uint8_t hello[OMS_VW_MAX_LEN];
	struct oms_vw_hello h = { 0 };
	uint32_t sq = VB_SQ_DEPTH, rq;
	int err;

	err = vb_src_addr_fits(vc, res->ai_dst_addr);
	if (err)
		return err;
	if (rdma_resolve_addr(c->id, vc->src_len ?
			      (struct sockaddr *)&vc->src : res->ai_src_addr,
			      res->ai_dst_addr, ms_left(deadline)))
		return unreachable();
	err = expect_event(vc, c->id, RDMA_CM_EVENT_ADDR_RESOLVED, deadline,
			   &ev);
	if (err)
		return err;
	rdma_ack_cm_event(ev);
	if (c->id->verbs != vc->verbs) {
		fprintf(stderr, "liboms: verbs: the route to the listener uses "
			"device %s, this context is on %s (OMS_DEVICE)\n",
			c->id->verbs ?
			ibv_get_device_name(c->id->verbs->device) : "?",
			vc->dev_name);
		return -ENODEV;
	}
	err = vb_port_check(vc, c->id, "the route to the listener leaves by");
	if (!err)
		err = vb_set_ack_timeout(vc, c->id);
	if (err)
		return err;
	if (rdma_resolve_route(c->id, ms_left(deadline)))
		return unreachable();
	err = expect_event(vc, c->id, RDMA_CM_EVENT_ROUTE_RESOLVED, deadline,
			   &ev);
	if (err)
		return err;
	rdma_ack_cm_event(ev);
	if (vc->dattr.max_qp_wr > 0 && (uint32_t)vc->dattr.max_qp_wr < sq)
		sq = (uint32_t)vc->dattr.max_qp_wr;
	rq = vb_areq_hello(vc, c, &h);	/* unless OMS_AGENT=0 */
	err = vb_qp_create(vc, c->id, sq, rq, &c->max_inline);
	if (err)
		return err;
	c->qp = c->id->qp;
	err = vb_areq_recvs(vc, c);
	if (err)
		return err;
	c->sq_depth = sq;
	memset(&p, 0, sizeof(p));
	p.private_data = hello;
	p.private_data_len = (uint8_t)oms_vw_hello_encode(hello, &h);
	p.initiator_depth = vb_rd_atomic(vc->dattr.max_qp_init_rd_atom);
	p.responder_resources = vb_rd_atomic(vc->dattr.max_qp_rd_atom);
	p.retry_count = VB_RETRY_CNT;
	p.rnr_retry_count = 7;
	if (rdma_connect(c->id, &p))
		return vb_errno(-ECONNREFUSED);
	err = expect_event(vc, c->id, RDMA_CM_EVENT_ESTABLISHED, deadline, &ev);
	if (err)
		return err;
	/* an agent block this hello did not ask for is refused */
	err = oms_vw_region_decode(ev->param.conn.private_data,
				   ev->param.conn.private_data_len, h.flags,
				   reg);
	rdma_ack_cm_event(ev);
	if (!err && (reg->addr % 8) && (reg->access & OMS_ACCESS_REMOTE_ATOMIC))
		err = -EPROTO;	/* atomics need 8-byte alignment */
	if (!err)
		err = vb_areq_start(vc, c, reg);
	if (err)
		return err;
	/* its carrier, for good: the agent's when the accept gave one */
	c->car = c->ag ? &vb_carrier_agent : &vb_carrier_rc;
	return 0;
}

int vb_connect(struct oms_ctx *ctx, const char *host, const char *port,
	       uint32_t timeout_ms, struct oms_rmr *rmr)
{
	struct vb_ctx *vc = VC(ctx);
	struct oms_be_view *v = oms_be_view(ctx);
	uint64_t deadline = oms_now_ns() + (uint64_t)timeout_ms * 1000000ull;
	struct rdma_addrinfo hints, *res = NULL;
	struct oms_vw_region reg;
	struct vb_conn *c;
	uint32_t *fifo;
	uint16_t gen;
	int err;

	if (vc->gone)
		return vc->gone;
	c = conn_slot(vc);
	if (!c)
		return -ENOSPC;
	err = open_channel(vc);
	if (err)
		return err;
	memset(&hints, 0, sizeof(hints));
	hints.ai_port_space = RDMA_PS_TCP;
	hints.ai_qp_type = IBV_QPT_RC;
	if (rdma_getaddrinfo(host, port, &hints, &res) || !res ||
	    !res->ai_dst_addr) {
		if (res)
			rdma_freeaddrinfo(res);
		return -EHOSTUNREACH;
	}
	fifo = c->fifo;
	gen = c->gen;
	memset(c, 0, sizeof(*c));
	c->fifo = fifo;
	c->gen = (uint16_t)((gen + 1) & 0xfff);
	if (rdma_create_id(vc->cm_ch, &c->id, c, RDMA_PS_TCP)) {
		err = vb_errno(-ENOMEM);
		c->id = NULL;
		goto out;
	}
	c->used = 1;
	err = establish(vc, c, res, deadline, &reg);
	if (err) {
		c->disconnected = 1;	/* nothing to say goodbye to */
		vb_conn_destroy(vc, c);
		goto out;
	}
	if (v->attr->dest_seq_mask & (1u << (c - vc->conn))) {
		/* numbered operations need the listener's reorder buffer:
		 * its agent's; a plain listener has none (connected, so
		 * say goodbye).  The caller's operations are the ones that
		 * hold numbers: queue_depth of them (the context's flushes
		 * have slots besides, and ask the agent nothing). */
		err = c->car->seq_start(c, v->seq_next(vc->ctx,
					(uint32_t)(c - vc->conn)),
					v->attr->queue_depth);
		if (err) {
			vb_conn_destroy(vc, c);
			goto out;
		}
	}
	c->raddr = reg.addr;
	c->rlen = reg.len;
	c->rkey = reg.rkey;
	c->raccess = reg.access;
	c->flush_addr = reg.flush_addr;
	c->flush_rkey = reg.flush_rkey;
	vb_pw_add(&c->pw, (uint32_t)vb_peer_id((struct sockaddr *)
			 &c->id->route.addr.dst_addr));
	rmr->dest = (uint32_t)(c - vc->conn);
	rmr->region = VB_REGION(rmr->dest, c->gen);
	rmr->key = reg.rkey;
	rmr->access = reg.access;
	rmr->len = reg.len;
out:
	rdma_freeaddrinfo(res);
	return err;
}
