// SPDX-License-Identifier: MIT
/*
 * Listeners (oms_listen on verbs).  A thread, bound to the device's NUMA
 * node, takes the librdmacm events of one listening cm_id: a connect
 * request whose hello checks out gets an RC QP on the owner's PD and CQ
 * (passive: the owner's CPU takes no part in what the initiator then
 * does) and an accept carrying the region (address, rkey, length,
 * access) and the listener's flush word; a disconnect tears its QP down.
 * The listener counts the connections it holds, so that its owner can
 * wait for them to leave; closing it disconnects every one.
 *
 * The flush word: 8 bytes of the listener's own, registered for remote
 * read on the context's PD, that every initiator's flush READs.  It is
 * readable even when the region is not, and being 8 real bytes the READ
 * response follows the QP's earlier WRITEs into memory (a 0-byte READ
 * touches nothing and need not).
 */
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "verbs/listener/probe.h"
#include "verbs/listener/listener_int.h"
#include "verbs/listener/teardown.h"
#include "verbs/common/wire.h"

struct vb_passive {
	struct rdma_cm_id *id;
	struct va_conn *ac;	/* served by the agent */
	struct vb_probe_conn probe;	/* a plain one: is its initiator there? */
	int disconnected;
	int released;	/* QP and agent state gone, the id waits for its
			 * disconnect to end (release()) */
	struct vb_passive *next;
};

struct vb_listener {
	struct vb_ctx *vc;
	struct rdma_event_channel *ch;
	struct rdma_cm_id *lid;
	pthread_t thread;
	int stop[2];		/* pipe: a byte asks the thread to leave */
	uint64_t *flush_word;	/* initiators' flushes READ it */
	struct ibv_mr *flush_mr;
	struct oms_vw_region reg;	/* what every accept describes */
	uint8_t reply[OMS_VW_MAX_LEN];
	uint8_t reply_len;		/* the version-2 region */
	struct va_pool *agent;		/* OMS_AGENT=1: the destination agent's
					 * serving threads (agent_pool.c) */
	struct vb_probe probe;		/* of the plain connections (probe.c) */
	struct vb_teardown teardown;	/* destroys the ids let go */
	uint64_t probe_drops;		/* connections whose initiator was gone */
	uint64_t accepted;
	uint64_t cpu_ns;		/* the thread's CPU time, at its end */
	struct vb_passive *conns;
	int peers;		/* conns' length, read by other threads */
};

/* @id's QP destroyed, and the agent's part of the connection, if any. */
static void qp_free(struct vb_listener *l, struct rdma_cm_id *id,
		    struct va_conn *ac)
{
	if (ac)
		va_pool_close(l->agent, ac, id);
	else if (id->qp)
		rdma_destroy_qp(id);
}

/* Take a connection apart: what does not wait here, its id on the
 * teardown thread (teardown.c). */
static void passive_free(struct vb_listener *l, struct vb_passive *p)
{
	if (!p->disconnected)
		rdma_disconnect(p->id);
	qp_free(l, p->id, p->ac);
	vb_teardown_id(&l->teardown, p->id);
	free(p);
}

static void drop_passive(struct vb_listener *l, struct rdma_cm_id *id);

/* Close the connection the agent serves as @ac, to give its slot away. */
static void evict(void *arg, struct va_conn *ac)
{
	struct vb_listener *l = arg;

	for (struct vb_passive *p = l->conns; p; p = p->next)
		if (p->ac == ac) {
			drop_passive(l, p->id);
			return;
		}
}

/*
 * A plain connection's QP: nothing is received on it and it sends only
 * the liveness probe, one at a time, completed on the probe's CQ.
 */
static int passive_qp_create(struct vb_listener *l, struct rdma_cm_id *id)
{
	struct ibv_qp_init_attr a;

	memset(&a, 0, sizeof(a));
	a.send_cq = l->probe.cq;
	a.recv_cq = l->vc->cq;
	a.qp_type = IBV_QPT_RC;
	a.cap.max_send_wr = 1;
	a.cap.max_recv_wr = 1;
	a.cap.max_send_sge = 1;
	a.cap.max_recv_sge = 1;
	return rdma_create_qp(id, l->vc->pd, &a) ? vb_errno(-ENOMEM) : 0;
}

/*
 * The QP of a connection: the agent's when the hello asked for it and the
 * listener runs one with a slot for it (*@blk says what it gave), else
 * the plain one on the owner's PD and CQ; *@busy when it asked and the
 * agent had no slot.
 */
static int make_qp(struct vb_listener *l, struct rdma_cm_id *id,
		   const struct oms_vw_hello *h, struct vb_passive *pc,
		   struct oms_vw_agent *blk, int *busy)
{
	int err = -EUSERS;

	*busy = 0;
	if (l->agent && (h->flags & OMS_VW_F_AGENT)) {
		err = va_pool_open(l->agent, id, h, &pc->ac, blk, evict, l);
		*busy = err == -EUSERS;
	}
	if (err == -EUSERS)	/* no agent, or no slot in it: one-sided */
		err = passive_qp_create(l, id);
	if (!err)
		err = vb_set_ack_timeout(l->vc, id);
	return err;
}

static void unmake_qp(struct vb_listener *l, struct rdma_cm_id *id,
		      struct vb_passive *pc)
{
	qp_free(l, id, pc->ac);
	pc->ac = NULL;
}

/* A connect request: check it, give it a QP, accept with the region. */
static int accept_one(struct vb_listener *l, struct rdma_cm_event *ev)
{
	struct vb_ctx *vc = l->vc;
	struct rdma_cm_id *id = ev->id;
	struct oms_vw_hello h;
	struct oms_vw_region reg = l->reg;
	uint8_t reply[OMS_VW_MAX_LEN];
	struct rdma_conn_param p;
	struct vb_passive *pc;
	int busy, err;

	err = oms_vw_hello_decode(ev->param.conn.private_data,
				  ev->param.conn.private_data_len, &h);
	if (err)
		return err;
	if (id->verbs != vc->verbs) {
		fprintf(stderr, "liboms: verbs: refused a connection on device "
			"%s: the listener's context is on %s\n",
			id->verbs ? ibv_get_device_name(id->verbs->device) : "?",
			vc->dev_name);
		return -ENODEV;
	}
	err = vb_port_check(vc, id, "refused a connection that came in on");
	if (err)
		return err;
	pc = calloc(1, sizeof(*pc));
	if (!pc)
		return -ENOMEM;
	err = make_qp(l, id, &h, pc, &reg.agent, &busy);
	if (err) {
		unmake_qp(l, id, pc);
		free(pc);
		return err;
	}
	memset(&p, 0, sizeof(p));
	p.private_data = l->reply;
	p.private_data_len = l->reply_len;
	if (pc->ac || busy) {
		/* an offered descriptor format is taken (the agent's
		 * connection did, from the same hello) */
		reg.flags = pc->ac ? OMS_VW_F_AGENT |
			    (h.flags & OMS_VW_F_AGENT_CRC32C) :
			    OMS_VW_F_AGENT_BUSY;
		p.private_data = reply;
		p.private_data_len = (uint8_t)oms_vw_region_encode(reply, &reg);
	}
	p.responder_resources = vb_rd_atomic(vc->dattr.max_qp_rd_atom);
	if (ev->param.conn.initiator_depth < p.responder_resources)
		p.responder_resources = ev->param.conn.initiator_depth;
	p.initiator_depth = 1;
	p.retry_count = VB_RETRY_CNT;
	/* 7 is for ever: the agent's thread must not wait for ever on a
	 * requester that keeps no receives posted for its answers */
	p.rnr_retry_count = pc->ac ? 6 : 7;
	if (!p.private_data_len || rdma_accept(id, &p)) {
		err = p.private_data_len ? vb_errno(-ECONNABORTED) : -EINVAL;
		unmake_qp(l, id, pc);
		free(pc);
		return err;
	}
	pc->id = id;
	id->context = pc;
	if (!pc->ac)
		vb_probe_conn_init(&l->probe, &pc->probe, id->qp, oms_now_ns());
	pc->next = l->conns;
	l->conns = pc;
	l->accepted++;
	__atomic_add_fetch(&l->peers, 1, __ATOMIC_RELEASE);
	return 0;
}

static void drop_passive(struct vb_listener *l, struct rdma_cm_id *id)
{
	for (struct vb_passive **pp = &l->conns; *pp; pp = &(*pp)->next) {
		struct vb_passive *p = *pp;

		if (p->id == id) {
			*pp = p->next;
			if (!p->released)
				__atomic_sub_fetch(&l->peers, 1,
						   __ATOMIC_RELEASE);
			if (!p->ac)
				vb_probe_forget(&l->probe, &p->probe);
			p->disconnected = 1;
			rdma_disconnect(id);	/* DREP; QP to error */
			passive_free(l, p);
			return;
		}
	}
}

static void handle(struct vb_listener *l, struct rdma_cm_event *ev)
{
	struct rdma_cm_id *id = ev->id;

	switch (ev->event) {
	case RDMA_CM_EVENT_CONNECT_REQUEST:
		if (accept_one(l, ev)) {
			rdma_reject(id, NULL, 0);
			rdma_ack_cm_event(ev);
			vb_teardown_id(&l->teardown, id);
			return;
		}
		break;
	case RDMA_CM_EVENT_DISCONNECTED:
	case RDMA_CM_EVENT_CONNECT_ERROR:
	case RDMA_CM_EVENT_UNREACHABLE:
	case RDMA_CM_EVENT_REJECTED:
	case RDMA_CM_EVENT_DEVICE_REMOVAL:
		if (id != l->lid) {
			rdma_ack_cm_event(ev);
			drop_passive(l, id);
			return;
		}
		break;
	default:
		break;
	}
	rdma_ack_cm_event(ev);
}

/*
 * A connection the listener gives up on (its probe failed, the agent
 * closed it) is disconnected and taken apart at once, its QP and the
 * agent's registered memory with it; its id stays until the disconnect
 * ends (the DISCONNECTED event, drop_passive()), because destroying it
 * would stop the connection manager resending the disconnect request: a
 * requester that has not yet taken it (one still sending its RTU) would
 * never hear.  To a requester that vanished the request is resent until
 * the manager gives up, a minute on, which costs only the id meanwhile.
 */
static void release(struct vb_listener *l, struct vb_passive *p)
{
	if (!p->disconnected)
		rdma_disconnect(p->id);
	p->disconnected = 1;
	if (!p->ac)
		vb_probe_forget(&l->probe, &p->probe);
	qp_free(l, p->id, p->ac);
	p->ac = NULL;
	p->released = 1;
	__atomic_sub_fetch(&l->peers, 1, __ATOMIC_RELEASE);
}

/* Connections the agent's threads closed (va_conn_broken: their goodbye
 * is sent). */
static void release_failed(struct vb_listener *l)
{
	va_pool_clear(l->agent);
	for (struct vb_passive *p = l->conns; p; p = p->next)
		if (p->ac && va_pool_failed(l->agent, p->ac))
			release(l, p);
}

/*
 * The probe's round: take its completions (a failed one drops its
 * connection: the initiator is gone), then probe the connections that are
 * due.
 */
static void probe_round(struct vb_listener *l)
{
	uint64_t now = oms_now_ns(), id;
	struct vb_passive *p;
	int ok;

	while (vb_probe_reap(&l->probe, &id, &ok)) {
		for (p = l->conns; p && (p->ac || p->released ||
					 p->probe.id != id); p = p->next)
			;
		if (!p)
			continue;	/* let go since it was posted */
		vb_probe_done(&l->probe, &p->probe, now);
		if (!ok) {
			l->probe_drops++;
			release(l, p);
		}
	}
	for (p = l->conns; p; p = p->next) {
		if (p->ac || p->released)
			continue;
		if (vb_probe_overdue(&p->probe, now)) {
			l->probe.overdue++;
		} else if (!vb_probe_post(&l->probe, &p->probe, now)) {
			continue;
		}
		l->probe_drops++;
		release(l, p);
	}
}


static uint64_t thread_cpu_ns(void)
{
	struct timespec ts;

	if (clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts))
		return 0;
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

static void *listener_thread(void *arg)
{
	struct vb_listener *l = arg;
	int node = vb_numa_node(l->vc);

	if (node >= 0 && numa_available() >= 0)
		numa_run_on_node(node);
	for (;;) {
		struct pollfd pfd[3] = {
			{ .fd = l->ch->fd, .events = POLLIN },
			{ .fd = l->stop[0], .events = POLLIN },
			{ .fd = l->agent ? va_pool_fd(l->agent) : -1,
			  .events = POLLIN },
		};
		struct rdma_cm_event *ev;
		int n = poll(pfd, 3, vb_probe_wait_ms(&l->probe));

		if (n < 0 && errno != EINTR)
			break;
		if (pfd[1].revents)
			break;
		if (n > 0 && pfd[2].revents)
			release_failed(l);
		while (!rdma_get_cm_event(l->ch, &ev))
			handle(l, ev);
		probe_round(l);
	}
	l->cpu_ns = thread_cpu_ns();
	return NULL;
}

static uint32_t line_size(void)
{
	long v = sysconf(_SC_LEVEL1_DCACHE_LINESIZE);

	return v >= 8 && v <= 4096 && !(v & (v - 1)) ? (uint32_t)v : 64;
}

/* The flush word: a cache line of its own, remote read only. */
static int flush_word_reg(struct vb_listener *l)
{
	void *p = NULL;

	if (posix_memalign(&p, 64, 64))
		return -ENOMEM;
	memset(p, 0, 64);
	l->flush_word = p;
	l->flush_mr = ibv_reg_mr(l->vc->pd, p, 8, IBV_ACCESS_REMOTE_READ);
	if (!l->flush_mr) {
		free(p);
		l->flush_word = NULL;
		return vb_errno(-ENOMEM);
	}
	return 0;
}

static void flush_word_dereg(struct vb_listener *l)
{
	ibv_dereg_mr(l->flush_mr);
	free(l->flush_word);
}

/* Bind @l->lid to @addr:@port; when @addr is NULL, to the address of the
 * user's GID (OMS_GID_INDEX), else to every IPv4 address. */
static int bind_listener(struct vb_listener *l, const char *addr,
			 const char *port)
{
	struct rdma_addrinfo hints, *res = NULL;
	struct sockaddr_storage ss;
	int err = 0;

	if (!addr) {
		err = vb_src_addr_bind(l->vc, port, &ss);
		if (err < 0)
			return err;
		if (err)
			return rdma_bind_addr(l->lid, (struct sockaddr *)&ss) ?
			       vb_errno(-EADDRNOTAVAIL) : 0;
	}

	memset(&hints, 0, sizeof(hints));
	hints.ai_flags = RAI_PASSIVE;
	hints.ai_port_space = RDMA_PS_TCP;
	if (!addr)
		hints.ai_family = AF_INET;
	if (rdma_getaddrinfo(addr, port, &hints, &res) || !res ||
	    !res->ai_src_addr) {
		if (res)
			rdma_freeaddrinfo(res);
		return -EADDRNOTAVAIL;
	}
	if (rdma_bind_addr(l->lid, res->ai_src_addr))
		err = vb_errno(-EADDRNOTAVAIL);
	rdma_freeaddrinfo(res);
	return err;
}

/*
 * @l's listening id on @addr:@port, its event channel (non-blocking) and
 * the pipe that stops its thread; undone by cm_unlisten().  -ENODEV,
 * -ENOMEM, -EADDRNOTAVAIL, -EADDRINUSE, -EMFILE.
 */
static int cm_listen(struct vb_listener *l, const char *addr,
		     const char *port)
{
	struct vb_ctx *vc = l->vc;
	int err;

	l->ch = rdma_create_event_channel();
	if (!l->ch)
		return vb_errno(-ENODEV);
	if (rdma_create_id(l->ch, &l->lid, l, RDMA_PS_TCP)) {
		err = vb_errno(-ENOMEM);
		goto err_ch;
	}
	err = bind_listener(l, addr, port);
	if (err)
		goto err_id;
	if (l->lid->verbs && l->lid->verbs != vc->verbs) {
		fprintf(stderr, "liboms: verbs: %s is on device %s, the "
			"context on %s\n", addr ? addr : "the GID's address",
			ibv_get_device_name(l->lid->verbs->device),
			vc->dev_name);
		err = -ENODEV;
		goto err_id;
	}
	if (rdma_listen(l->lid, 16)) {
		err = vb_errno(-EADDRINUSE);
		goto err_id;
	}
	if (pipe2(l->stop, O_CLOEXEC) ||
	    fcntl(l->ch->fd, F_SETFL, fcntl(l->ch->fd, F_GETFL) | O_NONBLOCK)) {
		err = vb_errno(-EMFILE);
		goto err_pipe;
	}
	return 0;

err_pipe:
	if (l->stop[0] >= 0) {
		close(l->stop[0]);
		close(l->stop[1]);
	}
err_id:
	rdma_destroy_id(l->lid);
err_ch:
	rdma_destroy_event_channel(l->ch);
	return err;
}

static void cm_unlisten(struct vb_listener *l)
{
	close(l->stop[0]);
	close(l->stop[1]);
	rdma_destroy_id(l->lid);
	rdma_destroy_event_channel(l->ch);
}

/* @l's flush word and the reply every accept carries, for @served. */
static int reply_make(struct vb_listener *l,
		      const struct oms_be_region *served)
{
	struct oms_vw_region reg = {
		.addr = (uintptr_t)served->addr,
		.len = served->len,
		.rkey = served->rmr.key,
		.access = served->rmr.access,
		.line = line_size(),
		.node = oms_be_view(l->vc->ctx)->attr->node,
	};
	int err = flush_word_reg(l);

	if (err)
		return err;
	reg.flush_addr = (uintptr_t)l->flush_word;
	reg.flush_rkey = l->flush_mr->rkey;
	l->reply_len = (uint8_t)oms_vw_region_encode(l->reply, &reg);
	if (!l->reply_len) {
		flush_word_dereg(l);
		return -EINVAL;	/* a region the reply cannot describe */
	}
	l->reg = reg;
	return 0;
}

int vb_listen(struct oms_ctx *ctx, const char *addr, const char *port,
	      const struct oms_be_region *served, void **lpriv)
{
	struct vb_ctx *vc = VC(ctx);
	struct vb_listener *l;
	int err;

	if (vc->gone)
		return vc->gone;
	l = calloc(1, sizeof(*l));
	if (!l)
		return -ENOMEM;
	l->vc = vc;
	l->stop[0] = l->stop[1] = -1;
	err = reply_make(l, served);
	if (err)
		goto err_free;
	err = vb_probe_init(&l->probe, vc->verbs,
			    oms_be_view(ctx)->attr->timeout_ms);
	if (err)
		goto err_flush;
	if (vb_agent_wanted()) {
		err = va_pool_create(vc, served, &l->agent);
		if (err)
			goto err_probe;
	}
	err = cm_listen(l, addr, port);
	if (err)
		goto err_probe;
	err = vb_teardown_start(&l->teardown);
	if (err)
		goto err_cm;
	err = -pthread_create(&l->thread, NULL, listener_thread, l);
	if (err)
		goto err_teardown;
	*lpriv = l;
	return 0;

err_teardown:
	vb_teardown_stop(&l->teardown);
err_cm:
	cm_unlisten(l);
err_probe:
	va_pool_destroy(l->agent);
	vb_probe_fini(&l->probe);
err_flush:
	flush_word_dereg(l);
err_free:
	free(l);
	return err;
}

int vb_listener_peers(struct oms_ctx *ctx, void *lpriv)
{
	struct vb_listener *l = lpriv;

	(void)ctx;
	return __atomic_load_n(&l->peers, __ATOMIC_ACQUIRE);
}

static int stats_wanted(void)
{
	const char *e = getenv("OMS_AGENT_STATS");

	return e && !strcmp(e, "1");
}

/* OMS_AGENT_STATS=1: the connections open when the listener closes, by
 * kind, with their QP numbers (as `rdma resource show qp` lists them). */
static void report_open(const struct vb_listener *l)
{
	char plain[256] = "", agent[256] = "";
	int np = 0, na = 0, nr = 0;

	if (!stats_wanted())
		return;
	for (const struct vb_passive *p = l->conns; p; p = p->next) {
		char *b = p->ac ? agent : plain;
		size_t n = strlen(b);

		if (p->released) {
			nr++;
			continue;
		}

		if (p->ac)
			na++;
		else
			np++;
		if (p->id->qp && n + 12 < sizeof(plain))
			snprintf(b + n, sizeof(plain) - n, " %u",
				 p->id->qp->qp_num);
	}
	fprintf(stderr, "liboms: listener: open at close: %d plain (QPs%s), "
		"%d served by the agent (QPs%s), %d let go and disconnecting\n",
		np, plain, na, agent, nr);
}

/* OMS_AGENT_STATS=1: one line at close, the connections and their end. */
static void report(const struct vb_listener *l)
{
	if (!stats_wanted())
		return;
	fprintf(stderr, "liboms: listener: %llu connections accepted; probes "
		"%llu answered, %llu failed, %llu overdue, %llu connections "
		"dropped for it; %llu ids torn down, the slowest in %.1f ms; "
		"thread CPU %.1f ms\n",
		(unsigned long long)l->accepted,
		(unsigned long long)l->probe.answered,
		(unsigned long long)l->probe.failed,
		(unsigned long long)l->probe.overdue,
		(unsigned long long)l->probe_drops,
		(unsigned long long)l->teardown.destroyed,
		(double)l->teardown.slowest_ns / 1e6, (double)l->cpu_ns / 1e6);
}

void vb_listener_close(struct oms_ctx *ctx, void *lpriv)
{
	struct vb_listener *l = lpriv;
	char b = 1;

	(void)ctx;
	if (write(l->stop[1], &b, 1) != 1)
		pthread_cancel(l->thread);
	pthread_join(l->thread, NULL);
	report_open(l);
	while (l->conns) {
		struct vb_passive *p = l->conns;

		l->conns = p->next;
		passive_free(l, p);
	}
	/* every id gone before the channel they report to */
	vb_teardown_stop(&l->teardown);
	report(l);
	va_pool_destroy(l->agent);
	cm_unlisten(l);
	/* after the QPs: no initiator can READ it any more, no QP
	 * sends on the probe's CQ */
	vb_probe_fini(&l->probe);
	flush_word_dereg(l);
	free(l);
}
