// SPDX-License-Identifier: MIT
/*
 * Driving a context: the engine side of every call, below the entry points
 * (ops.c) and the set-up (ctx.c), calling neither.  Release hands the
 * operations the store orderer lets go to the backend (a fence flag for
 * the destination to honour, a cancelling NOP for one that follows a
 * failure, a flush of a posted channel) and rings the doorbell by count;
 * progress reaps completions into the op counter and the orderer's
 * cumulative acks, then releases; wait drives progress until a condition
 * holds or the device is gone; oms_ctx_gone() fails everything when it is.  The
 * caller never blocks on a strong store: held ones go out from whatever
 * call comes next.  If the device stops or stops answering, every pending
 * operation fails with -ENODEV or -ETIMEDOUT: nothing hangs.
 */
#include <errno.h>
#include <sched.h>

#include "oms_priv.h"

#define ACK_WORDS (OMS_ACK_WINDOW / 64)

/* @op's slot is free again (a flush's is the context's own). */
static void slot_free(struct oms_ctx *ctx, struct oms_op *op)
{
	if (op->type == OMS_OPT_FLUSH)
		ctx->flushing--;
	op->in_use = 0;
	ctx->free[ctx->nfree++] = op->wr.slot;
}

/* Hand @op to the backend, with what the orderer said in @so_flags. */
void oms_ctx_send_op(struct oms_ctx *ctx, struct oms_op *op, uint8_t so_flags)
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
	    oms_so_chan_kind(&ctx->so, (uint16_t)op->wr.dest) == OMS_CHAN_SEQ)
		op->unord_seq = 1;
	err = ctx->be->post(ctx, &op->wr);

	oms_oc_advance(&ctx->oc, OMS_OC_ISSUED, 1);
	if (err) {
		/* Refused by the backend: the op fails as if completed with
		 * @err.  Its sequence number is acked like any completion, so
		 * the channel's cumulative ack passes it (acking all issued
		 * would declare later stores visible; acking none would stall
		 * the channel and hang quiet). */
		oms_oc_advance(&ctx->oc, OMS_OC_PROCESSING, 1);
		oms_oc_fail(&ctx->oc, OMS_OC_AWAITING_ACK, err);
		if (op->seq != UINT64_MAX) {
			oms_so_fail(&ctx->so, (uint16_t)op->wr.dest, op->seq, err);
			oms_ctx_ack_seq(ctx, op->wr.dest, op->seq);
		}
		if (op->unord_seq)
			oms_so_unordered_done(&ctx->so, (uint16_t)op->wr.dest);
		slot_free(ctx, op);
		return;
	}
	op->sent = 1;
	ctx->unrung++;
	ctx->empty_polls = 0;
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
	ctx->flushing++;
	op = &ctx->op[slot];
	*op = (struct oms_op){ .in_use = 1, .seq = UINT64_MAX,
			       .type = OMS_OPT_FLUSH, .token = token };
	op->wr.op = OMS_WR_FLUSH;
	op->wr.flags = OMS_WR_F_SEQ;
	op->wr.slot = slot;
	op->wr.dest = chan;
	op->wr.seq = (uint32_t)token;
	oms_oc_issue(&ctx->oc, 1);
	oms_ctx_send_op(ctx, op, 0);
}

/*
 * The orderer cancelled @op: it follows a failed op and must not reach
 * memory.  With a sequence number of a SEQ channel, a cancelling NOP fills
 * that number and stops the destination's stream there, as the op's
 * failure would have (the later members follow it, D1; the orderer counts
 * the channel as failed, so resume resumes it); the op completes (as
 * -ECANCELED) with the NOP.  Otherwise it completes now.
 */
static void cancel_op(struct oms_ctx *ctx, struct oms_op *op, uint64_t seq)
{
	ctx->st.cancelled++;
	if (seq != UINT64_MAX && !ctx->gone) {
		op->seq = seq;
		op->cancelled = 1;
		op->wr.op = OMS_WR_NOP;
		op->wr.flags = OMS_WR_F_CANCEL;
		op->wr.len = 0;
		oms_ctx_send_op(ctx, op, 0);
		return;
	}
	oms_oc_fail(&ctx->oc, OMS_OC_ISSUED, -ECANCELED);
	slot_free(ctx, op);
}

/* Issue what the orderer releases, then ring the doorbell by count: at
 * once, or (ring_later) when a batch waits. */
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
				oms_ctx_send_op(ctx, op, act[i].flags);
			} else if (act[i].type == OMS_SO_ACT_CANCEL) {
				cancel_op(ctx, op, act[i].seq);
			} else {
				send_flush(ctx, act[i].chan, act[i].seq);
			}
		}
	} while (n == 32);
	if (ctx->unrung && (!ctx->ring_later ||
			    ctx->unrung >= OMS_DOORBELL_BATCH)) {
		ctx->be->ring(ctx, ctx->unrung);
		ctx->unrung = 0;
	}
	return 0;
}

/*
 * The calling thread waits in liboms (backend.h, ops->wait): for what
 * @kind says it needs at least, given what is in flight now.  A device
 * with a clock of its own runs it on meanwhile.
 */
int oms_ctx_waiting(struct oms_ctx *ctx, enum oms_wait_kind kind)
{
	struct oms_be_wait w = { .completions = 1 };
	uint64_t in_flight = ctx->oc.stage[OMS_OC_PROCESSING] +
			     ctx->oc.stage[OMS_OC_AWAITING_ACK];

	if (!ctx->be->wait)
		return 0;
	/* everything in flight, unless the orderer holds an op that one
	 * of those completions lets go (the thread must send it then) */
	if (kind == OMS_WAIT_ALL && !ctx->oc.stage[OMS_OC_ISSUED] &&
	    in_flight > 1)
		w.completions = in_flight > UINT32_MAX ? UINT32_MAX :
				(uint32_t)in_flight;
	if (kind == OMS_WAIT_SRC) {
		w.src = 1;
		w.src_seen = ctx->src_seen;
	}
	return ctx->be->wait(ctx, &w);
}

/* A waiting loop's pause: the backend's sleep, else a yield (the device
 * may need the core) once a few passes found nothing. */
void oms_ctx_pause(struct oms_ctx *ctx, enum oms_wait_kind kind,
		   unsigned *spins)
{
	if (!oms_ctx_waiting(ctx, kind) && ++*spins > 4)
		sched_yield();
}

void oms_ctx_wait_done(struct oms_ctx *ctx)
{
	if (ctx->be->wait)
		ctx->be->wait(ctx, NULL);
}

/* Wait (driving progress) until @cond holds or the device is gone. */
int oms_ctx_wait(struct oms_ctx *ctx, int (*cond)(struct oms_ctx *),
		 enum oms_wait_kind kind)
{
	unsigned spins = 0;
	int err, waited = 0;

	for (;;) {
		err = oms_ctx_progress(ctx);
		if (err || cond(ctx))
			break;
		err = oms_ctx_check_alive(ctx);
		if (err)
			break;
		oms_ctx_pause(ctx, kind, &spins);
		waited = 1;
	}
	if (waited)
		oms_ctx_wait_done(ctx);
	return err;
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
	 * cancelled.  The context's own flushes and resumes are not ops of
	 * the caller and are not counted. */
	if (!op->cancelled && wc->status == -ECANCELED &&
	    op->type != OMS_OPT_FLUSH && op->type != OMS_OPT_RESUME)
		ctx->st.cancelled++;
	if (status) {
		oms_oc_fail(&ctx->oc, OMS_OC_AWAITING_ACK, status);
		/* what the destination refused or cancelled, it remembers
		 * (a release or fenced op behind it is refused there) until
		 * oms_ctx_resume() resumes that channel */
		if (!op->cancelled && op->type != OMS_OPT_FLUSH &&
		    op->type != OMS_OPT_RESUME && op->wr.dest < 32)
			ctx->dest_failed |= 1u << op->wr.dest;
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
	slot_free(ctx, op);
}

int oms_ctx_progress(struct oms_ctx *ctx)
{
	struct oms_wc wc[64];
	int n;

	if (ctx->gone)
		return ctx->gone;
	do {
		uint64_t sd = ctx->src_seen;

		n = ctx->be->poll(ctx, wc, 64, &sd);
		ctx->reaped += (uint64_t)n;
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
void oms_ctx_gone(struct oms_ctx *ctx, int err)
{
	struct oms_so_action act[32];

	ctx->gone = err;
	for (int s = 0; s < OMS_OC_NSTAGES; s++)
		while (ctx->oc.stage[s])
			oms_oc_fail(&ctx->oc, (enum oms_oc_stage)s, err);
	/* The engine's side of gone: everything issued failed, everything held
	 * comes back as a cancel, nothing is sent any more. */
	oms_so_gone(&ctx->so, err);
	while (oms_so_progress(&ctx->so, act, 32) > 0)
		;
	for (uint32_t i = 0; i < ctx->qdepth; i++)
		ctx->op[i].in_use = 0;
	for (uint32_t i = 0; i < ctx->qdepth; i++)
		ctx->free[i] = ctx->qdepth - 1 - i;
	ctx->nfree = ctx->qdepth;
	ctx->flushing = 0;
}

/* 0 while the device lives and moves; else it is gone: say why. */
int oms_ctx_check_alive(struct oms_ctx *ctx)
{
	uint64_t hb;
	int err;

	if (ctx->gone)
		return ctx->gone;
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
		oms_ctx_gone(ctx, err);
	return err;
}

/* Quiet wants posted channels flushed: ask the orderer every time (a
 * channel may get new stores while quiet waits for held ones). */
static int quiet_done(struct oms_ctx *ctx)
{
	oms_so_quiet(&ctx->so);
	return oms_oc_quiet_done(&ctx->oc) && oms_so_quiescent(&ctx->so);
}

/* Wait until everything earlier is performed, failed or cancelled. */
int oms_ctx_wait_quiet(struct oms_ctx *ctx)
{
	return ctx->gone ? 0 : oms_ctx_wait(ctx, quiet_done, OMS_WAIT_ALL);
}
