// SPDX-License-Identifier: MIT
/*
 * The "emu" backend: the operations table of lib/backend.h over the
 * emulated device.  Each context runs on the device its attributes name
 * (oms_ctx_attr.emu) or on the process's default one, and gets one queue
 * of it; memory regions are registered in the device's region table with
 * a key (seed 003).
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "backend.h"
#include "util/export.h"
#include "emu/emu.h"

static int emu_open(struct oms_ctx *ctx)
{
	const struct oms_ctx_attr *a = oms_be_view(ctx)->attr;
	struct emu_ctx *ec;
	struct oms_emu *dev;
	struct emu_queue *q;
	int err;

	/* the hold scope is a setting of the device (OMS_EMU_F_HOLD_GLOBAL),
	 * which a context does not choose for the one it shares */
	if (a->flags & OMS_CTX_F_HOLD_GLOBAL)
		return -EINVAL;
	ec = calloc(1, sizeof(*ec));
	if (!ec)
		return -ENOMEM;
	if (a->emu) {
		/* The device's settings are its own (oms_emu_create()). */
		dev = a->emu;
		emu_dev_hold(dev);
	} else {
		err = emu_dev_get(&dev);
		if (err)
			goto fail_free;
	}
	if (__atomic_load_n(&dev->gone, __ATOMIC_ACQUIRE) ||
	    __atomic_load_n(&dev->stop, __ATOMIC_ACQUIRE)) {
		err = -ENODEV;
		goto fail_put;
	}
	/* The no-ordering baseline: the device keeps no same-address
	 * order either, so its controls can show what ordering prevents. */
	err = emu_queue_open_flags(dev, a->node, oms_be_view(ctx)->qdepth,
				   a->flags & OMS_CTX_F_NO_ORDERING ?
				   EMU_Q_UNORDERED : 0, &q);
	if (err)
		goto fail_put;
	ec->dev = dev;
	ec->q = q;
	oms_be_view(ctx)->cpu_charge = dev->cfg.charge_cpu;
	oms_be_view(ctx)->priv = ec;
	return 0;
fail_put:
	emu_dev_put(dev);
fail_free:
	free(ec);
	return err;
}

static void emu_close(struct oms_ctx *ctx)
{
	struct emu_ctx *ec = EC(ctx);
	struct oms_emu *dev = ec->dev;

	emu_conn_leave(ctx);
	emu_queue_close(dev, ec->q);
	oms_be_view(ctx)->priv = NULL;
	free(ec);
	emu_dev_put(dev);
}

/* Under a latency model a command is stamped with the model time of the
 * thread that posts it (initiator.c). */
static int emu_post(struct oms_ctx *ctx, const struct oms_wr *wr)
{
	struct emu_ctx *ec = EC(ctx);

	return emu_q_post_at(ec->q, wr, ec->dev->cfg.time_scale ?
			     emu_initiator_stamp(ec->dev) : 0);
}

static int emu_wait(struct oms_ctx *ctx, const struct oms_be_wait *w)
{
	struct emu_ctx *ec = EC(ctx);

	if (!ec->dev->cfg.time_scale)
		return 0;
	if (w)
		return emu_initiator_wait(ec->dev, ec->q, w);
	emu_initiator_wait_end(ec->dev);
	return 0;
}

static uint64_t emu_time(struct oms_ctx *ctx)
{
	struct oms_emu *dev = EC(ctx)->dev;

	return dev->cfg.time_scale ? emu_initiator_time(dev) : emu_wall_ns();
}

static int emu_ring(struct oms_ctx *ctx, uint32_t n)
{
	struct emu_ctx *ec = EC(ctx);
	int err;

	oms_be_view(ctx)->doorbells++;
	err = emu_q_ring(ec->q, n);
	if (!err && ec->dev->cfg.time_scale)
		emu_kick(ec->dev);	/* it may sleep (kick.c) */
	return err;
}

static int emu_poll(struct oms_ctx *ctx, struct oms_wc *wc, int max,
		    uint64_t *src_done)
{
	int n = emu_q_poll(EC(ctx)->q, wc, max, src_done);

	if (n > 0)
		oms_be_view(ctx)->dev_completions += (uint64_t)n;
	return n;
}

static int emu_alive(struct oms_ctx *ctx, uint64_t *hb)
{
	struct oms_emu *dev = EC(ctx)->dev;

	*hb = __atomic_load_n(&dev->heartbeat, __ATOMIC_ACQUIRE);
	return __atomic_load_n(&dev->gone, __ATOMIC_ACQUIRE) ? -ENODEV : 0;
}

static int emu_mr_reg(struct oms_ctx *ctx, void *addr, size_t len,
		      uint32_t access, struct oms_rmr *rmr)
{
	struct oms_emu *dev = EC(ctx)->dev;
	const struct emu_region r = {
		.base = addr, .len = len, .node = oms_be_view(ctx)->attr->node,
		.access = access, .home = EMU_MAX_REGIONS,	/* itself */
	};
	int err;

	if (len > EMU_MAX_REGION)
		return -EOVERFLOW;
	if (emu_dev_gone(dev))
		return -ENODEV;
	pthread_mutex_lock(&dev->lock);
	err = emu_region_add(dev, &r, rmr);
	pthread_mutex_unlock(&dev->lock);
	return err;
}

static int emu_mr_dereg(struct oms_ctx *ctx, const struct oms_rmr *rmr)
{
	struct oms_emu *dev = EC(ctx)->dev;

	pthread_mutex_lock(&dev->lock);
	emu_region_del(dev, rmr);
	emu_invalidate(dev, rmr->region, 0, rmr->len);
	pthread_mutex_unlock(&dev->lock);
	return 0;
}

static int emu_mr_write(struct oms_ctx *ctx, const struct oms_rmr *rmr,
			uint64_t off, const void *src, size_t len)
{
	struct oms_emu *dev = EC(ctx)->dev;

	if (dev->cfg.time_scale)
		emu_initiator_host(dev);
	pthread_mutex_lock(&dev->lock);
	memcpy(dev->reg[rmr->region].base + off, src, len);
	emu_invalidate(dev, rmr->region, off, len);
	pthread_mutex_unlock(&dev->lock);
	return 0;
}

static int emu_mr_read(struct oms_ctx *ctx, const struct oms_rmr *rmr,
		       uint64_t off, void *dst, size_t len)
{
	struct oms_emu *dev = EC(ctx)->dev;

	if (dev->cfg.time_scale)
		emu_initiator_host(dev);
	pthread_mutex_lock(&dev->lock);
	memcpy(dst, dev->reg[rmr->region].base + off, len);
	pthread_mutex_unlock(&dev->lock);
	return 0;
}

static void emu_caps(struct oms_ctx *ctx, struct oms_caps *c)
{
	const struct emu_cfg *cfg = &EC(ctx)->dev->cfg;

	c->flags |= OMS_CAP_DEST_ORDER_EMULATED | OMS_CAP_ACQUIRE_READ |
		   OMS_CAP_STRONG_STORE | OMS_CAP_RESP_HOLD;
	if (cfg->chaos_seed)
		c->flags |= OMS_CAP_CHAOS;
	if (cfg->time_scale)
		c->flags |= OMS_CAP_LATENCY_MODEL;
	c->read_order = cfg->read_order;
	c->chaos_seed = cfg->chaos_seed;
	c->max_op_len = EMU_MAX_OP;
	snprintf(c->dest_ordering, sizeof(c->dest_ordering), "emulated");
	snprintf(c->backend_name, sizeof(c->backend_name), "emu");
}

/*
 * The region a descriptor's bytes belong to: a listener's window is its
 * home region's memory.  Without the device lock (it is on every op's
 * path): a slot's home is written atomically when the slot is
 * registered and reset to the slot when it is freed.  A stale
 * descriptor of a slot registered again since is refused by the device
 * whatever the orderer made of it (docs/ordering.md says what a refused
 * get does to a later write of the same bytes).
 */
static uint32_t emu_home_region(struct oms_ctx *ctx, uint32_t region)
{
	struct oms_emu *dev = EC(ctx)->dev;

	if (region >= EMU_MAX_REGIONS)
		return region;
	return __atomic_load_n(&dev->reg[region].home, __ATOMIC_RELAXED);
}

static uint64_t emu_key_drops(struct oms_ctx *ctx)
{
	struct oms_emu *dev = EC(ctx)->dev;
	uint64_t n;

	pthread_mutex_lock(&dev->lock);
	n = dev->kc.dropped;
	pthread_mutex_unlock(&dev->lock);
	return n;
}

const struct oms_backend_ops oms_emu_backend = {
	.name = "emu",
	.dest_order_hw = 0,
	.open = emu_open,
	.close = emu_close,
	.post = emu_post,
	.ring = emu_ring,
	.poll = emu_poll,
	.wait = emu_wait,
	.now = emu_time,
	.alive = emu_alive,
	.mr_reg = emu_mr_reg,
	.mr_dereg = emu_mr_dereg,
	.mr_write = emu_mr_write,
	.mr_read = emu_mr_read,
	.caps = emu_caps,
	.home_region = emu_home_region,
	.key_drops = emu_key_drops,
	.listen = emu_listen,
	.listener_close = emu_listener_close,
	.listener_peers = emu_listener_peers,
	.connect = emu_connect,
};
