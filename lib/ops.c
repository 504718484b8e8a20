// SPDX-License-Identifier: MIT
/*
 * The ordered operations: put with a store class, get (relaxed/acquire),
 * atomics, fences, local fence, quiet and resume.  Every operation takes a
 * slot, goes through the store orderer (which either lets it go at once,
 * maybe with a fence for the destination to honour, or holds it, seed 000)
 * and then to the backend; held ones are released by oms_ctx_release(),
 * called from every entry point, so a strong store never blocks its
 * caller.  Gets and atomics are ordered operations of the weak kind: they
 * wait for fences of their destination, acquire barriers and held ops on
 * the same bytes, and later strong stores wait for them.  An op the
 * orderer cancels (it follows a failure) completes with -ECANCELED
 * without reaching memory.  docs/ordering.md is the contract.
 */
#include <errno.h>
#include <sched.h>

#include "oms_priv.h"

#define ACK_SLACK (OMS_ACK_WINDOW / 2)

static int ctx_ordered(const struct oms_ctx *ctx)
{
	return !(ctx->attr.flags & OMS_CTX_F_NO_ORDERING);
}

static void send_op(struct oms_ctx *ctx, struct oms_op *op, uint8_t so_flags)
{
	int err;

	if ((ctx->attr.dest_seq_mask & (1u << op->wr.dest)) &&
	    op->seq != UINT64_MAX) {
		op->wr.flags |= OMS_WR_F_SEQ;
		op->wr.seq = (uint32_t)op->seq;
	}
	if (so_flags & OMS_SO_A_FENCE)
		op->wr.flags |= OMS_WR_F_FENCE;
	if (op->seq == UINT64_MAX && op->type == OMS_OPT_PUT &&
	    ctx->so.chan[op->wr.dest].kind == OMS_CHAN_SEQ)
		op->unord_seq = 1;
	err = ctx->be->post(ctx, &op->wr);

	oms_oc_advance(&ctx->oc, OMS_OC_ISSUED, 1);
	if (err) {
		/* Refused by the backend: the op fails as if completed with
		 * @err.  Its sequence number is acked like any completion, so
		 * the channel's cumulative ack passes it (acking all issued
		 * would declare later stores visible; acking none would stall
		 * the channel and hang quiet). */
		struct oms_wc wc = { .slot = op->wr.slot, .status = err };

		oms_oc_advance(&ctx->oc, OMS_OC_PROCESSING, 1);
		oms_oc_fail(&ctx->oc, OMS_OC_AWAITING_ACK, err);
		if (op->seq != UINT64_MAX) {
			oms_so_fail(&ctx->so, (uint16_t)op->wr.dest, op->seq, err);
			oms_ctx_ack_seq(ctx, op->wr.dest, op->seq);
		}
		if (op->unord_seq)
			oms_so_unordered_done(&ctx->so, (uint16_t)op->wr.dest);
		op->in_use = 0;
		ctx->free[ctx->nfree++] = wc.slot;
		return;
	}
	op->sent = 1;
	ctx->unrung++;
}

/*
 * A flush of posted channel @chan (DEST_SEQ): a command that completes once
 * every operation before @token on the channel has been applied at the
 * destination.  Its slot comes from the reserve op_alloc() leaves.
 */
static void send_flush(struct oms_ctx *ctx, uint16_t chan, uint64_t token)
{
	struct oms_op *op;
	uint32_t slot;

	if (!ctx->nfree) {
		/* cannot happen (reserve); answer rather than hang */
		oms_so_flush_done(&ctx->so, chan, token, -ENOSPC);
		return;
	}
	slot = ctx->free[--ctx->nfree];
	op = &ctx->op[slot];
	*op = (struct oms_op){ .in_use = 1, .seq = UINT64_MAX,
			       .type = OMS_OPT_FLUSH, .token = token };
	op->wr.op = OMS_WR_FLUSH;
	op->wr.flags = OMS_WR_F_SEQ;
	op->wr.slot = slot;
	op->wr.dest = chan;
	op->wr.seq = (uint32_t)token;
	oms_oc_issue(&ctx->oc, 1);
	send_op(ctx, op, 0);
}

/*
 * The orderer cancelled @op: it follows a failed op and must not reach
 * memory.  With a sequence number of a SEQ channel, a cancelling NOP fills
 * that number and stops the destination's stream there, as the op's
 * failure would have (the later members follow it, D1; the orderer counts
 * the channel as failed, so resume resets it); the op completes (as
 * -ECANCELED) with the NOP.  Otherwise it completes now.
 */
static void cancel_op(struct oms_ctx *ctx, struct oms_op *op, uint64_t seq)
{
	ctx->st.cancelled++;
	if (seq != UINT64_MAX && !ctx->dead) {
		op->seq = seq;
		op->cancelled = 1;
		op->wr.op = OMS_WR_NOP;
		op->wr.flags = OMS_WR_F_CANCEL;
		op->wr.len = 0;
		send_op(ctx, op, 0);
		return;
	}
	oms_oc_fail(&ctx->oc, OMS_OC_ISSUED, -ECANCELED);
	op->in_use = 0;
	ctx->free[ctx->nfree++] = op->wr.slot;
}

/* Issue what the orderer releases, then ring the doorbell by count. */
int oms_ctx_release(struct oms_ctx *ctx)
{
	struct oms_so_action act[32];
	int n;

	do {
		n = oms_so_progress(&ctx->so, act, 32);
		for (int i = 0; i < n; i++) {
			struct oms_op *op = &ctx->op[act[i].cookie];

			if (act[i].type == OMS_SO_ACT_ISSUE) {
				op->seq = act[i].seq;
				send_op(ctx, op, act[i].flags);
			} else if (act[i].type == OMS_SO_ACT_CANCEL) {
				cancel_op(ctx, op, act[i].seq);
			} else {
				send_flush(ctx, act[i].chan, act[i].seq);
			}
		}
	} while (n == 32);
	if (ctx->unrung) {
		ctx->be->ring(ctx, ctx->unrung);
		ctx->unrung = 0;
	}
	return 0;
}

/* Wait (driving progress) until @cond holds or the device is gone. */
static int wait_for(struct oms_ctx *ctx, int (*cond)(struct oms_ctx *))
{
	unsigned spins = 0;

	for (;;) {
		int err = oms_ctx_progress(ctx);

		if (err)
			return err;
		if (cond(ctx))
			return 0;
		err = oms_ctx_check_alive(ctx);
		if (err)
			return err;
		if (++spins > 4)
			sched_yield();
	}
}

static int have_slot(struct oms_ctx *ctx)
{
	return ctx->nfree > (ctx->attr.dest_seq_mask ?
			     OMS_FLUSH_SLOTS : 0);
}

static int acks_in_window(struct oms_ctx *ctx)
{
	for (uint32_t c = 0; c < OMS_MAX_NODES; c++)
		if (ctx->so.chan[c].issued - ctx->ackprefix[c] > ACK_SLACK)
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

	if (ctx->dead)
		return ctx->dead;
	if (!slot_ready(ctx)) {
		int err = 0;

		if (ctx->attr.flags & OMS_CTX_F_NONBLOCK) {
			oms_ctx_progress(ctx);
			if (!slot_ready(ctx))
				err = ctx->dead ? ctx->dead : -EAGAIN;
		} else {
			err = wait_for(ctx, slot_ready);
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
	struct oms_so_store st = {
		.cookie = op->wr.slot,
		.addr = ((uint64_t)op->wr.region << 40) | op->wr.off,
		.len = (uint32_t)op->wr.len,
		.chan = (uint16_t)op->wr.dest,
		.cls = (uint8_t)cls,
		.op = kind[op->type],
		.acquire = !!(op->wr.flags & OMS_WR_F_ACQUIRE),
	};
	struct oms_so_action a;
	int r;

	oms_oc_issue(&ctx->oc, 1);
	if (!ctx_ordered(ctx))
		st.cls = OMS_STORE_UNORDERED;
	while ((r = oms_so_submit_op(&ctx->so, &st, &a)) == -EAGAIN) {
		oms_ctx_progress(ctx);
		if (oms_ctx_check_alive(ctx))
			return 0;	/* killed: the op was failed */
		sched_yield();
	}
	op->seq = a.seq;	/* SEQ channel: numbered even when held */
	if (r == OMS_SO_ISSUE)
		send_op(ctx, op, a.flags);
	oms_ctx_progress(ctx);
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
	return ctx->dead;
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
	struct oms_op *op;
	int err = check_remote(ctx, dst, off, len);

	if (!err && (!buf || (unsigned)cls > OMS_STORE_RELEASE))
		err = -EINVAL;
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

/* The backend holds class-2 responses (seed 002). */
static int resp_hold(struct oms_ctx *ctx)
{
	struct oms_caps c = { .size = sizeof(c) };

	ctx->be->caps(ctx, &c);
	return !!(c.flags & OMS_CAP_RESP_HOLD);
}

OMS_EXPORT int oms_get(struct oms_ctx *ctx, void *buf,
		       const struct oms_rmr *src, uint64_t off, size_t len,
		       unsigned int flags)
{
	struct oms_op *op;
	int err = check_remote(ctx, src, off, len);

	if (!err && (!buf || (flags & ~(OMS_READ_ACQUIRE |
					OMS_READ_RESP_ORDERED))))
		err = -EINVAL;
	if (!err && (flags & OMS_READ_RESP_ORDERED) && !resp_hold(ctx))
		err = -EOPNOTSUPP;	/* no seed-002 hold on this backend */
	if (!err)
		err = op_alloc(ctx, &op);
	if (err)
		return err;
	op->type = OMS_OPT_GET;
	fill_wr(op, OMS_WR_GET, src, off, len);
	op->wr.local = (uintptr_t)buf;
	if (ctx_ordered(ctx)) {
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
	return atomic_op(ctx, dst, off, OMS_WR_FADD, add, 0, old);
}

OMS_EXPORT int oms_atomic_cas(struct oms_ctx *ctx, const struct oms_rmr *dst,
			      uint64_t off, uint64_t expect, uint64_t desired,
			      uint64_t *old)
{
	return atomic_op(ctx, dst, off, OMS_WR_CAS, expect, desired, old);
}

static int fence_scope(struct oms_ctx *ctx, uint16_t scope)
{
	int r;

	if (ctx->dead)
		return ctx->dead;
	ctx->st.fences++;
	if (!ctx_ordered(ctx))
		return 0;
	while ((r = oms_so_fence(&ctx->so, scope)) == -EAGAIN) {
		int err = oms_ctx_progress(ctx);

		if (!err)
			err = oms_ctx_check_alive(ctx);
		if (err)
			return err;
		sched_yield();
	}
	if (r)
		return r;
	return oms_ctx_release(ctx);
}

OMS_EXPORT int oms_fence(struct oms_ctx *ctx, uint32_t dest)
{
	if (!ctx || dest >= OMS_MAX_NODES)
		return -EINVAL;
	return fence_scope(ctx, (uint16_t)dest);
}

OMS_EXPORT int oms_fence_global(struct oms_ctx *ctx)
{
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
	if (!ctx)
		return -EINVAL;
	if (ctx->dead)
		return ctx->dead;
	return wait_for(ctx, local_done);
}

/* Quiet wants posted channels flushed: ask the orderer every time (a
 * channel may get new stores while quiet waits for held ones). */
static int quiet_done(struct oms_ctx *ctx)
{
	oms_so_drain(&ctx->so);
	return oms_oc_quiet_done(&ctx->oc) && oms_so_quiescent(&ctx->so);
}

/* Wait until everything earlier is performed, failed or cancelled. */
int oms_ctx_wait_quiet(struct oms_ctx *ctx)
{
	return ctx->dead ? 0 : wait_for(ctx, quiet_done);
}

OMS_EXPORT int oms_quiet(struct oms_ctx *ctx)
{
	int err, first;

	if (!ctx)
		return -EINVAL;
	err = oms_ctx_wait_quiet(ctx);
	first = oms_oc_take_error(&ctx->oc);
	oms_so_take_error(&ctx->so);
	if (first)
		return first;
	return err ? err : ctx->dead;
}

/* The RESET of a channel the device may have stopped completed. */
static int reset_done(struct oms_ctx *ctx)
{
	return oms_oc_quiet_done(&ctx->oc);
}

OMS_EXPORT int oms_ctx_resume(struct oms_ctx *ctx)
{
	uint32_t failed = 0;
	int err;

	if (!ctx)
		return -EINVAL;
	err = oms_ctx_wait_quiet(ctx);
	if (!err)
		err = ctx->dead;
	if (err)
		return err;
	for (uint32_t c = 0; c < ctx->so.nchan; c++)
		if (ctx->so.chan[c].first_fail != OMS_SO_NONE)
			failed |= 1u << c;
	/* Restart the destinations' stopped channels.  A backend that
	 * cannot (a QP in error) answers -ENOTCONN: that connection stays
	 * unusable and says so on every later op. */
	for (uint32_t c = 0; c < ctx->so.nchan; c++) {
		struct oms_op *op;

		if (!(failed & (1u << c)))
			continue;
		err = op_alloc(ctx, &op);
		if (err)
			return err;
		op->type = OMS_OPT_RESET;	/* no sequence, no ack */
		op->wr.op = OMS_WR_RESET;
		op->wr.dest = c;
		oms_oc_issue(&ctx->oc, 1);
		send_op(ctx, op, 0);
	}
	oms_ctx_release(ctx);
	err = wait_for(ctx, reset_done);
	oms_oc_take_error(&ctx->oc);	/* the RESETs' own answers */
	if (err)
		return err;
	err = oms_so_resume(&ctx->so);
	oms_so_take_error(&ctx->so);
	return err;
}
