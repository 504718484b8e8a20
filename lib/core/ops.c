// SPDX-License-Identifier: MIT
/*
 * The ordered operations: put with a store class, get (relaxed/acquire),
 * atomics, fences, local fence, quiet and resume.  Every operation takes a
 * slot, goes through the store orderer (which either lets it go at once,
 * maybe with a fence for the destination to honour, or holds it, seed 000)
 * and then to the backend; held ones are released by oms_ctx_release()
 * (lib/core/progress.c), called from every entry point, so a strong store
 * never blocks its caller.  Gets and atomics are ordered operations of the weak kind: they
 * wait for fences of their destination, acquire barriers and held ops on
 * the same bytes, and later strong stores wait for them.  An op the
 * orderer cancels (it follows a failure) completes with -ECANCELED
 * without reaching memory.  docs/ordering.md is the contract.
 */
#include <errno.h>

#include "oms_priv.h"

#define ACK_SLACK (OMS_ACK_WINDOW / 2)
/* A slot for one of the caller's operations: queue_depth of them in
 * flight at most, whatever the context's own flushes hold (the slots
 * beyond queue_depth are theirs: ctx.c, op_slots()). */
static int have_slot(struct oms_ctx *ctx)
{
	return ctx->nfree && ctx->qdepth - ctx->nfree - ctx->flushing <
			     ctx->attr.queue_depth;
}

static int acks_in_window(struct oms_ctx *ctx)
{
	for (uint32_t c = 0; c < OMS_MAX_NODES; c++)
		if (oms_so_chan_issued(&ctx->so, (uint16_t)c) -
		    ctx->ackprefix[c] > ACK_SLACK)
			return 0;
	return 1;
}

static int slot_ready(struct oms_ctx *ctx)
{
	return have_slot(ctx) && acks_in_window(ctx);
}

static int op_alloc(struct oms_ctx *ctx, struct oms_op **out)
{
	struct oms_op *op;
	uint32_t slot;

	if (ctx->gone)
		return ctx->gone;
	if (!slot_ready(ctx)) {
		int err = 0;

		if (ctx->attr.flags & OMS_CTX_F_NONBLOCK) {
			oms_ctx_progress(ctx);
			if (!slot_ready(ctx))
				err = ctx->gone ? ctx->gone : -EAGAIN;
		} else {
			err = oms_ctx_wait(ctx, slot_ready, OMS_WAIT_ANY);
		}
		if (err)
			return err;
	}
	slot = ctx->free[--ctx->nfree];
	op = &ctx->op[slot];
	*op = (struct oms_op){ .in_use = 1, .seq = UINT64_MAX };
	op->wr.slot = slot;
	*out = op;
	return 0;
}

/* Hand @op to the orderer (class @cls), which sends it or holds it. */
static int submit(struct oms_ctx *ctx, struct oms_op *op, unsigned cls)
{
	static const uint8_t kind[] = {
		[OMS_OPT_PUT] = OMS_SO_OP_PUT,
		[OMS_OPT_GET] = OMS_SO_OP_GET,
		[OMS_OPT_ATOMIC] = OMS_SO_OP_ATOMIC,
	};
	/* same bytes, same address: a window is its home region (C1) */
	uint32_t home = ctx->be->home_region ?
			ctx->be->home_region(ctx, op->wr.region) :
			op->wr.region;
	struct oms_so_store st = {
		.cookie = op->wr.slot,
		.addr = ((uint64_t)home << 40) | op->wr.off,
		.len = (uint32_t)op->wr.len,
		.chan = (uint16_t)op->wr.dest,
		.cls = (uint8_t)cls,
		.op = kind[op->type],
		.acquire = !!(op->wr.flags & OMS_WR_F_ACQUIRE),
	};
	struct oms_so_action a;
	unsigned spins = 0;
	int r, waited = 0;

	oms_oc_issue(&ctx->oc, 1);
	if (!oms_ctx_ordered(ctx))
		st.cls = OMS_STORE_UNORDERED;
	while ((r = oms_so_submit_op(&ctx->so, &st, &a)) == -EAGAIN) {
		oms_ctx_progress(ctx);
		if (oms_ctx_check_alive(ctx)) {
			oms_ctx_wait_done(ctx);
			return 0;	/* gone: the op was failed */
		}
		oms_ctx_pause(ctx, OMS_WAIT_ANY, &spins);
		waited = 1;
	}
	if (waited)
		oms_ctx_wait_done(ctx);
	op->seq = a.seq;	/* SEQ channel: numbered even when held */
	if (r == OMS_SO_ISSUE)
		oms_ctx_send_op(ctx, op, a.flags);
	/* the only call that may leave the doorbell for later: every call
	 * that waits or drives progress rings it */
	ctx->ring_later = !!(ctx->attr.flags & OMS_CTX_F_DOORBELL_BATCH);
	oms_ctx_progress(ctx);
	ctx->ring_later = 0;
	return 0;
}

static int check_remote(struct oms_ctx *ctx, const struct oms_rmr *r,
			uint64_t off, size_t len)
{
	if (!ctx || !r || len == 0 || r->dest >= OMS_MAX_NODES)
		return -EINVAL;
	if (len > OMS_MAX_OP_LEN)
		return -EMSGSIZE;
	if (off > r->len || len > r->len - off)
		return -ERANGE;
	return ctx->gone;
}

static void fill_wr(struct oms_op *op, unsigned type, const struct oms_rmr *r,
		    uint64_t off, size_t len)
{
	op->wr.op = (uint8_t)type;
	op->wr.dest = r->dest;
	op->wr.region = r->region;
	op->wr.key = r->key;
	op->wr.off = off;
	op->wr.len = len;
}

OMS_EXPORT int oms_put(struct oms_ctx *ctx, const struct oms_rmr *dst,
		       uint64_t off, const void *buf, size_t len,
		       enum oms_store_class cls)
{
	OMS_CTX_CPU_SCOPE(ctx);
	struct oms_op *op;
	int err = check_remote(ctx, dst, off, len);

	if (!err && (!buf || (unsigned)cls > OMS_STORE_RELEASE))
		err = -EINVAL;
	/* a destination that carries puts in smaller pieces (verbs: a
	 * DEST_SEQ connection's staging slots at its agent) */
	if (!err && ctx->be->dest_max_put &&
	    len > ctx->be->dest_max_put(ctx, dst->dest))
		err = -EMSGSIZE;
	if (!err)
		err = op_alloc(ctx, &op);
	if (err)
		return err;
	op->type = OMS_OPT_PUT;
	fill_wr(op, OMS_WR_PUT, dst, off, len);
	op->wr.local = (uintptr_t)buf;
	if (cls == OMS_STORE_STRONG)
		op->wr.flags = OMS_WR_F_STRONG;
	ctx->st.puts++;
	return submit(ctx, op, cls);
}

/* Class-2 responses from @dest are held there (seed 002). */
static int resp_hold(struct oms_ctx *ctx, uint32_t dest)
{
	struct oms_caps c = { .size = sizeof(c) };

	if (ctx->be->dest_caps)
		return !!(ctx->be->dest_caps(ctx, dest) & OMS_CAP_RESP_HOLD);
	ctx->be->caps(ctx, &c);
	return !!(c.flags & OMS_CAP_RESP_HOLD);
}

OMS_EXPORT int oms_get(struct oms_ctx *ctx, void *buf,
		       const struct oms_rmr *src, uint64_t off, size_t len,
		       unsigned int flags)
{
	OMS_CTX_CPU_SCOPE(ctx);
	struct oms_op *op;
	int err = check_remote(ctx, src, off, len);

	if (!err && (!buf || (flags & ~(OMS_READ_ACQUIRE |
					OMS_READ_RESP_ORDERED))))
		err = -EINVAL;
	if (!err && (flags & OMS_READ_RESP_ORDERED) &&
	    !resp_hold(ctx, src->dest))
		err = -EOPNOTSUPP;	/* no seed-002 hold on this backend */
	if (!err)
		err = op_alloc(ctx, &op);
	if (err)
		return err;
	op->type = OMS_OPT_GET;
	fill_wr(op, OMS_WR_GET, src, off, len);
	op->wr.local = (uintptr_t)buf;
	if (oms_ctx_ordered(ctx)) {
		if (flags & OMS_READ_ACQUIRE)
			op->wr.flags |= OMS_WR_F_ACQUIRE;
		if (flags & OMS_READ_RESP_ORDERED)
			op->wr.flags |= OMS_WR_F_RESP_ORDERED;
	}
	ctx->st.gets++;
	return submit(ctx, op, OMS_STORE_WEAK);
}

static int atomic_op(struct oms_ctx *ctx, const struct oms_rmr *dst,
		     uint64_t off, unsigned type, uint64_t a1, uint64_t a2,
		     uint64_t *old)
{
	struct oms_op *op;
	int err = check_remote(ctx, dst, off, 8);

	if (!err && off % 8)
		err = -EINVAL;
	if (!err)
		err = op_alloc(ctx, &op);
	if (err)
		return err;
	op->type = OMS_OPT_ATOMIC;
	fill_wr(op, type, dst, off, 8);
	op->wr.a1 = a1;
	op->wr.a2 = a2;
	op->result = old;
	ctx->st.atomics++;
	return submit(ctx, op, OMS_STORE_WEAK);
}

OMS_EXPORT int oms_atomic_fadd(struct oms_ctx *ctx, const struct oms_rmr *dst,
			       uint64_t off, uint64_t add, uint64_t *old)
{
	OMS_CTX_CPU_SCOPE(ctx);
	return atomic_op(ctx, dst, off, OMS_WR_FADD, add, 0, old);
}

OMS_EXPORT int oms_atomic_cas(struct oms_ctx *ctx, const struct oms_rmr *dst,
			      uint64_t off, uint64_t expect, uint64_t desired,
			      uint64_t *old)
{
	OMS_CTX_CPU_SCOPE(ctx);
	return atomic_op(ctx, dst, off, OMS_WR_CAS, expect, desired, old);
}

static int fence_scope(struct oms_ctx *ctx, uint16_t scope)
{
	unsigned spins = 0;
	int r, waited = 0;

	if (ctx->gone)
		return ctx->gone;
	ctx->st.fences++;
	if (!oms_ctx_ordered(ctx))
		return oms_ctx_release(ctx);	/* orders nothing; rings */
	while ((r = oms_so_fence(&ctx->so, scope)) == -EAGAIN) {
		int err = oms_ctx_progress(ctx);

		if (!err)
			err = oms_ctx_check_alive(ctx);
		if (err) {
			oms_ctx_wait_done(ctx);
			return err;
		}
		oms_ctx_pause(ctx, OMS_WAIT_ANY, &spins);
		waited = 1;
	}
	if (waited)
		oms_ctx_wait_done(ctx);
	if (r)
		return r;
	return oms_ctx_release(ctx);
}

OMS_EXPORT int oms_fence(struct oms_ctx *ctx, uint32_t dest)
{
	OMS_CTX_CPU_SCOPE(ctx);
	if (!ctx || dest >= OMS_MAX_NODES)
		return -EINVAL;
	return fence_scope(ctx, (uint16_t)dest);
}

OMS_EXPORT int oms_fence_global(struct oms_ctx *ctx)
{
	OMS_CTX_CPU_SCOPE(ctx);
	if (!ctx)
		return -EINVAL;
	return fence_scope(ctx, OMS_SO_ALL);
}

static int local_done(struct oms_ctx *ctx)
{
	return oms_oc_local_done(&ctx->oc);
}

OMS_EXPORT int oms_fence_local(struct oms_ctx *ctx)
{
	OMS_CTX_CPU_SCOPE(ctx);
	if (!ctx)
		return -EINVAL;
	if (ctx->gone)
		return ctx->gone;
	return oms_ctx_wait(ctx, local_done, OMS_WAIT_SRC);
}

OMS_EXPORT int oms_quiet(struct oms_ctx *ctx)
{
	OMS_CTX_CPU_SCOPE(ctx);
	int err, first;

	if (!ctx)
		return -EINVAL;
	err = oms_ctx_wait_quiet(ctx);
	first = oms_oc_take_error(&ctx->oc);
	oms_so_take_error(&ctx->so);
	if (first)
		return first;
	return err ? err : ctx->gone;
}

/* The resume of a channel the device may have stopped completed. */
static int resume_done(struct oms_ctx *ctx)
{
	return oms_oc_quiet_done(&ctx->oc);
}

OMS_EXPORT int oms_ctx_resume(struct oms_ctx *ctx)
{
	OMS_CTX_CPU_SCOPE(ctx);
	uint32_t failed = 0;
	int err;

	if (!ctx)
		return -EINVAL;
	err = oms_ctx_wait_quiet(ctx);
	if (!err)
		err = ctx->gone;
	if (err)
		return err;
	/* The orderer's failed channels, and the destinations where an
	 * unordered op failed: the device remembers those failures too.
	 * Resume the destinations' stopped channels.  A backend that
	 * cannot (a QP in error) answers -ENOTCONN: that connection stays
	 * unusable and says so on every later op. */
	failed = oms_so_failed_chans(&ctx->so) | ctx->dest_failed;
	for (uint32_t c = 0; c < OMS_MAX_NODES; c++) {
		struct oms_op *op;

		if (!(failed & (1u << c)))
			continue;
		err = op_alloc(ctx, &op);
		if (err)
			return err;
		op->type = OMS_OPT_RESUME;	/* no sequence, no ack */
		op->wr.op = OMS_WR_RESUME;
		op->wr.dest = c;
		/* a sequenced destination's stream goes on at the number
		 * the orderer gives next */
		if (ctx->attr.dest_seq_mask & (1u << c))
			op->wr.seq = (uint32_t)(uint16_t)
				oms_so_chan_issued(&ctx->so, (uint16_t)c);
		oms_oc_issue(&ctx->oc, 1);
		oms_ctx_send_op(ctx, op, 0);
	}
	oms_ctx_release(ctx);
	err = oms_ctx_wait(ctx, resume_done, OMS_WAIT_ALL);
	oms_oc_take_error(&ctx->oc);	/* the resumes' own answers */
	if (err)
		return err;
	ctx->dest_failed = 0;
	err = oms_so_resume(&ctx->so);
	oms_so_take_error(&ctx->so);
	return err;
}

/*
 * A thread that polls twice in a row and finds nothing, having sent
 * nothing in between, is waiting for its device (backend.h, ops->wait),
 * from the second call until its next: a device with a clock of its own
 * runs it on to that thread's next completion.  One empty poll is not a
 * wait: what the thread does next (another put) is at the same time.
 */
OMS_EXPORT int oms_progress(struct oms_ctx *ctx)
{
	OMS_CTX_CPU_SCOPE(ctx);
	uint64_t reaped;
	int err;

	if (!ctx)
		return -EINVAL;
	reaped = ctx->reaped;
	err = oms_ctx_progress(ctx);
	if (!err)
		err = oms_ctx_check_alive(ctx);
	if (err)
		return err;
	if (ctx->reaped != reaped || !oms_oc_outstanding(&ctx->oc) ||
	    ctx->unrung) {
		ctx->empty_polls = 0;
	} else if (++ctx->empty_polls >= 2) {
		/* the wait may end in it (a device that sleeps its waiters
		 * wakes them where it comes true): take what ended it */
		oms_ctx_waiting(ctx, OMS_WAIT_ANY);
		err = oms_ctx_progress(ctx);
		if (err)
			return err;
	}
	return (int)oms_oc_outstanding(&ctx->oc);
}
