// SPDX-License-Identifier: MIT
/*
 * Store orderer: what an op leaving for the transport needs and leaves
 * behind on its channel.  Needs: a fence at the destination (performed
 * after every earlier op of the channel) where the channel alone would not
 * keep the order - a write after a read of the same bytes, a release, a
 * write after an acquire, an acquire after an atomic.  Leaves behind: the
 * in-flight reads (a ring per channel, for same-address order of a write
 * after a read), the last acquire and atomic (which later ops fence after,
 * and which a failure must find), the unordered stores outside a SEQ
 * channel's stream.  Both the submit path (store_order_submit.c) and
 * progress (store_order_hold.c) issue ops through here.
 */
#include "engine/store_order_int.h"

/* ---- in-flight reads (same-address order for a write after a read) ---- */

static void reads_prune(struct oms_so_chan *ch)
{
	while (ch->rcount && ch->reads[ch->rhead].seq < ch->completed) {
		ch->rhead = (ch->rhead + 1) % OMS_SO_READS;
		ch->rcount--;
	}
}

static void reads_add(struct oms_so_chan *ch, const struct oms_so_store *st,
		      uint64_t seq)
{
	struct oms_so_read *r;

	reads_prune(ch);
	if (ch->rcount == OMS_SO_READS) {
		/* Forget the oldest, but remember that something unknown
		 * is in flight until it completed. */
		r = &ch->reads[ch->rhead];
		if (r->seq + 1 > ch->reads_lost)
			ch->reads_lost = r->seq + 1;
		ch->rhead = (ch->rhead + 1) % OMS_SO_READS;
		ch->rcount--;
	}
	r = &ch->reads[(ch->rhead + ch->rcount++) % OMS_SO_READS];
	r->seq = seq;
	r->addr = st->addr;
	r->len = st->len;
	r->atomic = st->op == OMS_SO_OP_ATOMIC;
	r->acquire = st->acquire;
}

/* Was op @seq of @ch an acquire (@atomic: an atomic)?  Unknown (dropped
 * from the ring): yes - cancelling too much is safe, too little is not. */
int so_was_read(const struct oms_so_chan *ch, uint64_t seq, int atomic)
{
	if (seq >= (atomic ? ch->atomic_need : ch->acq_need))
		return 0;
	for (uint32_t i = 0; i < ch->rcount; i++) {
		const struct oms_so_read *r =
			&ch->reads[(ch->rhead + i) % OMS_SO_READS];

		if (r->seq == seq)
			return atomic ? r->atomic : r->acquire;
	}
	return seq < ch->reads_lost;
}

static int overlaps_read(struct oms_so_chan *ch, const struct oms_so_store *st)
{
	if (ch->read_need <= ch->completed)
		return 0;
	if (ch->reads_lost > ch->completed)
		return 1;
	reads_prune(ch);
	for (uint32_t i = 0; i < ch->rcount; i++) {
		const struct oms_so_read *r =
			&ch->reads[(ch->rhead + i) % OMS_SO_READS];

		if (st->addr < r->addr + r->len && r->addr < st->addr + st->len)
			return 1;
	}
	return 0;
}

/* ---- an op leaves for the transport ---- */

/*
 * Does op @st, about to be issued on its channel, need the destination to
 * fence it (perform it after every earlier op of the channel)?
 */
uint8_t so_fence_flags(struct oms_so *so, const struct oms_so_store *st)
{
	struct oms_so_chan *ch = &so->chan[st->chan];
	int fence = 0;

	if (st->cls == OMS_STORE_RELEASE)
		fence = 1;	/* seed 004 MMIO-Release, enforced there */
	else if (is_write(st) && overlaps_read(ch, st))
		fence = 1;	/* write after read of the same bytes */
	else if (ch->acq_need > ch->completed &&
		 is_write(st))
		fence = 1;	/* a write after an acquire of the channel
				 * (later gets have the RLSQ; a get behind an
				 * acquire that fails may still read, see
				 * docs/ordering.md) */
	else if (st->op == OMS_SO_OP_GET && st->acquire &&
		 ch->atomic_need > ch->completed)
		fence = 1;	/* an acquire after an atomic (lock, then read) */
	else if (st->cls == OMS_STORE_STRONG && posted(ch) &&
		 ch->read_need > ch->completed)
		fence = 1;	/* posted fast path, but a read is in flight */
	else if (ch->kind == OMS_CHAN_SEQ && st->cls == OMS_STORE_UNORDERED &&
		 (ch->issued > ch->completed))
		fence = 1;	/* outside the stream: order it by hand */
	else if (ch->kind == OMS_CHAN_SEQ && st->cls != OMS_STORE_UNORDERED &&
		 ch->unordered)
		fence = 1;	/* the same, the other way round */
	if (fence)
		so->ctr.fenced++;
	return fence ? OMS_SO_A_FENCE : 0;
}

/* An op leaves for the transport: note what later ops must know of it. */
void so_note_issued(struct oms_so *so, const struct oms_so_store *st,
		    uint64_t seq)
{
	struct oms_so_chan *ch = &so->chan[st->chan];

	if (st->cls == OMS_STORE_UNORDERED) {
		if (ch->kind == OMS_CHAN_SEQ)
			ch->unordered++;
		return;
	}
	if (st->op == OMS_SO_OP_PUT)
		return;
	ch->read_need = seq + 1;
	reads_add(ch, st, seq);
	if (st->op == OMS_SO_OP_ATOMIC)
		ch->atomic_need = seq + 1;
	if (st->acquire) {
		ch->acq_need = seq + 1;
		so->acq_mask |= 1ull << st->chan;
	}
}
