// SPDX-License-Identifier: MIT
/*
 * Contexts: creation (attribute parsing, backend choice), progress, the
 * liveness watch, and the death path.  A context owns the engine state
 * that gives the public calls their meaning whatever the backend: a store
 * orderer (one acked channel per destination; store classes and fences,
 * seed 000/001) and an op counter (local fence and quiet, seed 003).
 * Progress reaps completions, turns them into the orderer's cumulative
 * acks, releases held stores and rings the doorbell; the caller never
 * blocks on a strong store.  If the device stops or stops answering, every
 * pending operation fails with -ENODEV or -ETIMEDOUT: nothing hangs.
 */
#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <sched.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "oms_priv.h"
#include "util/ext_struct.h"

#define ACK_WORDS (OMS_ACK_WINDOW / 64)

static void attr_defaults(struct oms_ctx_attr *a)
{
	memset(a, 0, sizeof(*a));
	a->size = sizeof(*a);
	a->backend = OMS_BACKEND_AUTO;
	a->queue_depth = 1024;
	a->lat_bus_ns = 200;
	a->lat_rc_ns = 17;
	a->lat_mem_ns = 50;
	a->link_gbps = 100;
	a->read_order = OMS_ORDER_RC_OPT;
	a->rlsq_entries = 256;
	a->timeout_ms = 2000;
}

static int in_size(const struct oms_ctx_attr *in, size_t end)
{
	return in->size >= end;
}

#define HAS(in, m, field) \
	(((in)->comp_mask & (m)) && \
	 in_size(in, offsetof(struct oms_ctx_attr, field) + sizeof((in)->field)))

/* Copy the caller's attributes over the defaults; -EINVAL/-E2BIG. */
static int attr_parse(const struct oms_ctx_attr *in, struct oms_ctx_attr *a)
{
	struct oms_ctx_attr t;
	int err;

	attr_defaults(a);
	if (!in)
		return 0;
	err = oms_ext_copy(&t, sizeof(t), in,
			   offsetof(struct oms_ctx_attr, backend));
	if (err)
		return err;
	if (t.comp_mask & ~OMS_CTX_ATTR_ALL)
		return -EINVAL;
	if (t.comp_mask & OMS_CTX_ATTR_BACKEND) {
		if (!HAS(in, OMS_CTX_ATTR_BACKEND, backend) ||
		    t.backend > OMS_BACKEND_VERBS)
			return -EINVAL;
		a->backend = t.backend;
	}
	if (t.comp_mask & OMS_CTX_ATTR_NODE) {
		if (!HAS(in, OMS_CTX_ATTR_NODE, node) || t.node >= OMS_MAX_NODES)
			return -EINVAL;
		a->node = t.node;
	}
	if (t.comp_mask & OMS_CTX_ATTR_QDEPTH) {
		if (!HAS(in, OMS_CTX_ATTR_QDEPTH, queue_depth) ||
		    t.queue_depth < 8 || t.queue_depth > 4096 ||
		    (t.queue_depth & (t.queue_depth - 1)))
			return -EINVAL;
		a->queue_depth = t.queue_depth;
	}
	if (t.comp_mask & OMS_CTX_ATTR_FLAGS) {
		if (!HAS(in, OMS_CTX_ATTR_FLAGS, flags) ||
		    (t.flags & ~OMS_CTX_F_ALL))
			return -EINVAL;
		a->flags = t.flags;
	}
	if (t.comp_mask & OMS_CTX_ATTR_EMU_CHAOS) {
		if (!HAS(in, OMS_CTX_ATTR_EMU_CHAOS, chaos_seed))
			return -EINVAL;
		a->chaos_seed = t.chaos_seed;
	}
	if (t.comp_mask & OMS_CTX_ATTR_EMU_LATENCY) {
		if (!HAS(in, OMS_CTX_ATTR_EMU_LATENCY, time_scale) ||
		    t.link_gbps == 0 || t.link_gbps > 10000 ||
		    t.lat_bus_ns > 1000000 || t.lat_rc_ns > 1000000 ||
		    t.lat_mem_ns > 1000000 || t.time_scale > 1000000)
			return -EINVAL;
		a->lat_bus_ns = t.lat_bus_ns;
		a->lat_rc_ns = t.lat_rc_ns;
		a->lat_mem_ns = t.lat_mem_ns;
		a->link_gbps = t.link_gbps;
		a->time_scale = t.time_scale;
	}
	if (t.comp_mask & OMS_CTX_ATTR_READ_ORDER) {
		if (!HAS(in, OMS_CTX_ATTR_READ_ORDER, rlsq_entries) ||
		    t.read_order > OMS_ORDER_NIC || t.rlsq_entries == 0 ||
		    t.rlsq_entries > 4096)
			return -EINVAL;
		a->read_order = t.read_order;
		a->rlsq_entries = t.rlsq_entries;
	}
	if (t.comp_mask & OMS_CTX_ATTR_TIMEOUT) {
		if (!HAS(in, OMS_CTX_ATTR_TIMEOUT, timeout_ms) ||
		    t.timeout_ms == 0 || t.timeout_ms > 600000)
			return -EINVAL;
		a->timeout_ms = t.timeout_ms;
	}
	if (t.comp_mask & OMS_CTX_ATTR_DEST_SEQ) {
		if (!HAS(in, OMS_CTX_ATTR_DEST_SEQ, reserved) || t.reserved ||
		    (OMS_MAX_NODES < 32 && (t.dest_seq_mask >> OMS_MAX_NODES)))
			return -EINVAL;
		a->dest_seq_mask = t.dest_seq_mask;
	}
	if (t.comp_mask & OMS_CTX_ATTR_EMU_NIC_RATE) {
		if (!HAS(in, OMS_CTX_ATTR_EMU_NIC_RATE, reserved2) ||
		    t.reserved2 || t.lat_req_ns > 1000000)
			return -EINVAL;
		a->lat_req_ns = t.lat_req_ns;
	}
	if (t.comp_mask & OMS_CTX_ATTR_EMU) {
		/* The device's settings belong to the device object. */
		if (!HAS(in, OMS_CTX_ATTR_EMU, emu) || !t.emu ||
		    (t.comp_mask & (OMS_CTX_ATTR_EMU_CHAOS |
				    OMS_CTX_ATTR_EMU_LATENCY |
				    OMS_CTX_ATTR_READ_ORDER |
				    OMS_CTX_ATTR_EMU_NIC_RATE)) ||
		    (a->flags & (OMS_CTX_F_NO_HOLD | OMS_CTX_F_HOLD_GLOBAL)) ||
		    a->backend == OMS_BACKEND_VERBS)
			return -EINVAL;
		a->emu = t.emu;
		a->backend = OMS_BACKEND_EMU;
	}
	if (a->flags & OMS_CTX_F_DEST_SEQ)
		a->dest_seq_mask = (1u << OMS_MAX_NODES) - 1;
	if (a->dest_seq_mask) {
		if (a->queue_depth > OMS_SEQ_QDEPTH &&
		    (t.comp_mask & OMS_CTX_ATTR_QDEPTH))
			return -EINVAL;
		if (a->queue_depth > OMS_SEQ_QDEPTH)
			a->queue_depth = OMS_SEQ_QDEPTH;
	}
	a->comp_mask = t.comp_mask;
	return 0;
}

/* The first RDMA device /sys/class/infiniband lists, into @name; 0 if
 * there is none. */
static int rdma_device_present(char *name, size_t len)
{
	DIR *d = opendir("/sys/class/infiniband");
	struct dirent *e;
	int found = 0;

	if (!d)
		return 0;
	while (!found && (e = readdir(d))) {
		found = e->d_name[0] != '.';
		if (found)
			snprintf(name, len, "%.63s", e->d_name);
	}
	closedir(d);
	return found;
}

/*
 * Backend: attr, else OMS_BACKEND ("emu", "verbs"), else verbs when an RDMA
 * device is present and rdma-core can be loaded, else emu; @why says which
 * rule decided (oms_caps.backend_why).  Verbs asked for without rdma-core
 * is -ELIBACC; without a device, -ENODEV (from its open).  What verbs
 * cannot do is refused here: destination sequence numbers need a reorder
 * buffer at the destination (-EOPNOTSUPP).
 */
static int pick_backend(struct oms_ctx_attr *a, const struct oms_backend_ops **be,
			char *why, size_t whylen)
{
	const char *env = getenv("OMS_BACKEND");
	char dev[64], err_why[192];

	if (a->emu) {
		snprintf(why, whylen, "an emulated device named in oms_ctx_attr.emu");
	} else if (a->backend != OMS_BACKEND_AUTO) {
		snprintf(why, whylen, "asked for in oms_ctx_attr.backend");
	} else if (env && *env) {
		if (!strcmp(env, "emu"))
			a->backend = OMS_BACKEND_EMU;
		else if (!strcmp(env, "verbs"))
			a->backend = OMS_BACKEND_VERBS;
		else
			return -EINVAL;
		snprintf(why, whylen, "OMS_BACKEND=%.32s", env);
	} else if (!rdma_device_present(dev, sizeof(dev))) {
		a->backend = OMS_BACKEND_EMU;
		snprintf(why, whylen, "no RDMA device in /sys/class/infiniband");
	} else if (oms_verbs_load(err_why, sizeof(err_why))) {
		a->backend = OMS_BACKEND_EMU;
		snprintf(why, whylen, "RDMA device %.31s, but rdma-core is not loadable: %.80s",
			 dev, err_why);
	} else {
		a->backend = OMS_BACKEND_VERBS;
		snprintf(why, whylen, "RDMA device %.63s present", dev);
	}
	if (a->backend == OMS_BACKEND_VERBS) {
		if (a->dest_seq_mask)
			return -EOPNOTSUPP;
		if (oms_verbs_load(NULL, 0))
			return -ELIBACC;
		*be = &oms_verbs_backend;
		return 0;
	}
	*be = &oms_emu_backend;
	return 0;
}

static void ctx_free(struct oms_ctx *ctx)
{
	oms_so_destroy(&ctx->so);
	free(ctx->ackbits);
	free(ctx->free);
	free(ctx->op);
	free(ctx);
}

OMS_EXPORT int oms_ctx_create(const struct oms_ctx_attr *attr,
			      struct oms_ctx **out)
{
	struct oms_so_chan_cfg cc[OMS_MAX_NODES];
	struct oms_ctx_attr a;
	char why[160] = "";
	const struct oms_backend_ops *be;
	struct oms_ctx *ctx;
	int err;

	if (!out)
		return -EINVAL;
	err = attr_parse(attr, &a);
	if (!err)
		err = pick_backend(&a, &be, why, sizeof(why));
	if (err)
		return err;
	ctx = calloc(1, sizeof(*ctx));
	if (!ctx)
		return -ENOMEM;
	ctx->attr = a;
	ctx->be = be;
	snprintf(ctx->backend_why, sizeof(ctx->backend_why), "%s", why);
	ctx->qdepth = a.queue_depth;
	ctx->op = calloc(ctx->qdepth, sizeof(*ctx->op));
	ctx->free = calloc(ctx->qdepth, sizeof(*ctx->free));
	ctx->ackbits = calloc((size_t)OMS_MAX_NODES * ACK_WORDS, 8);
	for (uint32_t i = 0; i < OMS_MAX_NODES; i++)
		cc[i] = (struct oms_so_chan_cfg){
			.dest = (uint16_t)i,
			/* in-order at the destination: a posted channel */
			.kind = (a.dest_seq_mask & (1u << i)) ? OMS_CHAN_SEQ :
				be->posted ? OMS_CHAN_POSTED : OMS_CHAN_ACKED,
		};
	if (!ctx->op || !ctx->free || !ctx->ackbits ||
	    oms_so_init(&ctx->so, OMS_MAX_NODES, cc, OMS_MAX_NODES,
			OMS_MAX_HELD)) {
		ctx_free(ctx);
		return -ENOMEM;
	}
	for (uint32_t i = 0; i < ctx->qdepth; i++)
		ctx->free[i] = ctx->qdepth - 1 - i;
	ctx->nfree = ctx->qdepth;
	oms_oc_init(&ctx->oc);
	ctx->st.size = sizeof(ctx->st);
	err = be->open(ctx);
	if (err) {
		ctx_free(ctx);
		return err;
	}
	*out = ctx;
	return 0;
}

/*
 * Objects made with @ctx that keep using its regions, listeners or calls
 * after their create returned (KVS servers, clients, writers).  While one
 * lives, oms_ctx_destroy() refuses: freeing the regions and listeners it
 * owns under it would leave it a use-after-free.  Atomic: a writer may go
 * on another thread than its context's.
 */
void oms_ctx_user_get(struct oms_ctx *ctx)
{
	__atomic_add_fetch(&ctx->users, 1, __ATOMIC_ACQ_REL);
}

void oms_ctx_user_put(struct oms_ctx *ctx)
{
	__atomic_sub_fetch(&ctx->users, 1, __ATOMIC_ACQ_REL);
}

OMS_EXPORT int oms_ctx_destroy(struct oms_ctx *ctx)
{
	int err;

	if (!ctx)
		return -EINVAL;
	if (__atomic_load_n(&ctx->users, __ATOMIC_ACQUIRE))
		return -EBUSY;
	err = oms_quiet(ctx);
	while (ctx->listeners)
		oms_listener_close(ctx->listeners);
	while (ctx->mrs)
		oms_mr_dereg(ctx->mrs);
	ctx->be->close(ctx);
	ctx_free(ctx);
	return err;
}

OMS_EXPORT int oms_query_caps(struct oms_ctx *ctx, struct oms_caps *caps)
{
	struct oms_caps c;

	if (!ctx || !caps || caps->size < offsetof(struct oms_caps, flags) +
						  sizeof(caps->flags))
		return -EINVAL;
	memset(&c, 0, sizeof(c));
	c.size = caps->size < sizeof(c) ? caps->size : (uint32_t)sizeof(c);
	c.backend = ctx->attr.backend;
	c.max_nodes = OMS_MAX_NODES;
	c.queue_depth = ctx->qdepth;
	c.numa_node = -1;
	c.flags |= OMS_CAP_CONNECT;
	snprintf(c.backend_why, sizeof(c.backend_why), "%s", ctx->backend_why);
	ctx->be->caps(ctx, &c);
	if (ctx->be->dest_order_hw)
		c.flags |= OMS_CAP_DEST_ORDER_HW;
	memcpy(caps, &c, c.size);
	return 0;
}

OMS_EXPORT int oms_ctx_stats(struct oms_ctx *ctx, struct oms_stats *stats)
{
	struct oms_stats s;

	if (!ctx || !stats || stats->size < sizeof(uint64_t))
		return -EINVAL;
	s = ctx->st;
	s.held = ctx->so.ctr.held;
	s.completed = ctx->oc.completed;
	s.failed = ctx->oc.failed;
	s.outstanding = oms_oc_outstanding(&ctx->oc);
	s.stale_acks = ctx->st.stale_acks + ctx->so.ctr.stale_acks;
	s.key_drops = ctx->dead ? 0 : ctx->be->key_drops(ctx);
	s.size = stats->size < sizeof(s) ? stats->size : (uint32_t)sizeof(s);
	memcpy(stats, &s, s.size);
	return 0;
}

/* A completion of ordered op @seq on @chan: advance the cumulative ack. */
void oms_ctx_ack_seq(struct oms_ctx *ctx, uint32_t chan, uint64_t seq)
{
	uint64_t *bits = ctx->ackbits + (size_t)chan * ACK_WORDS;
	uint64_t p = ctx->ackprefix[chan];
	uint64_t start = p;

	bits[(seq % OMS_ACK_WINDOW) / 64] |= 1ull << (seq % 64);
	while (bits[(p % OMS_ACK_WINDOW) / 64] & (1ull << (p % 64))) {
		bits[(p % OMS_ACK_WINDOW) / 64] &= ~(1ull << (p % 64));
		p++;
	}
	if (p != start) {
		ctx->ackprefix[chan] = p;
		oms_so_ack(&ctx->so, (uint16_t)chan, p, 0);
	}
}

/*
 * One completion.  A failed ordered op is told to the orderer before its
 * ack (it is never visible, and what follows it is cancelled); a cancelled
 * op whose number a NOP filled reports -ECANCELED whatever the NOP said.
 */
static void complete_op(struct oms_ctx *ctx, const struct oms_wc *wc)
{
	struct oms_op *op;
	int status;

	if (wc->slot >= ctx->qdepth || !ctx->op[wc->slot].in_use ||
	    !ctx->op[wc->slot].sent) {
		ctx->st.stale_acks++;	/* not ours (any more) */
		return;
	}
	op = &ctx->op[wc->slot];
	status = op->cancelled ? -ECANCELED : (wc->status < 0 ? wc->status : 0);
	/* The destination cancelled it (it followed a failure there, e.g.
	 * a stopped sequenced stream): as not performed as one the orderer
	 * cancelled.  The context's own flushes and resets are not ops of
	 * the caller and are not counted. */
	if (!op->cancelled && wc->status == -ECANCELED &&
	    op->type != OMS_OPT_FLUSH && op->type != OMS_OPT_RESET)
		ctx->st.cancelled++;
	if (status) {
		oms_oc_fail(&ctx->oc, OMS_OC_AWAITING_ACK, status);
	} else {
		oms_oc_advance(&ctx->oc, OMS_OC_AWAITING_ACK, 1);
		if (op->result)
			*op->result = wc->value;
	}
	if (op->type == OMS_OPT_FLUSH) {
		oms_so_flush_done(&ctx->so, (uint16_t)op->wr.dest, op->token,
				  status);
	} else if (op->seq != UINT64_MAX) {
		if (status && !op->cancelled)
			oms_so_fail(&ctx->so, (uint16_t)op->wr.dest, op->seq,
				    status);
		oms_ctx_ack_seq(ctx, op->wr.dest, op->seq);
	}
	if (op->unord_seq)
		oms_so_unordered_done(&ctx->so, (uint16_t)op->wr.dest);
	op->in_use = 0;
	ctx->free[ctx->nfree++] = wc->slot;
}

int oms_ctx_progress(struct oms_ctx *ctx)
{
	struct oms_wc wc[64];
	int n;

	if (ctx->dead)
		return ctx->dead;
	do {
		uint64_t sd = ctx->src_seen;

		n = ctx->be->poll(ctx, wc, 64, &sd);
		if (sd > ctx->src_seen) {
			oms_oc_advance(&ctx->oc, OMS_OC_PROCESSING,
				       (uint32_t)(sd - ctx->src_seen));
			ctx->src_seen = sd;
		}
		for (int i = 0; i < n; i++)
			complete_op(ctx, &wc[i]);
	} while (n == 64);
	return oms_ctx_release(ctx);
}

/* The device is gone: fail everything pending, leave nothing raised. */
void oms_ctx_kill(struct oms_ctx *ctx, int err)
{
	struct oms_so_action act[32];

	ctx->dead = err;
	for (int s = 0; s < OMS_OC_NSTAGES; s++)
		while (ctx->oc.stage[s])
			oms_oc_fail(&ctx->oc, (enum oms_oc_stage)s, err);
	/* The engine's abort: everything issued failed, everything held
	 * comes back as a cancel, nothing is sent any more. */
	oms_so_abort(&ctx->so, err);
	while (oms_so_progress(&ctx->so, act, 32) > 0)
		;
	for (uint32_t i = 0; i < ctx->qdepth; i++)
		ctx->op[i].in_use = 0;
	for (uint32_t i = 0; i < ctx->qdepth; i++)
		ctx->free[i] = ctx->qdepth - 1 - i;
	ctx->nfree = ctx->qdepth;
}

/* 0 while the device lives and moves; else kill and return why. */
int oms_ctx_check_alive(struct oms_ctx *ctx)
{
	uint64_t hb;
	int err;

	if (ctx->dead)
		return ctx->dead;
	/* Cheap: look at the device every 64 calls, at the clock only when
	 * its heartbeat stood still. */
	if (++ctx->alive_calls % 64)
		return 0;
	err = ctx->be->alive(ctx, &hb);
	if (!err) {
		if (hb != ctx->hb_last) {
			ctx->hb_last = hb;
			ctx->hb_time_ns = 0;
		} else if (!ctx->hb_time_ns) {
			ctx->hb_time_ns = oms_now_ns();
		} else if (oms_now_ns() - ctx->hb_time_ns >
			   (uint64_t)ctx->attr.timeout_ms * 1000000ull) {
			err = -ETIMEDOUT;
		}
	}
	if (err)
		oms_ctx_kill(ctx, err);
	return err;
}

OMS_EXPORT int oms_progress(struct oms_ctx *ctx)
{
	int err;

	if (!ctx)
		return -EINVAL;
	err = oms_ctx_progress(ctx);
	if (!err)
		err = oms_ctx_check_alive(ctx);
	return err ? err : (int)oms_oc_outstanding(&ctx->oc);
}
