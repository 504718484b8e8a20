// SPDX-License-Identifier: MIT
/*
 * oms_probe on verbs: what a live RDMA device orders, measured with plain
 * libibverbs and librdmacm (no liboms between the probe and the device).
 *
 * The server (responder) accepts two RC connections from one client, the
 * probe's "QP 0" and "QP 1", on one region of PB_REGION bytes, and plays
 * the responder-side observer: on the client's START it zeroes the region
 * and a thread watches its own memory (pb_observe) until STOP, then
 * answers with what it saw.  Control messages are SEND/RECV on QP 0.
 * The client runs every pattern, reads what it can see itself (where its
 * READs land) and asks the server for the rest.
 */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <infiniband/verbs.h>
#include <rdma/rdma_cma.h>
#include <rdma/rdma_verbs.h>

#include "probe.h"

#define PB_MAGIC	0x4f4d5350u	/* "OMSP" */
#define SLOTS		64u
#define SLOT_LEN	4096u
#define SIG_EVERY	32u		/* rounds between signaled WRs */
#define LOC_CTL		0u		/* client memory: control out, */
#define LOC_CTL_RX	64u		/* control in, */
#define LOC_SRC		4096u		/* source slots, */
#define LOC_LAND	(LOC_SRC + SLOTS * SLOT_LEN)	/* landing area */
#define LOC_LEN		(LOC_LAND + 2 * PB_BIG_LEN)

enum ctl_type {
	CT_HELLO = 1,	/* server: region address, rkey, length */
	CT_START,	/* client: watch = enum pb_watch */
	CT_READY,
	CT_STOP,
	CT_RESULT,	/* server: checks, violations */
	CT_BYE,
};

struct pb_ctl {
	uint32_t magic, type, watch, reserved;
	uint64_t addr;
	uint32_t rkey, len;
	uint64_t checks, violations;
};

struct conn {
	struct rdma_cm_id *id;
	struct ibv_mr *mr;
	uint64_t raddr;		/* the peer's region */
	uint32_t rkey;
	uint64_t rx;		/* where its control messages land */
};

struct vrig {
	struct conn c[2];
	uint8_t *mem;		/* client: LOC_LEN; server: region + ctl */
	size_t mem_len;
	uint32_t tmo_ms;
};

static uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

static int conn_param(struct rdma_cm_id *id, struct rdma_conn_param *p)
{
	struct ibv_device_attr da;
	int rd = 16;

	memset(p, 0, sizeof(*p));
	if (!ibv_query_device(id->verbs, &da) && da.max_qp_rd_atom < rd)
		rd = da.max_qp_rd_atom;
	p->responder_resources = (uint8_t)rd;
	p->initiator_depth = (uint8_t)rd;
	p->retry_count = 7;
	p->rnr_retry_count = 7;
	return 0;
}

static void qp_attr(struct ibv_qp_init_attr *a)
{
	memset(a, 0, sizeof(*a));
	a->qp_type = IBV_QPT_RC;
	a->cap.max_send_wr = 256;
	a->cap.max_recv_wr = 8;
	a->cap.max_send_sge = 1;
	a->cap.max_recv_sge = 1;
	a->sq_sig_all = 0;
}

/* Wait for @n completions of @cq; -ETIMEDOUT, -EIO (a failed one).
 * @yield: give the CPU away between polls (a control message may be
 * minutes away; a guest with one CPU has an observer to run). */
static int cq_wait(struct ibv_cq *cq, unsigned n, uint32_t tmo_ms, int yield)
{
	uint64_t end = now_ns() + (uint64_t)tmo_ms * 1000000u;
	struct ibv_wc wc;
	int k;

	while (n) {
		k = ibv_poll_cq(cq, 1, &wc);
		if (k < 0)
			return -EIO;
		if (!k) {
			if (now_ns() > end)
				return -ETIMEDOUT;
			if (yield)
				sched_yield();
			continue;
		}
		if (wc.status != IBV_WC_SUCCESS) {
			fprintf(stderr, "%s: completion: %s\n", probe_prog,
				ibv_wc_status_str(wc.status));
			return -EIO;
		}
		n--;
	}
	return 0;
}

static int post(struct conn *c, enum ibv_wr_opcode op, uint64_t loff,
		uint32_t len, uint64_t roff, unsigned flags)
{
	struct ibv_sge sge = {
		.addr = (uintptr_t)c->mr->addr + loff, .length = len,
		.lkey = c->mr->lkey,
	};
	struct ibv_send_wr wr = {
		.sg_list = &sge, .num_sge = 1, .opcode = op,
		.send_flags = flags,
	}, *bad;

	if (op != IBV_WR_SEND) {
		wr.wr.rdma.remote_addr = c->raddr + roff;
		wr.wr.rdma.rkey = c->rkey;
	}
	return ibv_post_send(c->id->qp, &wr, &bad) ? -EIO : 0;
}

static int post_recv(struct conn *c)
{
	struct ibv_sge sge = {
		.addr = (uintptr_t)c->mr->addr + c->rx,
		.length = sizeof(struct pb_ctl), .lkey = c->mr->lkey,
	};
	struct ibv_recv_wr wr = { .sg_list = &sge, .num_sge = 1 }, *bad;

	return ibv_post_recv(c->id->qp, &wr, &bad) ? -EIO : 0;
}

/* Send @m on @c from @loff and wait for it to go. */
static int ctl_send(struct vrig *g, struct conn *c, uint64_t loff,
		    const struct pb_ctl *m)
{
	int err;

	memcpy(g->mem + loff, m, sizeof(*m));
	err = post(c, IBV_WR_SEND, loff, sizeof(*m), 0, IBV_SEND_SIGNALED);
	return err ? err : cq_wait(c->id->send_cq, 1, g->tmo_ms, 0);
}

/* Receive one control message of @type into @m (and post the next). */
static int ctl_recv(struct vrig *g, struct conn *c, uint32_t type,
		    uint32_t tmo_ms, struct pb_ctl *m)
{
	int err = cq_wait(c->id->recv_cq, 1, tmo_ms, 1);

	if (err)
		return err;
	memcpy(m, g->mem + c->rx, sizeof(*m));
	err = post_recv(c);
	if (err)
		return err;
	if (m->magic != PB_MAGIC || (type && m->type != type)) {
		fprintf(stderr, "%s: bad control message (type %u)\n",
			probe_prog, m->type);
		return -EPROTO;
	}
	return 0;
}

static void conn_close(struct conn *c)
{
	if (c->mr)
		ibv_dereg_mr(c->mr);
	if (c->id) {
		rdma_disconnect(c->id);
		rdma_destroy_ep(c->id);
	}
	memset(c, 0, sizeof(*c));
}

/* ------------------------------------------------------------------ */
/* Server                                                             */
/* ------------------------------------------------------------------ */

/*
 * Take the next connection and accept it, within @tmo_ms.  A request that
 * cannot be accepted (a client's abandoned attempt arriving late: its
 * side is gone, so it never becomes established) is dropped and the next
 * one taken, until the time is up.
 */
static int accept_one(struct vrig *g, struct rdma_cm_id *lid, struct conn *c,
		      uint32_t tmo_ms)
{
	uint64_t end = now_ns() + (uint64_t)tmo_ms * 1000000u, rx = c->rx;
	struct rdma_conn_param cp;
	int err;

	do {
		struct pollfd p = { .fd = lid->channel->fd, .events = POLLIN };
		uint64_t left = end > now_ns() ? (end - now_ns()) / 1000000u : 0;
		int n = poll(&p, 1, (int)(left < 1000 ? left + 1 : 1000));

		if (n < 0 && errno != EINTR)
			return -errno;
		if (n <= 0)
			continue;
		err = rdma_get_request(lid, &c->id) ? -errno : 0;
		if (err)
			return err;
		c->mr = ibv_reg_mr(c->id->pd, g->mem, g->mem_len,
				   IBV_ACCESS_LOCAL_WRITE |
				   IBV_ACCESS_REMOTE_READ |
				   IBV_ACCESS_REMOTE_WRITE);
		err = c->mr ? 0 : -errno;
		if (!err)
			err = post_recv(c);
		if (!err)
			err = conn_param(c->id, &cp);
		if (!err)
			err = rdma_accept(c->id, &cp) ? -errno : 0;
		if (!err)
			return 0;
		fprintf(stderr, "%s: a connection not accepted (%s): "
			"waiting for another\n", probe_prog, strerror(-err));
		conn_close(c);
		c->rx = rx;
	} while (now_ns() < end);
	return -ETIMEDOUT;
}

int probe_verbs_server(const struct probe_opts *o)
{
	const uint64_t ctl = PB_REGION;	/* control buffers after it */
	struct rdma_addrinfo hints = { .ai_flags = RAI_PASSIVE,
				       .ai_port_space = RDMA_PS_TCP }, *res;
	struct rdma_cm_id *lid = NULL;
	struct ibv_qp_init_attr qa;
	struct vrig g = { .tmo_ms = o->timeout_ms };
	struct pb_observer ob = { .watch = PW_FLAG_DATA };
	pthread_t th;
	int err, k, running = 0;
	char port[16];
	struct pb_ctl m;

	snprintf(port, sizeof(port), "%u", o->port);
	g.mem_len = PB_REGION + 4096;
	g.mem = aligned_alloc(4096, g.mem_len);
	if (!g.mem)
		return -ENOMEM;
	memset(g.mem, 0, g.mem_len);
	ob.base = (volatile uint64_t *)g.mem;
	qp_attr(&qa);
	err = rdma_getaddrinfo(o->bind, port, &hints, &res) ? -errno : 0;
	if (!err) {
		err = rdma_create_ep(&lid, res, NULL, &qa) ? -errno : 0;
		rdma_freeaddrinfo(res);
	}
	if (!err)
		err = rdma_listen(lid, 4) ? -errno : 0;
	if (err) {
		fprintf(stderr, "%s: listen on %s:%s: %s%s\n", probe_prog,
			o->bind ? o->bind : "*", port, strerror(-err),
			err == -ENODEV || err == -EADDRNOTAVAIL ? " (no RDMA "
			"device has that address: --bind one of an RDMA "
			"device's)" : "");
		goto out;
	}
	printf("# oms_probe server on %s:%s\n", o->bind ? o->bind : "*",
	       port);
	fflush(stdout);
	/* the client's two connections, within ten minutes (a client
	 * host busy with other tests starts late) */
	for (k = 0; k < 2 && !err; k++) {
		g.c[k].rx = ctl + 64 + 64 * (uint64_t)k;
		err = accept_one(&g, lid, &g.c[k], 600000);
	}
	for (k = 0; k < 2 && !err; k++) {
		m = (struct pb_ctl){ .magic = PB_MAGIC, .type = CT_HELLO,
				     .addr = (uintptr_t)g.mem,
				     .rkey = g.c[k].mr->rkey,
				     .len = PB_REGION };
		err = ctl_send(&g, &g.c[k], ctl, &m);
	}
	while (!err) {
		/* the client paces the probe, and its own probes (READs,
		 * costs) may take minutes on a loaded guest: ten of them
		 * without a word and it is gone */
		err = ctl_recv(&g, &g.c[0], 0, 600000, &m);
		if (err || m.type == CT_BYE)
			break;
		if (m.type == CT_START && !running &&
		    (m.watch == PW_FLAG_DATA || m.watch == PW_LAST_FIRST)) {
			memset(g.mem, 0, PB_REGION);
			ob.watch = m.watch;
			ob.stop = 0;
			ob.checks = ob.violations = 0;
			err = pthread_create(&th, NULL, pb_observe, &ob) ?
			      -EAGAIN : 0;
			running = !err;
			m.type = CT_READY;
		} else if (m.type == CT_STOP && running) {
			ob.stop = 1;
			pthread_join(th, NULL);
			running = 0;
			m.type = CT_RESULT;
			m.checks = ob.checks;
			m.violations = ob.violations;
		} else {
			fprintf(stderr, "%s: unexpected control %u\n",
				probe_prog, m.type);
			err = -EPROTO;
			break;
		}
		err = ctl_send(&g, &g.c[0], ctl, &m);
	}
	if (running) {
		ob.stop = 1;
		pthread_join(th, NULL);
	}
	if (err)
		fprintf(stderr, "%s: server: %s\n", probe_prog, strerror(-err));
out:
	conn_close(&g.c[1]);
	conn_close(&g.c[0]);
	if (lid)
		rdma_destroy_ep(lid);
	free(g.mem);
	return err;
}

/* ------------------------------------------------------------------ */
/* Client                                                             */
/* ------------------------------------------------------------------ */

static int connect_one(struct vrig *g, const struct probe_opts *o,
		       struct conn *c, unsigned k)
{
	struct rdma_addrinfo hints = { .ai_port_space = RDMA_PS_TCP }, *res;
	uint64_t end = now_ns() + (uint64_t)o->timeout_ms * 1000000u;
	struct ibv_qp_init_attr qa;
	struct rdma_conn_param cp;
	char port[16];
	int err;

	snprintf(port, sizeof(port), "%u", o->port);
	qp_attr(&qa);
	for (;;) {
		err = rdma_getaddrinfo(o->host, port, &hints, &res) ?
		      -errno : 0;
		if (err)
			return err;
		err = rdma_create_ep(&c->id, res, NULL, &qa) ? -errno : 0;
		rdma_freeaddrinfo(res);
		if (!err) {
			c->mr = ibv_reg_mr(c->id->pd, g->mem, g->mem_len,
					   IBV_ACCESS_LOCAL_WRITE);
			err = c->mr ? 0 : -errno;
		}
		c->rx = LOC_CTL_RX + 64 * (uint64_t)k;
		if (!err)
			err = post_recv(c);
		if (!err)
			conn_param(c->id, &cp);
		if (!err)
			err = rdma_connect(c->id, &cp) ? -errno : 0;
		if (!err)
			return 0;
		conn_close(c);
		/* the server may not listen yet: try again until the end */
		if (now_ns() > end)
			return err;
		usleep(500000);
	}
}

static int ask(struct vrig *g, uint32_t type, uint32_t watch,
	       struct pb_ctl *reply)
{
	struct pb_ctl m = { .magic = PB_MAGIC, .type = type, .watch = watch };
	int err = ctl_send(g, &g->c[0], LOC_CTL, &m);

	if (!err && type != CT_BYE)
		err = ctl_recv(g, &g->c[0],
			       type == CT_START ? CT_READY : CT_RESULT,
			       g->tmo_ms, reply);
	return err;
}

static void stamp(uint8_t *buf, size_t len, uint64_t v)
{
	uint64_t *w = (uint64_t *)buf;
	size_t i;

	for (i = 0; i < len / 8; i++)
		w[i] = v;
}

static int write_probe(void *rig, const struct probe_opts *o, int arg,
		       struct probe_result *res)
{
	struct vrig *g = rig;
	enum wpat p = arg;
	struct conn *c0 = &g->c[0];
	struct conn *cf = p == WP_WRITE_WRITE ? &g->c[0] : &g->c[1];
	struct pb_ctl m = { 0 };
	uint64_t r;
	int err = ask(g, CT_START, p == WP_WITHIN ? PW_LAST_FIRST :
		      PW_FLAG_DATA, &m);

	for (r = 1; r <= o->rounds && !err; r++) {
		uint64_t s = LOC_SRC + (r % SLOTS) * SLOT_LEN;
		int sig = r % SIG_EVERY == 0 || r == o->rounds;

		if (p == WP_WITHIN) {
			stamp(g->mem + s, PB_WIN_LEN, r);
			err = post(c0, IBV_WR_RDMA_WRITE, s, PB_WIN_LEN,
				   PB_WIN_OFF, sig ? IBV_SEND_SIGNALED : 0);
			if (!err && sig)
				err = cq_wait(c0->id->send_cq, 1, g->tmo_ms, 0);
			continue;
		}
		stamp(g->mem + s, 72, r);
		err = post(c0, IBV_WR_RDMA_WRITE, s, 64, PB_DATA_OFF,
			   p == WP_COMPLETION ? IBV_SEND_SIGNALED : 0);
		if (!err && p == WP_COMPLETION)
			err = cq_wait(c0->id->send_cq, 1, g->tmo_ms, 0);
		if (!err)
			err = post(cf, IBV_WR_RDMA_WRITE, s + 64, 8,
				   PB_FLAG_OFF, sig ? IBV_SEND_SIGNALED : 0);
		if (!err && sig)
			err = cq_wait(cf->id->send_cq, 1, g->tmo_ms, 0);
		/* retire QP 0's unsignaled data WRITEs too */
		if (!err && sig && cf != c0 && p != WP_COMPLETION)
			err = post(c0, IBV_WR_RDMA_WRITE, s, 8, PB_X_OFF,
				   IBV_SEND_SIGNALED) ?:
			      cq_wait(c0->id->send_cq, 1, g->tmo_ms, 0);
	}
	if (!err)
		err = ask(g, CT_STOP, 0, &m);
	res->rounds = r - 1;
	res->checks = m.checks;
	res->violations = m.violations;
	res->measured = !err;
	return err;
}

static int read_probe(void *rig, const struct probe_opts *o, int arg,
		      struct probe_result *res)
{
	struct vrig *g = rig;
	int two = arg;
	struct conn *c = &g->c[0];
	volatile uint64_t *a = (volatile uint64_t *)(g->mem + LOC_LAND);
	volatile uint64_t *b = (volatile uint64_t *)(g->mem + LOC_LAND +
						     PB_BIG_LEN);
	const unsigned last = PB_BIG_LEN / 8 - 1;
	uint64_t r, end;
	struct ibv_wc wc;
	int err, k;

	/* the block every READ fetches: not zero anywhere */
	memset(g->mem + LOC_LAND, 0xa5, PB_BIG_LEN);
	err = post(c, IBV_WR_RDMA_WRITE, LOC_LAND, PB_BIG_LEN, PB_BIG_OFF,
		   IBV_SEND_SIGNALED) ?: cq_wait(c->id->send_cq, 1, g->tmo_ms, 0);
	for (r = 1; r <= o->rounds && !err; r++) {
		int seen = 0;

		memset(g->mem + LOC_LAND, 0, 2 * PB_BIG_LEN);
		err = post(c, IBV_WR_RDMA_READ, LOC_LAND, PB_BIG_LEN,
			   PB_BIG_OFF, two ? 0 : IBV_SEND_SIGNALED);
		if (!err && two)
			err = post(c, IBV_WR_RDMA_READ, LOC_LAND + PB_BIG_LEN,
				   64, PB_BIG_OFF, IBV_SEND_SIGNALED);
		end = now_ns() + (uint64_t)g->tmo_ms * 1000000u;
		for (k = 0; !err && !k;) {
			if (!seen && (two ? b[0] : a[last])) {
				__atomic_thread_fence(__ATOMIC_ACQUIRE);
				seen = 1;
				res->checks++;
				res->violations += two ? !a[last] : !a[0];
			}
			k = ibv_poll_cq(c->id->send_cq, 1, &wc);
			if (k < 0 || (k && wc.status != IBV_WC_SUCCESS))
				err = -EIO;
			else if (!k && now_ns() > end)
				err = -ETIMEDOUT;
		}
	}
	res->rounds = r - 1;
	res->measured = !err;
	return err;
}

static int war_probe(void *rig, const struct probe_opts *o, int arg,
		     struct probe_result *res)
{
	struct vrig *g = rig;
	int fence = arg;
	struct conn *c = &g->c[0];
	uint64_t *got = (uint64_t *)(g->mem + LOC_LAND), r, k;
	int err;

	*(uint64_t *)(g->mem + LOC_SRC) = 0;
	err = post(c, IBV_WR_RDMA_WRITE, LOC_SRC, 8, PB_X_OFF,
		   IBV_SEND_SIGNALED) ?: cq_wait(c->id->send_cq, 1, g->tmo_ms, 0);
	for (r = 1; r <= o->rounds && !err; r += SIG_EVERY) {
		for (k = 0; k < SIG_EVERY && !err; k++) {
			uint64_t s = LOC_SRC + k * 8;

			*(uint64_t *)(g->mem + s) = r + k;
			got[k] = ~0ull;
			err = post(c, IBV_WR_RDMA_READ, LOC_LAND + k * 8, 8,
				   PB_X_OFF, 0);
			if (!err)
				err = post(c, IBV_WR_RDMA_WRITE, s, 8, PB_X_OFF,
					   (fence ? IBV_SEND_FENCE : 0) |
					   (k == SIG_EVERY - 1 ?
					    IBV_SEND_SIGNALED : 0));
		}
		if (!err)
			err = cq_wait(c->id->send_cq, 1, g->tmo_ms, 0);
		if (!err)
			probe_war_count(res, got, SIG_EVERY, r);
	}
	res->measured = !err;
	return err;
}

/*
 * Wait for the one signaled WR of a round on @c.  Soft-RoCE can lose the
 * wakeup of a fenced WR (the requester finds a READ outstanding and waits,
 * the completer finishes it before the requester said so, and nothing
 * runs the requester again: lib/verbs/initiator/poll.c's kick_if_still
 * does the same): after 200 ms with nothing, a signaled 0-byte WRITE rings
 * the QP again, and its completion is waited for too.  It touches no memory.
 */
static int cq_wait_kicked(struct conn *c, uint32_t tmo_ms)
{
	uint64_t end = now_ns() + (uint64_t)tmo_ms * 1000000u;
	unsigned want = 1;

	while (want) {
		int err = cq_wait(c->id->send_cq, 1, 200, 0);

		if (!err) {
			want--;
			continue;
		}
		if (err != -ETIMEDOUT || now_ns() > end)
			return err;
		err = post(c, IBV_WR_RDMA_WRITE, LOC_SRC, 0, PB_X_OFF,
			   IBV_SEND_SIGNALED);
		if (err)
			return err;
		want++;
	}
	return 0;
}

static int cost_probe(void *rig, const struct probe_opts *o, int arg,
		      struct probe_result *res)
{
	struct vrig *g = rig;
	enum cpat p = arg;
	struct conn *c = &g->c[0];
	uint64_t *t = calloc(o->cost_rounds, sizeof(*t));
	unsigned i;
	int err = t ? 0 : -ENOMEM;

	for (i = 0; i < o->cost_rounds && !err; i++) {
		uint64_t t0 = now_ns();

		switch (p) {
		case CP_WRITE:
			err = post(c, IBV_WR_RDMA_WRITE, LOC_SRC, 8, PB_X_OFF,
				   IBV_SEND_SIGNALED);
			break;
		case CP_READ:
			err = post(c, IBV_WR_RDMA_READ, LOC_LAND, 8, PB_X_OFF,
				   IBV_SEND_SIGNALED);
			break;
		case CP_WRITE_FLUSH:
			err = post(c, IBV_WR_RDMA_WRITE, LOC_SRC, 8, PB_X_OFF,
				   0) ?:
			      post(c, IBV_WR_RDMA_READ, LOC_LAND, 8, PB_X_OFF,
				   IBV_SEND_SIGNALED);
			break;
		case CP_READ_WRITE:
		case CP_FENCE:
			err = post(c, IBV_WR_RDMA_READ, LOC_LAND, 8, PB_X_OFF,
				   0) ?:
			      post(c, IBV_WR_RDMA_WRITE, LOC_SRC, 8, PB_X_OFF,
				   IBV_SEND_SIGNALED |
				   (p == CP_FENCE ? IBV_SEND_FENCE : 0));
			break;
		}
		if (!err)
			err = cq_wait_kicked(c, g->tmo_ms);
		t[i] = now_ns() - t0;
	}
	return probe_cost_done(res, t, o->cost_rounds, err);
}

/*
 * PCIe Device Control's "Enable Relaxed Ordering" of the device's PCI
 * function, from sysfs config space (past 64 bytes: root only).
 */
static void pci_relaxed(const char *ibdev, struct probe_result *r)
{
	uint8_t cfg[256];
	char path[256];
	unsigned pos, guard = 0;
	ssize_t n;
	int fd;

	snprintf(path, sizeof(path), "/sys/class/infiniband/%s/device/config",
		 ibdev);
	fd = open(path, O_RDONLY);
	if (fd < 0) {
		snprintf(r->note, sizeof(r->note), "no PCI function (a "
			 "software device such as rxe has none)");
		return;
	}
	n = pread(fd, cfg, sizeof(cfg), 0);
	close(fd);
	if (n < (ssize_t)sizeof(cfg)) {
		snprintf(r->note, sizeof(r->note), "PCI config past 64 bytes "
			 "needs root");
		return;
	}
	for (pos = cfg[0x34] & ~3u; pos && pos < 0xff && guard++ < 48;
	     pos = cfg[pos + 1] & ~3u) {
		if (cfg[pos] == 0x10 && pos + 9 < sizeof(cfg)) {
			unsigned ctl = cfg[pos + 8] | cfg[pos + 9] << 8;

			snprintf(r->value, sizeof(r->value), "%s",
				 ctl & 0x10 ? "enabled" : "disabled");
			r->measured = 1;
			return;
		}
	}
	snprintf(r->note, sizeof(r->note), "no PCI Express capability");
}

/* The driver's claim that @op's data is placed in order. */
static void in_order_row(struct vrig *g, struct probe_report *rep,
			 enum ibv_wr_opcode op, const char *name,
			 const char *id, const char *pat)
{
	struct probe_result *r = probe_add(rep, "verbs", name, id, pat,
					   PR_INFO);

	if (!r)
		return;
	snprintf(r->value, sizeof(r->value), "%s",
		 ibv_query_qp_data_in_order(g->c[0].id->qp, op, 0) > 0 ?
		 "yes" : "no");
	snprintf(r->note, sizeof(r->note), "the driver's claim, not a "
		 "measurement");
	r->measured = 1;
}

static void caps_rows(struct vrig *g, struct probe_report *rep)
{
	struct ibv_context *v = g->c[0].id->verbs;
	const char *name = ibv_get_device_name(v->device);
	struct ibv_port_attr pa;
	struct probe_result *r;
	struct ibv_mr *mr;
	int k;

	r = probe_add(rep, "verbs", "device", "", "ibv_get_device_name, "
		      "ibv_query_port", PR_INFO);
	if (r) {
		k = ibv_query_port(v, g->c[0].id->port_num, &pa);
		snprintf(r->value, sizeof(r->value), "%s port %u, %s", name,
			 g->c[0].id->port_num, k ? "?" :
			 pa.link_layer == IBV_LINK_LAYER_ETHERNET ?
			 "Ethernet (RoCE)" : "InfiniBand");
		r->measured = 1;
	}
	in_order_row(g, rep, IBV_WR_RDMA_READ, "read_data_in_order", "L30",
		     "ibv_query_qp_data_in_order(RDMA_READ)");
	in_order_row(g, rep, IBV_WR_RDMA_WRITE, "write_data_in_order", "L05",
		     "ibv_query_qp_data_in_order(RDMA_WRITE)");
	r = probe_add(rep, "verbs", "relaxed_ordering_mr", "",
		      "ibv_reg_mr(IBV_ACCESS_RELAXED_ORDERING)", PR_INFO);
	if (r) {
		mr = ibv_reg_mr(g->c[0].id->pd, g->mem, 4096,
				IBV_ACCESS_LOCAL_WRITE |
				IBV_ACCESS_REMOTE_WRITE |
				IBV_ACCESS_RELAXED_ORDERING);
		snprintf(r->value, sizeof(r->value), "%s",
			 mr ? "accepted" : "refused");
		snprintf(r->note, sizeof(r->note), "an optional flag: a "
			 "provider may accept it and ignore it");
		if (mr)
			ibv_dereg_mr(mr);
		r->measured = 1;
	}
	r = probe_add(rep, "verbs", "pci_relaxed_ordering", "",
		      "PCIe Device Control, Enable Relaxed Ordering", PR_INFO);
	if (r)
		pci_relaxed(name, r);
	r = probe_add(rep, "verbs", "bf_offset_reuse", "L04",
		      "BlueFlame register offset reuse (mlx5)", PR_INFO);
	if (r)
		snprintf(r->note, sizeof(r->note), "%s", strncmp(name, "mlx5",
			 4) ? "not an mlx5 device: no BlueFlame register" :
			 "not probed here: bench/mmio_tx --window mlx5 "
			 "measures the BlueFlame path");
}

static const struct probe_def verbs_probes[] = {
	{ "write_write", "L05", "WRITE(data) WRITE(flag), one QP",
	  PR_ALLOWED, PK_WRITE, WP_WRITE_WRITE },
	{ "write_within", "", "one 4 KiB WRITE: last word before first",
	  PR_ALLOWED, PK_WRITE, WP_WITHIN },
	{ "completion", "L15", "WRITE(data) completion, WRITE(flag) "
	  "on QP 1", PR_ALLOWED, PK_WRITE, WP_COMPLETION },
	{ "flag_other_qp", "L02", "WRITE(data) QP 0, WRITE(flag) QP 1,"
	  " no wait", PR_ALLOWED, PK_WRITE, WP_OTHER_QP },
	{ "read_within", "L30", "one 64 KiB READ: last line placed "
	  "before first", PR_ALLOWED, PK_READ, 0 },
	{ "read_read", "", "READ(64 KiB) READ(64 B): second placed "
	  "before the first", PR_ALLOWED, PK_READ, 1 },
	{ "war_nofence", "L33", "READ(X) WRITE(X=r): READ returns r",
	  PR_ALLOWED, PK_WAR, 0 },
	{ "war_fence", "L33", "READ(X) WRITE(X=r)|IBV_SEND_FENCE: READ "
	  "returns r", PR_REQUIRED, PK_WAR, 1 },
	{ "cost_write", "", "8 B WRITE, to completion", PR_INFO, PK_COST,
	  CP_WRITE },
	{ "cost_read", "", "8 B READ, to completion", PR_INFO, PK_COST,
	  CP_READ },
	{ "cost_write_flush", "L10", "8 B WRITE + 8 B READ (flush "
	  "read)", PR_INFO, PK_COST, CP_WRITE_FLUSH },
	{ "cost_read_write", "", "8 B READ + 8 B WRITE", PR_INFO, PK_COST,
	  CP_READ_WRITE },
	{ "cost_read_fence_write", "L33", "8 B READ + 8 B "
	  "WRITE|IBV_SEND_FENCE", PR_INFO, PK_COST, CP_FENCE },
};

/* The probes take their rig as void * through the table, and their
 * pattern as an int: the kind's own enum. */
static const struct probe_ops ops = { .run = {
	[PK_WRITE] = write_probe, [PK_READ] = read_probe,
	[PK_WAR] = war_probe, [PK_COST] = cost_probe,
} };

int probe_verbs_client(const struct probe_opts *o, struct probe_report *rep,
		       int *connected)
{
	struct vrig g = { .tmo_ms = o->timeout_ms, .mem_len = LOC_LEN };
	struct pb_ctl m;
	int err, k;

	*connected = 0;
	g.mem = aligned_alloc(4096, LOC_LEN);
	if (!g.mem)
		return -ENOMEM;
	memset(g.mem, 0, LOC_LEN);
	err = connect_one(&g, o, &g.c[0], 0);
	if (!err)
		err = connect_one(&g, o, &g.c[1], 1);
	for (k = 0; k < 2 && !err; k++) {
		err = ctl_recv(&g, &g.c[k], CT_HELLO, g.tmo_ms, &m);
		if (!err && m.len != PB_REGION)
			err = -EPROTO;
		g.c[k].raddr = m.addr;
		g.c[k].rkey = m.rkey;
	}
	*connected = !err;
	if (err)
		goto out;
	caps_rows(&g, rep);
	err = probe_run_all(rep, "verbs", verbs_probes,
			    sizeof(verbs_probes) / sizeof(verbs_probes[0]),
			    &ops, &g, o);
	/* goodbye, also after a failed probe: the server then stops at once
	 * instead of waiting for the next step (best effort) */
	k = ask(&g, CT_BYE, 0, &m);
	err = err ? err : k;
out:
	conn_close(&g.c[1]);
	conn_close(&g.c[0]);
	free(g.mem);
	return err;
}
