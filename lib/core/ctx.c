// SPDX-License-Identifier: MIT
/*
 * Contexts: creation (attribute parsing, backend choice), destruction,
 * capabilities and statistics.  A context owns the engine state that gives
 * the public calls their meaning whatever the backend: a store orderer
 * (one channel per destination; store classes and fences, seed 000/001)
 * and an op counter (local fence and quiet, seed 003).  Driving them is
 * lib/core/progress.c's; the entry points are lib/core/ops.c's.
 */
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
	a->timeout_ms = 2000;
}

static int in_size(const struct oms_ctx_attr *in, size_t end)
{
	return in->size >= end;
}

#define HAS(in, m, field) \
	(((in)->comp_mask & (m)) && \
	 in_size(in, offsetof(struct oms_ctx_attr, field) + sizeof((in)->field)))

/*
 * OMS_TIMEOUT_MS: the liveness timeout of contexts whose attributes set
 * none, for machines where 2 s without a device heartbeat does not mean a
 * gone device (emulated guests, a test suite beside another).  A value
 * that is not a whole number in 1..600000 fails the create (-EINVAL), as
 * a bad OMS_BACKEND does: a typo must not silently keep the default.
 */
static int env_timeout(struct oms_ctx_attr *a)
{
	const char *env = getenv("OMS_TIMEOUT_MS");
	unsigned long v;
	char *end;

	if (!env || !*env)
		return 0;
	errno = 0;
	v = strtoul(env, &end, 10);
	if (errno || *end || env[0] == '-' || v == 0 || v > 600000)
		return -EINVAL;
	a->timeout_ms = (uint32_t)v;
	return 0;
}

/* Copy the caller's attributes over the defaults; -EINVAL/-E2BIG. */
static int attr_parse(const struct oms_ctx_attr *in, struct oms_ctx_attr *a)
{
	struct oms_ctx_attr t;
	int err;

	attr_defaults(a);
	err = env_timeout(a);
	if (err || !in)
		return err;
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
	if (t.comp_mask & OMS_CTX_ATTR_TIMEOUT) {
		if (!HAS(in, OMS_CTX_ATTR_TIMEOUT, timeout_ms) ||
		    t.timeout_ms == 0 || t.timeout_ms > 600000)
			return -EINVAL;
		a->timeout_ms = t.timeout_ms;
	}
	if (t.comp_mask & OMS_CTX_ATTR_DEST_SEQ) {
		if (!HAS(in, OMS_CTX_ATTR_DEST_SEQ, dest_seq_mask) ||
		    (OMS_MAX_NODES < 32 && (t.dest_seq_mask >> OMS_MAX_NODES)))
			return -EINVAL;
		a->dest_seq_mask = t.dest_seq_mask;
	}
	if (t.comp_mask & OMS_CTX_ATTR_EMU) {
		/* The device's settings belong to the device object. */
		if (!HAS(in, OMS_CTX_ATTR_EMU, emu) || !t.emu ||
		    (a->flags & OMS_CTX_F_HOLD_GLOBAL) ||
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

/*
 * The context's operation slots: queue_depth for the caller's operations,
 * and with a sequenced destination a flush's slot for each channel on top
 * (oms_ctx_release() sends them; they are not the caller's to count), in
 * a power of two for the backends' rings.
 */
static uint32_t op_slots(const struct oms_ctx_attr *a)
{
	uint32_t n = a->queue_depth;

	if (a->dest_seq_mask)
		while (n < a->queue_depth + OMS_FLUSH_SLOTS)
			n *= 2;
	return n;
}

/* backend.h: the engine's next number for @dest. */
static uint64_t ctx_seq_next(struct oms_ctx *ctx, uint32_t dest)
{
	return dest < OMS_MAX_NODES ?
	       oms_so_chan_issued(&ctx->so, (uint16_t)dest) : 0;
}

/*
 * Backend: attr, else OMS_BACKEND ("emu", "verbs"), else verbs when
 * OMS_DEVICE names a device, else verbs when an RDMA device is present and
 * rdma-core can be loaded, else emu; @why says which rule decided
 * (oms_caps.backend_why).  Verbs asked for without rdma-core is -ELIBACC;
 * a device, port or GID named that is not there, -ENODEV or -EINVAL
 * (rdma_env.c, into @want); no device at all, -ENODEV (from its open).
 */
static int pick_backend(struct oms_ctx_attr *a, const struct oms_backend_ops **be,
			struct oms_be_rdma_want *want, char *why, size_t whylen)
{
	const char *env = getenv("OMS_BACKEND");
	const char *dev_env = getenv("OMS_DEVICE");
	char dev[64], err_why[192];

	memset(want, 0, sizeof(*want));
	want->gid_index = -1;
	if (a->emu) {
		snprintf(why, whylen, "an emulated device named in oms_ctx_attr.emu");
	} else if (a->backend != OMS_BACKEND_AUTO) {
		snprintf(why, whylen, "asked for in oms_ctx_attr.backend");
	} else if (env && *env) {
		if (!strcmp(env, "emu")) {
			a->backend = OMS_BACKEND_EMU;
		} else if (!strcmp(env, "verbs")) {
			a->backend = OMS_BACKEND_VERBS;
		} else {
			snprintf(why, whylen, "OMS_BACKEND=%.32s: expected emu or "
				 "verbs (or unset, to choose by the machine)", env);
			return -EINVAL;
		}
		snprintf(why, whylen, "OMS_BACKEND=%.32s", env);
	} else if (dev_env && *dev_env) {
		a->backend = OMS_BACKEND_VERBS;
		snprintf(why, whylen, "OMS_DEVICE=%.40s", dev_env);
	} else if (!oms_rdma_first_device(dev, sizeof(dev))) {
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
		/* DEST_SEQ: oms_connect() asks each listener for its agent,
		 * which runs the reorder buffer (docs/dest-agent.md) */
		if (oms_verbs_load(err_why, sizeof(err_why))) {
			char rule[48];

			snprintf(rule, sizeof(rule), "%.30s", why);
			snprintf(why, whylen, "%s, but rdma-core is not "
				 "loadable (%.30s): install rdma-core and "
				 "ibverbs-providers", rule, err_why);
			return -ELIBACC;
		}
		*be = &oms_verbs_backend;
		return oms_rdma_want_parse(want, why, whylen);
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
	struct oms_be_rdma_want want;
	char why[160] = "";
	const struct oms_backend_ops *be;
	struct oms_ctx *ctx;
	int err;

	if (!out)
		return -EINVAL;
	err = attr_parse(attr, &a);
	if (!err)
		err = pick_backend(&a, &be, &want, why, sizeof(why));
	if (err)
		return err;
	ctx = calloc(1, sizeof(*ctx));
	if (!ctx)
		return -ENOMEM;
	ctx->attr = a;
	ctx->be = be;
	ctx->view.rdma = want;
	snprintf(ctx->backend_why, sizeof(ctx->backend_why), "%s", why);
	ctx->qdepth = op_slots(&a);
	ctx->view.attr = &ctx->attr;
	ctx->view.qdepth = ctx->qdepth;
	ctx->view.seq_next = ctx_seq_next;
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

uint64_t oms_ctx_clock_ns(struct oms_ctx *ctx)
{
	return ctx->be->now ? ctx->be->now(ctx) : oms_now_ns();
}

uint32_t oms_ctx_timeout_ms(const struct oms_ctx *ctx)
{
	return ctx->attr.timeout_ms;
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

/*
 * oms_query_caps(NULL, caps): what oms_ctx_create(NULL) would choose now
 * and why, or why it would fail, with no context made: the backend's
 * number and name and backend_why; 0, or the error the create would give
 * for that reason (the rest of @caps is zero).
 */
static int caps_without_ctx(struct oms_caps *c)
{
	struct oms_ctx_attr a = oms_ctx_attr_default();
	const struct oms_backend_ops *be = NULL;
	struct oms_be_rdma_want want;
	char dev[64];
	int err;

	err = pick_backend(&a, &be, &want, c->backend_why,
			   sizeof(c->backend_why));
	if (!err && a.backend == OMS_BACKEND_VERBS &&
	    !oms_rdma_first_device(dev, sizeof(dev))) {
		snprintf(c->backend_why, sizeof(c->backend_why),
			 "OMS_BACKEND=verbs, but there is no RDMA device in "
			 "/sys/class/infiniband: set one up (Soft-RoCE: rdma "
			 "link add) or use OMS_BACKEND=emu");
		err = -ENODEV;
	}
	c->backend = a.backend;
	snprintf(c->backend_name, sizeof(c->backend_name), "%s",
		 a.backend == OMS_BACKEND_VERBS ? "verbs" :
		 a.backend == OMS_BACKEND_EMU ? "emu" : "");
	return err;
}

OMS_EXPORT int oms_query_caps(struct oms_ctx *ctx, struct oms_caps *caps)
{
	struct oms_caps c;
	int err;

	if (!caps || caps->size < offsetof(struct oms_caps, flags) +
				  sizeof(caps->flags))
		return -EINVAL;
	memset(&c, 0, sizeof(c));
	c.size = caps->size < sizeof(c) ? caps->size : (uint32_t)sizeof(c);
	if (!ctx) {
		err = caps_without_ctx(&c);
		memcpy(caps, &c, c.size);
		return err;
	}
	c.backend = ctx->attr.backend;
	c.max_nodes = OMS_MAX_NODES;
	c.queue_depth = ctx->attr.queue_depth;
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
	s.key_drops = ctx->gone ? 0 : ctx->be->key_drops(ctx);
	s.doorbells = ctx->view.doorbells;
	s.dev_completions = ctx->view.dev_completions;
	s.size = stats->size < sizeof(s) ? stats->size : (uint32_t)sizeof(s);
	memcpy(stats, &s, s.size);
	return 0;
}
