// SPDX-License-Identifier: MIT
/*
 * Store orderer: progress, what leaves the hold queue.  Entries leave
 * strictly in program order (L12): the head goes when what it waits for
 * is visible (a strong store: every earlier ordered op; a fence: those of
 * its scope; an acquire barrier: the acquires issued before it), and the
 * posted channels it waits on are flushed (L10, L11).  A head that
 * follows a failure leaves as a CANCEL and takes with it what a rule
 * orders after it.  What enters the queue is store_order_submit.c's.
 */
#include <errno.h>

#include "engine/store_order_int.h"

/* ---- readiness of held entries ---- */

/*
 * Is an entry with scope @scope, bound for channel @own (or -1 for a fence),
 * free to go?  Records in so->flush_need the posted channels whose flush
 * would help, and how far the flush must reach.
 */
enum readiness so_ready(struct oms_so *so, uint16_t scope, int64_t own,
			const uint64_t *snap, uint64_t *flush)
{
	enum readiness r = GO;

	for (uint32_t x = 0; x < so->nchan; x++) {
		const struct oms_so_chan *ch = &so->chan[x];
		uint64_t need;

		if (!in_scope(so, scope, x))
			continue;
		need = need_on(so, snap, x);
		if (need > ch->first_fail)
			return CANCEL;	/* it would follow a failed op */
		if (need <= ch->visible)
			continue;
		/* A posted channel keeps its own stores in order ([0093]). */
		if (x == own && posted(ch))
			continue;
		r = WAIT;
		if (posted(ch) && flush) {
			*flush |= 1ull << x;
			so->flush_need[x] = need;
		}
	}
	return r;
}

/* An acquire barrier: every acquire issued before it completed. */
static enum readiness barrier_ready(struct oms_so *so, struct oms_so_held *h,
				    uint64_t *snap)
{
	enum readiness r = GO;

	if (!h->armed) {
		/* Everything ahead of it has left: the acquires it must
		 * wait for are exactly those issued so far. */
		for (uint32_t x = 0; x < so->nchan; x++)
			snap[x] = so->chan[x].acq_need;
		h->armed = 1;
	}
	for (uint32_t x = 0; x < so->nchan; x++) {
		const struct oms_so_chan *ch = &so->chan[x];

		if (snap[x] > ch->acq_fail)
			return CANCEL;
		if (snap[x] > ch->completed)
			r = WAIT;
	}
	return r;
}

/* ---- flushes ---- */

static int want_flushes(struct oms_so *so, uint64_t mask,
			struct oms_so_action *act, unsigned int n,
			unsigned int max)
{
	for (uint32_t x = 0; x < so->nchan && n < max; x++) {
		struct oms_so_chan *ch = &so->chan[x];

		if (!(mask & (1ull << x)) || ch->flush_inflight)
			continue;
		/*
		 * A non-posted read pushes every earlier posted write
		 * ([0096]).  On a SEQ channel it covers only what the entry
		 * needs: later numbers may belong to ops still held here,
		 * which the destination would wait for.
		 */
		ch->flush_inflight = 1;
		ch->flush_token = ch->kind == OMS_CHAN_SEQ ?
				  so->flush_need[x] : ch->issued;
		so->ctr.flushes++;
		act[n].type = OMS_SO_ACT_FLUSH;
		act[n].chan = (uint16_t)x;
		act[n].seq = ch->flush_token;
		act[n].cookie = 0;
		act[n].flags = 0;
		n++;
	}
	return (int)n;
}

/* Quiet: flush what is not yet visible, once nothing is held. */
static unsigned int quiet_flushes(struct oms_so *so, struct oms_so_action *act,
				  unsigned int n, unsigned int max)
{
	uint64_t mask = 0;

	if (!so->quieting || so->count)
		return n;
	for (uint32_t x = 0; x < so->nchan; x++) {
		struct oms_so_chan *ch = &so->chan[x];

		if (posted(ch) && ch->visible < ch->issued &&
		    ch->first_fail == OMS_SO_NONE) {
			mask |= 1ull << x;
			so->flush_need[x] = ch->issued;
		}
	}
	if (!mask) {
		so->quieting = 0;
		return n;
	}
	return (unsigned int)want_flushes(so, mask, act, n, max);
}

void oms_so_quiet(struct oms_so *so)
{
	if (so)
		so->quieting = 1;
}

/* ---- leaving the queue ---- */

/*
 * A marker to be cancelled: its scope stops there.  What it holds in its
 * scope follows the failure too (cancelled), and so does every op of that
 * scope submitted later, until resume (a fence's promise outlives the
 * marker).
 */
static void stop_scope(struct oms_so *so, uint16_t scope, uint8_t kind)
{
	if (kind == FENCE_ENTRY && scope == OMS_SO_ALL)
		so->stopped_all = 1;
	else if (kind == FENCE_ENTRY)
		so->stopped_dests |= 1ull << (scope % 64);
	for (uint32_t i = 1; i < so->count; i++) {
		struct oms_so_held *h = held_at(so, i);

		if (is_marker(h) || (scope != OMS_SO_ALL && h->dest != scope))
			continue;
		/* A fence does not order unordered stores; an acquire
		 * orders everything. */
		if (kind == FENCE_ENTRY && h->st.cls == OMS_STORE_UNORDERED)
			continue;
		h->cancel = 1;
	}
}

/*
 * Held op @x, at the head, is cancelled: it is never performed, and what a
 * rule orders after it is not performed either (docs/ordering.md,
 * Failures).  Everything behind it in the queue is later in program order:
 * cancel what follows it there; mark the rest for later submissions.
 */
static void propagate_cancel(struct oms_so *so, const struct oms_so_held *x)
{
	const struct oms_so_store *a = &x->st;
	int ordered = a->cls != OMS_STORE_UNORDERED;
	int seq_chan = so->chan[a->chan].kind == OMS_CHAN_SEQ;
	int fenced = 0, fenced_all = 0;

	for (uint32_t i = 1; i < so->count; i++) {
		struct oms_so_held *h = held_at(so, i);
		const struct oms_so_store *b = &h->st;
		int same = h->dest == x->dest;
		int b_ordered = b->cls != OMS_STORE_UNORDERED;

		if (b->cls == FENCE_ENTRY) {
			fenced_all |= ordered && h->dest == OMS_SO_ALL;
			fenced |= ordered && same;
			continue;
		}
		if (is_marker(h))
			continue;
		if (a->acquire ||					/* A1 */
		    (ordered && b->cls == OMS_STORE_STRONG) ||		/* S1 */
		    (same && b->cls == OMS_STORE_RELEASE) ||		/* R1 */
		    (same && a->op == OMS_SO_OP_ATOMIC && b->acquire) ||	/* A2 */
		    (ordered && b_ordered &&
		     (fenced_all || (same && fenced))) ||		/* F1, F3 */
		    (ordered && b_ordered && seq_chan &&
		     b->chan == a->chan))				/* D1 */
			h->cancel = 1;
	}
	so->any_fail = 1;
	so->lost_dests |= dbit(x->dest);
	if (a->op == OMS_SO_OP_ATOMIC)
		so->lost_atomic_dests |= dbit(x->dest);
	if (a->acquire)
		so->lost_acquire = 1;
	/* A fence behind it stops its scope for later submissions when it
	 * reaches the head (the lost_* marks say why). */
	if (ordered) {
		so->lost_ordered = 1;
		so->lost_ordered_dests |= dbit(x->dest);
	}
}

static void pop(struct oms_so *so)
{
	struct oms_so_held *h = held_at(so, 0);

	if (h->st.cls == FENCE_ENTRY) {
		if (h->dest == OMS_SO_ALL)
			so->all_fences--;
		else
			so->dest_fences[h->dest]--;
	} else if (h->st.cls == BARRIER_ENTRY) {
		so->acq_barriers--;
	} else {
		so->dest_held[h->dest]--;
		if (h->st.acquire) {
			so->held_acq--;
			so->dest_held_acq[h->dest]--;
		}
	}
	so->head = (so->head + 1) % so->max_held;
	so->count--;
}

/* A held op leaves: issued, or cancelled. */
static void release_op(struct oms_so *so, struct oms_so_held *h,
		       struct oms_so_action *a, int cancel)
{
	struct oms_so_chan *ch = &so->chan[h->st.chan];
	int ordered = h->st.cls != OMS_STORE_UNORDERED;
	uint64_t seq = h->seq;

	a->cookie = h->st.cookie;
	a->chan = h->st.chan;
	a->flags = 0;
	if (ordered) {
		so->ctr.pending_issue--;
		so->ctr.issue_dec++;
	}
	if (cancel) {
		/* Not performed.  A SEQ number it holds is filled by the
		 * caller with a cancelling NOP, acked like any other, that
		 * stops the stream there as a failed member would (D1: the
		 * later members are not performed either). */
		a->type = OMS_SO_ACT_CANCEL;
		a->seq = seq;
		if (ordered && seq != OMS_SO_NONE)
			set_fail(so, ch, seq);
		so->ctr.cancelled++;
		return;
	}
	a->type = OMS_SO_ACT_ISSUE;
	a->flags = so_fence_flags(so, &h->st);
	if (ordered && seq == OMS_SO_NONE)
		seq = give_seq(so, h->st.chan);
	a->seq = seq;
	if (ordered && seq + 1 > ch->fifo_released)
		ch->fifo_released = seq + 1;
	so_note_issued(so, &h->st, seq);
}

int oms_so_progress(struct oms_so *so, struct oms_so_action *act,
		    unsigned int max)
{
	unsigned int n = 0;

	if (!so || (!act && max))
		return -EINVAL;

	while (so->count && n < max) {
		struct oms_so_held *h = held_at(so, 0);
		uint64_t *snap = snap_at(so, 0);
		uint64_t flush = 0;
		enum readiness go;

		if (h->cancel)
			go = CANCEL;
		else if (h->st.cls == FENCE_ENTRY &&
			 (h->dest == OMS_SO_ALL ? so->lost_ordered :
			  !!(so->lost_ordered_dests & dbit(h->dest))))
			go = CANCEL;
		else if (!is_marker(h) && so->any_fail &&
			 so_after_stop(so, &h->st, h->dest, snap))
			go = CANCEL;
		else if (h->st.cls == FENCE_ENTRY)
			go = so_ready(so, h->dest, -1, snap, &flush);
		else if (h->st.cls == BARRIER_ENTRY)
			go = barrier_ready(so, h, snap);
		else if (h->st.cls == OMS_STORE_STRONG)
			go = so_ready(so, OMS_SO_ALL, h->st.chan, snap,
				     &flush);
		else
			go = GO;	/* it waited only for its place */
		if (go == WAIT)
			return want_flushes(so, flush, act, n, max);

		if (is_marker(h)) {
			if (go == CANCEL)
				stop_scope(so, h->dest, h->st.cls);
		} else {
			release_op(so, h, &act[n++], go == CANCEL);
			if (go == CANCEL)
				propagate_cancel(so, h);
		}
		pop(so);
	}
	return (int)quiet_flushes(so, act, n, max);
}
