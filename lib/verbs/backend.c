// SPDX-License-Identifier: MIT
/*
 * The "verbs" backend's operations table (lib/backend.h): RC QPs over any
 * RDMA device.  Memory regions are ibv_reg_mr registrations (rmr.key is
 * the rkey); host access to one's own region is a plain copy between the
 * barriers that order it against the device; the capability answer says
 * that acquire is ordered at the source and that the device has no
 * seed-002 responder hold.
 *
 * It stands above both sides, in lib/verbs/ itself and in neither
 * folder: the table's connect, post and poll are the initiator's
 * (initiator/), its listen and listener calls the listener's
 * (listener/), its open and close the device's (common/).  The two sides
 * meet here and nowhere else.  Closing a context destroys its
 * connections here, before the device goes, so that common/dev.c never
 * calls up into the initiator.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "verbs/common/verbs.h"
#include "verbs/initiator/initiator.h"
#include "verbs/listener/listener.h"
#include "util/barrier.h"

/* rdma-core is loaded here, not by the dynamic linker (rdma_lib.h). */
int oms_verbs_load(char *why, size_t whylen)
{
	return vb_rdma_load(why, whylen);
}

static int vb_open(struct oms_ctx *ctx)
{
	int err = vb_rdma_load(NULL, 0);

	return err ? err : vb_dev_open(ctx);
}

static void vb_close(struct oms_ctx *ctx)
{
	struct vb_ctx *vc = VC(ctx);

	for (int i = 0; i < VB_MAX_CONN; i++)
		if (vc->conn[i].used)
			vb_conn_destroy(vc, &vc->conn[i]);
	vb_dev_close(ctx);
}

static int vb_alive(struct oms_ctx *ctx, uint64_t *hb)
{
	struct vb_ctx *vc = VC(ctx);
	int busy = 0;

	vb_conn_events(vc);
	for (int i = 0; i < VB_MAX_CONN; i++)
		if (vc->conn[i].used && (vc->conn[i].head != vc->conn[i].tail ||
					 (vc->conn[i].car &&
					  vc->conn[i].car->held(&vc->conn[i]))))
			busy = 1;
	/* Idle is alive; busy is alive while completions come. */
	if (!busy)
		vc->idle_beat++;
	*hb = vc->progress + vc->idle_beat;
	return vc->gone;
}

static int access_flags(uint32_t access)
{
	int f = IBV_ACCESS_LOCAL_WRITE;	/* gets may land in any region */

	if (access & OMS_ACCESS_REMOTE_READ)
		f |= IBV_ACCESS_REMOTE_READ;
	if (access & OMS_ACCESS_REMOTE_WRITE)
		f |= IBV_ACCESS_REMOTE_WRITE;
	if (access & OMS_ACCESS_REMOTE_ATOMIC)
		f |= IBV_ACCESS_REMOTE_ATOMIC;
	return f;
}

static int vb_mr_reg(struct oms_ctx *ctx, void *addr, size_t len,
		     uint32_t access, struct oms_rmr *rmr)
{
	struct vb_ctx *vc = VC(ctx);

	for (int i = 0; i < VB_MAX_MR; i++) {
		struct vb_lmr *m = &vc->lmr[i];

		if (m->used)
			continue;
		m->mr = ibv_reg_mr(vc->pd, addr, len, access_flags(access));
		if (!m->mr)
			return vb_errno(-ENOMEM);
		m->addr = addr;
		m->len = len;
		m->used = 1;
		rmr->dest = oms_be_view(ctx)->attr->node;
		rmr->region = (uint32_t)i;
		rmr->key = m->mr->rkey;
		rmr->access = access;
		rmr->len = len;
		return 0;
	}
	return -ENOSPC;
}

static struct vb_lmr *lmr_of(struct oms_ctx *ctx, const struct oms_rmr *rmr)
{
	struct vb_lmr *m = rmr->region < VB_MAX_MR ?
			   &VC(ctx)->lmr[rmr->region] : NULL;

	return m && m->used ? m : NULL;
}

static int vb_mr_dereg(struct oms_ctx *ctx, const struct oms_rmr *rmr)
{
	struct vb_lmr *m = lmr_of(ctx, rmr);
	int ret;

	if (!m)
		return -EINVAL;
	ret = ibv_dereg_mr(m->mr);
	m->used = 0;
	m->mr = NULL;
	return ret > 0 ? -ret : ret;
}

/* The CPU is the host: copy, ordered against the NIC's accesses. */
static int vb_mr_write(struct oms_ctx *ctx, const struct oms_rmr *rmr,
		       uint64_t off, const void *src, size_t len)
{
	struct vb_lmr *m = lmr_of(ctx, rmr);

	if (!m)
		return -EINVAL;
	oms_barrier_to_device();	/* earlier host stores first */
	memcpy(m->addr + off, src, len);
	oms_barrier_to_device();	/* before any later one */
	return 0;
}

static int vb_mr_read(struct oms_ctx *ctx, const struct oms_rmr *rmr,
		      uint64_t off, void *dst, size_t len)
{
	struct vb_lmr *m = lmr_of(ctx, rmr);

	if (!m)
		return -EINVAL;
	oms_barrier_from_device();
	memcpy(dst, m->addr + off, len);
	oms_barrier_from_device();
	return 0;
}

static void vb_caps(struct oms_ctx *ctx, struct oms_caps *c)
{
	struct vb_ctx *vc = VC(ctx);
	int conns = 0, agents = 0;

	for (int i = 0; i < VB_MAX_CONN; i++) {
		const struct vb_conn *k = &vc->conn[i];

		if (!k->used || k->err || !k->car)
			continue;
		conns++;
		agents += !!(k->car->dest_caps(k) & OMS_CAP_DEST_ORDER_AGENT);
	}
	c->flags |= OMS_CAP_ACQUIRE_READ | OMS_CAP_STRONG_STORE;
	/* per connection: its listener's agent orders acquire reads, or
	 * the initiator does, one fenced READ per line */
	if (agents)
		c->flags |= OMS_CAP_DEST_ORDER_AGENT | OMS_CAP_RESP_HOLD;
	if (!conns || agents < conns)
		c->flags |= OMS_CAP_ACQUIRE_AT_SOURCE;
	c->read_order = OMS_ORDER_NIC;	/* one line per round trip */
	c->max_op_len = OMS_MAX_OP_LEN;
	c->numa_node = vc->numa_node;
	snprintf(c->dest_ordering, sizeof(c->dest_ordering), "%s",
		 conns && agents == conns ? "agent" : "source");
	snprintf(c->backend_name, sizeof(c->backend_name), "verbs");
	snprintf(c->device, sizeof(c->device), "%s", vc->dev_name);
}

/* Per destination, its carrier's answer: its listener's agent holds
 * class-2 answers and orders acquire reads, or nobody holds and the
 * initiator orders. */
static uint32_t vb_dest_caps(struct oms_ctx *ctx, uint32_t dest)
{
	const struct vb_conn *k = dest < VB_MAX_CONN ? &VC(ctx)->conn[dest] :
				  NULL;

	if (k && k->used && k->car)
		return k->car->dest_caps(k);
	return OMS_CAP_ACQUIRE_READ | OMS_CAP_STRONG_STORE |
	       OMS_CAP_ACQUIRE_AT_SOURCE;
}

/* The longest put to @dest: its carrier's. */
static uint64_t vb_dest_max_put(struct oms_ctx *ctx, uint32_t dest)
{
	const struct vb_conn *k = dest < VB_MAX_CONN ? &VC(ctx)->conn[dest] :
				  NULL;

	if (k && k->used && k->car)
		return k->car->max_put(k);
	return OMS_MAX_OP_LEN;
}

static uint64_t vb_key_drops(struct oms_ctx *ctx)
{
	(void)ctx;
	return 0;	/* the responder's NIC counts them, not visible here */
}

const struct oms_backend_ops oms_verbs_backend = {
	.name = "verbs",
	.dest_order_hw = 0,
	.posted = 1,
	.open = vb_open,
	.close = vb_close,
	.post = vb_post,
	.ring = vb_ring,
	.poll = vb_poll,
	.alive = vb_alive,
	.mr_reg = vb_mr_reg,
	.mr_dereg = vb_mr_dereg,
	.mr_write = vb_mr_write,
	.mr_read = vb_mr_read,
	.caps = vb_caps,
	.dest_caps = vb_dest_caps,
	.dest_max_put = vb_dest_max_put,
	.key_drops = vb_key_drops,
	.listen = vb_listen,
	.listener_close = vb_listener_close,
	.listener_peers = vb_listener_peers,
	.connect = vb_connect,
};
